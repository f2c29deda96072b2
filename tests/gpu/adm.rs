//! The GPU `adm` against the CPU one: same feature names and order,
//! bit-identical per-frame values, on every golden pair (the 321x179 pair
//! exercises libvmaf's AVX-512 edge-column quirk) and with the options the
//! models set. Also times the kernels alone at 1080p and 2160p. Without a
//! GPU each test records why it skipped (VMAFX_REQUIRE_GPU=1 fails instead).

use crate::common;

use common::gpu::*;
use common::Pair;
use vmafx::feature::options::parse_key_values;
use vmafx::feature::{find, FeatureSink, Options};
use vmafx::gpu::feature::create;
use vmafx::gpu::Gpu;
use vmafx::testing::gpu::{PairPlanes, SharedPlanes};
use vmafx::{ChromaSubsampling, HostPicture, PictureFormat, PlaneId, PlaneMask};

#[test]
fn default_and_debug_outputs_match_cpu() {
    let Some(gpu) = test_gpu() else { return };
    check_all_pairs(&gpu, &[("adm", "")], 1);
    check_all_pairs(&gpu, &[("adm", "debug=true")], 1);
}

#[test]
fn neg_model_options_match_cpu() {
    let Some(gpu) = test_gpu() else { return };
    // The vmaf_v0.6.1neg model's ADM: no enhancement gain.
    check_all_pairs(&gpu, &[("adm", "adm_enhn_gain_limit=1.0:debug=true")], 1);
}

#[test]
fn csf_viewing_and_skip_options_match_cpu() {
    let Some(gpu) = test_gpu() else { return };
    // The v1.0.16 models' ADM (blended CSF, several viewing conditions),
    // the MAE blend, and the options that drop work.
    let v1_0_16 = "adm_csf_mode=2:adm_dlm_weight=0.7:adm_enhn_gain_limit=1.0:adm_min_val=0.5:adm_noise_weight=0.02";
    let sets = [
        format!("{v1_0_16}:debug=true"),
        format!("{v1_0_16}:adm_norm_view_dist=1.5:adm_ref_display_height=2160"),
        "adm_csf_mode=3:adm_norm_view_dist=5.0".to_string(),
        "adm_skip_scale0=true:debug=true".to_string(),
        "adm_skip_aim=true:adm_noise_weight=0.5".to_string(),
    ];
    for pair in [
        pair("e_321x179"),
        pair("c_576x324_420p10"),
        pair("d_352x288_422p10"),
    ] {
        for options in &sets {
            check_pair(&gpu, pair, options, 1);
        }
    }
}

#[test]
fn subsampled_frames_match_cpu() {
    let Some(gpu) = test_gpu() else { return };
    check_pair(&gpu, pair("b_1280x720"), "debug=true", 3);
    check_pair(&gpu, pair("e_321x179"), "", 3);
}

fn check_pair(gpu: &Gpu, pair: &Pair, options: &str, subsample: u32) {
    let features = [("adm", options)];
    let what = format!("{} [{options}] subsample {subsample}", pair.name());
    let cpu = score(pair, &features, subsample, None);
    let on_gpu = score(pair, &features, subsample, Some(gpu));
    assert_identical(&what, &cpu, &on_gpu);
    println!("{what}: {} frames bit-identical", cpu.frames.len());
}

/// Nearest-neighbour scaling of an 8-bit luma plane to `format` (4:0:0,
/// 8 or 10 bits).
fn scale_luma(src: &HostPicture, format: PictureFormat) -> HostPicture {
    let mut dst = HostPicture::new(format);
    let s = src.plane_u8(PlaneId::Y);
    let (dw, dh) = (format.width as usize, format.height as usize);
    let stride = dst.stride(PlaneId::Y);
    let at = |x: usize, y: usize| s.row(y * s.height / dh)[x * s.width / dw];
    if format.bit_depth == 8 {
        let out = dst.plane_u8_mut(PlaneId::Y);
        for y in 0..dh {
            for (x, o) in out[y * stride..y * stride + dw].iter_mut().enumerate() {
                *o = at(x, y);
            }
        }
    } else {
        let out = dst.plane_u16_mut(PlaneId::Y);
        for y in 0..dh {
            for (x, o) in out[y * stride..y * stride + dw].iter_mut().enumerate() {
                *o = (at(x, y) as u16) << (format.bit_depth - 8);
            }
        }
    }
    dst
}

/// The adm kernels alone at 1080p and 2160p (8 and 10 bits, with the
/// options that change their work): the frame's values are the CPU's.
/// Kernel times: `gpu_bench --extractors adm,adm/adm_skip_scale0=true`.
#[test]
fn bit_identical_at_1080p_and_2160p() {
    let Some(gpu) = test_gpu() else { return };
    let source = pair("a_576x324_420p8_pan/x264_crf30");
    let (r0, d0) = (&source.reference()[5], &source.distorted_pictures()[5]);
    let info = find("adm").unwrap();
    for (w, h, depth) in [(1920, 1080, 8), (3840, 2160, 8), (3840, 2160, 10)] {
        let format = PictureFormat::new(w, h, ChromaSubsampling::Yuv400, depth).unwrap();
        let (r, d) = (scale_luma(r0, format), scale_luma(d0, format));
        for options in [
            "",
            "adm_enhn_gain_limit=1.0:debug=true",
            "adm_skip_scale0=true",
        ] {
            let raw = parse_key_values("adm", options).unwrap();
            let opts = Options::resolve("adm", info.options, &raw).unwrap();

            let mut cpu = (info.create)(&opts, &format).unwrap();
            let mut expected = FeatureSink::new();
            cpu.extract(
                &vmafx::feature::FrameInput {
                    index: 0,
                    reference: &r,
                    distorted: &d,
                },
                &mut expected,
            )
            .unwrap();

            let mut x = create("adm", &opts, &format, &gpu).unwrap().unwrap();
            let stream = gpu.stream().unwrap();
            let mut planes =
                SharedPlanes::new(&gpu, format, PairPlanes::both(PlaneMask::LUMA)).unwrap();
            let frame = planes.upload(&gpu, &stream, &r, &d).unwrap();
            let mut sink = FeatureSink::new();
            x.enqueue(0, &frame, &stream).unwrap();
            x.complete(&mut sink).unwrap();
            let got: Vec<_> = sink.values().iter().map(|v| (v.1.clone(), v.2)).collect();
            let want: Vec<_> = expected
                .values()
                .iter()
                .map(|v| (v.1.clone(), v.2))
                .collect();
            assert_eq!(got.len(), want.len(), "{w}x{h} [{options}]");
            for ((gn, g), (wn, e)) in got.iter().zip(&want) {
                assert_eq!(gn, wn);
                assert_eq!(
                    g.to_bits(),
                    e.to_bits(),
                    "{w}x{h} [{options}] {gn}: GPU {g:.17e} CPU {e:.17e}"
                );
            }
            println!("adm {w}x{h} {depth}-bit [{options}]: bit-identical to the CPU");
        }
    }
}

#[test]
fn adm_beside_other_extractors_matches_cpu() {
    let Some(gpu) = test_gpu() else { return };
    // The vmaf_v0.6.1 features: adm and motion on the device, vif on the
    // host (inline or on worker threads) at the same time.
    let features = [("adm", ""), ("motion", "debug=true"), ("vif", "")];
    for pair in [pair("e_321x179"), pair("a_576x324_420p8_pan/x264_crf18")] {
        let cpu = score(pair, &features, 1, None);
        for threads in [1, 3] {
            let on_gpu = score_threads(pair, &features, 1, Some(&gpu), threads);
            assert_identical(&format!("{} threads {threads}", pair.name()), &cpu, &on_gpu);
        }
        println!(
            "{}: adm + motion (GPU) beside vif (host): bit-identical",
            pair.name()
        );
    }
}
