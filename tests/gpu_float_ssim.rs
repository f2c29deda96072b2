//! `float_ssim` and `float_ms_ssim` on the GPU against the CPU extractors:
//! same feature names and order, per-frame values within the documented
//! relative tolerance on every golden pair with every option
//! (docs/gpu-testing.md), subsampling, the same bits from run to run, and
//! a timing of the kernels at 1080p and 2160p. Without a GPU each test
//! prints why it skipped and passes.

mod common;

use common::gpu::*;
use common::synthetic::*;
use std::time::Instant;
use vmafx::feature::{self, FeatureSink, Options};
use vmafx::gpu::planes::SharedPlanes;
use vmafx::{ChromaSubsampling, PictureFormat};

/// Per-position values are the CPU's bit for bit; both add them in double
/// but in another order, so the means (rounded to float) may differ in
/// their last bit. In a CPU emulation of the kernels (every golden pair,
/// every output) no mean differed at all: worst relative difference 0.
const TOL: f64 = 1e-5;

const DEFAULT: [(&str, &str); 2] = [("float_ssim", ""), ("float_ms_ssim", "")];

#[test]
fn float_ssim_and_ms_ssim_within_tolerance_on_every_golden_pair() {
    let Some(gpu) = cuda_gpu() else { return };
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
    let Some(gpu) = cuda_gpu() else { return };
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
    let Some(gpu) = cuda_gpu() else { return };
    let features = [
        ("float_ssim", "enable_lcs=true"),
        ("float_ms_ssim", "enable_lcs=true"),
    ];
    for p in [pair("b_1280x720_420p8_zoom"), pair("c_576x324_420p10_zoom")] {
        let first = score(p, &features, 1, Some(&gpu));
        for run in 0..2 {
            let again = score(p, &features, 1, Some(&gpu));
            assert_identical(&format!("{} run {}", p.name(), run + 2), &first, &again);
        }
        println!("{}: three GPU runs bit-identical", p.name());
    }
}

/// Device milliseconds per frame of each extractor's kernels alone, planes
/// already on the device: a golden frame scaled up, 100 frames, one queued
/// ahead of the one read.
#[test]
fn float_ssim_kernel_timing() {
    let Some(gpu) = cuda_gpu() else { return };
    let p = pair("a_576x324_420p8_pan/x264_crf30");
    let (r0, d0) = (&p.reference()[0], &p.distorted_pictures()[0]);
    for (w, h, bits) in [(1920, 1080, 8), (3840, 2160, 8), (3840, 2160, 10)] {
        let format = PictureFormat::new(w, h, ChromaSubsampling::Yuv420, bits).unwrap();
        let (r, d) = (upscale(r0, &format), upscale(d0, &format));
        for name in ["float_ssim", "float_ms_ssim"] {
            let info = feature::find(name).unwrap();
            let options = Options::resolve(name, info.options, &[]).unwrap();
            let mut x = vmafx::gpu::feature::create(name, &options, &format, &gpu)
                .expect("a GPU version")
                .unwrap();
            let stream = gpu.stream().unwrap();
            let mut planes = SharedPlanes::new(&gpu, format, x.planes()).unwrap();
            let frame = planes.upload(&gpu, &stream, &r, &d).unwrap();
            let mut sink = FeatureSink::new();
            for i in 0..2 {
                x.enqueue(i, &frame, &stream).unwrap();
                x.complete(&mut sink).unwrap();
            }
            let (t0, t1) = (gpu.timed_event().unwrap(), gpu.timed_event().unwrap());
            const FRAMES: u32 = 100;
            let wall = Instant::now();
            t0.record(&stream).unwrap();
            for i in 2..FRAMES + 2 {
                x.enqueue(i, &frame, &stream).unwrap();
                if i > 2 {
                    x.complete(&mut sink).unwrap();
                }
            }
            t1.record(&stream).unwrap();
            x.complete(&mut sink).unwrap();
            t1.synchronize().unwrap();
            let wall_ms = wall.elapsed().as_secs_f64() * 1e3 / f64::from(FRAMES);
            let ms = f64::from(t1.elapsed_ms_since(&t0).unwrap()) / f64::from(FRAMES);
            println!(
                "{name} kernels {w}x{h} {bits}-bit: {ms:.4} ms/frame device ({:.0} fps), {wall_ms:.4} ms/frame wall",
                1000.0 / ms
            );
            assert!(sink.drain().count() > 0);
        }
    }
}
