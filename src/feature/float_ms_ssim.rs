//! `float_ms_ssim`: multi-scale SSIM of the luma planes (libvmaf
//! `float_ms_ssim.c`, `ms_ssim.c`): SSIM terms on a five-level pyramid built
//! with the 9/7 biorthogonal low-pass, combined with Wang's exponents.

use super::common::iqa_filter::{Decimator, Kernel2d};
use super::common::iqa_ssim::{ssim, SsimMeans, SsimScratch, WINDOW};
use super::common::picture_copy::{check_bit_depth, picture_copy};
use super::common::ssim_db::{ScoreScale, SSIM_OPTIONS};
use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, Options};
use crate::error::{Error, Result};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: "float_ms_ssim",
    aliases: &[],
    options: &SSIM_OPTIONS,
    provides: &["float_ms_ssim"],
    create: create as CreateFn,
    joint: None,
    gpu: Some(&crate::gpu::feature::float_ms_ssim::TWIN),
};

pub(crate) const SCALES: usize = 5;

/// Per-scale exponents of the luminance, contrast and structure terms.
const ALPHAS: [f32; SCALES] = [0.0, 0.0, 0.0, 0.0, 0.1333];
const BETAS: [f32; SCALES] = [0.0448, 0.2856, 0.3001, 0.2363, 0.1333];
const GAMMAS: [f32; SCALES] = [0.0448, 0.2856, 0.3001, 0.2363, 0.1333];

/// The 9x9 low-pass (`g_lpf`) applied before each halving. libvmaf filters
/// with this rounded 2-D table, not with its 1-D factors.
#[rustfmt::skip]
pub(crate) const LOW_PASS: [f32; 81] = [
     0.000714, -0.000450, -0.002090,  0.007132,  0.016114,  0.007132, -0.002090, -0.000450,  0.000714,
    -0.000450,  0.000283,  0.001316, -0.004490, -0.010146, -0.004490,  0.001316,  0.000283, -0.000450,
    -0.002090,  0.001316,  0.006115, -0.020867, -0.047149, -0.020867,  0.006115,  0.001316, -0.002090,
     0.007132, -0.004490, -0.020867,  0.071207,  0.160885,  0.071207, -0.020867, -0.004490,  0.007132,
     0.016114, -0.010146, -0.047149,  0.160885,  0.363505,  0.160885, -0.047149, -0.010146,  0.016114,
     0.007132, -0.004490, -0.020867,  0.071207,  0.160885,  0.071207, -0.020867, -0.004490,  0.007132,
    -0.002090,  0.001316,  0.006115, -0.020867, -0.047149, -0.020867,  0.006115,  0.001316, -0.002090,
    -0.000450,  0.000283,  0.001316, -0.004490, -0.010146, -0.004490,  0.001316,  0.000283, -0.000450,
     0.000714, -0.000450, -0.002090,  0.007132,  0.016114,  0.007132, -0.002090, -0.000450,  0.000714,
];

pub(crate) const LCS_NAMES: [[&str; SCALES]; 3] = [
    [
        "float_ms_ssim_l_scale0",
        "float_ms_ssim_l_scale1",
        "float_ms_ssim_l_scale2",
        "float_ms_ssim_l_scale3",
        "float_ms_ssim_l_scale4",
    ],
    [
        "float_ms_ssim_c_scale0",
        "float_ms_ssim_c_scale1",
        "float_ms_ssim_c_scale2",
        "float_ms_ssim_c_scale3",
        "float_ms_ssim_c_scale4",
    ],
    [
        "float_ms_ssim_s_scale0",
        "float_ms_ssim_s_scale1",
        "float_ms_ssim_s_scale2",
        "float_ms_ssim_s_scale3",
        "float_ms_ssim_s_scale4",
    ],
];

fn create(options: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    Ok(Box::new(FloatMsSsim {
        outputs: MsSsimOutputs::create(options, format)?,
        pyramid: Pyramid::default(),
        decimator: Decimator::default(),
    }))
}

/// Wang's MS-SSIM from each scale's means: the product of `l^alpha c^beta
/// s^gamma`, each `float` term promoted to double (C's `pow(l,
/// alphas[idx])`). `magnitude` maps each term first: the identity for
/// libvmaf, `fabs` for VMAFx.
pub(crate) fn combine(means: &[SsimMeans; SCALES], magnitude: fn(f64) -> f64) -> f64 {
    let mut score = 1.0f64;
    for (scale, m) in means.iter().enumerate() {
        let pow = |x: f32, e: f32| magnitude(x as f64).powf(e as f64);
        score *= pow(m.l, ALPHAS[scale]) * pow(m.c, BETAS[scale]) * pow(m.s, GAMMAS[scale]);
    }
    score
}

/// Writes the 15 per-scale terms (`enable_lcs`).
pub(crate) fn emit_lcs(index: u32, means: &[SsimMeans; SCALES], sink: &mut FeatureSink) {
    let terms: [fn(&SsimMeans) -> f32; 3] = [|m| m.l, |m| m.c, |m| m.s];
    for (names, term) in LCS_NAMES.iter().zip(terms) {
        for (name, m) in names.iter().zip(means) {
            sink.emit(index, name, term(m) as f64);
        }
    }
}

/// A plane pair at every scale, and the SSIM scratch: what both MS-SSIM
/// extractors share. Only the halving between scales differs.
#[derive(Debug, Default)]
pub(crate) struct Pyramid {
    /// Reference and distorted picture at each scale.
    levels: [[Vec<f32>; 2]; SCALES],
    scratch: SsimScratch,
}

impl Pyramid {
    /// The buffers of scale 0 (reference, distorted) to fill, packed rows.
    pub(crate) fn base(&mut self) -> (&mut Vec<f32>, &mut Vec<f32>) {
        let [r, d] = &mut self.levels[0];
        (r, d)
    }

    /// SSIM means of each scale of the `w x h` pair in [`Pyramid::base`];
    /// `halve(fine, w, h, coarse)` writes the next scale and returns its size.
    pub(crate) fn means(
        &mut self,
        (mut w, mut h): (usize, usize),
        mut halve: impl FnMut(&[f32], usize, usize, &mut Vec<f32>) -> (usize, usize),
    ) -> [SsimMeans; SCALES] {
        let mut means = [SsimMeans::default(); SCALES];
        for (scale, m) in means.iter_mut().enumerate() {
            let (level, coarser) = self.levels[scale..].split_at_mut(1);
            let level = &level[0];
            *m = ssim(&level[0], &level[1], w, h, &mut self.scratch);
            if let Some(next) = coarser.first_mut() {
                let mut size = (w, h);
                for (fine, coarse) in level.iter().zip(next.iter_mut()) {
                    size = halve(fine, w, h, coarse);
                }
                (w, h) = size;
            }
        }
        means
    }
}

/// What the CPU and GPU extractors share: the checks, and the score and
/// outputs written from each scale's SSIM means.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MsSsimOutputs {
    enable_lcs: bool,
    score_scale: ScoreScale,
}

impl MsSsimOutputs {
    pub(crate) fn create(options: &Options, format: &PictureFormat) -> Result<Self> {
        check_bit_depth(INFO.name, format)?;
        // libvmaf's check: every scale, halved with rounding down, must
        // still hold the 11x11 window (so both sides need 176 samples).
        let fits = |len: u32| (len >> (SCALES - 1)) as usize >= WINDOW;
        if !fits(format.width) || !fits(format.height) {
            return Err(Error::Extractor {
                extractor: INFO.name.into(),
                reason: format!(
                    "picture {}x{} is too small: {SCALES} scales need at least {}x{}",
                    format.width,
                    format.height,
                    WINDOW << (SCALES - 1),
                    WINDOW << (SCALES - 1)
                ),
            });
        }
        Ok(Self {
            enable_lcs: options.bool("enable_lcs"),
            score_scale: ScoreScale::from_options(options, format),
        })
    }

    pub(crate) fn emit(&self, index: u32, means: &[SsimMeans; SCALES], sink: &mut FeatureSink) {
        let score = combine(means, |x| x);
        sink.emit(index, "float_ms_ssim", self.score_scale.apply(score));
        if self.enable_lcs {
            emit_lcs(index, means, sink);
        }
    }
}

struct FloatMsSsim {
    outputs: MsSsimOutputs,
    pyramid: Pyramid,
    decimator: Decimator,
}

impl Extractor for FloatMsSsim {
    fn name(&self) -> &'static str {
        INFO.name
    }

    fn planes(&self) -> PlaneMask {
        PlaneMask::LUMA
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        let size = frame.reference.format().plane_size(PlaneId::Y);
        let (r, d) = self.pyramid.base();
        picture_copy(frame.reference, PlaneId::Y, 0, r);
        picture_copy(frame.distorted, PlaneId::Y, 0, d);
        let low_pass = Kernel2d {
            taps: &LOW_PASS,
            size: 9,
        };
        let decimator = &mut self.decimator;
        let means = self.pyramid.means(size, |fine, w, h, coarse| {
            decimator.decimate(fine, w, h, 2, low_pass, coarse)
        });
        self.outputs.emit(frame.index, &means, sink);
        Ok(())
    }
}
