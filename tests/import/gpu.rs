//! Device frames imported without a host copy: golden pairs written into
//! device memory in every decoder layout (planar, NV12/P010 and their 4:2:2,
//! 4:4:4 and 16-bit kin), submitted as frames with device events as
//! fences, scored bit for bit as the same pictures uploaded from the host.
//! Without a GPU each test records why it skipped (VMAFX_REQUIRE_GPU=1 fails instead).

use crate::common;

use common::gpu::*;
use common::Pair;
use std::time::Duration;
use vmafx::error::Error;
use vmafx::feature::options::parse_key_values;
use vmafx::gpu::pool::FramePool;
use vmafx::gpu::Gpu;
use vmafx::gpu::{Copy2d, CopySource};
use vmafx::import::pack::pack_plane;
use vmafx::import::DevicePtr;
use vmafx::import::{
    Acquire, Frame, FrameDesc, HostFence, Memory, PixelFormat, PlaneLayout, Release,
};
use vmafx::{
    ChromaSubsampling, ContextBuilder, FeatureScores, HostPicture, PictureFormat, PlaneId,
};

/// The features with a GPU version (every extractor reads device frames on
/// the device, so the set may hold no other).
const FEATURES: &[(&str, &str)] = &[("psnr", "enable_chroma=true"), ("motion", "debug=true")];

/// The same picture at another bit depth: samples shifted up (`shift > 0`)
/// or down, so both paths of a comparison read the same values.
fn rescale(p: &HostPicture, bit_depth: u8, shift: i32) -> HostPicture {
    let f = p.format();
    let format = PictureFormat::new(f.width, f.height, f.subsampling, bit_depth).unwrap();
    let mut out = HostPicture::new(format);
    for plane in PlaneId::ALL.into_iter().take(f.plane_count()) {
        let (w, h) = f.plane_size(plane);
        let src = p.plane(plane);
        let value = |x: usize, y: usize| -> u32 {
            let v = match &src {
                vmafx::picture::PlaneSamples::U8(s) => s.at(x, y) as u32,
                vmafx::picture::PlaneSamples::U16(s) => s.at(x, y) as u32,
            };
            if shift >= 0 {
                v << shift
            } else {
                v >> -shift
            }
        };
        if format.bytes_per_sample() == 1 {
            let stride = out.stride(plane);
            let dst = out.plane_u8_mut(plane);
            for y in 0..h {
                for x in 0..w {
                    dst[y * stride + x] = value(x, y) as u8;
                }
            }
        } else {
            let stride = out.stride(plane);
            let dst = out.plane_u16_mut(plane);
            for y in 0..h {
                for x in 0..w {
                    dst[y * stride + x] = value(x, y) as u16;
                }
            }
        }
    }
    out
}

/// Scores `refs`/`dists` as device frames in `layout` through a small pool;
/// checks nothing was copied from the host and every release fired.
fn device_scores(
    gpu: &Gpu,
    layout: PixelFormat,
    refs: &[HostPicture],
    dists: &[HostPicture],
) -> FeatureScores {
    let format = *refs[0].format();
    let pool = FramePool::new(gpu, format.width, format.height, layout, 4).unwrap();
    let producer = gpu.stream().unwrap();
    let mut ctx = builder(format, FEATURES, Some(gpu)).build().unwrap();
    let mut fences = Vec::new();
    for (r, d) in refs.iter().zip(dists) {
        let pair = [r, d].map(|p| {
            let frame = pool.take(Duration::from_secs(10)).unwrap();
            frame.write_from_host(&producer, p).unwrap();
            let written = gpu.event().unwrap();
            written.record(&producer).unwrap();
            let fence = HostFence::new();
            fences.push(fence.clone());
            let frame = frame
                .into_frame(
                    Acquire::DeviceEvent(written.as_raw()),
                    vec![Release::Host(fence)],
                )
                .unwrap();
            (frame, written)
        });
        ctx.submit_frames(&pair[0].0, &pair[1].0).unwrap();
    }
    let (counts, host_copies) = ctx.transfer_counts().unwrap();
    assert_eq!(host_copies, 0, "{layout}: planes copied from host memory");
    assert_eq!(
        counts.copies, 0,
        "{layout}: device copies without allow_device_copy"
    );
    let scores = ctx.finish().unwrap();
    assert!(
        fences.iter().all(HostFence::is_signalled),
        "{layout}: every frame released"
    );
    assert_eq!(
        pool.free_count(),
        pool.count(),
        "{layout}: every frame back in the pool"
    );
    println!("{layout}: {counts:?}");
    scores
}

fn check_layout(gpu: &Gpu, pair: &Pair, layout: PixelFormat, depth: Option<(u8, i32)>) {
    let (mut refs, mut dists) = (pair.reference(), pair.distorted_pictures());
    if let Some((bits, shift)) = depth {
        refs = refs.iter().map(|p| rescale(p, bits, shift)).collect();
        dists = dists.iter().map(|p| rescale(p, bits, shift)).collect();
    }
    let format = *refs[0].format();
    assert_eq!(
        layout.picture_format(format.width, format.height).unwrap(),
        format
    );
    let host = score_pictures(FEATURES, &refs, &dists, None);
    let device = device_scores(gpu, layout, &refs, &dists);
    assert_identical(&format!("{} as {layout}", pair.name()), &host, &device);
    println!(
        "{} as {layout}: {} frames bit-identical",
        pair.name(),
        host.frames.len()
    );
}

#[test]
fn every_layout_scores_as_a_host_upload() {
    let Some(gpu) = test_gpu() else { return };
    use ChromaSubsampling::*;
    let planar = |subsampling, bit_depth| PixelFormat::Planar {
        subsampling,
        bit_depth,
    };
    check_layout(
        &gpu,
        pair("a_576x324_420p8_pan/x264_crf30"),
        planar(Yuv420, 8),
        None,
    );
    check_layout(
        &gpu,
        pair("a_576x324_420p8_pan/x264_crf30"),
        PixelFormat::Nv12,
        None,
    );
    check_layout(&gpu, pair("e_321x179"), PixelFormat::Nv12, None);
    check_layout(&gpu, pair("b_1280x720"), PixelFormat::Nv12, None);
    let c = pair("c_576x324_420p10");
    check_layout(&gpu, c, planar(Yuv420, 10), None);
    check_layout(&gpu, c, PixelFormat::P010, None);
    check_layout(&gpu, c, PixelFormat::P016, Some((16, 6)));
    let d422 = pair("d_352x288_422p10");
    check_layout(&gpu, d422, PixelFormat::P210, None);
    check_layout(&gpu, d422, PixelFormat::P216, Some((16, 6)));
    check_layout(&gpu, d422, PixelFormat::Nv16, Some((8, -2)));
    let d444 = pair("d_352x288_444p8");
    check_layout(&gpu, d444, PixelFormat::Nv24, None);
    check_layout(&gpu, d444, PixelFormat::P410, Some((10, 2)));
    check_layout(&gpu, d444, PixelFormat::P416, Some((16, 8)));
}

/// A device frame at an address the kernels cannot read in place: refused
/// by default (naming the plane), copied on the device when allowed.
#[test]
fn unaligned_planes_are_refused_or_copied_when_allowed() {
    let Some(gpu) = test_gpu() else { return };
    let pair = pair("a_576x324_420p8_pan/x264_crf30");
    let (refs, dists) = (pair.reference(), pair.distorted_pictures());
    let format = pair.format();
    let layout = PixelFormat::Planar {
        subsampling: format.subsampling,
        bit_depth: 8,
    };
    // One buffer per picture, planes packed at odd offsets and pitch 577.
    let pitch = format.width as usize + 1;
    let frame_of = |p: &HostPicture, buffer: &vmafx::gpu::device::DeviceBuffer| {
        let stream = gpu.stream().unwrap();
        let mut layouts = Vec::new();
        let mut offset = 1usize;
        for i in 0..3 {
            let (row_bytes, rows) = layout.plane_extent(i, format.width, format.height);
            let bytes = pack_plane(p, layout, i, pitch);
            let copy = Copy2d {
                src: CopySource::Host(bytes.as_ptr()),
                src_pitch: pitch,
                dst: buffer.ptr() + offset as u64,
                dst_pitch: pitch,
                width_bytes: row_bytes,
                height: rows,
            };
            unsafe { stream.copy_2d(&copy).unwrap() };
            stream.synchronize().unwrap();
            layouts.push(PlaneLayout::new(offset as u64, pitch as u64));
            offset += pitch * rows;
        }
        let memory = Memory::Device(unsafe { DevicePtr::new(buffer.ptr(), buffer.len() as u64) });
        Frame::new(
            FrameDesc::new(format.width, format.height, layout, memory, &layouts),
            Acquire::None,
            vec![],
        )
        .unwrap()
    };
    let bytes = pitch * format.height as usize * 2 + 64;
    let (rb, db) = (gpu.buffer(bytes).unwrap(), gpu.buffer(bytes).unwrap());

    let mut strict = builder(format, FEATURES, Some(&gpu)).build().unwrap();
    let err = strict
        .submit_frames(&frame_of(&refs[0], &rb), &frame_of(&dists[0], &db))
        .unwrap_err();
    assert!(matches!(err, Error::Import { plane: Some(0), .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("device-pointer memory") && msg.contains("allow a device copy"),
        "{msg}"
    );
    println!("refused: {msg}");

    let mut copying = builder(format, FEATURES, Some(&gpu))
        .allow_device_copy(true)
        .build()
        .unwrap();
    // Fresh buffers per frame: the context may still read the last ones.
    let mut buffers = Vec::new();
    for (r, d) in refs.iter().zip(&dists) {
        let (rb, db) = (gpu.buffer(bytes).unwrap(), gpu.buffer(bytes).unwrap());
        copying
            .submit_frames(&frame_of(r, &rb), &frame_of(d, &db))
            .unwrap();
        buffers.push((rb, db));
    }
    let (counts, host_copies) = copying.transfer_counts().unwrap();
    let device = copying.finish().unwrap();
    assert_eq!(host_copies, 0);
    assert!(counts.copies > 0, "{counts:?}");
    let host = score_pictures(FEATURES, &refs, &dists, None);
    assert_identical("copied on the device", &host, &device);
}

/// A GPU context whose set has a CPU-only feature refuses device frames,
/// naming the feature, and releases them.
#[test]
fn device_frames_need_every_extractor_on_the_gpu() {
    let Some(gpu) = test_gpu() else { return };
    let format = PictureFormat::new(64, 32, ChromaSubsampling::Yuv420, 8).unwrap();
    let mut ctx = ContextBuilder::new(format)
        .feature("float_ansnr", parse_key_values("float_ansnr", "").unwrap())
        .gpu(gpu.clone())
        .build()
        .unwrap();
    let pool = FramePool::new(&gpu, 64, 32, PixelFormat::Nv12, 2).unwrap();
    let fence = HostFence::new();
    let frames = [0, 1].map(|_| {
        pool.take(Duration::ZERO)
            .unwrap()
            .into_frame(Acquire::None, vec![Release::Host(fence.clone())])
            .unwrap()
    });
    let err = ctx.submit_frames(&frames[0], &frames[1]).unwrap_err();
    assert!(err.to_string().contains("float_ansnr"), "{err}");
    drop(frames);
    assert!(fence.is_signalled());
    assert_eq!(pool.free_count(), 2);
}

/// Host-memory frames on a GPU context: each memory plane transferred once
/// by the device as it is (the split and shift run there), scored bit for
/// bit as the same pictures submitted as host pictures.
#[test]
fn host_memory_frames_are_transferred_plane_by_plane() {
    let Some(gpu) = test_gpu() else { return };
    for (needle, layout) in [
        ("a_576x324_420p8_pan/x264_crf30", PixelFormat::Nv12),
        ("c_576x324_420p10", PixelFormat::P010),
        (
            "e_321x179",
            PixelFormat::Planar {
                subsampling: ChromaSubsampling::Yuv420,
                bit_depth: 8,
            },
        ),
    ] {
        let pair = pair(needle);
        let (refs, dists) = (pair.reference(), pair.distorted_pictures());
        let format = pair.format();
        let mut ctx = builder(format, FEATURES, Some(&gpu)).build().unwrap();
        let mut fences = Vec::new();
        let mut buffers: Vec<Vec<u8>> = Vec::new();
        for (r, d) in refs.iter().zip(&dists) {
            let frames = [r, d].map(|p| {
                // The producer's buffer: planes packed with odd pitches.
                let mut bytes = Vec::new();
                let mut layouts = Vec::new();
                for i in 0..layout.memory_planes() {
                    let (row_bytes, _) = layout.plane_extent(i, format.width, format.height);
                    let pitch = row_bytes + 2 * layout.bytes_per_sample();
                    layouts.push(PlaneLayout::new(bytes.len() as u64, pitch as u64));
                    bytes.extend(pack_plane(p, layout, i, pitch));
                }
                // SAFETY: the buffer's heap block stays put (moved into
                // `buffers` below) and alive until after `finish`.
                let memory = Memory::Host(unsafe {
                    vmafx::import::HostMemory::new(
                        std::ptr::NonNull::new(bytes.as_mut_ptr()).unwrap(),
                        bytes.len(),
                    )
                });
                buffers.push(bytes);
                let fence = HostFence::new();
                fences.push(fence.clone());
                Frame::new(
                    FrameDesc::new(format.width, format.height, layout, memory, &layouts),
                    Acquire::None,
                    vec![Release::Host(fence)],
                )
                .unwrap()
            });
            ctx.submit_frames(&frames[0], &frames[1]).unwrap();
        }
        let (counts, host_planes) = ctx.transfer_counts().unwrap();
        let device = ctx.finish().unwrap();
        let planes = layout.memory_planes() as u64;
        assert_eq!(
            host_planes,
            refs.len() as u64 * 2 * planes,
            "{layout}: one transfer per plane"
        );
        assert!(fences.iter().all(HostFence::is_signalled));
        assert_identical(
            &format!("{} host memory as {layout}", pair.name()),
            &score_pictures(FEATURES, &refs, &dists, None),
            &device,
        );
        println!("{} host memory as {layout}: {} frames bit-identical, {host_planes} plane transfers, {counts:?}", pair.name(), refs.len());
    }
}

/// One device frame read by two GPU contexts is released only after the
/// last reader of the last context.
#[test]
fn a_frame_read_by_two_contexts_is_released_after_both() {
    let Some(gpu) = test_gpu() else { return };
    let pair = pair("a_576x324_420p8_pan/x264_crf18");
    let (refs, dists) = (pair.reference(), pair.distorted_pictures());
    let format = pair.format();
    let pool = FramePool::new(&gpu, format.width, format.height, PixelFormat::Nv12, 4).unwrap();
    let producer = gpu.stream().unwrap();
    let write = |p: &HostPicture, acquire: Acquire, releases: Vec<Release>| {
        let slot = pool.take(Duration::ZERO).unwrap();
        slot.write_from_host(&producer, p).unwrap();
        slot.into_frame(acquire, releases).unwrap()
    };
    // The shared pair, and a pair only the second context scores first,
    // held back by a host fence: the second context reads the shared pair
    // only after the test opens that gate (frames are scored in order), so
    // it is still reading when the first context finishes, however fast
    // the device.
    let fence = HostFence::new();
    let shared =
        [&refs[0], &dists[0]].map(|p| write(p, Acquire::None, vec![Release::Host(fence.clone())]));
    let gate = HostFence::new();
    let held = [&refs[0], &dists[0]].map(|p| write(p, Acquire::Host(gate.clone()), vec![]));
    let mut first = builder(format, FEATURES, Some(&gpu)).build().unwrap();
    let mut second = builder(format, FEATURES, Some(&gpu)).build().unwrap();
    first.submit_frames(&shared[0], &shared[1]).unwrap();
    second.submit_frames(&held[0], &held[1]).unwrap();
    second.submit_frames(&shared[0], &shared[1]).unwrap();
    drop((shared, held));
    let a = first.finish().unwrap();
    assert!(
        !fence.is_signalled(),
        "released while the second context has not read the frames"
    );
    assert_eq!(pool.free_count(), 0);
    gate.signal();
    let b = second.finish().unwrap();
    assert!(fence.is_signalled());
    assert_eq!(pool.free_count(), 4);
    assert_identical(
        "first context against host upload",
        &score_pictures(FEATURES, &refs[..1], &dists[..1], None),
        &a,
    );
    let twice = |p: &HostPicture| vec![p.clone(), p.clone()];
    assert_identical(
        "second context against host upload",
        &score_pictures(FEATURES, &twice(&refs[0]), &twice(&dists[0]), None),
        &b,
    );
    println!("one frame pair, two GPU contexts: released after both, scores identical");
}

/// cudarc device buffers as frames with no `unsafe`: each written on a
/// producer stream of cudarc's, taken by its frame, scored in place as the
/// same pictures uploaded from the host, and handed back once read.
#[test]
fn cudarc_buffers_are_frames_without_unsafe_and_come_back_once_read() {
    if cuda_specific("cudarc device buffers as frames") {
        return;
    }
    let Some(gpu) = test_gpu() else { return };
    let cuda = cudarc::driver::CudaContext::new(0).unwrap();
    let producer = cuda.new_stream().unwrap();
    let pair = pair("a_576x324_420p8_pan/x264_crf30");
    let (refs, dists) = (pair.reference(), pair.distorted_pictures());
    let format = *refs[0].format();
    // Rows 768 bytes apart: addresses and pitches the kernels read in place.
    const PITCH: usize = 768;
    let (_, ch) = format.plane_size(PlaneId::Cb);
    let h = format.height as usize;
    let planes = [
        PlaneLayout::new(0, PITCH as u64),
        PlaneLayout::new((h * PITCH) as u64, PITCH as u64),
        PlaneLayout::new(((h + ch) * PITCH) as u64, PITCH as u64),
    ];
    let padded = |p: &HostPicture| -> Vec<u8> {
        let mut bytes = vec![0u8; (h + 2 * ch) * PITCH];
        let mut row = 0;
        for plane in PlaneId::ALL {
            let src = p.plane_u8(plane);
            let (w, rows) = (src.width, src.height);
            for y in 0..rows {
                bytes[(row + y) * PITCH..][..w].copy_from_slice(src.row(y));
            }
            row += rows;
        }
        bytes
    };
    let (back, returned) = std::sync::mpsc::channel();
    let mut ctx = builder(format, FEATURES, Some(&gpu)).build().unwrap();
    for (r, d) in refs.iter().zip(&dists) {
        let [r, d] = [r, d].map(|p| {
            let buffer = producer.clone_htod(&padded(p)).unwrap();
            let back = back.clone();
            let layout = PixelFormat::Planar {
                subsampling: ChromaSubsampling::Yuv420,
                bit_depth: 8,
            };
            Frame::from_cuda_slice(
                &gpu,
                format.width,
                format.height,
                layout,
                &planes,
                buffer,
                move |b| back.send(b.len()).unwrap(),
            )
            .unwrap()
        });
        ctx.submit_frames(&r, &d).unwrap();
    }
    let (counts, host_copies) = ctx.transfer_counts().unwrap();
    assert_eq!((host_copies, counts.copies), (0, 0), "read in place");
    let device = ctx.finish().unwrap();
    let host = score_pictures(FEATURES, &refs, &dists, None);
    assert_identical("cudarc buffers", &host, &device);
    drop(back);
    let lens: Vec<usize> = returned.iter().collect();
    assert_eq!(lens.len(), 2 * refs.len(), "every buffer handed back");
    assert!(lens.iter().all(|&n| n == (h + 2 * ch) * PITCH));
}
