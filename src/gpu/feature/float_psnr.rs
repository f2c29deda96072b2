//! `float_psnr` on the GPU: the sum of squared float differences of the
//! luma in a kernel (kernels/float_psnr.cu), the score from the CPU
//! extractor's code. For 8-, 10- and 12-bit input every square and partial
//! sum is exact, so values are bit-identical to the CPU's; at 16 bits the
//! double sum's order differs (tolerance in docs/gpu-testing.md).

use super::float_common::{sample_suffix, FrameSums};
use super::GpuExtractor;
use super::{single_twin, GpuTwin};
use crate::error::Result;
use crate::feature::common::picture_copy::sample_divisor;
use crate::feature::common::psnr_scale::PsnrScale;
use crate::feature::float_psnr::psnr_of_sum;
use crate::feature::{FeatureSink, Options};
use crate::gpu::args::KernelArgs;
use crate::gpu::device::{Function, Gpu, Stream};
use crate::gpu::driver::LaunchDims;
use crate::gpu::kernels;
use crate::gpu::kernels::{kernel_source, KernelSource};
use crate::gpu::planes::{FramePlanes, PairPlanes};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

/// kernels/float_psnr.cu.
pub(crate) static KERNELS: KernelSource = kernel_source!("float_psnr.cu");

/// The GPU version named by the CPU extractor's registry record.
pub(crate) static TWIN: GpuTwin = single_twin!(GpuFloatPsnr, &[&KERNELS], super::EVERY_BACKEND);

/// Threads per block (kernels/float_psnr.cu).
const THREADS: u32 = 256;

pub(super) struct GpuFloatPsnr {
    scale: PsnrScale,
    /// `1 / divisor` of the float conversion.
    sample_scale: f32,
    samples: usize,
    sse: Function,
    dims: LaunchDims,
    sums: FrameSums,
}

impl GpuFloatPsnr {
    pub(super) fn create(_: &Options, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        let scale = PsnrScale::for_format("float_psnr", format)?;
        let module = kernels::load(gpu, &KERNELS)?;
        let (w, h) = format.plane_size(PlaneId::Y);
        let dims = LaunchDims::per_row(h as u32, THREADS);
        Ok(Self {
            scale,
            sample_scale: 1.0 / sample_divisor(format.bit_depth).unwrap_or(1.0),
            samples: w * h,
            sse: module.function(&format!(
                "float_psnr_sse_{}",
                sample_suffix(format.bytes_per_sample())
            ))?,
            sums: FrameSums::new(gpu, &module, 1, dims.grid.0)?,
            dims,
        })
    }
}

impl GpuExtractor for GpuFloatPsnr {
    fn name(&self) -> &'static str {
        "float_psnr"
    }

    fn planes(&self) -> PairPlanes {
        PairPlanes::both(PlaneMask::LUMA)
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        let (r, d) = (frame.reference(PlaneId::Y)?, frame.distorted(PlaneId::Y)?);
        let totals = self.sums.begin(stream)?;
        let mut args = KernelArgs::new();
        args.arg(r.ptr)
            .arg(r.pitch as u32)
            .arg(d.ptr)
            .arg(d.pitch as u32)
            .arg(r.width as i32)
            .arg(r.height as i32)
            .arg(self.sample_scale)
            .arg(self.sums.partials().quantities(0..1));
        // SAFETY: the arguments match float_psnr_sse_*; the planes are
        // context-owned and the partials ours, alive until the stream ran.
        unsafe { stream.launch(&self.sse, &self.dims, &mut args)? };
        self.sums.end(index, totals, stream)
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        let Some((index, totals)) = self.sums.complete("float_psnr")? else {
            return Ok(None);
        };
        let psnr = psnr_of_sum(totals[0], self.samples, self.scale);
        sink.emit(index, "float_psnr", psnr);
        Ok(Some(index))
    }
}
