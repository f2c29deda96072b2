//! libvmaf's integer ADM (additive distortion measure) extractor, `adm`.
//!
//! Per scale (4 levels of a db2 wavelet, luma only): the distorted detail
//! bands are decoupled against the reference into a restored part and an
//! additive impairment (`decouple`); the restored part, weighted by the
//! contrast sensitivity function (`csf`) and masked by the impairment
//! (`cm`), over the CSF-weighted reference energy (`den`) gives ADM
//! (`integer_adm2`); the impairment masked by the restored part gives AIM.
//! All integer steps and their float/double conversions follow libvmaf's C
//! code, so the scores are bit-identical.
//!
//! libvmaf details reproduced on purpose (each noted where it happens):
//! - the Watson quantisation step takes `k * temp * temp` as a float
//!   product; the default scale-0 weights are hard-coded (36453, 49417);
//! - the diagonal scale-0 CSF rounds with 65535, scales 1-3 round their 1/15
//!   and 1/30 masks with a wrapped -2^31 (Netflix/vmaf#955), and the scale
//!   1-3 denominators square with a rounding term of a full unit;
//! - the masking neighbourhood mirrors at the top/left edge but repeats at
//!   the bottom/right;
//! - libvmaf's AVX-512 DWT, which produced the reference scores, computes
//!   the last column with unmirrored taps when the half width is 1 modulo
//!   its vector block (see `dwt`).

mod cm;
pub(crate) mod csf;
mod decouple;
mod decouple_avx2;
mod decouple_avx512;
mod den;
mod dwt;
mod dwt_avx2;
mod dwt_avx512;
mod dwt_rows;
pub(crate) mod output;
mod pipeline;
mod region;
mod tables;
pub(crate) mod twin;

use super::common::format_check::check_frame_format;
use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, OptionSpec, Options};
use crate::error::{Error, Result};
use crate::picture::{PictureFormat, PlaneMask};
use csf::{CsfConfig, CsfMode};
use output::{Names, Pooling};
use pipeline::{Pipeline, ScaleParams};

/// Options, declared in name order: libvmaf appends the suffixes of
/// non-default feature parameters in that order
/// (`integer_adm2_csf_2_dlmw_0.7_egl_1_min_0.5_nw_0.02_nvd_5`).
static OPTIONS: [OptionSpec; 12] = [
    OptionSpec::double("adm_csf_diag_scale", 1.0, 0.0, 50.0).param("scfd"),
    OptionSpec::int("adm_csf_mode", 0, 0, 3).param("csf"),
    OptionSpec::double("adm_csf_scale", 1.0, 0.0, 50.0).param("scf"),
    OptionSpec::double("adm_dlm_weight", 0.5, 0.0, 1.0).param("dlmw"),
    OptionSpec::double("adm_enhn_gain_limit", 100.0, 1.0, 100.0).param("egl"),
    OptionSpec::double("adm_min_val", 0.0, 0.0, 1.0).param("min"),
    OptionSpec::double("adm_noise_weight", 0.03125, 0.0, 1500.0).param("nw"),
    OptionSpec::double("adm_norm_view_dist", 3.0, 0.75, 24.0).param("nvd"),
    OptionSpec::int("adm_ref_display_height", 1080, 1, 4320).param("rdh"),
    OptionSpec::bool("adm_skip_aim", false),
    OptionSpec::bool("adm_skip_scale0", false).param("ssz"),
    OptionSpec::bool("debug", false),
];

static PROVIDES: [&str; 18] = [
    "integer_adm2",
    "integer_aim",
    "integer_adm3",
    "integer_adm_scale0",
    "integer_adm_scale1",
    "integer_adm_scale2",
    "integer_adm_scale3",
    "integer_adm",
    "integer_adm_num",
    "integer_adm_den",
    "integer_adm_num_scale0",
    "integer_adm_den_scale0",
    "integer_adm_num_scale1",
    "integer_adm_den_scale1",
    "integer_adm_num_scale2",
    "integer_adm_den_scale2",
    "integer_adm_num_scale3",
    "integer_adm_den_scale3",
];

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: "adm",
    aliases: &[],
    options: &OPTIONS,
    provides: &PROVIDES,
    create: create as CreateFn,
    joint: None,
    gpu: Some(&crate::gpu::feature::adm::TWIN),
};

/// Smallest width and height: the coarsest DWT needs an input of at least
/// 5 coefficients (ceil(33 / 8)), below which libvmaf reads outside its
/// buffers.
const MIN_SIZE: u32 = 33;

/// Lower bound of libvmaf's 16-bit pipeline: 1080 lines viewed from 3
/// heights (finer angular resolutions overflow its scale-0 weights).
const MIN_VIEW_RESOLUTION: f64 = 3.0 * 1080.0;

fn create(options: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    Ok(Box::new(Adm::new(options, format)?))
}

/// The validated options of an `adm` instance: what its per-frame work and
/// its outputs need (shared with the GPU extractor).
pub(crate) struct Config {
    pub csf: CsfConfig,
    pub params: ScaleParams,
    pub pooling: Pooling,
    pub names: Names,
}

impl Config {
    /// Checks `options` and the picture size like libvmaf (errors name the
    /// option or the size).
    pub(crate) fn new(options: &Options, format: &PictureFormat) -> Result<Self> {
        let bad = |option: &str, reason: String| Error::BadOption {
            owner: "adm".into(),
            option: option.into(),
            reason,
        };
        let mode = options.int("adm_csf_mode");
        let csf = CsfConfig {
            mode: CsfMode::from_option(mode)
                .ok_or_else(|| bad("adm_csf_mode", format!("{mode} is not a CSF mode (0-3)")))?,
            norm_view_dist: options.double("adm_norm_view_dist"),
            ref_display_height: options.int("adm_ref_display_height"),
            csf_scale: options.double("adm_csf_scale"),
            csf_diag_scale: options.double("adm_csf_diag_scale"),
        };
        if csf.mode == CsfMode::Barten {
            return Err(bad(
                "adm_csf_mode",
                "1 (Barten) is not supported: Barten's weights (1.2 to 27 at 1080 lines and 3 \
                 heights) overflow libvmaf's fixed-point integer ADM (its adm2 comes out NaN); \
                 use 0, 2 or 3, or float_adm, which takes Barten's CSF"
                    .into(),
            ));
        }
        let view = csf.norm_view_dist * csf.ref_display_height as f64;
        if view < MIN_VIEW_RESOLUTION {
            return Err(bad(
                "adm_norm_view_dist",
                format!(
                    "adm_norm_view_dist * adm_ref_display_height = {view} is below {MIN_VIEW_RESOLUTION} \
                     (libvmaf's integer ADM cannot represent coarser viewing)"
                ),
            ));
        }
        if !csf.is_supported() {
            return Err(bad(
                "adm_csf_mode",
                format!(
                    "CSF mode {mode} has no table for adm_ref_display_height={} with adm_norm_view_dist={}",
                    csf.ref_display_height, csf.norm_view_dist
                ),
            ));
        }
        if format.width < MIN_SIZE || format.height < MIN_SIZE {
            return Err(Error::Extractor {
                extractor: "adm".into(),
                reason: format!(
                    "picture {}x{} is too small (at least {MIN_SIZE}x{MIN_SIZE})",
                    format.width, format.height
                ),
            });
        }
        Ok(Self {
            csf,
            params: ScaleParams {
                gain_limit: options.double("adm_enhn_gain_limit"),
                noise_weight: options.double("adm_noise_weight"),
                skip_aim: options.bool("adm_skip_aim"),
                skip_scale0: options.bool("adm_skip_scale0"),
            },
            pooling: Pooling {
                dlm_weight: options.double("adm_dlm_weight"),
                min_val: options.double("adm_min_val"),
                debug: options.bool("debug"),
                pixels: format.width as f64 * format.height as f64,
            },
            names: Names::new(&options.name_suffix()),
        })
    }
}

/// The `adm` extractor for pictures of one format.
struct Adm {
    format: PictureFormat,
    names: Names,
    pooling: Pooling,
    pipeline: Pipeline,
}

impl Adm {
    fn new(options: &Options, format: &PictureFormat) -> Result<Self> {
        let config = Config::new(options, format)?;
        Ok(Self {
            format: *format,
            names: config.names,
            pooling: config.pooling,
            pipeline: Pipeline::new(format, &config.csf, config.params),
        })
    }
}

impl Extractor for Adm {
    fn name(&self) -> &'static str {
        "adm"
    }

    fn planes(&self) -> PlaneMask {
        PlaneMask::LUMA
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        check_frame_format("adm", &self.format, frame)?;
        let scores = self.pipeline.run(frame.reference, frame.distorted);
        output::emit(frame.index, &scores, &self.pooling, &self.names, sink);
        Ok(())
    }
}
