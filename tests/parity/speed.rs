//! Parity of `speed_chroma` and `speed_temporal` with libvmaf 3.2.0: every
//! pair, every frame, against the `features` goldens (default options) and
//! the `models_v1.0.16` goldens (the option sets the v1 models give
//! `speed_chroma`, whose output names carry the option suffixes).

use crate::common;

use common::extractor::{
    assert_threaded_run_matches, create_extractor as create, expect_bad_option, run_on_pair, Worst,
};
use vmafx::feature::{self, options::parse_key_values, Options};
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

#[test]
fn default_options_match_libvmaf_on_every_pair() {
    let mut worst = Worst::default();
    for pair in common::PAIRS {
        let golden = pair.golden("features");
        let chroma = run_on_pair(pair, "speed_chroma", "");
        worst.compare(pair, &golden, &chroma, &CHROMA_OUTPUTS, "", TOLERANCE);
        let temporal = run_on_pair(pair, "speed_temporal", "");
        worst.compare(pair, &golden, &temporal, &["speed_temporal"], "", TOLERANCE);
    }
    worst.print("default options");
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
            let ours = run_on_pair(pair, "speed_chroma", opts);
            worst.compare(pair, &golden, &ours, &CHROMA_OUTPUTS, suffix, TOLERANCE);
        }
    }
    worst.print("v1.0.16 model option sets");
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
    let features = [("speed_chroma", ""), ("speed_temporal", "")];
    assert_threaded_run_matches(pair, &features, 4, TOLERANCE);
}
