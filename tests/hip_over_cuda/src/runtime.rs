//! The HIP runtime calls (`libamdhip64.so`), on the CUDA driver API.

use crate::errors::{check, name};
use crate::{cu, guarded, hip};
use std::cell::Cell;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::ptr::null_mut;
use std::sync::{Mutex, OnceLock};

type R = Result<(), hip::hipError_t>;

const SUCCESS: hip::hipError_t = hip::hipError_t_hipSuccess;
const INVALID: hip::hipError_t = hip::hipError_t_hipErrorInvalidValue;
const NOT_SUPPORTED: hip::hipError_t = hip::hipError_t_hipErrorNotSupported;

/// Runs a call's body; a panic answers `hipErrorUnknown`.
fn call(f: impl FnOnce() -> R) -> hip::hipError_t {
    guarded(SUCCESS, hip::hipError_t_hipErrorUnknown, f)
}

/// A call vmafx makes with arguments this library does not translate.
fn unsupported(what: &str) -> hip::hipError_t {
    eprintln!("hip-over-cuda: {what} is not implemented on CUDA: hipErrorNotSupported");
    NOT_SUPPORTED
}

/// `cuInit`, once per process (HIP initialises implicitly, so every call
/// that needs the driver goes through here).
fn init() -> R {
    static INIT: OnceLock<hip::hipError_t> = OnceLock::new();
    let code = *INIT.get_or_init(|| {
        // SAFETY: only tries to dlopen libcuda.
        if !unsafe { cu::is_culib_present() } {
            eprintln!("hip-over-cuda: the CUDA driver (libcuda.so) was not found");
            return hip::hipError_t_hipErrorInsufficientDriver;
        }
        // SAFETY: plain driver call.
        check(unsafe { cu::cuInit(0) }).err().unwrap_or(SUCCESS)
    });
    if code == SUCCESS {
        Ok(())
    } else {
        Err(code)
    }
}

fn device_count() -> Result<c_int, hip::hipError_t> {
    init()?;
    let mut n = 0;
    // SAFETY: out-pointer to a local.
    check(unsafe { cu::cuDeviceGetCount(&mut n) })?;
    Ok(n)
}

fn cuda_device(ordinal: c_int) -> Result<cu::CUdevice, hip::hipError_t> {
    if ordinal < 0 || ordinal >= device_count()? {
        return Err(hip::hipError_t_hipErrorInvalidDevice);
    }
    let mut d = 0;
    // SAFETY: out-pointer to a local; a valid ordinal.
    check(unsafe { cu::cuDeviceGet(&mut d, ordinal) })?;
    Ok(d)
}

thread_local! {
    /// The thread's device (`hipSetDevice`; device 0 until then, as in HIP).
    static CURRENT: Cell<c_int> = const { Cell::new(0) };
}

/// Each device's primary context, retained on first use and kept for the
/// life of the process (as HIP keeps its devices' contexts).
fn primary_context(ordinal: c_int) -> Result<cu::CUcontext, hip::hipError_t> {
    static CONTEXTS: Mutex<Vec<(c_int, usize)>> = Mutex::new(Vec::new());
    let mut contexts = CONTEXTS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&(_, c)) = contexts.iter().find(|(o, _)| *o == ordinal) {
        return Ok(c as cu::CUcontext);
    }
    let device = cuda_device(ordinal)?;
    let mut context = null_mut();
    // SAFETY: out-pointer to a local; a valid device.
    check(unsafe { cu::cuDevicePrimaryCtxRetain(&mut context, device) })?;
    contexts.push((ordinal, context as usize));
    Ok(context)
}

/// Makes the thread's device's context current on this thread: what HIP's
/// per-thread device selection amounts to on CUDA.
fn bind() -> R {
    init()?;
    let context = primary_context(CURRENT.get())?;
    let mut current = null_mut();
    // SAFETY: out-pointer to a local; the context is retained.
    unsafe {
        check(cu::cuCtxGetCurrent(&mut current))?;
        if current != context {
            check(cu::cuCtxSetCurrent(context))?;
        }
    }
    Ok(())
}

/// `(major, minor)` compute capability of the thread's device (hiprtc
/// compiles for it).
pub(crate) fn current_compute_capability() -> Result<(c_int, c_int), hip::hipError_t> {
    let device = cuda_device(CURRENT.get())?;
    let attr = |a| {
        let mut v = 0;
        // SAFETY: out-pointer to a local; a valid device.
        check(unsafe { cu::cuDeviceGetAttribute(&mut v, a, device) }).map(|_| v)
    };
    use cu::CUdevice_attribute as A;
    Ok((
        attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
        attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
    ))
}

/// Writes `text` into a C char array, NUL-terminated, cut to fit.
fn write_c_string(dst: &mut [c_char], text: &str) {
    let n = text.len().min(dst.len().saturating_sub(1));
    for (d, &b) in dst.iter_mut().zip(&text.as_bytes()[..n]) {
        *d = b as c_char;
    }
    if let Some(end) = dst.get_mut(n) {
        *end = 0;
    }
}

/// The CUDA device's name with [`crate::NAME_SUFFIX`].
fn device_name(device: cu::CUdevice) -> Result<String, hip::hipError_t> {
    let mut raw = [0 as c_char; 256];
    // SAFETY: a buffer of the length passed.
    check(unsafe { cu::cuDeviceGetName(raw.as_mut_ptr(), raw.len() as c_int, device) })?;
    // SAFETY: NUL-terminated by the driver.
    let name = unsafe { CStr::from_ptr(raw.as_ptr()) }.to_string_lossy();
    Ok(format!("{name}{}", crate::NAME_SUFFIX))
}

// ---- Initialisation, devices ----

#[no_mangle]
pub unsafe extern "C" fn hipInit(flags: c_uint) -> hip::hipError_t {
    if flags != 0 {
        return INVALID;
    }
    call(init)
}

#[no_mangle]
pub unsafe extern "C" fn hipRuntimeGetVersion(version: *mut c_int) -> hip::hipError_t {
    if version.is_null() {
        return INVALID;
    }
    *version = crate::RUNTIME_VERSION;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipGetErrorName(error: hip::hipError_t) -> *const c_char {
    name(error).as_ptr()
}

#[no_mangle]
pub unsafe extern "C" fn hipGetDeviceCount(count: *mut c_int) -> hip::hipError_t {
    if count.is_null() {
        return INVALID;
    }
    call(|| {
        *count = device_count()?;
        if *count == 0 {
            return Err(hip::hipError_t_hipErrorNoDevice);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGet(
    device: *mut hip::hipDevice_t,
    ordinal: c_int,
) -> hip::hipError_t {
    if device.is_null() {
        return INVALID;
    }
    call(|| {
        cuda_device(ordinal)?;
        *device = ordinal; // HIP's device handle is its ordinal
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetName(
    out: *mut c_char,
    len: c_int,
    device: hip::hipDevice_t,
) -> hip::hipError_t {
    if out.is_null() || len <= 0 {
        return INVALID;
    }
    call(|| {
        let name = device_name(cuda_device(device)?)?;
        write_c_string(std::slice::from_raw_parts_mut(out, len as usize), &name);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetUuid(
    uuid: *mut hip::hipUUID,
    device: hip::hipDevice_t,
) -> hip::hipError_t {
    if uuid.is_null() {
        return INVALID;
    }
    call(|| {
        let mut raw: cu::CUuuid = std::mem::zeroed();
        check(cu::cuDeviceGetUuid_v2(&mut raw, cuda_device(device)?))?;
        (*uuid).bytes = raw.bytes.map(|b| b as c_char);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetDevicePropertiesR0600(
    prop: *mut hip::hipDeviceProp_tR0600,
    ordinal: c_int,
) -> hip::hipError_t {
    if prop.is_null() {
        return INVALID;
    }
    call(|| {
        let device = cuda_device(ordinal)?;
        let attr = |a| {
            let mut v = 0;
            check(cu::cuDeviceGetAttribute(&mut v, a, device)).map(|_| v)
        };
        use cu::CUdevice_attribute as A;
        let p = &mut *prop;
        *p = std::mem::zeroed();
        write_c_string(&mut p.name, &device_name(device)?);
        let mut raw: cu::CUuuid = std::mem::zeroed();
        check(cu::cuDeviceGetUuid_v2(&mut raw, device))?;
        p.uuid.bytes = raw.bytes.map(|b| b as c_char);
        check(cu::cuDeviceTotalMem_v2(&mut p.totalGlobalMem, device))?;
        // AMD's limits and the wave32 target's identity, the rest CUDA's.
        p.sharedMemPerBlock = crate::SHARED_PER_BLOCK;
        p.sharedMemPerBlockOptin = crate::SHARED_PER_BLOCK;
        p.sharedMemPerMultiprocessor = crate::SHARED_PER_BLOCK;
        p.maxSharedMemoryPerMultiProcessor = crate::SHARED_PER_BLOCK;
        p.warpSize = 32;
        (p.major, p.minor) = (10, 3); // gfx1030
        write_c_string(&mut p.gcnArchName, crate::ARCH);
        p.regsPerBlock = attr(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)?;
        p.maxThreadsPerBlock = attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?;
        p.maxThreadsDim = [
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
        ];
        p.maxGridSize = [
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
        ];
        p.totalConstMem = attr(A::CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY)? as usize;
        p.multiProcessorCount = attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        p.maxThreadsPerMultiProcessor =
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?;
        p.l2CacheSize = attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?;
        p.memoryBusWidth = attr(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?;
        p.pciBusID = attr(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)?;
        p.pciDeviceID = attr(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)?;
        p.pciDomainID = attr(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)?;
        p.canMapHostMemory = 1;
        p.unifiedAddressing = 1;
        p.concurrentKernels = 1;
        p.hostRegisterSupported = 1;
        p.timelineSemaphoreInteropSupported = 1;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipSetDevice(ordinal: c_int) -> hip::hipError_t {
    call(|| {
        cuda_device(ordinal)?;
        CURRENT.set(ordinal);
        bind()
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemGetInfo(free: *mut usize, total: *mut usize) -> hip::hipError_t {
    if free.is_null() || total.is_null() {
        return INVALID;
    }
    call(|| {
        bind()?;
        check(cu::cuMemGetInfo_v2(free, total))
    })
}

// ---- Memory ----

#[no_mangle]
pub unsafe extern "C" fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> hip::hipError_t {
    if ptr.is_null() {
        return INVALID;
    }
    call(|| {
        bind()?;
        let mut d = 0;
        check(cu::cuMemAlloc_v2(&mut d, size))?;
        *ptr = d as *mut c_void;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipFree(ptr: *mut c_void) -> hip::hipError_t {
    if ptr.is_null() {
        return SUCCESS;
    }
    call(|| {
        bind()?;
        check(cu::cuMemFree_v2(ptr as cu::CUdeviceptr))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipHostMalloc(
    ptr: *mut *mut c_void,
    size: usize,
    flags: c_uint,
) -> hip::hipError_t {
    if ptr.is_null() {
        return INVALID;
    }
    if flags != hip::hipHostMallocDefault {
        return unsupported(&format!("hipHostMalloc with flags {flags:#x}"));
    }
    call(|| {
        bind()?;
        // HIP's default: pinned, visible to every device, mapped.
        let flags = cu::CU_MEMHOSTALLOC_PORTABLE | cu::CU_MEMHOSTALLOC_DEVICEMAP;
        check(cu::cuMemHostAlloc(ptr, size, flags))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipHostFree(ptr: *mut c_void) -> hip::hipError_t {
    if ptr.is_null() {
        return SUCCESS;
    }
    call(|| {
        bind()?;
        check(cu::cuMemFreeHost(ptr))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipHostRegister(
    ptr: *mut c_void,
    size: usize,
    flags: c_uint,
) -> hip::hipError_t {
    // hipHostRegisterDefault 0, Portable 1, Mapped 2, IoMemory 4, ReadOnly 8:
    // CUDA's CU_MEMHOSTREGISTER_* bits have the same values.
    if flags & !0xf != 0 {
        return unsupported(&format!("hipHostRegister with flags {flags:#x}"));
    }
    call(|| {
        bind()?;
        check(cu::cuMemHostRegister_v2(ptr, size, flags))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipHostGetDevicePointer(
    device: *mut *mut c_void,
    host: *mut c_void,
    flags: c_uint,
) -> hip::hipError_t {
    if device.is_null() {
        return INVALID;
    }
    call(|| {
        bind()?;
        let mut d = 0;
        check(cu::cuMemHostGetDevicePointer_v2(&mut d, host, flags))?;
        *device = d as *mut c_void;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipHostUnregister(ptr: *mut c_void) -> hip::hipError_t {
    call(|| {
        bind()?;
        check(cu::cuMemHostUnregister(ptr))
    })
}

// ---- Streams, events, host functions ----

fn stream(s: hip::hipStream_t) -> cu::CUstream {
    s as cu::CUstream
}
fn event(e: hip::hipEvent_t) -> cu::CUevent {
    e as cu::CUevent
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamCreateWithFlags(
    s: *mut hip::hipStream_t,
    flags: c_uint,
) -> hip::hipError_t {
    if s.is_null() {
        return INVALID;
    }
    // hipStreamDefault 0 and hipStreamNonBlocking 1 are CUDA's values.
    if flags > hip::hipStreamNonBlocking {
        return unsupported(&format!("hipStreamCreateWithFlags with flags {flags:#x}"));
    }
    call(|| {
        bind()?;
        let mut raw = null_mut();
        check(cu::cuStreamCreate(&mut raw, flags))?;
        *s = raw as hip::hipStream_t;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamDestroy(s: hip::hipStream_t) -> hip::hipError_t {
    call(|| {
        bind()?;
        check(cu::cuStreamDestroy_v2(stream(s)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamSynchronize(s: hip::hipStream_t) -> hip::hipError_t {
    call(|| {
        bind()?;
        check(cu::cuStreamSynchronize(stream(s)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamWaitEvent(
    s: hip::hipStream_t,
    e: hip::hipEvent_t,
    flags: c_uint,
) -> hip::hipError_t {
    if flags != 0 {
        return unsupported(&format!("hipStreamWaitEvent with flags {flags:#x}"));
    }
    call(|| {
        bind()?;
        check(cu::cuStreamWaitEvent(stream(s), event(e), 0))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipEventCreateWithFlags(
    e: *mut hip::hipEvent_t,
    flags: c_uint,
) -> hip::hipError_t {
    if e.is_null() {
        return INVALID;
    }
    // hipEventDefault 0, BlockingSync 1, DisableTiming 2, Interprocess 4
    // are CUDA's values; AMD's own flags (release/acquire scopes) are not.
    if flags & !0x7 != 0 {
        return unsupported(&format!("hipEventCreateWithFlags with flags {flags:#x}"));
    }
    call(|| {
        bind()?;
        let mut raw = null_mut();
        check(cu::cuEventCreate(&mut raw, flags))?;
        *e = raw as hip::hipEvent_t;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipEventDestroy(e: hip::hipEvent_t) -> hip::hipError_t {
    call(|| {
        bind()?;
        check(cu::cuEventDestroy_v2(event(e)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipEventRecord(
    e: hip::hipEvent_t,
    s: hip::hipStream_t,
) -> hip::hipError_t {
    call(|| {
        bind()?;
        check(cu::cuEventRecord(event(e), stream(s)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipEventQuery(e: hip::hipEvent_t) -> hip::hipError_t {
    call(|| {
        bind()?;
        check(cu::cuEventQuery(event(e)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipEventSynchronize(e: hip::hipEvent_t) -> hip::hipError_t {
    call(|| {
        bind()?;
        check(cu::cuEventSynchronize(event(e)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipEventElapsedTime(
    ms: *mut f32,
    start: hip::hipEvent_t,
    stop: hip::hipEvent_t,
) -> hip::hipError_t {
    if ms.is_null() {
        return INVALID;
    }
    call(|| {
        bind()?;
        check(cu::cuEventElapsedTime_v2(ms, event(start), event(stop)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipLaunchHostFunc(
    s: hip::hipStream_t,
    f: hip::hipHostFn_t,
    user: *mut c_void,
) -> hip::hipError_t {
    if f.is_none() {
        return INVALID;
    }
    call(|| {
        bind()?;
        // The same C signature: void (*)(void *).
        let f: cu::CUhostFn = f;
        check(cu::cuLaunchHostFunc(stream(s), f, user))
    })
}

// ---- Copies and fills ----

/// CUDA's source and destination memory types of a HIP copy kind.
fn memory_types(
    kind: hip::hipMemcpyKind,
) -> Result<(cu::CUmemorytype, cu::CUmemorytype), hip::hipError_t> {
    use cu::CUmemorytype::*;
    Ok(match kind {
        hip::hipMemcpyKind_hipMemcpyHostToHost => (CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_HOST),
        hip::hipMemcpyKind_hipMemcpyHostToDevice => (CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_DEVICE),
        hip::hipMemcpyKind_hipMemcpyDeviceToHost => (CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST),
        hip::hipMemcpyKind_hipMemcpyDeviceToDevice => (CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_DEVICE),
        hip::hipMemcpyKind_hipMemcpyDefault => (CU_MEMORYTYPE_UNIFIED, CU_MEMORYTYPE_UNIFIED),
        _ => return Err(hip::hipError_t_hipErrorInvalidMemcpyDirection),
    })
}

/// A 2D copy descriptor with the source and destination left empty.
fn copy_2d(width: usize, height: usize) -> cu::CUDA_MEMCPY2D {
    cu::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: cu::CUmemorytype::CU_MEMORYTYPE_DEVICE,
        srcHost: std::ptr::null(),
        srcDevice: 0,
        srcArray: null_mut(),
        srcPitch: 0,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: cu::CUmemorytype::CU_MEMORYTYPE_DEVICE,
        dstHost: null_mut(),
        dstDevice: 0,
        dstArray: null_mut(),
        dstPitch: 0,
        WidthInBytes: width,
        Height: height,
    }
}

/// Points the destination of `p` at `dst` of memory type `t`.
fn set_dst(p: &mut cu::CUDA_MEMCPY2D, t: cu::CUmemorytype, dst: *mut c_void, pitch: usize) {
    p.dstMemoryType = t;
    p.dstPitch = pitch;
    if t == cu::CUmemorytype::CU_MEMORYTYPE_HOST {
        p.dstHost = dst;
    } else {
        p.dstDevice = dst as cu::CUdeviceptr;
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2DAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hip::hipMemcpyKind,
    s: hip::hipStream_t,
) -> hip::hipError_t {
    call(|| {
        let (src_type, dst_type) = memory_types(kind)?;
        bind()?;
        let mut p = copy_2d(width, height);
        p.srcMemoryType = src_type;
        p.srcPitch = spitch;
        if src_type == cu::CUmemorytype::CU_MEMORYTYPE_HOST {
            p.srcHost = src;
        } else {
            p.srcDevice = src as cu::CUdeviceptr;
        }
        set_dst(&mut p, dst_type, dst, dpitch);
        check(cu::cuMemcpy2DAsync_v2(&p, stream(s)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2DFromArrayAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: hip::hipArray_const_t,
    w_offset: usize,
    h_offset: usize,
    width: usize,
    height: usize,
    kind: hip::hipMemcpyKind,
    s: hip::hipStream_t,
) -> hip::hipError_t {
    call(|| {
        let (_, dst_type) = memory_types(kind)?;
        bind()?;
        let mut p = copy_2d(width, height);
        p.srcMemoryType = cu::CUmemorytype::CU_MEMORYTYPE_ARRAY;
        p.srcArray = src as cu::CUarray; // arrays come from hipGraphicsSubResourceGetMappedArray: CUDA's
        p.srcXInBytes = w_offset;
        p.srcY = h_offset;
        set_dst(&mut p, dst_type, dst, dpitch);
        check(cu::cuMemcpy2DAsync_v2(&p, stream(s)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyDtoHAsync(
    dst: *mut c_void,
    src: hip::hipDeviceptr_t,
    bytes: usize,
    s: hip::hipStream_t,
) -> hip::hipError_t {
    call(|| {
        bind()?;
        check(cu::cuMemcpyDtoHAsync_v2(
            dst,
            src as cu::CUdeviceptr,
            bytes,
            stream(s),
        ))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemsetD32Async(
    dst: hip::hipDeviceptr_t,
    value: c_int,
    count: usize,
    s: hip::hipStream_t,
) -> hip::hipError_t {
    call(|| {
        bind()?;
        check(cu::cuMemsetD32Async(
            dst as cu::CUdeviceptr,
            value as c_uint,
            count,
            stream(s),
        ))
    })
}

// ---- Modules and launches ----

#[no_mangle]
pub unsafe extern "C" fn hipModuleLoadData(
    m: *mut hip::hipModule_t,
    image: *const c_void,
) -> hip::hipError_t {
    if m.is_null() || image.is_null() {
        return INVALID;
    }
    call(|| {
        bind()?;
        let mut raw = null_mut();
        check(cu::cuModuleLoadData(&mut raw, image))?;
        *m = raw as hip::hipModule_t;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleUnload(m: hip::hipModule_t) -> hip::hipError_t {
    call(|| {
        bind()?;
        check(cu::cuModuleUnload(m as cu::CUmodule))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleGetFunction(
    f: *mut hip::hipFunction_t,
    m: hip::hipModule_t,
    name: *const c_char,
) -> hip::hipError_t {
    if f.is_null() || name.is_null() {
        return INVALID;
    }
    call(|| {
        bind()?;
        let mut raw = null_mut();
        check(cu::cuModuleGetFunction(&mut raw, m as cu::CUmodule, name))?;
        *f = raw as hip::hipFunction_t;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleLaunchKernel(
    f: hip::hipFunction_t,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared_bytes: c_uint,
    s: hip::hipStream_t,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> hip::hipError_t {
    if !extra.is_null() {
        return unsupported("hipModuleLaunchKernel with `extra` arguments");
    }
    call(|| {
        bind()?;
        let f = f as cu::CUfunction;
        use cu::CUfunction_attribute as A;
        let mut static_bytes = 0;
        check(cu::cuFuncGetAttribute(
            &mut static_bytes,
            A::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
            f,
        ))?;
        // AMD's limit, not the NVIDIA device's larger one.
        let total = static_bytes as usize + shared_bytes as usize;
        if total > crate::SHARED_PER_BLOCK {
            eprintln!(
                "hip-over-cuda: a launch needs {total} bytes of shared memory; AMD GPUs give {}",
                crate::SHARED_PER_BLOCK
            );
            return Err(INVALID);
        }
        // CUDA wants an opt-in above 48 KiB of dynamic shared memory; AMD
        // needs none up to its limit.
        if shared_bytes > 48 * 1024 {
            check(cu::cuFuncSetAttribute(
                f,
                A::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared_bytes as c_int,
            ))?;
        }
        check(cu::cuLaunchKernel(
            f,
            grid_x,
            grid_y,
            grid_z,
            block_x,
            block_y,
            block_z,
            shared_bytes,
            stream(s),
            params,
            null_mut(),
        ))
    })
}

// ---- External memory and semaphores ----

/// A duplicate of `fd`: HIP keeps a reference of its own and leaves the
/// caller's fd to the caller (vmafx closes it after the import), while CUDA
/// takes ownership of the fd it imports.
fn dup_fd(fd: c_int) -> Result<c_int, hip::hipError_t> {
    // SAFETY: fcntl on any int is safe; a bad fd gives -1.
    let d = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if d < 0 {
        Err(INVALID)
    } else {
        Ok(d)
    }
}

/// Closes `fd` if CUDA refused it (ours, not CUDA's then).
fn close_unless(ok: bool, fd: c_int) {
    if !ok {
        // SAFETY: our duplicate, not handed over.
        unsafe { libc::close(fd) };
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipImportExternalMemory(
    out: *mut hip::hipExternalMemory_t,
    desc: *const hip::hipExternalMemoryHandleDesc,
) -> hip::hipError_t {
    if out.is_null() || desc.is_null() {
        return INVALID;
    }
    let d = &*desc;
    if d.type_ != hip::hipExternalMemoryHandleType_enum_hipExternalMemoryHandleTypeOpaqueFd {
        return unsupported(&format!(
            "hipImportExternalMemory of handle type {}",
            d.type_
        ));
    }
    call(|| {
        bind()?;
        let fd = dup_fd(d.handle.fd)?;
        let mut handle: cu::CUDA_EXTERNAL_MEMORY_HANDLE_DESC_st__bindgen_ty_1 = std::mem::zeroed();
        handle.fd = fd;
        let c = cu::CUDA_EXTERNAL_MEMORY_HANDLE_DESC {
            type_: cu::CUexternalMemoryHandleType::CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD,
            handle,
            size: d.size,
            // hipExternalMemoryDedicated is CUDA_EXTERNAL_MEMORY_DEDICATED (1).
            flags: d.flags,
            reserved: [0; 16],
        };
        let mut memory = null_mut();
        let r = check(cu::cuImportExternalMemory(&mut memory, &c));
        close_unless(r.is_ok(), fd);
        r?;
        *out = memory as hip::hipExternalMemory_t;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipExternalMemoryGetMappedBuffer(
    ptr: *mut *mut c_void,
    memory: hip::hipExternalMemory_t,
    desc: *const hip::hipExternalMemoryBufferDesc,
) -> hip::hipError_t {
    if ptr.is_null() || desc.is_null() {
        return INVALID;
    }
    call(|| {
        bind()?;
        let d = &*desc;
        let mut c: cu::CUDA_EXTERNAL_MEMORY_BUFFER_DESC = std::mem::zeroed();
        c.offset = d.offset;
        c.size = d.size;
        c.flags = d.flags;
        let mut p = 0;
        check(cu::cuExternalMemoryGetMappedBuffer(
            &mut p,
            memory as cu::CUexternalMemory,
            &c,
        ))?;
        *ptr = p as *mut c_void; // freed with hipFree, as CUDA's with cuMemFree
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDestroyExternalMemory(
    memory: hip::hipExternalMemory_t,
) -> hip::hipError_t {
    call(|| {
        bind()?;
        check(cu::cuDestroyExternalMemory(memory as cu::CUexternalMemory))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipImportExternalSemaphore(
    out: *mut hip::hipExternalSemaphore_t,
    desc: *const hip::hipExternalSemaphoreHandleDesc,
) -> hip::hipError_t {
    if out.is_null() || desc.is_null() {
        return INVALID;
    }
    let d = &*desc;
    use cu::CUexternalSemaphoreHandleType as T;
    let type_ = match d.type_ {
        hip::hipExternalSemaphoreHandleType_enum_hipExternalSemaphoreHandleTypeOpaqueFd => {
            T::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD
        }
        hip::hipExternalSemaphoreHandleType_enum_hipExternalSemaphoreHandleTypeTimelineSemaphoreFd => {
            T::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD
        }
        other => return unsupported(&format!("hipImportExternalSemaphore of handle type {other}")),
    };
    call(|| {
        bind()?;
        let fd = dup_fd(d.handle.fd)?;
        let mut handle: cu::CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC_st__bindgen_ty_1 =
            std::mem::zeroed();
        handle.fd = fd;
        let c = cu::CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC {
            type_,
            handle,
            flags: d.flags,
            reserved: [0; 16],
        };
        let mut semaphore = null_mut();
        let r = check(cu::cuImportExternalSemaphore(&mut semaphore, &c));
        close_unless(r.is_ok(), fd);
        r?;
        *out = semaphore as hip::hipExternalSemaphore_t;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipSignalExternalSemaphoresAsync(
    semaphores: *const hip::hipExternalSemaphore_t,
    params: *const hip::hipExternalSemaphoreSignalParams,
    count: c_uint,
    s: hip::hipStream_t,
) -> hip::hipError_t {
    if count > 0 && (semaphores.is_null() || params.is_null()) {
        return INVALID;
    }
    call(|| {
        bind()?;
        let hip_params = std::slice::from_raw_parts(params, count as usize);
        let handles: Vec<cu::CUexternalSemaphore> =
            std::slice::from_raw_parts(semaphores, count as usize)
                .iter()
                .map(|&h| h as cu::CUexternalSemaphore)
                .collect();
        let cuda: Vec<cu::CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS> = hip_params
            .iter()
            .map(|p| {
                let mut c: cu::CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS = std::mem::zeroed();
                c.params.fence.value = p.params.fence.value;
                c.flags = p.flags;
                c
            })
            .collect();
        check(cu::cuSignalExternalSemaphoresAsync(
            handles.as_ptr(),
            cuda.as_ptr(),
            count,
            stream(s),
        ))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipWaitExternalSemaphoresAsync(
    semaphores: *const hip::hipExternalSemaphore_t,
    params: *const hip::hipExternalSemaphoreWaitParams,
    count: c_uint,
    s: hip::hipStream_t,
) -> hip::hipError_t {
    if count > 0 && (semaphores.is_null() || params.is_null()) {
        return INVALID;
    }
    call(|| {
        bind()?;
        let hip_params = std::slice::from_raw_parts(params, count as usize);
        let handles: Vec<cu::CUexternalSemaphore> =
            std::slice::from_raw_parts(semaphores, count as usize)
                .iter()
                .map(|&h| h as cu::CUexternalSemaphore)
                .collect();
        let cuda: Vec<cu::CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS> = hip_params
            .iter()
            .map(|p| {
                let mut c: cu::CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS = std::mem::zeroed();
                c.params.fence.value = p.params.fence.value;
                c.flags = p.flags;
                c
            })
            .collect();
        check(cu::cuWaitExternalSemaphoresAsync(
            handles.as_ptr(),
            cuda.as_ptr(),
            count,
            stream(s),
        ))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDestroyExternalSemaphore(
    semaphore: hip::hipExternalSemaphore_t,
) -> hip::hipError_t {
    call(|| {
        bind()?;
        check(cu::cuDestroyExternalSemaphore(
            semaphore as cu::CUexternalSemaphore,
        ))
    })
}

// ---- Graphics resources ----
//
// vmafx's HIP driver registers no GL resources (on AMD a GL texture comes
// as a dma-buf), so nothing reaches these with a handle; they pass CUDA's
// graphics resources through for completeness of the loaded set.

#[no_mangle]
pub unsafe extern "C" fn hipGraphicsMapResources(
    count: c_int,
    resources: *mut hip::hipGraphicsResource_t,
    s: hip::hipStream_t,
) -> hip::hipError_t {
    if count < 0 || resources.is_null() {
        return INVALID;
    }
    call(|| {
        bind()?;
        check(cu::cuGraphicsMapResources(
            count as c_uint,
            resources as *mut cu::CUgraphicsResource,
            stream(s),
        ))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphicsUnmapResources(
    count: c_int,
    resources: *mut hip::hipGraphicsResource_t,
    s: hip::hipStream_t,
) -> hip::hipError_t {
    if count < 0 || resources.is_null() {
        return INVALID;
    }
    call(|| {
        bind()?;
        check(cu::cuGraphicsUnmapResources(
            count as c_uint,
            resources as *mut cu::CUgraphicsResource,
            stream(s),
        ))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphicsSubResourceGetMappedArray(
    array: *mut hip::hipArray_t,
    resource: hip::hipGraphicsResource_t,
    index: c_uint,
    level: c_uint,
) -> hip::hipError_t {
    if array.is_null() {
        return INVALID;
    }
    call(|| {
        bind()?;
        let mut raw = null_mut();
        check(cu::cuGraphicsSubResourceGetMappedArray(
            &mut raw,
            resource as cu::CUgraphicsResource,
            index,
            level,
        ))?;
        *array = raw as hip::hipArray_t;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphicsUnregisterResource(
    resource: hip::hipGraphicsResource_t,
) -> hip::hipError_t {
    call(|| {
        bind()?;
        check(cu::cuGraphicsUnregisterResource(
            resource as cu::CUgraphicsResource,
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// The flag and enum values passed through unchanged are CUDA's too.
    #[test]
    fn flags_passed_through_have_cudas_values() {
        assert_eq!(
            hip::hipStreamNonBlocking,
            cu::CUstream_flags::CU_STREAM_NON_BLOCKING as u32
        );
        assert_eq!(
            hip::hipEventDisableTiming,
            cu::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32
        );
        assert_eq!(
            hip::hipEventDefault,
            cu::CUevent_flags::CU_EVENT_DEFAULT as u32
        );
        assert_eq!(
            hip::hipEventBlockingSync,
            cu::CUevent_flags::CU_EVENT_BLOCKING_SYNC as u32
        );
        assert_eq!(
            hip::hipEventInterprocess,
            cu::CUevent_flags::CU_EVENT_INTERPROCESS as u32
        );
        assert_eq!(
            hip::hipHostRegisterPortable,
            cu::CU_MEMHOSTREGISTER_PORTABLE
        );
        assert_eq!(hip::hipHostRegisterMapped, cu::CU_MEMHOSTREGISTER_DEVICEMAP);
        assert_eq!(
            hip::hipHostRegisterIoMemory,
            cu::CU_MEMHOSTREGISTER_IOMEMORY
        );
        assert_eq!(
            hip::hipHostRegisterReadOnly,
            cu::CU_MEMHOSTREGISTER_READ_ONLY
        );
        assert_eq!(
            hip::hipExternalMemoryDedicated,
            cu::CUDA_EXTERNAL_MEMORY_DEDICATED
        );
    }

    /// ROCm 6 declares its external-memory and semaphore descriptors after
    /// CUDA's: same sizes, same offsets. (The library copies field by
    /// field; this pins the ABI vmafx's HIP driver fills in against an
    /// independent binding of the same shapes.)
    #[test]
    fn hip_descriptors_are_laid_out_as_cudas() {
        macro_rules! same {
            ($h:ty, $c:ty, $($f:ident),*) => {
                assert_eq!(size_of::<$h>(), size_of::<$c>(), stringify!($h));
                $(assert_eq!(offset_of!($h, $f), offset_of!($c, $f), "{}.{}", stringify!($h), stringify!($f));)*
            };
        }
        same!(
            hip::hipExternalMemoryHandleDesc,
            cu::CUDA_EXTERNAL_MEMORY_HANDLE_DESC,
            type_,
            handle,
            size,
            flags,
            reserved
        );
        same!(
            hip::hipExternalMemoryBufferDesc,
            cu::CUDA_EXTERNAL_MEMORY_BUFFER_DESC,
            offset,
            size,
            flags,
            reserved
        );
        same!(
            hip::hipExternalSemaphoreHandleDesc,
            cu::CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC,
            type_,
            handle,
            flags,
            reserved
        );
        same!(
            hip::hipExternalSemaphoreSignalParams,
            cu::CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS,
            params,
            flags,
            reserved
        );
        same!(
            hip::hipExternalSemaphoreWaitParams,
            cu::CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS,
            params,
            flags,
            reserved
        );
        assert_eq!(size_of::<hip::hipUUID>(), size_of::<cu::CUuuid>());
    }

    /// hipDeviceProp_tR0600 as vmafx reads it (gcnArchName after the
    /// CUDA-shaped part and HIP's reserved words): pinned, so a binding
    /// update that moves it fails here, not on a device.
    #[test]
    fn device_properties_keep_rocm6_layout() {
        type P = hip::hipDeviceProp_tR0600;
        assert_eq!(offset_of!(P, name), 0);
        assert_eq!(offset_of!(P, uuid), 256);
        assert_eq!(offset_of!(P, totalGlobalMem), 288);
        assert_eq!(offset_of!(P, sharedMemPerBlock), 296);
        assert_eq!(offset_of!(P, warpSize), 308);
        assert_eq!(offset_of!(P, gcnArchName), GCN_ARCH_NAME_OFFSET);
        assert_eq!(size_of::<P>(), PROPS_SIZE);
    }
    /// As cubecl-hip-sys 7.14 binds ROCm 6's header.
    const GCN_ARCH_NAME_OFFSET: usize = 1160;
    const PROPS_SIZE: usize = 1472;

    #[test]
    fn names_are_cut_and_terminated() {
        let mut buf = [1 as c_char; 8];
        write_c_string(&mut buf, "gfx1030-and-more");
        assert_eq!(
            unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap(),
            "gfx1030"
        );
        let mut buf = [1 as c_char; 256];
        write_c_string(&mut buf, crate::ARCH);
        assert_eq!(
            unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap(),
            "gfx1030"
        );
    }

    /// No CUDA driver here (CI): the calls answer errors, never panic
    /// across the C boundary. With a driver they answer what it has.
    #[test]
    fn calls_without_a_driver_answer_errors() {
        let mut n = -1;
        let r = unsafe { hipGetDeviceCount(&mut n) };
        if unsafe { cu::is_culib_present() } {
            println!("libcuda present: hipGetDeviceCount answered {r}, {n} devices");
        } else {
            assert_eq!(r, hip::hipError_t_hipErrorInsufficientDriver);
            let mut p = null_mut();
            assert_eq!(
                unsafe { hipMalloc(&mut p, 16) },
                hip::hipError_t_hipErrorInsufficientDriver
            );
        }
        let mut v = 0;
        assert_eq!(unsafe { hipRuntimeGetVersion(&mut v) }, SUCCESS);
        assert!(v >= 60_200_000);
        assert_eq!(
            unsafe { CStr::from_ptr(hipGetErrorName(600)) },
            c"hipErrorNotReady"
        );
    }
}
