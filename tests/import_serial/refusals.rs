//! Every refusal path of an import: the error names the memory kind,
//! pixel format, plane and modifier (or the fence, frame and side), the
//! frame is released (its release fence fires once the producer's handle
//! goes, the context keeps nothing), and no fd leaks. It holds
//! `one_at_a_time`, so no other test of this binary opens fds while it
//! counts them.

use crate::import_support;

use drm_fourcc::DrmModifier;
use import_support::*;
use std::os::fd::OwnedFd;
use std::time::Duration;
use vmafx::import::{
    Acquire, Frame, FrameDesc, HostFence, Memory, PixelFormat, PlaneLayout, RawEvent, Release,
};
use vmafx::import::{DeviceArray, DevicePtr, GlTexture, VulkanMemoryFd};
use vmafx::{ChromaSubsampling, Context, ContextBuilder, Error, PictureFormat};

const W: u32 = 64;
const H: u32 = 32;

fn nv12_planes() -> [PlaneLayout; 2] {
    [PlaneLayout::new(0, 64), PlaneLayout::new(64 * 32, 64)]
}

fn fd_of(bytes: usize) -> OwnedFd {
    memfd(&vec![0u8; bytes])
}

fn cpu_context() -> Context {
    let format = PictureFormat::new(W, H, ChromaSubsampling::Yuv420, 8).unwrap();
    ContextBuilder::new(format)
        .feature("psnr", vec![])
        .fence_timeout(Duration::from_millis(100))
        .build()
        .unwrap()
}

/// Asserts `Frame::new` refuses `desc` with a message holding every one of
/// `parts`, and fires the release.
fn refused_at_creation(what: &str, desc: FrameDesc, acquire: Acquire, parts: &[&str]) {
    let released = HostFence::new();
    let e = Frame::new(desc, acquire, vec![Release::Host(released.clone())]).unwrap_err();
    check(what, &e, parts);
    assert!(
        released.is_signalled(),
        "{what}: refused frame not released"
    );
}

/// Asserts `submit_frames` refuses a pair whose distorted side is `desc`
/// (with `acquire` and `releases`), that the context kept no reference,
/// and that the frame is released once the producer drops it.
fn refused_at_submit(
    what: &str,
    desc: FrameDesc,
    acquire: Acquire,
    mut releases: Vec<Release>,
    parts: &[&str],
) {
    let released = HostFence::new();
    releases.push(Release::Host(released.clone()));
    let distorted = Frame::new(desc, acquire, releases).unwrap();
    let reference_fd = fd_of(64 * 48);
    let reference = Frame::new(
        FrameDesc::new(
            W,
            H,
            PixelFormat::Nv12,
            Memory::HostFd {
                fd: reference_fd,
                bytes: 64 * 48,
            },
            &nv12_planes(),
        ),
        Acquire::None,
        vec![],
    )
    .unwrap();
    let mut ctx = cpu_context();
    let e = ctx.submit_frames(&reference, &distorted).unwrap_err();
    check(what, &e, parts);
    assert_eq!(
        distorted.references(),
        1,
        "{what}: the context kept the frame"
    );
    drop(distorted);
    assert!(
        released.is_signalled(),
        "{what}: refused frame not released"
    );
    // The refusal cost nothing: the context still scores (no frames here).
    ctx.finish().unwrap();
}

fn check(what: &str, e: &Error, parts: &[&str]) {
    let msg = e.to_string();
    for p in parts {
        assert!(msg.contains(p), "{what}: '{p}' missing from: {msg}");
    }
}

fn nv12(memory: Memory) -> FrameDesc {
    FrameDesc::new(W, H, PixelFormat::Nv12, memory, &nv12_planes())
}

#[test]
fn every_refusal_names_what_was_wrong_releases_and_leaks_nothing() {
    let _alone = crate::one_at_a_time();
    let fds_before = fd_count();
    for round in 0..2 {
        run_refusals();
        assert_eq!(fd_count(), fds_before, "fds leaked after round {round}");
    }
}

fn run_refusals() {
    let host_fd = |bytes: u64| Memory::HostFd {
        fd: fd_of(bytes as usize),
        bytes,
    };

    // Descriptor checks (Frame::new).
    refused_at_creation(
        "three planes for NV12",
        FrameDesc::new(
            W,
            H,
            PixelFormat::Nv12,
            host_fd(64 * 64),
            &[
                PlaneLayout::new(0, 64),
                PlaneLayout::new(2048, 64),
                PlaneLayout::new(3072, 64),
            ],
        ),
        Acquire::None,
        &[
            "host fd memory (NV12)",
            "3 planes described, the format has 2",
        ],
    );
    refused_at_creation(
        "pitch below a row",
        FrameDesc::new(
            W,
            H,
            PixelFormat::P010,
            host_fd(1 << 16),
            &[PlaneLayout::new(0, 100), PlaneLayout::new(8192, 128)],
        ),
        Acquire::None,
        &[
            "host fd memory (P010, plane 0)",
            "pitch 100 is less than a row's 128 bytes",
        ],
    );
    refused_at_creation(
        "rows past the memory",
        nv12(host_fd(64 * 40)),
        // The fd of a refused frame's acquire is closed too.
        Acquire::SyncFile(fd_of(1)),
        &["host fd memory (NV12, plane 1)", "memory holds 2560"],
    );
    refused_at_creation(
        "tiled dma-buf",
        nv12(Memory::DmaBuf {
            fd: fd_of(64 * 48),
            bytes: 64 * 48,
            modifier: DrmModifier::I915_y_tiled,
        }),
        Acquire::None,
        &[
            "dma-buf memory (NV12, plane 0, modifier I915_y_tiled)",
            "only linear",
        ],
    );
    refused_at_creation(
        "one texture for two planes",
        FrameDesc {
            width: W,
            height: H,
            format: PixelFormat::Nv12,
            memory: vec![Memory::GlTexture(unsafe { GlTexture::new(3) })],
            planes: nv12_planes()
                .iter()
                .map(|&layout| vmafx::import::PlaneDesc { memory: 0, layout })
                .collect(),
        },
        Acquire::None,
        &["GL texture memory (NV12, plane 0)", "holds one plane"],
    );

    // Device kinds on a CPU context (submit_frames).
    let gpu = "needs a GPU context (`--backend cuda|hip`)";
    refused_at_submit(
        "device pointer",
        nv12(Memory::Device(unsafe {
            DevicePtr::new(0x7000_0000, 64 * 48)
        })),
        Acquire::None,
        vec![],
        &["device-pointer memory (NV12, plane 0)", gpu],
    );
    refused_at_submit(
        "device arrays",
        FrameDesc::per_plane(
            W,
            H,
            PixelFormat::Nv12,
            vec![
                (
                    Memory::Array(unsafe { DeviceArray::from_raw(1) }),
                    PlaneLayout::new(0, 0),
                ),
                (
                    Memory::Array(unsafe { DeviceArray::from_raw(2) }),
                    PlaneLayout::new(0, 0),
                ),
            ],
        ),
        Acquire::None,
        vec![],
        &["device-array memory (NV12, plane 0)", gpu],
    );
    refused_at_submit(
        "GL textures",
        FrameDesc::per_plane(
            W,
            H,
            PixelFormat::Nv12,
            vec![
                (
                    Memory::GlTexture(unsafe { GlTexture::new(1) }),
                    PlaneLayout::new(0, 0),
                ),
                (
                    Memory::GlTexture(unsafe { GlTexture::new(2) }),
                    PlaneLayout::new(0, 0),
                ),
            ],
        ),
        Acquire::None,
        vec![],
        &["GL texture memory (NV12, plane 0)", gpu],
    );
    refused_at_submit(
        "device event acquire",
        nv12(host_fd(64 * 48)),
        Acquire::DeviceEvent(unsafe { RawEvent::from_raw(0x1234) }),
        vec![],
        &["host fd memory (NV12)", "acquire fence (device event)", gpu],
    );
    refused_at_submit(
        "Vulkan semaphore fd acquire",
        nv12(host_fd(64 * 48)),
        Acquire::VulkanSemaphoreFd {
            fd: fd_of(1),
            value: Some(3),
        },
        vec![],
        &["acquire fence (Vulkan timeline semaphore)", gpu],
    );
    refused_at_submit(
        "device event release",
        nv12(host_fd(64 * 48)),
        Acquire::None,
        vec![Release::DeviceEvent(unsafe { RawEvent::from_raw(9) })],
        &["release signal (device event)", gpu],
    );
    refused_at_submit(
        "Vulkan semaphore fd release",
        nv12(host_fd(64 * 48)),
        Acquire::None,
        vec![Release::VulkanSemaphoreFd {
            fd: fd_of(1),
            value: None,
        }],
        &["release signal (Vulkan semaphore)", gpu],
    );

    // Formats that are not the context's.
    refused_at_submit(
        "4:2:2 into a 4:2:0 context",
        FrameDesc::new(
            W,
            H,
            PixelFormat::Nv16,
            host_fd(64 * 64),
            &[PlaneLayout::new(0, 64), PlaneLayout::new(2048, 64)],
        ),
        Acquire::None,
        vec![],
        &[
            "frame 0: the distorted frame is 64x32 4:2:2 8-bit (NV16)",
            "the context scores 64x32 4:2:0 8-bit",
        ],
    );
    refused_at_submit(
        "P010 into an 8-bit context",
        FrameDesc::new(
            W,
            H,
            PixelFormat::P010,
            host_fd(8192),
            &[PlaneLayout::new(0, 128), PlaneLayout::new(4096, 128)],
        ),
        Acquire::None,
        vec![],
        &["distorted frame is 64x32 4:2:0 10-bit (P010)"],
    );

    // Memory the host cannot read after all.
    refused_at_submit(
        "memfd shorter than described",
        nv12(Memory::HostFd {
            fd: fd_of(100),
            bytes: 64 * 48,
        }),
        Acquire::None,
        vec![],
        &[
            "host fd memory (NV12)",
            "the fd holds 100 bytes but the planes end at byte 3072",
        ],
    );
    refused_at_submit(
        "a plain memfd as a Vulkan opaque fd",
        nv12(Memory::VulkanFd(unsafe {
            VulkanMemoryFd::new(fd_of(64 * 48), 64 * 48, false)
        })),
        Acquire::None,
        vec![],
        &[
            "Vulkan opaque-fd memory (NV12)",
            "no Mesa memory header",
            "GPU context",
        ],
    );
    let (pipe_read, _pipe_write) = nix::unistd::pipe().unwrap();
    refused_at_submit(
        "an fd that cannot be mapped",
        nv12(Memory::VulkanFd(unsafe {
            VulkanMemoryFd::new(pipe_read, 64 * 48, false)
        })),
        Acquire::None,
        vec![],
        &[
            "Vulkan opaque-fd memory (NV12)",
            "cannot be mapped on the host",
        ],
    );

    // A fence that never signals: the pair is queued, then times out.
    let (never, _writer) = nix::unistd::pipe().unwrap();
    let released = HostFence::new();
    let distorted = Frame::new(
        nv12(host_fd(64 * 48)),
        Acquire::SyncFile(never),
        vec![Release::Host(released.clone())],
    )
    .unwrap();
    let reference = Frame::new(nv12(host_fd(64 * 48)), Acquire::None, vec![]).unwrap();
    let mut ctx = cpu_context();
    ctx.submit_frames(&reference, &distorted).unwrap();
    drop((reference, distorted));
    let e = ctx.finish().unwrap_err();
    check(
        "silent sync_file",
        &e,
        &["sync_file (acquire of frame 0, distorted) not signalled within 100 ms"],
    );
    assert!(released.is_signalled(), "timed-out frame not released");
}
