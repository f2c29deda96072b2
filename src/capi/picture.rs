//! `VmafPicture`s: host pictures a client fills and hands to
//! `vmaf_read_pictures`, which passes them to the engine without a copy.
//!
//! `vmaf_picture_alloc` makes a [`HostPicture`] (rows aligned to 32
//! samples, as libvmaf aligns them) inside a reference-counted record; the C
//! struct's `data` and `stride` point into it, and `ref` and `priv` both
//! point to the record. Chroma sizes are libvmaf's (`w >> 1` for 4:2:0 and
//! 4:2:2): the buffer holds the standard rounded-up chroma, whose extra
//! column and row no extractor reads (ADR 0002).

use std::ffi::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::error::{guard, invalid, CResult};
use super::types::*;
use crate::picture::{ChromaSubsampling, HostPicture, PictureFormat, PlaneId};

/// Rows are aligned to this many samples, as libvmaf's `DATA_ALIGN`.
const ROW_ALIGN: usize = 32;

/// Marks a record made here, so a picture from elsewhere is refused.
const MAGIC: u64 = 0x766d_6166_7870_6963; // "vmafxpic"

/// What `ref` and `priv` of a picture point to.
pub struct PictureRecord {
    magic: u64,
    count: AtomicUsize,
    picture: Mutex<Option<HostPicture>>,
    /// The pool that takes the picture back when the last reference goes.
    pool: Option<Arc<PicturePool>>,
}

/// Pictures made once by `vmaf_preallocate_pictures`, handed out by
/// `vmaf_fetch_preallocated_picture` and returned when unreferenced
/// unscored (a scored picture is the engine's; the pool makes another).
#[derive(Debug)]
pub struct PicturePool {
    format: PictureFormat,
    free: Mutex<Vec<HostPicture>>,
}

impl PicturePool {
    pub fn new(format: PictureFormat, count: usize) -> Arc<Self> {
        let free = (0..count)
            .map(|_| HostPicture::with_alignment(format, ROW_ALIGN))
            .collect();
        Arc::new(Self {
            format,
            free: Mutex::new(free),
        })
    }

    fn take(&self) -> HostPicture {
        let free = self.free.lock().unwrap_or_else(|e| e.into_inner()).pop();
        free.unwrap_or_else(|| HostPicture::with_alignment(self.format, ROW_ALIGN))
    }
}

/// libvmaf's pixel format code of a subsampling, and back.
pub fn subsampling_of(pix_fmt: c_int) -> CResult<ChromaSubsampling> {
    match pix_fmt {
        VMAF_PIX_FMT_YUV420P => Ok(ChromaSubsampling::Yuv420),
        VMAF_PIX_FMT_YUV422P => Ok(ChromaSubsampling::Yuv422),
        VMAF_PIX_FMT_YUV444P => Ok(ChromaSubsampling::Yuv444),
        VMAF_PIX_FMT_YUV400P => Ok(ChromaSubsampling::Yuv400),
        other => Err(invalid(format!(
            "pixel format {other}: not one of VMAF_PIX_FMT_YUV420P (1), YUV422P (2), YUV444P (3), YUV400P (4)"
        ))),
    }
}

fn pix_fmt_of(s: ChromaSubsampling) -> c_int {
    match s {
        ChromaSubsampling::Yuv420 => VMAF_PIX_FMT_YUV420P,
        ChromaSubsampling::Yuv422 => VMAF_PIX_FMT_YUV422P,
        ChromaSubsampling::Yuv444 => VMAF_PIX_FMT_YUV444P,
        ChromaSubsampling::Yuv400 => VMAF_PIX_FMT_YUV400P,
    }
}

/// The format a picture of these C parameters has.
pub fn format_of(pix_fmt: c_int, bpc: c_uint, w: c_uint, h: c_uint) -> CResult<PictureFormat> {
    let subsampling = subsampling_of(pix_fmt)?;
    if !(8..=16).contains(&bpc) {
        return Err(invalid(format!("bpc {bpc}: must be 8 to 16")));
    }
    Ok(PictureFormat::new(w, h, subsampling, bpc as u8)?)
}

/// Fills the C struct for `picture`, owned by a new record.
fn expose(pic: &mut VmafPicture, mut picture: HostPicture, pool: Option<Arc<PicturePool>>) {
    let format = *picture.format();
    let bytes = format.bytes_per_sample();
    let mut data = [std::ptr::null_mut(); 3];
    let mut stride = [0isize; 3];
    for (i, plane) in PlaneId::ALL.iter().enumerate().take(format.plane_count()) {
        stride[i] = (picture.stride(*plane) * bytes) as isize;
        data[i] = match bytes {
            1 => picture.plane_u8_mut(*plane).as_mut_ptr() as *mut c_void,
            _ => picture.plane_u16_mut(*plane).as_mut_ptr() as *mut c_void,
        };
    }
    let record = Box::into_raw(Box::new(PictureRecord {
        magic: MAGIC,
        count: AtomicUsize::new(1),
        picture: Mutex::new(Some(picture)),
        pool,
    })) as *mut c_void;
    *pic = c_picture(&format, data, stride, record);
}

/// The C struct of a picture of `format` whose planes are at `data`, rows
/// `stride` bytes apart, owned by `record` (its `ref` and `priv`). Chroma
/// sizes are libvmaf's (`w >> 1` for 4:2:0 and 4:2:2).
pub fn c_picture(
    format: &PictureFormat,
    data: [*mut c_void; 3],
    stride: [isize; 3],
    record: *mut c_void,
) -> VmafPicture {
    let (sx, sy) = format.subsampling.chroma_shift();
    let (cw, ch) = match format.plane_count() > 1 {
        true => (format.width >> sx, format.height >> sy),
        false => (0, 0),
    };
    VmafPicture {
        pix_fmt: pix_fmt_of(format.subsampling),
        bpc: format.bit_depth as c_uint,
        w: [format.width, cw, cw],
        h: [format.height, ch, ch],
        stride,
        data,
        r#ref: record,
        r#priv: record,
    }
}

/// Hands out a pool picture (`vmaf_fetch_preallocated_picture`).
pub fn fetch(pool: &Arc<PicturePool>, pic: &mut VmafPicture) {
    expose(pic, pool.take(), Some(pool.clone()));
}

/// The record of a picture made here, or why it is not one.
///
/// # Safety
/// `pic.ref` is NULL or points to memory readable as a record's magic
/// (a picture from `vmaf_picture_alloc`, or a zeroed struct).
unsafe fn record_of<'a>(pic: &VmafPicture, what: &str) -> CResult<&'a PictureRecord> {
    let record = pic.r#ref as *const PictureRecord;
    if record.is_null() {
        return Err(invalid(format!(
            "{what} has no reference (not from vmaf_picture_alloc, or already unreferenced)"
        )));
    }
    // SAFETY: non-null; made by expose() per the caller's promise.
    let record = unsafe { &*record };
    if record.magic != MAGIC || pic.r#priv != pic.r#ref {
        return Err(invalid(format!(
            "{what} was not made by vmaf_picture_alloc"
        )));
    }
    Ok(record)
}

/// Checks that `pic` is an allocated, unread picture whose C fields still
/// describe it.
///
/// # Safety
/// `pic` is a picture from `vmaf_picture_alloc` or the pool, not unreferenced.
pub unsafe fn check_readable(pic: &VmafPicture, what: &str) -> CResult {
    // SAFETY: the caller's promise.
    let record = unsafe { record_of(pic, what) }?;
    let slot = record.picture.lock().unwrap_or_else(|e| e.into_inner());
    let picture = slot
        .as_ref()
        .ok_or_else(|| invalid(format!("{what} was already read by vmaf_read_pictures")))?;
    let format = picture.format();
    if format_of(pic.pix_fmt, pic.bpc, pic.w[0], pic.h[0]).ok() != Some(*format) {
        return Err(invalid(format!(
            "{what}: its pix_fmt {}, bpc {} or size {}x{} were changed after allocation ({format})",
            pic.pix_fmt, pic.bpc, pic.w[0], pic.h[0]
        )));
    }
    Ok(())
}

/// Takes the picture out of `pic` for scoring and drops the caller's
/// reference (the engine owns it now).
///
/// # Safety
/// `pic` passed [`check_readable`].
pub unsafe fn take_for_scoring(pic: &mut VmafPicture, what: &str) -> CResult<HostPicture> {
    // SAFETY: the caller's promise.
    let record = unsafe { record_of(pic, what) }?;
    let picture = record
        .picture
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    let picture = picture.ok_or_else(|| invalid(format!("{what} was already read")))?;
    // SAFETY: pic is live, per the caller.
    unsafe { unref(pic) };
    Ok(picture)
}

/// Drops one reference; the last one frees the record (returning an
/// unscored pool picture to its pool). Zeroes the C struct, as libvmaf.
///
/// # Safety
/// `pic.ref` points to a live record made by `expose`.
unsafe fn unref(pic: &mut VmafPicture) {
    let record = pic.r#ref as *mut PictureRecord;
    // SAFETY: live record, per the caller.
    let last = unsafe { &*record }.count.fetch_sub(1, Ordering::AcqRel) == 1;
    if last {
        // SAFETY: the last reference: made by Box::into_raw in expose().
        let record = unsafe { Box::from_raw(record) };
        let picture = record
            .picture
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        if let (Some(pool), Some(picture)) = (record.pool, picture) {
            pool.free
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(picture);
        }
    }
    // SAFETY: VmafPicture is plain data; all-zero is its empty state.
    *pic = unsafe { std::mem::zeroed() };
}

/// `int vmaf_picture_alloc(VmafPicture *pic, enum VmafPixelFormat pix_fmt,
/// unsigned bpc, unsigned w, unsigned h)`: a zeroed picture.
///
/// # Safety
/// `pic` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn vmaf_picture_alloc(
    pic: *mut VmafPicture,
    pix_fmt: c_int,
    bpc: c_uint,
    w: c_uint,
    h: c_uint,
) -> c_int {
    guard("vmaf_picture_alloc", || {
        // SAFETY: NULL or writable, per the caller.
        let pic = unsafe { pic.as_mut() }.ok_or_else(|| invalid("pic is NULL"))?;
        let format = format_of(pix_fmt, bpc, w, h)?;
        expose(pic, HostPicture::with_alignment(format, ROW_ALIGN), None);
        Ok(())
    })
}

/// `int vmaf_picture_unref(VmafPicture *pic)`.
///
/// # Safety
/// `pic` is NULL or points to a picture struct (from `vmaf_picture_alloc`,
/// or zeroed).
#[no_mangle]
pub unsafe extern "C" fn vmaf_picture_unref(pic: *mut VmafPicture) -> c_int {
    guard("vmaf_picture_unref", || {
        // SAFETY: NULL or a picture struct, per the caller.
        let pic = unsafe { pic.as_mut() }.ok_or_else(|| invalid("pic is NULL"))?;
        #[cfg(feature = "cuda")]
        if super::cuda::is_device_picture(pic) {
            return super::cuda::unref(pic);
        }
        // SAFETY: the caller's promise.
        unsafe { record_of(pic, "pic") }?;
        // SAFETY: checked to be a live record.
        unsafe { unref(pic) };
        Ok(())
    })
}
