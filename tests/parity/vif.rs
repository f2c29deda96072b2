//! Integer VIF against libvmaf 3.2.0's golden outputs, every frame of every
//! pair: the debug run of `*.features.json`, the default model's scores,
//! the neg models' `egl_1` variant and a fractional gain limit (oracle
//! goldens `fractional_gain`).

use crate::common;

use common::extractor::{create_extractor, run_frame_by_frame, FrameValues};
use common::{Pair, PAIRS};
use std::collections::BTreeMap;
use vmafx::feature::options::parse_key_values;
use vmafx::feature::vif::INFO;
use vmafx::feature::Options;
use vmafx::HostPicture;

/// Runs `vif` with `options` over every frame of `pair`: per frame, the
/// emitted values.
fn run(
    pair: &Pair,
    reference: &[HostPicture],
    distorted: &[HostPicture],
    options: &str,
) -> Vec<FrameValues> {
    let mut vif = create_extractor("vif", options, &pair.format()).unwrap();
    run_frame_by_frame(vif.as_mut(), reference, distorted)
}

/// Worst relative difference per feature, over the pairs checked.
#[derive(Default)]
struct Worst(BTreeMap<String, f64>);

impl Worst {
    /// Compares every frame's outputs with the golden run `run_name`: they
    /// must be exactly its `integer_vif*` features of the option set whose
    /// names end in `suffix`, with identical values.
    fn check(&mut self, pair: &Pair, run_name: &str, ours: &[FrameValues], suffix: &str) {
        let golden = pair.golden(run_name);
        assert_eq!(
            golden.frames.len(),
            ours.len(),
            "{}: frame count of {run_name}",
            pair.name()
        );
        for (i, (values, (frame_num, expected))) in ours.iter().zip(&golden.frames).enumerate() {
            assert_eq!(*frame_num as usize, i);
            let wanted: Vec<_> = expected
                .keys()
                .filter(|k| is_in_family(k, suffix))
                .collect();
            let got: Vec<_> = values.keys().collect();
            assert_eq!(
                got,
                wanted,
                "{} frame {i}: outputs vs {run_name}",
                pair.name()
            );
            for (name, &value) in values {
                let what = format!("{} frame {i} {name} ({run_name})", pair.name());
                let d = common::rel_diff(value, expected[name]);
                let worst = self.0.entry(name.clone()).or_default();
                *worst = worst.max(d);
                // libvmaf's arithmetic is reproduced exactly: demand the
                // identical double, not just the 1e-9 the project requires.
                common::assert_close(&what, value, expected[name], 0.0);
            }
        }
    }

    fn report(&self, title: &str) {
        println!("{title}: worst relative difference per feature");
        for (name, d) in &self.0 {
            println!("  {name:32} {d:.3e}");
        }
    }
}

/// `integer_vif*` outputs of one option set: `suffix` is its name suffix
/// (empty for the defaults, whose family then excludes the `_egl_` ones).
fn is_in_family(name: &str, suffix: &str) -> bool {
    name.starts_with("integer_vif")
        && name.ends_with(suffix)
        && name.contains("_egl_") == suffix.contains("_egl_")
}

#[test]
fn vif_matches_libvmaf_on_every_golden_frame() {
    let mut debug = Worst::default();
    let mut default = Worst::default();
    let mut egl = Worst::default();
    let mut fractional = Worst::default();
    for pair in PAIRS {
        let reference = pair.reference();
        let distorted = pair.distorted_pictures();
        let ours = run(pair, &reference, &distorted, "debug=true");
        debug.check(pair, "features", &ours, "");
        let ours = run(pair, &reference, &distorted, "");
        default.check(pair, "vmaf_v0.6.1", &ours, "");
        let ours = run(pair, &reference, &distorted, "vif_enhn_gain_limit=1.0");
        egl.check(pair, "models_v0.6", &ours, "_egl_1");
        let ours = run(
            pair,
            &reference,
            &distorted,
            "debug=true:vif_enhn_gain_limit=1.5",
        );
        fractional.check(pair, "fractional_gain", &ours, "_egl_1.5");
    }
    debug.report("features (debug=true)");
    default.report("vmaf_v0.6.1");
    egl.report("models_v0.6 (vif_enhn_gain_limit=1.0)");
    fractional.report("fractional_gain (vif_enhn_gain_limit=1.5)");
}

#[test]
fn gain_limit_below_one_is_refused() {
    let raw = parse_key_values("vif", "vif_enhn_gain_limit=0.5").unwrap();
    let err = Options::resolve("vif", INFO.options, &raw)
        .unwrap_err()
        .to_string();
    assert!(err.contains("vif_enhn_gain_limit"), "{err}");
}

#[test]
fn tiny_pictures_are_refused() {
    let options = Options::resolve("vif", INFO.options, &[]).unwrap();
    let format = vmafx::PictureFormat::new(15, 64, vmafx::ChromaSubsampling::Yuv420, 8).unwrap();
    let err = (INFO.create)(&options, &format)
        .err()
        .expect("15 columns is too small")
        .to_string();
    assert!(err.contains("vif") && err.contains("15x64"), "{err}");
}
