//! Device arrays read in place: CUDA planes described by `__dlpack__`
//! (PyTorch, CuPy, JAX, PyNvVideoCodec) or `__cuda_array_interface__`
//! (CuPy, Numba, PyCUDA), turned into an imported [`Frame`] whose memory
//! is the array's own. No sample is copied on the host; the array (or the
//! DLPack tensor) is kept alive until vmafx releases the frame, and the
//! producer's pending work is ordered before vmafx reads it by an event the
//! library stream waits for on the device.

use std::sync::{Arc, Mutex};

use pyo3::ffi;
use pyo3::prelude::*;

use vmafx::gpu::Gpu;
use vmafx::import::{
    Acquire, DevicePtr, Frame, FrameDesc, Memory, PixelFormat, PlaneLayout, Release,
};
use vmafx::PictureFormat;

use crate::{bad, err};

/// DLPack's `kDLCUDA`, `kDLCUDAManaged` (device memory a CUDA kernel reads).
const DL_CUDA: i32 = 2;
const DL_CUDA_MANAGED: i32 = 13;
/// DLPack's `kDLUInt`.
const DL_UINT: u8 = 1;

/// DLPack's `DLTensor` and `DLManagedTensor` (dlpack.h, version 0.8 ABI,
/// the unversioned capsule `"dltensor"`).
#[repr(C)]
struct DlTensor {
    data: *mut std::ffi::c_void,
    device_type: i32,
    device_id: i32,
    ndim: i32,
    dtype_code: u8,
    dtype_bits: u8,
    dtype_lanes: u16,
    shape: *const i64,
    strides: *const i64,
    byte_offset: u64,
}

#[repr(C)]
struct DlManagedTensor {
    dl_tensor: DlTensor,
    manager_ctx: *mut std::ffi::c_void,
    deleter: Option<unsafe extern "C" fn(*mut DlManagedTensor)>,
}

/// What keeps a plane's memory alive until vmafx has read it.
enum Keep {
    /// The array object (`__cuda_array_interface__`), held for its memory.
    Object(#[allow(dead_code)] PyObject),
    /// A DLPack tensor this consumer owns: its deleter frees it.
    Tensor(*mut DlManagedTensor),
}

// SAFETY: a tensor pointer is only handed between threads to be deleted,
// under the GIL (Context::bury runs it on a thread holding the GIL).
unsafe impl Send for Keep {}

impl Drop for Keep {
    fn drop(&mut self) {
        if let Keep::Tensor(t) = *self {
            // SAFETY: the tensor was taken from a "dltensor" capsule (the
            // capsule renamed "used_dltensor", so nobody else deletes it);
            // Keep values are dropped only with the GIL held (the deleter
            // may release Python objects).
            unsafe {
                if let Some(deleter) = (*t).deleter {
                    deleter(t);
                }
            }
        }
    }
}

/// Keeps released planes until a call holding the GIL drops them: release
/// callbacks run on library threads, which must not wait for the GIL.
#[derive(Clone, Default)]
pub(crate) struct Graveyard(Arc<Mutex<Vec<Keep>>>);

impl Graveyard {
    fn bury(&self, keep: Vec<Keep>) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(keep);
    }

    /// Drops what was released (the caller holds the GIL).
    pub(crate) fn empty(&self, _py: Python<'_>) {
        let doomed = std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()));
        drop(doomed);
    }
}

/// What must finish before a plane may be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum After {
    /// Nothing: the producer says the data is ready.
    Nothing,
    /// Work queued on the CUDA context's legacy default stream.
    LegacyStream,
    /// Work queued on the producer's own stream (a `CUstream`).
    Stream(usize),
}

/// One device plane: where its rows are, and what keeps it alive.
struct Plane {
    ptr: u64,
    rows: usize,
    cols: usize,
    pitch: usize,
    after: After,
    keep: Keep,
}

/// Whether `plane` is a CUDA device array (vmafx then reads it in place).
pub(crate) fn is_device_array(plane: &Bound<'_, PyAny>) -> bool {
    if plane.hasattr("__cuda_array_interface__").unwrap_or(false) {
        return true;
    }
    dlpack_device(plane).is_some_and(|(kind, _)| kind == DL_CUDA || kind == DL_CUDA_MANAGED)
}

fn dlpack_device(plane: &Bound<'_, PyAny>) -> Option<(i32, i32)> {
    plane
        .call_method0("__dlpack_device__")
        .ok()?
        .extract::<(i32, i32)>()
        .ok()
}

/// The element type a picture of `item` bytes per sample needs.
fn want(item: usize) -> &'static str {
    if item == 2 {
        "uint16"
    } else {
        "uint8"
    }
}

/// Checks an array interface's `typestr` (host `__array_interface__` or
/// `__cuda_array_interface__`) against `item` bytes per sample.
pub(crate) fn element_type(what: &str, typestr: &str, item: usize) -> PyResult<()> {
    let ok = matches!((item, typestr), (1, "|u1") | (2, "<u2") | (2, "=u2"));
    if ok {
        return Ok(());
    }
    Err(bad(format!(
        "{what}: element type {typestr}, expected a {} array ({} samples)",
        want(item),
        if item == 2 { "9- to 16-bit" } else { "8-bit" }
    )))
}

/// Reads a plane through `__dlpack__` (preferred: its stream argument is
/// defined for every producer) or `__cuda_array_interface__`.
fn plane_of(
    obj: &Bound<'_, PyAny>,
    what: &str,
    item: usize,
    device: Option<i32>,
) -> PyResult<Plane> {
    if let Some((kind, id)) = dlpack_device(obj) {
        if kind == DL_CUDA || kind == DL_CUDA_MANAGED {
            if let Some(ours) = device {
                if id != ours {
                    return Err(bad(format!(
                        "{what}: a CUDA array of device {id}; this context scores on device {ours}"
                    )));
                }
            }
            return dlpack_plane(obj, what, item);
        }
    }
    interface_plane(obj, what, item)
}

/// `obj.__dlpack__(stream=1)`: the producer orders its work before the
/// legacy default stream (1), which vmafx then waits for.
fn dlpack_plane(obj: &Bound<'_, PyAny>, what: &str, item: usize) -> PyResult<Plane> {
    let py = obj.py();
    let kwargs = pyo3::types::PyDict::new(py);
    kwargs.set_item("stream", 1)?;
    let capsule = obj.call_method("__dlpack__", (), Some(&kwargs))?;
    let name = c"dltensor";
    // SAFETY: `capsule` is a live object; PyCapsule_IsValid checks its type
    // and name.
    if unsafe { ffi::PyCapsule_IsValid(capsule.as_ptr(), name.as_ptr()) } != 1 {
        return Err(bad(format!(
            "{what}: __dlpack__ did not return an unused \"dltensor\" capsule"
        )));
    }
    // SAFETY: checked valid with this name just above.
    let managed = unsafe { ffi::PyCapsule_GetPointer(capsule.as_ptr(), name.as_ptr()) }
        as *mut DlManagedTensor;
    if managed.is_null() {
        return Err(PyErr::fetch(py));
    }
    // From here this consumer owns the tensor (DLPack's protocol): the
    // renamed capsule no longer deletes it, `Keep` does.
    // SAFETY: a valid capsule; the new name is a static string.
    unsafe { ffi::PyCapsule_SetName(capsule.as_ptr(), c"used_dltensor".as_ptr()) };
    let keep = Keep::Tensor(managed);
    // SAFETY: the producer filled a DLTensor that stays valid until its
    // deleter runs (when `keep` drops).
    let t = unsafe { &(*managed).dl_tensor };
    if t.dtype_code != DL_UINT || usize::from(t.dtype_bits) != 8 * item || t.dtype_lanes != 1 {
        return Err(bad(format!(
            "{what}: DLPack type code {} bits {} lanes {}: expected {} (unsigned, {} bits)",
            t.dtype_code,
            t.dtype_bits,
            t.dtype_lanes,
            want(item),
            8 * item
        )));
    }
    let ndim = usize::try_from(t.ndim).unwrap_or(0);
    if !(2..=3).contains(&ndim) {
        return Err(bad(format!(
            "{what}: a {}-D tensor: expected 2-D (rows, columns) or 3-D (rows, columns, channels)",
            t.ndim
        )));
    }
    // SAFETY: `shape` holds `ndim` entries; `strides` too when not NULL
    // (NULL: compact row-major).
    let (shape, strides) = unsafe {
        let shape: Vec<i64> = (0..ndim).map(|i| *t.shape.add(i)).collect();
        let strides = (!t.strides.is_null()).then(|| {
            (0..ndim)
                .map(|i| *t.strides.add(i) * item as i64)
                .collect::<Vec<_>>()
        });
        (shape, strides)
    };
    let shape: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
    let (rows, cols, pitch) = row_layout(what, &shape, strides, item)?;
    Ok(Plane {
        ptr: t.data as u64 + t.byte_offset,
        rows,
        cols,
        pitch,
        after: After::LegacyStream,
        keep,
    })
}

/// `__cuda_array_interface__` (versions 2 and 3).
fn interface_plane(obj: &Bound<'_, PyAny>, what: &str, item: usize) -> PyResult<Plane> {
    let interface = obj.getattr("__cuda_array_interface__").map_err(|_| {
        bad(format!(
            "{what}: neither __dlpack__ of a CUDA device nor __cuda_array_interface__"
        ))
    })?;
    let typestr: String = interface.get_item("typestr")?.extract()?;
    element_type(what, &typestr, item)?;
    let shape: Vec<usize> = interface.get_item("shape")?.extract()?;
    let strides: Option<Vec<i64>> = match interface.get_item("strides") {
        Ok(s) => s.extract()?,
        Err(_) => None,
    };
    let (rows, cols, pitch) = row_layout(what, &shape, strides, item)?;
    let (ptr, _readonly): (usize, bool) = interface.get_item("data")?.extract()?;
    if ptr == 0 && rows * cols > 0 {
        return Err(bad(format!("{what}: data pointer is NULL")));
    }
    // Version 3's `stream`: None or absent, nothing to wait for; 1, the
    // legacy default stream; another value, the producer's stream, whose
    // queued work vmafx's stream waits for (an event recorded there).
    let stream: Option<usize> = match interface.get_item("stream") {
        Ok(s) => s.extract()?,
        Err(_) => None,
    };
    // 0 is ambiguous in the protocol (legacy or per-thread default stream)
    // but producers use it (PyNvVideoCodec): the legacy stream waits for
    // both, as it waits for every blocking stream of the context.
    let after = match stream {
        None => After::Nothing,
        Some(0 | 1) => After::LegacyStream,
        Some(s) => After::Stream(s),
    };
    Ok(Plane {
        ptr: ptr as u64,
        rows,
        cols,
        pitch,
        after,
        keep: Keep::Object(obj.clone().unbind()),
    })
}

/// Rows, samples per row and row pitch (bytes) of an array of `shape`:
/// 1-D (one row: a whole packed picture), 2-D (rows, columns) or 3-D
/// (rows, columns, channels: an interleaved CbCr plane as (rows, columns,
/// 2)), with optional `strides` in bytes. Each row's samples must be
/// contiguous. Host and device arrays alike.
pub(crate) fn row_layout(
    what: &str,
    shape: &[usize],
    strides: Option<Vec<i64>>,
    item: usize,
) -> PyResult<(usize, usize, usize)> {
    let (rows, cols, compact) = match *shape {
        [n] => (1, n, vec![n * item]),
        [rows, cols] => (rows, cols, vec![cols * item, item]),
        [rows, cols, ch] => (rows, cols * ch, vec![cols * ch * item, ch * item, item]),
        _ => {
            return Err(bad(format!(
                "{what}: shape {shape:?}: expected a 2-D array (rows, columns), or 3-D (rows, columns, channels)"
            )))
        }
    };
    let pitch = match strides {
        None => compact[0],
        Some(s) if shape.len() == 1 && s == [item as i64] => compact[0],
        Some(s)
            if shape.len() > 1
                && s.len() == compact.len()
                && s[1..].iter().zip(&compact[1..]).all(|(&a, &b)| a == b as i64)
                && s[0] >= compact[0] as i64 =>
        {
            s[0] as usize
        }
        Some(s) => {
            return Err(bad(format!(
                "{what}: strides {s:?} (bytes): rows must be contiguous ({item}-byte samples, rows in order)"
            )))
        }
    };
    Ok((rows, cols, pitch))
}

/// The semi-planar layout of a `format` picture (Y + interleaved CbCr).
fn semi_planar(format: &PictureFormat) -> Option<PixelFormat> {
    use vmafx::ChromaSubsampling::*;
    Some(match (format.subsampling, format.bit_depth) {
        (Yuv420, 8) => PixelFormat::Nv12,
        (Yuv422, 8) => PixelFormat::Nv16,
        (Yuv444, 8) => PixelFormat::Nv24,
        (Yuv420, 10) => PixelFormat::P010,
        (Yuv422, 10) => PixelFormat::P210,
        (Yuv444, 10) => PixelFormat::P410,
        (Yuv420, 16) => PixelFormat::P016,
        (Yuv422, 16) => PixelFormat::P216,
        (Yuv444, 16) => PixelFormat::P416,
        _ => return None,
    })
}

/// An imported frame from the device planes of one side: three (planar),
/// two (Y, interleaved CbCr) or one semi-planar array of `height +
/// chroma height` rows (Y, then CbCr: a decoder's NV12/P010 surface).
/// `device`: the context's CUDA device index, checked against DLPack's.
/// Released planes go to `graveyard`.
pub(crate) fn frame(
    planes: &[Bound<'_, PyAny>],
    side: &str,
    format: &PictureFormat,
    gpu: &Gpu,
    device: Option<i32>,
    graveyard: &Graveyard,
) -> PyResult<Frame> {
    let n = format.plane_count();
    let semi = || {
        semi_planar(format).ok_or_else(|| {
            bad(format!(
                "{side}: semi-planar device planes of {} bits: vmafx reads 8-, 10- (P010) and 16-bit ones",
                format.bit_depth
            ))
        })
    };
    let pixel_format = match planes.len() {
        k if k == n => PixelFormat::Planar {
            subsampling: format.subsampling,
            bit_depth: format.bit_depth,
        },
        1 | 2 if n == 3 => semi()?,
        k => {
            return Err(bad(format!(
                "{side}: {k} planes for a {format} picture (expected {n}, 2 semi-planar, or 1 semi-planar surface)"
            )))
        }
    };
    let item = pixel_format.bytes_per_sample();
    let extent = |i: usize| {
        let (row_bytes, rows) = pixel_format.plane_extent(i, format.width, format.height);
        (rows, row_bytes / item)
    };
    let mut read = Vec::with_capacity(planes.len());
    for (i, p) in planes.iter().enumerate() {
        let what = format!("{side} plane {i}");
        let plane = plane_of(p, &what, item, device)?;
        let expected = if planes.len() == 1 && n == 3 {
            // One surface: luma rows, then the interleaved chroma rows (as
            // wide as luma rows in samples for 4:2:0 and 4:2:2).
            let ((h, w), (ch, cw)) = (extent(0), extent(1));
            if cw != w {
                return Err(bad(format!(
                    "{side}: one semi-planar surface needs chroma rows as wide as luma rows (4:2:0 or 4:2:2); give (Y, CbCr)"
                )));
            }
            (h + ch, w)
        } else {
            extent(i)
        };
        if (plane.rows, plane.cols) != expected {
            return Err(bad(format!(
                "{what}: shape ({}, {}), expected {expected:?}",
                plane.rows, plane.cols
            )));
        }
        read.push(plane);
    }
    let mut after: Vec<After> = read
        .iter()
        .map(|p| p.after)
        .filter(|a| *a != After::Nothing)
        .collect();
    after.dedup();
    let acquire = match after.as_slice() {
        [] => Acquire::None,
        [one] => {
            let event = gpu.event().map_err(err)?;
            match *one {
                After::Stream(s) => {
                    // SAFETY: the stream the producer's interface names for
                    // this array: a live stream of its device and context
                    // for as long as the array is being handed over.
                    unsafe { event.record_on_foreign_stream(s) }.map_err(err)?
                }
                _ => event.record_on_legacy_stream().map_err(err)?,
            }
            Acquire::DeviceEvent(event.as_raw())
        }
        _ => {
            return Err(bad(format!(
                "{side}: planes on different streams ({after:?}): hand over one side's planes on one stream"
            )))
        }
    };
    let device_ptr = |p: &Plane| {
        // SAFETY: the producer's array: `rows` rows of `pitch` bytes of
        // this device (DLPack's device checked; CUDA refuses pointers of
        // another context when it binds them). It stays allocated until
        // the frame's release (the release callback below owns what keeps
        // it alive) and is not written by vmafx.
        Memory::Device(unsafe { DevicePtr::new(p.ptr, (p.pitch * p.rows) as u64) })
    };
    let desc = if let [surface] = read.as_slice() {
        let pitch = surface.pitch as u64;
        let chroma = PlaneLayout::new(extent(0).0 as u64 * pitch, pitch);
        let planes = [PlaneLayout::new(0, pitch), chroma];
        FrameDesc::new(
            format.width,
            format.height,
            pixel_format,
            device_ptr(surface),
            &planes,
        )
    } else {
        let memory = read
            .iter()
            .map(|p| (device_ptr(p), PlaneLayout::new(0, p.pitch as u64)))
            .collect();
        FrameDesc::per_plane(format.width, format.height, pixel_format, memory)
    };
    let keep: Vec<Keep> = read.into_iter().map(|p| p.keep).collect();
    let graveyard = graveyard.clone();
    let release = Release::Callback(Box::new(move || graveyard.bury(keep)));
    Frame::new(desc, acquire, vec![release]).map_err(err)
}
