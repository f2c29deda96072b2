//! `float_ssim` and `float_ms_ssim` on the GPU against the CPU extractors:
//! same feature names and order, per-frame values within the documented
//! relative tolerance on every golden pair with every option
//! (docs/gpu-testing.md), subsampling, and the same bits from run to run
//! (kernel times: `gpu_bench --extractors`). Without a GPU each test records
//! why it skipped (`VMAFX_REQUIRE_GPU=1` fails instead).

use crate::common;

use common::gpu::*;

/// Per-position values are the CPU's bit for bit; both add them in double
/// but in another order, so the means (rounded to float) may differ in
/// their last bit. In a CPU emulation of the kernels (every golden pair,
/// every output) no mean differed at all: worst relative difference 0.
const TOL: f64 = 1e-5;

const DEFAULT: [(&str, &str); 2] = [("float_ssim", ""), ("float_ms_ssim", "")];

#[test]
fn float_ssim_and_ms_ssim_within_tolerance_on_every_golden_pair() {
    let Some(gpu) = test_gpu() else { return };
    check_all_pairs_close(&gpu, &DEFAULT, 1, TOL);
    // Every option: the l, c, s terms (per scale), and the dB scores.
    for options in [
        "enable_lcs=true",
        "enable_db=true",
        "enable_db=true:clip_db=true",
    ] {
        check_all_pairs_close(
            &gpu,
            &[("float_ssim", options), ("float_ms_ssim", options)],
            1,
            TOL,
        );
    }
}

/// Every third frame scored.
#[test]
fn float_ssim_and_ms_ssim_with_subsampling() {
    let Some(gpu) = test_gpu() else { return };
    let features = [
        ("float_ssim", "enable_lcs=true"),
        ("float_ms_ssim", "enable_lcs=true"),
    ];
    let p = pair("b_1280x720_420p8_zoom");
    let cpu = score(p, &features, 3, None);
    let on_gpu = score(p, &features, 3, Some(&gpu));
    let worst = assert_close_scores(&format!("{} subsample 3", p.name()), &cpu, &on_gpu, TOL);
    let max = worst.values().map(|w| w.0).fold(0.0, f64::max);
    println!(
        "{}: subsample 3, {} frames within {TOL:e} (worst {max:.3e})",
        p.name(),
        cpu.frames.len()
    );
}

/// Two GPU runs give the same bits (no float atomics: fixed-order sums).
#[test]
fn float_ssim_and_ms_ssim_are_deterministic() {
    let Some(gpu) = test_gpu() else { return };
    let features = [
        ("float_ssim", "enable_lcs=true"),
        ("float_ms_ssim", "enable_lcs=true"),
    ];
    assert_runs_identical(
        &gpu,
        &[pair("b_1280x720_420p8_zoom"), pair("c_576x324_420p10_zoom")],
        &features,
    );
}
