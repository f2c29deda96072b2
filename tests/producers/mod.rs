//! Stand-ins for the producers vmafx imports frames from: a Vulkan device
//! exporting memory and semaphores as fds, and an EGL/GL context with a
//! texture. Test code: errors are strings that say what was missing.
//! Each test binary uses a part of them.
#![allow(dead_code)]

pub mod gl;
pub mod vulkan;
