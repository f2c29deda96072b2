//! `float_motion`: libvmaf's floating-point motion features. `motion` is the
//! mean absolute difference between this frame's blurred reference luma and
//! the previous one's; `motion2` is the smaller of a frame's `motion` and
//! the next frame's; `motion3` is `motion2` blended toward an offset.
//!
//! Temporal: frame `n` is only complete once frame `n + 1` arrives, so values
//! are emitted for the previous frame and [`Extractor::flush`] emits the
//! last one.
//!
//! Options as in libvmaf: `motion_filter_size` 1 (no blur) or 3 (a 3-tap
//! blur; any other size the 5-tap one), `motion_add_uv` (the chroma planes'
//! differences added, at libvmaf's floored chroma size), `motion_add_scale1`
//! (each difference plus that of the planes halved bilinearly).

use super::common::float_plane::FloatPlane;
use super::common::format_check::check_format;
use super::common::mirrored_filter::{convolve, PaddedRow};
use super::common::motion_blend::{blend_clipped, c_min};
use super::common::picture_copy::copy_plane_cropped;
use super::common::to_f32;
use super::speed::resample::{Resampler, ScaleMethod};
use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, OptionSpec, Options};
use crate::error::{Error, Result};
use crate::picture::{ChromaSubsampling, PictureFormat, PlaneId, PlaneMask};

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

/// `FILTER_3_s` and `FILTER_5_NO_OP_s` of `motion_tools.h`.
const FILTER_3: [f32; 3] = to_f32([0.166378498, 0.667243004, 0.166378498]);
const FILTER_5_NO_OP: [f32; 5] = [0.0, 0.0, 1.0, 0.0, 0.0];

/// The blur `motion_filter_size` selects, as libvmaf's `extract` does.
fn blur_filter(size: i32) -> &'static [f32] {
    match size {
        1 => &FILTER_5_NO_OP,
        3 => &FILTER_3,
        _ => &FILTER_5,
    }
}

/// True when `options` ask for no more than the 5-tap blur of luma alone
/// (the GPU kernel's work; the other blurs, chroma and halved planes are
/// the CPU extractor's).
pub(crate) fn luma_5_tap_only(options: &Options) -> bool {
    !options.bool("motion_add_uv")
        && !options.bool("motion_add_scale1")
        && blur_filter(options.int("motion_filter_size")) == FILTER_5
}

/// A side shorter than this leaves the 5-tap filter's mirrored taps
/// outside the plane.
const MIN_SIDE: usize = 3;

/// libvmaf's `VIF_BILINEAR_MAX_WIDTH`: its bilinear scaler's limit, which
/// `motion_add_scale1` checks.
const BILINEAR_MAX_WIDTH: usize = 7680;

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
        let bad = |option: &str, reason: String| Error::BadOption {
            owner: "float_motion".into(),
            option: option.into(),
            reason,
        };
        if options.bool("motion_add_uv") {
            if format.subsampling == ChromaSubsampling::Yuv400 {
                return Err(bad(
                    "motion_add_uv",
                    "4:0:0 (luma-only) input has no chroma".into(),
                ));
            }
            // libvmaf's halving of a chroma plane reads it at a stride of
            // its own width, where its rows lie at the luma stride: for
            // subsampled chroma, past the plane's samples into memory it
            // never wrote.
            if options.bool("motion_add_scale1") && format.subsampling != ChromaSubsampling::Yuv444
            {
                return Err(bad(
                    "motion_add_uv",
                    "with motion_add_scale1 on subsampled chroma libvmaf's value is undefined (it halves the chroma planes from unwritten memory)".into(),
                ));
            }
        }
        if options.bool("motion_add_scale1") {
            let halved = (format.width as usize).div_ceil(2);
            if halved > BILINEAR_MAX_WIDTH {
                return Err(bad(
                    "motion_add_scale1",
                    format!("the halved width {halved} is past libvmaf's bilinear limit of {BILINEAR_MAX_WIDTH}"),
                ));
            }
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
    filter: &'static [f32],
    /// The planes whose differences add up (luma, then chroma with
    /// `motion_add_uv`), each with libvmaf's size.
    planes: Vec<MotionPlane>,
    row: PaddedRow,
}

/// One plane's samples and its blur of this frame and the previous one.
struct MotionPlane {
    id: PlaneId,
    size: (usize, usize),
    picture: FloatPlane,
    blurred: [FloatPlane; 2],
    /// `motion_add_scale1`: the bilinear halving and the halved planes.
    halving: Option<Halving>,
}

struct Halving {
    resampler: Resampler,
    halves: [FloatPlane; 2],
}

impl MotionPlane {
    fn new(id: PlaneId, (w, h): (usize, usize), halve: bool) -> Self {
        // libvmaf's `(int)(w * 0.5 + 0.5)`.
        let half = (w.div_ceil(2), h.div_ceil(2));
        Self {
            id,
            size: (w, h),
            picture: FloatPlane::new(w, h),
            blurred: std::array::from_fn(|_| FloatPlane::new(w, h)),
            halving: halve.then(|| Halving {
                resampler: Resampler::new(ScaleMethod::Bilinear, (w, h), half),
                halves: std::array::from_fn(|_| FloatPlane::new(half.0, half.1)),
            }),
        }
    }

    /// Blurs this frame's plane; returns `vmaf_image_sad_c` of it against
    /// the previous frame's, except on the first frame.
    fn blur_and_compare(
        &mut self,
        frame: &FrameInput<'_>,
        filter: &[f32],
        row: &mut PaddedRow,
        first: bool,
    ) -> Option<f32> {
        // The previous blur becomes the older one.
        self.blurred.swap(0, 1);
        copy_plane_cropped(frame.reference, self.id, -128, self.size, &mut self.picture);
        convolve(filter, &self.picture, &mut self.blurred[0], row);
        if first {
            return None;
        }
        let [current, previous] = &self.blurred;
        let mut sad = mean_abs_diff(previous, current);
        if let Some(h) = &mut self.halving {
            // libvmaf halves both blurs again for every difference.
            for (src, dst) in [previous, current].into_iter().zip(&mut h.halves) {
                h.resampler.scale_plane(src, dst);
            }
            sad += mean_abs_diff(&h.halves[0], &h.halves[1]);
        }
        Some(sad)
    }
}

fn create(options: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    let outputs = FloatMotionOutputs::create(options, format)?;
    let (w, h) = (format.width as usize, format.height as usize);
    let halve = options.bool("motion_add_scale1");
    let mut planes = vec![MotionPlane::new(PlaneId::Y, (w, h), halve)];
    if options.bool("motion_add_uv") {
        // libvmaf's chroma size: the luma size shifted down (ADR 0002).
        let (sx, sy) = format.subsampling.chroma_shift();
        for id in [PlaneId::Cb, PlaneId::Cr] {
            planes.push(MotionPlane::new(id, (w >> sx, h >> sy), halve));
        }
    }
    let filter = blur_filter(options.int("motion_filter_size"));
    Ok(Box::new(FloatMotion {
        format: *format,
        outputs,
        filter,
        planes,
        row: PaddedRow::new(w, filter.len() / 2),
    }))
}

impl Extractor for FloatMotion {
    fn name(&self) -> &'static str {
        "float_motion"
    }

    fn planes(&self) -> PlaneMask {
        if self.planes.len() > 1 {
            PlaneMask::ALL
        } else {
            PlaneMask::LUMA
        }
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
        let first = self.outputs.frames == 0;
        let mut score: Option<f64> = None;
        for plane in &mut self.planes {
            let sad = plane.blur_and_compare(frame, self.filter, &mut self.row, first);
            // libvmaf adds the chroma planes' differences in double.
            score = sad.map(|sad| score.unwrap_or(0.0) + f64::from(sad));
        }
        self.outputs.frame(frame.index, score, sink);
        Ok(())
    }

    fn flush(&mut self, sink: &mut FeatureSink) -> Result<()> {
        self.outputs.flush(sink);
        Ok(())
    }
}

/// `vmaf_image_sad_c`'s term of one plane pair: per-row `float` sums of
/// `|a - b|`, added up in `float`, divided by the sample count in `float`.
fn mean_abs_diff(a: &FloatPlane, b: &FloatPlane) -> f32 {
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
    accum / (a.width * a.height) as f32
}
