//! Stand-ins for the producers vmafx imports frames from: a Vulkan device
//! exporting memory and semaphores as fds, and an EGL/GL context with a
//! texture. Test code: errors are strings that say what was missing.
//! Each test binary uses a part of them.
#![allow(dead_code)]

pub mod gl;
pub mod vulkan;

/// Runs the calling test alone among the tests of its binary that take it.
///
/// A test's device-side wait on a producer's semaphore holds up every call
/// that synchronizes the shared CUDA context (`cuMemFree`, destroying an
/// import) in other threads; if such a thread is the one that would signal
/// another test's semaphore, the tests deadlock (seen on the H200 with
/// parallel test threads). The fd and device-memory leak counts are
/// process-wide too. Real producers meet the same rule: see
/// `docs/importing.md`, "Device-side waits".
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    // A failed test poisons the lock; the next one still runs.
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}
