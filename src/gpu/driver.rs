//! The one small interface the GPU layer needs from a vendor runtime.
//!
//! Everything backend-neutral (buffers, streams, events, uploads, kernel
//! cache, extractors) is written once against [`Driver`]; `cuda.rs` and
//! `hip.rs` implement it and are the only files that call FFI. Handles are
//! opaque integers here; the RAII types in [`super::device`] own them.

use crate::error::Result;
use std::ffi::c_void;

/// A device address.
pub type DevicePtr = u64;

/// An opaque runtime handle (stream, event, module or function).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handle(pub usize);

/// One side of a 2D copy.
#[derive(Debug, Clone, Copy)]
pub enum Memory {
    Host(*const u8),
    Device(DevicePtr),
}

/// A 2D copy of `height` rows of `width_bytes`.
#[derive(Debug, Clone, Copy)]
pub struct Copy2d {
    pub src: Memory,
    pub src_pitch: usize,
    /// Host destinations are not needed yet: results come back linearly.
    pub dst: DevicePtr,
    pub dst_pitch: usize,
    pub width_bytes: usize,
    pub height: usize,
}

/// Launch geometry.
#[derive(Debug, Clone, Copy)]
pub struct LaunchDims {
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub shared_bytes: u32,
}

impl LaunchDims {
    /// One block of `threads` per row for a per-row reduction kernel; the
    /// grid stops at 65535 blocks (the portable limit of a grid's x size on
    /// older parts) and the kernels stride over the remaining rows.
    pub fn per_row(rows: u32, threads: u32) -> Self {
        Self {
            grid: (rows.min(65535), 1, 1),
            block: (threads, 1, 1),
            shared_bytes: 0,
        }
    }
}

/// A vendor runtime bound to one device. Calls may come from any thread:
/// implementations make their context current as needed.
///
/// # Safety
/// Implementations trust the handles and pointers they are given to come
/// from the same driver and to be alive; the RAII layer guarantees that.
/// That contract covers every `unsafe fn` below.
#[allow(clippy::missing_safety_doc)]
pub unsafe trait Driver: Send + Sync {
    /// `CUDA` or `HIP`, for messages.
    fn backend(&self) -> &'static str;
    /// Device name, index and UUID, for messages and logs.
    fn describe(&self) -> String;
    /// What the kernel cache keys on besides the source: runtime version and
    /// device architecture.
    fn code_target(&self) -> String;

    fn alloc(&self, bytes: usize) -> Result<DevicePtr>;
    unsafe fn free(&self, ptr: DevicePtr);
    /// Page-locked host memory (uploads from it are truly asynchronous).
    fn alloc_pinned(&self, bytes: usize) -> Result<*mut u8>;
    unsafe fn free_pinned(&self, ptr: *mut u8);

    fn stream_create(&self) -> Result<Handle>;
    unsafe fn stream_destroy(&self, stream: Handle);
    unsafe fn stream_synchronize(&self, stream: Handle) -> Result<()>;

    fn event_create(&self) -> Result<Handle>;
    unsafe fn event_destroy(&self, event: Handle);
    unsafe fn event_record(&self, event: Handle, stream: Handle) -> Result<()>;
    /// Makes `stream` wait (on the device) for `event`.
    unsafe fn stream_wait_event(&self, stream: Handle, event: Handle) -> Result<()>;
    /// True once the work before the event's record has completed.
    unsafe fn event_query(&self, event: Handle) -> Result<bool>;
    unsafe fn event_synchronize(&self, event: Handle) -> Result<()>;
    /// An event that also takes a timestamp (profiling only: plain events
    /// skip timing, which makes recording them cheaper).
    fn timed_event_create(&self) -> Result<Handle>;
    /// Milliseconds between two completed records of timed events.
    unsafe fn event_elapsed_ms(&self, start: Handle, end: Handle) -> Result<f32>;

    unsafe fn copy_2d(&self, copy: &Copy2d, stream: Handle) -> Result<()>;
    unsafe fn copy_to_host(
        &self,
        dst: *mut u8,
        src: DevicePtr,
        bytes: usize,
        stream: Handle,
    ) -> Result<()>;
    unsafe fn memset_u32(
        &self,
        dst: DevicePtr,
        value: u32,
        count: usize,
        stream: Handle,
    ) -> Result<()>;

    /// Compiles kernel source to the runtime's loadable image (PTX, code
    /// object) for this device.
    fn compile(&self, source: &str, name: &str) -> Result<Vec<u8>>;
    /// Whether compiled images may be kept in the disk cache (a test
    /// driver's images are not real ones).
    fn caches_kernels(&self) -> bool {
        true
    }
    fn module_load(&self, image: &[u8]) -> Result<Handle>;
    unsafe fn module_unload(&self, module: Handle);
    unsafe fn function(&self, module: Handle, name: &str) -> Result<Handle>;
    /// `params` points at each kernel argument, in order.
    unsafe fn launch(
        &self,
        function: Handle,
        dims: &LaunchDims,
        stream: Handle,
        params: &mut [*mut c_void],
    ) -> Result<()>;
}
