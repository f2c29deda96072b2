//! `ciede` on the GPU: one launch (kernels/ciede.cu) converts every pixel
//! of both pictures to CIELAB, with the chroma addressing of the CPU's
//! [`ChromaLayout`] (libvmaf's 4:2:2 defect or `fix_422_chroma`), and adds
//! up their CIEDE2000 differences into per-block double partials; one more
//! launch adds the partials in a fixed order. The host turns the sum into
//! the score with the CPU extractor's code.
//!
//! The arithmetic is the CPU's operation by operation, but the C library
//! functions (`pow`, `atan2`, `sin`, `cos`, `exp`) are CUDA's rather than
//! glibc's and the sum's order differs, so values agree within a relative
//! tolerance (tests/gpu/ciede.rs), not bit for bit.

use super::float_common::{sample_suffix, FrameSums};
use super::GpuExtractor;
use super::{single_twin, GpuTwin};
use crate::error::Result;
use crate::feature::ciede::twin::{check_format, feature_name, layout, score_of_sum, ChromaLayout};
use crate::feature::{FeatureSink, Options};
use crate::gpu::args::{KernelArg, KernelArgs};
use crate::gpu::device::{Function, Gpu, Stream};
use crate::gpu::driver::{DevicePtr, LaunchDims};
use crate::gpu::kernels;
use crate::gpu::kernels::{kernel_source, KernelSource};
use crate::gpu::planes::{DevicePlane, FramePlanes, PairPlanes};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

/// kernels/ciede.cu.
pub(crate) static KERNELS: KernelSource = kernel_source!("ciede.cu");

/// The GPU version named by the CPU extractor's registry record.
pub(crate) static TWIN: GpuTwin = single_twin!(GpuCiede, &[&KERNELS], super::EVERY_BACKEND);

/// Threads per block (kernels/ciede.cu).
const THREADS: u32 = 256;

/// `struct Planes` of the kernel: one picture's planes, pitches in bytes.
#[repr(C)]
#[derive(Clone, Copy)]
struct Planes {
    y: DevicePtr,
    u: DevicePtr,
    v: DevicePtr,
    pitch_y: u32,
    pitch_u: u32,
    pitch_v: u32,
}

// SAFETY: a repr(C) copy of the kernel's struct: device addresses and
// pitches.
unsafe impl KernelArg for Planes {}

impl Planes {
    fn of(planes: [DevicePlane; 3]) -> Self {
        let [y, u, v] = planes;
        Self {
            y: y.ptr,
            u: u.ptr,
            v: v.ptr,
            pitch_y: y.pitch as u32,
            pitch_u: u.pitch as u32,
            pitch_v: v.pitch as u32,
        }
    }
}

/// `struct ChromaMap` of the kernel.
#[repr(C)]
#[derive(Clone, Copy)]
struct ChromaMap {
    layout: i32,
    upstream_width: i32,
    upstream_pitch: i32,
    height: i32,
}

// SAFETY: a repr(C) copy of the kernel's struct, plain integers.
unsafe impl KernelArg for ChromaMap {}

impl ChromaMap {
    fn new(layout: ChromaLayout, chroma_height: usize) -> Self {
        let (kind, upstream_width, upstream_pitch) = match layout {
            ChromaLayout::Full => (0, 0, 1),
            ChromaLayout::Quarter => (1, 0, 1),
            ChromaLayout::HalfWidth => (2, 0, 1),
            ChromaLayout::Upstream422 {
                width,
                padded_width,
            } => (3, width as i32, padded_width as i32),
        };
        Self {
            layout: kind,
            upstream_width,
            upstream_pitch,
            height: chroma_height as i32,
        }
    }
}

pub(super) struct GpuCiede {
    format: PictureFormat,
    feature: String,
    map: ChromaMap,
    /// 2^(bit depth - 8), `scale` of lab.rs.
    sample_scale: f64,
    kernel: Function,
    dims: LaunchDims,
    sums: FrameSums,
}

impl GpuCiede {
    pub(super) fn create(options: &Options, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        check_format(format)?;
        let module = kernels::load(gpu, &KERNELS)?;
        let (_, h) = format.plane_size(PlaneId::Y);
        let (_, chroma_height) = format.plane_size(PlaneId::Cb);
        let dims = LaunchDims::per_row(h as u32, THREADS);
        Ok(Self {
            format: *format,
            feature: feature_name(options),
            map: ChromaMap::new(layout(options, format), chroma_height),
            sample_scale: f64::from(1u32 << (format.bit_depth - 8)),
            kernel: module.function(&format!(
                "ciede_sum_{}",
                sample_suffix(format.bytes_per_sample())
            ))?,
            sums: FrameSums::new(gpu, &module, 1, dims.grid.0)?,
            dims,
        })
    }
}

impl GpuExtractor for GpuCiede {
    fn name(&self) -> &'static str {
        "ciede"
    }

    fn planes(&self) -> PairPlanes {
        PairPlanes::both(PlaneMask::ALL)
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        let [ry, ru, rv] = [PlaneId::Y, PlaneId::Cb, PlaneId::Cr].map(|p| frame.reference(p));
        let [dy, du, dv] = [PlaneId::Y, PlaneId::Cb, PlaneId::Cr].map(|p| frame.distorted(p));
        let (reference, distorted) = (Planes::of([ry?, ru?, rv?]), Planes::of([dy?, du?, dv?]));
        let (w, h) = self.format.plane_size(PlaneId::Y);
        let totals = self.sums.begin(stream)?;
        let mut args = KernelArgs::new();
        args.arg(reference)
            .arg(distorted)
            .arg(w as i32)
            .arg(h as i32)
            .arg(self.map)
            .arg(self.sample_scale)
            .arg(self.sums.partials().quantities(0..1));
        // SAFETY: the arguments match ciede_sum_* (the structs are repr(C)
        // copies of the kernel's); the planes are context-owned and the
        // partials ours, alive until the stream ran.
        unsafe { stream.launch(&self.kernel, &self.dims, &mut args)? };
        self.sums.end(index, totals, stream)
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        let Some((index, totals)) = self.sums.complete("ciede")? else {
            return Ok(None);
        };
        sink.emit(index, &self.feature, score_of_sum(totals[0], &self.format));
        Ok(Some(index))
    }
}
