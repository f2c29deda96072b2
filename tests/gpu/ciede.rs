//! `ciede` on the GPU against the CPU extractor: same feature names and
//! order, per-frame values within a relative 1e-5 on every golden pair
//! (default and `fix_422_chroma`), subsampling, the same bits from run to
//! run, 12- and 16-bit input, and synthetic pictures of odd sizes in every
//! chroma layout (libvmaf's mis-addressed 4:2:2 included, down to one-row
//! pictures). Without a GPU each test records why it skipped (VMAFX_REQUIRE_GPU=1 fails instead).

use crate::common;

use common::gpu::*;
use common::synthetic::{widen, xorshift};
use vmafx::feature::options::parse_key_values;
use vmafx::gpu::Gpu;
use vmafx::{
    ChromaSubsampling, ContextBuilder, FeatureScores, HostPicture, PictureFormat, PlaneId,
};

/// The kernels do the CPU's arithmetic operation by operation, but with
/// CUDA's `pow`, `powf`, `atan2`, `sin`, `cos` and `exp` (a few ulps from
/// glibc's) and another order of the double sum. In a CPU emulation of the
/// kernel (every frame of every golden pair, both 4:2:2 addressings, and
/// the synthetic pictures below): with glibc's functions every frame value
/// was identical; with every such result moved by up to CUDA's documented
/// worst error the worst relative difference was 8e-11, at 16 times those
/// errors 1.3e-10.
const TOL: f64 = 1e-5;

#[test]
fn ciede_within_tolerance_on_every_golden_pair() {
    let Some(gpu) = test_gpu() else { return };
    check_all_pairs_close(&gpu, &[("ciede", "")], 1, TOL);
    // Correct 4:2:2 addressing (and the renamed output on every format).
    check_all_pairs_close(&gpu, &[("ciede", "fix_422_chroma=true")], 1, TOL);
}

#[test]
fn ciede_with_subsampling() {
    let Some(gpu) = test_gpu() else { return };
    check_all_pairs_close(&gpu, &[("ciede", "")], 3, TOL);
}

/// Two GPU runs give the same bits (fixed-order sums, no float atomics).
#[test]
fn ciede_is_deterministic() {
    let Some(gpu) = test_gpu() else { return };
    let pairs = [
        pair("b_1280x720_420p8_zoom"),
        pair("d_352x288_422p10_pan"),
        pair("e_321x179_420p8_zoom"),
    ];
    assert_runs_identical(&gpu, &pairs, &[("ciede", "")]);
}

/// 12- and 16-bit pictures: the 10-bit pairs' samples shifted up, with
/// pseudo-random low bits.
#[test]
fn ciede_at_12_and_16_bits() {
    let Some(gpu) = test_gpu() else { return };
    for p in [pair("c_576x324_420p10_zoom"), pair("d_352x288_422p10_pan")] {
        let (refs, dists) = (p.reference(), p.distorted_pictures());
        for bits in [12u8, 16] {
            let format = PictureFormat::new(p.width, p.height, p.subsampling, bits).unwrap();
            let (r, d) = (widen(&refs, &format, 1, 12), widen(&dists, &format, 2, 12));
            for options in ["", "fix_422_chroma=true"] {
                let what = format!("{} at {bits} bits, ciede {options:?}", p.name());
                let features = [("ciede", options)];
                let cpu = score_pictures(&format, &r, &d, &features, None);
                let on_gpu = score_pictures(&format, &r, &d, &features, Some(&gpu));
                let worst = assert_close_scores(&what, &cpu, &on_gpu, TOL);
                let max = worst.values().map(|w| w.0).fold(0.0, f64::max);
                println!("{what}: within {TOL:e} (worst {max:.3e})");
            }
        }
    }
}

/// Random and partly identical pictures at odd sizes in every layout: the
/// ceil-size chroma planes, libvmaf's 4:2:2 reads through its row padding
/// and past the last row (one-row pictures), and skipped equal pixels.
#[test]
fn ciede_on_synthetic_pictures() {
    let Some(gpu) = test_gpu() else { return };
    let mut worst = 0.0f64;
    for (w, h) in [(3, 1), (17, 1), (67, 41), (321, 179), (130, 3)] {
        for subsampling in [
            ChromaSubsampling::Yuv420,
            ChromaSubsampling::Yuv422,
            ChromaSubsampling::Yuv444,
        ] {
            for bits in [8u8, 10, 16] {
                let format = PictureFormat::new(w, h, subsampling, bits).unwrap();
                let (r, d): (Vec<_>, Vec<_>) = (0..3).map(|i| random_pair(&format, 11 + i)).unzip();
                for options in ["", "fix_422_chroma=true"] {
                    let what = format!("{w}x{h} {subsampling:?} {bits}-bit {options:?}");
                    let features = [("ciede", options)];
                    let cpu = score_pictures(&format, &r, &d, &features, None);
                    let on_gpu = score_pictures(&format, &r, &d, &features, Some(&gpu));
                    let max = assert_close_scores(&what, &cpu, &on_gpu, TOL)
                        .values()
                        .map(|w| w.0)
                        .fold(0.0, f64::max);
                    worst = worst.max(max);
                }
            }
        }
    }
    println!("synthetic pictures (3x1 to 321x179, 4:2:0/4:2:2/4:4:4, 8/10/16 bits): within {TOL:e} (worst {worst:.3e})");
}

fn score_pictures(
    format: &PictureFormat,
    refs: &[HostPicture],
    dists: &[HostPicture],
    features: &[(&str, &str)],
    gpu: Option<&Gpu>,
) -> FeatureScores {
    let mut b = ContextBuilder::new(*format);
    for (name, options) in features {
        b = b.feature(name, parse_key_values(name, options).unwrap());
    }
    if let Some(g) = gpu {
        b = b.gpu(g.clone());
    }
    let mut ctx = b.build().unwrap();
    for (r, d) in refs.iter().zip(dists) {
        ctx.submit(r.clone(), d.clone()).unwrap();
    }
    ctx.finish().unwrap()
}

/// A random reference, and a distorted picture equal to it in a third of
/// its samples and random elsewhere.
fn random_pair(format: &PictureFormat, seed: u32) -> (HostPicture, HostPicture) {
    let max = (1u32 << format.bit_depth) - 1;
    let mut next = xorshift(seed);
    let (mut r, mut d) = (HostPicture::new(*format), HostPicture::new(*format));
    for plane in PlaneId::ALL {
        let (w, h) = format.plane_size(plane);
        let stride = r.stride(plane);
        for y in 0..h {
            for x in 0..w {
                let a = next() % (max + 1);
                let b = if next().is_multiple_of(3) {
                    a
                } else {
                    next() % (max + 1)
                };
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
    (r, d)
}
