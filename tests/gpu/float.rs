//! The float extractors on the GPU (`float_motion`, `float_vif`,
//! `float_psnr`, `float_moment`) against the CPU ones: same feature names
//! and order, per-frame values within the documented relative tolerance on
//! every golden pair (docs/gpu-testing.md), the same bits from run to run,
//! subsampling, and 12- and 16-bit input (kernel times: `gpu_bench
//! --extractors`). Without a GPU each test records why it skipped (VMAFX_REQUIRE_GPU=1 fails instead).

use crate::common;

use common::gpu::*;
use common::synthetic::*;
use vmafx::{ChromaSubsampling, PictureFormat};

/// Relative tolerance of `float_motion` and `float_vif`: the per-pixel
/// values are the CPU's bit for bit, but the CPU adds each row in float
/// and the GPU adds in double, so sums differ by the CPU's float rounding.
const SUM_ORDER_TOL: f64 = 1e-5;

/// `float_psnr` and `float_moment` at 16 bits: squares rounded to float
/// (as on the CPU), summed in double in another order.
const DOUBLE_SUM_TOL: f64 = 1e-10;

#[test]
fn float_motion_within_tolerance_on_every_golden_pair() {
    let Some(gpu) = test_gpu() else { return };
    check_all_pairs_close(&gpu, &[("float_motion", "debug=true")], 1, SUM_ORDER_TOL);
    // Shaping options (fps weight, blend, cap) and the forced zero.
    check_all_pairs_close(
        &gpu,
        &[(
            "float_motion",
            "motion_fps_weight=1.5:motion_blend_factor=0.5:motion_blend_offset=5:motion_max_val=12",
        )],
        1,
        SUM_ORDER_TOL,
    );
    check_all_pairs(&gpu, &[("float_motion", "motion_force_zero=true")], 1);
}

#[test]
fn float_vif_within_tolerance_on_every_golden_pair() {
    let Some(gpu) = test_gpu() else { return };
    check_all_pairs_close(&gpu, &[("float_vif", "debug=true")], 1, SUM_ORDER_TOL);
    // The neg models' option, and the other statistic parameters.
    check_all_pairs_close(
        &gpu,
        &[("float_vif", "vif_enhn_gain_limit=1.0:debug=true")],
        1,
        SUM_ORDER_TOL,
    );
    check_all_pairs_close(
        &gpu,
        &[(
            "float_vif",
            "vif_sigma_nsq=1.5:vif_scale1_min_val=0.99:vif_scale3_min_val=0.5:debug=true",
        )],
        1,
        SUM_ORDER_TOL,
    );
}

/// Kernel scales with other filter widths and `vif_prescale` are scored by
/// the CPU extractor in a GPU context: the same bits as the CPU engine.
#[test]
fn float_vif_options_the_kernels_lack_run_on_the_cpu() {
    let Some(gpu) = test_gpu() else { return };
    let p = pair("e_321x179_420p8_zoom");
    for options in ["vif_kernelscale=2.0:debug=true", "vif_prescale=0.5"] {
        let features = [("float_vif", options)];
        let cpu = score(p, &features, 1, None);
        let on_gpu = score(p, &features, 1, Some(&gpu));
        assert_identical(&format!("{} {options}", p.name()), &cpu, &on_gpu);
    }
}

#[test]
fn float_psnr_and_moment_bit_identical_on_every_golden_pair() {
    let Some(gpu) = test_gpu() else { return };
    // 8- and 10-bit samples: every square and partial sum is exact.
    check_all_pairs(&gpu, &[("float_psnr", ""), ("float_moment", "")], 1);
}

/// The four together (one upload of the planes they share), every third
/// frame scored: float_motion still sees every frame.
#[test]
fn float_extractors_with_subsampling() {
    let Some(gpu) = test_gpu() else { return };
    let features = [
        ("float_motion", "debug=true"),
        ("float_vif", "debug=true"),
        ("float_psnr", ""),
        ("float_moment", ""),
    ];
    for p in [
        pair("a_576x324_420p8_pan/x264_crf30"),
        pair("e_321x179_420p8_zoom"),
    ] {
        let cpu = score(p, &features, 3, None);
        let on_gpu = score(p, &features, 3, Some(&gpu));
        let worst = assert_close_scores(
            &format!("{} subsample 3", p.name()),
            &cpu,
            &on_gpu,
            SUM_ORDER_TOL,
        );
        let max = worst.values().map(|w| w.0).fold(0.0, f64::max);
        println!(
            "{}: subsample 3, {} frames within {SUM_ORDER_TOL:e} (worst {max:.3e})",
            p.name(),
            cpu.frames.len()
        );
    }
}

/// Two GPU runs give the same bits (no float atomics: fixed-order sums).
#[test]
fn float_extractors_are_deterministic() {
    let Some(gpu) = test_gpu() else { return };
    let features = [
        ("float_motion", "debug=true"),
        ("float_vif", "debug=true"),
        ("float_psnr", ""),
        ("float_moment", ""),
    ];
    assert_runs_identical(
        &gpu,
        &[pair("b_1280x720_420p8_zoom"), pair("c_576x324_420p10_zoom")],
        &features,
    );
}

/// 12- and 16-bit pictures: the 10-bit pair's samples shifted up, with
/// pseudo-random low bits so every bit of the wider samples matters.
#[test]
fn float_extractors_at_12_and_16_bits() {
    let Some(gpu) = test_gpu() else { return };
    let p = pair("c_576x324_420p10_zoom");
    let (refs, dists) = (p.reference(), p.distorted_pictures());
    for bits in [12u8, 16] {
        let format =
            PictureFormat::new(p.width, p.height, p.subsampling, bits).expect("a valid format");
        let (r, d) = (widen(&refs, &format, 1, 12), widen(&dists, &format, 2, 12));
        let sums_tol = if bits == 16 { DOUBLE_SUM_TOL } else { 0.0 };
        for (features, tol) in [
            (&[("float_motion", "debug=true")][..], SUM_ORDER_TOL),
            (&[("float_vif", "debug=true")][..], SUM_ORDER_TOL),
            (&[("float_psnr", ""), ("float_moment", "")][..], sums_tol),
        ] {
            let what = format!("{} at {bits} bits, {features:?}", p.name());
            let cpu = score_pictures(features, &r, &d, None);
            let on_gpu = score_pictures(features, &r, &d, Some(&gpu));
            let worst = assert_close_scores(&what, &cpu, &on_gpu, tol);
            let max = worst.values().map(|w| w.0).fold(0.0, f64::max);
            println!("{what}: within {tol:e} (worst {max:.3e})");
        }
    }
}

/// Flat areas, gradients, full-range noise and inverted distortions at the
/// smallest size float_vif takes and odd ones, 8, 10 and 16 bits: every
/// branch of the statistic and tiles narrower than the filter margins.
#[test]
fn float_extractors_on_stress_pictures() {
    let Some(gpu) = test_gpu() else { return };
    let features = [
        ("float_motion", "debug=true"),
        ("float_vif", "debug=true"),
        ("float_psnr", ""),
        ("float_moment", ""),
    ];
    let mut worst = 0.0f64;
    for (w, h) in [(16, 16), (17, 33), (67, 41), (130, 19)] {
        for bits in [8u8, 10, 16] {
            let format = PictureFormat::new(w, h, ChromaSubsampling::Yuv444, bits).unwrap();
            let frames: Vec<_> = (0..4).map(|i| stress_pair(&format, 7 + i)).collect();
            let (r, d): (Vec<_>, Vec<_>) = frames.into_iter().unzip();
            let what = format!("stress {w}x{h} {bits}-bit");
            let cpu = score_pictures(&features, &r, &d, None);
            let on_gpu = score_pictures(&features, &r, &d, Some(&gpu));
            let max = assert_close_scores(&what, &cpu, &on_gpu, SUM_ORDER_TOL)
                .values()
                .map(|w| w.0)
                .fold(0.0, f64::max);
            worst = worst.max(max);
        }
    }
    println!("stress pictures (16x16 to 130x19, 8/10/16 bits): within {SUM_ORDER_TOL:e} (worst {worst:.3e})");
}
