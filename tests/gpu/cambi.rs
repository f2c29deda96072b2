//! `cambi` on the GPU against the CPU extractor: same feature names and
//! order, per-frame values within a relative 1e-5 on every golden pair
//! (default options, full_ref, resizing to enc/src sizes, and option sets
//! covering the window, topk, tvi_threshold, max_log_contrast, eotf,
//! enc_bitdepth, the visibility threshold and cambi_max_val), subsampling,
//! the same bits from run to run, 12- and 16-bit input, synthetic pictures
//! of odd sizes, pictures smaller than the window at the coarse scales
//! (libvmaf's reads beyond the scale), the high-resolution speed-up, and the
//! out-of-range refusal. Kernel times: `gpu_bench --extractors cambi`.
//! Without a GPU each test records why it skipped (VMAFX_REQUIRE_GPU=1 fails instead).

use crate::common;

use common::gpu::*;
use common::synthetic::{stress_pair, widen, xorshift};
use vmafx::gpu::Gpu;
use vmafx::{ChromaSubsampling, HostPicture, PictureFormat, PlaneId};

/// Everything up to the per-pixel c-values is integer or single-operation
/// float arithmetic, bit for bit the CPU's; only each scale's top-k sum is
/// added in another order (double, fixed order). When every partial sum is
/// exact in double (the CPU's own fast-path condition, true of most
/// frames) the results are bit-identical. In a CPU emulation of the kernels
/// (g++ under an emulation of the CUDA built-ins, every test below but the
/// timing run through the real host code on the emulated device): every
/// value of every golden pair under every option set, subsampled, at 12 and
/// 16 bits, and of every synthetic picture was bit-identical to the CPU
/// (worst relative difference 0), three runs bit-identical, the refusal
/// message the CPU's. Mutations (rows beyond a small scale not counted, or
/// the canonical planes not kept) fail the beyond-the-scale test with
/// relative differences near 1e-4.
const TOL: f64 = 1e-5;

/// Option sets run on every golden pair.
const OPTION_SETS: &[&str] = &[
    "",
    "full_ref=true",
    // Resize on the device: the encode down, the source up.
    "full_ref=true:enc_width=288:enc_height=162:src_width=400:src_height=240",
    "window_size=33:topk=0.1:tvi_threshold=0.012:max_log_contrast=3",
    // The v1.0.16 models' options.
    "cambi_high_res_speedup=1080:cambi_vis_lum_threshold=0.06:cambi_max_val=17",
    // PQ: a band of 1028 values (the largest histograms); anti-dithering.
    "eotf=pq:enc_bitdepth=8:topk=1.0",
    // 32 steps, k = 1.
    "max_log_contrast=5:tvi_threshold=0.0001:topk=0.0001",
    "max_log_contrast=0:tvi_threshold=1.0",
];

#[test]
fn cambi_within_tolerance_on_every_golden_pair() {
    let Some(gpu) = test_gpu() else { return };
    for options in OPTION_SETS {
        check_all_pairs_close(&gpu, &[("cambi", options)], 1, TOL);
    }
}

/// Coarse scales shorter or narrower than half the window: libvmaf's loops
/// read rows and columns beyond the scale, which hold what earlier scales,
/// pictures and frames left there (the extractor's canonical planes).
#[test]
fn cambi_reads_beyond_small_scales_like_the_cpu() {
    let Some(gpu) = test_gpu() else { return };
    let p = pair("b_1280x720_420p8_zoom");
    for options in [
        "window_size=127:enc_width=1280:enc_height=150",
        "window_size=127:enc_width=1280:enc_height=150:full_ref=true",
    ] {
        let what = format!("{} cambi {options:?}", p.name());
        let cpu = score(p, &[("cambi", options)], 1, None);
        let on_gpu = score(p, &[("cambi", options)], 1, Some(&gpu));
        let worst = assert_close_scores(&what, &cpu, &on_gpu, TOL);
        println!("{what}: within {TOL:e} (worst {:.3e})", max_of(&worst));
    }
    // Banded pictures: scale 4 is 14 rows for a pad of 15, or 13 columns
    // for a pad of 27.
    for (w, h, options) in [
        (1280, 216, "window_size=127"),
        (
            1280,
            216,
            "window_size=127:full_ref=true:src_width=1600:src_height=270",
        ),
        (200, 2400, "window_size=127:full_ref=true"),
    ] {
        let format = PictureFormat::new(w, h, ChromaSubsampling::Yuv420, 8).unwrap();
        let (r, d): (Vec<_>, Vec<_>) = (0..3).map(|i| banded_pair(&format, 9 + i)).unzip();
        let what = format!("{w}x{h} cambi {options:?}");
        compare_pictures(&gpu, &what, &[("cambi", options)], &r, &d);
    }
}

#[test]
fn cambi_with_subsampling() {
    let Some(gpu) = test_gpu() else { return };
    check_all_pairs_close(&gpu, &[("cambi", "")], 3, TOL);
    check_all_pairs_close(&gpu, &[("cambi", "full_ref=true")], 3, TOL);
}

/// Three GPU runs give the same bits (integer atomics only, fixed-order
/// double sums).
#[test]
fn cambi_is_deterministic() {
    let Some(gpu) = test_gpu() else { return };
    let features = [("cambi", "full_ref=true")];
    assert_runs_identical(
        &gpu,
        &[
            pair("b_1280x720_420p8_zoom"),
            pair("c_576x324_420p10_zoom"),
            pair("e_321x179_420p8_zoom"),
        ],
        &features,
    );
}

/// 12- and 16-bit pictures: the 10-bit pairs' samples shifted up, with
/// pseudo-random low bits (requantized to 10 bits with rounding).
#[test]
fn cambi_at_12_and_16_bits() {
    let Some(gpu) = test_gpu() else { return };
    for p in [pair("c_576x324_420p10_zoom"), pair("d_352x288_422p10_pan")] {
        let (refs, dists) = (p.reference(), p.distorted_pictures());
        for bits in [12u8, 16] {
            let format = PictureFormat::new(p.width, p.height, p.subsampling, bits).unwrap();
            let (r, d) = (widen(&refs, &format, 1, 6), widen(&dists, &format, 2, 6));
            for options in ["full_ref=true", "enc_bitdepth=8"] {
                let what = format!("{} at {bits} bits, cambi {options:?}", p.name());
                compare_pictures(&gpu, &what, &[("cambi", options)], &r, &d);
            }
        }
    }
}

/// Banded pictures and stress pictures (flat, gradient, noisy and
/// checkered regions) at odd sizes and depths; the high-resolution
/// speed-up.
#[test]
fn cambi_on_synthetic_pictures() {
    let Some(gpu) = test_gpu() else { return };
    let banded: &[(u32, u32, u8, &str)] = &[
        (217, 301, 8, "full_ref=true"),
        (333, 216, 10, "full_ref=true:topk=0.05"),
        (1919, 1079, 8, "full_ref=true:window_size=127"),
    ];
    for &(w, h, bits, options) in banded {
        let format = PictureFormat::new(w, h, ChromaSubsampling::Yuv420, bits).unwrap();
        let (r, d): (Vec<_>, Vec<_>) = (0..3).map(|i| banded_pair(&format, 1 + i)).unzip();
        let what = format!("banded {w}x{h} {bits}-bit cambi {options:?}");
        compare_pictures(&gpu, &what, &[("cambi", options)], &r, &d);
    }
    let cases: &[(u32, u32, u8, &str)] = &[
        (217, 301, 8, "full_ref=true"),
        (217, 301, 10, "full_ref=true:window_size=15"),
        (
            333,
            216,
            10,
            "full_ref=true:enc_bitdepth=8:max_log_contrast=4",
        ),
        (1920, 1080, 8, "cambi_high_res_speedup=1080:full_ref=true"),
        (
            1920,
            1080,
            10,
            "cambi_high_res_speedup=1080:window_size=127:topk=0.9",
        ),
    ];
    for &(w, h, bits, options) in cases {
        let format = PictureFormat::new(w, h, ChromaSubsampling::Yuv420, bits).unwrap();
        let (r, d): (Vec<_>, Vec<_>) = (0..3).map(|i| stress_pair(&format, 5 + i)).unzip();
        let what = format!("{w}x{h} {bits}-bit cambi {options:?}");
        compare_pictures(&gpu, &what, &[("cambi", options)], &r, &d);
    }
}

/// A luma sample above the bit depth's maximum is refused with the CPU's
/// message, in the distorted picture and (full_ref) in the reference.
#[test]
fn cambi_refuses_out_of_range_samples() {
    let Some(gpu) = test_gpu() else { return };
    let format = PictureFormat::new(320, 240, ChromaSubsampling::Yuv420, 10).unwrap();
    let good = HostPicture::new(format);
    let mut bad = HostPicture::new(format);
    let stride = bad.stride(PlaneId::Y);
    bad.plane_u16_mut(PlaneId::Y)[3 * stride + 77] = 1100;
    bad.plane_u16_mut(PlaneId::Y)[9 * stride + 5] = 1024;
    for (options, r, d) in [("", &good, &bad), ("full_ref=true", &bad, &good)] {
        let mut ctx = builder(format, &[("cambi", options)], Some(&gpu))
            .build()
            .unwrap();
        let err = ctx
            .submit(r.clone(), d.clone())
            .and_then(|_| ctx.finish().map(|_| ()))
            .unwrap_err();
        assert!(err.to_string().contains("1100"), "{options:?}: {err}");
        println!("{options:?}: refused ({err})");
    }
}

/// Banding-prone pictures: a diagonal ramp of wide bands one 8-bit code
/// apart (flat enough for the mask), a noisy strip; the distorted picture
/// quantizes the ramp to steps of three codes.
fn banded_pair(format: &PictureFormat, seed: u32) -> (HostPicture, HostPicture) {
    let unit = 1u32 << (format.bit_depth - 8);
    let max = (1u32 << format.bit_depth) - 1;
    let (w, h) = format.plane_size(PlaneId::Y);
    let mut next = xorshift(seed);
    let levels = 40 + (seed as usize % 7) * 5;
    let foot = 40 + 3 * seed;
    let (mut r, mut d) = (HostPicture::new(*format), HostPicture::new(*format));
    let stride = r.stride(PlaneId::Y);
    for y in 0..h {
        for x in 0..w {
            let t = ((x + 2 * y) * levels / (w + 2 * h)) as u32;
            let noisy = y * 8 / h == 6;
            let a = if noisy {
                (foot + t) * unit + next() % (4 * unit)
            } else {
                (foot + t) * unit
            };
            let b = if noisy { a } else { (foot + t / 3 * 3) * unit };
            let (a, b) = (a.min(max), b.min(max));
            if format.bit_depth == 8 {
                r.plane_u8_mut(PlaneId::Y)[y * stride + x] = a as u8;
                d.plane_u8_mut(PlaneId::Y)[y * stride + x] = b as u8;
            } else {
                r.plane_u16_mut(PlaneId::Y)[y * stride + x] = a as u16;
                d.plane_u16_mut(PlaneId::Y)[y * stride + x] = b as u16;
            }
        }
    }
    (r, d)
}

fn max_of(worst: &std::collections::BTreeMap<String, (f64, String)>) -> f64 {
    worst.values().map(|w| w.0).fold(0.0, f64::max)
}

fn compare_pictures(
    gpu: &Gpu,
    what: &str,
    features: &[(&str, &str)],
    refs: &[HostPicture],
    dists: &[HostPicture],
) {
    let cpu = score_pictures(features, refs, dists, None);
    let on_gpu = score_pictures(features, refs, dists, Some(gpu));
    let worst = assert_close_scores(what, &cpu, &on_gpu, TOL);
    println!("{what}: within {TOL:e} (worst {:.3e})", max_of(&worst));
}
