//! Imported frames on the GPU engine: device acquire fences waited on the
//! library stream, the frames' memory bound to the extractors' planes
//! (`gpu::bind`: in place, or one device pass), frames held until their
//! readers have finished, device release signals fired after the last one.
//! Nothing is copied on the CPU on this path (host-memory frames are
//! transferred by the device).
//!
//! - [`imported`]: the import half as one type with private fields
//!   (`ImportedFrames`): import a pair, bind it, hold it, wait for its
//!   fences.
//! - [`held`]: a pair in flight, its imports, and when imports may go.
//! - [`imports`]: a frame's memory as linear device planes.
//! - [`fences`]: device acquire waits and device release signals.
//! - [`releaser`]: frames let go of as soon as the device has read them.

mod fences;
mod held;
mod imported;
mod imports;
mod releaser;

pub(crate) use imported::ImportedFrames;

use super::gpu::{enqueue_all, GpuEngine, HostSide};
use super::*;
use crate::gpu::bind::DeviceFrame;
use crate::import::host_read::{device_only_part, read_frame};
use crate::import::{Frame, Memory};

/// Whether the engine binds the frame on the device: device memory of any
/// kind, and host memory (transferred plane by plane by the device) when no
/// extractor of the set runs on the host. Host fds, and host memory for a
/// set with host extractors, are read on the host instead.
fn bound_on_device(frame: &Frame, host_extractors: bool) -> bool {
    frame.desc().memory.iter().all(|m| match m {
        Memory::HostFd { .. } => false,
        Memory::Host(_) => !host_extractors,
        _ => true,
    })
}

impl GpuEngine {
    /// The context's frame queue hands each pair here in submission order,
    /// once its host-waited fences have signalled (device fences are still
    /// in the frames). Device memory is bound on the device; host-mappable
    /// memory is read on the host and uploaded like host pictures.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn submit_frames(
        &mut self,
        index: u32,
        reference: Frame,
        distorted: Frame,
        scored: bool,
        slots: &[Slot],
        collector: &mut FeatureCollector,
        error: &mut Option<Error>,
    ) -> Result<()> {
        // A stuck engine must not import (an import may synchronize the
        // device, which waits for the timed-out fence).
        self.imported.check_stuck()?;
        let host_extractors = match &self.on_host {
            HostSide::Inline(x) => !x.is_empty(),
            HostSide::Threaded(_) => true,
        };
        if bound_on_device(&reference, host_extractors)
            && bound_on_device(&distorted, host_extractors)
        {
            return self.submit_device_frames(
                index,
                [&reference, &distorted],
                scored,
                slots,
                collector,
            );
        }
        for frame in [&reference, &distorted] {
            if let Some((e, what)) = device_only_part(frame) {
                return Err(e
                    .reason(format!(
                        "{what} cannot be mixed with host memory in one pair on the GPU engine"
                    ))
                    .into());
            }
        }
        let planes = self.planes_needed();
        let pair = Arc::new((
            read_frame(&reference, planes)?,
            read_frame(&distorted, planes)?,
        ));
        // The copies are ours: the producer may reuse its memory now.
        drop((reference, distorted));
        self.submit(
            index,
            Pictures::Shared(pair),
            scored,
            slots,
            collector,
            error,
        )
    }

    /// Scores a pair of device frames: nothing is copied from the host.
    pub(super) fn submit_device_frames(
        &mut self,
        index: u32,
        frames: [&Frame; 2],
        scored: bool,
        slots: &[Slot],
        collector: &mut FeatureCollector,
    ) -> Result<()> {
        let on_host: Vec<&str> = match &self.on_host {
            HostSide::Inline(x) => x.iter().map(|(s, _)| slots[*s].info.name).collect(),
            HostSide::Threaded(w) => w.slots.iter().map(|&s| slots[s].info.name).collect(),
        };
        if !on_host.is_empty() {
            return Err(frames[0]
                .desc()
                .error(0)
                .reason(format!(
                    "device frames are scored on the device, and {} {} no GPU version yet",
                    on_host.join(", "),
                    if on_host.len() == 1 { "has" } else { "have" }
                ))
                .into());
        }
        let wanted = |slot: usize| scored || slots[slot].temporal;
        if !self.on_gpu.iter().any(|x| wanted(x.slot)) {
            // Nothing reads this frame: the references go now and it is
            // released at once.
            return Ok(());
        }
        let entry = self.lanes.entry();
        let pair = self.imported.import_pair(&self.gpu, entry, index, frames)?;
        let device = [0, 1].map(|side| DeviceFrame {
            format: frames[side].desc().format,
            planes: &pair.sources[side],
        });
        let (binder, allow_device_copy, done) = self.imported.for_binding(&self.gpu);
        let queued = (|| {
            let done = done?;
            let planes = self.planes.bind(
                binder,
                self.lanes.entry(),
                [&device[0], &device[1]],
                allow_device_copy,
                &|side| frames[side].desc().error(0),
            )?;
            let set = planes.set();
            enqueue_all(&mut self.on_gpu, index, &planes, &self.lanes, wanted)?;
            self.planes.release(set, self.lanes.exit())?;
            done.record(self.lanes.exit())?;
            Ok(done)
        })();
        let done = match queued {
            Ok(done) => done,
            Err(e) => {
                // Some reads may be queued: the frames are released only
                // once they have finished.
                let _ = self.lanes.synchronize();
                self.imported.abandon_pair();
                return Err(e);
            }
        };
        self.imported
            .hold(frames, pair.acquires, done, self.lanes.exit())?;
        self.complete_older(collector)
    }
}

#[cfg(test)]
mod tests {
    //! The order the GPU engine gives a device frame's operations, on the
    //! recording mock driver: every import before the first queued wait,
    //! the wait before the frame's reads, the release signal after them,
    //! every import destroyed by the end, and the frame released.

    use super::*;
    use crate::gpu::mock::{Call, DeviceOrder, MockDriver};
    use crate::import::{Acquire, FrameDesc, HostFence, PixelFormat, PlaneLayout, Release};
    use crate::picture::ChromaSubsampling;

    fn memfd() -> std::os::fd::OwnedFd {
        nix::sys::memfd::memfd_create(c"mock", nix::sys::memfd::MemFdCreateFlag::MFD_CLOEXEC)
            .unwrap()
    }

    fn vulkan_frame(fence: &HostFence) -> Frame {
        let desc = FrameDesc::new(
            64,
            32,
            PixelFormat::Nv12,
            // SAFETY: the mock driver imports nothing.
            Memory::VulkanFd(unsafe {
                crate::import::VulkanMemoryFd::new(memfd(), 256 * 48, true)
            }),
            &[PlaneLayout::new(0, 256), PlaneLayout::new(256 * 32, 256)],
        );
        Frame::new(
            desc,
            Acquire::VulkanSemaphoreFd {
                fd: memfd(),
                value: Some(1),
            },
            vec![
                Release::VulkanSemaphoreFd {
                    fd: memfd(),
                    value: Some(1),
                },
                Release::Host(fence.clone()),
            ],
        )
        .unwrap()
    }

    /// A psnr context on `gpu` for 64x32 4:2:0 frames.
    fn psnr_on(gpu: crate::gpu::Gpu) -> ContextBuilder {
        let format =
            crate::picture::PictureFormat::new(64, 32, ChromaSubsampling::Yuv420, 8).unwrap();
        ContextBuilder::new(format)
            .feature("psnr", Vec::new())
            .gpu(gpu)
    }

    #[test]
    fn imports_precede_waits_which_precede_reads_and_releases_follow() {
        let (mock, gpu) = MockDriver::gpu();
        let mut ctx = psnr_on(gpu).build().unwrap();
        let fence = HostFence::new();
        let (r, d) = (vulkan_frame(&fence), vulkan_frame(&fence));
        ctx.submit_frames(&r, &d).unwrap();
        drop((r, d));
        let (counts, host) = ctx.transfer_counts().unwrap();
        ctx.finish().unwrap();
        assert!(fence.is_signalled(), "released after the context finished");
        assert_eq!(host, 0);
        assert_eq!(counts.in_place, 2, "NV12 luma read where it is");
        assert_eq!(counts.passes, 2, "one chroma split per picture");

        let log = mock.log();
        let first = |f: &dyn Fn(&Call) -> bool| log.iter().position(f).unwrap();
        let last = |f: &dyn Fn(&Call) -> bool| log.iter().rposition(f).unwrap();
        let count = |f: &dyn Fn(&Call) -> bool| log.iter().filter(|c| f(c)).count();
        let is_import =
            |c: &Call| matches!(c, Call::ImportMemory { .. } | Call::ImportSemaphore { .. });
        let is_wait = |c: &Call| matches!(c, Call::WaitSemaphore { value: 1, .. });
        let is_read = |c: &Call| matches!(c, Call::Launch { .. });
        let is_signal = |c: &Call| matches!(c, Call::SignalSemaphore { value: 1, .. });
        // 2 memory imports, 2 acquire and 2 release semaphores.
        assert_eq!(count(&|c| matches!(c, Call::ImportMemory { .. })), 2);
        assert_eq!(count(&|c| matches!(c, Call::ImportSemaphore { .. })), 4);
        assert_eq!(count(&is_wait), 2);
        assert!(
            last(&is_import) < first(&is_wait),
            "an import after a queued wait: {log:#?}"
        );
        // In the device's order (streams, events, host waits), not just
        // the order of the calls.
        let order = DeviceOrder::new(&log);
        let all = |f: &dyn Fn(&Call) -> bool| -> Vec<usize> {
            (0..log.len()).filter(|&i| f(&log[i])).collect()
        };
        for r in all(&is_read) {
            for w in all(&is_wait) {
                assert!(
                    order.before(w, r),
                    "read {r} may run before wait {w}: {log:#?}"
                );
            }
        }
        assert_eq!(count(&is_signal), 2);
        for s in all(&is_signal) {
            for r in all(&is_read) {
                assert!(
                    order.before(r, s),
                    "release {s} may run before read {r}: {log:#?}"
                );
            }
        }
        // Nothing leaks: every import destroyed, mappings freed.
        assert_eq!(count(&|c| matches!(c, Call::DestroyExternalMemory(_))), 2);
        assert_eq!(count(&|c| matches!(c, Call::FreeExternalBuffer(_))), 2);
        assert_eq!(count(&|c| matches!(c, Call::DestroySemaphore(_))), 4);
    }

    #[test]
    fn a_device_fence_that_never_signals_times_out_naming_itself() {
        let (mock, gpu) = MockDriver::gpu();
        mock.stall_semaphore_waits();
        let timeout = std::time::Duration::from_millis(40);
        let mut ctx = psnr_on(gpu).fence_timeout(timeout).build().unwrap();
        let fence = HostFence::new();
        // IN_FLIGHT pairs stay in flight; the next submit waits for the
        // first pair's acquire before blocking on its results, and times out.
        let started = std::time::Instant::now();
        let mut outcome = Ok(());
        for _ in 0..=crate::gpu::feature::IN_FLIGHT {
            let (r, d) = (vulkan_frame(&fence), vulkan_frame(&fence));
            outcome = ctx.submit_frames(&r, &d);
            if outcome.is_err() {
                break;
            }
        }
        match outcome {
            Err(Error::FenceTimeout { fence, waited_ms }) => {
                assert_eq!(
                    fence,
                    "Vulkan timeline semaphore (acquire of frame 0, reference)"
                );
                assert_eq!(waited_ms, 40);
            }
            other => panic!("expected a fence timeout, got {other:?}"),
        }
        assert!(started.elapsed() >= timeout);
        // Stuck for good: the next pair fails at once, importing nothing.
        let imports = mock
            .log()
            .iter()
            .filter(|c| matches!(c, Call::ImportMemory { .. }))
            .count();
        let (r, d) = (vulkan_frame(&fence), vulkan_frame(&fence));
        assert!(matches!(
            ctx.submit_frames(&r, &d),
            Err(Error::FenceTimeout { .. })
        ));
        let after = mock.log();
        assert_eq!(
            after
                .iter()
                .filter(|c| matches!(c, Call::ImportMemory { .. }))
                .count(),
            imports
        );
        assert!(matches!(ctx.finish(), Err(Error::FenceTimeout { .. })));
        // Nothing a queued read may still touch was released or freed.
        assert!(!fence.is_signalled(), "a frame was released");
        let log = mock.log();
        assert!(!log.iter().any(|c| matches!(
            c,
            Call::DestroyExternalMemory(_) | Call::Free(_) | Call::SignalSemaphore { .. }
        )));
    }

    #[test]
    fn a_device_fence_signalled_late_wakes_the_submitting_thread() {
        let (mock, gpu) = MockDriver::gpu();
        mock.stall_semaphore_waits();
        let mut ctx = psnr_on(gpu)
            .fence_timeout(std::time::Duration::from_secs(30))
            .build()
            .unwrap();
        let fence = HostFence::new();
        let late = std::time::Duration::from_millis(60);
        let started = std::time::Instant::now();
        let producer = {
            let mock = mock.clone();
            std::thread::spawn(move || {
                std::thread::sleep(late);
                mock.end_stalls(); // the producer signals its semaphores
            })
        };
        // The submit after IN_FLIGHT pairs waits for the first pair's
        // acquire: it returns once the device has passed it, woken by the
        // host function behind the wait (no timeout, no polling interval).
        for _ in 0..=crate::gpu::feature::IN_FLIGHT {
            let (r, d) = (vulkan_frame(&fence), vulkan_frame(&fence));
            ctx.submit_frames(&r, &d).unwrap();
        }
        let waited = started.elapsed();
        producer.join().unwrap();
        assert!(
            waited >= late,
            "returned before the fence signalled: {waited:?}"
        );
        assert!(waited < std::time::Duration::from_secs(10), "{waited:?}");
        // Asleep meanwhile: a poll every 200 µs would have asked ~300 times.
        let queries = mock
            .log()
            .iter()
            .filter(|c| matches!(c, Call::EventQuery(_)))
            .count();
        assert!(queries < 30, "{queries} event queries while waiting");
        ctx.finish().unwrap();
        assert!(fence.is_signalled(), "every frame released once read");
    }

    /// A producer waiting for its frame back (a small pool) before it
    /// submits again gets it once the device has read it: the release does
    /// not wait for the context's next call.
    #[test]
    fn a_pair_is_released_once_read_without_another_call() {
        let (mock, gpu) = MockDriver::gpu();
        mock.stall_semaphore_waits();
        let mut ctx = psnr_on(gpu).build().unwrap();
        let fence = HostFence::new();
        let (r, d) = (vulkan_frame(&fence), vulkan_frame(&fence));
        ctx.submit_frames(&r, &d).unwrap();
        drop((r, d));
        let wait = std::time::Duration::from_secs(5);
        assert!(
            !fence.wait(std::time::Duration::from_millis(50)),
            "released before the device read it"
        );
        mock.end_stalls(); // the device passes the acquire and reads the pair
        assert!(fence.wait(wait), "not released once read");
        ctx.finish().unwrap();
    }

    #[test]
    fn device_frames_are_published_as_they_finish() {
        let (_mock, gpu) = MockDriver::gpu();
        let mut ctx = psnr_on(gpu).build().unwrap();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let s = seen.clone();
        ctx.on_frame(move |index, _| s.lock().unwrap().push(index));
        let fence = HostFence::new();
        let frames = 6;
        for _ in 0..frames {
            let (r, d) = (vulkan_frame(&fence), vulkan_frame(&fence));
            ctx.submit_frames(&r, &d).unwrap();
        }
        // Frames older than those in flight are complete before the end.
        let during = seen.lock().unwrap().len();
        assert!(
            during >= frames - 1 - crate::gpu::feature::IN_FLIGHT,
            "{during}"
        );
        assert_eq!(ctx.frames_complete() as usize, during);
        ctx.finish().unwrap();
        assert_eq!(
            *seen.lock().unwrap(),
            (0..frames as u32).collect::<Vec<_>>()
        );
    }
}
