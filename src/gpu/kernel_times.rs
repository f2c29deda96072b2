//! Device time per kernel, for tuning and benchmarks: a [`Gpu`] made by
//! [`Gpu::with_kernel_times`] runs on a `TimedDriver`, which forwards
//! every call to the device's driver and brackets each launch with timed
//! events; [`KernelTimes::take`] adds up their intervals by kernel name. A
//! profiler gives the same numbers, but replays each kernel: this costs two
//! event records a launch and runs the engine's real schedule. Timing is
//! the wrapper's alone: the plain launch path never asks whether it is on.

use super::args::KernelArgs;
use super::device::Gpu;
use super::driver::{
    ArrayHandle, Copy2d, DevicePtr, Driver, EventHandle, ExternalMemoryDesc, ExternalMemoryHandle,
    FunctionHandle, GraphicsHandle, HostFn, Interop, LaunchDims, MemoryInfo, ModuleHandle,
    SemaphoreHandle, SemaphoreKind, StreamHandle,
};
use crate::error::Result;
use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex, MutexGuard};

/// One kernel's launches since the last [`KernelTimes::take`].
#[derive(Debug, Clone, PartialEq)]
pub struct KernelTime {
    pub name: String,
    pub launches: u32,
    /// Device milliseconds, summed over the launches.
    pub ms: f64,
}

/// A launch's kernel and the timed events recorded around it.
type Record = (Arc<str>, EventHandle, EventHandle);

/// A [`Driver`] that forwards to `inner` and times every launch.
pub(crate) struct TimedDriver {
    inner: Arc<dyn Driver>,
    /// Kernel names by function, learned as functions are looked up.
    names: Mutex<HashMap<FunctionHandle, Arc<str>>>,
    /// Launches since the last [`KernelTimes::take`].
    records: Mutex<Vec<Record>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl TimedDriver {
    fn new(inner: Arc<dyn Driver>) -> Self {
        Self {
            inner,
            names: Mutex::default(),
            records: Mutex::default(),
        }
    }

    /// Two fresh timed events; the launch goes between their records.
    fn events(&self) -> Result<(EventHandle, EventHandle)> {
        let start = self.inner.timed_event_create()?;
        match self.inner.timed_event_create() {
            Ok(end) => Ok((start, end)),
            Err(e) => {
                // SAFETY: created above, never recorded.
                unsafe { self.inner.event_destroy(start) };
                Err(e)
            }
        }
    }
}

impl Drop for TimedDriver {
    fn drop(&mut self) {
        for (_, start, end) in lock(&self.records).drain(..) {
            // SAFETY: ours; every stream that recorded them synchronised on
            // drop, before the last `Gpu` (holding us) went.
            unsafe {
                self.inner.event_destroy(start);
                self.inner.event_destroy(end);
            }
        }
    }
}

/// Methods passed on to `self.inner` as they are.
macro_rules! forward {
    ($(fn $name:ident(&self $(, $arg:ident: $ty:ty)*) $(-> $ret:ty)?;)*) => {$(
        fn $name(&self $(, $arg: $ty)*) $(-> $ret)? {
            self.inner.$name($($arg),*)
        }
    )*};
}

/// Unsafe methods passed on to `self.inner` as they are.
macro_rules! forward_unsafe {
    ($(fn $name:ident(&self $(, $arg:ident: $ty:ty)*) $(-> $ret:ty)?;)*) => {$(
        unsafe fn $name(&self $(, $arg: $ty)*) $(-> $ret)? {
            // SAFETY: the caller upholds the same contract for `inner`,
            // whose handles these are.
            unsafe { self.inner.$name($($arg),*) }
        }
    )*};
}

// SAFETY: every call goes to `inner` with the caller's own handles; the
// events added around launches are `inner`'s, made and destroyed here.
unsafe impl Driver for TimedDriver {
    forward! {
        fn backend(&self) -> super::GpuBackend;
        fn describe(&self) -> String;
        fn uuid(&self) -> [u8; 16];
        fn memory_info(&self) -> Result<MemoryInfo>;
        fn code_target(&self) -> String;
        fn compiler_version(&self) -> String;
        fn alloc(&self, bytes: usize) -> Result<DevicePtr>;
        fn alloc_pinned(&self, bytes: usize) -> Result<*mut u8>;
        fn stream_create(&self) -> Result<StreamHandle>;
        fn event_create(&self) -> Result<EventHandle>;
        fn legacy_stream(&self) -> StreamHandle;
        fn cuda_context(&self) -> Option<usize>;
        fn timed_event_create(&self) -> Result<EventHandle>;
        fn compile(&self, source: &str, name: &str) -> Result<Vec<u8>>;
        fn is_machine_code(&self, image: &[u8]) -> bool;
        fn caches_kernels(&self) -> bool;
        fn module_load(&self, image: &[u8]) -> Result<ModuleHandle>;
    }
    forward_unsafe! {
        fn free(&self, ptr: DevicePtr);
        fn free_pinned(&self, ptr: *mut u8);
        fn stream_destroy(&self, stream: StreamHandle);
        fn stream_synchronize(&self, stream: StreamHandle) -> Result<()>;
        fn event_destroy(&self, event: EventHandle);
        fn event_record(&self, event: EventHandle, stream: StreamHandle) -> Result<()>;
        fn stream_wait_event(&self, stream: StreamHandle, event: EventHandle) -> Result<()>;
        fn event_query(&self, event: EventHandle) -> Result<bool>;
        fn event_synchronize(&self, event: EventHandle) -> Result<()>;
        fn launch_host_func(&self, stream: StreamHandle, func: HostFn) -> Result<()>;
        fn event_elapsed_ms(&self, start: EventHandle, end: EventHandle) -> Result<f32>;
        fn copy_2d(&self, copy: &Copy2d, stream: StreamHandle) -> Result<()>;
        fn copy_to_host(&self, dst: *mut u8, src: DevicePtr, bytes: usize, stream: StreamHandle)
            -> Result<()>;
        fn memset_u32(&self, dst: DevicePtr, value: u32, count: usize, stream: StreamHandle)
            -> Result<()>;
        fn module_unload(&self, module: ModuleHandle);
    }

    unsafe fn function(&self, module: ModuleHandle, name: &str) -> Result<FunctionHandle> {
        // SAFETY: the caller upholds this function's contract for `inner`.
        let function = unsafe { self.inner.function(module, name)? };
        lock(&self.names).insert(function, name.into());
        Ok(function)
    }

    unsafe fn launch(
        &self,
        function: FunctionHandle,
        dims: &LaunchDims,
        stream: StreamHandle,
        args: &mut KernelArgs,
    ) -> Result<()> {
        let name = lock(&self.names)
            .get(&function)
            .cloned()
            .unwrap_or_else(|| "(unnamed kernel)".into());
        let (start, end) = self.events()?;
        // Kept (and destroyed) by `records` whatever happens next.
        lock(&self.records).push((name, start, end));
        // SAFETY: the caller upholds this function's contract for `inner`;
        // the events are ours and alive.
        unsafe {
            self.inner.event_record(start, stream)?;
            self.inner.launch(function, dims, stream, args)?;
            self.inner.event_record(end, stream)
        }
    }
}

// SAFETY: as for the `Driver` impl: every call goes to `inner`.
unsafe impl Interop for TimedDriver {
    forward! {
        fn import_memory(&self, fd: OwnedFd, desc: &ExternalMemoryDesc)
            -> Result<ExternalMemoryHandle>;
        fn import_semaphore(&self, fd: OwnedFd, kind: SemaphoreKind) -> Result<SemaphoreHandle>;
    }
    forward_unsafe! {
        fn map_external_buffer(&self, memory: ExternalMemoryHandle, offset: u64, bytes: u64)
            -> Result<DevicePtr>;
        fn free_external_buffer(&self, ptr: DevicePtr);
        fn destroy_external_memory(&self, memory: ExternalMemoryHandle);
        fn signal_semaphore(&self, semaphore: SemaphoreHandle, value: u64, stream: StreamHandle)
            -> Result<()>;
        fn wait_semaphore(&self, semaphore: SemaphoreHandle, value: u64, stream: StreamHandle)
            -> Result<()>;
        fn destroy_semaphore(&self, semaphore: SemaphoreHandle);
        fn host_register(&self, ptr: *mut u8, bytes: usize) -> Result<()>;
        fn host_device_pointer(&self, ptr: *mut u8) -> Result<DevicePtr>;
        fn host_unregister(&self, ptr: *mut u8);
        fn export_dmabuf(&self, ptr: DevicePtr, bytes: usize) -> Result<OwnedFd>;
        fn gl_register_image(&self, texture: u32, target: u32) -> Result<GraphicsHandle>;
        fn graphics_map(&self, resource: GraphicsHandle, stream: StreamHandle) -> Result<()>;
        fn graphics_array(&self, resource: GraphicsHandle) -> Result<ArrayHandle>;
        fn graphics_unmap(&self, resource: GraphicsHandle, stream: StreamHandle) -> Result<()>;
        fn graphics_unregister(&self, resource: GraphicsHandle);
    }
}

/// Reads the kernel times of a [`Gpu`] made by [`Gpu::with_kernel_times`].
#[derive(Clone)]
pub struct KernelTimes(Arc<TimedDriver>);

impl KernelTimes {
    /// Device time per kernel of every launch since the last call, in the
    /// order the kernels first ran; waits for those launches to finish.
    pub fn take(&self) -> Result<Vec<KernelTime>> {
        let records = std::mem::take(&mut *lock(&self.0.records));
        let driver = &self.0.inner;
        let mut times: Vec<KernelTime> = Vec::new();
        let mut failure = None;
        for (name, start, end) in records {
            // SAFETY: our events, recorded around the launch.
            let ms = unsafe {
                driver
                    .event_synchronize(end)
                    .and_then(|()| driver.event_elapsed_ms(start, end))
            };
            // SAFETY: our events; the synchronize above finished their work,
            // and nothing else holds them.
            unsafe {
                driver.event_destroy(start);
                driver.event_destroy(end);
            }
            match ms {
                Ok(ms) => match times.iter_mut().find(|t| *t.name == *name) {
                    Some(t) => {
                        t.launches += 1;
                        t.ms += ms as f64;
                    }
                    None => times.push(KernelTime {
                        name: name.to_string(),
                        launches: 1,
                        ms: ms as f64,
                    }),
                },
                Err(e) => failure = failure.or(Some(e)),
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(times),
        }
    }
}

impl Gpu {
    /// This device with every kernel launch timed, and the reader of those
    /// times. Contexts built on the returned [`Gpu`] run as usual; objects
    /// of either `Gpu` work with the other (they share the device's
    /// driver), but only launches through the returned one are timed.
    pub fn with_kernel_times(&self) -> (Gpu, KernelTimes) {
        let timed = Arc::new(TimedDriver::new(self.driver_arc()));
        (self.with_driver(timed.clone()), KernelTimes(timed))
    }
}
