//! Parity of the float extractors float_psnr, float_moment, float_ansnr,
//! float_ssim and float_ms_ssim with libvmaf 3.2.0: every pair, every frame,
//! every output against the `features` goldens (run with
//! `float_ssim=enable_lcs=true` and `float_ms_ssim=enable_lcs=true`).

use crate::common;

use common::extractor::{
    assert_threaded_run_matches, create_extractor as create, expect_bad_option, run_on_pair, Worst,
};
use vmafx::feature::{FeatureSink, FrameInput};
use vmafx::{Error, PictureFormat};

/// Per-frame tolerance: the values are bit-identical to libvmaf's. (This
/// relies on serde_json's `float_roundtrip` feature, which makes the golden
/// `%.17g` numbers parse exactly; without it they can be off by one ulp.)
const TOLERANCE: f64 = 0.0;

/// (extractor, options as in the golden command, outputs to compare).
const RUNS: &[(&str, &str, &[&str])] = &[
    ("float_psnr", "", &["float_psnr"]),
    (
        "float_moment",
        "",
        &[
            "float_moment_ref1st",
            "float_moment_dis1st",
            "float_moment_ref2nd",
            "float_moment_dis2nd",
        ],
    ),
    ("float_ansnr", "", &["float_ansnr", "float_anpsnr"]),
    (
        "float_ssim",
        "enable_lcs=true",
        &["float_ssim", "float_ssim_l", "float_ssim_c", "float_ssim_s"],
    ),
    (
        "float_ms_ssim",
        "enable_lcs=true",
        &[
            "float_ms_ssim",
            "float_ms_ssim_l_scale0",
            "float_ms_ssim_l_scale1",
            "float_ms_ssim_l_scale2",
            "float_ms_ssim_l_scale3",
            "float_ms_ssim_l_scale4",
            "float_ms_ssim_c_scale0",
            "float_ms_ssim_c_scale1",
            "float_ms_ssim_c_scale2",
            "float_ms_ssim_c_scale3",
            "float_ms_ssim_c_scale4",
            "float_ms_ssim_s_scale0",
            "float_ms_ssim_s_scale1",
            "float_ms_ssim_s_scale2",
            "float_ms_ssim_s_scale3",
            "float_ms_ssim_s_scale4",
        ],
    ),
];

#[test]
fn float_extractors_match_libvmaf_on_every_pair() {
    let mut worst = Worst::default();
    for pair in common::PAIRS {
        let golden = pair.golden("features");
        for &(name, opts, outputs) in RUNS {
            let ours = run_on_pair(pair, name, opts);
            worst.compare(pair, &golden, &ours, outputs, "", TOLERANCE);
        }
    }
    worst.print("float_psnr, float_moment, float_ansnr, float_ssim, float_ms_ssim");
}

#[test]
fn bad_options_are_refused_with_their_name() {
    for name in ["float_psnr", "float_moment", "float_ansnr"] {
        expect_bad_option(name, "enable_lcs=true", "enable_lcs");
    }
    for name in ["float_ssim", "float_ms_ssim"] {
        expect_bad_option(name, "enable_lcs=maybe", "enable_lcs");
        expect_bad_option(name, "enable_db=2", "enable_db");
    }
    // float_ssim takes libvmaf 3.2's `scale` (0 to 10); float_ms_ssim has none.
    expect_bad_option("float_ssim", "scale=11", "scale");
    expect_bad_option("float_ms_ssim", "scale=2", "scale");
}

#[test]
fn db_output_converts_and_clips() {
    let pair = &common::PAIRS[0];
    let linear = run_on_pair(pair, "float_ssim", "")[0]["float_ssim"];
    let db = run_on_pair(pair, "float_ssim", "enable_db=true")[0]["float_ssim"];
    assert_eq!(db, -10.0 * (1.0 - linear).log10());
    // Identical pictures give SSIM 1 = infinite dB; clip_db caps it at
    // ceil(10 log10(255^2 / (0.5 / (w h)))).
    let refs = pair.reference();
    let mut ext = create(
        "float_ms_ssim",
        "enable_db=true:clip_db=true",
        &pair.format(),
    )
    .unwrap();
    let mut sink = FeatureSink::new();
    ext.extract(
        &FrameInput {
            index: 0,
            reference: &refs[0],
            distorted: &refs[0],
        },
        &mut sink,
    )
    .unwrap();
    let cap = (10.0 * (255.0f64 * 255.0 / (0.5 / (576.0 * 324.0))).log10()).ceil();
    assert_eq!(sink.values()[0].2, cap);
}

#[test]
fn unsupported_inputs_are_refused() {
    use vmafx::ChromaSubsampling::Yuv420;
    let small = PictureFormat::new(175, 200, Yuv420, 8).unwrap();
    assert!(matches!(
        create("float_ms_ssim", "", &small),
        Err(Error::Extractor { .. })
    ));
    assert!(create("float_ssim", "", &small).is_ok());
    let tiny = PictureFormat::new(10, 10, Yuv420, 8).unwrap();
    assert!(matches!(
        create("float_ssim", "", &tiny),
        Err(Error::Extractor { .. })
    ));
    let nine_bit = PictureFormat::new(320, 240, Yuv420, 9).unwrap();
    for (name, _, _) in RUNS {
        assert!(
            matches!(create(name, "", &nine_bit), Err(Error::Extractor { .. })),
            "{name}"
        );
    }
}

#[test]
fn threaded_context_gives_the_same_values() {
    let pair = common::PAIRS.last().unwrap();
    let features: Vec<_> = RUNS.iter().map(|&(name, opts, _)| (name, opts)).collect();
    let outputs: usize = RUNS.iter().map(|r| r.2.len()).sum();
    assert_threaded_run_matches(pair, &features, outputs, TOLERANCE);
}
