//! Integer `vif` on the GPU against the CPU extractor: same feature names,
//! same order, bit-identical per-frame values, on every golden pair (every
//! option), on 12- and 16-bit pictures made from the 10-bit pair, and on
//! synthetic stress pictures at the smallest and odd sizes (kernel times:
//! `gpu_bench --extractors vif`). Without a GPU each test records why it
//! skipped (`VMAFX_REQUIRE_GPU=1` fails instead).

use crate::common;

use common::gpu::*;
use common::synthetic::*;
use vmafx::gpu::Gpu;
use vmafx::{ChromaSubsampling, ContextBuilder, PictureFormat};

#[test]
fn vif_matches_cpu_on_every_golden_pair() {
    let Some(gpu) = test_gpu() else { return };
    check_all_pairs(&gpu, &[("vif", "")], 1);
    check_all_pairs(&gpu, &[("vif", "debug=true")], 1);
    // The neg models' option.
    check_all_pairs(&gpu, &[("vif", "vif_enhn_gain_limit=1.0:debug=true")], 1);
}

#[test]
fn vif_matches_cpu_with_subsampling() {
    let Some(gpu) = test_gpu() else { return };
    for p in [
        pair("a_576x324_420p8_pan/x264_crf30"),
        pair("e_321x179_420p8_zoom"),
    ] {
        for options in ["debug=true", "vif_enhn_gain_limit=1.0"] {
            let features = [("vif", options)];
            let cpu = score(p, &features, 3, None);
            let on_gpu = score(p, &features, 3, Some(&gpu));
            assert_identical(
                &format!("{} {options} subsample 3", p.name()),
                &cpu,
                &on_gpu,
            );
        }
        println!("{}: subsample 3 bit-identical", p.name());
    }
}

/// 12- and 16-bit pictures: the 10-bit pair's samples shifted up, with
/// pseudo-random low bits so every bit of the wider samples matters.
#[test]
fn vif_matches_cpu_at_12_and_16_bits() {
    let Some(gpu) = test_gpu() else { return };
    let p = pair("c_576x324_420p10_zoom");
    let (refs, dists) = (p.reference(), p.distorted_pictures());
    for bits in [12u8, 16] {
        let format =
            PictureFormat::new(p.width, p.height, p.subsampling, bits).expect("a valid format");
        let (r, d) = (widen(&refs, &format, 1, 12), widen(&dists, &format, 2, 12));
        for options in ["debug=true", "vif_enhn_gain_limit=1.0:debug=true"] {
            let what = format!("{} at {bits} bits, {options}", p.name());
            let cpu = score_pictures(&[("vif", options)], &r, &d, None);
            let on_gpu = score_pictures(&[("vif", options)], &r, &d, Some(&gpu));
            assert_identical(&what, &cpu, &on_gpu);
            println!("{what}: {} frames bit-identical", cpu.frames.len());
        }
    }
}

/// Flat areas, gradients, full-range noise and inverted distortions at the
/// smallest size and odd ones, 8 and 16 bits: every branch of the
/// statistic, wrapped intermediates, and tiles narrower than the margins.
#[test]
fn vif_matches_cpu_on_stress_pictures() {
    let Some(gpu) = test_gpu() else { return };
    for (w, h) in [(16, 16), (17, 33), (67, 41), (130, 19)] {
        for bits in [8u8, 10, 16] {
            let format = PictureFormat::new(w, h, ChromaSubsampling::Yuv444, bits).unwrap();
            let frames: Vec<_> = (0..4).map(|i| stress_pair(&format, 7 + i)).collect();
            let (r, d): (Vec<_>, Vec<_>) = frames.into_iter().unzip();
            for options in ["debug=true", "vif_enhn_gain_limit=1.0:debug=true"] {
                let what = format!("stress {w}x{h} {bits}-bit {options}");
                let cpu = score_pictures(&[("vif", options)], &r, &d, None);
                let on_gpu = score_pictures(&[("vif", options)], &r, &d, Some(&gpu));
                assert_identical(&what, &cpu, &on_gpu);
            }
        }
    }
    println!("stress pictures (16x16 to 130x19, 8/10/16 bits): bit-identical");
}

/// Pictures too small for the four scales are refused as the CPU refuses them.
#[test]
fn vif_refuses_small_pictures_like_the_cpu() {
    let Some(gpu) = test_gpu() else { return };
    let format = PictureFormat::new(15, 32, ChromaSubsampling::Yuv420, 8).unwrap();
    let build = |gpu: Option<&Gpu>| {
        let mut b = ContextBuilder::new(format).feature("vif", Vec::new());
        if let Some(g) = gpu {
            b = b.gpu(g.clone());
        }
        b.build().err().expect("15x32 is refused").to_string()
    };
    assert_eq!(build(None), build(Some(&gpu)));
}
