//! The GPU engine's import half: device frames in flight, the imports
//! made for them, their acquire waits and release signals, and the layout
//! kernels that bind them. Its fields are its own: the engine asks it to
//! import a pair, to bind it, to hold it, and to wait for its fences.

use super::fences::{acquire_wait, signal_from_device, DeviceWait};
use super::held::{Graveyard, Held, Imported, ReleaseStream};
use super::imports::Imports;
use super::releaser::HeldFrames;
use crate::error::{Error, Result};
use crate::gpu::bind::{BindCounts, Binder, SourcePlane};
use crate::gpu::device::{Event, Gpu, Stream};
use crate::import::{Frame, HostFence};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// A pair's planes as linear device memory, per side, and its acquire
/// fences (each fence's name and the event after its wait).
pub(crate) struct ImportedPair {
    pub(crate) sources: [Vec<SourcePlane>; 2],
    pub(crate) acquires: Vec<(String, Event)>,
}

/// Device frames in flight and what binds them.
#[derive(Default)]
pub(crate) struct ImportedFrames {
    /// How long a device-waited acquire fence may take (the context's
    /// `fence_timeout`).
    fence_timeout: Duration,
    /// A device-waited fence that timed out, and the limit: the library
    /// stream waits for it for good (a queued wait cannot be withdrawn), so
    /// the engine is finished and leaks its device objects rather than
    /// block in their destruction.
    stuck: Option<(String, u64)>,
    binder: Option<Binder>,
    imports: Imports,
    /// Frames whose reads are queued, with the event after their last
    /// reader, oldest first.
    held: VecDeque<Held>,
    /// Imports of finished frames, waiting for an idle stream.
    graveyard: Graveyard,
    /// Copy (on the device) layouts that cannot be read in place instead of
    /// refusing them.
    allow_device_copy: bool,
    /// `done` events of released pairs, recorded again for later pairs
    /// (an event a frame would cost two runtime calls a frame).
    spare_events: Vec<Event>,
    /// The stream release signals are sent from (made at the first one).
    release_stream: Option<ReleaseStream>,
    /// A stream that only waits for acquire events, each wait followed by
    /// a host function that wakes the submitting thread (made at the first
    /// wait): the host sleeps until the device passes the fence, no
    /// polling.
    watch: Option<Stream>,
}

impl ImportedFrames {
    /// The context's settings: how long a device-waited acquire fence may
    /// take, and whether layouts the kernels cannot read in place are
    /// copied on the device (else refused).
    pub(crate) fn configure(&mut self, fence_timeout: Duration, allow_device_copy: bool) {
        self.fence_timeout = fence_timeout;
        self.allow_device_copy = allow_device_copy;
    }

    /// Whether a device-waited fence timed out (the engine is finished).
    pub(crate) fn is_stuck(&self) -> bool {
        self.stuck.is_some()
    }

    /// Forgets everything a queued wait for a timed-out fence may still
    /// reach (frames, imports, the layout kernels, the watch stream):
    /// destroying them would block in the runtime until the fence signals,
    /// and the producer's frames must not be released meanwhile.
    pub(crate) fn leak(&mut self) {
        std::mem::forget(std::mem::take(&mut self.held));
        std::mem::forget(self.graveyard.clone());
        std::mem::forget(self.binder.take());
        std::mem::forget(self.watch.take());
    }

    /// The import half of a device pair, everything before its reads: the
    /// imports of finished frames destroyed if nothing waits, the layout
    /// kernels loaded, each frame's memory imported and its device release
    /// signals taken over, then (after every import: the runtime may
    /// synchronize the device inside one, and a queued wait for a
    /// producer's semaphore would then never end) its acquire waits queued
    /// on `entry`, each followed by an event, and its planes as linear
    /// device memory.
    pub(crate) fn import_pair(
        &mut self,
        gpu: &Gpu,
        entry: &Stream,
        index: u32,
        frames: [&Frame; 2],
    ) -> Result<ImportedPair> {
        self.empty_graveyard_if_idle()?;
        self.imports.pending = Imported::default();
        self.imports.bases.clear();
        if self.binder.is_none() {
            // A module load may synchronize the device too.
            self.binder = Some(Binder::new(gpu)?);
        }
        let mut waits = Vec::new();
        for (side, frame) in frames.iter().enumerate() {
            waits.extend(acquire_wait(gpu, frame, index, side)?);
            signal_from_device(gpu, frame, &self.graveyard, &mut self.release_stream)?;
            self.imports.import_memory(gpu, side, frame.desc())?;
        }
        // An event after each wait tells which fence a stalled frame is
        // still waiting for (`wait_acquired`).
        let mut acquires = Vec::new();
        for (wait, name) in waits {
            match wait {
                // SAFETY: the producer's event of this device, alive until
                // the frame is released (its contract); the stream is ours.
                DeviceWait::Event(raw) => unsafe {
                    gpu.driver()
                        .stream_wait_event(entry.handle(), raw.handle())?
                },
                DeviceWait::Semaphore(semaphore, value) => {
                    entry.wait_semaphore(&semaphore, value)?;
                    // Kept until the frame's reads are done.
                    self.imports.pending.semaphores.push(semaphore);
                }
            }
            let waited = gpu.event()?;
            waited.record(entry)?;
            acquires.push((name, waited));
        }
        let mut sources = [Vec::new(), Vec::new()];
        for (side, frame) in frames.iter().enumerate() {
            sources[side] = self.imports.planes(gpu, entry, side, frame.desc())?;
        }
        Ok(ImportedPair { sources, acquires })
    }

    /// What binding the pair's planes needs: the layout kernels (loaded by
    /// [`ImportedFrames::import_pair`]), whether device copies are allowed,
    /// and an event for the pair's last reader.
    pub(crate) fn for_binding(&mut self, gpu: &Gpu) -> (&mut Binder, bool, Result<Event>) {
        let done = self.done_event(gpu);
        let binder = self.binder.as_mut().expect("loaded by import_pair");
        (binder, self.allow_device_copy, done)
    }

    /// Holds a queued pair until `done` (recorded on `exit` after its last
    /// reader), with the imports made for it: its frames are let go of as
    /// soon as `exit` gets there (`releaser`); releases the pairs finished
    /// since.
    pub(crate) fn hold(
        &mut self,
        frames: [&Frame; 2],
        acquires: Vec<(String, Event)>,
        done: Event,
        exit: &Stream,
    ) -> Result<()> {
        let imports = std::mem::take(&mut self.imports.pending);
        let signals = frames.iter().any(|f| !f.releases().is_empty());
        let frames = HeldFrames::new(frames);
        if signals {
            // Nothing to fire otherwise: letting go at the next call costs
            // no producer anything, and saves a host function per pair.
            frames.let_go_after(exit);
        }
        self.held.push_back(Held {
            acquires,
            since: Instant::now(),
            done: Some(done),
            frames,
            imports,
            graveyard: self.graveyard.clone(),
        });
        self.release_finished()
    }

    /// A pair that failed after its imports (some reads may be queued: the
    /// caller has synchronized the streams): its imports and every held
    /// frame go.
    pub(crate) fn abandon_pair(&mut self) {
        self.imports.pending = Imported::default();
        self.release_all();
    }

    /// An event for a pair's `done`: a spare one, else a new one.
    fn done_event(&mut self, gpu: &Gpu) -> Result<Event> {
        match self.spare_events.pop() {
            Some(event) => Ok(event),
            None => gpu.event(),
        }
    }

    /// Drops the frames whose readers have finished: their release signals
    /// fire (after those of any other context still reading them).
    pub(crate) fn release_finished(&mut self) -> Result<()> {
        while let Some(held) = self.held.front_mut() {
            match &held.done {
                Some(done) if !done.is_done()? => break,
                _ => {}
            }
            self.spare_events.extend(held.done.take());
            self.held.pop_front();
        }
        Ok(())
    }

    /// Drops every held frame (the stream has been synchronized, or an
    /// error left it so) and destroys their imports.
    pub(crate) fn release_all(&mut self) {
        self.held.clear();
        self.graveyard.empty();
    }

    /// Destroys finished frames' imports when no queued wait is still
    /// unsatisfied (checked before this frame's waits are queued): the
    /// destruction may then wait for running kernels, never for a producer.
    fn empty_graveyard_if_idle(&mut self) -> Result<()> {
        self.release_finished()?;
        for held in &self.held {
            if held.pending_acquire()?.is_some() {
                return Ok(());
            }
        }
        self.graveyard.empty();
        Ok(())
    }

    /// The error of a stalled engine, if it is one.
    pub(crate) fn check_stuck(&self) -> Result<()> {
        match &self.stuck {
            Some((fence, waited_ms)) => Err(Error::FenceTimeout {
                fence: fence.clone(),
                waited_ms: *waited_ms,
            }),
            None => Ok(()),
        }
    }

    /// Waits on the host until the device acquire fences of every held
    /// pair but the newest `keep` have been signalled: before the host
    /// blocks on work that runs after those waits. The thread sleeps until
    /// the device has passed the fence (a host function queued behind it
    /// on the watch stream). A fence not signalled within the time limit
    /// (counted from the pair's submission) is named in
    /// [`Error::FenceTimeout`], and the engine is stuck from then on.
    pub(crate) fn wait_acquired(&mut self, gpu: &Gpu, keep: usize) -> Result<()> {
        self.check_stuck()?;
        let waited = self.held.len().saturating_sub(keep);
        for held in self.held.iter().take(waited) {
            while let Some((name, event)) = held.pending_acquire()? {
                let elapsed = held.since.elapsed();
                let passed = elapsed < self.fence_timeout && {
                    let watch = match &mut self.watch {
                        Some(w) => w,
                        w => w.insert(gpu.stream()?),
                    };
                    let woken = HostFence::new();
                    let wake = woken.clone();
                    watch.wait(event)?;
                    watch.after_queued_work(Box::new(move || wake.signal()))?;
                    woken.wait(self.fence_timeout - elapsed)
                };
                if !passed {
                    self.stuck = Some((name.to_string(), self.fence_timeout.as_millis() as u64));
                    return self.check_stuck();
                }
            }
        }
        Ok(())
    }

    /// Planes of host-memory frames transferred to the device.
    pub(crate) fn host_uploads(&self) -> u64 {
        self.imports.host_uploads
    }

    pub(crate) fn counts(&self) -> BindCounts {
        let mut counts = self.binder.as_ref().map(Binder::counts).unwrap_or_default();
        counts.arrays = self.imports.array_copies;
        counts
    }
}
