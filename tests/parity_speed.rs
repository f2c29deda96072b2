//! Parity of `speed_chroma` and `speed_temporal` with libvmaf 3.2.0: every
//! pair, every frame, against the `features` goldens (default options) and
//! the `models_v1.0.16` goldens (the option sets the v1 models give
//! `speed_chroma`, whose output names carry the option suffixes).

mod common;

use std::collections::BTreeMap;
use vmafx::feature::{self, options::parse_key_values, FeatureSink, FrameInput, Options};
use vmafx::{Error, PictureFormat};

/// Per-frame tolerance: the values are bit-identical to libvmaf's.
const TOLERANCE: f64 = 0.0;

const CHROMA_OUTPUTS: [&str; 3] = ["speed_chroma_u", "speed_chroma_v", "speed_chroma_uv"];

/// The v1.0.16 models' `speed_chroma` options (feature_opts_dicts), by the
/// suffix libvmaf names their outputs with.
const MODEL_OPTION_SETS: &[(&str, &str)] = &[
    (
        "speed_kernelscale=1.0:speed_nn_floor=0.1:speed_sigma_nn=0.19:\
         speed_weight_var_mode=5:speed_max_val=45.0",
        "_mxv_45_nnf_0.1_snn_0.19_wvm_5",
    ),
    (
        "speed_nn_floor=0.1:speed_sigma_nn=0.19:speed_weight_var_mode=5:speed_prescale=0.5:\
         speed_prescale_method=bilinear:speed_max_val=45.0",
        "_mxv_45_nnf_0.1_ps_0.5_psm_bilinear_snn_0.19_wvm_5",
    ),
    (
        "speed_nn_floor=0.1:speed_sigma_nn=0.19:speed_weight_var_mode=5:speed_prescale=0.6:\
         speed_prescale_method=bilinear:speed_max_val=45.0",
        "_mxv_45_nnf_0.1_ps_0.6_psm_bilinear_snn_0.19_wvm_5",
    ),
];

fn options(name: &str, opts: &str) -> vmafx::Result<Options> {
    let info = feature::find(name)?;
    let raw = parse_key_values(name, opts)?;
    Options::resolve(name, info.options, &raw)
}

fn create(
    name: &str,
    opts: &str,
    format: &PictureFormat,
) -> vmafx::Result<Box<dyn feature::Extractor>> {
    (feature::find(name)?.create)(&options(name, opts)?, format)
}

/// Runs one extractor over a pair and returns its values by frame.
fn run(pair: &common::Pair, name: &str, opts: &str) -> Vec<BTreeMap<String, f64>> {
    let refs = pair.reference();
    let dists = pair.distorted_pictures();
    assert_eq!(
        refs.len(),
        dists.len(),
        "{}: frame counts differ",
        pair.name()
    );
    let mut extractor = create(name, opts, &pair.format()).unwrap();
    let mut frames = vec![BTreeMap::new(); refs.len()];
    let mut sink = FeatureSink::new();
    for (i, (r, d)) in refs.iter().zip(&dists).enumerate() {
        let input = FrameInput {
            index: i as u32,
            reference: r,
            distorted: d,
        };
        extractor.extract(&input, &mut sink).unwrap();
    }
    extractor.flush(&mut sink).unwrap();
    for (index, feature, value) in sink.drain() {
        frames[index as usize].insert(feature, value);
    }
    frames
}

/// The worst relative difference per golden feature name, and where.
#[derive(Default)]
struct Worst(BTreeMap<String, (f64, String)>);

impl Worst {
    /// Compares every frame's outputs, named `{output}{suffix}` by the
    /// extractor as by libvmaf, with the golden values of those names.
    fn compare(
        &mut self,
        pair: &common::Pair,
        golden: &common::Golden,
        ours: &[BTreeMap<String, f64>],
        outputs: &[&str],
        suffix: &str,
    ) {
        assert_eq!(
            ours.len(),
            golden.frames.len(),
            "{}: frame count",
            pair.name()
        );
        for (i, values) in ours.iter().enumerate() {
            assert_eq!(
                values.len(),
                outputs.len(),
                "{} frame {i}: {values:?}",
                pair.name()
            );
            for &output in outputs {
                let golden_name = format!("{output}{suffix}");
                let expected = golden
                    .value(i, &golden_name)
                    .unwrap_or_else(|| panic!("{}: golden lacks {golden_name}", pair.name()));
                let actual = *values
                    .get(&golden_name)
                    .unwrap_or_else(|| panic!("{}: we emit no {golden_name}: {values:?}", pair.name()));
                let what = format!("{} frame {i} {golden_name}", pair.name());
                let d = common::rel_diff(actual, expected);
                let entry = self.0.entry(golden_name).or_insert((0.0, String::new()));
                if d > entry.0 || entry.1.is_empty() {
                    *entry = (d, what.clone());
                }
                common::assert_close(&what, actual, expected, TOLERANCE);
            }
        }
    }

    fn print(&self) {
        for (feature, (d, at)) in &self.0 {
            println!("worst relative diff {feature:<56} {d:.3e} ({at})");
        }
    }
}

#[test]
fn default_options_match_libvmaf_on_every_pair() {
    let mut worst = Worst::default();
    for pair in common::PAIRS {
        let golden = pair.golden("features");
        let chroma = run(pair, "speed_chroma", "");
        worst.compare(pair, &golden, &chroma, &CHROMA_OUTPUTS, "");
        let temporal = run(pair, "speed_temporal", "");
        worst.compare(pair, &golden, &temporal, &["speed_temporal"], "");
    }
    worst.print();
}

#[test]
fn model_option_sets_match_libvmaf_on_every_pair() {
    let mut worst = Worst::default();
    for pair in common::PAIRS {
        let golden = pair.golden("models_v1.0.16");
        for &(opts, suffix) in MODEL_OPTION_SETS {
            assert_eq!(options("speed_chroma", opts).unwrap().name_suffix(), suffix);
            let has_golden = golden
                .value(0, &format!("speed_chroma_u{suffix}"))
                .is_some();
            if !has_golden {
                // libvmaf fails these ("SpEED: image too small"); see
                // too_small_pictures_are_refused.
                assert!(pair.width < 400, "{}: golden lacks {suffix}", pair.name());
                continue;
            }
            let ours = run(pair, "speed_chroma", opts);
            worst.compare(pair, &golden, &ours, &CHROMA_OUTPUTS, suffix);
        }
    }
    worst.print();
}

#[test]
fn too_small_pictures_are_refused() {
    // The 321x179 pair: the 2160 models prescale its 160x89 chroma below
    // one 5x5 block after decimation by 16, where libvmaf crashes.
    let pair = common::PAIRS.iter().find(|p| p.width == 321).unwrap();
    for &(opts, suffix) in &MODEL_OPTION_SETS[1..] {
        match create("speed_chroma", opts, &pair.format()) {
            Err(e @ Error::Extractor { .. }) => {
                let msg = e.to_string();
                assert!(
                    msg.contains("speed_chroma")
                        && msg.contains("321x179")
                        && msg.contains("80x80"),
                    "{msg}"
                );
            }
            Err(e) => panic!("{suffix}: expected an extractor error, got {e}"),
            Ok(_) => panic!("{suffix}: accepted a picture libvmaf cannot score"),
        }
    }
    let tiny = PictureFormat::new(64, 64, vmafx::ChromaSubsampling::Yuv444, 8).unwrap();
    assert!(matches!(
        create("speed_temporal", "", &tiny),
        Err(Error::Extractor { .. })
    ));
}

fn expect_bad_option(name: &str, opts: &str, option: &str) {
    let format = common::PAIRS[0].format();
    match create(name, opts, &format) {
        Err(e @ Error::BadOption { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(name) && msg.contains(option), "{msg}");
        }
        Err(e) => panic!("{name}:{opts}: expected a bad-option error, got {e}"),
        Ok(_) => panic!("{name}:{opts}: accepted"),
    }
}

#[test]
fn bad_options_are_refused_with_their_name() {
    for name in ["speed_chroma", "speed_temporal"] {
        expect_bad_option(name, "speed_kernelscale=1.3", "speed_kernelscale");
        expect_bad_option(name, "speed_kernelscale=5", "speed_kernelscale");
        expect_bad_option(name, "speed_prescale=0", "speed_prescale");
        expect_bad_option(name, "speed_prescale_method=area", "speed_prescale_method");
        expect_bad_option(name, "speed_sigma_nn=3", "speed_sigma_nn");
        expect_bad_option(name, "speed_nn_floor=-0.1", "speed_nn_floor");
        expect_bad_option(name, "speed_max_val=1001", "speed_max_val");
    }
    expect_bad_option(
        "speed_chroma",
        "speed_weight_var_mode=7",
        "speed_weight_var_mode",
    );
    expect_bad_option(
        "speed_chroma",
        "speed_use_ref_diff=true",
        "speed_use_ref_diff",
    );
    expect_bad_option(
        "speed_temporal",
        "speed_weight_var_mode=1",
        "speed_weight_var_mode",
    );
    expect_bad_option(
        "speed_temporal",
        "speed_use_ref_diff=2",
        "speed_use_ref_diff",
    );
}

#[test]
fn unsupported_inputs_are_refused() {
    use vmafx::ChromaSubsampling::{Yuv400, Yuv420};
    let gray = PictureFormat::new(320, 240, Yuv400, 8).unwrap();
    assert!(matches!(
        create("speed_chroma", "", &gray),
        Err(Error::Extractor { .. })
    ));
    assert!(create("speed_temporal", "", &gray).is_ok());
    let nine_bit = PictureFormat::new(320, 240, Yuv420, 9).unwrap();
    for name in ["speed_chroma", "speed_temporal"] {
        assert!(
            matches!(create(name, "", &nine_bit), Err(Error::Extractor { .. })),
            "{name}"
        );
    }
}

#[test]
fn threaded_context_gives_the_same_values() {
    let pair = common::PAIRS.last().unwrap();
    let golden = pair.golden("features");
    let mut context = vmafx::ContextBuilder::new(pair.format())
        .threads(2)
        .feature("speed_chroma", Vec::new())
        .feature("speed_temporal", Vec::new())
        .build()
        .unwrap();
    for (r, d) in pair.reference().into_iter().zip(pair.distorted_pictures()) {
        context.submit(r, d).unwrap();
    }
    let scores = context.finish().unwrap();
    assert_eq!(scores.frames.len(), golden.frames.len());
    for (i, (index, values)) in scores.frames.iter().enumerate() {
        assert_eq!(*index as usize, i);
        assert_eq!(values.len(), 4, "frame {i}: {values:?}");
        for (feature, value) in values {
            let what = format!("{} frame {i} {feature} (threaded)", pair.name());
            common::assert_close(&what, *value, golden.value(i, feature).unwrap(), TOLERANCE);
        }
    }
}
