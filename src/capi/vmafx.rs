//! vmafx's own C API (`vmafx.h`): a context for one picture format with
//! models and features named as on the command line, frames handed over
//! where they live (host memory, a memfd, device memory) with an acquire
//! fence and a release callback, and each frame's scores as it finishes.
//!
//! Structs a caller fills begin with `size` (`sizeof` the struct as the
//! caller's header declares it): a later version appends fields, and a
//! library reads only the fields a caller's size covers.

use std::ffi::{c_char, c_double, c_int, c_uint, c_void, CString};
use std::os::fd::{BorrowedFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::time::Duration;

use super::error::{guard, invalid, required_str, CResult};
use super::handles;
use super::picture::subsampling_of;
use crate::feature::options::parse_feature_spec;
use crate::gpu::{self, DeviceSelector, GpuBackend};
use crate::import::{
    Acquire, DevicePtr, Frame, FrameDesc, HostMemory, Memory, PixelFormat, PlaneLayout, RawEvent,
    Release,
};
use crate::model::{Model, ModelSpec};
use crate::{Context, ContextBuilder, FeatureScores, PictureFormat};

/// `VMAFX_BACKEND_*`.
const BACKEND_CPU: c_int = 0;
const BACKEND_CUDA: c_int = 1;
const BACKEND_HIP: c_int = 2;
const BACKEND_AUTO: c_int = 3;

/// `VMAFX_MEMORY_*`.
const MEMORY_HOST: c_int = 1;
const MEMORY_HOST_FD: c_int = 2;
const MEMORY_DEVICE: c_int = 3;

/// `VMAFX_ACQUIRE_*`.
const ACQUIRE_NONE: c_int = 0;
const ACQUIRE_SYNC_FILE: c_int = 1;
const ACQUIRE_DEVICE_EVENT: c_int = 2;

/// `VmafxConfig`.
#[repr(C)]
pub struct VmafxConfig {
    pub size: usize,
    pub width: c_uint,
    pub height: c_uint,
    pub pix_fmt: c_int,
    pub bpc: c_uint,
    pub n_threads: c_uint,
    pub n_subsample: c_uint,
    pub models: *const *const c_char,
    pub n_models: c_uint,
    pub features: *const *const c_char,
    pub n_features: c_uint,
    pub backend: c_int,
    pub gpu_device: *const c_char,
    pub fence_timeout_ms: c_uint,
}

/// `VmafxPlane`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VmafxPlane {
    pub offset: u64,
    pub pitch: u64,
}

/// `VmafxFrame`.
#[repr(C)]
pub struct VmafxFrame {
    pub size: usize,
    pub width: c_uint,
    pub height: c_uint,
    pub pixel_format: c_int,
    pub memory: c_int,
    pub host: *const c_void,
    pub fd: c_int,
    pub device_ptr: u64,
    pub bytes: u64,
    pub planes: [VmafxPlane; 3],
    pub acquire: c_int,
    pub acquire_fd: c_int,
    pub acquire_event: usize,
    pub release: Option<unsafe extern "C" fn(*mut c_void)>,
    pub release_user_data: *mut c_void,
}

/// Called with each frame's scores as it finishes.
pub type FrameCallback =
    unsafe extern "C" fn(*mut c_void, c_uint, *const *const c_char, *const c_double, c_uint);

/// The C context: a [`Context`] until finished, then its scores.
pub struct VmafxContext {
    engine: Option<Context>,
    scores: Option<FeatureScores>,
}

/// The pointer and user data of a C callback, called on the thread that
/// submits or finishes (the context calls it there).
struct CCallback<F> {
    f: F,
    user: *mut c_void,
}
// SAFETY: the C caller promises (vmafx.h) that the callback may be called
// from the threads it uses the context on, and the release callback from
// any library thread; the pointer is only passed back to it.
unsafe impl<F> Send for CCallback<F> {}

/// Reads field `$field` of a caller's struct only if the caller's `size`
/// covers it; else the field's zero value.
macro_rules! field {
    ($s:expr, $ty:ty, $field:ident) => {
        if $s.size >= std::mem::offset_of!($ty, $field) + std::mem::size_of_val(&$s.$field) {
            Some(&$s.$field)
        } else {
            None
        }
    };
}

/// The strings of a C array of `n` strings.
///
/// # Safety
/// `list` points to `n` NUL-terminated strings (or `n` is 0).
unsafe fn strings<'a>(list: *const *const c_char, n: c_uint, what: &str) -> CResult<Vec<&'a str>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if list.is_null() {
        return Err(invalid(format!("{what} is NULL with a count of {n}")));
    }
    (0..n as usize)
        .map(|i| {
            // SAFETY: `n` entries, per the caller.
            let s = unsafe { *list.add(i) };
            // SAFETY: each a NUL-terminated string, per the caller.
            unsafe { required_str(s, &format!("{what}[{i}]")) }
        })
        .collect()
}

fn build(cfg: &VmafxConfig) -> CResult<Context> {
    let min = std::mem::offset_of!(VmafxConfig, fence_timeout_ms);
    if cfg.size < min {
        return Err(invalid(format!(
            "cfg->size {}: smaller than version 1's VmafxConfig ({min} bytes before fence_timeout_ms); set it to sizeof(VmafxConfig)",
            cfg.size
        )));
    }
    let subsampling = subsampling_of(cfg.pix_fmt)?;
    if !(8..=16).contains(&cfg.bpc) {
        return Err(invalid(format!("bpc {}: must be 8 to 16", cfg.bpc)));
    }
    let format = PictureFormat::new(cfg.width, cfg.height, subsampling, cfg.bpc as u8)?;
    let mut builder = ContextBuilder::new(format)
        .threads(cfg.n_threads as usize)
        .subsample(cfg.n_subsample.max(1));
    // SAFETY: the caller's promise on the string arrays.
    for spec in unsafe { strings(cfg.models, cfg.n_models, "models") }? {
        builder = builder.model(Model::load(&ModelSpec::parse(spec)?)?);
    }
    // SAFETY: as above.
    for feature in unsafe { strings(cfg.features, cfg.n_features, "features") }? {
        let (name, options) = parse_feature_spec(feature)?;
        builder = builder.feature(&name, options);
    }
    if let Some(&ms) = field!(cfg, VmafxConfig, fence_timeout_ms) {
        if ms > 0 {
            builder = builder.fence_timeout(Duration::from_millis(ms as u64));
        }
    }
    // SAFETY: NULL or a NUL-terminated string, per the caller.
    let device = unsafe { super::error::c_str(cfg.gpu_device, "gpu_device") }?.unwrap_or("0");
    let selector = DeviceSelector::parse(device)?;
    let gpu = match cfg.backend {
        BACKEND_CPU => None,
        BACKEND_CUDA => Some(gpu::open(GpuBackend::Cuda, &selector)?),
        BACKEND_HIP => Some(gpu::open(GpuBackend::Hip, &selector)?),
        BACKEND_AUTO => gpu::open_any(&selector).ok(),
        other => {
            return Err(invalid(format!(
                "backend {other}: not one of VMAFX_BACKEND_CPU (0), CUDA (1), HIP (2), AUTO (3)"
            )))
        }
    };
    if let Some(gpu) = gpu {
        builder = builder.gpu(gpu);
    }
    Ok(builder.build()?)
}

/// The pixel format of a frame: `VMAFX_PIXEL_FORMAT_*`, where 0 is planar
/// as the context's `pix_fmt` and `bpc`.
fn pixel_format(code: c_int, context: &PictureFormat) -> CResult<PixelFormat> {
    Ok(match code {
        0 => PixelFormat::Planar {
            subsampling: context.subsampling,
            bit_depth: context.bit_depth,
        },
        1 => PixelFormat::Nv12,
        2 => PixelFormat::Nv16,
        3 => PixelFormat::Nv24,
        4 => PixelFormat::P010,
        5 => PixelFormat::P210,
        6 => PixelFormat::P410,
        7 => PixelFormat::P016,
        8 => PixelFormat::P216,
        9 => PixelFormat::P416,
        other => {
            return Err(invalid(format!(
                "pixel_format {other}: not one of VMAFX_PIXEL_FORMAT_PLANAR (0), NV12 (1), NV16, NV24, P010, P210, P410, P016, P216, P416 (9)"
            )))
        }
    })
}

/// A [`Frame`] from the C description. A refused frame's release callback
/// has run when this returns (a [`Frame`] refused by its own checks fires
/// its releases; a description refused before calls it here), unless its
/// `size` is too small to trust its fields.
///
/// # Safety
/// As `vmafx_submit`'s contract for `f`.
unsafe fn frame(f: &VmafxFrame, side: &str, context: &PictureFormat) -> CResult<Frame> {
    // SAFETY: forwarded promise.
    let described = unsafe { describe(f, side, context) };
    let (desc, acquire) = match described {
        Ok(parts) => parts,
        Err(e) => {
            // SAFETY: the caller's callback, callable now.
            unsafe { release_now(f) };
            return Err(e);
        }
    };
    let mut releases = Vec::new();
    if let Some(callback) = f.release {
        let c = CCallback {
            f: callback,
            user: f.release_user_data,
        };
        releases.push(Release::Callback(Box::new(move || {
            let c = c;
            // SAFETY: the caller's callback with its own user data.
            unsafe { (c.f)(c.user) }
        })));
    }
    Ok(Frame::new(desc, acquire, releases)?)
}

/// The memory, layout and acquire fence of a C frame.
///
/// # Safety
/// As `vmafx_submit`'s contract for `f`.
unsafe fn describe(
    f: &VmafxFrame,
    side: &str,
    context: &PictureFormat,
) -> CResult<(FrameDesc, Acquire)> {
    let min =
        std::mem::offset_of!(VmafxFrame, release_user_data) + std::mem::size_of::<*mut c_void>();
    if f.size < min {
        return Err(invalid(format!(
            "{side}->size {}: smaller than version 1's VmafxFrame ({min} bytes); set it to sizeof(VmafxFrame)",
            f.size
        )));
    }
    // The acquire fd is taken first, so every refusal below closes it.
    let acquire = match f.acquire {
        ACQUIRE_NONE => Acquire::None,
        ACQUIRE_SYNC_FILE => {
            if f.acquire_fd < 0 {
                return Err(invalid(format!("{side}: acquire is VMAFX_ACQUIRE_SYNC_FILE but acquire_fd is {}", f.acquire_fd)));
            }
            // SAFETY: an open fd the caller hands over (vmafx.h: the
            // library closes it).
            Acquire::SyncFile(unsafe { OwnedFd::from_raw_fd(f.acquire_fd) })
        }
        // SAFETY: the caller promises a live event of the context's device.
        ACQUIRE_DEVICE_EVENT => Acquire::DeviceEvent(unsafe { RawEvent::from_raw(f.acquire_event) }),
        other => {
            return Err(invalid(format!(
                "{side}: acquire {other}: not one of VMAFX_ACQUIRE_NONE (0), SYNC_FILE (1), DEVICE_EVENT (2)"
            )))
        }
    };
    let format = pixel_format(f.pixel_format, context)
        .map_err(|e| invalid(format!("{side}: {}", e.message)))?;
    let memory = match f.memory {
        MEMORY_HOST => {
            let ptr = NonNull::new(f.host as *mut u8).ok_or_else(|| {
                invalid(format!(
                    "{side}: memory is VMAFX_MEMORY_HOST but host is NULL"
                ))
            })?;
            // SAFETY: the caller promises `bytes` readable bytes, unwritten
            // until the release callback.
            Memory::Host(unsafe { HostMemory::new(ptr, f.bytes as usize) })
        }
        MEMORY_HOST_FD => {
            if f.fd < 0 {
                return Err(invalid(format!(
                    "{side}: memory is VMAFX_MEMORY_HOST_FD but fd is {}",
                    f.fd
                )));
            }
            // SAFETY: an open fd of the caller's, borrowed for the dup.
            let fd = unsafe { BorrowedFd::borrow_raw(f.fd) };
            let fd = fd
                .try_clone_to_owned()
                .map_err(|e| invalid(format!("{side}: fd {}: {e}", f.fd)))?;
            Memory::HostFd { fd, bytes: f.bytes }
        }
        // SAFETY: the caller promises device memory of the context's device.
        MEMORY_DEVICE => Memory::Device(unsafe { DevicePtr::new(f.device_ptr, f.bytes) }),
        other => {
            return Err(invalid(format!(
                "{side}: memory {other}: not one of VMAFX_MEMORY_HOST (1), HOST_FD (2), DEVICE (3)"
            )))
        }
    };
    let planes: Vec<PlaneLayout> = f.planes[..format.memory_planes()]
        .iter()
        .map(|p| PlaneLayout::new(p.offset, p.pitch))
        .collect();
    Ok((
        FrameDesc::new(f.width, f.height, format, memory, &planes),
        acquire,
    ))
}

/// Calls a refused frame's release callback.
///
/// # Safety
/// The callback and user data are the caller's, callable now.
unsafe fn release_now(f: &VmafxFrame) {
    if f.size >= std::mem::size_of::<VmafxFrame>() {
        if let Some(callback) = f.release {
            // SAFETY: the caller's callback with its own user data.
            unsafe { callback(f.release_user_data) };
        }
    }
}

/// # Safety
/// `ctx` is NULL or a live handle.
unsafe fn context<'a>(ctx: *mut VmafxContext) -> CResult<&'a mut VmafxContext> {
    // SAFETY: the caller's promise; closed or unknown handles are refused.
    unsafe { handles::get(ctx, "ctx") }
}

fn running(ctx: &mut VmafxContext) -> CResult<&mut Context> {
    ctx.engine
        .as_mut()
        .ok_or_else(|| invalid("the context is finished: no more frames"))
}

/// `int vmafx_context_new(VmafxContext **ctx, const VmafxConfig *cfg)`.
///
/// # Safety
/// `ctx` writable; `cfg` a filled `VmafxConfig`.
#[no_mangle]
pub unsafe extern "C" fn vmafx_context_new(
    ctx: *mut *mut VmafxContext,
    cfg: *const VmafxConfig,
) -> c_int {
    guard("vmafx_context_new", || {
        // SAFETY: NULL or writable, per the caller.
        let out = unsafe { ctx.as_mut() }.ok_or_else(|| invalid("ctx is NULL"))?;
        // SAFETY: NULL or a config, per the caller.
        let cfg = unsafe { cfg.as_ref() }.ok_or_else(|| invalid("cfg is NULL"))?;
        let engine = build(cfg)?;
        *out = handles::hand_out(VmafxContext {
            engine: Some(engine),
            scores: None,
        });
        Ok(())
    })
}

/// `int vmafx_submit(VmafxContext *ctx, const VmafxFrame *ref, const VmafxFrame *dist)`.
///
/// # Safety
/// `ctx` live; `reference` and `distorted` filled `VmafxFrame`s whose
/// memory stays valid and unwritten until their release callbacks run.
#[no_mangle]
pub unsafe extern "C" fn vmafx_submit(
    ctx: *mut VmafxContext,
    reference: *const VmafxFrame,
    distorted: *const VmafxFrame,
) -> c_int {
    guard("vmafx_submit", || {
        // SAFETY: the caller's promise.
        let ctx = unsafe { context(ctx) }?;
        let engine = running(ctx)?;
        let format = *engine.format();
        // SAFETY: NULL or filled frames, per the caller.
        let (r, d) = unsafe { (reference.as_ref(), distorted.as_ref()) };
        let (r, d) = r.zip(d).ok_or_else(|| invalid("ref or dist is NULL"))?;
        // SAFETY: the caller's promise on both frames.
        let (rf, df) = unsafe { (frame(r, "ref", &format), frame(d, "dist", &format)) };
        // A refused frame has had its release already (see `frame`); the
        // other one is released when dropped here.
        let (rf, df) = (rf?, df?);
        Ok(engine.submit_frames(&rf, &df)?)
    })
}

/// `int vmafx_poll(VmafxContext *ctx)`: hands on the queued pairs whose
/// sync_file acquires have signalled, without submitting (`Context::poll`).
///
/// # Safety
/// `ctx` live.
#[no_mangle]
pub unsafe extern "C" fn vmafx_poll(ctx: *mut VmafxContext) -> c_int {
    guard("vmafx_poll", || {
        // SAFETY: the caller's promise.
        let ctx = unsafe { context(ctx) }?;
        Ok(running(ctx)?.poll()?)
    })
}

/// `int vmafx_on_frame(VmafxContext *ctx, VmafxFrameCallback callback, void *user_data)`.
///
/// # Safety
/// `ctx` live; `callback` callable from the threads that use `ctx`.
#[no_mangle]
pub unsafe extern "C" fn vmafx_on_frame(
    ctx: *mut VmafxContext,
    callback: Option<FrameCallback>,
    user_data: *mut c_void,
) -> c_int {
    guard("vmafx_on_frame", || {
        // SAFETY: the caller's promise.
        let ctx = unsafe { context(ctx) }?;
        let f = callback.ok_or_else(|| invalid("callback is NULL"))?;
        let c = CCallback { f, user: user_data };
        running(ctx)?.on_frame(move |index, values| {
            let c = &c; // the whole struct (Send), not its fields
            let names: Vec<CString> = values
                .iter()
                .map(|(n, _)| CString::new(n.as_str()).unwrap_or_default())
                .collect();
            let pointers: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
            let numbers: Vec<c_double> = values.iter().map(|(_, v)| *v).collect();
            // SAFETY: the caller's callback; the arrays live for the call.
            unsafe {
                (c.f)(
                    c.user,
                    index,
                    pointers.as_ptr(),
                    numbers.as_ptr(),
                    values.len() as c_uint,
                )
            }
        });
        Ok(())
    })
}

/// `int vmafx_finish(VmafxContext *ctx)`: waits for every frame; scores
/// stay queryable.
///
/// # Safety
/// `ctx` live.
#[no_mangle]
pub unsafe extern "C" fn vmafx_finish(ctx: *mut VmafxContext) -> c_int {
    guard("vmafx_finish", || {
        // SAFETY: the caller's promise.
        let ctx = unsafe { context(ctx) }?;
        let engine = ctx
            .engine
            .take()
            .ok_or_else(|| invalid("the context is finished already"))?;
        ctx.scores = Some(engine.finish()?);
        Ok(())
    })
}

fn finished(ctx: &VmafxContext) -> CResult<&FeatureScores> {
    ctx.scores
        .as_ref()
        .ok_or_else(|| invalid("not finished: call vmafx_finish first"))
}

/// `int vmafx_score_at(VmafxContext *ctx, const char *name, unsigned index, double *score)`.
///
/// # Safety
/// `ctx` live; `name` NUL-terminated; `score` writable.
#[no_mangle]
pub unsafe extern "C" fn vmafx_score_at(
    ctx: *mut VmafxContext,
    name: *const c_char,
    index: c_uint,
    score: *mut c_double,
) -> c_int {
    guard("vmafx_score_at", || {
        // SAFETY: the caller's promise.
        let (ctx, name) = unsafe { (context(ctx)?, required_str(name, "name")?) };
        // SAFETY: NULL or writable.
        let out = unsafe { score.as_mut() }.ok_or_else(|| invalid("score is NULL"))?;
        *out = finished(ctx)?
            .get(index, name)
            .ok_or_else(|| invalid(format!("no score '{name}' at frame {index}")))?;
        Ok(())
    })
}

/// `int vmafx_score_pooled(VmafxContext *ctx, const char *name, int pool_method, double *score)`:
/// pooled over every scored frame (`VMAF_POOL_METHOD_*`).
///
/// # Safety
/// `ctx` live; `name` NUL-terminated; `score` writable.
#[no_mangle]
pub unsafe extern "C" fn vmafx_score_pooled(
    ctx: *mut VmafxContext,
    name: *const c_char,
    pool_method: c_int,
    score: *mut c_double,
) -> c_int {
    guard("vmafx_score_pooled", || {
        // SAFETY: the caller's promise.
        let (ctx, name) = unsafe { (context(ctx)?, required_str(name, "name")?) };
        // SAFETY: NULL or writable.
        let out = unsafe { score.as_mut() }.ok_or_else(|| invalid("score is NULL"))?;
        let method = super::context::pool_method(pool_method)?;
        let pooled = finished(ctx)?
            .pooled(name)
            .ok_or_else(|| invalid(format!("no score '{name}' in every scored frame")))?;
        *out = pooled.get(method);
        Ok(())
    })
}

/// `int vmafx_context_free(VmafxContext *ctx)`: frees the context; frames
/// not yet released are released.
///
/// # Safety
/// `ctx` NULL-checked, live.
#[no_mangle]
pub unsafe extern "C" fn vmafx_context_free(ctx: *mut VmafxContext) -> c_int {
    guard("vmafx_context_free", || {
        // SAFETY: the caller's promise; closed or unknown handles are refused.
        drop(unsafe { handles::take_back(ctx, "ctx") }?);
        Ok(())
    })
}
