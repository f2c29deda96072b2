//! `psnr_hvs` on the GPU against the CPU extractor: same feature names and
//! order, per-frame values within a relative tolerance on every golden pair
//! (8 and 10 bits, 4:2:0, 4:2:2, 4:4:4, odd sizes), subsampling, and the
//! same bits from run to run. Without a GPU each test prints why it skipped
//! and passes.

mod common;

use common::gpu::*;

/// Every block's 64 error terms are the CPU's bit for bit; the CPU adds
/// all terms of a plane in one running `float` sum, the GPU per block in
/// double and then in a fixed double tree, so plane totals differ by the
/// CPU's float rounding (then rounded to float, as the CPU's).
const TOL: f64 = 1e-5;

const FEATURES: [(&str, &str); 1] = [("psnr_hvs", "")];

#[test]
fn psnr_hvs_within_tolerance_on_every_golden_pair() {
    let Some(gpu) = cuda_gpu() else { return };
    check_all_pairs_close(&gpu, &FEATURES, 1, TOL);
}

/// Every third frame scored.
#[test]
fn psnr_hvs_with_subsampling() {
    let Some(gpu) = cuda_gpu() else { return };
    for p in [pair("b_1280x720_420p8_zoom"), pair("c_576x324_420p10_zoom")] {
        let cpu = score(p, &FEATURES, 3, None);
        let on_gpu = score(p, &FEATURES, 3, Some(&gpu));
        let worst = assert_close_scores(&format!("{} subsample 3", p.name()), &cpu, &on_gpu, TOL);
        let max = worst.values().map(|w| w.0).fold(0.0, f64::max);
        println!(
            "{}: subsample 3, {} frames within {TOL:e} (worst {max:.3e})",
            p.name(),
            cpu.frames.len()
        );
    }
}

/// Two GPU runs give the same bits (fixed-order double sums, no atomics).
#[test]
fn psnr_hvs_is_deterministic() {
    let Some(gpu) = cuda_gpu() else { return };
    for p in [pair("b_1280x720_420p8_zoom"), pair("d_352x288_422p10_pan")] {
        let first = score(p, &FEATURES, 1, Some(&gpu));
        for run in 0..2 {
            let again = score(p, &FEATURES, 1, Some(&gpu));
            assert_identical(&format!("{} run {}", p.name(), run + 2), &first, &again);
        }
        println!("{}: three GPU runs bit-identical", p.name());
    }
}
