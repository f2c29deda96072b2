//! Import tests that run one at a time, each holding [`one_at_a_time`]: the
//! device layer's imports fed by real producers (Vulkan, EGL/GL) and frames
//! from those producers on the GPU engine (both skip, saying why, without a
//! CUDA device, Vulkan or EGL, unless `VMAFX_REQUIRE_GPU=1`), and every
//! refusal path of an import on the CPU engine.
//!
//! They are a binary of their own because they count what belongs to the
//! whole process or device (open fds, the device's free memory) and make
//! device-side waits on producers' semaphores: another test running beside
//! them would change the counts, or deadlock (see [`one_at_a_time`]). A test
//! added here must take the lock too; a test that needs none belongs in
//! `tests/import`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../import_support/mod.rs"]
mod import_support;
#[path = "../producers/mod.rs"]
mod producers;

mod gpu_layer;
mod gpu_producers;
mod refusals;

/// Runs the calling test alone among the tests of this binary (every one
/// takes it).
///
/// A test's device-side wait on a producer's semaphore holds up every call
/// that synchronizes the shared CUDA context (`cuMemFree`, destroying an
/// import) in other threads; if such a thread is the one that would signal
/// another test's semaphore, the tests deadlock (seen on the H200 with
/// parallel test threads). The fd and device-memory leak counts are
/// process-wide (fds) and device-wide (free memory) too. Real producers
/// meet the same rule: see `docs/importing.md`, "Device-side waits".
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    // A failed test poisons the lock; the next one still runs.
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}
