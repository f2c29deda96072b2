//! Device frames in flight: each pair held until an event after its last
//! reader has completed, with the imports made for it, and the graveyard
//! that destroys those imports only when that cannot block.

use super::imports::Imports;
use crate::error::Result;
use crate::gpu::bind::{BindCounts, Binder};
use crate::gpu::device::Event;
use crate::gpu::external::{ExternalMemory, ExternalSemaphore};
use crate::import::Frame;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// A pair whose reads are queued: the event after its last reader, the
/// frames and the imports made for them.
pub(crate) struct Held {
    /// Recorded after the pair's acquire waits.
    pub(crate) acquired: Event,
    pub(crate) done: Event,
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
}

impl ImportedFrames {
    /// Drops the frames whose readers have finished: their release signals
    /// fire (after those of any other context still reading them).
    pub(crate) fn release_finished(&mut self) -> Result<()> {
        while let Some(held) = self.held.front() {
            if !held.done.is_done()? {
                break;
            }
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
            if !held.acquired.is_done()? {
                return Ok(());
            }
        }
        self.graveyard.empty();
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
