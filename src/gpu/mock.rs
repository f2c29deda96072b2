//! A recording [`Driver`] for tests without a device: every call is logged
//! in order, device memory is fake addresses, pinned memory is real host
//! memory, and readbacks return zeros (all sums 0: plausible values). The
//! contract tests (`contract_tests.rs`) assert on the log how the engine
//! uses a device: which planes are uploaded, when, and in which order
//! relative to the kernels that read them.

use super::driver::{Copy2d, DevicePtr, Driver, Handle, LaunchDims, Memory};
use super::Gpu;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::ffi::c_void;
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
    StreamCreate(Handle),
    StreamSync(Handle),
    EventCreate(Handle),
    EventRecord {
        event: Handle,
        stream: Handle,
    },
    StreamWait {
        stream: Handle,
        event: Handle,
    },
    EventSync(Handle),
    /// `src_host` is the pinned staging address for uploads, `None` for
    /// device-to-device copies (`src_device`).
    Copy2d {
        src_host: Option<usize>,
        src_device: Option<DevicePtr>,
        dst: DevicePtr,
        width_bytes: usize,
        height: usize,
        stream: Handle,
    },
    CopyToHost {
        src: DevicePtr,
        stream: Handle,
    },
    Fill {
        dst: DevicePtr,
        bytes: usize,
        stream: Handle,
    },
    /// The device addresses among the kernel's parameters, in order.
    Launch {
        function: String,
        pointers: Vec<DevicePtr>,
        stream: Handle,
    },
}

/// Which of a kernel's parameters are device addresses (u64); the others
/// are u32. Kept next to `kernels/*.cu`'s signatures.
fn pointer_params(function: &str) -> &'static [usize] {
    match function {
        "psnr_sse_u8" | "psnr_sse_u16" => &[0, 2, 6],
        "motion_vertical_u8" | "motion_vertical_u16" => &[0, 2, 7],
        "motion_horizontal_sad" => &[0, 3],
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
    /// Fail the next call of this operation (e.g. "launch").
    fail: Option<&'static str>,
}

/// The recording driver; clone the `Arc` to read the log after use.
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

    /// The next call of `operation` fails as a runtime would.
    pub fn fail_next(&self, operation: &'static str) {
        self.state.lock().unwrap().fail = Some(operation);
    }

    fn push(&self, call: Call) {
        self.state.lock().unwrap().log.push(call);
    }

    fn check(&self, operation: &'static str) -> Result<()> {
        let mut s = self.state.lock().unwrap();
        if s.fail == Some(operation) {
            s.fail = None;
            return Err(Error::Gpu {
                backend: "mock".into(),
                operation: operation.into(),
                reason: "injected failure".into(),
            });
        }
        Ok(())
    }

    fn handle(&self) -> Handle {
        let mut s = self.state.lock().unwrap();
        s.next_handle += 1;
        Handle(s.next_handle)
    }
}

// SAFETY: the mock touches no device; pinned memory is its own.
unsafe impl Driver for MockDriver {
    fn backend(&self) -> &'static str {
        "mock"
    }
    fn describe(&self) -> String {
        "mock device".into()
    }
    fn code_target(&self) -> String {
        "mock".into()
    }
    fn caches_kernels(&self) -> bool {
        false
    }

    fn alloc(&self, bytes: usize) -> Result<DevicePtr> {
        self.check("alloc")?;
        let ptr = {
            let mut s = self.state.lock().unwrap();
            // Page-aligned, never 0, never overlapping.
            let ptr = 0x1000_0000 + s.next_ptr;
            s.next_ptr += (bytes as u64).div_ceil(4096).max(1) * 4096;
            ptr
        };
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

    fn stream_create(&self) -> Result<Handle> {
        let h = self.handle();
        self.push(Call::StreamCreate(h));
        Ok(h)
    }
    unsafe fn stream_destroy(&self, _stream: Handle) {}
    unsafe fn stream_synchronize(&self, stream: Handle) -> Result<()> {
        self.push(Call::StreamSync(stream));
        Ok(())
    }

    fn event_create(&self) -> Result<Handle> {
        let h = self.handle();
        self.push(Call::EventCreate(h));
        Ok(h)
    }
    fn timed_event_create(&self) -> Result<Handle> {
        self.event_create()
    }
    unsafe fn event_elapsed_ms(&self, _start: Handle, _end: Handle) -> Result<f32> {
        Ok(0.0)
    }
    unsafe fn event_destroy(&self, _event: Handle) {}
    unsafe fn event_record(&self, event: Handle, stream: Handle) -> Result<()> {
        self.push(Call::EventRecord { event, stream });
        Ok(())
    }
    unsafe fn stream_wait_event(&self, stream: Handle, event: Handle) -> Result<()> {
        self.push(Call::StreamWait { stream, event });
        Ok(())
    }
    unsafe fn event_query(&self, _event: Handle) -> Result<bool> {
        Ok(true)
    }
    unsafe fn event_synchronize(&self, event: Handle) -> Result<()> {
        self.push(Call::EventSync(event));
        Ok(())
    }

    unsafe fn copy_2d(&self, copy: &Copy2d, stream: Handle) -> Result<()> {
        self.check("copy_2d")?;
        let (src_host, src_device) = match copy.src {
            Memory::Host(p) => (Some(p as usize), None),
            Memory::Device(d) => (None, Some(d)),
        };
        self.push(Call::Copy2d {
            src_host,
            src_device,
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
        stream: Handle,
    ) -> Result<()> {
        // Zero sums: every reader of the results sees a plausible frame.
        std::ptr::write_bytes(dst, 0, bytes);
        self.push(Call::CopyToHost { src, stream });
        Ok(())
    }
    unsafe fn memset_u32(
        &self,
        dst: DevicePtr,
        _value: u32,
        count: usize,
        stream: Handle,
    ) -> Result<()> {
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
    fn module_load(&self, _image: &[u8]) -> Result<Handle> {
        Ok(self.handle())
    }
    unsafe fn module_unload(&self, _module: Handle) {}
    unsafe fn function(&self, _module: Handle, name: &str) -> Result<Handle> {
        let h = self.handle();
        self.state
            .lock()
            .unwrap()
            .functions
            .insert(h.0, name.to_string());
        Ok(h)
    }
    unsafe fn launch(
        &self,
        function: Handle,
        _dims: &LaunchDims,
        stream: Handle,
        params: &mut [*mut c_void],
    ) -> Result<()> {
        self.check("launch")?;
        let name = self.state.lock().unwrap().functions[&function.0].clone();
        let pointers = pointer_params(&name)
            .iter()
            .map(|&i| *(params[i] as *const u64))
            .collect();
        self.push(Call::Launch {
            function: name,
            pointers,
            stream,
        });
        Ok(())
    }
}
