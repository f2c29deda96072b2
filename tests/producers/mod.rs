//! Stand-ins for the producers vmafx imports frames from: a Vulkan device
//! exporting memory and semaphores as fds, and an EGL/GL context with a
//! texture. Test code: errors are strings that say what was missing.
//! Used by `tests/import_serial` (which also holds the lock its tests
//! take) and, `gl.rs` alone, by `examples/gl_producer.rs`.
#![allow(dead_code)]

pub mod gl;
pub mod vulkan;
