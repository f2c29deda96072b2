//! libvmaf's integer `motion` extractor (libvmaf 3.2.0 semantics).
//!
//! Per frame `i` it measures how much the *reference* luma changed since
//! frame `i - 1` (or `i - 2` with `motion_five_frame_window`): the mean
//! absolute value of the blurred difference, `VMAF_integer_feature_motion_sad_score`
//! (0 before the first comparable frame, weighted by `motion_fps_weight`,
//! capped at `motion_max_val`). `integer_motion2` and `integer_motion3` of a
//! frame also depend on the next frame's SAD, so they come out one frame
//! late (see `window`); `integer_motion` (with `debug`) is the SAD score.
//!
//! [`v2`] is VMAFx's `motion_v2`: the same numbers under other names. One
//! instance can write several name sets from one SAD per frame
//! ([`JOINT`]), so `motion` and `motion_v2` together cost one SAD.

mod sad;
mod sad_avx2;
mod sad_avx512;
pub mod v2;
mod window;

use super::Options;
use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, JointWork, OptionSpec};
use crate::error::{Error, Result};
use crate::picture::{
    HostPicture, PictureFormat, PlaneId, PlaneMask, PlaneRef, PlaneSamples, Sample,
};
use window::{BlendParams, Derived, MotionWindow};

pub use sad::{blurred_difference_sad, SadScratch};

const NAME: &str = "motion";

/// Output names before option suffixes (libvmaf's aliases; the SAD score
/// has none).
pub const MOTION: &str = "integer_motion";
pub const MOTION2: &str = "integer_motion2";
pub const MOTION3: &str = "integer_motion3";
pub const MOTION_SAD: &str = "VMAF_integer_feature_motion_sad_score";

/// libvmaf's option table, in its declaration order.
static OPTIONS: [OptionSpec; 8] = [
    OptionSpec::bool("motion_force_zero", false).param("force_0"),
    OptionSpec::double("motion_blend_factor", 1.0, 0.0, 1.0).param("mbf"),
    OptionSpec::double("motion_blend_offset", 40.0, 0.0, 1000.0).param("mbo"),
    OptionSpec::double("motion_fps_weight", 1.0, 0.0, 5.0).param("mfw"),
    OptionSpec::double("motion_max_val", 10000.0, 0.0, 10000.0).param("mmxv"),
    OptionSpec::bool("motion_five_frame_window", false).param("mffw"),
    OptionSpec::bool("motion_moving_average", false).param("mma"),
    OptionSpec::bool("debug", false),
];

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: NAME,
    aliases: &[],
    options: &OPTIONS,
    provides: &[MOTION, MOTION2, MOTION3, MOTION_SAD],
    create: create as CreateFn,
    joint: Some(&JOINT),
    gpu: Some(&crate::gpu::feature::motion::TWIN),
};

fn create(options: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    let outputs = MotionOutputs::create(options, format)?;
    Ok(boxed(NAME, vec![outputs], *format))
}

/// `motion` and `motion_v2` requests served by one instance: one SAD per
/// frame, each request's names and window.
pub static JOINT: JointWork = JointWork {
    create: create_joint,
};

fn create_joint(
    requests: &[(&'static ExtractorInfo, &Options)],
    format: &PictureFormat,
) -> Option<Result<Box<dyn Extractor>>> {
    Some(
        joint_outputs(requests, format)?.map(|outputs| boxed(requests[0].0.name, outputs, *format)),
    )
}

/// The name sets of `motion`/`motion_v2` requests served by one SAD (shared
/// with the GPU extractor); `None` when they cannot share it.
pub(crate) fn joint_outputs(
    requests: &[(&'static ExtractorInfo, &Options)],
    format: &PictureFormat,
) -> Option<Result<Vec<MotionOutputs>>> {
    let outputs = requests
        .iter()
        .map(|&(info, options)| {
            if std::ptr::eq(info, &v2::INFO) {
                v2::outputs(options, format)
            } else {
                MotionOutputs::create(options, format)
            }
        })
        .collect::<Result<Vec<_>>>();
    let outputs = match outputs {
        Ok(outputs) => outputs,
        Err(e) => return Some(Err(e)),
    };
    // One SAD serves sets that look back equally far (not a five-frame
    // window next to a three-frame one).
    let depth = outputs.first()?.depth();
    if outputs.iter().any(|o| o.depth() != depth) {
        return None;
    }
    Some(Ok(outputs))
}

/// One CPU instance writing every name set of `outputs` from one SAD per
/// frame. All sets must look back equally far (same [`MotionOutputs::depth`]).
fn boxed(
    name: &'static str,
    outputs: Vec<MotionOutputs>,
    format: PictureFormat,
) -> Box<dyn Extractor> {
    if format.bytes_per_sample() == 1 {
        Box::new(Motion::<u8>::new(name, outputs, format))
    } else {
        Box::new(Motion::<u16>::new(name, outputs, format))
    }
}

/// Resolved options and the output names they imply.
#[derive(Debug, Clone)]
struct Config {
    force_zero: bool,
    five_frame: bool,
    fps_weight: f64,
    max_val: f64,
    blend: BlendParams,
    names: Names,
}

#[derive(Debug, Clone)]
struct Names {
    /// `integer_motion`, written with `debug` only.
    motion: Option<String>,
    motion2: String,
    motion3: String,
    sad: String,
}

impl Config {
    fn from_options(o: &Options) -> Self {
        let suffix = o.name_suffix();
        Self {
            force_zero: o.bool("motion_force_zero"),
            five_frame: o.bool("motion_five_frame_window"),
            fps_weight: o.double("motion_fps_weight"),
            max_val: o.double("motion_max_val"),
            blend: BlendParams {
                blend_factor: o.double("motion_blend_factor"),
                blend_offset: o.double("motion_blend_offset"),
                max_val: o.double("motion_max_val"),
                moving_average: o.bool("motion_moving_average"),
            },
            names: Names {
                motion: o.bool("debug").then(|| format!("{MOTION}{suffix}")),
                motion2: format!("{MOTION2}{suffix}"),
                motion3: format!("{MOTION3}{suffix}"),
                sad: format!("{MOTION_SAD}{suffix}"),
            },
        }
    }
}

/// A luma sample type the extractor can read straight from a picture.
trait LumaSample: Sample {
    fn luma(picture: &HostPicture) -> Option<PlaneRef<'_, Self>>;
}

impl LumaSample for u8 {
    fn luma(picture: &HostPicture) -> Option<PlaneRef<'_, u8>> {
        match picture.plane(PlaneId::Y) {
            PlaneSamples::U8(p) => Some(p),
            PlaneSamples::U16(_) => None,
        }
    }
}

impl LumaSample for u16 {
    fn luma(picture: &HostPicture) -> Option<PlaneRef<'_, u16>> {
        match picture.plane(PlaneId::Y) {
            PlaneSamples::U16(p) => Some(p),
            PlaneSamples::U8(_) => None,
        }
    }
}

/// Everything of the extractor but the SAD itself: options, frame order,
/// the score of a SAD, and the `motion2`/`motion3` window (shared with the
/// GPU extractor, which computes the SAD on the device).
pub(crate) struct MotionOutputs {
    /// The extractor named in errors (`motion` or `motion_v2`).
    extractor: &'static str,
    config: Config,
    window: MotionWindow,
    /// Scratch for the frames the window completes.
    derived: Vec<Derived>,
    order: FrameOrder,
}

/// The next frame of an extractor that compares frames with earlier ones
/// (motion on either engine, float_motion on the GPU): frames must come in
/// order from 0.
#[derive(Default)]
pub(crate) struct FrameOrder {
    next: u32,
}

impl FrameOrder {
    /// Whether `index` is the next frame; the refusal names `extractor`.
    pub(crate) fn check(&self, extractor: &str, index: u32) -> Result<()> {
        if index != self.next {
            return Err(Error::Extractor {
                extractor: extractor.into(),
                reason: format!(
                    "frames must arrive in order from 0: expected frame {}, got {index}",
                    self.next
                ),
            });
        }
        Ok(())
    }

    /// Frame `index` is done with: the next one follows it.
    pub(crate) fn passed(&mut self, index: u32) {
        self.next = index + 1;
    }

    /// [`FrameOrder::check`], then [`FrameOrder::passed`].
    pub(crate) fn admit(&mut self, extractor: &str, index: u32) -> Result<()> {
        self.check(extractor, index)?;
        self.passed(index);
        Ok(())
    }
}

impl MotionOutputs {
    pub(crate) fn create(options: &Options, format: &PictureFormat) -> Result<Self> {
        Self::with_config(NAME, Config::from_options(options), format)
    }

    fn with_config(
        extractor: &'static str,
        config: Config,
        format: &PictureFormat,
    ) -> Result<Self> {
        if !config.force_zero && (format.width < 3 || format.height < 3) {
            return Err(Error::Extractor {
                extractor: extractor.into(),
                reason: format!(
                    "picture {}x{} is too small: the blur needs at least 3x3 luma samples",
                    format.width, format.height
                ),
            });
        }
        Ok(Self {
            extractor,
            window: MotionWindow::new(config.blend, config.five_frame),
            config,
            derived: Vec::with_capacity(4),
            order: FrameOrder::default(),
        })
    }

    /// True when every score is 0 and no SAD is needed.
    pub(crate) fn force_zero(&self) -> bool {
        self.config.force_zero
    }

    /// How many earlier frames the SAD looks back (1, or 2 with the
    /// five-frame window): frames before it have no SAD.
    pub(crate) fn depth(&self) -> u32 {
        self.window.min_idx()
    }

    /// Frames must come in order from 0.
    pub(crate) fn check_next(&self, index: u32) -> Result<()> {
        self.order.check(self.extractor, index)
    }

    /// Emits frame `index`'s score from its SAD (`None` before the first
    /// comparable frame or with `motion_force_zero`) over `area` samples,
    /// and the `motion2`/`motion3` values it completes.
    pub(crate) fn frame(
        &mut self,
        index: u32,
        sad: Option<u64>,
        area: u32,
        sink: &mut FeatureSink,
    ) {
        self.order.passed(index);
        let score = match sad {
            Some(sad) => {
                // libvmaf: (double)sad / 256. / (w * h), the area as unsigned int.
                let weighted = sad as f64 / 256.0 / area as f64 * self.config.fps_weight;
                if weighted < self.config.max_val {
                    weighted
                } else {
                    self.config.max_val
                }
            }
            None => 0.0,
        };
        sink.emit(index, &self.config.names.sad, score);
        if let Some(name) = &self.config.names.motion {
            sink.emit(index, name, score);
        }
        self.window.push(score, &mut self.derived);
        self.emit_derived(sink);
    }

    pub(crate) fn flush(&mut self, sink: &mut FeatureSink) {
        self.window.flush(&mut self.derived);
        self.emit_derived(sink);
    }

    fn emit_derived(&mut self, sink: &mut FeatureSink) {
        for d in self.derived.drain(..) {
            sink.emit(d.index, &self.config.names.motion2, d.motion2);
            sink.emit(d.index, &self.config.names.motion3, d.motion3);
        }
    }
}

struct Motion<T> {
    name: &'static str,
    /// The name sets written, each with its own window; all fed the same SAD.
    outputs: Vec<MotionOutputs>,
    format: PictureFormat,
    /// How many frames back the SAD looks (the same for every set).
    depth: u32,
    /// Whether some set needs the SAD (not all are `motion_force_zero`).
    needs_sad: bool,
    /// Earlier reference luma planes, tightly packed: slot `i % depth` holds
    /// frame `i` (depth 1, or 2 with the five-frame window).
    history: Vec<Vec<T>>,
    scratch: SadScratch,
}

impl<T: LumaSample> Motion<T> {
    fn new(name: &'static str, outputs: Vec<MotionOutputs>, format: PictureFormat) -> Self {
        let (w, h) = (format.width as usize, format.height as usize);
        let depth = outputs[0].depth();
        assert!(
            outputs.iter().all(|o| o.depth() == depth),
            "motion: joint name sets must share the SAD's depth"
        );
        let needs_sad = outputs.iter().any(|o| !o.force_zero());
        let (history, scratch) = if needs_sad {
            (
                vec![vec![T::default(); w * h]; depth as usize],
                SadScratch::new(w),
            )
        } else {
            (Vec::new(), SadScratch::default())
        };
        Self {
            name,
            outputs,
            format,
            depth,
            needs_sad,
            history,
            scratch,
        }
    }

    /// The frame's SAD against frame `index - depth`, if it has one; also
    /// stores its luma for later frames.
    fn sad(&mut self, index: u32, current: &PlaneRef<'_, T>) -> Option<u64> {
        let (w, h) = (current.width, current.height);
        let slot = index as usize % self.history.len();
        let mut sad = None;
        if index >= self.depth {
            let earlier = PlaneRef {
                data: &self.history[slot],
                width: w,
                height: h,
                stride: w,
            };
            sad = Some(sad::blurred_difference_sad(
                &earlier,
                current,
                self.format.bit_depth as u32,
                &mut self.scratch,
            ));
        }
        let stored = &mut self.history[slot];
        for y in 0..h {
            stored[y * w..(y + 1) * w].copy_from_slice(current.row(y));
        }
        sad
    }
}

impl<T: LumaSample> Extractor for Motion<T> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn planes(&self) -> PlaneMask {
        PlaneMask::LUMA
    }

    fn temporal(&self) -> bool {
        true
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        for o in &self.outputs {
            o.check_next(frame.index)?;
        }
        if *frame.reference.format() != self.format {
            return Err(Error::PictureMismatch(format!(
                "{} was set up for {} pictures, got {}",
                self.name,
                self.format,
                frame.reference.format()
            )));
        }
        let sad = if self.needs_sad {
            let luma = T::luma(frame.reference).ok_or_else(|| {
                Error::PictureMismatch(format!(
                    "{}: {} luma has the wrong sample width",
                    self.name, self.format
                ))
            })?;
            self.sad(frame.index, &luma)
        } else {
            None
        };
        let area = self.format.width.wrapping_mul(self.format.height);
        for o in &mut self.outputs {
            let sad = if o.force_zero() { None } else { sad };
            o.frame(frame.index, sad, area, sink);
        }
        Ok(())
    }

    fn flush(&mut self, sink: &mut FeatureSink) -> Result<()> {
        for o in &mut self.outputs {
            o.flush(sink);
        }
        Ok(())
    }
}

#[cfg(test)]
mod frame_order_tests {
    use super::FrameOrder;

    #[test]
    fn frames_out_of_order_are_refused_by_name() {
        let mut order = FrameOrder::default();
        order.admit("motion", 0).unwrap();
        order.admit("motion", 1).unwrap();
        let e = order.admit("float_motion", 3).unwrap_err().to_string();
        assert!(e.contains("float_motion"), "{e}");
        assert!(e.contains("expected frame 2, got 3"), "{e}");
        // A refused frame does not advance the order.
        order.admit("motion", 2).unwrap();
    }
}
