//! `float_ms_ssim` on the GPU: the five-level pyramid is built on the
//! device from the shared luma planes (`float_ssim_decimate_*` with the
//! 9x9 low-pass, scale 0 converting the samples as it reads them), each
//! level's SSIM terms are summed into per-block double partials
//! (`float_ssim_stats_*`, kernels/float_ssim.cu), and one reduction adds
//! them up. The host combines the scales with the CPU extractor's code.
//!
//! Per-position values and pyramid samples are the CPU's bit for bit; the
//! sums differ in double rounding only (tolerance in docs/gpu-testing.md).

use super::float_common::FrameSums;
use super::float_ssim::{means_of, DecimateFilter, FloatPair, Pair, SsimKernels, SUMS};
use super::{single_twin, GpuTwin};
use super::{spread_up_to_1440p, GpuExtractor};
use crate::error::Result;
use crate::feature::common::iqa_filter::decimated_len;
use crate::feature::float_ms_ssim::{MsSsimOutputs, LOW_PASS, SCALES};
use crate::feature::{FeatureSink, Options};
use crate::gpu::device::{Gpu, Stream};
use crate::gpu::kernels;
use crate::gpu::planes::{FramePlanes, PairPlanes};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

/// The GPU version named by the CPU extractor's registry record.
pub(crate) static TWIN: GpuTwin = single_twin!(
    GpuFloatMsSsim,
    &[&super::float_ssim::KERNELS],
    super::EVERY_BACKEND
);

pub(super) struct GpuFloatMsSsim {
    outputs: MsSsimOutputs,
    kernels: SsimKernels,
    low_pass: DecimateFilter,
    /// Scales 1 to 4.
    pyramid: Vec<FloatPair>,
    /// Window positions per scale.
    positions: [usize; SCALES],
    /// SUMS quantities per scale.
    sums: FrameSums,
}

impl GpuFloatMsSsim {
    pub(super) fn create(options: &Options, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        let outputs = MsSsimOutputs::create(options, format)?;
        let module = kernels::load(gpu, &super::float_ssim::KERNELS)?;
        let mut sizes = [format.plane_size(PlaneId::Y); SCALES];
        for s in 1..SCALES {
            let (w, h) = sizes[s - 1];
            sizes[s] = (decimated_len(w, 2), decimated_len(h, 2));
        }
        let pyramid = sizes[1..]
            .iter()
            .map(|&(w, h)| FloatPair::new(gpu, w, h))
            .collect::<Result<_>>()?;
        // Scale 0 has the most blocks: every scale's partials fit its slots.
        let (w0, h0) = sizes[0];
        Ok(Self {
            outputs,
            kernels: SsimKernels::new(&module, format)?,
            low_pass: DecimateFilter::new(&LOW_PASS, 9),
            pyramid,
            positions: sizes.map(|(w, h)| SsimKernels::positions(w, h)),
            sums: FrameSums::new(
                gpu,
                &module,
                SUMS * SCALES as u32,
                SsimKernels::stats_blocks(w0, h0),
            )?,
        })
    }
}

impl GpuExtractor for GpuFloatMsSsim {
    fn name(&self) -> &'static str {
        "float_ms_ssim"
    }

    fn instances(&self, format: &PictureFormat) -> usize {
        spread_up_to_1440p(format)
    }

    fn planes(&self) -> PairPlanes {
        PairPlanes::both(PlaneMask::LUMA)
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        let mut level = Pair::shared(&frame.reference(PlaneId::Y)?, &frame.distorted(PlaneId::Y)?);
        let totals = self.sums.begin(stream)?;
        for scale in 0..SCALES {
            self.kernels
                .stats(level, self.sums.partials(), SUMS * scale as u32, stream)?;
            if let Some(next) = self.pyramid.get(scale) {
                self.kernels
                    .decimate(level, 2, &self.low_pass, next, stream)?;
                level = next.pair();
            }
        }
        self.sums.end(index, totals, stream)
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        let Some((index, totals)) = self.sums.complete("float_ms_ssim")? else {
            return Ok(None);
        };
        let means =
            std::array::from_fn(|s| means_of(&totals, SUMS as usize * s, self.positions[s]));
        self.outputs.emit(index, &means, sink);
        Ok(Some(index))
    }
}
