//! `integer_ms_ssim` (VMAFx's MS-SSIM) on the GPU against the CPU
//! extractor: same feature names and order, per-frame values within the
//! float twins' relative tolerance on every golden pair with every option
//! (docs/gpu-testing.md), the chroma planes where they are 176x176 or
//! larger (elsewhere both engines refuse, with the CPU's reason),
//! subsampling, 12 and 16 bits, stress pictures at the smallest size, and
//! the same bits from run to run. Without a GPU each test records why it
//! skipped (`VMAFX_REQUIRE_GPU=1` fails instead).

use crate::common;

use common::gpu::*;
use common::synthetic::*;
use common::PAIRS;
use vmafx::{ChromaSubsampling, PictureFormat, PlaneId};

/// The pyramid's samples (the 9/7 halving's fused multiply-adds
/// included) and the per-position terms are the CPU's bit for bit; both
/// add the terms in double but in another order, so the means (rounded to
/// float) may differ in their last bit. In a CPU emulation of the kernels
/// (golden pairs, every output, chroma too) no value differed at all.
const TOL: f64 = 1e-5;

const OPTIONS: [&str; 4] = [
    "",
    "enable_lcs=true",
    "enable_db=true",
    "enable_db=true:clip_db=true",
];

/// Luma and, with it, the lcs terms (luma only) and both chroma scores.
const CHROMA: &str = "enable_chroma=true:enable_lcs=true";

#[test]
fn integer_ms_ssim_within_tolerance_on_every_golden_pair() {
    let Some(gpu) = test_gpu() else { return };
    for options in OPTIONS {
        check_all_pairs_close(&gpu, &[("integer_ms_ssim", options)], 1, TOL);
    }
}

/// `enable_chroma` on every pair: scored where both chroma planes are at
/// least 176x176 (1280x720 4:2:0, 352x288 4:2:2 and 4:4:4), refused with
/// the CPU's reason elsewhere.
#[test]
fn integer_ms_ssim_chroma_within_tolerance_or_refused_as_on_the_cpu() {
    let Some(gpu) = test_gpu() else { return };
    let features = [("integer_ms_ssim", CHROMA)];
    let mut scored = 0;
    for p in PAIRS {
        let (w, h) = p.format().plane_size(PlaneId::Cb);
        if w >= 176 && h >= 176 {
            let cpu = score(p, &features, 1, None);
            let on_gpu = score(p, &features, 1, Some(&gpu));
            let worst = assert_close_scores(&format!("{} {CHROMA}", p.name()), &cpu, &on_gpu, TOL);
            assert!(
                worst.contains_key("float_ms_ssim_cb") && worst.contains_key("float_ms_ssim_cr")
            );
            let max = worst.values().map(|w| w.0).fold(0.0, f64::max);
            println!("{}: chroma within {TOL:e} (worst {max:.3e})", p.name());
            scored += 1;
        } else {
            let refusal = |gpu| {
                builder(p.format(), &features, gpu)
                    .build()
                    .err()
                    .map(|e| e.to_string())
            };
            let cpu = refusal(None).expect("the CPU refuses small chroma");
            assert_eq!(refusal(Some(&gpu)), Some(cpu.clone()), "{}", p.name());
            println!("{}: refused on both ({cpu})", p.name());
        }
    }
    assert_eq!(scored, 3);
}

/// Every third frame scored.
#[test]
fn integer_ms_ssim_with_subsampling() {
    let Some(gpu) = test_gpu() else { return };
    let features = [("integer_ms_ssim", CHROMA)];
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

/// The 10-bit 4:2:2 pair's samples shifted up, with pseudo-random low
/// bits (chroma too).
#[test]
fn integer_ms_ssim_at_12_and_16_bits() {
    let Some(gpu) = test_gpu() else { return };
    let p = pair("d_352x288_422p10_pan");
    let (refs, dists) = (p.reference(), p.distorted_pictures());
    let features = [("integer_ms_ssim", CHROMA)];
    for bits in [12u8, 16] {
        let format =
            PictureFormat::new(p.width, p.height, p.subsampling, bits).expect("a valid format");
        let (r, d) = (widen(&refs, &format, 1, 12), widen(&dists, &format, 2, 12));
        let what = format!("{} at {bits} bits", p.name());
        let cpu = score_pictures(&features, &r, &d, None);
        let on_gpu = score_pictures(&features, &r, &d, Some(&gpu));
        let worst = assert_close_scores(&what, &cpu, &on_gpu, TOL);
        let max = worst.values().map(|w| w.0).fold(0.0, f64::max);
        println!("{what}: within {TOL:e} (worst {max:.3e})");
    }
}

/// Flat areas, noise and inverted distortions at the smallest size (one
/// 11x11 window at scale 4) and odd sizes, at 8, 10 and 16 bits.
#[test]
fn integer_ms_ssim_on_stress_pictures() {
    let Some(gpu) = test_gpu() else { return };
    let features = [("integer_ms_ssim", "enable_lcs=true")];
    let mut worst = 0.0f64;
    for (w, h) in [(176, 176), (177, 183), (250, 191)] {
        for bits in [8u8, 10, 16] {
            let format = PictureFormat::new(w, h, ChromaSubsampling::Yuv444, bits).unwrap();
            let frames: Vec<_> = (0..4).map(|i| stress_pair(&format, 11 + i)).collect();
            let (r, d): (Vec<_>, Vec<_>) = frames.into_iter().unzip();
            let what = format!("stress {w}x{h} {bits}-bit");
            let cpu = score_pictures(&features, &r, &d, None);
            let on_gpu = score_pictures(&features, &r, &d, Some(&gpu));
            let max = assert_close_scores(&what, &cpu, &on_gpu, TOL)
                .values()
                .map(|w| w.0)
                .fold(0.0, f64::max);
            worst = worst.max(max);
        }
    }
    println!(
        "stress pictures (176x176 to 250x191, 8/10/16 bits): within {TOL:e} (worst {worst:.3e})"
    );
}

/// Two GPU runs give the same bits (no float atomics: fixed-order sums).
#[test]
fn integer_ms_ssim_is_deterministic() {
    let Some(gpu) = test_gpu() else { return };
    assert_runs_identical(
        &gpu,
        &[pair("b_1280x720_420p8_zoom"), pair("d_352x288_444p8_pan")],
        &[("integer_ms_ssim", CHROMA)],
    );
}
