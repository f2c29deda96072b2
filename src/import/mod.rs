//! Zero-copy import: a producer describes a frame where it already lives
//! (memory kind, pixel layout, per-plane offsets and pitches), with the
//! fence that says it is written and the signals it wants once vmafx is done
//! reading it; the context binds it in place or copies it on the device.
//!
//! - [`layout`]: pixel formats (planar and decoder semi-planar) and plane
//!   checks.
//! - [`memory`]: the memory kinds a frame may live in.
//! - [`fence`]: acquire fences, release signals, the host fence.
//! - [`frame`]: the reference-counted [`Frame`] that fires its release
//!   signals after its last reader.
//! - `cudarc`: [`Frame::from_cuda_slice`], frames from cudarc device
//!   buffers without `unsafe` (feature `cuda`).
//! - `wait`, `waiter`, `gl_sync`: host waits on acquire fences (off the
//!   producer's thread, except GL syncs, which belong to its GL context).
//! - `mapping`, `host_read`: reading host-mappable frames into pictures for
//!   the CPU engines.

#[cfg(feature = "cuda")]
mod cudarc;
pub(crate) mod egl_export;
pub mod fence;
pub mod frame;
pub(crate) mod gl_sync;
pub(crate) mod host_read;
pub mod layout;
pub(crate) mod mapping;
pub mod memory;
pub mod pack;
pub mod sync_file;
pub(crate) mod vulkan_fd;
pub(crate) mod wait;
pub(crate) mod waiter;

#[cfg(feature = "vulkan")]
pub use fence::VulkanTimeline;
pub use fence::{Acquire, GlSync, HostFence, RawEvent, Release};
pub use frame::{Frame, FrameDesc, PlaneDesc};
pub use layout::{PixelFormat, PlaneLayout};
pub use memory::{DeviceArray, DevicePtr, GlTexture, HostMemory, Memory, VulkanMemoryFd};

use crate::error::Error;

/// Builds the [`Error::Import`] of a refused import: what memory, what
/// format, which plane and modifier, and why.
#[derive(Debug, Clone)]
pub struct ImportError {
    memory: String,
    format: String,
    plane: Option<usize>,
    modifier: Option<String>,
    reason: String,
}

impl ImportError {
    pub fn new(memory: impl Into<String>, format: impl Into<String>) -> Self {
        Self {
            memory: memory.into(),
            format: format.into(),
            plane: None,
            modifier: None,
            reason: String::new(),
        }
    }

    pub fn plane(mut self, plane: usize) -> Self {
        self.plane = Some(plane);
        self
    }

    pub fn modifier(mut self, modifier: impl Into<String>) -> Self {
        self.modifier = Some(modifier.into());
        self
    }

    pub fn reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = reason.into();
        self
    }
}

impl From<ImportError> for Error {
    fn from(e: ImportError) -> Self {
        Error::Import {
            memory: e.memory,
            format: e.format,
            plane: e.plane,
            modifier: e.modifier,
            reason: e.reason,
        }
    }
}

/// The message of [`Error::Import`].
pub(crate) fn describe_import(
    memory: &str,
    format: &str,
    plane: &Option<usize>,
    modifier: &Option<String>,
    reason: &str,
) -> String {
    let mut s = format!("cannot import {memory} memory ({format}");
    if let Some(p) = plane {
        s.push_str(&format!(", plane {p}"));
    }
    if let Some(m) = modifier {
        s.push_str(&format!(", modifier {m}"));
    }
    s.push_str("): ");
    s.push_str(reason);
    s
}
