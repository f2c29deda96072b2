//! Drops runtime objects off the calling thread.
//!
//! Destroying an imported allocation frees its mapping, and the runtime
//! synchronizes the whole device to do it. While the library stream waits
//! for a producer's semaphore that the producer signals only after `submit`
//! returns, that would block `submit` forever. Imports whose frames are done
//! are therefore handed to one thread that drops them; it blocks, if it must,
//! until the producer's signal has come, and nobody waits for it.

use std::sync::mpsc::{channel, Sender};
use std::sync::{Mutex, OnceLock};

type Doomed = Box<dyn Send>;

fn reaper() -> &'static Mutex<Sender<Doomed>> {
    static REAPER: OnceLock<Mutex<Sender<Doomed>>> = OnceLock::new();
    REAPER.get_or_init(|| {
        let (tx, rx) = channel::<Doomed>();
        std::thread::Builder::new()
            .name("vmafx-reaper".into())
            .spawn(move || rx.into_iter().for_each(drop))
            .expect("spawning the reaper thread");
        Mutex::new(tx)
    })
}

/// Drops `value` on the reaper thread (at once, in order of arrival).
pub fn defer<T: Send + 'static>(value: T) {
    let sent = reaper()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send(Box::new(value));
    // The reaper never stops; if it had, dropping here is the fallback.
    if let Err(e) = sent {
        drop(e.0);
    }
}
