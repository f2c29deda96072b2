//! `speed_chroma` and `speed_temporal` on the GPU against the CPU
//! extractors: same feature names and order, per-frame values within a
//! relative 1e-5 on every golden pair (default options, the v1.0.16 models'
//! option sets, every prescaling method, kernel scales, weight modes,
//! `speed_use_ref_diff`), subsampling (speed_temporal still sees every
//! frame), the same bits from run to run, 12- and 16-bit input, and
//! synthetic pictures of odd sizes in every chroma layout, flat planes
//! (singular covariance) included. Without a GPU each test records why it
//! skipped (`VMAFX_REQUIRE_GPU=1` fails instead).

use crate::common;

use common::gpu::*;
use common::synthetic::{widen, xorshift};
use std::collections::BTreeMap;
use vmafx::gpu::Gpu;
use vmafx::{ChromaSubsampling, HostPicture, PictureFormat, PlaneId};

/// Every value but the entropies' log2 is the CPU's bit for bit (same
/// operations in the same order, unfused); the log2 is CUDA's, within an
/// ulp of glibc's, and its double result is rounded to float.
///
/// CPU emulation of the kernels (kernels/speed.cu compiled with g++ under
/// an emulation of the CUDA built-ins, driven through an emulated driver
/// by the host code of src/gpu/feature/speed.rs, so these very tests ran):
/// every value of every test below identical to the CPU's (worst relative
/// difference 0 on every golden pair, every output, every option set,
/// subsample 3, 12/16 bits, synthetic pictures). With every log2 result
/// moved by up to 1 ulp, and by up to 16 ulps: still identical (no float
/// rounding changed). SpEED amplifies last-bit differences, so the
/// tolerance only holds with bit-exact arithmetic: in the emulation,
/// adding the anti-alias filter's vertical taps in reverse order moved
/// scores by 1.1e-5, moving every eigenvalue by one float ulp by 1.3e-5.
/// A device run near 1e-5 therefore means some operation is not the
/// CPU's, not rounding noise.
const TOL: f64 = 1e-5;

const BOTH: [(&str, &str); 2] = [("speed_chroma", ""), ("speed_temporal", "")];

/// The v1.0.16 models' `speed_chroma` options (tests/parity/speed.rs).
const MODEL_OPTION_SETS: &[&str] = &[
    "speed_kernelscale=1.0:speed_nn_floor=0.1:speed_sigma_nn=0.19:speed_weight_var_mode=5:\
     speed_max_val=45.0",
    "speed_nn_floor=0.1:speed_sigma_nn=0.19:speed_weight_var_mode=5:speed_prescale=0.5:\
     speed_prescale_method=bilinear:speed_max_val=45.0",
    "speed_nn_floor=0.1:speed_sigma_nn=0.19:speed_weight_var_mode=5:speed_prescale=0.6:\
     speed_prescale_method=bilinear:speed_max_val=45.0",
];

/// Every prescaling method (down and up, and factors within 1e-3 of 1,
/// which read the plane unscaled at a size off by one), kernel scales,
/// every weight mode, the noise options and the cap.
const CHROMA_OPTION_SETS: &[&str] = &[
    "speed_prescale=0.7:speed_prescale_method=nearest",
    "speed_prescale=0.8:speed_prescale_method=bicubic",
    "speed_prescale=0.9:speed_prescale_method=lanczos4",
    "speed_prescale=1.5:speed_prescale_method=bilinear",
    "speed_prescale=1.25:speed_prescale_method=lanczos4:speed_weight_var_mode=1",
    "speed_prescale=1.0009",
    "speed_prescale=0.9991:speed_weight_var_mode=2",
    "speed_kernelscale=0.5:speed_weight_var_mode=3",
    "speed_kernelscale=2:speed_weight_var_mode=4",
    "speed_kernelscale=3.71134:speed_weight_var_mode=6",
    "speed_sigma_nn=0.5:speed_nn_floor=0.3",
    "speed_max_val=2",
];

const TEMPORAL_OPTION_SETS: &[&str] = &[
    "speed_use_ref_diff=true",
    "speed_prescale=0.6:speed_prescale_method=lanczos4",
    "speed_prescale=0.85:speed_prescale_method=bicubic:speed_use_ref_diff=true",
    "speed_prescale=0.75:speed_prescale_method=nearest",
    "speed_prescale=0.5:speed_prescale_method=bilinear",
    "speed_prescale=0.9991",
    "speed_kernelscale=1.5",
    "speed_kernelscale=3:speed_sigma_nn=1.1:speed_nn_floor=0.5",
];

#[test]
fn speed_within_tolerance_on_every_golden_pair() {
    let Some(gpu) = test_gpu() else { return };
    check_all_pairs_close(&gpu, &BOTH, 1, TOL);
}

#[test]
fn speed_chroma_with_the_v1_model_options() {
    let Some(gpu) = test_gpu() else { return };
    for options in MODEL_OPTION_SETS {
        check_pairs_close(&gpu, &[("speed_chroma", options)], 1);
    }
}

#[test]
fn speed_chroma_with_every_option() {
    let Some(gpu) = test_gpu() else { return };
    for options in CHROMA_OPTION_SETS {
        check_pairs_close(&gpu, &[("speed_chroma", options)], 1);
    }
}

/// A prescale that makes the picture taller is refused on both engines
/// (libvmaf's speed_temporal writes past its frame buffers: ADR 0005).
#[test]
fn speed_temporal_refuses_enlarging_prescales_on_both_engines() {
    let Some(gpu) = test_gpu() else { return };
    let p = pair("a_576x324_420p8_pan");
    let features = [("speed_temporal", "speed_prescale=1.3")];
    for engine in [None, Some(&gpu)] {
        let e = builder(p.format(), &features, engine).build().err();
        let e = e.map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("speed_prescale") && e.contains("576x324"), "{e}");
    }
}

#[test]
fn speed_temporal_with_every_option() {
    let Some(gpu) = test_gpu() else { return };
    for options in TEMPORAL_OPTION_SETS {
        check_pairs_close(&gpu, &[("speed_temporal", options)], 1);
    }
}

/// Only every third frame is scored, but speed_temporal (temporal) sees
/// every frame and compares each with the one before, as on the CPU.
#[test]
fn speed_with_subsampling() {
    let Some(gpu) = test_gpu() else { return };
    check_all_pairs_close(&gpu, &BOTH, 3, TOL);
    check_pairs_close(
        &gpu,
        &[
            ("speed_chroma", MODEL_OPTION_SETS[1]),
            ("speed_temporal", TEMPORAL_OPTION_SETS[2]),
        ],
        3,
    );
}

/// Three GPU runs give the same bits (no atomics, every sum in one thread).
#[test]
fn speed_is_deterministic() {
    let Some(gpu) = test_gpu() else { return };
    let features = [
        ("speed_chroma", ""),
        ("speed_temporal", ""),
        ("speed_chroma", MODEL_OPTION_SETS[2]),
        ("speed_temporal", TEMPORAL_OPTION_SETS[1]),
    ];
    assert_runs_identical(
        &gpu,
        &[
            pair("b_1280x720_420p8_zoom"),
            pair("d_352x288_422p10_pan"),
            pair("a_576x324_420p8_pan"),
        ],
        &features,
    );
}

/// 12- and 16-bit pictures: the 10-bit pairs' samples shifted up, with
/// pseudo-random low bits.
#[test]
fn speed_at_12_and_16_bits() {
    let Some(gpu) = test_gpu() else { return };
    for p in [pair("c_576x324_420p10_zoom"), pair("d_352x288_422p10_pan")] {
        let (refs, dists) = (p.reference(), p.distorted_pictures());
        for bits in [12u8, 16] {
            let format = PictureFormat::new(p.width, p.height, p.subsampling, bits).unwrap();
            let (r, d) = (widen(&refs, &format, 1, 8), widen(&dists, &format, 2, 8));
            for features in [
                &BOTH[..],
                &[
                    ("speed_chroma", CHROMA_OPTION_SETS[2]),
                    ("speed_temporal", TEMPORAL_OPTION_SETS[2]),
                ],
            ] {
                let what = format!("{} at {bits} bits, {features:?}", p.name());
                let cpu = score_pictures(features, &r, &d, None);
                let on_gpu = score_pictures(features, &r, &d, Some(&gpu));
                let worst = assert_close_scores(&what, &cpu, &on_gpu, TOL);
                let max = worst.values().map(|w| w.0).fold(0.0, f64::max);
                println!("{what}: within {TOL:e} (worst {max:.3e})");
            }
        }
    }
}

/// Moving synthetic pictures at odd sizes in every layout and depth, and
/// flat planes: a flat Cb plane (singular: speed_chroma_uv takes the Cr
/// score), a flat distorted luma (one-sided singularity: 0), still frames
/// (every difference 0).
#[test]
fn speed_on_synthetic_pictures() {
    let Some(gpu) = test_gpu() else { return };
    let mut worst = 0.0f64;
    for (w, h, subsampling) in [
        (321, 179, ChromaSubsampling::Yuv444),
        (163, 161, ChromaSubsampling::Yuv420),
        (417, 243, ChromaSubsampling::Yuv422),
        (199, 97, ChromaSubsampling::Yuv444),
    ] {
        for bits in [8u8, 10] {
            let format = PictureFormat::new(w, h, subsampling, bits).unwrap();
            for flat in [Flat::None, Flat::Cb, Flat::DistortedLuma, Flat::Still] {
                let (r, d) = moving_pictures(&format, 4, w + h + u32::from(bits), flat);
                for features in [
                    &BOTH[..],
                    &[
                        ("speed_chroma", CHROMA_OPTION_SETS[4]),
                        ("speed_temporal", TEMPORAL_OPTION_SETS[2]),
                    ],
                ] {
                    let what = format!("{w}x{h} {subsampling:?} {bits}-bit {flat:?} {features:?}");
                    let cpu = score_pictures(features, &r, &d, None);
                    let on_gpu = score_pictures(features, &r, &d, Some(&gpu));
                    let max = assert_close_scores(&what, &cpu, &on_gpu, TOL)
                        .values()
                        .map(|w| w.0)
                        .fold(0.0, f64::max);
                    worst = worst.max(max);
                }
            }
        }
    }
    println!("synthetic pictures (163x161 to 417x243, 4:2:0/4:2:2/4:4:4, 8/10 bits, flat planes): within {TOL:e} (worst {worst:.3e})");
}

/// [`check_all_pairs_close`] for options some pairs are too small for
/// (where the CPU refuses the extractor, as libvmaf): those are skipped.
fn check_pairs_close(gpu: &Gpu, features: &[(&str, &str)], subsample: u32) {
    let mut worst = BTreeMap::<String, (f64, String)>::new();
    for p in common::PAIRS {
        let what = format!("{} {features:?} subsample {subsample}", p.name());
        if let Err(e) = builder(p.format(), features, None).build() {
            assert!(e.to_string().contains("too small"), "{what}: {e}");
            let on_gpu = builder(p.format(), features, Some(gpu)).build();
            assert!(on_gpu.is_err(), "{what}: the GPU context accepts it");
            println!("{what}: refused on both engines ({e})");
            continue;
        }
        let cpu = score(p, features, subsample, None);
        let on_gpu = score(p, features, subsample, Some(gpu));
        for (name, (d, at)) in assert_close_scores(&what, &cpu, &on_gpu, TOL) {
            let e = worst.entry(name).or_insert((0.0, String::new()));
            if d > e.0 || e.1.is_empty() {
                *e = (d, format!("{} {at}", p.name()));
            }
        }
    }
    println!("{features:?} subsample {subsample}: within {TOL:e}; worst relative differences:");
    for (name, (d, at)) in &worst {
        println!("  {name:60} {d:.3e}  ({at})");
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Flat {
    None,
    Cb,
    DistortedLuma,
    Still,
}

/// `frames` reference pictures of a smooth pattern with texture, moving a
/// few samples per frame, and distorted ones with noise added.
fn moving_pictures(
    format: &PictureFormat,
    frames: u32,
    seed: u32,
    flat: Flat,
) -> (Vec<HostPicture>, Vec<HostPicture>) {
    let max = (1u32 << format.bit_depth) - 1;
    let unit = max as f64 / 255.0;
    let mut next = xorshift(seed);
    let (mut refs, mut dists) = (Vec::new(), Vec::new());
    for t in 0..frames {
        let t = if flat == Flat::Still { 0 } else { t };
        let (mut r, mut d) = (HostPicture::new(*format), HostPicture::new(*format));
        for (pi, plane) in PlaneId::ALL.into_iter().enumerate() {
            let (w, h) = format.plane_size(plane);
            let stride = r.stride(plane);
            for y in 0..h {
                for x in 0..w {
                    let (fx, fy) = (
                        (x as f64 + 3.0 * t as f64) / 9.0,
                        (y as f64 + t as f64) / 13.0,
                    );
                    let smooth = 128.0
                        + 60.0 * (fx + pi as f64).sin() * (fy * 0.7).cos()
                        + 25.0 * ((fx + fy) * 0.31).sin();
                    let texture = (next() % 24) as f64 - 12.0;
                    let mut a = ((smooth + texture) * unit).round().clamp(0.0, max as f64) as u32;
                    if flat == Flat::Cb && plane == PlaneId::Cb {
                        a = max / 2;
                    }
                    let mut b = (a + next() % (max / 16 + 1)).min(max);
                    if flat == Flat::DistortedLuma && plane == PlaneId::Y {
                        b = max / 3;
                    }
                    let i = y * stride + x;
                    if format.bit_depth == 8 {
                        r.plane_u8_mut(plane)[i] = a as u8;
                        d.plane_u8_mut(plane)[i] = b as u8;
                    } else {
                        r.plane_u16_mut(plane)[i] = a as u16;
                        d.plane_u16_mut(plane)[i] = b as u16;
                    }
                }
            }
        }
        if flat == Flat::Still {
            // Still frames: every frame the first one.
            if let (Some(r0), Some(d0)) = (refs.first(), dists.first()) {
                (r, d) = (Clone::clone(r0), Clone::clone(d0));
            }
        }
        refs.push(r);
        dists.push(d);
    }
    (refs, dists)
}
