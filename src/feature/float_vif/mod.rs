//! `float_vif`: libvmaf's floating-point Visual Information Fidelity, four
//! scales (`vif_scale0..3`), used by the `vmaf_float_*` models.

mod compute;
mod kernels;

pub use compute::{compute_vif, log2_approx, VifParams, VifScratch, VifSums};
pub use kernels::kernels_for;

use super::common::float_plane::FloatPlane;
use super::common::format_check::check_frame_format;
use super::common::picture_copy::copy_luma;
use super::speed::resample::{Resampler, ScaleMethod, METHOD_NAMES};
use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, OptionSpec, Options};
use crate::error::{Error, Result};
use crate::picture::{PictureFormat, PlaneMask};

/// Options as declared by libvmaf's `float_vif.c`, in its order (the order
/// of the name suffixes).
pub static OPTIONS: [OptionSpec; 10] = [
    OptionSpec::bool("debug", false),
    OptionSpec::double("vif_enhn_gain_limit", 100.0, 1.0, 100.0).param("egl"),
    OptionSpec::double("vif_kernelscale", 1.0, 0.1, 4.0).param("ks"),
    OptionSpec::double("vif_prescale", 1.0, 0.1, 4.0).param("ps"),
    OptionSpec::double("vif_scale1_min_val", 0.0, 0.0, 1.0).param("s1miv"),
    OptionSpec::double("vif_scale2_min_val", 0.0, 0.0, 1.0).param("s2miv"),
    OptionSpec::double("vif_scale3_min_val", 0.0, 0.0, 1.0).param("s3miv"),
    OptionSpec::string("vif_prescale_method", "nearest", &METHOD_NAMES).param("pm"),
    OptionSpec::double("vif_sigma_nsq", 2.0, 0.0, 5.0).param("snsq"),
    OptionSpec::bool("vif_skip_scale0", false).param("ssclz"),
];

/// Output names without option suffixes, in emission order: the four
/// scores, then the debug values.
const OUTPUTS: [&str; 15] = [
    "vif_scale0",
    "vif_scale1",
    "vif_scale2",
    "vif_scale3",
    "vif",
    "vif_num",
    "vif_den",
    "vif_num_scale0",
    "vif_den_scale0",
    "vif_num_scale1",
    "vif_den_scale1",
    "vif_num_scale2",
    "vif_den_scale2",
    "vif_num_scale3",
    "vif_den_scale3",
];

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: "float_vif",
    aliases: &[],
    options: &OPTIONS,
    provides: &[
        "vif_scale0",
        "vif_scale1",
        "vif_scale2",
        "vif_scale3",
        "VMAF_feature_vif_scale0_score",
        "VMAF_feature_vif_scale1_score",
        "VMAF_feature_vif_scale2_score",
        "VMAF_feature_vif_scale3_score",
        "vif",
        "vif_num",
        "vif_den",
        "vif_num_scale0",
        "vif_den_scale0",
        "vif_num_scale1",
        "vif_den_scale1",
        "vif_num_scale2",
        "vif_den_scale2",
        "vif_num_scale3",
        "vif_den_scale3",
    ],
    create: create as CreateFn,
    joint: None,
    gpu: Some(&crate::gpu::feature::float_vif::TWIN),
};

/// Everything of the extractor but the per-pixel work: options, kernels,
/// the scored size, and the values of a frame's sums (shared with the GPU
/// extractor, which computes the sums on the device).
pub(crate) struct FloatVifOutputs {
    debug: bool,
    params: VifParams,
    /// `vif_scale1..3_min_val`: lower bounds of the scale 1..3 scores.
    min_vals: [f64; 3],
    kernels: [Vec<f32>; 4],
    names: Vec<String>,
    /// The luma size as scored (the input size unless `vif_prescale`).
    scored: (usize, usize),
    /// `vif_prescale_method` from the input size to the scored one.
    resampler: Resampler,
}

/// libvmaf's `VIF_BILINEAR_MAX_WIDTH` (8K).
const VIF_BILINEAR_MAX_WIDTH: usize = 7680;

impl FloatVifOutputs {
    pub(crate) fn create(options: &Options, format: &PictureFormat) -> Result<Self> {
        let bad = |option: &str, reason: &str| Error::BadOption {
            owner: "float_vif".into(),
            option: option.into(),
            reason: reason.into(),
        };
        let kernels = kernels_for(options.double("vif_kernelscale"))?;
        let (w, h) = (format.width as usize, format.height as usize);
        let prescale = options.double("vif_prescale");
        // `(int)(w * s->vif_prescale + 0.5)`
        let (sw, sh) = (
            (w as f64 * prescale + 0.5) as usize,
            (h as f64 * prescale + 0.5) as usize,
        );
        let method = options.string("vif_prescale_method");
        let method = ScaleMethod::parse(method).expect("checked against METHOD_NAMES");
        // libvmaf's bilinear scaler keeps its column tables on the stack.
        if method == ScaleMethod::Bilinear && sw > VIF_BILINEAR_MAX_WIDTH {
            return Err(bad(
                "vif_prescale_method",
                &format!("bilinear scaling is limited to {VIF_BILINEAR_MAX_WIDTH} columns, {sw} asked for"),
            ));
        }
        let min = compute::min_side(&kernels);
        if sw < min || sh < min {
            return Err(Error::Extractor {
                extractor: "float_vif".into(),
                reason: format!(
                    "picture {sw}x{sh} (as scored) is too small: each side must be at least {min}"
                ),
            });
        }
        let suffix = options.name_suffix();
        Ok(Self {
            debug: options.bool("debug"),
            params: VifParams {
                // `float vif_enhn_gain_limit_f = (float) vif_enhn_gain_limit;`
                enhn_gain_limit: options.double("vif_enhn_gain_limit") as f32,
                sigma_nsq: options.double("vif_sigma_nsq"),
                skip_scale0: options.bool("vif_skip_scale0"),
            },
            min_vals: [
                options.double("vif_scale1_min_val"),
                options.double("vif_scale2_min_val"),
                options.double("vif_scale3_min_val"),
            ],
            kernels,
            names: OUTPUTS.iter().map(|n| format!("{n}{suffix}")).collect(),
            scored: (sw, sh),
            resampler: Resampler::new(method, (w, h), (sw, sh)),
        })
    }

    pub(crate) fn params(&self) -> VifParams {
        self.params
    }

    /// The Gaussians of scales 0 to 3.
    pub(crate) fn kernels(&self) -> &[Vec<f32>; 4] {
        &self.kernels
    }

    /// The luma size as scored.
    pub(crate) fn scored_size(&self) -> (usize, usize) {
        self.scored
    }

    /// Emits frame `index`'s values from its sums.
    pub(crate) fn emit(&self, index: u32, sums: &VifSums, sink: &mut FeatureSink) {
        let skip = self.params.skip_scale0;
        for (value, name) in vif_values(sums, self.min_vals, self.debug, skip)
            .into_iter()
            .zip(&self.names)
        {
            sink.emit(index, name, value);
        }
    }
}

struct FloatVif {
    format: PictureFormat,
    outputs: FloatVifOutputs,
    /// Luma as read, then as scored (the same size unless `vif_prescale`).
    reference: FloatPlane,
    distorted: FloatPlane,
    reference_scaled: FloatPlane,
    distorted_scaled: FloatPlane,
    scratch: VifScratch,
}

fn create(options: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    let outputs = FloatVifOutputs::create(options, format)?;
    let (w, h) = (format.width as usize, format.height as usize);
    let (sw, sh) = outputs.scored_size();
    Ok(Box::new(FloatVif {
        format: *format,
        outputs,
        reference: FloatPlane::new(w, h),
        distorted: FloatPlane::new(w, h),
        reference_scaled: FloatPlane::new(sw, sh),
        distorted_scaled: FloatPlane::new(sw, sh),
        scratch: VifScratch::new(sw, sh),
    }))
}

impl Extractor for FloatVif {
    fn name(&self) -> &'static str {
        "float_vif"
    }

    fn planes(&self) -> PlaneMask {
        PlaneMask::LUMA
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        check_frame_format("float_vif", &self.format, frame)?;
        copy_luma(frame.reference, -128, &mut self.reference);
        copy_luma(frame.distorted, -128, &mut self.distorted);
        let (r, d) = if self.reference_scaled.width == self.reference.width
            && self.reference_scaled.height == self.reference.height
        {
            (&self.reference, &self.distorted)
        } else {
            let resampler = &self.outputs.resampler;
            // `vif_scale_frame_s` with `vif_prescale_method`.
            resampler.scale_plane(&self.reference, &mut self.reference_scaled);
            resampler.scale_plane(&self.distorted, &mut self.distorted_scaled);
            (&self.reference_scaled, &self.distorted_scaled)
        };
        let sums = compute_vif(
            r,
            d,
            self.outputs.kernels(),
            self.outputs.params(),
            &mut self.scratch,
        );
        self.outputs.emit(frame.index, &sums, sink);
        Ok(())
    }
}

/// The values libvmaf emits, in [`OUTPUTS`] order (the debug ones only
/// with `debug`). `skip_scale0`: scale 0 is written as 0 (its debug sums
/// as 0 and -1) and left out of the totals.
fn vif_values(sums: &VifSums, min_vals: [f64; 3], debug: bool, skip_scale0: bool) -> Vec<f64> {
    let mut num = sums.num.map(f64::from);
    let mut den = sums.den.map(f64::from);
    if skip_scale0 {
        (num[0], den[0]) = (0.0, -1.0);
    }
    let first = usize::from(skip_scale0);
    let mut out = vec![if skip_scale0 { 0.0 } else { num[0] / den[0] }];
    for s in 1..4 {
        // `MAX(scores[2s] / scores[2s+1], vif_scale<s>_min_val)`
        let v = num[s] / den[s];
        out.push(if v > min_vals[s - 1] {
            v
        } else {
            min_vals[s - 1]
        });
    }
    if debug {
        let (mut total_num, mut total_den) = (0.0f64, 0.0f64);
        for s in first..4 {
            total_num += num[s];
            total_den += den[s];
        }
        let score = if total_den == 0.0 {
            1.0
        } else {
            total_num / total_den
        };
        out.extend([score, total_num, total_den]);
        for s in 0..4 {
            out.extend([num[s], den[s]]);
        }
    }
    out
}
