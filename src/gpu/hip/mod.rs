//! HIP driver (AMD ROCm): the `Driver` calls through the HIP runtime and
//! hiprtc, loaded at run time by `cubecl-hip-sys` (ADR 0006). FFI only: the
//! logic is the backend-neutral layer's, shared with CUDA. The import calls
//! (`super::driver::Interop`) are in `interop.rs`.

mod interop;

use super::args::KernelArgs;
use super::driver::{
    host_fn_from_raw, host_fn_into_raw, run_host_fn, Copy2d, DevicePtr, Driver, EventHandle,
    FunctionHandle, HostFn, LaunchDims, Memory, MemoryInfo, ModuleHandle, StreamHandle,
};
use super::DeviceSelector;
use crate::error::{Error, GpuApi, GpuCode, Result};
use cubecl_hip_sys as hip;
use std::ffi::{c_void, CStr, CString};

/// HIP 6.2, as `hipRuntimeGetVersion` encodes it (major * 10^7 + minor * 10^5 + patch).
const MIN_RUNTIME_VERSION: i32 = 60_200_000;

/// `major.minor.patch` of an encoded HIP version.
fn version_string(v: i32) -> String {
    format!("{}.{}.{}", v / 10_000_000, v / 100_000 % 100, v % 100_000)
}

/// Are the HIP runtime and hiprtc libraries loadable?
pub fn runtime_present() -> bool {
    hip::is_available()
}

fn unavailable(reason: impl Into<String>) -> Error {
    Error::BackendUnavailable {
        backend: GpuApi::Hip,
        reason: reason.into(),
    }
}

fn check(result: hip::hipError_t, operation: &str) -> Result<()> {
    if result == hip::hipError_t_hipSuccess {
        return Ok(());
    }
    Err(Error::gpu(
        GpuApi::Hip,
        operation,
        GpuCode::from_cuda_or_hip(result as i64),
        error_name(result),
    ))
}

/// The runtime's answer as `hipErrorNotSupported (801)`.
fn error_name(result: hip::hipError_t) -> String {
    // SAFETY: hipGetErrorName returns a static string.
    let name = unsafe {
        let p = hip::hipGetErrorName(result);
        if p.is_null() {
            "error".to_string()
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    };
    format!("{name} ({result})")
}

/// One HIP device. HIP keeps the current device per thread, so every call
/// selects it first.
pub struct HipDriver {
    index: i32,
    name: String,
    uuid: [u8; 16],
    arch: String,
    runtime_version: i32,
}

impl HipDriver {
    pub fn open(selector: &DeviceSelector) -> Result<Self> {
        if !runtime_present() {
            return Err(unavailable(
                "the HIP runtime (libamdhip64.so) or hiprtc (libhiprtc.so) was not found",
            ));
        }
        // SAFETY: plain runtime calls with valid out-pointers.
        unsafe {
            check(hip::hipInit(0), "hipInit")
                .map_err(|e| unavailable(format!("no usable HIP runtime: {e}")))?;
            // The bindings follow ROCm 6.2+ layouts (hipDeviceProp_tR0600)
            // and panic on a missing symbol: refuse older runtimes up front.
            let mut runtime_version = 0;
            check(
                hip::hipRuntimeGetVersion(&mut runtime_version),
                "hipRuntimeGetVersion",
            )?;
            if runtime_version < MIN_RUNTIME_VERSION {
                return Err(unavailable(format!(
                    "HIP runtime {} is too old: vmafx needs ROCm 6.2 or newer",
                    version_string(runtime_version)
                )));
            }
            let mut count = 0;
            check(hip::hipGetDeviceCount(&mut count), "hipGetDeviceCount")
                .map_err(|e| unavailable(format!("no HIP device: {e}")))?;
            if count == 0 {
                return Err(unavailable(
                    "the HIP runtime is present but there is no HIP device",
                ));
            }
            let mut found = None;
            for index in 0..count {
                let mut device = 0;
                check(hip::hipDeviceGet(&mut device, index), "hipDeviceGet")?;
                let mut raw = std::mem::zeroed::<hip::hipUUID>();
                check(hip::hipDeviceGetUuid(&mut raw, device), "hipDeviceGetUuid")?;
                let uuid = raw.bytes.map(|b| b as u8);
                if selector.matches(index as u32, &super::format_uuid(&uuid)) {
                    found = Some((index, device, uuid));
                    break;
                }
            }
            let (index, device, uuid) = found.ok_or_else(|| {
                unavailable(format!(
                    "no HIP device matches {selector} ({count} present)"
                ))
            })?;
            let mut name = [0 as std::ffi::c_char; 256];
            check(
                hip::hipDeviceGetName(name.as_mut_ptr(), 256, device),
                "hipDeviceGetName",
            )?;
            let name = CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned();
            let mut props = Box::new(std::mem::zeroed::<hip::hipDeviceProp_tR0600>());
            check(
                hip::hipGetDevicePropertiesR0600(&mut *props, index),
                "hipGetDeviceProperties",
            )?;
            let arch = CStr::from_ptr(props.gcnArchName.as_ptr())
                .to_string_lossy()
                .into_owned();
            Ok(Self {
                index,
                name,
                uuid,
                arch,
                runtime_version,
            })
        }
    }

    fn bind(&self) -> Result<()> {
        // SAFETY: selects a device index that exists.
        check(unsafe { hip::hipSetDevice(self.index) }, "hipSetDevice")
    }
}

fn stream(h: StreamHandle) -> hip::hipStream_t {
    h.raw() as hip::hipStream_t
}
fn event(h: EventHandle) -> hip::hipEvent_t {
    h.raw() as hip::hipEvent_t
}

fn rtc_check(r: hip::hiprtcResult, what: &str) -> std::result::Result<(), String> {
    if r == hip::hiprtcResult_HIPRTC_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what} failed (hiprtc error {r})"))
    }
}

// SAFETY: each method calls the HIP runtime on the handles the engine passes, as the trait's per-method contracts require.
unsafe impl Driver for HipDriver {
    fn backend(&self) -> super::GpuBackend {
        super::GpuBackend::Hip
    }

    fn describe(&self) -> String {
        format!(
            "HIP device {} ({}, {}, {})",
            self.index,
            self.name,
            super::format_uuid(&self.uuid),
            self.arch
        )
    }

    fn uuid(&self) -> [u8; 16] {
        self.uuid
    }

    fn memory_info(&self) -> Result<MemoryInfo> {
        self.bind()?;
        let (mut free, mut total) = (0, 0);
        // SAFETY: valid out-pointers.
        check(
            // SAFETY: out-pointers to locals, valid for the call; the runtime is initialised and its context bound.
            unsafe { hip::hipMemGetInfo(&mut free, &mut total) },
            "hipMemGetInfo",
        )?;
        Ok(MemoryInfo { free, total })
    }

    fn code_target(&self) -> String {
        format!("hsaco-{}-hip{}", self.arch, self.runtime_version)
    }

    fn alloc(&self, bytes: usize) -> Result<DevicePtr> {
        self.bind()?;
        let mut ptr = std::ptr::null_mut();
        check(
            // SAFETY: out-pointers to locals, valid for the call; the runtime is initialised and its context bound.
            unsafe { hip::hipMalloc(&mut ptr, bytes.max(1)) },
            "hipMalloc",
        )?;
        Ok(ptr as DevicePtr)
    }

    unsafe fn free(&self, ptr: DevicePtr) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if self.bind().is_ok() {
                hip::hipFree(ptr as *mut c_void);
            }
        }
    }

    fn alloc_pinned(&self, bytes: usize) -> Result<*mut u8> {
        self.bind()?;
        let mut ptr = std::ptr::null_mut();
        check(
            // SAFETY: out-pointers to locals, valid for the call; the runtime is initialised and its context bound.
            unsafe { hip::hipHostMalloc(&mut ptr, bytes.max(1), 0) },
            "hipHostMalloc",
        )?;
        Ok(ptr as *mut u8)
    }

    unsafe fn free_pinned(&self, ptr: *mut u8) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if self.bind().is_ok() {
                hip::hipHostFree(ptr as *mut c_void);
            }
        }
    }

    fn stream_create(&self) -> Result<StreamHandle> {
        self.bind()?;
        let mut s = std::ptr::null_mut();
        check(
            // SAFETY: out-pointers to locals, valid for the call; the runtime is initialised and its context bound.
            unsafe { hip::hipStreamCreateWithFlags(&mut s, hip::hipStreamNonBlocking) },
            "hipStreamCreate",
        )?;
        Ok(StreamHandle::from_raw(s as usize))
    }

    unsafe fn stream_destroy(&self, s: StreamHandle) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if self.bind().is_ok() {
                hip::hipStreamDestroy(stream(s));
            }
        }
    }

    unsafe fn stream_synchronize(&self, s: StreamHandle) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            check(hip::hipStreamSynchronize(stream(s)), "hipStreamSynchronize")
        }
    }

    fn event_create(&self) -> Result<EventHandle> {
        self.bind()?;
        let mut e = std::ptr::null_mut();
        check(
            // SAFETY: out-pointers to locals, valid for the call; the runtime is initialised and its context bound.
            unsafe { hip::hipEventCreateWithFlags(&mut e, hip::hipEventDisableTiming) },
            "hipEventCreate",
        )?;
        Ok(EventHandle::from_raw(e as usize))
    }

    unsafe fn event_destroy(&self, e: EventHandle) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if self.bind().is_ok() {
                hip::hipEventDestroy(event(e));
            }
        }
    }

    unsafe fn event_record(&self, e: EventHandle, s: StreamHandle) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            check(hip::hipEventRecord(event(e), stream(s)), "hipEventRecord")
        }
    }

    fn legacy_stream(&self) -> StreamHandle {
        StreamHandle::from_raw(0) // the null stream, ordered with every blocking stream
    }

    unsafe fn stream_wait_event(&self, s: StreamHandle, e: EventHandle) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            check(
                hip::hipStreamWaitEvent(stream(s), event(e), 0),
                "hipStreamWaitEvent",
            )
        }
    }

    unsafe fn event_query(&self, e: EventHandle) -> Result<bool> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            match hip::hipEventQuery(event(e)) {
                hip::hipError_t_hipErrorNotReady => Ok(false),
                r => check(r, "hipEventQuery").map(|_| true),
            }
        }
    }

    unsafe fn event_synchronize(&self, e: EventHandle) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            check(hip::hipEventSynchronize(event(e)), "hipEventSynchronize")
        }
    }

    unsafe fn launch_host_func(&self, s: StreamHandle, func: HostFn) -> Result<()> {
        self.bind()?;
        let user = host_fn_into_raw(func);
        // SAFETY: a live stream (the caller's promise); the runtime calls
        // run_host_fn once with `user`.
        let r = unsafe { hip::hipLaunchHostFunc(stream(s), Some(run_host_fn), user) };
        if r != hip::hipError_t_hipSuccess {
            // SAFETY: refused: the runtime will not call it.
            drop(unsafe { host_fn_from_raw(user) });
        }
        check(r, "hipLaunchHostFunc")
    }

    fn timed_event_create(&self) -> Result<EventHandle> {
        self.bind()?;
        let mut e = std::ptr::null_mut();
        check(
            // SAFETY: out-pointers to locals, valid for the call; the runtime is initialised and its context bound.
            unsafe { hip::hipEventCreateWithFlags(&mut e, hip::hipEventDefault) },
            "hipEventCreate",
        )?;
        Ok(EventHandle::from_raw(e as usize))
    }

    unsafe fn event_elapsed_ms(&self, start: EventHandle, end: EventHandle) -> Result<f32> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            let mut ms = 0f32;
            check(
                hip::hipEventElapsedTime(&mut ms, event(start), event(end)),
                "hipEventElapsedTime",
            )?;
            Ok(ms)
        }
    }

    unsafe fn copy_2d(&self, c: &Copy2d, s: StreamHandle) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            let (src, kind) = match c.src {
                Memory::Host(h) => (h as *const c_void, hip::hipMemcpyKind_hipMemcpyHostToDevice),
                Memory::Device(d) => (
                    d as *const c_void,
                    hip::hipMemcpyKind_hipMemcpyDeviceToDevice,
                ),
                Memory::Array(a) => {
                    return check(
                        hip::hipMemcpy2DFromArrayAsync(
                            c.dst as *mut c_void,
                            c.dst_pitch,
                            a.raw() as hip::hipArray_const_t,
                            0,
                            0,
                            c.width_bytes,
                            c.height,
                            hip::hipMemcpyKind_hipMemcpyDeviceToDevice,
                            stream(s),
                        ),
                        "hipMemcpy2DFromArrayAsync",
                    )
                }
            };
            check(
                hip::hipMemcpy2DAsync(
                    c.dst as *mut c_void,
                    c.dst_pitch,
                    src,
                    c.src_pitch,
                    c.width_bytes,
                    c.height,
                    kind,
                    stream(s),
                ),
                "hipMemcpy2DAsync",
            )
        }
    }

    unsafe fn copy_to_host(
        &self,
        dst: *mut u8,
        src: DevicePtr,
        bytes: usize,
        s: StreamHandle,
    ) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            check(
                hip::hipMemcpyDtoHAsync(
                    dst as *mut c_void,
                    src as hip::hipDeviceptr_t,
                    bytes,
                    stream(s),
                ),
                "hipMemcpyDtoHAsync",
            )
        }
    }

    unsafe fn memset_u32(
        &self,
        dst: DevicePtr,
        value: u32,
        count: usize,
        s: StreamHandle,
    ) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            check(
                hip::hipMemsetD32Async(dst as hip::hipDeviceptr_t, value as i32, count, stream(s)),
                "hipMemsetD32Async",
            )
        }
    }

    fn compile(&self, source: &str, name: &str) -> Result<Vec<u8>> {
        let fail = |reason: String| {
            Error::gpu(
                GpuApi::Hip,
                format!("hiprtc compile of {name}"),
                GpuCode::KernelCompile,
                reason,
            )
        };
        let src = CString::new(source).map_err(|_| fail("source holds a NUL byte".into()))?;
        let cname = CString::new(name).map_err(|_| fail("name holds a NUL byte".into()))?;
        let options: Vec<CString> = [format!("--offload-arch={}", self.arch), "-std=c++17".into()]
            .into_iter()
            .map(|o| CString::new(o).expect("no NUL in options"))
            .collect();
        let option_ptrs: Vec<_> = options.iter().map(|o| o.as_ptr()).collect();
        // SAFETY: the program lives until destroyed at the end.
        unsafe {
            let mut program = std::ptr::null_mut();
            rtc_check(
                hip::hiprtcCreateProgram(
                    &mut program,
                    src.as_ptr(),
                    cname.as_ptr(),
                    0,
                    std::ptr::null(),
                    std::ptr::null(),
                ),
                "hiprtcCreateProgram",
            )
            .map_err(fail)?;
            let result = (|| {
                let compiled = rtc_check(
                    hip::hiprtcCompileProgram(
                        program,
                        option_ptrs.len() as i32,
                        option_ptrs.as_ptr(),
                    ),
                    "hiprtcCompileProgram",
                );
                if let Err(e) = compiled {
                    let mut size = 0;
                    hip::hiprtcGetProgramLogSize(program, &mut size);
                    let mut log = vec![0u8; size.max(1)];
                    hip::hiprtcGetProgramLog(program, log.as_mut_ptr() as *mut std::ffi::c_char);
                    let log = String::from_utf8_lossy(&log)
                        .trim_end_matches('\0')
                        .to_string();
                    return Err(format!("{e}\n{log}"));
                }
                let mut size = 0;
                rtc_check(
                    hip::hiprtcGetCodeSize(program, &mut size),
                    "hiprtcGetCodeSize",
                )?;
                let mut code = vec![0u8; size];
                rtc_check(
                    hip::hiprtcGetCode(program, code.as_mut_ptr() as *mut std::ffi::c_char),
                    "hiprtcGetCode",
                )?;
                Ok(code)
            })();
            hip::hiprtcDestroyProgram(&mut program);
            result.map_err(fail)
        }
    }

    fn module_load(&self, image: &[u8]) -> Result<ModuleHandle> {
        self.bind()?;
        let mut m = std::ptr::null_mut();
        check(
            // SAFETY: `image` is a NUL-terminated PTX/code object that outlives
            // the call; the out-pointer is a local.
            unsafe { hip::hipModuleLoadData(&mut m, image.as_ptr() as *const c_void) },
            "hipModuleLoadData",
        )?;
        Ok(ModuleHandle::from_raw(m as usize))
    }

    unsafe fn module_unload(&self, m: ModuleHandle) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if self.bind().is_ok() {
                hip::hipModuleUnload(m.raw() as hip::hipModule_t);
            }
        }
    }

    unsafe fn function(&self, m: ModuleHandle, name: &str) -> Result<FunctionHandle> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            let cname = CString::new(name).expect("kernel names are literals");
            let mut f = std::ptr::null_mut();
            check(
                hip::hipModuleGetFunction(&mut f, m.raw() as hip::hipModule_t, cname.as_ptr()),
                &format!("hipModuleGetFunction({name})"),
            )?;
            Ok(FunctionHandle::from_raw(f as usize))
        }
    }

    unsafe fn launch(
        &self,
        f: FunctionHandle,
        d: &LaunchDims,
        s: StreamHandle,
        args: &mut KernelArgs,
    ) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            check(
                hip::hipModuleLaunchKernel(
                    f.raw() as hip::hipFunction_t,
                    d.grid.0,
                    d.grid.1,
                    d.grid.2,
                    d.block.0,
                    d.block.1,
                    d.block.2,
                    d.shared_bytes,
                    stream(s),
                    args.params().as_mut_ptr(),
                    std::ptr::null_mut(),
                ),
                "hipModuleLaunchKernel",
            )
        }
    }
}
