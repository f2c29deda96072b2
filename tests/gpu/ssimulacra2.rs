//! `ssimulacra2` on the GPU against the CPU extractor: bit-identical
//! per-frame values on every golden pair (every `yuv_matrix`), with
//! subsampling, at 12 and 16 bits, on stress pictures from the smallest
//! size libjxl takes (8x8) and at 1080p and 2160p, and the same bits from
//! run to run. Without a GPU each test records why it skipped
//! (`VMAFX_REQUIRE_GPU=1` fails instead).

use crate::common;

use common::gpu::*;
use common::synthetic::*;
use vmafx::{ChromaSubsampling, PictureFormat};

const MATRICES: [&str; 4] = ["", "yuv_matrix=1", "yuv_matrix=2", "yuv_matrix=3"];

#[test]
fn ssimulacra2_matches_cpu_on_every_golden_pair() {
    let Some(gpu) = test_gpu() else { return };
    for options in MATRICES {
        check_all_pairs(&gpu, &[("ssimulacra2", options)], 1);
    }
}

#[test]
fn ssimulacra2_matches_cpu_with_subsampling() {
    let Some(gpu) = test_gpu() else { return };
    for p in [pair("b_1280x720_420p8_zoom"), pair("e_321x179_420p8_zoom")] {
        let features = [("ssimulacra2", "")];
        let cpu = score(p, &features, 3, None);
        let on_gpu = score(p, &features, 3, Some(&gpu));
        assert_identical(&format!("{} subsample 3", p.name()), &cpu, &on_gpu);
        println!("{}: subsample 3 bit-identical", p.name());
    }
}

/// The 10-bit pairs' samples shifted up, with pseudo-random low bits
/// (chroma too).
#[test]
fn ssimulacra2_matches_cpu_at_12_and_16_bits() {
    let Some(gpu) = test_gpu() else { return };
    for p in [pair("c_576x324_420p10_zoom"), pair("d_352x288_422p10_pan")] {
        let (refs, dists) = (p.reference(), p.distorted_pictures());
        for bits in [12u8, 16] {
            let format =
                PictureFormat::new(p.width, p.height, p.subsampling, bits).expect("a valid format");
            let (r, d) = (widen(&refs, &format, 1, 6), widen(&dists, &format, 2, 6));
            let what = format!("{} at {bits} bits", p.name());
            let features = [("ssimulacra2", "yuv_matrix=2")];
            let cpu = score_pictures(&features, &r, &d, None);
            let on_gpu = score_pictures(&features, &r, &d, Some(&gpu));
            assert_identical(&what, &cpu, &on_gpu);
            println!("{what}: {} frames bit-identical", cpu.frames.len());
        }
    }
}

/// Flat areas, noise and inverted distortions (chroma at zero: every
/// channel clamps) at the smallest size, sizes where the blur has no
/// 4-lane steps, five scales, and odd sizes, at 8, 10 and 16 bits.
#[test]
fn ssimulacra2_matches_cpu_on_stress_pictures() {
    let Some(gpu) = test_gpu() else { return };
    let features = [("ssimulacra2", "")];
    for (w, h) in [(8, 8), (9, 17), (64, 64), (23, 260), (261, 15), (177, 183)] {
        for bits in [8u8, 10, 16] {
            let format = PictureFormat::new(w, h, ChromaSubsampling::Yuv444, bits).unwrap();
            let frames: Vec<_> = (0..4).map(|i| stress_pair(&format, 11 + i)).collect();
            let (r, d): (Vec<_>, Vec<_>) = frames.into_iter().unzip();
            let what = format!("stress {w}x{h} {bits}-bit");
            let cpu = score_pictures(&features, &r, &d, None);
            let on_gpu = score_pictures(&features, &r, &d, Some(&gpu));
            assert_identical(&what, &cpu, &on_gpu);
        }
    }
    println!("stress pictures (8x8 to 261x15, 8/10/16 bits): bit-identical");
}

/// The 576x324 pair scaled up to 1080p and 2160p (8 and 10 bits): the
/// largest pyramids and launches.
#[test]
fn ssimulacra2_matches_cpu_at_1080p_and_2160p() {
    let Some(gpu) = test_gpu() else { return };
    let p = pair("a_576x324_420p8_pan/x264_crf30");
    let (refs, dists) = (p.reference(), p.distorted_pictures());
    for (w, h, bits) in [(1920, 1080, 8u8), (3840, 2160, 10)] {
        let format = PictureFormat::new(w, h, ChromaSubsampling::Yuv420, bits).unwrap();
        let up = |pictures: &[vmafx::HostPicture]| -> Vec<_> {
            pictures
                .iter()
                .take(3)
                .map(|s| upscale_all_planes(s, &format))
                .collect()
        };
        let (r, d) = (up(&refs), up(&dists));
        let what = format!("{w}x{h} {bits}-bit");
        let features = [("ssimulacra2", "")];
        let cpu = score_pictures(&features, &r, &d, None);
        let on_gpu = score_pictures(&features, &r, &d, Some(&gpu));
        assert_identical(&what, &cpu, &on_gpu);
        println!("{what}: {} frames bit-identical", cpu.frames.len());
    }
}

/// Three GPU runs give the same bits (fixed-order sums, no atomics).
#[test]
fn ssimulacra2_is_deterministic() {
    let Some(gpu) = test_gpu() else { return };
    assert_runs_identical(
        &gpu,
        &[pair("b_1280x720_420p8_zoom"), pair("e_321x179_420p8_zoom")],
        &[("ssimulacra2", "")],
    );
}
