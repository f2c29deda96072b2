//! Parity of the `cambi` extractor with libvmaf 3.2.0: every pair, every
//! frame, against the `features` goldens (run with `cambi=full_ref=true`:
//! `cambi`, `cambi_source`, `cambi_full_reference`) and against the cambi
//! feature of the `models_v1.0.16` goldens (options
//! `cambi_high_res_speedup=1080:cambi_vis_lum_threshold=0.06:cambi_max_val=17`,
//! reported as `cambi_hrs_1080_cmxv_17_vlt_0.06`).

use crate::common;

use common::extractor::{create_extractor, run_extractor, Worst};
use vmafx::feature::{self, FeatureSink, FrameInput};
use vmafx::{ChromaSubsampling, Error, PictureFormat};

/// The values are bit-identical to libvmaf's.
const TOLERANCE: f64 = 0.0;

fn create(opts: &str, format: &PictureFormat) -> vmafx::Result<Box<dyn feature::Extractor>> {
    create_extractor("cambi", opts, format)
}

/// Runs cambi with `opts` over every frame of `pair` and compares `outputs`
/// with golden file `golden`.
fn compare(pair: &common::Pair, opts: &str, golden: &str, outputs: &[&str], worst: &mut Worst) {
    let mut extractor = create(opts, &pair.format()).unwrap();
    assert!(!extractor.temporal());
    let ours = run_extractor(
        extractor.as_mut(),
        &pair.reference(),
        &pair.distorted_pictures(),
    );
    worst.compare(pair, &pair.golden(golden), &ours, outputs, "", TOLERANCE);
}

#[test]
fn full_reference_cambi_matches_libvmaf_on_every_pair() {
    let mut worst = Worst::default();
    for pair in common::PAIRS {
        compare(
            pair,
            "full_ref=true",
            "features",
            &["cambi", "cambi_source", "cambi_full_reference"],
            &mut worst,
        );
    }
    worst.print("cambi full_ref=true");
}

#[test]
fn no_reference_cambi_matches_libvmaf() {
    let mut worst = Worst::default();
    for pair in common::PAIRS {
        compare(pair, "", "features", &["cambi"], &mut worst);
    }
    worst.print("cambi, no reference");
}

#[test]
fn model_v1_0_16_cambi_matches_libvmaf_on_every_pair() {
    let mut worst = Worst::default();
    for pair in common::PAIRS {
        compare(
            pair,
            "cambi_high_res_speedup=1080:cambi_vis_lum_threshold=0.06:cambi_max_val=17.0",
            "models_v1.0.16",
            &["cambi_hrs_1080_cmxv_17_vlt_0.06"],
            &mut worst,
        );
    }
    worst.print("cambi, v1.0.16 model options");
}

fn expect_bad_option(opts: &str, option: &str) {
    common::extractor::expect_bad_option("cambi", opts, option);
}

/// Past the last visible contrast step (84.2211 cd/m² at the default
/// options) no banding is counted: libvmaf's band size goes negative and
/// wraps, and it scores 0 (or, on some pictures, crashes); vmafx scores 0.
#[test]
fn visibility_thresholds_past_every_visible_step_score_zero() {
    let pair = &common::PAIRS[0];
    for threshold in ["84.2211", "84.2212", "300"] {
        let opts = format!("cambi_vis_lum_threshold={threshold}");
        let mut extractor = create(&opts, &pair.format()).unwrap();
        let values = run_extractor(
            extractor.as_mut(),
            &pair.reference(),
            &pair.distorted_pictures(),
        );
        assert!(!values.is_empty());
        for (frame, metrics) in values.iter().enumerate() {
            for (name, &v) in metrics {
                assert_eq!(v, 0.0, "{opts}: frame {frame} {name}");
            }
        }
    }
}

#[test]
fn bad_options_are_refused_with_their_name() {
    expect_bad_option("window_size=14", "window_size");
    expect_bad_option("window_size=128", "window_size");
    expect_bad_option("topk=0", "topk");
    expect_bad_option("cambi_topk=1.5", "cambi_topk");
    expect_bad_option("max_log_contrast=6", "max_log_contrast");
    expect_bad_option("enc_width=100", "enc_width");
    expect_bad_option("enc_bitdepth=17", "enc_bitdepth");
    expect_bad_option("cambi_max_val=-1", "cambi_max_val");
    expect_bad_option("cambi_vis_lum_threshold=301", "cambi_vis_lum_threshold");
    expect_bad_option("cambi_high_res_speedup=4320", "cambi_high_res_speedup");
    expect_bad_option("full_ref=maybe", "full_ref");
    expect_bad_option("eotf=hlg", "eotf");
    expect_bad_option("cambi_eotf=srgb", "cambi_eotf");
    expect_bad_option("heatmaps_path=/tmp/heatmaps", "heatmaps_path");
    expect_bad_option("no_such_option=1", "no_such_option");
    // The source larger along one axis and smaller along the other.
    expect_bad_option(
        "full_ref=true:src_width=400:src_height=324:enc_width=576:enc_height=300",
        "src_width",
    );
}

#[test]
fn too_small_pictures_are_refused() {
    let small = PictureFormat::new(215, 215, ChromaSubsampling::Yuv420, 8).unwrap();
    assert!(matches!(create("", &small), Err(Error::Extractor { .. })));
    // One side long enough is enough.
    let narrow = PictureFormat::new(216, 100, ChromaSubsampling::Yuv420, 8).unwrap();
    assert!(create("", &narrow).is_ok());
}

#[test]
fn out_of_range_samples_are_refused() {
    let format = PictureFormat::new(320, 240, ChromaSubsampling::Yuv400, 10).unwrap();
    let mut picture = vmafx::HostPicture::new(format);
    picture.plane_u16_mut(vmafx::PlaneId::Y)[77] = 1024;
    let mut extractor = create("", &format).unwrap();
    let input = FrameInput {
        index: 0,
        reference: &picture,
        distorted: &picture,
    };
    let err = extractor
        .extract(&input, &mut FeatureSink::new())
        .unwrap_err();
    assert!(err.to_string().contains("1024"), "{err}");
}

#[test]
fn option_suffixes_name_the_output() {
    let pair = &common::PAIRS[0];
    let refs = pair.reference();
    let input = FrameInput {
        index: 0,
        reference: &refs[0],
        distorted: &refs[0],
    };
    let mut sink = FeatureSink::new();
    let mut e = create("window_size=31:topk=0.5:max_log_contrast=3", &pair.format()).unwrap();
    e.extract(&input, &mut sink).unwrap();
    assert_eq!(sink.values()[0].1, "cambi_mlc_3_topk_0.5_ws_31");
}

#[test]
fn eotf_options_select_pq_and_name_the_output() {
    // Bright content: PQ makes steps of 2 to 4 codes visible at any level.
    let pair = &common::PAIRS[0];
    let refs = pair.reference();
    let input = FrameInput {
        index: 0,
        reference: &refs[0],
        distorted: &refs[0],
    };
    let score = |opts: &str| {
        let mut sink = FeatureSink::new();
        create(opts, &pair.format())
            .unwrap()
            .extract(&input, &mut sink)
            .unwrap();
        let (_, name, value) = sink.values()[0].clone();
        (name, value)
    };
    let (name, bt1886) = score("eotf=bt1886");
    assert_eq!(name, "cambi");
    let (name, pq) = score("eotf=pq");
    assert_eq!(name, "cambi_eotf_pq");
    assert_ne!(pq, bt1886);
    // cambi_eotf wins over eotf when set.
    let (name, value) = score("cambi_eotf=pq:eotf=bt1886");
    assert_eq!((name.as_str(), value), ("cambi_ceot_pq", pq));
}
