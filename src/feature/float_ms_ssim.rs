//! `float_ms_ssim`: multi-scale SSIM of the luma planes (libvmaf
//! `float_ms_ssim.c`, `ms_ssim.c`): SSIM terms on a five-level pyramid built
//! with the 9/7 biorthogonal low-pass, combined with Wang's exponents.

use super::common::iqa_filter::{decimated_len, Decimator, Kernel2d};
use super::common::iqa_ssim::{ssim, SsimMeans, SsimScratch, WINDOW};
use super::common::picture_copy::{check_bit_depth, picture_copy};
use super::common::ssim_db::{ScoreScale, SSIM_OPTIONS};
use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, Options};
use crate::error::{Error, Result};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: "float_ms_ssim",
    options: &SSIM_OPTIONS,
    provides: &["float_ms_ssim"],
    create: create as CreateFn,
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

const LCS_NAMES: [[&str; SCALES]; 3] = [
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
        pyramid: Default::default(),
        decimator: Decimator::default(),
        scratch: SsimScratch::default(),
    }))
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
        let mut score = 1.0f64;
        for (scale, m) in means.iter().enumerate() {
            // Exponents apply to the `float` terms promoted to double (C's
            // `pow(l, alphas[idx])`).
            let pow = |x: f32, e: f32| (x as f64).powf(e as f64);
            score *= pow(m.l, ALPHAS[scale]) * pow(m.c, BETAS[scale]) * pow(m.s, GAMMAS[scale]);
        }
        sink.emit(index, "float_ms_ssim", self.score_scale.apply(score));
        if self.enable_lcs {
            let terms: [fn(&SsimMeans) -> f32; 3] = [|m| m.l, |m| m.c, |m| m.s];
            for (names, term) in LCS_NAMES.iter().zip(terms) {
                for (name, m) in names.iter().zip(means) {
                    sink.emit(index, name, term(m) as f64);
                }
            }
        }
    }
}

struct FloatMsSsim {
    outputs: MsSsimOutputs,
    /// Reference and distorted picture at each scale.
    pyramid: [[Vec<f32>; 2]; SCALES],
    decimator: Decimator,
    scratch: SsimScratch,
}

impl Extractor for FloatMsSsim {
    fn name(&self) -> &'static str {
        INFO.name
    }

    fn planes(&self) -> PlaneMask {
        PlaneMask::LUMA
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        let (mut w, mut h) = frame.reference.format().plane_size(PlaneId::Y);
        picture_copy(frame.reference, PlaneId::Y, 0, &mut self.pyramid[0][0]);
        picture_copy(frame.distorted, PlaneId::Y, 0, &mut self.pyramid[0][1]);

        let low_pass = Kernel2d {
            taps: &LOW_PASS,
            size: 9,
        };
        let mut means = [SsimMeans::default(); SCALES];
        for (scale, m) in means.iter_mut().enumerate() {
            let (level, coarser) = self.pyramid[scale..].split_at_mut(1);
            let level = &level[0];
            *m = ssim(&level[0], &level[1], w, h, &mut self.scratch);
            if let Some(next) = coarser.first_mut() {
                for (fine, coarse) in level.iter().zip(next.iter_mut()) {
                    self.decimator.decimate(fine, w, h, 2, low_pass, coarse);
                }
                (w, h) = (decimated_len(w, 2), decimated_len(h, 2));
            }
        }
        self.outputs.emit(frame.index, &means, sink);
        Ok(())
    }
}
