//! `libvmaf_cuda.h`: CUDA pictures, as FFmpeg's `libvmaf_cuda` filter uses
//! them. `vmaf_cuda_state_init` opens the device in the caller's CUDA
//! context (or the primary one); `vmaf_cuda_import_state` puts the C context
//! on it; preallocated device pictures are frames of a device frame pool
//! whose planes the client fills (`cuMemcpy2D`), scored in place by the GPU
//! engine and returned to the pool once read.

use std::ffi::{c_int, c_void};
use std::sync::Mutex;
use std::time::Duration;

use super::error::{guard, invalid, CResult};
use super::handles;
use super::picture::format_of;
use super::types::{PicParams, VmafPicture};
use crate::gpu::pool::{FramePool, PooledFrame};
use crate::gpu::{self, DeviceSelector, Gpu, GpuBackend};
use crate::import::{Acquire, Frame, PixelFormat};
use crate::picture::PictureFormat;

/// Device pictures in flight: the engine holds a few frames per side until
/// read (two in flight plus the temporal lookahead), the client two.
const POOL_FRAMES: usize = 16;

/// How long a fetch waits for the engine to give a pool frame back.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// `VmafCudaState`: the device.
pub struct VmafCudaState {
    pub(crate) gpu: Gpu,
}

/// `VmafCudaConfiguration`.
#[repr(C)]
pub struct VmafCudaConfiguration {
    pub cu_ctx: *mut c_void,
}

/// `enum VmafCudaPicturePreallocationMethod`.
const PREALLOC_NONE: c_int = 0;
const PREALLOC_DEVICE: c_int = 1;
const PREALLOC_HOST: c_int = 2;
const PREALLOC_HOST_PINNED: c_int = 3;

/// `VmafCudaPictureConfiguration`.
#[repr(C)]
pub struct VmafCudaPictureConfiguration {
    pub pic_params: PicParams,
    pub pic_prealloc_method: c_int,
}

/// Device pictures: the pool and the format they are scored as.
pub struct DevicePictures {
    pool: FramePool,
    format: PictureFormat,
}

/// Marks a device picture's record.
const MAGIC: u64 = 0x766d_6166_7864_6576; // "vmafxdev"

/// What `ref` and `priv` of a device picture point to.
pub struct DeviceRecord {
    magic: u64,
    frame: Mutex<Option<PooledFrame>>,
}

impl DevicePictures {
    pub fn new(gpu: &Gpu, format: PictureFormat) -> CResult<Self> {
        let layout = PixelFormat::Planar {
            subsampling: format.subsampling,
            bit_depth: format.bit_depth,
        };
        let pool = FramePool::new(gpu, format.width, format.height, layout, POOL_FRAMES)?;
        Ok(Self { pool, format })
    }

    /// A pool frame as a C picture whose planes are device addresses.
    pub fn fetch(&self, pic: &mut VmafPicture) -> CResult {
        let frame = self.pool.take(FETCH_TIMEOUT)?;
        let f = self.format;
        let mut data = [std::ptr::null_mut(); 3];
        let mut stride = [0isize; 3];
        for (i, plane) in frame.planes().iter().enumerate().take(3) {
            data[i] = plane.ptr as *mut c_void;
            stride[i] = plane.pitch as isize;
        }
        let record = handles::hand_out(DeviceRecord {
            magic: MAGIC,
            frame: Mutex::new(Some(frame)),
        }) as *mut c_void;
        *pic = super::picture::c_picture(&f, data, stride, record);
        Ok(())
    }
}

/// Whether `pic` is a device picture made here.
pub fn is_device_picture(pic: &VmafPicture) -> bool {
    let record = pic.r#ref as *mut DeviceRecord;
    // SAFETY: only registered pointers are read, and those are records
    // made by `fetch`.
    !record.is_null() && unsafe { handles::get(record, "pic") }.is_ok_and(|r| r.magic == MAGIC)
}

/// Takes a device picture's frame for scoring and zeroes the C struct.
///
/// The client wrote the picture with `cuMemcpy2D` (FFmpeg does), which for
/// a device-to-device copy returns before the copy is done: it is queued
/// on the context's legacy default stream, which our non-blocking streams
/// do not wait for by themselves. The frame's acquire is therefore an event
/// recorded on that stream now, after the client's copies.
pub fn take_frame(pic: &mut VmafPicture, what: &str) -> CResult<Frame> {
    let record = pic.r#ref as *mut DeviceRecord;
    // SAFETY: registered records are `DeviceRecord`s made by `fetch`.
    let boxed = unsafe { handles::take_back(record, what) }?;
    let frame = boxed
        .frame
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .ok_or_else(|| invalid(format!("{what} was already read")))?;
    let written = frame.gpu().event()?;
    written.record_on_legacy_stream()?;
    // SAFETY: VmafPicture is plain data; all-zero is its empty state.
    *pic = unsafe { std::mem::zeroed() };
    Ok(frame.into_frame(Acquire::DeviceEvent(written.as_raw()), Vec::new())?)
}

/// Drops an unread device picture (its frame goes back to the pool).
pub fn unref(pic: &mut VmafPicture) -> CResult {
    let record = pic.r#ref as *mut DeviceRecord;
    // SAFETY: registered records are `DeviceRecord`s made by `fetch`.
    drop(unsafe { handles::take_back(record, "pic") }?);
    // SAFETY: as above.
    *pic = unsafe { std::mem::zeroed() };
    Ok(())
}

/// `int vmaf_cuda_state_init(VmafCudaState **cu_state, VmafCudaConfiguration cfg)`.
///
/// # Safety
/// `cu_state` writable; `cfg.cu_ctx` NULL (the device's primary context)
/// or a live `CUcontext` that outlives the state.
#[no_mangle]
pub unsafe extern "C" fn vmaf_cuda_state_init(
    cu_state: *mut *mut VmafCudaState,
    cfg: VmafCudaConfiguration,
) -> c_int {
    guard("vmaf_cuda_state_init", || {
        // SAFETY: NULL or writable, per the caller.
        let out = unsafe { cu_state.as_mut() }.ok_or_else(|| invalid("cu_state is NULL"))?;
        let gpu = if cfg.cu_ctx.is_null() {
            gpu::open(GpuBackend::Cuda, &DeviceSelector::default())?
        } else {
            // SAFETY: a live context of the caller's, per the contract.
            unsafe { gpu::open_cuda_context(cfg.cu_ctx) }?
        };
        *out = handles::hand_out(VmafCudaState { gpu });
        Ok(())
    })
}

/// `int vmaf_cuda_import_state(VmafContext *vmaf, VmafCudaState *cu_state)`:
/// the context scores on that device (before the first picture).
///
/// # Safety
/// `vmaf` and `cu_state` live.
#[no_mangle]
pub unsafe extern "C" fn vmaf_cuda_import_state(
    vmaf: *mut super::context::VmafContext,
    cu_state: *mut VmafCudaState,
) -> c_int {
    guard("vmaf_cuda_import_state", || {
        // SAFETY: the caller's promise; unknown handles are refused.
        let (ctx, state) = unsafe {
            (
                handles::get(vmaf, "vmaf (the context)")?,
                handles::get(cu_state, "cu_state")?,
            )
        };
        ctx.set_gpu(state.gpu.clone())
    })
}

/// `int vmaf_cuda_preallocate_pictures(VmafContext *vmaf, VmafCudaPictureConfiguration cfg)`.
///
/// # Safety
/// `vmaf` live.
#[no_mangle]
pub unsafe extern "C" fn vmaf_cuda_preallocate_pictures(
    vmaf: *mut super::context::VmafContext,
    cfg: VmafCudaPictureConfiguration,
) -> c_int {
    guard("vmaf_cuda_preallocate_pictures", || {
        // SAFETY: the caller's promise; unknown handles are refused.
        let ctx = unsafe { handles::get(vmaf, "vmaf (the context)") }?;
        let p = cfg.pic_params;
        let format = format_of(p.pix_fmt, p.bpc, p.w, p.h)?;
        match cfg.pic_prealloc_method {
            PREALLOC_DEVICE => ctx.set_device_pictures(format),
            // Host pictures: the ordinary pool (pinning buys nothing here:
            // host pictures are copied by the engine's own staging).
            PREALLOC_HOST | PREALLOC_HOST_PINNED => ctx.set_host_pool(format, POOL_FRAMES),
            PREALLOC_NONE => Ok(()),
            other => Err(invalid(format!(
                "pic_prealloc_method {other}: not NONE (0), DEVICE (1), HOST (2) or HOST_PINNED (3)"
            ))),
        }
    })
}

/// `int vmaf_cuda_fetch_preallocated_picture(VmafContext *vmaf, VmafPicture *pic)`.
///
/// # Safety
/// `vmaf` live; `pic` writable.
#[no_mangle]
pub unsafe extern "C" fn vmaf_cuda_fetch_preallocated_picture(
    vmaf: *mut super::context::VmafContext,
    pic: *mut VmafPicture,
) -> c_int {
    guard("vmaf_cuda_fetch_preallocated_picture", || {
        // SAFETY: the caller's promise; unknown handles are refused.
        let ctx = unsafe { handles::get(vmaf, "vmaf (the context)") }?;
        // SAFETY: NULL or writable, per the caller.
        let pic = unsafe { pic.as_mut() }.ok_or_else(|| invalid("pic is NULL"))?;
        ctx.fetch_any(pic)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::mock::{Call, MockDriver, LEGACY_STREAM};
    use crate::picture::ChromaSubsampling;

    #[test]
    fn device_pictures_wait_for_the_clients_legacy_stream_copies() {
        // A client fills a device picture with cuMemcpy2D, which returns
        // before a device-to-device copy is done: the frame must wait for
        // an event recorded on the legacy stream after those copies.
        let (driver, gpu) = MockDriver::gpu();
        let format = PictureFormat::new(64, 36, ChromaSubsampling::Yuv420, 8).unwrap();
        let pictures = DevicePictures::new(&gpu, format).unwrap();
        // SAFETY: plain data; all-zero is the empty picture.
        let mut pic: VmafPicture = unsafe { std::mem::zeroed() };
        pictures.fetch(&mut pic).unwrap();
        assert!(is_device_picture(&pic));
        let before = driver.log().len();
        let frame = take_frame(&mut pic, "ref").unwrap();
        let recorded: Vec<Call> = driver.log()[before..].to_vec();
        assert!(
            recorded
                .iter()
                .any(|c| matches!(c, Call::EventRecord { stream, .. } if *stream == LEGACY_STREAM)),
            "no event recorded on the legacy stream: {recorded:?}"
        );
        assert_eq!(frame.acquire().kind(), "device event");
        assert!(pic.r#ref.is_null(), "the C picture is emptied");
    }
}
