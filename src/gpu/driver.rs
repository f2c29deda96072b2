//! The one small interface the GPU layer needs from a vendor runtime.
//!
//! Everything backend-neutral (buffers, streams, events, uploads, kernel
//! cache, extractors) is written once against [`Driver`]. The vendor
//! runtimes implement it in `gpu/cuda/` and `gpu/hip/` (`mod.rs`: the
//! driver; `interop.rs`: its [`Interop`]), the only files that call a
//! runtime's FFI. Test-only drivers implement it too: `gpu/mock.rs` (a
//! recording driver for the engine's contract tests) and `gpu/emu.rs` (the
//! real kernels built by g++ and run on the CPU). Handles are opaque
//! integers with one type per kind of runtime object ([`StreamHandle`],
//! [`EventHandle`], ...), so passing one kind for another does not
//! compile; device addresses are [`DevicePtr`]s. The RAII types in
//! [`super::device`] and [`super::external`] own the handles. A launch
//! takes its arguments as [`KernelArgs`], never as raw pointers. Kernel
//! timing is a driver too, wrapping another ([`super::kernel_times`]).
//! Where each piece lives: `docs/architecture.md`; why: ADR 0006, 0022.
//!
//! [`Interop`] is the part a zero-copy import needs (a producer's memory,
//! semaphores, host frames and GL textures); every [`Driver`] has it.

use super::args::KernelArgs;
use super::GpuBackend;
use crate::error::Result;
#[cfg(any(feature = "cuda", feature = "hip"))]
use std::ffi::c_void;
use std::fmt;
use std::os::fd::OwnedFd;

/// A device address.
pub type DevicePtr = u64;

/// A host callback queued on a stream ([`Driver::launch_host_func`]).
pub type HostFn = Box<dyn FnOnce() + Send + 'static>;

#[cfg(any(feature = "cuda", feature = "hip"))]
/// `func` as the user data of a runtime's host-function launch, for
/// [`run_host_fn`].
pub(crate) fn host_fn_into_raw(func: HostFn) -> *mut c_void {
    Box::into_raw(Box::new(func)).cast()
}

#[cfg(any(feature = "cuda", feature = "hip"))]
/// Takes back a [`host_fn_into_raw`] pointer the runtime did not accept.
///
/// # Safety
/// `user` came from [`host_fn_into_raw`] and was not passed to a runtime
/// that will call [`run_host_fn`] with it.
pub(crate) unsafe fn host_fn_from_raw(user: *mut c_void) -> HostFn {
    // SAFETY: the caller's promise: a leaked Box<HostFn> nobody else owns.
    *unsafe { Box::from_raw(user.cast::<HostFn>()) }
}

#[cfg(any(feature = "cuda", feature = "hip"))]
/// The function a runtime calls for a host-function launch: runs the
/// [`HostFn`] behind `user` once. A panic stops here (it must not unwind
/// into the runtime).
pub(crate) unsafe extern "C" fn run_host_fn(user: *mut c_void) {
    // SAFETY: the runtime calls this once with the pointer it was given,
    // which came from host_fn_into_raw.
    let func = unsafe { host_fn_from_raw(user) };
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(func));
}

/// Defines one opaque handle type per kind of runtime object, so that a
/// handle of one kind cannot be passed where another is expected.
macro_rules! handles {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(transparent)]
        pub struct $name(usize);

        // Used by the runtime adapters and test drivers; a CPU-only build
        // has neither.
        #[allow(dead_code)]
        impl $name {
            /// Wraps the runtime's value (a `CUstream`, `hipEvent_t`, ...).
            /// Making one is harmless: every call that uses it is unsafe
            /// and trusts it to be alive (see [`Driver`]).
            pub const fn from_raw(raw: usize) -> Self {
                Self(raw)
            }

            /// The runtime's value.
            pub const fn raw(self) -> usize {
                self.0
            }
        }
    )*};
}

handles! {
    /// A stream (`CUstream`, `hipStream_t`).
    ///
    /// Each kind of handle is its own type: a stream is not an event.
    ///
    /// ```compile_fail,E0308
    /// use vmafx::testing::gpu::{Driver, StreamHandle};
    /// unsafe fn wait(driver: &dyn Driver, stream: StreamHandle) {
    ///     let _ = unsafe { driver.event_synchronize(stream) };
    /// }
    /// ```
    ///
    /// while the right kind compiles:
    ///
    /// ```
    /// use vmafx::testing::gpu::{Driver, EventHandle};
    /// unsafe fn wait(driver: &dyn Driver, event: EventHandle) {
    ///     let _ = unsafe { driver.event_synchronize(event) };
    /// }
    /// ```
    StreamHandle;
    /// An event (`CUevent`, `hipEvent_t`).
    EventHandle;
    /// A loaded module (`CUmodule`, `hipModule_t`).
    ModuleHandle;
    /// A kernel of a module (`CUfunction`, `hipFunction_t`).
    FunctionHandle;
    /// Imported external memory (`CUexternalMemory`, `hipExternalMemory_t`).
    ExternalMemoryHandle;
    /// An imported external semaphore (`CUexternalSemaphore`,
    /// `hipExternalSemaphore_t`).
    SemaphoreHandle;
    /// A registered graphics resource (`CUgraphicsResource`,
    /// `hipGraphicsResource_t`).
    GraphicsHandle;
    /// An array (`CUarray`, `hipArray_t`): a mapped texture's storage.
    ArrayHandle;
}

/// The source of a 2D copy.
#[derive(Debug, Clone, Copy)]
pub enum Memory {
    /// Host memory (pageable, pinned, or registered).
    Host(*const u8),
    /// Device memory at any byte address (a buffer's pointer plus an offset).
    Device(DevicePtr),
    /// A CUDA array / HIP array (a mapped GL texture, a producer's array),
    /// read from its origin; the copy's `src_pitch` is not used.
    Array(ArrayHandle),
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

/// How an external memory fd was exported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExternalMemoryKind {
    /// An opaque fd: Vulkan `VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT`.
    OpaqueFd,
    /// A Linux dma-buf (VA-API, V4L2, GBM, EGL exports).
    DmaBuf,
}

impl fmt::Display for ExternalMemoryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::OpaqueFd => "opaque fd",
            Self::DmaBuf => "dma-buf fd",
        })
    }
}

/// What the exporter says about an allocation it hands over as an fd.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExternalMemoryDesc {
    pub kind: ExternalMemoryKind,
    /// The whole allocation's size (Vulkan: `VkMemoryAllocateInfo::allocationSize`).
    pub size: u64,
    /// A dedicated allocation (Vulkan `VkMemoryDedicatedAllocateInfo`): the
    /// importer must be told, CUDA refuses or misreads it otherwise.
    pub dedicated: bool,
}

/// Which kind of semaphore an fd carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SemaphoreKind {
    /// Signalled once, waited once (the value is ignored).
    Binary,
    /// A 64-bit counter: waits are for "at least this value".
    Timeline,
}

impl fmt::Display for SemaphoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Binary => "binary semaphore",
            Self::Timeline => "timeline semaphore",
        })
    }
}

/// Device memory, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryInfo {
    pub free: usize,
    pub total: usize,
}

/// A vendor runtime bound to one device. Calls may come from any thread:
/// implementations make their context current as needed.
///
/// # Safety
/// Implementations trust the handles and pointers they are given to come
/// from the same driver and to be alive; the RAII layer guarantees that.
/// That contract covers every `unsafe fn` below.
#[allow(clippy::missing_safety_doc)]
pub unsafe trait Driver: Interop + Send + Sync {
    /// Which runtime this is (the test drivers act as CUDA).
    fn backend(&self) -> GpuBackend;
    /// Device name, index and UUID, for messages and logs.
    fn describe(&self) -> String;
    /// The device's UUID (what Vulkan's `deviceUUID` holds for the same GPU).
    fn uuid(&self) -> [u8; 16];
    /// Free and total device memory.
    fn memory_info(&self) -> Result<MemoryInfo>;
    /// What the kernel cache keys on besides the source: device
    /// architecture and driver or runtime version. Cheap: loads no compiler.
    fn code_target(&self) -> String;
    /// The kernel compiler's version, which the cache keys images that are
    /// not machine code on (a newer compiler may make machine code). May
    /// load the compiler.
    fn compiler_version(&self) -> String {
        String::new()
    }
    /// Whether `image`, from [`Driver::compile`], is machine code for this
    /// device (not an image the driver translates when loading it).
    fn is_machine_code(&self, _image: &[u8]) -> bool {
        true
    }

    fn alloc(&self, bytes: usize) -> Result<DevicePtr>;
    unsafe fn free(&self, ptr: DevicePtr);
    /// Page-locked host memory (uploads from it are truly asynchronous).
    fn alloc_pinned(&self, bytes: usize) -> Result<*mut u8>;
    unsafe fn free_pinned(&self, ptr: *mut u8);

    fn stream_create(&self) -> Result<StreamHandle>;
    unsafe fn stream_destroy(&self, stream: StreamHandle);
    unsafe fn stream_synchronize(&self, stream: StreamHandle) -> Result<()>;

    fn event_create(&self) -> Result<EventHandle>;
    unsafe fn event_destroy(&self, event: EventHandle);
    unsafe fn event_record(&self, event: EventHandle, stream: StreamHandle) -> Result<()>;
    /// The CUDA context (`CUcontext`) the driver works in, to check that a
    /// producer's CUDA objects belong to it; `None` for other runtimes.
    fn cuda_context(&self) -> Option<usize> {
        None
    }
    /// The context's legacy default stream (CUDA's `CU_STREAM_LEGACY`, HIP's
    /// null stream): what a client's plain `cuMemcpy2D` is ordered on.
    fn legacy_stream(&self) -> StreamHandle;
    /// Makes `stream` wait (on the device) for `event`.
    unsafe fn stream_wait_event(&self, stream: StreamHandle, event: EventHandle) -> Result<()>;
    /// True once the work before the event's record has completed.
    unsafe fn event_query(&self, event: EventHandle) -> Result<bool>;
    unsafe fn event_synchronize(&self, event: EventHandle) -> Result<()>;
    /// Calls `func` on a runtime thread once the work queued on `stream`
    /// before it has completed (`cuLaunchHostFunc`, `hipLaunchHostFunc`):
    /// how the host hears of the device's progress without polling. `func`
    /// must not call the runtime; it is dropped uncalled only if the
    /// launch fails.
    unsafe fn launch_host_func(&self, stream: StreamHandle, func: HostFn) -> Result<()>;
    /// An event that also takes a timestamp (profiling only: plain events
    /// skip timing, which makes recording them cheaper).
    fn timed_event_create(&self) -> Result<EventHandle>;
    /// Milliseconds between two completed records of timed events.
    unsafe fn event_elapsed_ms(&self, start: EventHandle, end: EventHandle) -> Result<f32>;

    unsafe fn copy_2d(&self, copy: &Copy2d, stream: StreamHandle) -> Result<()>;
    unsafe fn copy_to_host(
        &self,
        dst: *mut u8,
        src: DevicePtr,
        bytes: usize,
        stream: StreamHandle,
    ) -> Result<()>;
    unsafe fn memset_u32(
        &self,
        dst: DevicePtr,
        value: u32,
        count: usize,
        stream: StreamHandle,
    ) -> Result<()>;

    /// Compiles kernel source to the runtime's loadable image (PTX, code
    /// object) for this device.
    fn compile(&self, source: &str, name: &str) -> Result<Vec<u8>>;
    /// Whether compiled images may be kept in the disk cache (a test
    /// driver's images are not real ones).
    fn caches_kernels(&self) -> bool {
        true
    }
    fn module_load(&self, image: &[u8]) -> Result<ModuleHandle>;
    unsafe fn module_unload(&self, module: ModuleHandle);
    unsafe fn function(&self, module: ModuleHandle, name: &str) -> Result<FunctionHandle>;
    /// `args` are the kernel's arguments, in order.
    unsafe fn launch(
        &self,
        function: FunctionHandle,
        dims: &LaunchDims,
        stream: StreamHandle,
        args: &mut KernelArgs,
    ) -> Result<()>;
}

/// What importing a producer's frames needs from a runtime: external
/// memory and semaphores, host memory registration, GL textures. A runtime
/// without one of them returns an [`crate::Error::Gpu`] that says which
/// path works instead.
///
/// # Safety
/// As for [`Driver`]: handles come from the same driver and are alive.
#[allow(clippy::missing_safety_doc)]
pub unsafe trait Interop {
    /// Imports an allocation exported as an fd. The fd is consumed whatever
    /// the outcome: kept by the runtime (CUDA, on success) or closed here
    /// (on failure, and by runtimes that keep a reference of their own).
    fn import_memory(&self, fd: OwnedFd, desc: &ExternalMemoryDesc)
        -> Result<ExternalMemoryHandle>;
    /// A device pointer to `bytes` bytes at `offset` of imported memory.
    /// The runtime may refuse offsets not aligned as the exporter's pages
    /// (the RAII layer maps from offset 0 only).
    unsafe fn map_external_buffer(
        &self,
        memory: ExternalMemoryHandle,
        offset: u64,
        bytes: u64,
    ) -> Result<DevicePtr>;
    /// Releases a pointer from [`Interop::map_external_buffer`].
    unsafe fn free_external_buffer(&self, ptr: DevicePtr);
    unsafe fn destroy_external_memory(&self, memory: ExternalMemoryHandle);

    /// Imports a semaphore exported as an opaque fd; the fd is consumed as
    /// for [`Interop::import_memory`].
    fn import_semaphore(&self, fd: OwnedFd, kind: SemaphoreKind) -> Result<SemaphoreHandle>;
    /// Queues a signal (timeline: to `value`) on `stream`: the device sets
    /// it once the work queued before has completed.
    unsafe fn signal_semaphore(
        &self,
        semaphore: SemaphoreHandle,
        value: u64,
        stream: StreamHandle,
    ) -> Result<()>;
    /// Makes `stream` wait on the device until the semaphore is signalled
    /// (timeline: reaches `value`).
    unsafe fn wait_semaphore(
        &self,
        semaphore: SemaphoreHandle,
        value: u64,
        stream: StreamHandle,
    ) -> Result<()>;
    unsafe fn destroy_semaphore(&self, semaphore: SemaphoreHandle);

    /// Page-locks `bytes` of host memory at `ptr` and maps it for the
    /// device, so copies from it run asynchronously with no staging copy.
    unsafe fn host_register(&self, ptr: *mut u8, bytes: usize) -> Result<()>;
    /// The device address of registered host memory.
    unsafe fn host_device_pointer(&self, ptr: *mut u8) -> Result<DevicePtr>;
    unsafe fn host_unregister(&self, ptr: *mut u8);

    /// Exports `bytes` of device memory at `ptr` (page-aligned) as a Linux
    /// dma-buf, for producers that hand frames to dma-buf consumers.
    unsafe fn export_dmabuf(&self, ptr: DevicePtr, bytes: usize) -> Result<OwnedFd>;

    /// Registers a GL texture of the context current on this thread
    /// (read-only use: vmafx never writes it).
    unsafe fn gl_register_image(&self, texture: u32, target: u32) -> Result<GraphicsHandle>;
    /// Maps a registered resource for `stream`'s work (after GL's work on it).
    unsafe fn graphics_map(&self, resource: GraphicsHandle, stream: StreamHandle) -> Result<()>;
    /// The array of a mapped resource (layer 0, level 0).
    unsafe fn graphics_array(&self, resource: GraphicsHandle) -> Result<ArrayHandle>;
    /// Gives the resource back to GL once `stream`'s work queued so far ran.
    unsafe fn graphics_unmap(&self, resource: GraphicsHandle, stream: StreamHandle) -> Result<()>;
    unsafe fn graphics_unregister(&self, resource: GraphicsHandle);
}
