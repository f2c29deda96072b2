//! Imported frames on the GPU engine: device acquire fences waited on the
//! library stream, the frames' memory bound to the extractors' planes
//! (`gpu::bind`: in place, or one device pass), frames held until their
//! readers have finished, device release signals fired after the last one.
//! No host memory is read on this path.

use super::gpu::{enqueue_all, GpuEngine, HostSide};
use super::*;
use crate::gpu::bind::{BindCounts, Binder, DeviceFrame, SourcePlane};
use crate::gpu::device::{Event, Stream};
use crate::gpu::driver::Handle;
use crate::import::{Acquire, Frame, FrameDesc, Memory, Release};
use std::collections::VecDeque;

/// Device frames in flight and what binds them.
#[derive(Default)]
pub(super) struct ImportedFrames {
    binder: Option<Binder>,
    /// Frames whose reads are queued, with the event after their last
    /// reader, oldest first.
    held: VecDeque<(Event, [Frame; 2])>,
    /// Copy (on the device) layouts that cannot be read in place instead of
    /// refusing them.
    pub(super) allow_device_copy: bool,
}

impl ImportedFrames {
    /// Drops the frames whose readers have finished: their release signals
    /// fire (after those of any other context still reading them).
    fn release_finished(&mut self) -> Result<()> {
        while let Some((done, _)) = self.held.front() {
            if !done.is_done()? {
                break;
            }
            self.held.pop_front();
        }
        Ok(())
    }

    /// Drops every held frame (the stream has been synchronized).
    pub(super) fn release_all(&mut self) {
        self.held.clear();
    }

    pub(super) fn counts(&self) -> BindCounts {
        self.binder.as_ref().map(Binder::counts).unwrap_or_default()
    }
}

/// Whether every memory object of the frame is device memory the engine
/// binds (host kinds go through the upload path instead).
pub(super) fn on_device(frame: &Frame) -> bool {
    frame
        .desc()
        .memory
        .iter()
        .all(|m| matches!(m, Memory::Device { .. }))
}

impl GpuEngine {
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
        if !self.on_gpu.iter().any(|(s, _, _)| wanted(*s)) {
            // Nothing reads this frame: the references go now and it is
            // released at once.
            return Ok(());
        }
        for (side, frame) in frames.iter().enumerate() {
            wait_on_device(&self.gpu, &self.stream, frame, index, side)?;
            signal_from_device(&self.gpu, frame);
        }
        let sources = [
            device_planes(frames[0].desc())?,
            device_planes(frames[1].desc())?,
        ];
        let device = [0, 1].map(|side| DeviceFrame {
            format: frames[side].desc().format,
            planes: &sources[side],
        });
        let binder = match &mut self.imported.binder {
            Some(b) => b,
            b => b.insert(Binder::new(&self.gpu)?),
        };
        let queued = (|| {
            let planes = self.planes.bind(
                binder,
                &self.stream,
                [&device[0], &device[1]],
                self.imported.allow_device_copy,
                &|side| frames[side].desc().error(0),
            )?;
            enqueue_all(&mut self.on_gpu, index, &planes, &self.stream, wanted)?;
            let done = self.gpu.event()?;
            done.record(&self.stream)?;
            Ok(done)
        })();
        let done = match queued {
            Ok(done) => done,
            Err(e) => {
                // Some reads may be queued: the frames are released only
                // once they have finished.
                let _ = self.stream.synchronize();
                return Err(e);
            }
        };
        self.imported
            .held
            .push_back((done, [frames[0].clone(), frames[1].clone()]));
        self.imported.release_finished()?;
        self.complete_older(collector)
    }
}

/// Each memory plane of a device frame as an address and pitch.
fn device_planes(desc: &FrameDesc) -> Result<Vec<SourcePlane>> {
    desc.planes
        .iter()
        .enumerate()
        .map(|(i, p)| match &desc.memory[p.memory] {
            Memory::Device { ptr, .. } => Ok(SourcePlane {
                ptr: ptr + p.layout.offset,
                pitch: p.layout.pitch as usize,
            }),
            other => Err(desc
                .error(p.memory)
                .plane(i)
                .reason(format!(
                    "{} memory cannot be bound by the GPU engine yet",
                    other.kind()
                ))
                .into()),
        })
        .collect()
}

/// Makes the library stream wait for the frame's device acquire fence.
/// Host fences were waited before the frame got here.
fn wait_on_device(
    gpu: &Gpu,
    stream: &Stream,
    frame: &Frame,
    index: u32,
    side: usize,
) -> Result<()> {
    let acquire = frame.acquire();
    match &*acquire {
        Acquire::None => Ok(()),
        // SAFETY: the producer's event of this device, alive until the
        // frame is released (its contract); the stream is ours.
        Acquire::DeviceEvent(raw) => unsafe {
            gpu.driver()
                .stream_wait_event(stream.handle(), Handle(raw.0))
        },
        other => Err(frame
            .desc()
            .error(0)
            .reason(format!(
                "frame {index} ({}): the {} acquire fence cannot be waited by the GPU engine yet",
                if side == 0 { "reference" } else { "distorted" },
                other.kind()
            ))
            .into()),
    }
}

/// Turns the frame's device release signals into host-fired ones that
/// signal from the device: they fire once every reader has finished (the
/// last reference goes only then), on a fresh stream with nothing queued.
fn signal_from_device(gpu: &Gpu, frame: &Frame) {
    for release in frame.releases().iter_mut() {
        if let Release::DeviceEvent(raw) = *release {
            let gpu = gpu.clone();
            *release = Release::Callback(Box::new(move || {
                if let Ok(stream) = gpu.stream() {
                    // SAFETY: the producer's event, alive until its frame
                    // is released (now); the stream is ours. A failure has
                    // no one to report to: the producer's wait names it.
                    let _ = unsafe { gpu.driver().event_record(Handle(raw.0), stream.handle()) };
                }
            }));
        }
    }
}
