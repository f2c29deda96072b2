//! GPU extractors against the CPU ones: same feature names, same order,
//! bit-identical per-frame values, on the golden pairs. Without a GPU each
//! test records why it skipped (VMAFX_REQUIRE_GPU=1 fails instead).

use crate::common;

use common::gpu::*;
use common::{Pair, PAIRS};
use vmafx::feature::options::parse_key_values;
use vmafx::gpu::{self, cuda, DeviceSelector, GpuBackend};
use vmafx::{ContextBuilder, HostPicture};

#[test]
fn psnr_matches_cpu_bit_for_bit() {
    let Some(gpu) = test_gpu() else { return };
    check_all_pairs(&gpu, &[("psnr", "")], 1);
    check_all_pairs(&gpu, &[("psnr", "enable_mse=true:enable_apsnr=true")], 3);
}

#[test]
fn motion_matches_cpu_bit_for_bit() {
    let Some(gpu) = test_gpu() else { return };
    check_all_pairs(&gpu, &[("motion", "debug=true")], 1);
    check_all_pairs(
        &gpu,
        &[(
            "motion",
            "motion_five_frame_window=true:motion_moving_average=true",
        )],
        3,
    );
}

/// `motion_v2` alone and beside `motion` (one instance writing both name
/// sets from one SAD, as on the CPU), plus a five-frame `motion` window that
/// cannot share it: every golden pair, bit for bit.
#[test]
fn motion_v2_matches_cpu_bit_for_bit() {
    let Some(gpu) = test_gpu() else { return };
    check_all_pairs(&gpu, &[("motion_v2", "")], 1);
    check_all_pairs(
        &gpu,
        &[
            ("motion", "debug=true"),
            ("motion_v2", "motion_moving_average=true"),
        ],
        1,
    );
    check_all_pairs(
        &gpu,
        &[
            ("motion_v2", ""),
            ("motion", "motion_five_frame_window=true"),
        ],
        3,
    );
}

#[test]
fn gpu_and_cpu_extractors_mix() {
    let Some(gpu) = test_gpu() else { return };
    // float_ansnr has no GPU version: it runs on the host beside the GPU
    // ones, inline or on worker threads.
    let features = [
        ("motion", ""),
        ("float_psnr", ""),
        ("psnr", "enable_chroma=false:enable_apsnr=true"),
        ("float_ansnr", ""),
    ];
    for pair in &PAIRS[..2] {
        let cpu = score(pair, &features, 1, None);
        for threads in [1, 3] {
            let on_gpu = score_threads(pair, &features, 2, Some(&gpu), threads);
            let cpu_sub = score(pair, &features, 2, None);
            assert_identical(
                &format!("{} threads {threads}", pair.name()),
                &cpu_sub,
                &on_gpu,
            );
        }
        let on_gpu = score(pair, &features, 1, Some(&gpu));
        assert_identical(&pair.name(), &cpu, &on_gpu);
        println!(
            "{}: GPU + host extractors (inline and 3 threads) bit-identical",
            pair.name()
        );
    }
}

/// Host pictures are the caller's again once `submit` returns: pictures
/// overwritten right after each submit ([`score_cycled`]) score as on the
/// CPU.
#[test]
fn host_pictures_reused_right_after_submit() {
    let Some(gpu) = test_gpu() else { return };
    let p = pair("a_576x324_420p8_pan/x264_crf30");
    // Every GPU extractor that is bit-identical to the CPU (ciede differs
    // in its last bits, the float VIF/ADM/SSIM family in its sums' order).
    let features = [
        ("psnr", "enable_apsnr=true"),
        ("motion", "debug=true"),
        ("vif", "debug=true"),
        ("adm", "debug=true"),
        ("float_psnr", ""),
        ("float_moment", ""),
        ("psnr_hvs", ""),
        ("cambi", "full_ref=true"),
        ("speed_chroma", ""),
        ("speed_temporal", ""),
    ];
    let cpu = score_cycled(p, &features, None, true);
    let on_gpu = score_cycled(p, &features, Some(&gpu), true);
    assert_identical(
        "200 frames, pictures overwritten after submit",
        &cpu,
        &on_gpu,
    );
    println!(
        "{}: 200 frames (cycled), pictures overwritten right after submit: bit-identical",
        p.name()
    );
}

/// Pictures from the context's pool are pinned and read by the upload
/// where they are: given back only once that copy is done (pool pictures
/// scribbled on right after each submit change nothing), and reused.
#[test]
fn pool_pictures_read_in_place_score_as_on_the_cpu() {
    let Some(gpu) = test_gpu() else { return };
    let features = [
        ("psnr", "enable_apsnr=true"),
        ("motion", "debug=true"),
        ("vif", "debug=true"),
        ("adm", "debug=true"),
        ("float_ansnr", ""),
    ];
    for name in [
        "a_576x324_420p8_pan/x264_crf30",
        "c_576x324_420p10_zoom/x265_main10_crf30",
    ] {
        let p = pair(name);
        let cpu = score_cycled(p, &features, None, false);
        let (on_gpu, idle) = score_cycled_from_pool(p, &features, Some(&gpu));
        assert_identical(&format!("{name}: 200 pool pictures"), &cpu, &on_gpu);
        assert!(idle > 0, "{name}: no picture memory came back to the pool");
        println!(
            "{name}: 200 frames from the pool, read in place: bit-identical; {idle} buffers idle"
        );
    }
}

/// Two contexts one after the other on one device, the second with larger
/// pictures, then the first size again: device memory is recycled, and
/// each is right from its first frame (no stale sums or planes).
#[test]
fn successive_contexts_of_different_sizes() {
    let Some(gpu) = test_gpu() else { return };
    let features = [
        ("psnr", "enable_mse=true"),
        ("motion", "debug=true"),
        ("vif", ""),
        ("adm", ""),
        ("float_psnr", ""),
        ("float_moment", ""),
        ("psnr_hvs", ""),
        ("cambi", ""),
        ("speed_chroma", ""),
        ("speed_temporal", ""),
    ];
    for p in [
        pair("a_576x324_420p8_pan/x264_crf42"),
        pair("b_1280x720_420p8_zoom"),
        pair("a_576x324_420p8_pan/x264_crf18"),
    ] {
        let cpu = score(p, &features, 1, None);
        let on_gpu = score(p, &features, 1, Some(&gpu));
        assert_identical(&p.name(), &cpu, &on_gpu);
        println!(
            "{}: a fresh context on a used device, bit-identical",
            p.name()
        );
    }
    // Two contexts alive at once, interleaved frame by frame.
    let (small, large) = (
        pair("a_576x324_420p8_pan/x264_crf30"),
        pair("b_1280x720_420p8_zoom"),
    );
    let build = |p: &Pair| {
        let mut b = ContextBuilder::new(p.format()).gpu(gpu.clone());
        for (name, opts) in features {
            b = b.feature(name, parse_key_values(name, opts).unwrap());
        }
        b.build().unwrap()
    };
    let (mut a, mut b) = (build(small), build(large));
    let (ar, ad) = (small.reference(), small.distorted_pictures());
    let (br, bd) = (large.reference(), large.distorted_pictures());
    for i in 0..ar.len().max(br.len()) {
        if i < ar.len() {
            a.submit(ar[i].clone(), ad[i].clone()).unwrap();
        }
        if i < br.len() {
            b.submit(br[i].clone(), bd[i].clone()).unwrap();
        }
    }
    assert_identical(
        &small.name(),
        &score(small, &features, 1, None),
        &a.finish().unwrap(),
    );
    assert_identical(
        &large.name(),
        &score(large, &features, 1, None),
        &b.finish().unwrap(),
    );
    println!("two live contexts (576x324 and 1280x720) interleaved: both bit-identical");
}

/// The extractors that agree with the CPU within a tolerance (the float
/// family and ciede) are deterministic on the GPU, so the upload race and
/// the rising sizes are checked on their bits: pictures overwritten right
/// after submit give the same bits as pictures left alone, and a context
/// after a larger one the same bits as before it; both stay within 1e-5 of
/// the CPU.
#[test]
fn float_extractors_survive_reused_pictures_and_other_sizes() {
    let Some(gpu) = test_gpu() else { return };
    let features = [
        ("float_vif", "debug=true"),
        ("float_adm", "debug=true"),
        ("float_motion", "debug=true"),
        ("float_ssim", "enable_lcs=true"),
        ("float_ms_ssim", ""),
        ("ciede", ""),
    ];
    let p = pair("a_576x324_420p8_pan/x264_crf30");
    let cpu = score_cycled(p, &features, None, false);
    let left_alone = score_cycled(p, &features, Some(&gpu), false);
    let overwritten = score_cycled(p, &features, Some(&gpu), true);
    assert_identical(
        "200 frames, pictures overwritten after submit",
        &left_alone,
        &overwritten,
    );
    assert_close_scores("200 frames on the GPU", &cpu, &left_alone, 1e-5);
    println!(
        "{}: 200 frames, pictures overwritten after submit: same bits as left alone, within 1e-5 of the CPU",
        p.name()
    );

    let small = score(p, &features, 1, Some(&gpu));
    let large = pair("b_1280x720_420p8_zoom");
    assert_close_scores(
        &large.name(),
        &score(large, &features, 1, None),
        &score(large, &features, 1, Some(&gpu)),
        1e-5,
    );
    let again = score(p, &features, 1, Some(&gpu));
    assert_identical("the small pair after the large one", &small, &again);
    println!(
        "{} after {}: same bits as before it",
        p.name(),
        large.name()
    );
}

#[test]
fn missing_runtimes_are_named() {
    if !cuda::driver_present() {
        let e = gpu::open(GpuBackend::Cuda, &DeviceSelector::default()).unwrap_err();
        println!("as expected without libcuda: {e}");
        assert!(e.to_string().contains("libcuda"), "{e}");
    } else {
        println!(
            "not applicable: libcuda is present, the missing-runtime error cannot be seen here"
        );
    }
    if !gpu::hip::runtime_present() {
        let e = gpu::open(GpuBackend::Hip, &DeviceSelector::default()).unwrap_err();
        println!("as expected without ROCm: {e}");
        assert!(e.to_string().contains("libamdhip64"), "{e}");
    }
}

#[test]
fn devices_are_selected_by_uuid() {
    let Some(gpu) = test_gpu() else { return };
    let described = gpu.describe();
    let uuid = described
        .split(", ")
        .find(|s| s.starts_with("GPU-"))
        .unwrap()
        .to_string();
    let again = gpu::open(test_backend(), &DeviceSelector::parse(&uuid).unwrap()).unwrap();
    assert_eq!(again.describe(), described);
    let none = gpu::open(test_backend(), &DeviceSelector::Index(999)).unwrap_err();
    println!("{none}");
}

#[test]
fn device_layer_copies_streams_and_events() {
    use vmafx::gpu::{Copy2d, CopySource as Memory};
    let Some(gpu) = test_gpu() else { return };
    // A 37x5 "plane" with a host pitch of 40, uploaded to a device pitch of
    // 256, copied device to device into a tight buffer on a second stream
    // that waits for the first through an event, then read back.
    let (w, h, host_pitch, dev_pitch) = (37usize, 5usize, 40usize, 256usize);
    let mut host = gpu.pinned(host_pitch * h).unwrap();
    for (i, b) in host.as_mut_slice().iter_mut().enumerate() {
        *b = (i * 7 % 251) as u8;
    }
    let pitched = gpu.buffer(dev_pitch * h).unwrap();
    let tight = gpu.buffer(w * h).unwrap();
    let mut back = gpu.pinned(w * h).unwrap();
    let (upload, work) = (gpu.stream().unwrap(), gpu.stream().unwrap());
    let (uploaded, done) = (gpu.event().unwrap(), gpu.event().unwrap());
    unsafe {
        upload
            .copy_2d(&Copy2d {
                src: Memory::Host(host.as_ptr()),
                src_pitch: host_pitch,
                dst: pitched.ptr(),
                dst_pitch: dev_pitch,
                width_bytes: w,
                height: h,
            })
            .unwrap();
        uploaded.record(&upload).unwrap();
        work.wait(&uploaded).unwrap();
        work.copy_2d(&Copy2d {
            src: Memory::Device(pitched.ptr()),
            src_pitch: dev_pitch,
            dst: tight.ptr(),
            dst_pitch: w,
            width_bytes: w,
            height: h,
        })
        .unwrap();
        work.copy_to_pinned(&mut back, &tight).unwrap();
    }
    done.record(&work).unwrap();
    while !done.is_done().unwrap() {
        std::thread::yield_now();
    }
    let expected: Vec<u8> = (0..h)
        .flat_map(|y| host.as_slice()[y * host_pitch..y * host_pitch + w].to_vec())
        .collect();
    assert_eq!(back.as_slice(), &expected[..]);
    println!(
        "2D upload, device-to-device copy across streams (event wait) and readback: {} bytes match",
        w * h
    );
}

/// `--backend auto` scores on a GPU when there is one, else says once why
/// it falls back and scores on the CPU; the report is the CPU's either way.
#[test]
fn cli_backend_auto_falls_back_or_matches_cpu() {
    let root = std::env::var_os("VMAFX_TEST_ROOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
    let data = root.join("examples/data");
    if !data.join("ref_576x324.y4m").exists() {
        vmafx::testing::skip(
            vmafx::testing::REQUIRE_GPU,
            format_args!("{} not found", data.display()),
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = |backend: &str| {
        let out = dir.path().join(format!("{backend}.json"));
        // VMAFX_BIN: the binary carried next to this test to another machine.
        let bin =
            std::env::var_os("VMAFX_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_vmafx").into());
        let o = std::process::Command::new(bin)
            .arg("-r")
            .arg(data.join("ref_576x324.y4m"))
            .arg("-d")
            .arg(data.join("dist_576x324_x264_crf30.y4m"))
            .args([
                "--frame_cnt",
                "8",
                "--no_prediction",
                "--feature",
                "psnr",
                "--feature",
                "motion",
            ])
            .args(["--json", "--precision", "max", "--backend", backend, "-o"])
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "--backend {backend}: {stderr}");
        // Drop the timing line: everything else must be identical.
        let report: String = std::fs::read_to_string(&out)
            .unwrap()
            .lines()
            .filter(|l| !l.trim_start().starts_with("\"fps\""))
            .collect();
        (report, stderr)
    };
    let (cpu, _) = run("cpu");
    let (auto, stderr) = run("auto");
    println!("--backend auto said: {}", stderr.trim());
    assert_eq!(
        cpu, auto,
        "--backend auto report differs from --backend cpu"
    );
    if cuda::driver_present() || gpu::hip::runtime_present() {
        assert!(stderr.contains("scoring on"), "{stderr}");
    } else {
        assert_eq!(stderr.matches("scoring on the CPU").count(), 1, "{stderr}");
        assert!(
            stderr.contains("libcuda") && stderr.contains("libamdhip64"),
            "{stderr}"
        );
    }
}

/// A producer's own CUDA context (not the primary one) lent to vmafx: the
/// scores are the CPU's, and the context is still the producer's after the
/// Gpu is dropped (it stays current-able and is destroyed by the producer).
#[test]
fn producer_context_is_used_instead_of_ours() {
    use cudarc::driver::sys as cu;
    if cuda_specific("a producer's own CUDA context") || test_gpu().is_none() {
        return;
    }
    let pair = &PAIRS[6];
    // SAFETY: plain driver API calls; the context outlives `gpu` below.
    unsafe {
        let mut device = 0;
        assert_eq!(cu::cuDeviceGet(&mut device, 0), cu::CUresult::CUDA_SUCCESS);
        let mut context = std::ptr::null_mut();
        assert_eq!(
            cu::cuCtxCreate_v4(&mut context, std::ptr::null_mut(), 0, device),
            cu::CUresult::CUDA_SUCCESS
        );
        let mut popped = std::ptr::null_mut();
        cu::cuCtxPopCurrent_v2(&mut popped);
        {
            let gpu = gpu::open_cuda_context(context as *mut std::ffi::c_void).unwrap();
            println!("running in a producer context on {}", gpu.describe());
            let features = [("psnr", "enable_apsnr=true"), ("motion", "debug=true")];
            let on_gpu = score(pair, &features, 1, Some(&gpu));
            let on_cpu = score(pair, &features, 1, None);
            assert_identical(
                &format!("{} (producer context)", pair.name()),
                &on_cpu,
                &on_gpu,
            );
        }
        // Still the producer's: it can be made current and destroyed.
        assert_eq!(cu::cuCtxPushCurrent_v2(context), cu::CUresult::CUDA_SUCCESS);
        cu::cuCtxPopCurrent_v2(&mut popped);
        assert_eq!(cu::cuCtxDestroy_v2(context), cu::CUresult::CUDA_SUCCESS);
    }
}

#[test]
fn null_producer_context_is_refused() {
    // SAFETY: a null context is checked before use.
    let e = unsafe { gpu::open_cuda_context(std::ptr::null_mut()) }
        .err()
        .unwrap();
    let text = e.to_string();
    assert!(text.contains("libcuda") || text.contains("null"), "{text}");
}

/// Borrowed pictures refilled for every frame (`submit_borrowed`) score as
/// fresh owned pictures on the GPU engine: staging has copied them before
/// the call returns.
#[test]
fn borrowed_pictures_refilled_every_frame() {
    let Some(gpu) = test_gpu() else { return };
    let p = pair("a_576x324_420p8_pan/x264_crf30");
    let (refs, dists) = (p.reference(), p.distorted_pictures());
    let features = [("psnr", ""), ("motion", ""), ("vif", ""), ("adm", "")];
    let build = || {
        let mut b = ContextBuilder::new(p.format()).gpu(gpu.clone());
        for (name, opts) in features {
            b = b.feature(name, parse_key_values(name, opts).unwrap());
        }
        b.build().unwrap()
    };
    let cpu = score(p, &features, 1, None);
    let mut ctx = build();
    let (mut r, mut d) = (HostPicture::new(p.format()), HostPicture::new(p.format()));
    for (rs, ds) in refs.iter().zip(&dists) {
        r.clone_from(rs);
        d.clone_from(ds);
        ctx.submit_borrowed(&r, &d).unwrap();
    }
    assert_identical("borrowed pictures", &cpu, &ctx.finish().unwrap());
    println!(
        "{}: borrowed pictures refilled every frame: bit-identical",
        p.name()
    );
}
