//! Frames imported without a host copy, scored bit for bit as the same
//! pictures submitted as host pictures: on the CPU engine from host memory,
//! memfds, Vulkan allocations (lavapipe in CI) and GL textures (llvmpipe);
//! on the GPU from device memory in every decoder layout. Each test skips,
//! saying why, where its producer or device is missing (unless the matching
//! `VMAFX_REQUIRE_*` variable is `1`).
//!
//! One module per suite, all in one test binary (CI links it once), whose
//! tests run in parallel. Tests that must be alone in their process (they
//! count its fds or the device's free memory, or wait on the device for a
//! producer's semaphore) are in `tests/import_serial`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../import_support/mod.rs"]
mod import_support;

mod cpu;
mod egl;
mod gpu;
mod vulkan;
