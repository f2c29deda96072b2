//! CUDA driver: the `Driver` calls through the CUDA driver API and NVRTC,
//! both loaded at run time (cudarc's `dynamic-loading`). FFI only: all
//! logic lives in the backend-neutral layer. The import calls
//! (`super::driver::Interop`) are in `interop.rs`.

mod interop;

use super::args::KernelArgs;
use super::driver::{
    host_fn_from_raw, host_fn_into_raw, run_host_fn, Copy2d, DevicePtr, Driver, EventHandle,
    FunctionHandle, HostFn, LaunchDims, Memory, MemoryInfo, ModuleHandle, StreamHandle,
};
use super::DeviceSelector;
use crate::error::{Error, GpuApi, GpuCode, Result};
use cudarc::driver::sys as cu;
use cudarc::nvrtc::{result as nvrtc_result, sys as nvrtc_sys};
use std::ffi::{c_void, CStr, CString};

/// Is the NVRTC library loadable (kernels can be compiled)?
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { nvrtc_sys::is_culib_present() }
}

/// Is the CUDA driver library (libcuda) loadable?
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { cu::is_culib_present() }
}

fn unavailable(reason: impl Into<String>) -> Error {
    Error::BackendUnavailable {
        backend: GpuApi::Cuda,
        reason: reason.into(),
    }
}

fn check(result: cu::CUresult, operation: &str) -> Result<()> {
    if result == cu::CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    Err(Error::gpu(
        GpuApi::Cuda,
        operation,
        GpuCode::from_cuda_or_hip(result as i64),
        error_name(result),
    ))
}

/// The driver's answer as `CUDA_ERROR_NOT_SUPPORTED (801)`: the name for
/// people, the number for searching NVIDIA's documentation.
fn error_name(result: cu::CUresult) -> String {
    let mut name: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: cuGetErrorName writes a static string pointer.
    let name = unsafe {
        if cu::cuGetErrorName(result, &mut name) == cu::CUresult::CUDA_SUCCESS && !name.is_null() {
            CStr::from_ptr(name).to_string_lossy().into_owned()
        } else {
            format!("{result:?}")
        }
    };
    format!("{name} ({})", result as u32)
}

/// One CUDA device and the context vmafx works in: the device's primary
/// context (what the CUDA runtime API uses), or a context the producer
/// created and lent us.
pub struct CudaDriver {
    device: cu::CUdevice,
    context: cu::CUcontext,
    /// True when we retained the primary context (and release it on drop);
    /// false for a lent context, which stays the producer's.
    retained_primary: bool,
    index: i32,
    name: String,
    uuid: [u8; 16],
    compute_capability: (i32, i32),
    driver_version: i32,
}

// SAFETY: the context handle may be used from any thread once made
// current there; every call below does so.
unsafe impl Send for CudaDriver {}
// SAFETY: CudaDriver's handles may be used from any thread (the runtime serialises calls on one object); it has no interior mutability of its own.
unsafe impl Sync for CudaDriver {}

impl CudaDriver {
    /// Opens the selected device. Without libcuda, or without a device,
    /// the error says which.
    pub fn open(selector: &DeviceSelector) -> Result<Self> {
        if !driver_present() {
            return Err(unavailable(
                "the CUDA driver library (libcuda.so) was not found",
            ));
        }
        // SAFETY: plain driver API calls with valid out-pointers.
        unsafe {
            check(cu::cuInit(0), "cuInit")
                .map_err(|e| unavailable(format!("no usable CUDA driver: {e}")))?;
            let mut count = 0;
            check(cu::cuDeviceGetCount(&mut count), "cuDeviceGetCount")?;
            if count == 0 {
                return Err(unavailable(
                    "libcuda is present but there is no CUDA device",
                ));
            }
            let mut found = None;
            for index in 0..count {
                let mut device = 0;
                check(cu::cuDeviceGet(&mut device, index), "cuDeviceGet")?;
                let mut raw = std::mem::zeroed::<cu::CUuuid>();
                check(cu::cuDeviceGetUuid_v2(&mut raw, device), "cuDeviceGetUuid")?;
                let uuid = raw.bytes.map(|b| b as u8);
                if selector.matches(index as u32, &super::format_uuid(&uuid)) {
                    found = Some((index, device, uuid));
                    break;
                }
            }
            let (index, device, uuid) = found.ok_or_else(|| {
                unavailable(format!(
                    "no CUDA device matches {selector} ({count} present)"
                ))
            })?;
            let mut context = std::ptr::null_mut();
            check(
                cu::cuDevicePrimaryCtxRetain(&mut context, device),
                "cuDevicePrimaryCtxRetain",
            )?;
            match Self::with_device_info(device, context, index, uuid) {
                Ok(mut driver) => {
                    driver.retained_primary = true;
                    Ok(driver)
                }
                Err(e) => {
                    cu::cuDevicePrimaryCtxRelease_v2(device);
                    Err(e)
                }
            }
        }
    }

    /// Works in a context the producer created (for example a decoder's
    /// `cuCtxCreate` context) instead of the device's primary one, so
    /// device pointers and events of that context can be used directly.
    ///
    /// # Safety
    /// `context` must be a valid `CUcontext` that outlives the returned
    /// driver and everything made with it; vmafx never destroys it.
    pub unsafe fn with_context(context: cu::CUcontext) -> Result<Self> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if !driver_present() {
                return Err(unavailable(
                    "the CUDA driver library (libcuda.so) was not found",
                ));
            }
            if context.is_null() {
                return Err(unavailable("the lent CUDA context is null"));
            }
            check(cu::cuInit(0), "cuInit")
                .map_err(|e| unavailable(format!("no usable CUDA driver: {e}")))?;
            check(cu::cuCtxPushCurrent_v2(context), "cuCtxPushCurrent")?;
            let mut device = 0;
            let got = check(cu::cuCtxGetDevice(&mut device), "cuCtxGetDevice");
            let mut popped = std::ptr::null_mut();
            cu::cuCtxPopCurrent_v2(&mut popped);
            got?;
            let mut raw = std::mem::zeroed::<cu::CUuuid>();
            check(cu::cuDeviceGetUuid_v2(&mut raw, device), "cuDeviceGetUuid")?;
            let uuid = raw.bytes.map(|b| b as u8);
            // A CUdevice handle is the device's ordinal.
            Self::with_device_info(device, context, device, uuid)
        }
    }

    /// Reads the device's name, compute capability and the driver version.
    unsafe fn with_device_info(
        device: cu::CUdevice,
        context: cu::CUcontext,
        index: i32,
        uuid: [u8; 16],
    ) -> Result<Self> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            {
                let mut name = [0 as std::ffi::c_char; 256];
                check(
                    cu::cuDeviceGetName(name.as_mut_ptr(), 256, device),
                    "cuDeviceGetName",
                )?;
                let name = CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned();
                let attr = |a| {
                    let mut v = 0;
                    check(
                        cu::cuDeviceGetAttribute(&mut v, a, device),
                        "cuDeviceGetAttribute",
                    )
                    .map(|_| v)
                };
                let compute_capability = (
                    attr(cu::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
                    attr(cu::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
                );
                let mut driver_version = 0;
                check(
                    cu::cuDriverGetVersion(&mut driver_version),
                    "cuDriverGetVersion",
                )?;
                Ok(Self {
                    device,
                    context,
                    retained_primary: false,
                    index,
                    name,
                    uuid,
                    compute_capability,
                    driver_version,
                })
            }
        }
    }

    fn bind(&self) -> Result<()> {
        // SAFETY: the context is retained for our lifetime.
        check(
            unsafe { cu::cuCtxSetCurrent(self.context) },
            "cuCtxSetCurrent",
        )
    }
}

impl Drop for CudaDriver {
    fn drop(&mut self) {
        // SAFETY: balances the retain in `open`; every resource holds an
        // Arc to us, so none is left.
        unsafe {
            if !self.retained_primary {
                return; // a lent context stays the producer's
            }
            cu::cuDevicePrimaryCtxRelease_v2(self.device);
        }
    }
}

fn stream(h: StreamHandle) -> cu::CUstream {
    h.raw() as cu::CUstream
}
fn event(h: EventHandle) -> cu::CUevent {
    h.raw() as cu::CUevent
}

/// Compiles CUDA C++ to PTX for a virtual architecture (`compute_XY`).
/// Needs only NVRTC, no device (CI uses it to check every kernel).
pub fn compile_ptx(source: &str, name: &str, arch: &str) -> Result<Vec<u8>> {
    nvrtc_compile(source, name, arch, Image::Ptx)
}

/// Compiles CUDA C++ to a CUBIN (machine code) for a real architecture
/// (`sm_XY`): what the engine loads, so no process waits for the driver to
/// translate PTX (its own cache of translations is off without `HOME`).
pub fn compile_cubin(source: &str, name: &str, arch: &str) -> Result<Vec<u8>> {
    nvrtc_compile(source, name, arch, Image::Cubin)
}

/// What NVRTC hands back.
#[derive(Clone, Copy)]
enum Image {
    /// PTX text, NUL-terminated (as `cuModuleLoadData` reads it).
    Ptx,
    /// A CUBIN (an ELF image).
    Cubin,
}

/// The NVRTC version as `major.minor` (what CUBINs depend on).
fn nvrtc_version() -> Option<(i32, i32)> {
    if !nvrtc_present() {
        return None;
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: out-pointers to locals; NVRTC was found above.
    let r = unsafe { nvrtc_sys::nvrtcVersion(&mut major, &mut minor) };
    (r == nvrtc_sys::nvrtcResult::NVRTC_SUCCESS).then_some((major, minor))
}

fn nvrtc_compile(source: &str, name: &str, arch: &str, image: Image) -> Result<Vec<u8>> {
    let fail = |what: String| {
        Error::gpu(
            GpuApi::Cuda,
            format!("NVRTC compile of {name}"),
            GpuCode::KernelCompile,
            what,
        )
    };
    if !nvrtc_present() {
        // Only the first run on a machine compiles (ADR 0007): say what to
        // install for it.
        return Err(fail(
            "the NVRTC library (libnvrtc.so) was not found: vmafx compiles its kernels \
             at first use; install CUDA's runtime compiler (the cuda-nvrtc package of \
             your CUDA version, or `pip install nvidia-cuda-nvrtc` with its lib folder \
             on LD_LIBRARY_PATH)"
                .into(),
        ));
    }
    let src = CString::new(source).map_err(|_| fail("source holds a NUL byte".into()))?;
    let cname = CString::new(name).map_err(|_| fail("name holds a NUL byte".into()))?;
    let program =
        nvrtc_result::create_program(&src, Some(&cname)).map_err(|e| fail(format!("{e:?}")))?;
    let options = [
        format!("--gpu-architecture={arch}"),
        "--std=c++17".to_string(),
    ];
    // SAFETY: `program` is alive until destroyed below.
    unsafe {
        let compiled = nvrtc_result::compile_program(program, &options);
        let out = match compiled {
            Ok(()) => match image {
                Image::Ptx => nvrtc_result::get_ptx(program).map(|ptx| {
                    ptx.iter()
                        .map(|&c| c as u8)
                        .take_while(|&c| c != 0)
                        .chain([0])
                        .collect()
                }),
                Image::Cubin => cubin_of(program),
            }
            .map_err(|e| fail(format!("{e:?}"))),
            Err(e) => {
                let log = nvrtc_result::get_program_log(program)
                    .map(|l| {
                        l.iter()
                            .map(|&c| c as u8 as char)
                            .take_while(|&c| c != '\0')
                            .collect::<String>()
                    })
                    .unwrap_or_default();
                Err(fail(format!("{e:?}\n{log}")))
            }
        };
        let _ = nvrtc_result::destroy_program(program);
        out
    }
}

/// The CUBIN of a program compiled for a real architecture.
///
/// # Safety
/// `program` is alive and compiled.
unsafe fn cubin_of(
    program: nvrtc_sys::nvrtcProgram,
) -> std::result::Result<Vec<u8>, nvrtc_result::NvrtcError> {
    let mut size = 0usize;
    // SAFETY: `program` is alive (the caller's promise); out-pointer to a local.
    unsafe { nvrtc_sys::nvrtcGetCUBINSize(program, &mut size) }.result()?;
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` holds the `size` bytes NVRTC said it writes.
    unsafe { nvrtc_sys::nvrtcGetCUBIN(program, cubin.as_mut_ptr().cast()) }.result()?;
    Ok(cubin)
}

// SAFETY: each method calls the CUDA driver API on the handles the engine passes, as the trait's per-method contracts require.
unsafe impl Driver for CudaDriver {
    fn backend(&self) -> super::GpuBackend {
        super::GpuBackend::Cuda
    }

    fn describe(&self) -> String {
        format!(
            "CUDA device {} ({}, {}, compute {}.{})",
            self.index,
            self.name,
            super::format_uuid(&self.uuid),
            self.compute_capability.0,
            self.compute_capability.1
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
            unsafe { cu::cuMemGetInfo_v2(&mut free, &mut total) },
            "cuMemGetInfo",
        )?;
        Ok(MemoryInfo { free, total })
    }

    fn code_target(&self) -> String {
        // A CUBIN runs as the driver loads it, whichever NVRTC made it;
        // the PTX fallback is translated by the driver.
        format!(
            "sm_{}{}-driver{}",
            self.compute_capability.0, self.compute_capability.1, self.driver_version
        )
    }

    fn compiler_version(&self) -> String {
        let (major, minor) = nvrtc_version().unwrap_or((0, 0));
        format!("nvrtc{major}.{minor}")
    }

    fn is_machine_code(&self, image: &[u8]) -> bool {
        // A CUBIN is an ELF file; PTX is text.
        image.starts_with(b"\x7fELF")
    }

    fn alloc(&self, bytes: usize) -> Result<DevicePtr> {
        self.bind()?;
        let mut ptr = 0;
        check(
            // SAFETY: out-pointers to locals, valid for the call; the runtime is initialised and its context bound.
            unsafe { cu::cuMemAlloc_v2(&mut ptr, bytes.max(1)) },
            "cuMemAlloc",
        )?;
        Ok(ptr)
    }

    unsafe fn free(&self, ptr: DevicePtr) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if self.bind().is_ok() {
                cu::cuMemFree_v2(ptr);
            }
        }
    }

    fn alloc_pinned(&self, bytes: usize) -> Result<*mut u8> {
        self.bind()?;
        let mut ptr = std::ptr::null_mut();
        check(
            // SAFETY: out-pointers to locals, valid for the call; the runtime is initialised and its context bound.
            unsafe { cu::cuMemHostAlloc(&mut ptr, bytes.max(1), 0) },
            "cuMemHostAlloc",
        )?;
        Ok(ptr as *mut u8)
    }

    unsafe fn free_pinned(&self, ptr: *mut u8) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if self.bind().is_ok() {
                cu::cuMemFreeHost(ptr as *mut c_void);
            }
        }
    }

    fn stream_create(&self) -> Result<StreamHandle> {
        self.bind()?;
        let mut s = std::ptr::null_mut();
        let flags = cu::CUstream_flags::CU_STREAM_NON_BLOCKING as u32;
        check(
            // SAFETY: out-pointers to locals, valid for the call; the runtime is initialised and its context bound.
            unsafe { cu::cuStreamCreate(&mut s, flags) },
            "cuStreamCreate",
        )?;
        Ok(StreamHandle::from_raw(s as usize))
    }

    unsafe fn stream_destroy(&self, s: StreamHandle) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if self.bind().is_ok() {
                cu::cuStreamDestroy_v2(stream(s));
            }
        }
    }

    unsafe fn stream_synchronize(&self, s: StreamHandle) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            check(cu::cuStreamSynchronize(stream(s)), "cuStreamSynchronize")
        }
    }

    fn event_create(&self) -> Result<EventHandle> {
        self.bind()?;
        let mut e = std::ptr::null_mut();
        let flags = cu::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32;
        // SAFETY: out-pointers to locals, valid for the call; the runtime is initialised and its context bound.
        check(unsafe { cu::cuEventCreate(&mut e, flags) }, "cuEventCreate")?;
        Ok(EventHandle::from_raw(e as usize))
    }

    unsafe fn event_destroy(&self, e: EventHandle) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if self.bind().is_ok() {
                cu::cuEventDestroy_v2(event(e));
            }
        }
    }

    unsafe fn event_record(&self, e: EventHandle, s: StreamHandle) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            check(cu::cuEventRecord(event(e), stream(s)), "cuEventRecord")
        }
    }

    fn legacy_stream(&self) -> StreamHandle {
        StreamHandle::from_raw(1) // CU_STREAM_LEGACY
    }

    unsafe fn stream_wait_event(&self, s: StreamHandle, e: EventHandle) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            check(
                cu::cuStreamWaitEvent(stream(s), event(e), 0),
                "cuStreamWaitEvent",
            )
        }
    }

    unsafe fn event_query(&self, e: EventHandle) -> Result<bool> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            match cu::cuEventQuery(event(e)) {
                cu::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
                r => check(r, "cuEventQuery").map(|_| true),
            }
        }
    }

    unsafe fn event_synchronize(&self, e: EventHandle) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            check(cu::cuEventSynchronize(event(e)), "cuEventSynchronize")
        }
    }

    fn cuda_context(&self) -> Option<usize> {
        Some(self.context as usize)
    }

    unsafe fn launch_host_func(&self, s: StreamHandle, func: HostFn) -> Result<()> {
        self.bind()?;
        let user = host_fn_into_raw(func);
        // SAFETY: a live stream (the caller's promise); the runtime calls
        // run_host_fn once with `user`.
        let r = unsafe { cu::cuLaunchHostFunc(stream(s), Some(run_host_fn), user) };
        if r != cu::cudaError_enum::CUDA_SUCCESS {
            // SAFETY: refused: the runtime will not call it.
            drop(unsafe { host_fn_from_raw(user) });
        }
        check(r, "cuLaunchHostFunc")
    }

    fn timed_event_create(&self) -> Result<EventHandle> {
        self.bind()?;
        let mut e = std::ptr::null_mut();
        let flags = cu::CUevent_flags::CU_EVENT_DEFAULT as u32;
        // SAFETY: out-pointers to locals, valid for the call; the runtime is initialised and its context bound.
        check(unsafe { cu::cuEventCreate(&mut e, flags) }, "cuEventCreate")?;
        Ok(EventHandle::from_raw(e as usize))
    }

    unsafe fn event_elapsed_ms(&self, start: EventHandle, end: EventHandle) -> Result<f32> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            let mut ms = 0f32;
            check(
                cu::cuEventElapsedTime_v2(&mut ms, event(start), event(end)),
                "cuEventElapsedTime_v2",
            )?;
            Ok(ms)
        }
    }

    unsafe fn copy_2d(&self, c: &Copy2d, s: StreamHandle) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            // Built field by field: the memory-type enums have no zero value.
            let (src_type, src_host, src_device, src_array) = match c.src {
                Memory::Host(h) => (
                    cu::CUmemorytype::CU_MEMORYTYPE_HOST,
                    h as *const c_void,
                    0,
                    std::ptr::null_mut(),
                ),
                Memory::Device(d) => (
                    cu::CUmemorytype::CU_MEMORYTYPE_DEVICE,
                    std::ptr::null(),
                    d,
                    std::ptr::null_mut(),
                ),
                Memory::Array(a) => (
                    cu::CUmemorytype::CU_MEMORYTYPE_ARRAY,
                    std::ptr::null(),
                    0,
                    a.raw() as cu::CUarray,
                ),
            };
            let p = cu::CUDA_MEMCPY2D {
                srcXInBytes: 0,
                srcY: 0,
                srcMemoryType: src_type,
                srcHost: src_host,
                srcDevice: src_device,
                srcArray: src_array,
                srcPitch: c.src_pitch,
                dstXInBytes: 0,
                dstY: 0,
                dstMemoryType: cu::CUmemorytype::CU_MEMORYTYPE_DEVICE,
                dstHost: std::ptr::null_mut(),
                dstDevice: c.dst,
                dstArray: std::ptr::null_mut(),
                dstPitch: c.dst_pitch,
                WidthInBytes: c.width_bytes,
                Height: c.height,
            };
            check(cu::cuMemcpy2DAsync_v2(&p, stream(s)), "cuMemcpy2DAsync")
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
                cu::cuMemcpyDtoHAsync_v2(dst as *mut c_void, src, bytes, stream(s)),
                "cuMemcpyDtoHAsync",
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
                cu::cuMemsetD32Async(dst, value, count, stream(s)),
                "cuMemsetD32Async",
            )
        }
    }

    fn compile(&self, source: &str, name: &str) -> Result<Vec<u8>> {
        let (major, minor) = self.compute_capability;
        // Machine code for this device; PTX where this NVRTC cannot make
        // it (a device newer than the compiler: the driver translates).
        compile_cubin(source, name, &format!("sm_{major}{minor}"))
            .or_else(|_| compile_ptx(source, name, &format!("compute_{major}{minor}")))
    }

    fn module_load(&self, image: &[u8]) -> Result<ModuleHandle> {
        self.bind()?;
        let mut m = std::ptr::null_mut();
        check(
            // SAFETY: `image` is a CUBIN or NUL-terminated PTX that outlives
            // the call; the out-pointer is a local.
            unsafe { cu::cuModuleLoadData(&mut m, image.as_ptr() as *const c_void) },
            "cuModuleLoadData",
        )?;
        Ok(ModuleHandle::from_raw(m as usize))
    }

    unsafe fn module_unload(&self, m: ModuleHandle) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if self.bind().is_ok() {
                cu::cuModuleUnload(m.raw() as cu::CUmodule);
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
                cu::cuModuleGetFunction(&mut f, m.raw() as cu::CUmodule, cname.as_ptr()),
                &format!("cuModuleGetFunction({name})"),
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
            // Above 48 KiB a kernel's dynamic shared memory must be opted into
            // (up to the device's per-block maximum; beyond, the launch fails).
            if d.shared_bytes > 48 * 1024 {
                check(
                    cu::cuFuncSetAttribute(
                        f.raw() as cu::CUfunction,
                        cu::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        d.shared_bytes as i32,
                    ),
                    "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)",
                )?;
            }
            check(
                cu::cuLaunchKernel(
                    f.raw() as cu::CUfunction,
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
                "cuLaunchKernel",
            )
        }
    }
}
