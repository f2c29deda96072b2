//! `float_ms_ssim` on the GPU: the five-level pyramid is built on the
//! device from the shared luma planes (`float_ssim_decimate_*` with the
//! 9x9 low-pass, scale 0 converting the samples as it reads them), each
//! level's SSIM terms are summed into per-block double partials
//! (`float_ssim_stats_*`, kernels/float_ssim.cu), and one reduction adds
//! them up. The host combines the scales with the CPU extractor's code.
//!
//! [`MsSsimPyramid`] (the levels, the stats of each, their means) is
//! shared with `integer_ms_ssim`, whose halving differs.
//!
//! Per-position values and pyramid samples are the CPU's bit for bit; the
//! sums differ in double rounding only (tolerance in docs/gpu-testing.md).

use super::float_common::{FrameSums, PartialSums};
use super::float_ssim::{means_of, DecimateFilter, FloatPair, Pair, SsimKernels, SUMS};
use super::{single_twin, GpuTwin};
use super::{spread_up_to_1440p, GpuExtractor};
use crate::error::Result;
use crate::feature::common::iqa_filter::decimated_len;
use crate::feature::common::iqa_ssim::SsimMeans;
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

/// One plane's MS-SSIM on the device, whatever the halving: scales 1 to
/// 4 (each `ceil(len / 2)` of the one before, as both MS-SSIMs halve),
/// the SSIM sums of every scale and their means.
pub(super) struct MsSsimPyramid {
    /// Scale 0's size (the shared planes').
    base: (usize, usize),
    /// Scales 1 to 4.
    levels: Vec<FloatPair>,
    /// Window positions per scale.
    positions: [usize; SCALES],
}

impl MsSsimPyramid {
    /// The sums of one plane: SUMS per scale.
    pub(super) const QUANTITIES: u32 = SUMS * SCALES as u32;

    /// The levels of a `width x height` plane.
    pub(super) fn new(gpu: &Gpu, (width, height): (usize, usize)) -> Result<Self> {
        let mut sizes = [(width, height); SCALES];
        for s in 1..SCALES {
            let (w, h) = sizes[s - 1];
            sizes[s] = (decimated_len(w, 2), decimated_len(h, 2));
        }
        Ok(Self {
            base: sizes[0],
            levels: sizes[1..]
                .iter()
                .map(|&(w, h)| FloatPair::new(gpu, w, h))
                .collect::<Result<_>>()?,
            positions: sizes.map(|(w, h)| SsimKernels::positions(w, h)),
        })
    }

    /// Stats blocks of scale 0, the most of any scale: every scale's
    /// partials fit that many slots.
    pub(super) fn stats_blocks(&self) -> u32 {
        SsimKernels::stats_blocks(self.base.0, self.base.1)
    }

    /// Queues the SSIM sums of every scale of `base` (the plane, at this
    /// pyramid's size) into the QUANTITIES of `sums` from `first` on,
    /// scale after scale; `halve(fine, coarse)` queues the next level.
    pub(super) fn enqueue(
        &self,
        kernels: &SsimKernels,
        base: Pair,
        sums: &PartialSums,
        first: u32,
        stream: &Stream,
        mut halve: impl FnMut(Pair, &FloatPair) -> Result<()>,
    ) -> Result<()> {
        debug_assert_eq!((base.width, base.height), self.base);
        let mut level = base;
        for scale in 0..SCALES {
            kernels.stats(level, sums, first + SUMS * scale as u32, stream)?;
            if let Some(next) = self.levels.get(scale) {
                halve(level, next)?;
                level = next.pair();
            }
        }
        Ok(())
    }

    /// Each scale's means from the frame's totals, this plane's from
    /// `first` on.
    pub(super) fn means(&self, totals: &[f64], first: usize) -> [SsimMeans; SCALES] {
        std::array::from_fn(|s| means_of(totals, first + SUMS as usize * s, self.positions[s]))
    }
}

pub(super) struct GpuFloatMsSsim {
    outputs: MsSsimOutputs,
    kernels: SsimKernels,
    low_pass: DecimateFilter,
    pyramid: MsSsimPyramid,
    sums: FrameSums,
}

impl GpuFloatMsSsim {
    pub(super) fn create(options: &Options, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        let outputs = MsSsimOutputs::create(options, format)?;
        let module = kernels::load(gpu, &super::float_ssim::KERNELS)?;
        let pyramid = MsSsimPyramid::new(gpu, format.plane_size(PlaneId::Y))?;
        Ok(Self {
            outputs,
            kernels: SsimKernels::new(&module, format)?,
            low_pass: DecimateFilter::new(&LOW_PASS, 9),
            sums: FrameSums::new(
                gpu,
                &module,
                MsSsimPyramid::QUANTITIES,
                pyramid.stats_blocks(),
            )?,
            pyramid,
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
        let base = Pair::shared(&frame.reference(PlaneId::Y)?, &frame.distorted(PlaneId::Y)?);
        let totals = self.sums.begin(stream)?;
        let (kernels, low_pass) = (&self.kernels, &self.low_pass);
        self.pyramid.enqueue(
            kernels,
            base,
            self.sums.partials(),
            0,
            stream,
            |fine, coarse| kernels.decimate(fine, 2, low_pass, coarse, stream),
        )?;
        self.sums.end(index, totals, stream)
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        let Some((index, totals)) = self.sums.complete("float_ms_ssim")? else {
            return Ok(None);
        };
        self.outputs
            .emit(index, &self.pyramid.means(&totals, 0), sink);
        Ok(Some(index))
    }
}
