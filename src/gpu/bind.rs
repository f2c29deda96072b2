//! Binding a frame that already lives on the device to the planes the
//! extractors read: in place where its layout is the engine's own (planar,
//! aligned like the context's planes), otherwise one device pass per plane
//! into the context's planes (semi-planar chroma split, `P`-format shift),
//! or a plain device copy where a layout cannot be read in place and the
//! producer allowed it. Nothing here touches host memory.

use super::args::KernelArgs;
use super::device::{Function, Gpu, Stream};
use super::driver::{Copy2d, DevicePtr, LaunchDims, Memory as CopySource};
use super::kernels::{self, kernel_source, KernelSource};
use super::planes::{DevicePlane, PITCH_ALIGN};
use crate::error::Result;
use crate::import::{ImportError, PixelFormat};
use crate::picture::{PlaneId, PlaneMask};

/// One memory plane of a device frame, as linear device memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourcePlane {
    pub ptr: DevicePtr,
    pub pitch: usize,
}

/// A frame in device memory: its layout and its memory planes.
#[derive(Debug, Clone, Copy)]
pub struct DeviceFrame<'a> {
    pub format: PixelFormat,
    pub planes: &'a [SourcePlane],
}

/// How the planes of bound frames reached the extractors, for tests and
/// benchmarks (an import must not copy on the host at all; device copies
/// happen only where the layout needs them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BindCounts {
    /// Planes read where the producer wrote them.
    pub in_place: u64,
    /// Planes written by a layout pass (split, shift).
    pub passes: u64,
    /// Planes copied device to device.
    pub copies: u64,
    /// Planes copied once from an array or a texture into a scratch plane
    /// (which the extractors then read in place or split).
    pub arrays: u64,
}

/// kernels/layout.cu: splitting interleaved chroma, shifting P010 samples.
pub(crate) static LAYOUT_KERNELS: KernelSource = kernel_source!("layout.cu");

/// The layout kernels, loaded once per context.
pub struct Binder {
    counts: BindCounts,
    split_u8: Function,
    split_u16: Function,
    shift_u16: Function,
}

/// Threads per block of the 2D layout kernels.
const BLOCK: (u32, u32) = (32, 8);

impl Binder {
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let module = kernels::load(gpu, &LAYOUT_KERNELS)?;
        Ok(Self {
            counts: BindCounts::default(),
            split_u8: module.function("split_chroma_u8")?,
            split_u16: module.function("split_chroma_u16")?,
            shift_u16: module.function("shift_plane_u16")?,
        })
    }

    /// The planes of one picture for the extractors: `own` are the
    /// context's buffers for the planes some extractor reads (`needs`).
    /// Passes and copies are queued on `stream`, each after
    /// `before_write` (which orders the stream after the buffers' last
    /// readers); planes read in place write nothing and wait for nothing.
    #[allow(clippy::too_many_arguments)]
    pub fn bind(
        &mut self,
        stream: &Stream,
        frame: &DeviceFrame<'_>,
        needs: PlaneMask,
        own: &[Option<DevicePlane>; 3],
        allow_copy: bool,
        before_write: &mut dyn FnMut() -> Result<()>,
        error: &dyn Fn() -> ImportError,
    ) -> Result<[Option<DevicePlane>; 3]> {
        let mut views = [None; 3];
        let source = |i: usize| -> Result<SourcePlane> {
            frame.planes.get(i).copied().ok_or_else(|| {
                error()
                    .plane(i)
                    .reason(format!(
                        "the format has {} planes",
                        frame.format.memory_planes()
                    ))
                    .into()
            })
        };
        for plane in needs.planes() {
            let Some(dst) = own[plane.index()] else {
                continue;
            };
            let semi = frame.format.is_semi_planar();
            if semi && plane != PlaneId::Y {
                continue; // Cb and Cr come from one pass below.
            }
            let src = source(plane.index())?;
            let shift = frame.format.sample_shift();
            views[plane.index()] = Some(if shift > 0 {
                before_write()?;
                self.shift(stream, src, dst, shift)?;
                self.counts.passes += 1;
                dst
            } else if src.ptr % PITCH_ALIGN as u64 == 0 && src.pitch % PITCH_ALIGN == 0 {
                self.counts.in_place += 1;
                DevicePlane {
                    ptr: src.ptr,
                    pitch: src.pitch,
                    ..dst
                }
            } else if allow_copy {
                before_write()?;
                copy(stream, src, dst, frame.format.bytes_per_sample())?;
                self.counts.copies += 1;
                dst
            } else {
                return Err(error()
                    .plane(plane.index())
                    .reason(format!(
                        "address {:#x} and pitch {} must be multiples of {PITCH_ALIGN} bytes to \
                         be read in place; allow a device copy to import it anyway",
                        src.ptr, src.pitch
                    ))
                    .into());
            });
        }
        if frame.format.is_semi_planar() {
            let (u, v) = (
                own[1].filter(|_| needs.contains(PlaneId::Cb)),
                own[2].filter(|_| needs.contains(PlaneId::Cr)),
            );
            if u.is_some() || v.is_some() {
                before_write()?;
                self.split(stream, frame.format, source(1)?, u, v)?;
                self.counts.passes += 1;
                views[1] = u;
                views[2] = v;
            }
        }
        Ok(views)
    }

    /// How bound frames reached the extractors so far.
    pub fn counts(&self) -> BindCounts {
        self.counts
    }

    fn shift(&self, stream: &Stream, src: SourcePlane, dst: DevicePlane, shift: u32) -> Result<()> {
        let (w, h) = (dst.width as u32, dst.height as u32);
        let mut args = KernelArgs::new();
        args.arg(src.ptr)
            .arg(src.pitch as u32)
            .arg(dst.ptr)
            .arg(dst.pitch as u32)
            .arg(w)
            .arg(h)
            .arg(shift);
        // SAFETY: the arguments match shift_plane_u16; both planes cover
        // `h` rows of `w` samples at their pitches.
        unsafe { stream.launch(&self.shift_u16, &grid(w, h), &mut args) }
    }

    fn split(
        &self,
        stream: &Stream,
        format: PixelFormat,
        src: SourcePlane,
        u: Option<DevicePlane>,
        v: Option<DevicePlane>,
    ) -> Result<()> {
        let any = u.or(v).expect("a chroma plane is needed");
        let (w, h) = (any.width as u32, any.height as u32);
        let mut args = KernelArgs::new();
        args.arg(src.ptr)
            .arg(src.pitch as u32)
            .arg(u.map_or(0, |p| p.ptr))
            .arg(v.map_or(0, |p| p.ptr))
            .arg(any.pitch as u32)
            .arg(w)
            .arg(h)
            .arg(format.sample_shift());
        let function = if format.bytes_per_sample() == 1 {
            &self.split_u8
        } else {
            &self.split_u16
        };
        // SAFETY: the arguments match split_chroma_*; the source holds `h`
        // rows of `2 w` samples, Cb and Cr planes (same pitch: the context
        // allocates them alike) `h` rows of `w`.
        unsafe { stream.launch(function, &grid(w, h), &mut args) }
    }
}

fn grid(width: u32, height: u32) -> LaunchDims {
    LaunchDims {
        grid: (width.div_ceil(BLOCK.0), height.div_ceil(BLOCK.1), 1),
        block: (BLOCK.0, BLOCK.1, 1),
        shared_bytes: 0,
    }
}

fn copy(
    stream: &Stream,
    src: SourcePlane,
    dst: DevicePlane,
    bytes_per_sample: usize,
) -> Result<()> {
    let copy = Copy2d {
        src: CopySource::Device(src.ptr),
        src_pitch: src.pitch,
        dst: dst.ptr,
        dst_pitch: dst.pitch,
        width_bytes: dst.width * bytes_per_sample,
        height: dst.height,
    };
    // SAFETY: both planes cover the rows copied.
    unsafe { stream.copy_2d(&copy) }
}
