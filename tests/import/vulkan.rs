//! Vulkan producers on the CPU engine (lavapipe in CI): frames in
//! exportable allocations exported as opaque fds, acquired by timeline
//! semaphores that another thread signals after `submit_frames` returned,
//! released through timeline semaphores the producer waits on with
//! vkWaitSemaphores. They score bit for bit as host pictures.
//!
//! Skips (printing why) where no Vulkan device offers
//! `VK_KHR_external_memory_fd`, unless VMAFX_REQUIRE_LAVAPIPE is set.

use crate::import_support;

use import_support::vulkan::Vk;
use import_support::*;
use std::time::Duration;
use vmafx::import::VulkanMemoryFd;
use vmafx::import::{Acquire, Frame, FrameDesc, Memory, PixelFormat, Release, VulkanTimeline};

fn vulkan() -> Option<Vk> {
    let vk = Vk::new();
    let probe = vk.as_ref().map(|_| ()).map_err(|e| e.clone());
    if !available("Vulkan (lavapipe)", "VMAFX_REQUIRE_LAVAPIPE", probe) {
        return None;
    }
    let vk = vk.unwrap();
    eprintln!("Vulkan device: {}", vk.name);
    Some(vk)
}

#[test]
fn vulkan_opaque_fd_frames_with_timelines_score_like_host_pictures() {
    let Some(vk) = vulkan() else { return };
    let pairs = golden_frames(golden("a_576x324_420p8_pan"), 3);
    let want = score_pictures(&pairs, 1);
    let format = *pairs[0].0.format();

    let acquire = vk.timeline();
    let mut allocations = Vec::new();
    let mut release_sems = Vec::new();
    let mut ctx = context(format, 1).build().unwrap();
    for (i, (r, d)) in pairs.iter().enumerate() {
        let mut frame = |p| {
            let packed = pack(p, PixelFormat::Nv12, 256);
            let (memory, fd, bytes) = vk.exportable(&packed.bytes);
            allocations.push(memory);
            // Releases may come in any order: one timeline per frame keeps
            // each one's values increasing.
            let released = vk.timeline();
            release_sems.push(released);
            let desc = FrameDesc::new(
                format.width,
                format.height,
                PixelFormat::Nv12,
                Memory::VulkanFd(unsafe { VulkanMemoryFd::new(fd, bytes, false) }),
                &packed.planes,
            );
            let timeline = |semaphore, value| unsafe {
                VulkanTimeline::new(vk.device.clone(), semaphore, value)
            };
            Frame::new(
                desc,
                Acquire::VulkanTimeline(timeline(acquire, i as u64 + 1)),
                vec![Release::VulkanTimeline(timeline(released, 1))],
            )
            .unwrap()
        };
        let (rf, df) = (frame(r), frame(d));
        ctx.submit_frames(&rf, &df).unwrap();
    }
    // Every submit returned with nothing signalled: none waited.
    assert_eq!(vk.counter(acquire), 0);
    for &s in &release_sems {
        assert_eq!(vk.counter(s), 0, "released before its acquire signalled");
    }

    // The producer's "GPU" signals each frame from another thread, later.
    std::thread::scope(|scope| {
        let vk = &vk;
        scope.spawn(move || {
            for value in 1..=pairs.len() as u64 {
                std::thread::sleep(Duration::from_millis(30));
                vk.signal(acquire, value);
            }
        });
        // The producer waits for each release before it would reuse the
        // memory; it need not call into the context for that (the CPU
        // engine reads on its fence thread).
        for &s in &release_sems {
            assert!(
                vk.wait(s, 1, Duration::from_secs(10)),
                "release never signalled"
            );
        }
    });
    let got = ctx.finish().unwrap();
    assert_identical("Vulkan opaque-fd NV12", &got, &want);

    for m in allocations {
        vk.free(m);
    }
    for s in release_sems.into_iter().chain([acquire]) {
        vk.destroy_semaphore(s);
    }
}

#[test]
fn two_frames_in_one_vulkan_allocation_are_read_at_their_offsets() {
    // Both frames of a pair in one allocation (a producer's pool), planar
    // 10-bit, acquire already signalled.
    let Some(vk) = vulkan() else { return };
    let pairs = golden_frames(golden("c_576x324_420p10_zoom"), 2);
    let want = score_pictures(&pairs, 2);
    let format = *pairs[0].0.format();
    let planar = PixelFormat::Planar {
        subsampling: format.subsampling,
        bit_depth: 10,
    };
    let done = vk.timeline();
    vk.signal(done, 5);
    let mut ctx = context(format, 2).build().unwrap();
    let mut allocations = Vec::new();
    for (r, d) in &pairs {
        let first = pack(r, planar, 0);
        let second = pack(d, planar, first.bytes.len() + 1024);
        let mut bytes = first.bytes.clone();
        bytes.resize(first.bytes.len() + 1024, 0);
        bytes.extend_from_slice(&second.bytes[bytes.len()..]);
        let (memory, fd, size) = vk.exportable(&bytes);
        allocations.push(memory);
        let frame = |fd, planes: &[_]| {
            let desc = FrameDesc::new(
                format.width,
                format.height,
                planar,
                Memory::VulkanFd(unsafe { VulkanMemoryFd::new(fd, size, false) }),
                planes,
            );
            let acquire =
                Acquire::VulkanTimeline(unsafe { VulkanTimeline::new(vk.device.clone(), done, 5) });
            Frame::new(desc, acquire, vec![]).unwrap()
        };
        let fd2 = std::os::fd::AsFd::as_fd(&fd).try_clone_to_owned().unwrap();
        ctx.submit_frames(&frame(fd, &first.planes), &frame(fd2, &second.planes))
            .unwrap();
    }
    assert_identical("Vulkan pool, planar 10-bit", &ctx.finish().unwrap(), &want);
    for m in allocations {
        vk.free(m);
    }
    vk.destroy_semaphore(done);
}
