//! CAMBI, Netflix's contrast-aware banding index (libvmaf's `cambi`
//! extractor), bit-exact with libvmaf 3.2.0.
//!
//! No-reference by default: it scores the distorted luma alone, at the
//! encoding resolution and in 10 bits. Per frame: resize and requantize
//! (`preprocess`), keep the flat areas (`spatial_mask`), then at five
//! scales (each half the previous) mode-filter (`filter_mode`), measure
//! the banding contrast of every pixel (`c_values`) and pool the worst
//! ones (`pooling`). With `full_ref=true` the reference is scored too
//! (`cambi_source`) and `cambi_full_reference` is the banding the encode
//! added. No state carries from frame to frame.

mod c_values;
mod c_values_avx2;
mod c_values_avx512;
mod filter_mode;
mod luminance;
mod plane;
mod pooling;
mod preprocess;
mod slide_runs;
mod spatial_mask;
pub(crate) mod twin;

use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, OptionSpec, Options};
use crate::error::{Error, Result};
use crate::picture::{HostPicture, PictureFormat, PlaneId, PlaneMask, PlaneSamples};
use c_values::{ContrastTables, Histograms, RECIPROCAL_LUT_SIZE};
use filter_mode::ModeScratch;
use luminance::Eotf;
use plane::Plane;
use spatial_mask::MaskScratch;

pub const NAME: &str = "cambi";
/// The banding score of the distorted picture.
pub const CAMBI: &str = "cambi";
/// With `full_ref=true`: the banding score of the reference.
pub const CAMBI_SOURCE: &str = "cambi_source";
/// With `full_ref=true`: the banding the distorted picture adds,
/// `max(0, cambi - cambi_source)`.
pub const CAMBI_FULL_REFERENCE: &str = "cambi_full_reference";

const DEFAULT_TOPK: f64 = 0.6;
/// Neither side of the encoding (or source) may be below this on both axes.
const MIN_WIDTH_OR_HEIGHT: u32 = 216;
pub(crate) const NUM_SCALES: usize = 5;

const EOTFS: &[&str] = &["bt1886", "pq"];
const DEFAULT_EOTF: &str = "bt1886";

/// libvmaf 3.2.0's options, in its order. `heatmaps_path` is accepted only
/// unset: writing heatmap files is not supported.
static OPTIONS: [OptionSpec; 17] = [
    OptionSpec::double("cambi_max_val", 1000.0, 0.0, 1000.0).param("cmxv"),
    OptionSpec::int("enc_width", 0, 180, 7680).param("encw"),
    OptionSpec::int("enc_height", 0, 150, 7680).param("ench"),
    OptionSpec::int("enc_bitdepth", 0, 6, 16).param("encbd"),
    OptionSpec::int("src_width", 0, 320, 7680).param("srcw"),
    OptionSpec::int("src_height", 0, 200, 4320).param("srch"),
    OptionSpec::int("window_size", 65, 15, 127).param("ws"),
    OptionSpec::double("topk", DEFAULT_TOPK, 0.0001, 1.0).param_unaliased(),
    OptionSpec::double("cambi_topk", DEFAULT_TOPK, 0.0001, 1.0).param("ctpk"),
    OptionSpec::double("tvi_threshold", 0.019, 0.0001, 1.0).param("tvit"),
    OptionSpec::double("cambi_vis_lum_threshold", 0.0, 0.0, 300.0).param("vlt"),
    OptionSpec::int("max_log_contrast", 2, 0, 5).param("mlc"),
    OptionSpec::string("heatmaps_path", "", &[]),
    OptionSpec::bool("full_ref", false),
    OptionSpec::string("eotf", DEFAULT_EOTF, EOTFS).param_unaliased(),
    // Takes precedence over `eotf` when not the default.
    OptionSpec::string("cambi_eotf", DEFAULT_EOTF, EOTFS).param("ceot"),
    OptionSpec::int("cambi_high_res_speedup", 0, 0, 2160).param("hrs"),
];

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: NAME,
    aliases: &[],
    options: &OPTIONS,
    provides: &[CAMBI],
    create: create as CreateFn,
    joint: None,
    gpu: Some(&crate::gpu::feature::cambi::TWIN),
};

fn create(options: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    Ok(Box::new(Cambi::new(options, format)?))
}

/// A size to score at, with its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub(crate) width: usize,
    pub(crate) height: usize,
    /// Window side (odd) for the c-values.
    pub(crate) window: usize,
}

/// Resolved options: sizes, thresholds and output names.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) encode: Geometry,
    pub(crate) source: Geometry,
    /// Encoding bit depth; below 10 bits the anti-dithering filter runs.
    pub(crate) enc_bitdepth: u32,
    pub(crate) full_ref: bool,
    /// Decimate once more before the first scale (high-resolution
    /// speed-up, only at or above the chosen resolution).
    pub(crate) high_res_speedup: bool,
    pub(crate) topk: f64,
    max_val: f64,
    /// Output name of the distorted score, with the option suffix.
    cambi_name: String,
}

fn bad_option(option: &str, reason: String) -> Error {
    Error::BadOption {
        owner: NAME.into(),
        option: option.into(),
        reason,
    }
}

/// libvmaf's `adjust_window_size`: the window scales with width + height
/// relative to 4K ((3840 + 2160) / 16 = 375), is halved with the speed-up
/// and made odd.
fn adjusted_window(window: u32, width: u32, height: u32, speedup: bool) -> usize {
    let mut w = (((window * (width + height)) / 375) >> 4) as u16;
    if speedup {
        w = (w + 1) >> 1;
    }
    usize::from(w | 1)
}

/// libvmaf resets the speed-up when the encode has fewer pixels than the
/// chosen resolution (1080, 1440 or 2160 lines; any other value is off).
fn speedup_applies(choice: i32, width: u32, height: u32) -> bool {
    let pixels = u64::from(width) * u64::from(height);
    let threshold = match choice {
        1080 => 1920 * 1080,
        1440 => 2560 * 1440,
        2160 => 3840 * 2160,
        _ => return false,
    };
    pixels >= threshold
}

impl Config {
    fn resolve(o: &Options, format: &PictureFormat) -> Result<Self> {
        let (w, h) = (format.width, format.height);
        let pair = |a: &str, b: &str| match (o.int(a), o.int(b)) {
            (0, _) | (_, 0) => (w, h),
            (x, y) => (x as u32, y as u32),
        };
        let (mut enc_w, mut enc_h) = pair("enc_width", "enc_height");
        let (src_w, src_h) = pair("src_width", "src_height");
        // An encode larger than the input was downscaled before scoring:
        // libvmaf scores at the input size then.
        if enc_w > w || enc_h > h {
            (enc_w, enc_h) = (w, h);
        }
        if enc_w < MIN_WIDTH_OR_HEIGHT && enc_h < MIN_WIDTH_OR_HEIGHT {
            return Err(Error::Extractor {
                extractor: NAME.into(),
                reason: format!(
                    "encoding size {enc_w}x{enc_h} is too small: width or height must be at least {MIN_WIDTH_OR_HEIGHT}"
                ),
            });
        }
        if src_w < MIN_WIDTH_OR_HEIGHT && src_h < MIN_WIDTH_OR_HEIGHT {
            return Err(Error::Extractor {
                extractor: NAME.into(),
                reason: format!(
                    "source size {src_w}x{src_h} is too small: width or height must be at least {MIN_WIDTH_OR_HEIGHT}"
                ),
            });
        }
        if (src_w > enc_w && src_h < enc_h) || (src_w < enc_w && src_h > enc_h) {
            return Err(bad_option(
                "src_width",
                format!("source {src_w}x{src_h} is larger than the encode {enc_w}x{enc_h} along one axis and smaller along the other"),
            ));
        }
        let speedup = speedup_applies(o.int("cambi_high_res_speedup"), enc_w, enc_h);
        let window = o.int("window_size") as u32;
        let encode = Geometry {
            width: enc_w as usize,
            height: enc_h as usize,
            window: adjusted_window(window, enc_w, enc_h, speedup),
        };
        let source = Geometry {
            width: src_w as usize,
            height: src_h as usize,
            window: adjusted_window(window, src_w, src_h, speedup),
        };
        let widest = encode.window.max(source.window);
        if widest * widest >= RECIPROCAL_LUT_SIZE {
            return Err(bad_option(
                "window_size",
                format!("window {widest} at this resolution is too large (libvmaf's reciprocal table ends at {RECIPROCAL_LUT_SIZE} pixels)"),
            ));
        }
        let enc_bitdepth = match o.int("enc_bitdepth") {
            0 => u32::from(format.bit_depth),
            b => b as u32,
        };
        // The original `topk` wins when set, else its `cambi_topk` alias.
        let topk = match o.double("topk") {
            t if t != DEFAULT_TOPK => t,
            _ => o.double("cambi_topk"),
        };
        Ok(Self {
            encode,
            source,
            enc_bitdepth,
            full_ref: o.bool("full_ref"),
            high_res_speedup: speedup,
            topk,
            max_val: o.double("cambi_max_val"),
            cambi_name: format!("{CAMBI}{}", o.name_suffix()),
        })
    }
}

/// Buffers reused by every frame, sized for the largest geometry.
struct Workspace {
    image: Plane,
    mask: Plane,
    c_values: Vec<f32>,
    histograms: Histograms,
    mask_scratch: MaskScratch,
    mode_scratch: ModeScratch,
}

/// The `cambi` extractor.
pub struct Cambi {
    config: Config,
    format: PictureFormat,
    tables: ContrastTables,
    work: Workspace,
}

impl Cambi {
    /// Creates an extractor for pictures of `format`.
    pub fn new(options: &Options, format: &PictureFormat) -> Result<Self> {
        let (config, tables) = setup(options, format)?;
        let (alloc_w, alloc_h) = config.buffer_size();
        let work = Workspace {
            image: Plane::new(alloc_w, alloc_h),
            mask: Plane::new(alloc_w, alloc_h),
            c_values: vec![0.0; alloc_w * alloc_h],
            histograms: Histograms::new(alloc_w, alloc_h, &tables),
            mask_scratch: MaskScratch::new(alloc_w),
            mode_scratch: ModeScratch::new(alloc_w),
        };
        Ok(Self {
            config,
            format: *format,
            tables,
            work,
        })
    }

    /// The banding score of one picture scored at `geometry`.
    fn score(&mut self, picture: &HostPicture, geometry: Geometry) -> Result<f64> {
        let bit_depth = u32::from(self.format.bit_depth);
        let (width, height) = (geometry.width, geometry.height);
        match picture.plane(PlaneId::Y) {
            PlaneSamples::U8(luma) => {
                preprocess::resize_to_10bit(&luma, bit_depth, &mut self.work.image, width, height)
            }
            PlaneSamples::U16(luma) => {
                if let Some(v) = preprocess::first_out_of_range(&luma, bit_depth) {
                    return Err(out_of_range_error(v, bit_depth));
                }
                preprocess::resize_to_10bit(&luma, bit_depth, &mut self.work.image, width, height)
            }
        }
        let work = &mut self.work;
        if self.config.enc_bitdepth < 10 {
            preprocess::anti_dither(&mut work.image, width, height);
        }
        spatial_mask::compute(
            &work.image,
            &mut work.mask,
            width,
            height,
            &mut work.mask_scratch,
        );
        let mut scores = [0.0; NUM_SCALES];
        let (mut w, mut h) = (width, height);
        for (scale, score) in scores.iter_mut().enumerate() {
            if scale > 0 || self.config.high_res_speedup {
                w = (w + 1) >> 1;
                h = (h + 1) >> 1;
                work.image.decimate(w, h);
                work.mask.decimate(w, h);
            }
            filter_mode::apply(&mut work.image, w, h, &mut work.mode_scratch);
            let survey = c_values::compute(
                &work.image,
                &work.mask,
                &self.tables,
                &mut work.histograms,
                geometry.window,
                w,
                h,
                &mut work.c_values,
            );
            *score = pooling::top_k_mean(&mut work.c_values[..w * h], self.config.topk, &survey);
        }
        Ok(pooling::combine_scales(&scores, geometry.window))
    }
}

/// The resolved options and contrast tables of an instance (shared with
/// the GPU extractor, so both engines read the options alike).
pub(crate) fn setup(options: &Options, format: &PictureFormat) -> Result<(Config, ContrastTables)> {
    let config = Config::resolve(options, format)?;
    if !options.string("heatmaps_path").is_empty() {
        return Err(bad_option(
            "heatmaps_path",
            "writing heatmap files is not supported".into(),
        ));
    }
    let eotf = match options.string("cambi_eotf") {
        DEFAULT_EOTF => options.string("eotf"),
        chosen => chosen,
    };
    let eotf =
        Eotf::parse(eotf).ok_or_else(|| bad_option("eotf", format!("unknown EOTF '{eotf}'")))?;
    let num_diffs = 1usize << options.int("max_log_contrast");
    let threshold = options.double("tvi_threshold");
    let tvi: Vec<i32> = (1..=num_diffs as i32)
        .map(|diff| luminance::tvi_for_diff(eotf, diff, threshold))
        .collect();
    let vis_threshold = options.double("cambi_vis_lum_threshold");
    let vlt_luma = luminance::visibility_luma(eotf, vis_threshold).ok_or_else(|| {
        bad_option(
            "cambi_vis_lum_threshold",
            format!("{vis_threshold} cd/m² is above the brightest code"),
        )
    })?;
    Ok((config, ContrastTables::new(num_diffs, &tvi, vlt_luma)))
}

impl Config {
    /// The working planes' size: the largest geometry scored.
    pub(crate) fn buffer_size(&self) -> (usize, usize) {
        if self.full_ref {
            (
                self.encode.width.max(self.source.width),
                self.encode.height.max(self.source.height),
            )
        } else {
            (self.encode.width, self.encode.height)
        }
    }

    /// libvmaf's `MIN(score, cambi_max_val)`.
    fn clip(&self, score: f64) -> f64 {
        if score < self.max_val {
            score
        } else {
            self.max_val
        }
    }

    /// Emits a frame's outputs from the distorted picture's score and,
    /// with `full_ref`, the reference's (unclipped scores).
    pub(crate) fn emit(
        &self,
        index: u32,
        distorted: f64,
        source: Option<f64>,
        sink: &mut FeatureSink,
    ) {
        sink.emit(index, &self.cambi_name, self.clip(distorted));
        if let Some(source) = source {
            sink.emit(index, CAMBI_SOURCE, self.clip(source));
            // libvmaf's MAX(0, dist - src).
            let added = distorted - source;
            let added = if 0.0 > added { 0.0 } else { added };
            sink.emit(index, CAMBI_FULL_REFERENCE, self.clip(added));
        }
    }
}

/// The message of a luma sample above the bit depth's maximum.
pub(crate) fn out_of_range_error(v: u32, bit_depth: u32) -> Error {
    Error::Extractor {
        extractor: NAME.into(),
        reason: format!(
            "luma sample {v} exceeds the {bit_depth}-bit maximum {}",
            (1u32 << bit_depth) - 1
        ),
    }
}

impl Extractor for Cambi {
    fn name(&self) -> &'static str {
        NAME
    }

    fn planes(&self) -> PlaneMask {
        PlaneMask::LUMA
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        let distorted = self.score(frame.distorted, self.config.encode)?;
        let source = if self.config.full_ref {
            Some(self.score(frame.reference, self.config.source)?)
        } else {
            None
        };
        self.config.emit(frame.index, distorted, source, sink);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_follows_resolution() {
        assert_eq!(adjusted_window(65, 576, 324, false), 9);
        assert_eq!(adjusted_window(65, 1920, 1080, false), 33);
        assert_eq!(adjusted_window(65, 1920, 1080, true), 17);
        assert_eq!(adjusted_window(65, 3840, 2160, false), 65);
        assert!(speedup_applies(1080, 1920, 1080));
        assert!(!speedup_applies(1080, 1920, 1079));
        assert!(!speedup_applies(720, 3840, 2160));
    }
}
