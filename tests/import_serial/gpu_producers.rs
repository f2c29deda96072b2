//! Frames from real producers on the device, scored as frames: Vulkan
//! allocations exported as opaque fds with timeline semaphores as acquire
//! and release, GL textures of an EGL context, a refused dma-buf, and a soak
//! through a small frame pool that must leak nothing. Each compares with
//! the same pictures uploaded from the host. Without a GPU (or without the
//! Vulkan/EGL loaders) each test records why it skipped (VMAFX_REQUIRE_GPU=1 fails instead).

use crate::common;
use crate::producers;

use common::gpu::*;
use producers::gl::Gl;
use producers::vulkan::Vulkan;
use std::time::Duration;
use vmafx::error::Error;
use vmafx::gpu::pool::FramePool;
use vmafx::gpu::Gpu;
use vmafx::import::pack::pack_plane;
use vmafx::import::{
    Acquire, Frame, FrameDesc, HostFence, Memory, PixelFormat, PlaneLayout, Release,
};
use vmafx::import::{GlTexture, VulkanMemoryFd};
use vmafx::{HostPicture, PictureFormat};

const FEATURES: &[(&str, &str)] = &[("psnr", "enable_chroma=true"), ("motion", ""), ("vif", "")];

/// Planes of `layout` packed one after the other, each at a 256-byte
/// aligned offset with a 256-byte aligned pitch: the bytes and layouts.
fn packed(p: &HostPicture, layout: PixelFormat) -> (Vec<u8>, Vec<PlaneLayout>) {
    let f = p.format();
    let (mut bytes, mut layouts) = (Vec::new(), Vec::new());
    for plane in 0..layout.memory_planes() {
        let (row_bytes, _) = layout.plane_extent(plane, f.width, f.height);
        let pitch = row_bytes.div_ceil(256) * 256;
        bytes.resize(bytes.len().div_ceil(256) * 256, 0);
        layouts.push(PlaneLayout::new(bytes.len() as u64, pitch as u64));
        bytes.extend(pack_plane(p, layout, plane, pitch));
    }
    (bytes, layouts)
}

fn vulkan(gpu: &Gpu) -> Option<Vulkan> {
    match Vulkan::new(Some(gpu.uuid())) {
        Ok(v) => Some(v),
        Err(e) => {
            vmafx::testing::skip(
                vmafx::testing::REQUIRE_GPU,
                format_args!("no Vulkan device matching the GPU ({e})"),
            );
            None
        }
    }
}

/// `p` as NV12 in an exportable Vulkan allocation, acquired by `written`
/// (a timeline at `acquire`, or a binary semaphore for `None`) and released
/// by signalling `value` on the timeline `read`.
fn vulkan_nv12_frame(
    vk: &Vulkan,
    p: &HostPicture,
    written: ash::vk::Semaphore,
    acquire: Option<u64>,
    read: ash::vk::Semaphore,
    value: u64,
) -> (Frame, producers::vulkan::ExportedBuffer) {
    let format = p.format();
    let (bytes, layouts) = packed(p, PixelFormat::Nv12);
    let buffer = vk.exportable_buffer(bytes.len() as u64, true).unwrap();
    vk.fill(&buffer, &bytes).unwrap();
    let memory = Memory::VulkanFd(unsafe {
        VulkanMemoryFd::new(
            vk.memory_fd(&buffer).unwrap(),
            buffer.allocation_size,
            buffer.dedicated,
        )
    });
    let desc = FrameDesc::new(
        format.width,
        format.height,
        PixelFormat::Nv12,
        memory,
        &layouts,
    );
    let frame = Frame::new(
        desc,
        Acquire::VulkanSemaphoreFd {
            fd: vk.semaphore_fd(written).unwrap(),
            value: acquire,
        },
        vec![Release::VulkanSemaphoreFd {
            fd: vk.semaphore_fd(read).unwrap(),
            value: Some(value),
        }],
    )
    .unwrap();
    (frame, buffer)
}

/// A renderer that signals a binary semaphore per frame (queued before the
/// frame is submitted, as Vulkan requires of binary semaphores): each is
/// imported and waited on the library stream; the scores are the host
/// upload's.
#[test]
fn vulkan_frames_with_binary_acquire_semaphores() {
    let _alone = crate::one_at_a_time();
    let Some(gpu) = test_gpu() else { return };
    let Some(vk) = vulkan(&gpu) else { return };
    let pair = pair("a_576x324_420p8_pan/x264_crf30");
    let (refs, dists) = (pair.reference(), pair.distorted_pictures());
    let read = [vk.semaphore(true).unwrap(), vk.semaphore(true).unwrap()];
    let mut ctx = builder(pair.format(), FEATURES, Some(&gpu))
        .build()
        .unwrap();
    let (mut buffers, mut acquires) = (Vec::new(), Vec::new());
    for (i, (r, d)) in refs.iter().zip(&dists).enumerate() {
        let value = i as u64 + 1;
        let frames = [(r, read[0]), (d, read[1])].map(|(p, read)| {
            let written = vk.semaphore(false).unwrap();
            vk.queue_signal(written).unwrap();
            let (frame, buffer) = vulkan_nv12_frame(&vk, p, written, None, read, value);
            buffers.push(buffer);
            acquires.push(written);
            frame
        });
        ctx.submit_frames(&frames[0], &frames[1]).unwrap();
    }
    let device = ctx.finish().unwrap();
    let last = refs.len() as u64;
    for r in read {
        assert!(
            vk.wait_value(r, last, 5000),
            "release timeline at {}",
            vk.counter(r).unwrap()
        );
    }
    assert_identical(
        "Vulkan NV12 frames, binary acquire",
        &score_pictures(FEATURES, &refs, &dists, None),
        &device,
    );
    println!("Vulkan NV12 frames with binary acquire semaphores: {last} bit-identical");
    for b in buffers {
        vk.destroy_buffer(b);
    }
    for s in acquires.into_iter().chain(read) {
        vk.destroy_semaphore(s);
    }
}

/// A producer that never signals its frame's timeline: the device's wait
/// for it times out on the host with the fence named, the frame is not
/// released (a queued read of it could still run; the stuck context leaks
/// what it held).
#[test]
fn a_vulkan_acquire_never_signalled_times_out_naming_the_fence() {
    let _alone = crate::one_at_a_time();
    let Some(gpu) = test_gpu() else { return };
    let Some(vk) = vulkan(&gpu) else { return };
    let pair = pair("a_576x324_420p8_pan/x264_crf30");
    let (refs, dists) = (pair.reference(), pair.distorted_pictures());
    let written = vk.semaphore(true).unwrap();
    let read = vk.semaphore(true).unwrap();
    let timeout = Duration::from_millis(300);
    let mut ctx = builder(pair.format(), FEATURES, Some(&gpu))
        .fence_timeout(timeout)
        .build()
        .unwrap();
    let (r, rb) = vulkan_nv12_frame(&vk, &refs[0], written, Some(1), read, 1);
    let (d, db) = vulkan_nv12_frame(&vk, &dists[0], written, Some(1), read, 1);
    ctx.submit_frames(&r, &d).unwrap();
    drop((r, d));
    let started = std::time::Instant::now();
    match ctx.finish() {
        Err(Error::FenceTimeout { fence, waited_ms }) => {
            assert_eq!(
                fence,
                "Vulkan timeline semaphore (acquire of frame 0, reference)"
            );
            assert_eq!(waited_ms, 300);
        }
        other => panic!("expected a fence timeout, got {other:?}"),
    }
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(5), "finish took {waited:?}");
    assert_eq!(vk.counter(read).unwrap(), 0, "released before it was read");
    // The producer signals late: the device's wait ends (the stuck
    // context's leaked work runs; nothing waits for it).
    vk.signal(written, 1).unwrap();
    println!(
        "a never-signalled Vulkan timeline: FenceTimeout after {waited:?}, frame not released"
    );
    vk.destroy_buffer(rb);
    vk.destroy_buffer(db);
    vk.destroy_semaphore(written);
    vk.destroy_semaphore(read);
}

/// A Vulkan renderer's frames: NV12 in exportable allocations, a timeline
/// semaphore signalled after each submit (the library stream waits on the
/// device, `submit_frames` does not block), a release timeline the producer
/// waits on before reusing memory.
#[test]
fn vulkan_frames_with_timeline_semaphores() {
    let _alone = crate::one_at_a_time();
    let Some(gpu) = test_gpu() else { return };
    let Some(vk) = vulkan(&gpu) else { return };
    let pair = pair("a_576x324_420p8_pan/x264_crf30");
    let (refs, dists) = (pair.reference(), pair.distorted_pictures());
    let format = pair.format();
    let written = vk.semaphore(true).unwrap();
    // One release timeline per side: a timeline only moves forward, and the
    // two frames of a pair are released in either order.
    let read = [vk.semaphore(true).unwrap(), vk.semaphore(true).unwrap()];
    let mut ctx = builder(format, FEATURES, Some(&gpu)).build().unwrap();
    let mut buffers = Vec::new();
    for (i, (r, d)) in refs.iter().zip(&dists).enumerate() {
        let value = i as u64 + 1;
        let frames = [(r, read[0]), (d, read[1])].map(|(p, read)| {
            let (frame, buffer) = vulkan_nv12_frame(&vk, p, written, Some(value), read, value);
            buffers.push(buffer);
            frame
        });
        if i < 3 {
            println!("frame {i}: written");
        }
        ctx.submit_frames(&frames[0], &frames[1]).unwrap();
        if i < 3 {
            println!("frame {i}: submitted, signalling {value}");
        }
        // Not read yet: the device waits for `written`.
        for r in read {
            assert!(
                vk.counter(r).unwrap() < value,
                "frame {i} released before written"
            );
        }
        vk.signal(written, value).unwrap();
    }
    let (counts, host_copies) = ctx.transfer_counts().unwrap();
    let device = ctx.finish().unwrap();
    let last = refs.len() as u64;
    for r in read {
        assert!(
            vk.wait_value(r, last, 5000),
            "release timeline at {}",
            vk.counter(r).unwrap()
        );
    }
    assert_eq!(host_copies, 0);
    assert_identical(
        "Vulkan NV12 frames",
        &score_pictures(FEATURES, &refs, &dists, None),
        &device,
    );
    println!(
        "Vulkan ({}) NV12 frames: {} bit-identical, {counts:?}, release timeline at {last}",
        vk.name,
        refs.len()
    );
    for b in buffers {
        vk.destroy_buffer(b);
    }
    vk.destroy_semaphore(written);
    for r in read {
        vk.destroy_semaphore(r);
    }
}

/// A GL pipeline's frames: three R8 textures per picture (planar 4:2:0) of
/// the EGL context current on this thread, copied once on the device.
#[test]
fn gl_textures_as_planes() {
    let _alone = crate::one_at_a_time();
    let Some(gpu) = test_gpu() else { return };
    let gl = match Gl::new() {
        Ok(gl) => gl,
        Err(e) => {
            vmafx::testing::skip(
                vmafx::testing::REQUIRE_GPU,
                format_args!("no EGL/GL context ({e})"),
            );
            return;
        }
    };
    let pair = pair("e_321x179");
    let (refs, dists) = (pair.reference(), pair.distorted_pictures());
    let format = pair.format();
    let layout = PixelFormat::Planar {
        subsampling: format.subsampling,
        bit_depth: 8,
    };
    let mut ctx = builder(format, FEATURES, Some(&gpu)).build().unwrap();
    let mut textures = Vec::new();
    for (r, d) in refs.iter().zip(&dists) {
        let frames = [r, d].map(|p| {
            let planes = (0..3)
                .map(|i| {
                    let (w, h) = layout.plane_extent(i, format.width, format.height);
                    let t = gl
                        .r8_texture(w as i32, h as i32, &pack_plane(p, layout, i, w))
                        .unwrap();
                    textures.push(t);
                    (
                        Memory::GlTexture(unsafe { GlTexture::new(t.0.get()) }),
                        PlaneLayout::new(0, w as u64),
                    )
                })
                .collect();
            let desc = FrameDesc::per_plane(format.width, format.height, layout, planes);
            Frame::new(desc, Acquire::None, vec![]).unwrap()
        });
        let submitted = ctx.submit_frames(&frames[0], &frames[1]);
        if let (true, Err(e)) = (on_hip(), &submitted) {
            // On HIP a texture is exported through EGL as a dma-buf and
            // imported (AMD's path). Where this EGL cannot export (the
            // H200's answers EGL_BAD_MATCH) or the runtime cannot import
            // it, the first frame is refused naming the plane and the step.
            let err = e.to_string();
            println!("GL textures on HIP refused: {err}");
            assert!(
                err.contains("GL texture") && err.contains("plane 0"),
                "{err}"
            );
            // The step: an EGL call (the H200's export answers
            // EGL_BAD_MATCH), the plane check, or the import.
            let lower = err.to_lowercase();
            assert!(
                ["egl", "exports", "hipimportexternalmemory"]
                    .iter()
                    .any(|step| lower.contains(step)),
                "{err}"
            );
            for t in textures {
                gl.delete_texture(t);
            }
            return;
        }
        submitted.unwrap();
    }
    let (counts, host_copies) = ctx.transfer_counts().unwrap();
    let device = ctx.finish().unwrap();
    assert_eq!(host_copies, 0);
    assert_identical(
        "GL texture frames",
        &score_pictures(FEATURES, &refs, &dists, None),
        &device,
    );
    println!(
        "GL textures (321x179 planar): {} frames bit-identical, {counts:?}",
        refs.len()
    );
    for t in textures {
        gl.delete_texture(t);
    }
}

/// A dma-buf the driver cannot import is refused with its answer and
/// the paths that work; the frame is released and its fd closed.
#[test]
fn dma_buf_refusal_names_the_driver_answer() {
    let _alone = crate::one_at_a_time();
    let Some(gpu) = test_gpu() else { return };
    let format = PictureFormat::new(64, 32, vmafx::ChromaSubsampling::Yuv420, 8).unwrap();
    let fd = nix::sys::memfd::memfd_create(
        c"dmabuf-stand-in",
        nix::sys::memfd::MemFdCreateFlag::MFD_CLOEXEC,
    )
    .unwrap();
    nix::unistd::ftruncate(&fd, 64 * 48).unwrap();
    let fence = HostFence::new();
    let desc = FrameDesc::new(
        64,
        32,
        PixelFormat::Nv12,
        Memory::DmaBuf {
            fd,
            bytes: 64 * 48,
            modifier: drm_fourcc::DrmModifier::Linear,
        },
        &[PlaneLayout::new(0, 64), PlaneLayout::new(64 * 32, 64)],
    );
    let frame = Frame::new(desc, Acquire::None, vec![Release::Host(fence.clone())]).unwrap();
    let mut ctx = builder(format, FEATURES, Some(&gpu)).build().unwrap();
    let err = ctx.submit_frames(&frame, &frame).unwrap_err();
    drop(frame);
    let msg = err.to_string();
    println!("dma-buf refused: {msg}");
    assert!(matches!(err, Error::Import { plane: Some(0), .. }), "{msg}");
    assert!(
        msg.contains("dma-buf memory (NV12, plane 0, modifier Linear)"),
        "{msg}"
    );
    let import = if on_hip() {
        "hipImportExternalMemory"
    } else {
        "cuImportExternalMemory"
    };
    assert!(msg.contains(import), "{msg}");
    assert!(fence.is_signalled());
}

/// Free device memory once what was dropped has been freed: a dropped
/// buffer is freed after every live stream has passed the work queued
/// before it (ADR 0022), which host functions report a moment later, so
/// read until two reads 20 ms apart agree (a leak does not go away).
fn settled_free_memory(gpu: &Gpu) -> usize {
    let mut last = gpu.memory_info().unwrap().free;
    for _ in 0..50 {
        std::thread::sleep(Duration::from_millis(20));
        let now = gpu.memory_info().unwrap().free;
        if now == last {
            break;
        }
        last = now;
    }
    last
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Frame pairs of a soak: 500, or `VMAFX_SOAK_FRAMES` (the H200 runs
/// 100,000; docs/gpu-testing.md).
fn soak_frames() -> usize {
    std::env::var("VMAFX_SOAK_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500)
}

/// A pool of one pair: the producer takes the next pair's frames right
/// after each submit, so they come back only if the context lets go of a
/// pair as soon as the device has read it (not at its next call).
#[test]
fn a_pool_of_one_pair_turns_over() {
    let _alone = crate::one_at_a_time();
    let Some(gpu) = test_gpu() else { return };
    let pair = pair("a_576x324_420p8_pan/x264_crf18");
    let (refs, dists) = (pair.reference(), pair.distorted_pictures());
    let format = pair.format();
    let pool = FramePool::new(&gpu, format.width, format.height, PixelFormat::Nv12, 2).unwrap();
    let producer = gpu.stream().unwrap();
    let mut ctx = builder(format, FEATURES, Some(&gpu)).build().unwrap();
    for (r, d) in refs.iter().zip(&dists) {
        let [r, d] = [r, d].map(|p| {
            let slot = pool.take(Duration::from_secs(5)).unwrap();
            slot.write_from_host(&producer, p).unwrap();
            slot.into_frame(Acquire::None, vec![]).unwrap()
        });
        ctx.submit_frames(&r, &d).unwrap();
    }
    let scores = ctx.finish().unwrap();
    assert_eq!(pool.free_count(), 2);
    assert_identical(
        "pool of one pair",
        &score_pictures(FEATURES, &refs, &dists, None),
        &scores,
    );
}

/// A producer writing each frame on its own stream and handing it over with
/// every acquire fence the machine offers, in turn; each frame asks for a
/// release signal of every kind in turn too (besides the pool's own).
#[derive(Clone, Copy, Debug, PartialEq)]
enum SoakAcquire {
    /// Written (the producer waited for its stream) before it is submitted.
    None,
    /// A host fence signalled by a host function behind the producer's copy.
    HostFence,
    /// The producer's event, waited on the device.
    DeviceEvent,
    /// The frame's dma-buf implicit fence as a sync_file (CUDA only).
    SyncFile,
    /// A Vulkan timeline semaphore waited on the device, signalled by the
    /// producer after the submit.
    VulkanDevice,
    /// A Vulkan timeline semaphore waited on the host, signalled likewise.
    VulkanHost,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum SoakRelease {
    HostFence,
    DeviceEvent,
    VulkanDevice,
    VulkanHost,
}

/// The producer side of the soak: the golden frames already on the device
/// (copied into pool frames on the device, as a decoder writes them), its
/// stream, and the fences it signals and waits for.
struct SoakProducer<'a> {
    gpu: &'a Gpu,
    stream: vmafx::gpu::device::Stream,
    sources: Vec<vmafx::gpu::pool::PooledFrame>,
    vk: Option<&'a Vulkan>,
    /// Acquire timeline (device and host waits) and release timelines per
    /// side and signaller (device, host: a timeline's values must rise in
    /// the order they are signalled), values rising per use.
    written: Option<ash::vk::Semaphore>,
    read: Option<[[ash::vk::Semaphore; 2]; 2]>,
    written_value: u64,
    read_value: [[u64; 2]; 2],
    host_releases: Vec<HostFence>,
    /// Acquire events, kept until long after their wait was queued.
    acquire_events: std::collections::VecDeque<vmafx::gpu::device::Event>,
    /// Release events, kept until the run has finished (the context
    /// records them when it lets go of the frame).
    release_events: Vec<vmafx::gpu::device::Event>,
    /// The last frames handed over (source, fence kinds), for a failure
    /// message.
    recent: std::collections::VecDeque<String>,
    /// The frames' size.
    width: u32,
    height: u32,
}

impl SoakProducer<'_> {
    /// Frame `slot` for side `side`: the source copied in on the device,
    /// handed over with `acquire` and `release` (the Vulkan value to signal
    /// after the submit, if any).
    #[allow(clippy::too_many_arguments)]
    fn frame(
        &mut self,
        pool: &FramePool,
        ctx: &mut vmafx::Context,
        source: usize,
        side: usize,
        acquire: SoakAcquire,
        release: SoakRelease,
    ) -> (Frame, Option<u64>) {
        // A held frame may be queued behind a host-waited fence that has
        // signalled: the context hands it on when asked (`Context::poll`).
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let slot = loop {
            match pool.take(Duration::from_millis(1)) {
                Ok(slot) => break slot,
                Err(e) if std::time::Instant::now() > deadline => panic!(
                    "source {source}, {acquire:?}, {release:?}: {e}; {} frames complete; before: {:?}",
                    ctx.frames_complete(),
                    self.recent
                ),
                Err(_) => ctx.poll().unwrap(),
            }
        };
        let (from, to) = (self.sources[source].planes(), slot.planes());
        for (plane, (src, dst)) in from.iter().zip(&to).enumerate() {
            let (row_bytes, rows) = PixelFormat::Nv12.plane_extent(plane, self.width, self.height);
            let copy = vmafx::gpu::Copy2d {
                src: vmafx::gpu::CopySource::Device(src.ptr),
                src_pitch: src.pitch,
                dst: dst.ptr,
                dst_pitch: dst.pitch,
                width_bytes: row_bytes,
                height: rows,
            };
            // SAFETY: both pool frames hold these rows and outlive the copy.
            unsafe { self.stream.copy_2d(&copy).unwrap() };
        }
        let mut signal_after = None;
        let acquire = match acquire {
            SoakAcquire::None => {
                self.stream.synchronize().unwrap();
                Acquire::None
            }
            SoakAcquire::HostFence => {
                let fence = HostFence::new();
                let written = fence.clone();
                self.stream
                    .after_queued_work(Box::new(move || written.signal()))
                    .unwrap();
                Acquire::Host(fence)
            }
            SoakAcquire::DeviceEvent => {
                let event = self.gpu.event().unwrap();
                event.record(&self.stream).unwrap();
                let raw = event.as_raw();
                self.acquire_events.push_back(event);
                if self.acquire_events.len() > 64 {
                    self.acquire_events.pop_front(); // long since waited for
                }
                Acquire::DeviceEvent(raw)
            }
            SoakAcquire::SyncFile => {
                self.stream.synchronize().unwrap();
                let dmabuf = slot.export_dmabuf().unwrap();
                let fence =
                    vmafx::import::sync_file::export_sync_file(std::os::fd::AsFd::as_fd(&dmabuf))
                        .unwrap();
                Acquire::SyncFile(fence)
            }
            SoakAcquire::VulkanDevice | SoakAcquire::VulkanHost => {
                let (vk, written) = (self.vk.unwrap(), self.written.unwrap());
                self.stream.synchronize().unwrap();
                self.written_value += 1;
                signal_after = Some(self.written_value);
                if acquire == SoakAcquire::VulkanDevice {
                    Acquire::VulkanSemaphoreFd {
                        fd: vk.semaphore_fd(written).unwrap(),
                        value: Some(self.written_value),
                    }
                } else {
                    // SAFETY: a live timeline semaphore of this device.
                    Acquire::VulkanTimeline(unsafe {
                        vmafx::import::VulkanTimeline::new(vk.device(), written, self.written_value)
                    })
                }
            }
        };
        let release = match release {
            SoakRelease::HostFence => {
                let fence = HostFence::new();
                self.host_releases.push(fence.clone());
                Release::Host(fence)
            }
            SoakRelease::DeviceEvent => {
                let event = self.gpu.event().unwrap();
                let raw = event.as_raw();
                self.release_events.push(event);
                Release::DeviceEvent(raw)
            }
            SoakRelease::VulkanDevice | SoakRelease::VulkanHost => {
                let by = usize::from(release == SoakRelease::VulkanHost);
                let (vk, read) = (self.vk.unwrap(), self.read.unwrap()[side][by]);
                self.read_value[side][by] += 1;
                let value = self.read_value[side][by];
                if release == SoakRelease::VulkanDevice {
                    Release::VulkanSemaphoreFd {
                        fd: vk.semaphore_fd(read).unwrap(),
                        value: Some(value),
                    }
                } else {
                    // SAFETY: as above.
                    Release::VulkanTimeline(unsafe {
                        vmafx::import::VulkanTimeline::new(vk.device(), read, value)
                    })
                }
            }
        };
        self.recent
            .push_back(format!("{source} {}/{}", acquire.kind(), release.kind()));
        if self.recent.len() > 6 {
            self.recent.pop_front();
        }
        (
            slot.into_frame(acquire, vec![release]).unwrap(),
            signal_after,
        )
    }
}

/// Many frames through a pool of 4 (two pairs): every acquire and release
/// kind the machine offers in turn, every frame released as soon as it is
/// read (the producer takes its next frame before it submits again) and
/// reused, and afterwards device memory and open fds as before and every
/// release signal fired.
#[test]
fn soak_through_a_small_pool_leaks_nothing() {
    let _alone = crate::one_at_a_time();
    let Some(gpu) = test_gpu() else { return };
    let vk = vulkan(&gpu);
    let pair = pair("a_576x324_420p8_pan/x264_crf18");
    let (refs, dists) = (pair.reference(), pair.distorted_pictures());
    let format = pair.format();
    let mut acquires = vec![
        SoakAcquire::None,
        SoakAcquire::HostFence,
        SoakAcquire::DeviceEvent,
    ];
    let mut releases = vec![SoakRelease::HostFence, SoakRelease::DeviceEvent];
    if !cuda_specific("sync_file acquire from a CUDA dma-buf") {
        acquires.push(SoakAcquire::SyncFile);
    }
    if vk.is_some() {
        acquires.extend([SoakAcquire::VulkanDevice, SoakAcquire::VulkanHost]);
        releases.extend([SoakRelease::VulkanDevice, SoakRelease::VulkanHost]);
    }
    // VMAFX_SOAK_ACQUIRES / VMAFX_SOAK_RELEASES (comma-separated kinds, as
    // printed) narrow the kinds, to find which one a failure needs.
    let only = |var: &str, kind: String| match std::env::var(var) {
        Ok(list) => list.split(',').any(|k| k == kind),
        Err(_) => true,
    };
    acquires.retain(|a| only("VMAFX_SOAK_ACQUIRES", format!("{a:?}")));
    releases.retain(|r| only("VMAFX_SOAK_RELEASES", format!("{r:?}")));
    let sources_pool = FramePool::new(
        &gpu,
        format.width,
        format.height,
        PixelFormat::Nv12,
        2 * refs.len(),
    )
    .unwrap();
    let stream = gpu.stream().unwrap();
    let sources: Vec<_> = refs
        .iter()
        .chain(&dists)
        .map(|p| {
            let slot = sources_pool.take(Duration::ZERO).unwrap();
            slot.write_from_host(&stream, p).unwrap();
            slot
        })
        .collect();
    let (written, read) = match &vk {
        Some(vk) => (
            Some(vk.semaphore(true).unwrap()),
            Some([0, 1].map(|_| [0, 1].map(|_| vk.semaphore(true).unwrap()))),
        ),
        None => (None, None),
    };
    let mut producer = SoakProducer {
        gpu: &gpu,
        stream,
        sources,
        vk: vk.as_ref(),
        written,
        read,
        written_value: 0,
        read_value: [[0; 2]; 2],
        host_releases: Vec::new(),
        acquire_events: Default::default(),
        release_events: Vec::new(),
        recent: Default::default(),
        width: format.width,
        height: format.height,
    };
    let mut run = |frames: usize| {
        let pool = FramePool::new(&gpu, format.width, format.height, PixelFormat::Nv12, 4).unwrap();
        let mut ctx = builder(format, FEATURES, Some(&gpu)).build().unwrap();
        for i in 0..frames {
            let k = i % refs.len();
            let [(r, r_signal), (d, d_signal)] = [0, 1].map(|side| {
                let n = 2 * i + side;
                let acquire = acquires[n % acquires.len()];
                let release = releases[(n / acquires.len()) % releases.len()];
                producer.frame(
                    &pool,
                    &mut ctx,
                    side * refs.len() + k,
                    side,
                    acquire,
                    release,
                )
            });
            ctx.submit_frames(&r, &d).unwrap();
            drop((r, d));
            if let Some(value) = r_signal.max(d_signal) {
                let (vk, written) = (producer.vk.unwrap(), producer.written.unwrap());
                vk.signal(written, value).unwrap();
            }
        }
        let scores = ctx.finish().unwrap();
        assert_eq!(scores.frames.len(), frames);
        assert_eq!(pool.free_count(), 4, "every frame back in the pool");
        producer.acquire_events.clear();
        producer.release_events.clear();
        scores
    };
    run(8);
    let (fds, memory) = (open_fds(), settled_free_memory(&gpu));
    let frames = soak_frames();
    let started = std::time::Instant::now();
    let scores = run(frames);
    let seconds = started.elapsed().as_secs_f64();
    let (fds_after, memory_after) = (open_fds(), settled_free_memory(&gpu));
    println!(
        "soak: {frames} frame pairs through 4 pool frames in {seconds:.1} s ({:.0} pairs/s); acquires {acquires:?}, releases {releases:?}; fds {fds} -> {fds_after}, free device memory {memory} -> {memory_after}",
        frames as f64 / seconds
    );
    // The frames scored what the same pictures score as host uploads: the
    // pair cycles, so past the first cycle each frame's values repeat those
    // of the second (temporal features see the same neighbours), the last
    // frame aside (it has no successor).
    let n = refs.len();
    let expected = score_cycled(pair, FEATURES, None, false);
    assert!(expected.frames.len() > 2 * n, "two cycles and a frame");
    assert!(frames >= 3 * n, "a soak runs three cycles at least");
    for (i, (_, values)) in scores.frames.iter().enumerate().take(frames - 1) {
        let e = if i < n { i } else { n + (i - n) % n };
        assert!(
            values == &expected.frames[e].1,
            "frame {i} scored differently"
        );
    }
    assert!(producer.host_releases.iter().all(HostFence::is_signalled));
    if let (Some(vk), Some(read)) = (producer.vk, producer.read) {
        for (side, by) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            let value = producer.read_value[side][by];
            assert!(
                vk.wait_value(read[side][by], value, 5000),
                "release timeline {side}/{by} at {:?}, not {value}",
                vk.counter(read[side][by])
            );
        }
    }
    assert_eq!(fds, fds_after);
    assert_eq!(memory, memory_after);
    if let Some(vk) = producer.vk {
        let read = producer.read.unwrap().into_iter().flatten();
        for s in [producer.written.unwrap()].into_iter().chain(read) {
            vk.destroy_semaphore(s);
        }
    }
}

/// Four contexts on four threads share one device, host pictures and pool
/// frames mixed; one context is dropped mid-run with frames in flight. The
/// others score exactly what one context alone scores, and afterwards
/// device memory and open fds are as before.
#[test]
fn contexts_on_threads_share_the_device_and_a_dropped_one_leaks_nothing() {
    let _alone = crate::one_at_a_time();
    let Some(gpu) = test_gpu() else { return };
    let pair = pair("a_576x324_420p8_pan/x264_crf18");
    let (refs, dists) = (pair.reference(), pair.distorted_pictures());
    let format = pair.format();
    let alone = |frames: usize| {
        let mut ctx = builder(format, FEATURES, Some(&gpu)).build().unwrap();
        for i in 0..frames {
            let k = i % refs.len();
            ctx.submit(refs[k].clone(), dists[k].clone()).unwrap();
        }
        ctx.finish().unwrap()
    };
    let run = |frames: usize| {
        std::thread::scope(|s| {
            let workers: Vec<_> = (0..4)
                .map(|t| {
                    let (gpu, refs, dists) = (&gpu, &refs, &dists);
                    s.spawn(move || {
                        let mut ctx = builder(format, FEATURES, Some(gpu)).build().unwrap();
                        for i in 0..frames {
                            let k = i % refs.len();
                            if t == 3 && i == frames / 2 {
                                return None; // dropped with frames in flight
                            }
                            if t % 2 == 0 {
                                let (mut r, mut d) =
                                    (ctx.picture().unwrap(), ctx.picture().unwrap());
                                r.copy_from(&refs[k]);
                                d.copy_from(&dists[k]);
                                ctx.submit(r, d).unwrap();
                            } else {
                                ctx.submit(refs[k].clone(), dists[k].clone()).unwrap();
                            }
                        }
                        Some(ctx.finish().unwrap())
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().unwrap())
                .collect::<Vec<_>>()
        })
    };
    run(8);
    let (fds, memory) = (open_fds(), settled_free_memory(&gpu));
    let frames = soak_frames() / 4;
    let expected = alone(frames);
    let results = run(frames);
    let (fds_after, memory_after) = (open_fds(), settled_free_memory(&gpu));
    println!("4 contexts x {frames} frame pairs, one dropped at {}; fds {fds} -> {fds_after}, free device memory {memory} -> {memory_after}", frames / 2);
    for (t, scores) in results.iter().enumerate() {
        match scores {
            None => assert_eq!(t, 3),
            Some(scores) => assert!(
                scores.frames == expected.frames,
                "context {t} scored differently from one context alone"
            ),
        }
    }
    assert_eq!(fds, fds_after);
    assert_eq!(memory, memory_after);
}
