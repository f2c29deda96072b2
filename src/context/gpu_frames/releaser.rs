//! Device frames let go of as soon as the device has read them, not at the
//! engine's next call.
//!
//! A host function queued after a pair's last reader hands the pair to one
//! process-wide thread, which drops the engine's references to its frames
//! (their release signals fire then, after any other context's). Host
//! functions may not call the runtime and a release may (it records a
//! producer's event), hence the thread. Without it a pair was let go of
//! only when the engine next looked (the next submit or `finish`), so a
//! producer that waits for a pool frame before submitting again waited
//! until its time limit.

use crate::gpu::device::Stream;
use crate::import::Frame;
use crossbeam_channel::Sender;
use std::sync::{Arc, Mutex, OnceLock};

/// A held pair's frames: taken (and so dropped) once, by the releaser
/// thread or by the engine, whichever comes first. Whoever takes them drops
/// them under the lock, so once the engine has taken the lock the frames
/// are gone.
#[derive(Clone)]
pub(crate) struct HeldFrames(Arc<Mutex<Option<[Frame; 2]>>>);

impl HeldFrames {
    pub(crate) fn new(frames: [&Frame; 2]) -> Self {
        Self(Arc::new(Mutex::new(Some([
            frames[0].clone(),
            frames[1].clone(),
        ]))))
    }

    /// Drops the engine's references (a no-op once done).
    pub(crate) fn let_go(&self) {
        let mut frames = self.0.lock().unwrap_or_else(|e| e.into_inner());
        drop(frames.take());
    }

    /// Lets go of the frames once `exit` has run the work queued so far
    /// (the pair's last reader). Where that cannot be arranged (no thread,
    /// the host function refused), the engine lets go when it next finds
    /// the pair done, as before.
    pub(crate) fn let_go_after(&self, exit: &Stream) {
        let Some(releaser) = releaser() else {
            return;
        };
        let (frames, releaser) = (self.clone(), releaser.clone());
        // Sends only: a host function may not call the runtime. A refused
        // one is dropped uncalled, which drops only this clone.
        let _ = exit.after_queued_work(Box::new(move || {
            let _ = releaser.send(frames);
        }));
    }
}

/// The releaser thread's inbox, started at the first use; `None` if the
/// thread could not be started.
fn releaser() -> Option<&'static Sender<HeldFrames>> {
    static RELEASER: OnceLock<Option<Sender<HeldFrames>>> = OnceLock::new();
    RELEASER
        .get_or_init(|| {
            let (inbox, frames) = crossbeam_channel::unbounded::<HeldFrames>();
            std::thread::Builder::new()
                .name("vmafx-releases".into())
                .spawn(move || {
                    for pair in frames {
                        pair.let_go();
                    }
                })
                .ok()?;
            Some(inbox)
        })
        .as_ref()
}
