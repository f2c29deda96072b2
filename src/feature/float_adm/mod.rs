//! `float_adm`: libvmaf's floating-point Additive Detail Measure: `adm2`
//! (detail loss), `aim` (additive impairment), `adm3` (their blend) and the
//! per-scale scores, used by the `vmaf_float_*` models.

mod compute;
mod csf;
mod dwt;
mod masking;

pub(crate) use compute::{combine_scales, ScaleSums, BORDER_FACTOR};
pub use compute::{compute_adm, AdmParams, AdmScores, AdmScratch};
pub(crate) use masking::{cos_1deg_sq, pool, PNorm, Region};

use super::common::float_plane::FloatPlane;
use super::common::format_check::check_frame_format;
use super::common::picture_copy::copy_luma;
use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, OptionSpec, Options};
use crate::error::{Error, Result};
use crate::picture::{PictureFormat, PlaneMask};

/// Options as declared by libvmaf's `float_adm.c`, in its order.
pub static OPTIONS: [OptionSpec; 23] = [
    OptionSpec::bool("debug", false),
    OptionSpec::double("adm_enhn_gain_limit", 100.0, 1.0, 100.0).param("egl"),
    OptionSpec::double("adm_norm_view_dist", 3.0, 0.75, 24.0).param("nvd"),
    OptionSpec::double("adm_noise_weight", 0.03125, 0.0, 1500.0).param("nw"),
    OptionSpec::double("adm_csf_scale", 1.0, 0.0, 50.0).param("scf"),
    OptionSpec::double("adm_csf_diag_scale", 1.0, 0.0, 50.0).param("scfd"),
    OptionSpec::int("adm_ref_display_height", 1080, 1, 4320).param("rdf"),
    OptionSpec::int("adm_csf_mode", 0, 0, 9).param("csf"),
    OptionSpec::int("adm_bypass_cm", 0, 0, 1).param("bcm"),
    OptionSpec::bool("adm_adm3_apply_hm", false).param("aah"),
    OptionSpec::double("adm_p_norm", 3.0, 1.0, 20.0).param("apn"),
    OptionSpec::double("adm_dlm_weight", 0.5, 0.0, 1.0).param("dlmw"),
    OptionSpec::double("adm_min_val", 0.0, 0.0, 1.0).param("min"),
    OptionSpec::double("adm_f1s0", -1.0, -1.0, 10.0).param("f1s0"),
    OptionSpec::double("adm_f1s1", -1.0, -1.0, 10.0).param("f1s1"),
    OptionSpec::double("adm_f1s2", -1.0, -1.0, 10.0).param("f1s2"),
    OptionSpec::double("adm_f1s3", -1.0, -1.0, 10.0).param("f1s3"),
    OptionSpec::double("adm_f2s0", -1.0, -1.0, 10.0).param("f2s0"),
    OptionSpec::double("adm_f2s1", -1.0, -1.0, 10.0).param("f2s1"),
    OptionSpec::double("adm_f2s2", -1.0, -1.0, 10.0).param("f2s2"),
    OptionSpec::double("adm_f2s3", -1.0, -1.0, 10.0).param("f2s3"),
    OptionSpec::int("adm_skip_aim_scale", -1, 0, 3).param("sasc"),
    OptionSpec::bool("adm_skip_scale0", false).param("ssz"),
];

/// Output names, in emission order. The debug value `adm` is not among
/// libvmaf's provided features, so it never gets an option suffix.
const OUTPUTS: [&str; 7] = [
    "adm2",
    "aim",
    "adm3",
    "adm_scale0",
    "adm_scale1",
    "adm_scale2",
    "adm_scale3",
];
const DEBUG_OUTPUTS: [&str; 10] = [
    "adm_num",
    "adm_den",
    "adm_num_scale0",
    "adm_den_scale0",
    "adm_num_scale1",
    "adm_den_scale1",
    "adm_num_scale2",
    "adm_den_scale2",
    "adm_num_scale3",
    "adm_den_scale3",
];

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: "float_adm",
    aliases: &[],
    options: &OPTIONS,
    provides: &[
        "adm2",
        "aim",
        "adm3",
        "adm_scale0",
        "adm_scale1",
        "adm_scale2",
        "adm_scale3",
        "VMAF_feature_adm2_score",
        "VMAF_feature_aim_score",
        "VMAF_feature_adm3_score",
        "VMAF_feature_adm_scale0_score",
        "VMAF_feature_adm_scale1_score",
        "VMAF_feature_adm_scale2_score",
        "VMAF_feature_adm_scale3_score",
        "adm",
        "adm_num",
        "adm_den",
        "adm_num_scale0",
        "adm_den_scale0",
        "adm_num_scale1",
        "adm_den_scale1",
        "adm_num_scale2",
        "adm_den_scale2",
        "adm_num_scale3",
        "adm_den_scale3",
    ],
    create: create as CreateFn,
    joint: None,
    gpu: Some(&crate::gpu::feature::float_adm::TWIN),
};

/// How `adm3` combines DLM and AIM.
#[derive(Debug, Clone, Copy)]
enum Adm3 {
    /// `adm_dlm_weight * adm2 + (1 - adm_dlm_weight) * (1 - aim)`
    Linear { dlm_weight: f64 },
    /// The harmonic mean of `adm2` and `aim` (`adm_adm3_apply_hm`).
    Harmonic,
}

/// Everything of the extractor but the per-pixel work: options, the ADM
/// parameters, and the values of a frame's scores (shared with the GPU
/// extractor, which computes the per-scale sums on the device).
pub(crate) struct FloatAdmOutputs {
    debug: bool,
    params: AdmParams,
    adm3: Adm3,
    min_val: f64,
    names: Vec<String>,
    debug_names: Vec<String>,
}

impl FloatAdmOutputs {
    pub(crate) fn create(options: &Options, format: &PictureFormat) -> Result<Self> {
        let (w, h) = (format.width as usize, format.height as usize);
        let min = compute::min_side();
        if w < min || h < min {
            return Err(Error::Extractor {
                extractor: "float_adm".into(),
                reason: format!("picture {w}x{h} is too small: each side must be at least {min}"),
            });
        }
        let f = |prefix: &str| [0, 1, 2, 3].map(|s| options.double(&format!("{prefix}{s}")));
        let skip_aim_scale = options.int("adm_skip_aim_scale");
        let suffix = options.name_suffix();
        Ok(Self {
            debug: options.bool("debug"),
            params: AdmParams {
                enhn_gain_limit: options.double("adm_enhn_gain_limit"),
                weights: csf::band_weights(
                    csf::Viewing {
                        csf_mode: options.int("adm_csf_mode"),
                        view_dist: options.double("adm_norm_view_dist"),
                        display_height: options.int("adm_ref_display_height"),
                        csf_scale: options.double("adm_csf_scale"),
                        csf_diag_scale: options.double("adm_csf_diag_scale"),
                    },
                    f("adm_f1s"),
                    f("adm_f2s"),
                ),
                noise_weight: options.double("adm_noise_weight"),
                bypass_cm: options.int("adm_bypass_cm") != 0,
                p_norm: options.double("adm_p_norm"),
                skip_aim_scale: usize::try_from(skip_aim_scale).ok(),
                skip_scale0: options.bool("adm_skip_scale0"),
            },
            adm3: if options.bool("adm_adm3_apply_hm") {
                Adm3::Harmonic
            } else {
                Adm3::Linear {
                    dlm_weight: options.double("adm_dlm_weight"),
                }
            },
            min_val: options.double("adm_min_val"),
            names: OUTPUTS.iter().map(|n| format!("{n}{suffix}")).collect(),
            debug_names: DEBUG_OUTPUTS
                .iter()
                .map(|n| format!("{n}{suffix}"))
                .collect(),
        })
    }

    pub(crate) fn params(&self) -> &AdmParams {
        &self.params
    }

    /// Emits frame `index`'s values from its scores.
    pub(crate) fn emit(&self, index: u32, r: &AdmScores, sink: &mut FeatureSink) {
        let score = r.score;
        // libvmaf leaves AIM unset (undefined) for a flat reference; report
        // no additive impairment.
        let aim = r.aim.unwrap_or(0.0);
        let adm3 = match self.adm3 {
            Adm3::Linear { dlm_weight } => score * dlm_weight + (1.0 - aim) * (1.0 - dlm_weight),
            Adm3::Harmonic => 2.0 * score * aim / (score + aim),
        };
        let scale = |s: usize| r.scales[s].0 as f64 / r.scales[s].1 as f64;
        let values = [
            score,
            aim,
            max(adm3, self.min_val),
            scale(0),
            scale(1),
            scale(2),
            scale(3),
        ];
        for (name, value) in self.names.iter().zip(values) {
            sink.emit(index, name, value);
        }
        if self.debug {
            sink.emit(index, "adm", score);
            let mut values = vec![r.num, r.den];
            for (n, d) in r.scales {
                values.extend([n as f64, d as f64]);
            }
            for (name, value) in self.debug_names.iter().zip(values) {
                sink.emit(index, name, value);
            }
        }
    }
}

struct FloatAdm {
    format: PictureFormat,
    outputs: FloatAdmOutputs,
    reference: FloatPlane,
    distorted: FloatPlane,
    scratch: AdmScratch,
}

fn create(options: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    let outputs = FloatAdmOutputs::create(options, format)?;
    let (w, h) = (format.width as usize, format.height as usize);
    Ok(Box::new(FloatAdm {
        format: *format,
        outputs,
        reference: FloatPlane::new(w, h),
        distorted: FloatPlane::new(w, h),
        scratch: AdmScratch::default(),
    }))
}

/// C's `MAX(x, y)`: `x > y ? x : y`.
fn max(x: f64, y: f64) -> f64 {
    if x > y {
        x
    } else {
        y
    }
}

impl Extractor for FloatAdm {
    fn name(&self) -> &'static str {
        "float_adm"
    }

    fn planes(&self) -> PlaneMask {
        PlaneMask::LUMA
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        check_frame_format("float_adm", &self.format, frame)?;
        copy_luma(frame.reference, -128, &mut self.reference);
        copy_luma(frame.distorted, -128, &mut self.distorted);
        let r = compute_adm(
            &self.reference,
            &self.distorted,
            self.outputs.params(),
            &mut self.scratch,
        );
        self.outputs.emit(frame.index, &r, sink);
        Ok(())
    }
}
