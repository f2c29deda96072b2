//! VMAFx's `motion_v2`: libvmaf 3.2.0's integer `motion` with its default
//! options under other names, bit for bit (`tests/golden/README.md`): the
//! SAD score, `motion2` = `min(sad[i], sad[i + 1])` and `motion3` = motion2
//! capped at 10000 (frame 0: the SAD of frame 1). No five-frame window; the
//! only option is `motion_moving_average` (names end in `_mma`).
//!
//! Everything but the names is the `motion` code: the same SAD, score and
//! window (`MotionOutputs`), and the same CPU instance type.

use super::window::BlendParams;
use super::{Config, MotionOutputs, Names};
use crate::error::Result;
use crate::feature::{CreateFn, Extractor, ExtractorInfo, OptionSpec, Options};
use crate::picture::PictureFormat;

const NAME: &str = "motion_v2";

pub const MOTION_V2_SAD: &str = "VMAF_integer_feature_motion_v2_sad_score";
pub const MOTION2_V2: &str = "VMAF_integer_feature_motion2_v2_score";
pub const MOTION3_V2: &str = "VMAF_integer_feature_motion3_v2_score";

static OPTIONS: [OptionSpec; 1] = [OptionSpec::bool("motion_moving_average", false).param("mma")];

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: NAME,
    aliases: &[],
    options: &OPTIONS,
    provides: &[MOTION_V2_SAD, MOTION2_V2, MOTION3_V2],
    create: create as CreateFn,
    joint: Some(&super::JOINT),
    gpu: Some(&crate::gpu::feature::motion::TWIN),
};

fn create(options: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    Ok(super::boxed(NAME, vec![outputs(options, format)?], *format))
}

/// The window, score and names of `motion_v2` with `options`.
pub(crate) fn outputs(options: &Options, format: &PictureFormat) -> Result<MotionOutputs> {
    MotionOutputs::with_config(NAME, config(options), format)
}

/// `motion`'s defaults (blend factor 1, cap 10000, fps weight 1, three-frame
/// window) with `motion_v2`'s names and moving-average choice.
fn config(o: &Options) -> Config {
    let suffix = o.name_suffix();
    const MAX_VAL: f64 = 10000.0;
    Config {
        force_zero: false,
        five_frame: false,
        fps_weight: 1.0,
        max_val: MAX_VAL,
        blend: BlendParams {
            blend_factor: 1.0,
            blend_offset: 40.0,
            max_val: MAX_VAL,
            moving_average: o.bool("motion_moving_average"),
        },
        names: Names {
            motion: None,
            motion2: format!("{MOTION2_V2}{suffix}"),
            motion3: format!("{MOTION3_V2}{suffix}"),
            sad: format!("{MOTION_V2_SAD}{suffix}"),
        },
    }
}
