//! `float_motion`: libvmaf's floating-point motion features. `motion` is the
//! mean absolute difference between this frame's blurred reference luma and
//! the previous one's; `motion2` is the smaller of a frame's `motion` and
//! the next frame's; `motion3` is `motion2` blended toward an offset.
//!
//! Temporal: frame `n` is only complete once frame `n + 1` arrives, so values
//! are emitted for the previous frame and [`Extractor::flush`] emits the
//! last one.

use super::common::float_plane::FloatPlane;
use super::common::format_check::check_format;
use super::common::mirrored_filter::{convolve, PaddedRow};
use super::common::motion_blend::{blend_clipped, c_min};
use super::common::picture_copy::copy_luma;
use super::common::to_f32;
use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, OptionSpec, Options};
use crate::error::{Error, Result};
use crate::picture::{PictureFormat, PlaneMask};

/// Options as declared by libvmaf's `float_motion.c`, in its order.
pub static OPTIONS: [OptionSpec; 9] = [
    OptionSpec::bool("debug", true),
    OptionSpec::bool("motion_force_zero", false).param("force_0"),
    OptionSpec::double("motion_fps_weight", 1.0, 0.0, 5.0).param("mfw"),
    OptionSpec::double("motion_blend_factor", 1.0, 0.0, 1.0).param("mbf"),
    OptionSpec::double("motion_blend_offset", 40.0, 0.0, 1000.0).param("mbo"),
    OptionSpec::bool("motion_add_scale1", false).param("mdc"),
    OptionSpec::int("motion_filter_size", 5, 0, 9).param("mfs"),
    OptionSpec::bool("motion_add_uv", false).param("mau"),
    OptionSpec::double("motion_max_val", 10000.0, 0.0, 10000.0).param("mmxv"),
];

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: "float_motion",
    aliases: &[],
    options: &OPTIONS,
    provides: &[
        "motion",
        "motion2",
        "motion3",
        "VMAF_feature_motion_score",
        "VMAF_feature_motion2_score",
        "VMAF_feature_motion3_score",
    ],
    create: create as CreateFn,
    joint: None,
    gpu: Some(&crate::gpu::feature::float_motion::TWIN),
};

/// `FILTER_5_s` of `motion_tools.h` (C `double` literals in a `float` table).
pub(crate) const FILTER_5: [f32; 5] = to_f32([
    0.054488685,
    0.244201342,
    0.402619947,
    0.244201342,
    0.054488685,
]);

/// A side shorter than this leaves the 5-tap filter's mirrored taps
/// outside the plane.
const MIN_SIDE: usize = 3;

/// The scores' post-processing options.
#[derive(Debug, Clone, Copy)]
struct Shaping {
    fps_weight: f64,
    blend_factor: f64,
    blend_offset: f64,
    max_val: f64,
}

impl Shaping {
    /// `MIN(score * motion_fps_weight, motion_max_val)`
    fn clip(&self, score: f64) -> f64 {
        c_min(score * self.fps_weight, self.max_val)
    }

    /// `MIN(motion_blend(score * motion_fps_weight, ...), motion_max_val)`
    fn blend_clip(&self, score: f64) -> f64 {
        blend_clipped(
            score * self.fps_weight,
            self.blend_factor,
            self.blend_offset,
            self.max_val,
        )
    }
}

struct Names {
    motion: String,
    motion2: String,
    motion3: String,
}

/// Everything of the extractor but the blur and the mean absolute
/// difference: options, the scores of a frame's difference and the
/// `motion2`/`motion3` values it completes (shared with the GPU extractor,
/// which computes the difference on the device).
pub(crate) struct FloatMotionOutputs {
    debug: bool,
    force_zero: bool,
    shaping: Shaping,
    names: Names,
    /// Frames seen so far, and the index of the last one.
    frames: u64,
    last_index: u32,
    /// `motion` of the last frame (libvmaf's `s->score`).
    last_score: f64,
}

impl FloatMotionOutputs {
    pub(crate) fn create(options: &Options, format: &PictureFormat) -> Result<Self> {
        let unsupported = |option: &str, reason: &str| Error::BadOption {
            owner: "float_motion".into(),
            option: option.into(),
            reason: reason.into(),
        };
        if options.bool("motion_add_scale1") {
            return Err(unsupported(
                "motion_add_scale1",
                "the scale-1 term is not supported",
            ));
        }
        if options.bool("motion_add_uv") {
            return Err(unsupported(
                "motion_add_uv",
                "chroma terms are not supported",
            ));
        }
        let filter_size = options.int("motion_filter_size");
        if filter_size == 1 || filter_size == 3 {
            return Err(unsupported(
                "motion_filter_size",
                "only the 5-tap filter is supported (sizes 1 and 3 select other filters)",
            ));
        }
        let (w, h) = (format.width as usize, format.height as usize);
        if w < MIN_SIDE || h < MIN_SIDE {
            return Err(Error::Extractor {
                extractor: "float_motion".into(),
                reason: format!(
                    "picture {w}x{h} is too small: each side must be at least {MIN_SIDE}"
                ),
            });
        }
        let suffix = options.name_suffix();
        Ok(Self {
            debug: options.bool("debug"),
            force_zero: options.bool("motion_force_zero"),
            shaping: Shaping {
                fps_weight: options.double("motion_fps_weight"),
                blend_factor: options.double("motion_blend_factor"),
                blend_offset: options.double("motion_blend_offset"),
                max_val: options.double("motion_max_val"),
            },
            names: Names {
                motion: format!("motion{suffix}"),
                motion2: format!("motion2{suffix}"),
                motion3: format!("motion3{suffix}"),
            },
            frames: 0,
            last_index: 0,
            last_score: 0.0,
        })
    }

    /// True when every score is 0 and nothing needs computing.
    pub(crate) fn force_zero(&self) -> bool {
        self.force_zero
    }

    /// Emits what frame `index` completes. `score`: the mean absolute
    /// difference of its blurred luma and the previous frame's, `None` for
    /// the first frame (and with `motion_force_zero`).
    pub(crate) fn frame(&mut self, index: u32, score: Option<f64>, sink: &mut FeatureSink) {
        if self.force_zero {
            sink.emit(index, &self.names.motion2, 0.0);
            sink.emit(index, &self.names.motion3, 0.0);
            if self.debug {
                sink.emit(index, &self.names.motion, 0.0);
            }
            return;
        }
        let previous_index = self.last_index;
        self.frames += 1;
        self.last_index = index;
        let Some(score) = score else {
            sink.emit(index, &self.names.motion2, 0.0);
            if self.debug {
                sink.emit(index, &self.names.motion, 0.0);
            }
            return;
        };
        if self.debug {
            sink.emit(index, &self.names.motion, self.shaping.clip(score));
        }
        // libvmaf computes the previous frame's difference again; it is
        // the one the previous frame scored (|a - b| = |b - a| exactly, the
        // same samples summed in the same order).
        let previous_score = self.last_score;
        self.last_score = score;
        if self.frames == 2 {
            sink.emit(
                previous_index,
                &self.names.motion3,
                self.shaping.blend_clip(score),
            );
            return;
        }
        // `motion2` of the previous frame: the smaller of its own motion and
        // this frame's.
        let score2 = if previous_score < score {
            previous_score
        } else {
            score
        };
        sink.emit(
            previous_index,
            &self.names.motion2,
            self.shaping.clip(score2),
        );
        sink.emit(
            previous_index,
            &self.names.motion3,
            self.shaping.blend_clip(score2),
        );
    }

    /// Emits the last frame's `motion2`/`motion3` (all frames completed).
    pub(crate) fn flush(&mut self, sink: &mut FeatureSink) {
        if self.force_zero || self.frames == 0 {
            return;
        }
        if self.frames == 1 {
            sink.emit(self.last_index, &self.names.motion3, 0.0);
        } else {
            sink.emit(
                self.last_index,
                &self.names.motion2,
                self.shaping.clip(self.last_score),
            );
            sink.emit(
                self.last_index,
                &self.names.motion3,
                self.shaping.blend_clip(self.last_score),
            );
        }
    }
}

struct FloatMotion {
    format: PictureFormat,
    outputs: FloatMotionOutputs,
    picture: FloatPlane,
    /// Blurred reference luma of this frame and the previous one.
    blurred: [FloatPlane; 2],
    row: PaddedRow,
}

fn create(options: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    let outputs = FloatMotionOutputs::create(options, format)?;
    let (w, h) = (format.width as usize, format.height as usize);
    Ok(Box::new(FloatMotion {
        format: *format,
        outputs,
        picture: FloatPlane::new(w, h),
        blurred: std::array::from_fn(|_| FloatPlane::new(w, h)),
        row: PaddedRow::new(w, FILTER_5.len() / 2),
    }))
}

impl Extractor for FloatMotion {
    fn name(&self) -> &'static str {
        "float_motion"
    }

    fn planes(&self) -> PlaneMask {
        PlaneMask::LUMA
    }

    fn temporal(&self) -> bool {
        true
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        check_format("float_motion", &self.format, frame.reference)?;
        if self.outputs.force_zero() {
            self.outputs.frame(frame.index, None, sink);
            return Ok(());
        }
        // The previous blur becomes the older one.
        self.blurred.swap(0, 1);
        copy_luma(frame.reference, -128, &mut self.picture);
        convolve(
            &FILTER_5,
            &self.picture,
            &mut self.blurred[0],
            &mut self.row,
        );
        let first = self.outputs.frames == 0;
        let [current, previous] = &self.blurred;
        let score = (!first).then(|| mean_abs_diff(previous, current));
        self.outputs.frame(frame.index, score, sink);
        Ok(())
    }

    fn flush(&mut self, sink: &mut FeatureSink) -> Result<()> {
        self.outputs.flush(sink);
        Ok(())
    }
}

/// `vmaf_image_sad_c`: per-row `float` sums of `|a - b|`, added up in
/// `float`, divided by the sample count in `float`.
fn mean_abs_diff(a: &FloatPlane, b: &FloatPlane) -> f64 {
    let mut accum = 0.0f32;
    for y in 0..a.height {
        let mut line = 0.0f32;
        for (&p, &q) in a.row(y).iter().zip(b.row(y)) {
            // C adds `fabs()` (a double) to a float; the double sum of two
            // floats rounded to float is the float sum.
            line += (p - q).abs();
        }
        accum += line;
    }
    (accum / (a.width * a.height) as f32) as f64
}
