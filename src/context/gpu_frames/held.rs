//! A device pair in flight: held until an event after its last reader has
//! completed, with the imports made for it, and the graveyard that destroys
//! those imports only when that cannot block.

use super::releaser::HeldFrames;
use crate::error::Result;
use crate::gpu::device::{Event, Stream};
use crate::gpu::external::{ExternalMemory, ExternalSemaphore};
use std::sync::{Arc, Mutex};
use std::time::Instant;

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
    /// reuse ([`super::imported::ImportedFrames::release_finished`]).
    pub(crate) done: Option<Event>,
    /// Let go of by the releaser thread once read (`releaser`), or here.
    pub(crate) frames: HeldFrames,
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
    pub(super) fn pending_acquire(&self) -> Result<Option<(&str, &Event)>> {
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
        self.frames.let_go();
        let imports = std::mem::take(&mut self.imports);
        if !imports.memory.is_empty() || !imports.semaphores.is_empty() {
            self.graveyard.bury(imports);
        }
    }
}

/// A stream that only ever carries release signals (event records,
/// semaphore signals), so each completes as soon as it is queued. Shared by
/// the release callbacks, which run on whichever thread lets go of a frame
/// last.
pub(crate) type ReleaseStream = Arc<Mutex<Stream>>;

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
