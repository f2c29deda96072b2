//! Device frames in flight: each pair held until an event after its last
//! reader has completed, with the imports made for it, and the graveyard
//! that destroys those imports only when that cannot block.

use super::imports::Imports;
use crate::error::Error;
use crate::error::Result;
use crate::gpu::bind::{BindCounts, Binder};
use crate::gpu::device::{Event, Gpu, Stream};
use crate::gpu::external::{ExternalMemory, ExternalSemaphore};
use crate::import::{Frame, HostFence};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A pair whose reads are queued: the event after its last reader, the
/// frames and the imports made for them.
pub(crate) struct Held {
    /// Each device acquire fence's name, and an event recorded right after
    /// the stream's wait for it (waits queued in order: the first not done
    /// names the fence the stream still waits for).
    pub(crate) acquires: Vec<(String, Event)>,
    /// When the pair was queued: its fences' time limit runs from here.
    pub(crate) since: Instant,
    /// Recorded after the pair's last reader; `None` once handed back for
    /// reuse ([`ImportedFrames::release_finished`]).
    pub(crate) done: Option<Event>,
    pub(crate) _frames: [Frame; 2],
    pub(crate) imports: Imported,
    pub(crate) graveyard: Graveyard,
}

/// Runtime imports made for one frame pair.
#[derive(Default)]
pub(crate) struct Imported {
    pub(crate) memory: Vec<Arc<ExternalMemory>>,
    pub(crate) semaphores: Vec<ExternalSemaphore>,
}

impl Held {
    /// The first acquire fence the stream still waits for (its name and
    /// the event after the wait), if any.
    fn pending_acquire(&self) -> Result<Option<(&str, &Event)>> {
        for (name, event) in &self.acquires {
            if !event.is_done()? {
                return Ok(Some((name, event)));
            }
        }
        Ok(None)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let imports = std::mem::take(&mut self.imports);
        if !imports.memory.is_empty() || !imports.semaphores.is_empty() {
            self.graveyard.bury(imports);
        }
    }
}

/// Imports whose frames are done, destroyed only while the library stream
/// is idle.
///
/// Destroying an import synchronizes the device inside the runtime (holding
/// its context lock). While the stream waits for a producer's semaphore that
/// the producer signals only after `submit` returns, that would block
/// forever, on this thread or, through the lock, on any other.
#[derive(Clone, Default)]
pub(crate) struct Graveyard(Arc<Mutex<Vec<Box<dyn Send>>>>);

impl Graveyard {
    pub(crate) fn bury<T: Send + 'static>(&self, doomed: T) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Box::new(doomed));
    }

    /// Destroys what was buried (call only with no queued waits pending).
    pub(crate) fn empty(&self) {
        let doomed = std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()));
        drop(doomed);
    }
}

/// Device frames in flight and what binds them.
#[derive(Default)]
pub(crate) struct ImportedFrames {
    /// How long a device-waited acquire fence may take (the context's
    /// `fence_timeout`).
    pub(crate) fence_timeout: Duration,
    /// A device-waited fence that timed out, and the limit: the library
    /// stream waits for it for good (a queued wait cannot be withdrawn), so
    /// the engine is finished and leaks its device objects rather than
    /// block in their destruction.
    pub(crate) stuck: Option<(String, u64)>,
    pub(crate) binder: Option<Binder>,
    pub(crate) imports: Imports,
    /// Frames whose reads are queued, with the event after their last
    /// reader, oldest first.
    pub(crate) held: VecDeque<Held>,
    /// Imports of finished frames, waiting for an idle stream.
    pub(crate) graveyard: Graveyard,
    /// Copy (on the device) layouts that cannot be read in place instead of
    /// refusing them.
    pub(crate) allow_device_copy: bool,
    /// `done` events of released pairs, recorded again for later pairs
    /// (an event a frame would cost two runtime calls a frame).
    pub(crate) spare_events: Vec<Event>,
    /// The stream release signals are sent from (made at the first one).
    pub(crate) release_stream: Option<ReleaseStream>,
    /// A stream that only waits for acquire events, each wait followed by
    /// a host function that wakes the submitting thread (made at the first
    /// wait): the host sleeps until the device passes the fence, no
    /// polling.
    pub(crate) watch: Option<Stream>,
}

/// A stream that only ever carries release signals (event records,
/// semaphore signals), so each completes as soon as it is queued. Shared by
/// the release callbacks, which run on whichever thread lets go of a frame
/// last.
pub(crate) type ReleaseStream = Arc<Mutex<Stream>>;

impl ImportedFrames {
    /// An event for a pair's `done`: a spare one, else a new one.
    pub(crate) fn done_event(&mut self, gpu: &crate::gpu::Gpu) -> Result<Event> {
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
    pub(crate) fn empty_graveyard_if_idle(&mut self) -> Result<()> {
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
