//! `psnr` on the GPU: per-plane sums of squared errors in a kernel
//! (kernels/psnr.cu), everything else shared with the CPU extractor, so
//! per-frame values are bit-identical.

use super::readback::Readback;
use super::GpuExtractor;
use super::{single_twin, GpuTwin};
use crate::error::Result;
use crate::feature::psnr::Psnr;
use crate::feature::{FeatureSink, Options};
use crate::gpu::args::KernelArgs;
use crate::gpu::device::{Function, Gpu, Stream};
use crate::gpu::driver::LaunchDims;
use crate::gpu::kernels;
use crate::gpu::kernels::{kernel_source, KernelSource};
use crate::gpu::planes::{FramePlanes, PairPlanes};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

/// kernels/psnr.cu.
pub(crate) static KERNELS: KernelSource = kernel_source!("psnr.cu");

/// The GPU version named by the CPU extractor's registry record.
pub(crate) static TWIN: GpuTwin = single_twin!(GpuPsnr, &[&KERNELS], super::EVERY_BACKEND);

/// Threads per block: the kernel's shared scratch has this many entries.
const THREADS: u32 = 256;

pub(super) struct GpuPsnr {
    scorer: Psnr,
    planes: Vec<(PlaneId, usize, usize)>,
    sse: Function,
    results: Readback,
}

impl GpuPsnr {
    pub(super) fn create(options: &Options, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        let scorer = Psnr::create(options, format)?;
        let planes: Vec<_> = scorer.scored_planes().collect();
        let module = kernels::load(gpu, &KERNELS)?;
        let sse = module.function(if format.bytes_per_sample() == 1 {
            "psnr_sse_u8"
        } else {
            "psnr_sse_u16"
        })?;
        Ok(Self {
            results: Readback::new(gpu, planes.len())?,
            scorer,
            planes,
            sse,
        })
    }
}

impl GpuExtractor for GpuPsnr {
    fn name(&self) -> &'static str {
        "psnr"
    }

    fn planes(&self) -> PairPlanes {
        PairPlanes::both(if self.planes.len() == 3 {
            PlaneMask::ALL
        } else {
            PlaneMask::LUMA
        })
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        let totals = self.results.begin(stream)?;
        for (i, &(id, width, height)) in self.planes.iter().enumerate() {
            let (r, d) = (frame.reference(id)?, frame.distorted(id)?);
            if width == 0 || height == 0 {
                continue;
            }
            let (w, h) = (width as u32, height as u32);
            let mut args = KernelArgs::new();
            args.arg(r.ptr)
                .arg(r.pitch as u32)
                .arg(d.ptr)
                .arg(d.pitch as u32)
                .arg(w)
                .arg(h)
                .arg(totals.slice(i..=i));
            let dims = LaunchDims::per_row(h, THREADS);
            // SAFETY: the arguments match psnr_sse_*; the planes and the
            // accumulators stay alive (context-owned) until the stream ran.
            unsafe { stream.launch(&self.sse, &dims, &mut args)? };
        }
        self.results.end(index, stream)
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        let Some((index, sses)) = self.results.complete_launched("psnr")? else {
            return Ok(None);
        };
        self.scorer.emit_frame(index, &sses, sink);
        Ok(Some(index))
    }

    fn flush(&mut self, sink: &mut FeatureSink) -> Result<()> {
        use crate::feature::Extractor;
        self.scorer.flush(sink)
    }
}
