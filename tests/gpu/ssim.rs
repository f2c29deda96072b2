//! `ssim` (integer_ssim) on the GPU against the CPU extractor: same feature
//! names and order, bit-identical per-frame values on every golden pair
//! (every option), with subsampling, at 12 and 16 bits (the moments' `int`
//! products wrap above 12 bits), on stress pictures at small and odd
//! sizes, and the same bits from run to run. Without a GPU each test records
//! why it skipped (`VMAFX_REQUIRE_GPU=1` fails instead).

use crate::common;

use common::gpu::*;
use common::synthetic::*;
use vmafx::{ChromaSubsampling, PictureFormat};

const OPTIONS: [&str; 3] = ["", "enable_db=true", "enable_db=true:clip_db=true"];

#[test]
fn ssim_matches_cpu_on_every_golden_pair() {
    let Some(gpu) = test_gpu() else { return };
    for options in OPTIONS {
        check_all_pairs(&gpu, &[("ssim", options)], 1);
    }
    // The alias is the same extractor.
    check_all_pairs(&gpu, &[("integer_ssim", "")], 1);
}

#[test]
fn ssim_matches_cpu_with_subsampling() {
    let Some(gpu) = test_gpu() else { return };
    for p in [pair("b_1280x720_420p8_zoom"), pair("e_321x179_420p8_zoom")] {
        let features = [("ssim", "enable_db=true")];
        let cpu = score(p, &features, 3, None);
        let on_gpu = score(p, &features, 3, Some(&gpu));
        assert_identical(&format!("{} subsample 3", p.name()), &cpu, &on_gpu);
        println!("{}: subsample 3 bit-identical", p.name());
    }
}

/// The 10-bit pair's samples shifted up, with pseudo-random low bits.
#[test]
fn ssim_matches_cpu_at_12_and_16_bits() {
    let Some(gpu) = test_gpu() else { return };
    let p = pair("c_576x324_420p10_zoom");
    let (refs, dists) = (p.reference(), p.distorted_pictures());
    for bits in [12u8, 16] {
        let format =
            PictureFormat::new(p.width, p.height, p.subsampling, bits).expect("a valid format");
        let (r, d) = (widen(&refs, &format, 1, 12), widen(&dists, &format, 2, 12));
        let what = format!("{} at {bits} bits", p.name());
        let cpu = score_pictures(&[("ssim", "")], &r, &d, None);
        let on_gpu = score_pictures(&[("ssim", "")], &r, &d, Some(&gpu));
        assert_identical(&what, &cpu, &on_gpu);
        println!("{what}: {} frames bit-identical", cpu.frames.len());
    }
}

/// Flat areas, noise and inverted distortions at sizes below one window
/// (9x9), around the 32x8 tiles, and odd, at 8, 10 and 16 bits.
#[test]
fn ssim_matches_cpu_on_stress_pictures() {
    let Some(gpu) = test_gpu() else { return };
    for (w, h) in [(5, 3), (16, 16), (17, 33), (67, 41), (130, 19)] {
        for bits in [8u8, 10, 16] {
            let format = PictureFormat::new(w, h, ChromaSubsampling::Yuv444, bits).unwrap();
            let frames: Vec<_> = (0..4).map(|i| stress_pair(&format, 11 + i)).collect();
            let (r, d): (Vec<_>, Vec<_>) = frames.into_iter().unzip();
            let what = format!("stress {w}x{h} {bits}-bit");
            let cpu = score_pictures(&[("ssim", "")], &r, &d, None);
            let on_gpu = score_pictures(&[("ssim", "")], &r, &d, Some(&gpu));
            assert_identical(&what, &cpu, &on_gpu);
        }
    }
    println!("stress pictures (5x3 to 130x19, 8/10/16 bits): bit-identical");
}

#[test]
fn ssim_is_deterministic() {
    let Some(gpu) = test_gpu() else { return };
    assert_runs_identical(
        &gpu,
        &[pair("b_1280x720_420p8_zoom"), pair("c_576x324_420p10_zoom")],
        &[("ssim", "")],
    );
}
