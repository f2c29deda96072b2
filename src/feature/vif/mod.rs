//! libvmaf's integer VIF (`vif`): visual information fidelity at four
//! scales, in libvmaf's fixed-point arithmetic, bit for bit.
//!
//! Scale 0 is the luma plane; each further scale is the previous one
//! low-passed and decimated 2:1 (odd sizes round down). Every scale yields a
//! numerator and a denominator (single precision, as libvmaf keeps them);
//! the per-scale score is their single-precision ratio.

mod decimate;
mod decimate_u8_avx2;
mod decimate_wide_avx512;
mod filter;
mod log2;
mod moments;
mod moments_u16_avx2;
mod moments_u16_vnni;
mod moments_u8_avx2;
mod moments_wide_avx512;
mod stats;
mod stats_avx2;
mod stats_avx512;
mod tables;

use super::common::format_check::check_frame_format;
use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, OptionSpec, Options};
use crate::error::{Error, Result};
use crate::picture::{PictureFormat, PlaneId, PlaneMask, PlaneRef, PlaneSamples};
use decimate::Decimator;
use filter::VifSample;
use moments::MomentFilter;

// Shared with the GPU extractor (src/gpu/feature/vif.rs).
pub(crate) use log2::Log2Table;
pub(crate) use stats::ScaleSums;

const NAME: &str = "vif";
pub(crate) const SCALES: usize = 4;

/// libvmaf's `DEFAULT_VIF_ENHN_GAIN_LIMIT`: no limit in practice.
const DEFAULT_GAIN_LIMIT: f64 = 100.0;

static OPTIONS: [OptionSpec; 3] = [
    OptionSpec::bool("debug", false),
    OptionSpec::double(
        "vif_enhn_gain_limit",
        DEFAULT_GAIN_LIMIT,
        1.0,
        DEFAULT_GAIN_LIMIT,
    )
    .param("egl"),
    OptionSpec::bool("vif_skip_scale0", false).param("ssclz"),
];

/// Outputs, in libvmaf's emission order: the four scores always, the rest
/// with `debug`.
const SCORE_NAMES: [&str; SCALES] = [
    "integer_vif_scale0",
    "integer_vif_scale1",
    "integer_vif_scale2",
    "integer_vif_scale3",
];
const DEBUG_NAMES: [&str; 11] = [
    "integer_vif",
    "integer_vif_num",
    "integer_vif_den",
    "integer_vif_num_scale0",
    "integer_vif_den_scale0",
    "integer_vif_num_scale1",
    "integer_vif_den_scale1",
    "integer_vif_num_scale2",
    "integer_vif_den_scale2",
    "integer_vif_num_scale3",
    "integer_vif_den_scale3",
];

const PROVIDES: [&str; 15] = [
    SCORE_NAMES[0],
    SCORE_NAMES[1],
    SCORE_NAMES[2],
    SCORE_NAMES[3],
    DEBUG_NAMES[0],
    DEBUG_NAMES[1],
    DEBUG_NAMES[2],
    DEBUG_NAMES[3],
    DEBUG_NAMES[4],
    DEBUG_NAMES[5],
    DEBUG_NAMES[6],
    DEBUG_NAMES[7],
    DEBUG_NAMES[8],
    DEBUG_NAMES[9],
    DEBUG_NAMES[10],
];

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: NAME,
    aliases: &[],
    options: &OPTIONS,
    provides: &PROVIDES,
    create: create as CreateFn,
    joint: None,
    gpu: Some(&crate::gpu::feature::vif::TWIN),
};

/// The smallest width and height whose four scales all stay wider than
/// their filters' half widths (8, 4, 2, 1), so edge mirroring stays inside
/// the picture.
const MIN_SIZE: u32 = 16;

fn create(options: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    let outputs = VifOutputs::create(options, format)?;
    Ok(Box::new(Vif::new(outputs, format)))
}

/// One decimated scale of both pictures, 16-bit samples, tightly packed.
#[derive(Debug)]
struct ScalePlanes {
    width: usize,
    height: usize,
    reference: Vec<u16>,
    distorted: Vec<u16>,
}

impl ScalePlanes {
    fn new(width: usize, height: usize) -> Self {
        Self {
            width,
            height,
            reference: vec![0; width * height],
            distorted: vec![0; width * height],
        }
    }

    fn planes(&self) -> (PlaneRef<'_, u16>, PlaneRef<'_, u16>) {
        let plane = |data| PlaneRef {
            data,
            width: self.width,
            height: self.height,
            stride: self.width,
        };
        (plane(&self.reference[..]), plane(&self.distorted[..]))
    }
}

/// Numerator and denominator of each scale.
#[derive(Debug, Clone, Copy, Default)]
struct VifScores {
    scales: [(f32, f32); SCALES],
}

/// The resolved options of `vif` and the emission of its outputs, shared
/// with the GPU extractor.
pub(crate) struct VifOutputs {
    debug: bool,
    gain_limit: f64,
    /// `vif_skip_scale0`: scale 0 is not scored (written as 0, its debug
    /// sums as 0 and -1) and left out of the totals.
    skip_scale0: bool,
    score_names: Vec<String>,
    debug_names: Vec<String>,
}

impl VifOutputs {
    /// Fails for pictures too small for the four scales' filters.
    pub(crate) fn create(options: &Options, format: &PictureFormat) -> Result<Self> {
        if format.width < MIN_SIZE || format.height < MIN_SIZE {
            return Err(Error::Extractor {
                extractor: NAME.into(),
                reason: format!(
                    "picture {}x{} is too small (needs at least {MIN_SIZE}x{MIN_SIZE})",
                    format.width, format.height
                ),
            });
        }
        let suffix = options.name_suffix();
        let named = |names: &[&str]| names.iter().map(|n| format!("{n}{suffix}")).collect();
        Ok(Self {
            debug: options.bool("debug"),
            gain_limit: options.double("vif_enhn_gain_limit"),
            skip_scale0: options.bool("vif_skip_scale0"),
            score_names: named(&SCORE_NAMES),
            debug_names: named(&DEBUG_NAMES),
        })
    }

    /// The cap on the gain (`vif_enhn_gain_limit`).
    pub(crate) fn gain_limit(&self) -> f64 {
        self.gain_limit
    }

    /// Emits frame `index`'s values from the sums of every scale.
    pub(crate) fn emit_sums(&self, index: u32, sums: &[ScaleSums; SCALES], sink: &mut FeatureSink) {
        let scores = VifScores {
            scales: sums.map(|s| s.finish()),
        };
        self.emit(index, &scores, sink);
    }

    fn emit(&self, index: u32, scores: &VifScores, sink: &mut FeatureSink) {
        let mut scales = scores.scales;
        if self.skip_scale0 {
            // The debug sums libvmaf writes for the skipped scale (the GPU
            // computes scale 0 anyway; its sums are dropped here).
            scales[0] = (0.0, -1.0);
        }
        for (s, (name, &(num, den))) in self.score_names.iter().zip(&scales).enumerate() {
            let score = if s == 0 && self.skip_scale0 {
                0.0
            } else {
                num / den
            };
            sink.emit(index, name, f64::from(score));
        }
        if !self.debug {
            return;
        }
        let [(n0, d0), (n1, d1), (n2, d2), (n3, d3)] = scales;
        let (num, den) = if self.skip_scale0 {
            (
                f64::from(n1) + f64::from(n2) + f64::from(n3),
                f64::from(d1) + f64::from(d2) + f64::from(d3),
            )
        } else {
            (
                f64::from(n0) + f64::from(n1) + f64::from(n2) + f64::from(n3),
                f64::from(d0) + f64::from(d1) + f64::from(d2) + f64::from(d3),
            )
        };
        let score = if den == 0.0 { 1.0 } else { num / den };
        let values = [
            score,
            num,
            den,
            n0.into(),
            d0.into(),
            n1.into(),
            d1.into(),
            n2.into(),
            d2.into(),
            n3.into(),
            d3.into(),
        ];
        for (name, value) in self.debug_names.iter().zip(values) {
            sink.emit(index, name, value);
        }
    }
}

struct Vif {
    format: PictureFormat,
    outputs: VifOutputs,
    log2: &'static Log2Table,
    /// Scales 1 to 3.
    pyramid: Vec<ScalePlanes>,
    moments: MomentFilter,
    decimator: Decimator,
}

impl Vif {
    fn new(outputs: VifOutputs, format: &PictureFormat) -> Self {
        let (w, h) = format.plane_size(PlaneId::Y);
        let pyramid = (1..SCALES)
            .map(|s| ScalePlanes::new(w >> s, h >> s))
            .collect();
        Self {
            format: *format,
            outputs,
            log2: Log2Table::get(),
            pyramid,
            moments: MomentFilter::new(w),
            decimator: Decimator::new(w),
        }
    }

    /// Numerator and denominator of every scale.
    fn compute<T: VifSample>(
        &mut self,
        reference: PlaneRef<'_, T>,
        distorted: PlaneRef<'_, T>,
    ) -> VifScores {
        let Self {
            moments,
            decimator,
            pyramid,
            log2,
            outputs,
            ..
        } = self;
        let gain_limit = &outputs.gain_limit;
        // Scale 0 holds the picture's samples, the decimated scales 16-bit
        // values.
        let bit_depth = u32::from(self.format.bit_depth);
        let mut scores = VifScores::default();
        if !outputs.skip_scale0 {
            scores.scales[0] = moments
                .accumulate(reference, distorted, 0, bit_depth, log2, *gain_limit)
                .finish();
        }
        for scale in 1..SCALES {
            let (done, todo) = pyramid.split_at_mut(scale - 1);
            let out = &mut todo[0];
            if let Some(previous) = done.last() {
                let (r, d) = previous.planes();
                decimator.run(r, d, scale, 16, &mut out.reference, &mut out.distorted);
            } else {
                decimator.run(
                    reference,
                    distorted,
                    scale,
                    bit_depth,
                    &mut out.reference,
                    &mut out.distorted,
                );
            }
            let (r, d) = out.planes();
            scores.scales[scale] = moments
                .accumulate(r, d, scale, 16, log2, *gain_limit)
                .finish();
        }
        scores
    }
}

impl Extractor for Vif {
    fn name(&self) -> &'static str {
        NAME
    }

    fn planes(&self) -> PlaneMask {
        PlaneMask::LUMA
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        check_frame_format(NAME, &self.format, frame)?;
        let scores = match (
            frame.reference.plane(PlaneId::Y),
            frame.distorted.plane(PlaneId::Y),
        ) {
            (PlaneSamples::U8(r), PlaneSamples::U8(d)) => self.compute(r, d),
            (PlaneSamples::U16(r), PlaneSamples::U16(d)) => self.compute(r, d),
            _ => {
                return Err(Error::PictureMismatch(format!(
                    "{NAME}: frame {}: reference and distorted luma differ in sample width",
                    frame.index
                )))
            }
        };
        self.outputs.emit(frame.index, &scores, sink);
        Ok(())
    }
}
