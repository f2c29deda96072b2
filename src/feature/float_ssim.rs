//! `float_ssim`: SSIM of the luma planes (libvmaf `float_ssim.c`, `ssim.c`,
//! IQA's `_iqa_ssim`), with the luminance, contrast and structure means on
//! request. Pictures whose smaller side is 384 or more are first averaged
//! down by round(min(w, h) / 256), as in the reference MATLAB SSIM, unless
//! the `scale` option sets the factor.

use super::common::iqa_filter::decimated_len;
use super::common::iqa_filter::{Decimator, Kernel2d};
use super::common::iqa_ssim::{ssim, SsimMeans, SsimScratch, WINDOW};
use super::common::picture_copy::{check_bit_depth, picture_copy};
use super::common::ssim_db::{ScoreScale, CLIP_DB, ENABLE_DB, ENABLE_LCS};
use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, OptionSpec, Options};
use crate::error::{Error, Result};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: "float_ssim",
    aliases: &[],
    options: &OPTIONS,
    provides: &["float_ssim"],
    create: create as CreateFn,
    joint: None,
    gpu: Some(&crate::gpu::feature::float_ssim::TWIN),
};

/// The shared SSIM options and libvmaf 3.2's `scale`: the pre-decimation
/// factor (0: round(min(w, h) / 256), 1: none, 2 to 10: that factor).
static OPTIONS: [OptionSpec; 4] = [
    ENABLE_LCS,
    ENABLE_DB,
    CLIP_DB,
    OptionSpec::int("scale", 0, 0, 10),
];

fn create(options: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    let outputs = FloatSsimOutputs::create(options, format)?;
    let factor = outputs.factor;
    Ok(Box::new(FloatSsim {
        outputs,
        box_filter: box_filter(factor),
        buffers: Default::default(),
        decimator: Decimator::default(),
        scratch: SsimScratch::default(),
    }))
}

/// What the CPU and GPU extractors share: the checks, the pre-decimation
/// factor and the outputs written from the SSIM means.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatSsimOutputs {
    enable_lcs: bool,
    score_scale: ScoreScale,
    factor: usize,
}

impl FloatSsimOutputs {
    pub(crate) fn create(options: &Options, format: &PictureFormat) -> Result<Self> {
        check_bit_depth(INFO.name, format)?;
        let (w, h) = (format.width as usize, format.height as usize);
        if w < WINDOW || h < WINDOW {
            return Err(Error::Extractor {
                extractor: INFO.name.into(),
                reason: format!("picture {w}x{h} is smaller than the {WINDOW}x{WINDOW} window"),
            });
        }
        let factor = match options.int("scale") {
            0 => downscale_factor(w, h),
            n => n as usize,
        };
        let (sw, sh) = (decimated_len(w, factor), decimated_len(h, factor));
        if factor > 1 && (sw < WINDOW || sh < WINDOW) {
            return Err(Error::BadOption {
                owner: INFO.name.into(),
                option: "scale".into(),
                reason: format!(
                    "{w}x{h} decimated by {factor} is {sw}x{sh}, smaller than the \
                     {WINDOW}x{WINDOW} window"
                ),
            });
        }
        Ok(Self {
            enable_lcs: options.bool("enable_lcs"),
            score_scale: ScoreScale::from_options(options, format),
            factor,
        })
    }

    /// The box pre-filter's size and step (1: none).
    pub(crate) fn factor(&self) -> usize {
        self.factor
    }

    pub(crate) fn emit(&self, index: u32, means: &SsimMeans, sink: &mut FeatureSink) {
        sink.emit(
            index,
            "float_ssim",
            self.score_scale.apply(means.ssim as f64),
        );
        if self.enable_lcs {
            sink.emit(index, "float_ssim_l", means.l as f64);
            sink.emit(index, "float_ssim_c", means.c as f64);
            sink.emit(index, "float_ssim_s", means.s as f64);
        }
    }
}

/// `factor x factor` box of `1/factor^2`, the pre-decimation low-pass.
pub(crate) fn box_filter(factor: usize) -> Vec<f32> {
    vec![1.0 / (factor * factor) as f32; factor * factor]
}

/// `max(1, _round(min(w, h) / 256.0f))`, IQA's `_round` rounding halves up.
fn downscale_factor(w: usize, h: usize) -> usize {
    let a = w.min(h) as f32 / 256.0;
    let whole = a as usize;
    let rounded = if a - whole as f32 >= 0.5 {
        whole + 1
    } else {
        whole
    };
    rounded.max(1)
}

struct FloatSsim {
    outputs: FloatSsimOutputs,
    /// `factor x factor` box of `1/factor^2`, the pre-decimation low-pass.
    box_filter: Vec<f32>,
    /// Reference, distorted, and their decimated versions.
    buffers: [Vec<f32>; 4],
    decimator: Decimator,
    scratch: SsimScratch,
}

impl Extractor for FloatSsim {
    fn name(&self) -> &'static str {
        INFO.name
    }

    fn planes(&self) -> PlaneMask {
        PlaneMask::LUMA
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        let (mut w, mut h) = frame.reference.format().plane_size(PlaneId::Y);
        let [reference, distorted, small_ref, small_dis] = &mut self.buffers;
        picture_copy(frame.reference, PlaneId::Y, 0, reference);
        picture_copy(frame.distorted, PlaneId::Y, 0, distorted);
        let factor = self.outputs.factor;
        let (r, d) = if factor > 1 {
            let k = Kernel2d {
                taps: &self.box_filter,
                size: factor,
            };
            self.decimator
                .decimate(reference, w, h, factor, k, small_ref);
            (w, h) = self
                .decimator
                .decimate(distorted, w, h, factor, k, small_dis);
            (&small_ref[..], &small_dis[..])
        } else {
            (&reference[..], &distorted[..])
        };
        let means = ssim(r, d, w, h, &mut self.scratch);
        self.outputs.emit(frame.index, &means, sink);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::downscale_factor;

    #[test]
    fn downscale_factor_rounds_halves_up() {
        assert_eq!(downscale_factor(321, 179), 1);
        assert_eq!(downscale_factor(1280, 720), 3);
        assert_eq!(downscale_factor(1920, 1080), 4);
        assert_eq!(downscale_factor(640, 384), 2);
        assert_eq!(downscale_factor(640, 383), 1);
    }
}
