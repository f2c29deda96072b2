//! The backend-neutral device layer: a [`Gpu`] handle and RAII resources
//! (device buffers, pinned host buffers, streams, events, modules) that
//! release themselves on drop, so error paths cannot leak. Buffers are
//! addressed in parts through `DeviceSlice` views; kernels are launched
//! with `KernelArgs`.

use super::args::KernelArgs;
use super::driver::{
    Copy2d, DevicePtr, Driver, EventHandle, FunctionHandle, HostFn, LaunchDims, Memory, MemoryInfo,
    ModuleHandle, StreamHandle,
};
use super::retire::{Release, Retirement};
use super::slice::DeviceSlice;
use crate::error::Result;
use bytemuck::NoUninit;
use std::ffi::c_void;
use std::ops::RangeBounds;
use std::sync::Arc;

/// An open device. Cheap to clone; resources keep it alive.
#[derive(Clone)]
pub struct Gpu {
    driver: Arc<dyn Driver>,
    /// Streams, and what waits for them before it is freed.
    retirement: Arc<Retirement>,
}

impl Gpu {
    #[cfg_attr(not(any(feature = "cuda", feature = "hip", test)), allow(dead_code))]
    pub(crate) fn new(driver: Arc<dyn Driver>) -> Self {
        Self {
            retirement: Arc::new(Retirement::new(driver.clone())),
            driver,
        }
    }

    /// The same device through another driver over the same runtime
    /// objects (the timed view): streams and retired resources are shared,
    /// so objects of either work with the other.
    pub(super) fn with_driver(&self, driver: Arc<dyn Driver>) -> Self {
        Self {
            driver,
            retirement: self.retirement.clone(),
        }
    }

    /// Retired resources still waiting for a stream to pass their drop.
    #[cfg(test)]
    pub(crate) fn retired_waiting(&self) -> usize {
        self.retirement.reap();
        self.retirement.waiting()
    }

    pub(super) fn driver_arc(&self) -> Arc<dyn Driver> {
        self.driver.clone()
    }

    /// The runtime it works through (`runtime_name()` for messages).
    pub fn backend(&self) -> super::GpuBackend {
        self.driver.backend()
    }

    /// Name, index and UUID of the device.
    pub fn describe(&self) -> String {
        self.driver.describe()
    }

    /// The CUDA context this device works in (`None` on other runtimes).
    pub fn cuda_context(&self) -> Option<usize> {
        self.driver.cuda_context()
    }

    pub(crate) fn driver(&self) -> &dyn Driver {
        &*self.driver
    }

    /// The device's UUID: a Vulkan producer picks the physical device whose
    /// `VkPhysicalDeviceIDProperties::deviceUUID` equals it.
    pub fn uuid(&self) -> [u8; 16] {
        self.driver.uuid()
    }

    /// Free and total device memory now (after freeing what the streams
    /// have finished with).
    pub fn memory_info(&self) -> Result<MemoryInfo> {
        self.retirement.reap();
        self.driver.memory_info()
    }

    pub fn buffer(&self, bytes: usize) -> Result<DeviceBuffer> {
        self.retirement.reap();
        Ok(DeviceBuffer {
            ptr: self.driver.alloc(bytes)?,
            bytes,
            gpu: self.clone(),
        })
    }

    /// A new buffer holding a copy of `values`, complete when this returns
    /// (for tables made once, not for per-frame data: it waits).
    pub fn upload<T: NoUninit>(&self, values: &[T]) -> Result<DeviceBuffer> {
        let bytes: &[u8] = bytemuck::cast_slice(values);
        let buffer = self.buffer(bytes.len())?;
        if bytes.is_empty() {
            return Ok(buffer);
        }
        let stream = self.stream()?;
        let copy = Copy2d {
            src: Memory::Host(bytes.as_ptr()),
            src_pitch: bytes.len(),
            dst: buffer.ptr,
            dst_pitch: bytes.len(),
            width_bytes: bytes.len(),
            height: 1,
        };
        // SAFETY: `values` and the buffer hold the copied bytes and outlive
        // the copy: the stream is synchronised before either can go.
        unsafe { stream.copy_2d(&copy)? };
        stream.synchronize()?;
        Ok(buffer)
    }

    pub fn pinned(&self, bytes: usize) -> Result<PinnedBuffer> {
        self.retirement.reap();
        if let Some(buffer) = self.pinned_huge(bytes) {
            return Ok(buffer);
        }
        Ok(PinnedBuffer {
            ptr: self.driver.alloc_pinned(bytes)?,
            bytes,
            gpu: self.clone(),
            region: None,
        })
    }

    /// A large buffer as huge pages page-locked in place: the driver's own
    /// pinned allocation locks and maps 4 KiB pages one by one (about 2.5 GB/s
    /// on the H200's host, 6 ms for a 2160p picture, paid for every picture
    /// of a run's pool before its first frame), 2 MiB pages in a fraction
    /// of that. `None` where the region or its registration is refused:
    /// the driver's allocation serves then.
    fn pinned_huge(&self, bytes: usize) -> Option<PinnedBuffer> {
        let mut region = crate::picture::huge::HugeRegion::for_large(bytes)?;
        let ptr = region.as_mut_ptr();
        // SAFETY: `bytes` bytes at `ptr` are mapped for as long as the
        // region lives, which is until after it is unregistered (retire).
        unsafe { self.driver.host_register(ptr, bytes) }.ok()?;
        Some(PinnedBuffer {
            ptr,
            bytes,
            gpu: self.clone(),
            region: Some(region),
        })
    }

    pub fn stream(&self) -> Result<Stream> {
        let handle = self.driver.stream_create()?;
        self.retirement.stream_created(handle);
        Ok(Stream {
            handle,
            gpu: self.clone(),
        })
    }

    pub fn event(&self) -> Result<Event> {
        Ok(Event::new(self.clone(), self.driver.event_create()?, true))
    }

    /// Wraps an event the producer created (a `CUevent` / `hipEvent_t` of
    /// this device's context) so our streams can wait on it or record into
    /// it. Dropping the wrapper leaves the event to its owner.
    ///
    /// # Safety
    /// `raw` must be a valid event of this runtime and context that
    /// outlives the returned [`Event`].
    pub unsafe fn borrow_event(&self, raw: *mut c_void) -> Event {
        Event::new(self.clone(), EventHandle::from_raw(raw as usize), false)
    }
}

impl Gpu {
    /// An event that takes timestamps, for [`Event::elapsed_ms_since`].
    pub fn timed_event(&self) -> Result<Event> {
        Ok(Event::new(
            self.clone(),
            self.driver.timed_event_create()?,
            true,
        ))
    }
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// Device memory, freed once the device's streams have run the work queued
/// before its drop (`super::retire`).
pub struct DeviceBuffer {
    gpu: Gpu,
    ptr: DevicePtr,
    bytes: usize,
}

impl DeviceBuffer {
    /// The device it lives on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    pub fn ptr(&self) -> DevicePtr {
        self.ptr
    }
    /// Bytes.
    pub fn len(&self) -> usize {
        self.bytes
    }

    /// The buffer's values `range` as `T`s (`..` for all that fit): a view
    /// for kernel arguments and copies. Panics outside the buffer (see
    /// `super::slice`).
    pub fn slice<T>(&self, range: impl RangeBounds<usize>) -> DeviceSlice<T> {
        let whole = DeviceSlice::<u8>::from_raw_parts(self.ptr, self.bytes);
        whole.cast::<T>().slice(range)
    }
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        self.gpu.retirement.retire(Release::Device(self.ptr));
    }
}

/// Page-locked host memory, freed once the device's streams have run the
/// work queued before its drop (copies may still read it).
pub struct PinnedBuffer {
    gpu: Gpu,
    ptr: *mut u8,
    bytes: usize,
    /// Huge pages registered with the device; `None`: the driver's own
    /// pinned allocation.
    region: Option<crate::picture::huge::HugeRegion>,
}

// SAFETY: plain memory owned by this value.
unsafe impl Send for PinnedBuffer {}

impl PinnedBuffer {
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `bytes` bytes allocated at `ptr`, owned by us.
        unsafe { std::slice::from_raw_parts(self.ptr, self.bytes) }
    }
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.bytes) }
    }
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr
    }
    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }
}

// SAFETY: plain memory; shared references only read it.
unsafe impl Sync for PinnedBuffer {}

impl crate::picture::PictureBuffer for PinnedBuffer {
    fn bytes(&self) -> &[u8] {
        self.as_slice()
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        self.as_mut_slice()
    }
    fn pinned(&self) -> bool {
        true
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        let release = match self.region.take() {
            Some(region) => Release::Registered(region),
            None => Release::Pinned(self.ptr),
        };
        self.gpu.retirement.retire(release);
    }
}

/// An in-order queue of device work.
pub struct Stream {
    gpu: Gpu,
    handle: StreamHandle,
}

// SAFETY: streams may be used from any thread.
unsafe impl Send for Stream {}

impl Stream {
    pub(super) fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// The runtime handle, for calls that take a producer's own objects.
    pub(crate) fn handle(&self) -> StreamHandle {
        self.handle
    }

    /// Calls `func` on a runtime thread once the work queued on this
    /// stream so far has completed. `func` must not call the GPU runtime.
    pub fn after_queued_work(&self, func: HostFn) -> Result<()> {
        // SAFETY: our own live stream.
        unsafe { self.gpu.driver.launch_host_func(self.handle, func) }
    }

    /// Waits on the host until all work queued so far has finished.
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: our own live stream.
        unsafe { self.gpu.driver.stream_synchronize(self.handle) }
    }

    /// Makes later work on this stream wait for `event` (on the device).
    pub fn wait(&self, event: &Event) -> Result<()> {
        // SAFETY: both alive, same driver.
        unsafe {
            self.gpu
                .driver
                .stream_wait_event(self.handle, event.handle())
        }
    }

    /// Queues a 2D copy into device memory.
    ///
    /// # Safety
    /// Source and destination must cover the copied rows and stay alive and
    /// unmodified (host source) until the copy has run.
    pub unsafe fn copy_2d(&self, copy: &Copy2d) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe { self.gpu.driver.copy_2d(copy, self.handle) }
    }

    /// Queues a copy of `dst.len()` bytes from device memory to pinned memory.
    ///
    /// # Safety
    /// `dst` must not be read before the copy has run (wait on an event).
    pub unsafe fn copy_to_pinned(&self, dst: &mut PinnedBuffer, src: &DeviceBuffer) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            let bytes = dst.bytes.min(src.bytes);
            self.gpu
                .driver
                .copy_to_host(dst.as_mut_ptr(), src.ptr, bytes, self.handle)
        }
    }

    /// Queues filling a buffer with a 32-bit value.
    pub fn fill_u32(&self, dst: &DeviceBuffer, value: u32) -> Result<()> {
        // SAFETY: the buffer is alive and holds len / 4 words.
        unsafe {
            self.gpu
                .driver
                .memset_u32(dst.ptr, value, dst.bytes / 4, self.handle)
        }
    }

    /// Queues a kernel launch.
    ///
    /// # Safety
    /// `args` must match the kernel's parameters (count, order, types),
    /// and any device memory the kernel touches must stay alive until it
    /// ran.
    pub unsafe fn launch(
        &self,
        function: &Function,
        dims: &LaunchDims,
        args: &mut KernelArgs,
    ) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.gpu
                .driver
                .launch(function.handle, dims, self.handle, args)
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // Its work drains first: what it reads may be freed once it is gone.
        self.gpu.retirement.destroy_stream(self.handle);
    }
}

/// A marker in a stream: record, wait (device side), query, synchronise.
/// Ours, or a producer's ([`Gpu::borrow_event`]). The runtime's event is
/// shared with the [`crate::import::RawEvent`]s made from it, so it lives
/// until the last of them is gone.
pub struct Event {
    inner: Arc<SharedEvent>,
}

struct SharedEvent {
    gpu: Gpu,
    handle: EventHandle,
    /// False for a producer's event: its owner destroys it.
    owned: bool,
}

impl Drop for SharedEvent {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: ours, and no Event or RawEvent refers to it any more.
            unsafe { self.gpu.driver.event_destroy(self.handle) }
        }
    }
}

impl Event {
    fn new(gpu: Gpu, handle: EventHandle, owned: bool) -> Self {
        Self {
            inner: Arc::new(SharedEvent { gpu, handle, owned }),
        }
    }

    fn handle(&self) -> EventHandle {
        self.inner.handle
    }

    fn gpu(&self) -> &Gpu {
        &self.inner.gpu
    }

    /// The runtime's event, as a producer would hand it over (tests and
    /// examples play producer with our own events). The returned value
    /// keeps the event alive, so it is safe to give to a frame.
    pub fn as_raw(&self) -> crate::import::RawEvent {
        crate::import::RawEvent::owned(self.handle().raw(), self.inner.clone())
    }

    pub fn record(&self, stream: &Stream) -> Result<()> {
        // SAFETY: both alive, same driver.
        unsafe { self.gpu().driver.event_record(self.handle(), stream.handle) }
    }

    /// Records the event on the context's legacy default stream: it fires
    /// once what a client queued there (a plain `cuMemcpy2D` into a
    /// picture, say) is done.
    pub fn record_on_legacy_stream(&self) -> Result<()> {
        let driver = &self.gpu().driver;
        // SAFETY: our live event; the legacy stream always exists.
        unsafe { driver.event_record(self.handle(), driver.legacy_stream()) }
    }

    /// Records the event on a stream someone else owns (a producer's
    /// `CUstream` or `hipStream_t`, as `__cuda_array_interface__` names
    /// it), so waiting for the event waits for the work queued there.
    ///
    /// # Safety
    /// `stream` is a live stream of this event's device and context (or a
    /// special value the runtime defines for it, such as CUDA's per-thread
    /// default stream) and stays alive for the call.
    pub unsafe fn record_on_foreign_stream(&self, stream: usize) -> Result<()> {
        // SAFETY: our live event; the caller vouches for the stream.
        unsafe {
            self.gpu()
                .driver
                .event_record(self.handle(), StreamHandle::from_raw(stream))
        }
    }

    /// True once the work before the last record has completed.
    pub fn is_done(&self) -> Result<bool> {
        // SAFETY: our own live event.
        unsafe { self.gpu().driver.event_query(self.handle()) }
    }

    /// Waits on the host for the work before the last record.
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: our own live event.
        unsafe { self.gpu().driver.event_synchronize(self.handle()) }
    }

    /// Device milliseconds from `start`'s last record to this one's; both
    /// must be timed events ([`Gpu::timed_event`]) whose work has completed.
    pub fn elapsed_ms_since(&self, start: &Event) -> Result<f32> {
        // SAFETY: both alive, same driver.
        unsafe {
            self.gpu()
                .driver
                .event_elapsed_ms(start.handle(), self.handle())
        }
    }
}

/// A loaded module; its functions live as long as it does.
pub struct Module {
    gpu: Gpu,
    handle: ModuleHandle,
}

// SAFETY: modules may be used from any thread.
unsafe impl Send for Module {}
// SAFETY: Module's handles may be used from any thread (the runtime serialises calls on one object); it has no interior mutability of its own.
unsafe impl Sync for Module {}

impl Module {
    pub(crate) fn load(gpu: &Gpu, image: &[u8]) -> Result<Self> {
        Ok(Self {
            handle: gpu.driver.module_load(image)?,
            gpu: gpu.clone(),
        })
    }

    pub fn function(self: &Arc<Self>, name: &str) -> Result<Function> {
        Ok(Function {
            // SAFETY: our module is alive.
            handle: unsafe { self.gpu.driver.function(self.handle, name)? },
            _module: self.clone(),
        })
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        // Functions hold an Arc, so none is left; launches of them may
        // still be queued.
        self.gpu.retirement.retire(Release::Module(self.handle));
    }
}

/// A kernel entry point.
pub struct Function {
    handle: FunctionHandle,
    _module: Arc<Module>,
}

// SAFETY: function handles may be used from any thread.
unsafe impl Send for Function {}
