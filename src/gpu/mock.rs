//! A recording [`Driver`] for tests without a device: every call is logged
//! in order, device memory is fake addresses, pinned memory is real host
//! memory, and readbacks return zeros (all sums 0: plausible values). The
//! contract tests (`contract_tests.rs`) assert on the log how the engine
//! uses a device: which planes are uploaded, when, and in which order
//! relative to the kernels that read them.

use super::args::KernelArgs;
use super::driver::{
    ArrayHandle, Copy2d, DevicePtr, Driver, EventHandle, ExternalMemoryDesc, ExternalMemoryHandle,
    ExternalMemoryKind, FunctionHandle, GraphicsHandle, HostFn, Interop, LaunchDims, Memory,
    MemoryInfo, ModuleHandle, SemaphoreHandle, SemaphoreKind, StreamHandle,
};
use super::Gpu;
use crate::error::{Error, GpuApi, GpuCode, Result};
use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};

/// One logged driver call.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    /// Put there by the test (e.g. "frame 3 submitted next").
    Mark(u32),
    Alloc {
        ptr: DevicePtr,
        bytes: usize,
    },
    Free(DevicePtr),
    StreamCreate(StreamHandle),
    StreamSync(StreamHandle),
    EventCreate(EventHandle),
    EventDestroy(EventHandle),
    EventRecord {
        event: EventHandle,
        stream: StreamHandle,
    },
    StreamWait {
        stream: StreamHandle,
        event: EventHandle,
    },
    EventSync(EventHandle),
    /// The host asked whether the event fired (the mock says it has).
    EventQuery(EventHandle),
    /// `src_host` is the pinned staging address for uploads, `None` for
    /// device-to-device copies (`src_device`) and array copies (`src_array`).
    Copy2d {
        src_host: Option<usize>,
        src_device: Option<DevicePtr>,
        src_array: Option<ArrayHandle>,
        dst: DevicePtr,
        width_bytes: usize,
        height: usize,
        stream: StreamHandle,
    },
    CopyToHost {
        src: DevicePtr,
        stream: StreamHandle,
    },
    Fill {
        dst: DevicePtr,
        bytes: usize,
        stream: StreamHandle,
    },
    /// The device addresses among the kernel's parameters, in order.
    Launch {
        function: String,
        pointers: Vec<DevicePtr>,
        stream: StreamHandle,
    },
    ImportMemory {
        memory: ExternalMemoryHandle,
        kind: ExternalMemoryKind,
        size: u64,
        dedicated: bool,
    },
    MapExternalBuffer {
        memory: ExternalMemoryHandle,
        ptr: DevicePtr,
        offset: u64,
        bytes: u64,
    },
    FreeExternalBuffer(DevicePtr),
    DestroyExternalMemory(ExternalMemoryHandle),
    ImportSemaphore {
        semaphore: SemaphoreHandle,
        kind: SemaphoreKind,
    },
    SignalSemaphore {
        semaphore: SemaphoreHandle,
        value: u64,
        stream: StreamHandle,
    },
    WaitSemaphore {
        semaphore: SemaphoreHandle,
        value: u64,
        stream: StreamHandle,
    },
    DestroySemaphore(SemaphoreHandle),
    HostRegister {
        ptr: usize,
        bytes: usize,
    },
    HostUnregister(usize),
    GlRegister {
        resource: GraphicsHandle,
        texture: u32,
    },
    GraphicsMap {
        resource: GraphicsHandle,
        stream: StreamHandle,
    },
    GraphicsArray {
        resource: GraphicsHandle,
        array: ArrayHandle,
    },
    GraphicsUnmap {
        resource: GraphicsHandle,
        stream: StreamHandle,
    },
    GraphicsUnregister(GraphicsHandle),
}

/// Which of a kernel's parameters are device addresses (u64); the others
/// are u32. Kept next to `kernels/*.cu`'s signatures.
fn pointer_params(function: &str) -> &'static [usize] {
    match function {
        "psnr_sse_u8" | "psnr_sse_u16" => &[0, 2, 6],
        "motion_sad_u8" | "motion_sad_u16" | "motion_sad_u16_wide" => &[0, 2, 7],
        "split_chroma_u8" | "split_chroma_u16" => &[0, 2, 3],
        "shift_plane_u16" => &[0, 2],
        "vif_scale0_u8" | "vif_scale0_u16" | "vif_scale1" | "vif_scale2" | "vif_scale3" => {
            &[0, 2, 7, 9, 10, 11]
        }
        other => panic!("mock driver: add {other}'s pointer parameters"),
    }
}

#[derive(Default)]
struct State {
    log: Vec<Call>,
    next_handle: usize,
    next_ptr: DevicePtr,
    pinned: HashMap<usize, Box<[u8]>>,
    functions: HashMap<usize, String>,
    /// Imported fds, kept as CUDA keeps them: until the import is destroyed.
    fds: HashMap<usize, OwnedFd>,
    /// Fail the next call of this operation (e.g. "launch").
    fail: Option<&'static str>,
    /// Fallible calls made so far, and the one (1-based) that fails.
    checked: usize,
    fail_at: Option<usize>,
    /// The operation the injected failure hit.
    injected: Option<&'static str>,
    /// Streams created and not yet destroyed.
    live_streams: usize,
    /// Semaphore waits never end (a producer that never signals).
    stall_semaphores: bool,
    /// Streams behind such a wait, and events recorded on them.
    stalled_streams: std::collections::HashSet<StreamHandle>,
    stalled_events: std::collections::HashSet<EventHandle>,
    /// Host functions queued behind a stalled wait.
    held_host_fns: Vec<HostFn>,
}

/// The recording driver; clone the `Arc` to read the log after use.
/// The handle the mock gives the legacy default stream.
pub const LEGACY_STREAM: StreamHandle = StreamHandle::from_raw(1);

#[derive(Default)]
pub struct MockDriver {
    state: Mutex<State>,
}

impl MockDriver {
    /// A driver and a [`Gpu`] on it.
    pub fn gpu() -> (Arc<MockDriver>, Gpu) {
        let driver = Arc::new(MockDriver::default());
        (driver.clone(), Gpu::new(driver))
    }

    pub fn log(&self) -> Vec<Call> {
        self.state.lock().unwrap().log.clone()
    }

    pub fn mark(&self, frame: u32) {
        self.push(Call::Mark(frame));
    }

    /// From now on a semaphore wait never ends: work queued behind it (on
    /// its stream, or on streams waiting for events recorded after it)
    /// never runs, its events never fire, and a host wait for them fails
    /// ("would wait for ever") instead of hanging the test.
    pub fn stall_semaphore_waits(&self) {
        self.state.lock().unwrap().stall_semaphores = true;
    }

    /// The stalled semaphores are signalled (and later waits end at
    /// once): stalled streams and events complete, and the host functions
    /// queued behind them run, on this thread, as a runtime runs them.
    pub fn end_stalls(&self) {
        let held = {
            let mut state = self.state.lock().unwrap();
            state.stall_semaphores = false;
            state.stalled_streams.clear();
            state.stalled_events.clear();
            std::mem::take(&mut state.held_host_fns)
        };
        for func in held {
            func();
        }
    }

    fn stalled(&self, what: &str) -> Result<()> {
        Err(Error::gpu(
            GpuApi::Mock,
            what,
            GpuCode::Other(-1),
            "would wait for ever (a stalled semaphore wait)",
        ))
    }

    /// The next call of `operation` fails as a runtime would.
    pub fn fail_next(&self, operation: &'static str) {
        self.state.lock().unwrap().fail = Some(operation);
    }

    /// The `n`th fallible call from the driver's creation (1-based, in
    /// the order calls are made) fails as a runtime would: for sweeping a
    /// failure over every call of a run.
    pub fn fail_call(&self, n: usize) {
        self.state.lock().unwrap().fail_at = Some(n);
    }

    /// The operation the injected failure hit, once it has.
    pub fn injected_failure(&self) -> Option<&'static str> {
        self.state.lock().unwrap().injected
    }

    /// Fallible calls made so far.
    pub fn checked_calls(&self) -> usize {
        self.state.lock().unwrap().checked
    }

    /// What is still allocated: device buffers, pinned buffers, events,
    /// streams, imported fds (all zero once everything was released).
    pub fn live(&self) -> [usize; 5] {
        let s = self.state.lock().unwrap();
        let mut buffers = std::collections::HashSet::new();
        let mut events = std::collections::HashSet::new();
        for call in &s.log {
            match call {
                Call::Alloc { ptr, .. } => {
                    buffers.insert(*ptr);
                }
                Call::Free(ptr) => {
                    buffers.remove(ptr);
                }
                Call::EventCreate(h) => {
                    events.insert(*h);
                }
                Call::EventDestroy(h) => {
                    events.remove(h);
                }
                _ => {}
            }
        }
        [
            buffers.len(),
            s.pinned.len(),
            events.len(),
            s.live_streams,
            s.fds.len(),
        ]
    }

    fn push(&self, call: Call) {
        self.state.lock().unwrap().log.push(call);
    }

    fn check(&self, operation: &'static str) -> Result<()> {
        let mut s = self.state.lock().unwrap();
        s.checked += 1;
        if s.fail == Some(operation) || s.fail_at == Some(s.checked) {
            s.fail = None;
            s.injected = Some(operation);
            return Err(Error::gpu(
                GpuApi::Mock,
                operation,
                GpuCode::Other(-1),
                "injected failure",
            ));
        }
        Ok(())
    }

    /// A fresh raw handle value, of whichever kind the caller wraps it in.
    fn handle(&self) -> usize {
        let mut s = self.state.lock().unwrap();
        s.next_handle += 1;
        s.next_handle
    }

    /// Fake device addresses: page-aligned, never 0, never overlapping.
    fn address(&self, bytes: u64) -> DevicePtr {
        let mut s = self.state.lock().unwrap();
        let ptr = 0x1000_0000 + s.next_ptr;
        s.next_ptr += bytes.div_ceil(4096).max(1) * 4096;
        ptr
    }

    /// Keeps an imported fd until `destroy` (the runtime's ownership).
    fn keep_fd(&self, handle: usize, fd: OwnedFd) {
        self.state.lock().unwrap().fds.insert(handle, fd);
    }

    fn release_fd(&self, handle: usize) {
        self.state.lock().unwrap().fds.remove(&handle);
    }
}

// SAFETY: the mock touches no device; pinned memory is its own.
unsafe impl Driver for MockDriver {
    fn backend(&self) -> crate::gpu::GpuBackend {
        crate::gpu::GpuBackend::Cuda
    }
    fn describe(&self) -> String {
        "mock device".into()
    }
    fn code_target(&self) -> String {
        "mock".into()
    }
    fn uuid(&self) -> [u8; 16] {
        [0x5a; 16]
    }
    fn memory_info(&self) -> Result<MemoryInfo> {
        Ok(MemoryInfo {
            free: 1 << 30,
            total: 1 << 30,
        })
    }
    fn caches_kernels(&self) -> bool {
        false
    }

    fn alloc(&self, bytes: usize) -> Result<DevicePtr> {
        self.check("alloc")?;
        let ptr = self.address(bytes as u64);
        self.push(Call::Alloc { ptr, bytes });
        Ok(ptr)
    }
    unsafe fn free(&self, ptr: DevicePtr) {
        self.push(Call::Free(ptr));
    }
    fn alloc_pinned(&self, bytes: usize) -> Result<*mut u8> {
        self.check("alloc_pinned")?;
        let mut memory = vec![0u8; bytes.max(1)].into_boxed_slice();
        let ptr = memory.as_mut_ptr();
        self.state
            .lock()
            .unwrap()
            .pinned
            .insert(ptr as usize, memory);
        Ok(ptr)
    }
    unsafe fn free_pinned(&self, ptr: *mut u8) {
        self.state.lock().unwrap().pinned.remove(&(ptr as usize));
    }

    fn stream_create(&self) -> Result<StreamHandle> {
        self.check("stream_create")?;
        let h = StreamHandle::from_raw(self.handle());
        self.push(Call::StreamCreate(h));
        self.state.lock().unwrap().live_streams += 1;
        Ok(h)
    }
    unsafe fn stream_destroy(&self, _stream: StreamHandle) {
        self.state.lock().unwrap().live_streams -= 1;
    }
    unsafe fn stream_synchronize(&self, stream: StreamHandle) -> Result<()> {
        self.push(Call::StreamSync(stream));
        if self.state.lock().unwrap().stalled_streams.contains(&stream) {
            return self.stalled("stream_synchronize");
        }
        Ok(())
    }

    fn event_create(&self) -> Result<EventHandle> {
        self.check("event_create")?;
        let h = EventHandle::from_raw(self.handle());
        self.push(Call::EventCreate(h));
        Ok(h)
    }
    fn timed_event_create(&self) -> Result<EventHandle> {
        self.event_create()
    }
    unsafe fn event_elapsed_ms(&self, _start: EventHandle, _end: EventHandle) -> Result<f32> {
        Ok(0.0)
    }
    unsafe fn event_destroy(&self, event: EventHandle) {
        self.push(Call::EventDestroy(event));
    }
    unsafe fn event_record(&self, event: EventHandle, stream: StreamHandle) -> Result<()> {
        self.check("event_record")?;
        self.push(Call::EventRecord { event, stream });
        let mut state = self.state.lock().unwrap();
        if state.stalled_streams.contains(&stream) {
            state.stalled_events.insert(event);
        } else {
            state.stalled_events.remove(&event);
        }
        Ok(())
    }
    fn legacy_stream(&self) -> StreamHandle {
        LEGACY_STREAM
    }
    unsafe fn stream_wait_event(&self, stream: StreamHandle, event: EventHandle) -> Result<()> {
        self.check("stream_wait_event")?;
        self.push(Call::StreamWait { stream, event });
        let mut state = self.state.lock().unwrap();
        if state.stalled_events.contains(&event) {
            state.stalled_streams.insert(stream);
        }
        Ok(())
    }
    unsafe fn event_query(&self, event: EventHandle) -> Result<bool> {
        self.push(Call::EventQuery(event));
        Ok(!self.state.lock().unwrap().stalled_events.contains(&event))
    }
    unsafe fn event_synchronize(&self, event: EventHandle) -> Result<()> {
        self.push(Call::EventSync(event));
        if self.state.lock().unwrap().stalled_events.contains(&event) {
            return self.stalled("event_synchronize");
        }
        Ok(())
    }

    unsafe fn launch_host_func(&self, stream: StreamHandle, func: HostFn) -> Result<()> {
        self.check("launch_host_func")?;
        let mut state = self.state.lock().unwrap();
        if state.stalled_streams.contains(&stream) {
            // Runs if the stall ends (never, in these tests): kept, as a
            // runtime keeps a queued callback.
            state.held_host_fns.push(func);
        } else {
            drop(state);
            func();
        }
        Ok(())
    }

    unsafe fn copy_2d(&self, copy: &Copy2d, stream: StreamHandle) -> Result<()> {
        self.check("copy_2d")?;
        let (src_host, src_device, src_array) = match copy.src {
            Memory::Host(p) => (Some(p as usize), None, None),
            Memory::Device(d) => (None, Some(d), None),
            Memory::Array(a) => (None, None, Some(a)),
        };
        self.push(Call::Copy2d {
            src_host,
            src_device,
            src_array,
            dst: copy.dst,
            width_bytes: copy.width_bytes,
            height: copy.height,
            stream,
        });
        Ok(())
    }
    unsafe fn copy_to_host(
        &self,
        dst: *mut u8,
        src: DevicePtr,
        bytes: usize,
        stream: StreamHandle,
    ) -> Result<()> {
        // SAFETY: the caller upholds the Driver method's contract (pointers the mock handed out).
        unsafe {
            self.check("copy_to_host")?;
            // Zero sums: every reader of the results sees a plausible frame.
            std::ptr::write_bytes(dst, 0, bytes);
            self.push(Call::CopyToHost { src, stream });
            Ok(())
        }
    }
    unsafe fn memset_u32(
        &self,
        dst: DevicePtr,
        _value: u32,
        count: usize,
        stream: StreamHandle,
    ) -> Result<()> {
        self.check("memset")?;
        self.push(Call::Fill {
            dst,
            bytes: count * 4,
            stream,
        });
        Ok(())
    }

    fn compile(&self, _source: &str, _name: &str) -> Result<Vec<u8>> {
        Ok(b"mock image".to_vec())
    }
    fn module_load(&self, _image: &[u8]) -> Result<ModuleHandle> {
        self.check("module_load")?;
        Ok(ModuleHandle::from_raw(self.handle()))
    }
    unsafe fn module_unload(&self, _module: ModuleHandle) {}
    unsafe fn function(&self, _module: ModuleHandle, name: &str) -> Result<FunctionHandle> {
        let h = self.handle();
        self.state
            .lock()
            .unwrap()
            .functions
            .insert(h, name.to_string());
        Ok(FunctionHandle::from_raw(h))
    }
    unsafe fn launch(
        &self,
        function: FunctionHandle,
        _dims: &LaunchDims,
        stream: StreamHandle,
        args: &mut KernelArgs,
    ) -> Result<()> {
        self.check("launch")?;
        let name = self.state.lock().unwrap().functions[&function.raw()].clone();
        let pointers = pointer_params(&name)
            .iter()
            .map(|&i| args.get::<DevicePtr>(i))
            .collect();
        self.push(Call::Launch {
            function: name,
            pointers,
            stream,
        });
        Ok(())
    }
}

// SAFETY: as above. Imports behave as CUDA's: a failed import leaves the
// fd to the caller (which closes it), a successful one keeps it until
// destroyed.
unsafe impl Interop for MockDriver {
    fn import_memory(
        &self,
        fd: OwnedFd,
        desc: &ExternalMemoryDesc,
    ) -> Result<ExternalMemoryHandle> {
        self.check("import_memory")?;
        let memory = ExternalMemoryHandle::from_raw(self.handle());
        self.keep_fd(memory.raw(), fd);
        self.push(Call::ImportMemory {
            memory,
            kind: desc.kind,
            size: desc.size,
            dedicated: desc.dedicated,
        });
        Ok(memory)
    }
    unsafe fn map_external_buffer(
        &self,
        memory: ExternalMemoryHandle,
        offset: u64,
        bytes: u64,
    ) -> Result<DevicePtr> {
        self.check("map_external_buffer")?;
        let ptr = self.address(bytes);
        self.push(Call::MapExternalBuffer {
            memory,
            ptr,
            offset,
            bytes,
        });
        Ok(ptr)
    }
    unsafe fn free_external_buffer(&self, ptr: DevicePtr) {
        self.push(Call::FreeExternalBuffer(ptr));
    }
    unsafe fn destroy_external_memory(&self, memory: ExternalMemoryHandle) {
        self.release_fd(memory.raw());
        self.push(Call::DestroyExternalMemory(memory));
    }

    fn import_semaphore(&self, fd: OwnedFd, kind: SemaphoreKind) -> Result<SemaphoreHandle> {
        self.check("import_semaphore")?;
        let semaphore = SemaphoreHandle::from_raw(self.handle());
        self.keep_fd(semaphore.raw(), fd);
        self.push(Call::ImportSemaphore { semaphore, kind });
        Ok(semaphore)
    }
    unsafe fn signal_semaphore(
        &self,
        semaphore: SemaphoreHandle,
        value: u64,
        stream: StreamHandle,
    ) -> Result<()> {
        self.push(Call::SignalSemaphore {
            semaphore,
            value,
            stream,
        });
        Ok(())
    }
    unsafe fn wait_semaphore(
        &self,
        semaphore: SemaphoreHandle,
        value: u64,
        stream: StreamHandle,
    ) -> Result<()> {
        self.push(Call::WaitSemaphore {
            semaphore,
            value,
            stream,
        });
        let mut state = self.state.lock().unwrap();
        if state.stall_semaphores {
            state.stalled_streams.insert(stream);
        }
        Ok(())
    }
    unsafe fn destroy_semaphore(&self, semaphore: SemaphoreHandle) {
        self.release_fd(semaphore.raw());
        self.push(Call::DestroySemaphore(semaphore));
    }

    unsafe fn host_register(&self, ptr: *mut u8, bytes: usize) -> Result<()> {
        self.check("host_register")?;
        self.push(Call::HostRegister {
            ptr: ptr as usize,
            bytes,
        });
        Ok(())
    }
    unsafe fn host_device_pointer(&self, ptr: *mut u8) -> Result<DevicePtr> {
        Ok(ptr as DevicePtr)
    }
    unsafe fn host_unregister(&self, ptr: *mut u8) {
        self.push(Call::HostUnregister(ptr as usize));
    }

    unsafe fn export_dmabuf(&self, _ptr: DevicePtr, _bytes: usize) -> Result<OwnedFd> {
        self.check("export_dmabuf")?;
        // A memfd stands in for the dma-buf.
        nix::sys::memfd::memfd_create(
            c"mock-dmabuf",
            nix::sys::memfd::MemFdCreateFlag::MFD_CLOEXEC,
        )
        .map_err(|e| crate::error::Error::InvalidArgument(e.to_string()))
    }

    unsafe fn gl_register_image(&self, texture: u32, _target: u32) -> Result<GraphicsHandle> {
        self.check("gl_register_image")?;
        let resource = GraphicsHandle::from_raw(self.handle());
        self.push(Call::GlRegister { resource, texture });
        Ok(resource)
    }
    unsafe fn graphics_map(&self, resource: GraphicsHandle, stream: StreamHandle) -> Result<()> {
        self.check("graphics_map")?;
        self.push(Call::GraphicsMap { resource, stream });
        Ok(())
    }
    unsafe fn graphics_array(&self, resource: GraphicsHandle) -> Result<ArrayHandle> {
        let array = ArrayHandle::from_raw(self.handle());
        self.push(Call::GraphicsArray { resource, array });
        Ok(array)
    }
    unsafe fn graphics_unmap(&self, resource: GraphicsHandle, stream: StreamHandle) -> Result<()> {
        self.push(Call::GraphicsUnmap { resource, stream });
        Ok(())
    }
    unsafe fn graphics_unregister(&self, resource: GraphicsHandle) {
        self.push(Call::GraphicsUnregister(resource));
    }
}

/// The stream a call queues its work on, if it is stream work.
pub fn stream_of(call: &Call) -> Option<StreamHandle> {
    match call {
        Call::Copy2d { stream, .. }
        | Call::Launch { stream, .. }
        | Call::Fill { stream, .. }
        | Call::CopyToHost { stream, .. }
        | Call::EventRecord { stream, .. }
        | Call::StreamWait { stream, .. }
        | Call::SignalSemaphore { stream, .. }
        | Call::WaitSemaphore { stream, .. }
        | Call::GraphicsMap { stream, .. }
        | Call::GraphicsUnmap { stream, .. } => Some(*stream),
        _ => None,
    }
}

/// The order the device runs a log's stream work in, as CUDA defines it:
/// work on one stream runs in order; a `StreamWait` orders the stream's
/// later work after the work queued before the event's latest record (at
/// the time of the wait); and work queued after the host saw an event fire
/// (`EventSync`, `EventQuery`, `StreamSync`) runs after that event's work.
pub struct DeviceOrder {
    /// For each call, the calls it directly follows.
    after: Vec<Vec<usize>>,
}

impl DeviceOrder {
    pub fn new(log: &[Call]) -> Self {
        let mut after = vec![Vec::new(); log.len()];
        let mut last_on: HashMap<StreamHandle, usize> = HashMap::new();
        let mut recorded: HashMap<EventHandle, usize> = HashMap::new();
        // Work the host has seen finish: everything queued later follows it.
        let mut host_seen: Vec<usize> = Vec::new();
        // How much of `host_seen` each stream already follows.
        let mut seen_by: HashMap<StreamHandle, usize> = HashMap::new();
        for (i, call) in log.iter().enumerate() {
            match call {
                Call::EventSync(e) | Call::EventQuery(e) => {
                    host_seen.extend(recorded.get(e).copied());
                    continue;
                }
                Call::StreamSync(s) => {
                    host_seen.extend(last_on.get(s).copied());
                    continue;
                }
                _ => {}
            }
            let Some(stream) = stream_of(call) else {
                continue;
            };
            after[i].extend(last_on.get(&stream).copied());
            let from = seen_by.insert(stream, host_seen.len()).unwrap_or(0);
            after[i].extend(host_seen[from..].iter().copied());
            match call {
                Call::StreamWait { event, .. } => after[i].extend(recorded.get(event).copied()),
                Call::EventRecord { event, .. } => {
                    recorded.insert(*event, i);
                }
                _ => {}
            }
            last_on.insert(stream, i);
        }
        Self { after }
    }

    /// Whether the work of call `a` is finished before the work of call
    /// `b` starts.
    pub fn before(&self, a: usize, b: usize) -> bool {
        let mut seen = vec![false; self.after.len()];
        let mut todo = vec![b];
        while let Some(c) = todo.pop() {
            for &d in &self.after[c] {
                if d == a {
                    return true;
                }
                if d > a && !seen[d] {
                    seen[d] = true;
                    todo.push(d);
                }
            }
        }
        false
    }
}
