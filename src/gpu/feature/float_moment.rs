//! `float_moment` on the GPU: the sums of the luma samples and of their
//! squares, both pictures, in a kernel (kernels/float_moment.cu), the
//! moments from the CPU extractor's code. For 8-, 10- and 12-bit input
//! every square and partial sum is exact, so values are bit-identical to
//! the CPU's; at 16 bits the double sums' order differs (tolerance in
//! docs/gpu-testing.md).

use super::float_common::{sample_suffix, FrameSums};
use super::GpuExtractor;
use super::{single_twin, GpuTwin};
use crate::error::Result;
use crate::feature::common::picture_copy::{check_bit_depth, sample_divisor};
use crate::feature::float_moment::moments_of_sums;
use crate::feature::{FeatureSink, Options};
use crate::gpu::args::KernelArgs;
use crate::gpu::device::{Function, Gpu, Stream};
use crate::gpu::driver::LaunchDims;
use crate::gpu::kernels;
use crate::gpu::kernels::{kernel_source, KernelSource};
use crate::gpu::planes::{FramePlanes, PairPlanes};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

/// kernels/float_moment.cu.
pub(crate) static KERNELS: KernelSource = kernel_source!("float_moment.cu");

/// The GPU version named by the CPU extractor's registry record.
pub(crate) static TWIN: GpuTwin = single_twin!(GpuFloatMoment, &[&KERNELS], super::EVERY_BACKEND);

/// Threads per block (kernels/float_moment.cu).
const THREADS: u32 = 256;

/// The kernel's sums: reference samples, their squares, distorted samples,
/// their squares.
const SUMS: u32 = 4;

pub(super) struct GpuFloatMoment {
    /// `1 / divisor` of the float conversion.
    sample_scale: f32,
    samples: usize,
    kernel: Function,
    dims: LaunchDims,
    sums: FrameSums,
}

impl GpuFloatMoment {
    pub(super) fn create(_: &Options, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        check_bit_depth("float_moment", format)?;
        let module = kernels::load(gpu, &KERNELS)?;
        let (w, h) = format.plane_size(PlaneId::Y);
        let dims = LaunchDims::per_row(h as u32, THREADS);
        Ok(Self {
            sample_scale: 1.0 / sample_divisor(format.bit_depth).unwrap_or(1.0),
            samples: w * h,
            kernel: module.function(&format!(
                "float_moment_sums_{}",
                sample_suffix(format.bytes_per_sample())
            ))?,
            sums: FrameSums::new(gpu, &module, SUMS, dims.grid.0)?,
            dims,
        })
    }
}

impl GpuExtractor for GpuFloatMoment {
    fn name(&self) -> &'static str {
        "float_moment"
    }

    fn planes(&self) -> PairPlanes {
        PairPlanes::both(PlaneMask::LUMA)
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        let (r, d) = (frame.reference(PlaneId::Y)?, frame.distorted(PlaneId::Y)?);
        let totals = self.sums.begin(stream)?;
        let partials = self.sums.partials();
        let mut args = KernelArgs::new();
        args.arg(r.ptr)
            .arg(r.pitch as u32)
            .arg(d.ptr)
            .arg(d.pitch as u32)
            .arg(r.width as i32)
            .arg(r.height as i32)
            .arg(self.sample_scale)
            .arg(partials.quantities(0..SUMS))
            .arg(partials.stride());
        // SAFETY: the arguments match float_moment_sums_*; the planes are
        // context-owned and the partials ours, alive until the stream ran.
        unsafe { stream.launch(&self.kernel, &self.dims, &mut args)? };
        self.sums.end(index, totals, stream)
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        let Some((index, s)) = self.sums.complete("float_moment")? else {
            return Ok(None);
        };
        let (ref1, ref2) = moments_of_sums(s[0], s[1], self.samples);
        let (dis1, dis2) = moments_of_sums(s[2], s[3], self.samples);
        sink.emit(index, "float_moment_ref1st", ref1);
        sink.emit(index, "float_moment_dis1st", dis1);
        sink.emit(index, "float_moment_ref2nd", ref2);
        sink.emit(index, "float_moment_dis2nd", dis2);
        Ok(Some(index))
    }
}
