//! `float_moment`: first and second moments of the luma samples of both
//! pictures (libvmaf `float_moment.c` and `moment.c`).

use super::common::picture_copy::{check_bit_depth, picture_copy};
use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, Options};
use crate::error::Result;
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: "float_moment",
    aliases: &[],
    options: &[],
    provides: &[
        "float_moment_ref1st",
        "float_moment_dis1st",
        "float_moment_ref2nd",
        "float_moment_dis2nd",
    ],
    create: create as CreateFn,
    joint: None,
    gpu: Some(&crate::gpu::feature::float_moment::TWIN),
};

fn create(_: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    check_bit_depth(INFO.name, format)?;
    Ok(Box::new(FloatMoment {
        samples: Vec::new(),
    }))
}

struct FloatMoment {
    samples: Vec<f32>,
}

impl Extractor for FloatMoment {
    fn name(&self) -> &'static str {
        INFO.name
    }

    fn planes(&self) -> PlaneMask {
        PlaneMask::LUMA
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        picture_copy(frame.reference, PlaneId::Y, 0, &mut self.samples);
        let (ref1, ref2) = moments(&self.samples);
        picture_copy(frame.distorted, PlaneId::Y, 0, &mut self.samples);
        let (dis1, dis2) = moments(&self.samples);
        sink.emit(frame.index, "float_moment_ref1st", ref1);
        sink.emit(frame.index, "float_moment_dis1st", dis1);
        sink.emit(frame.index, "float_moment_ref2nd", ref2);
        sink.emit(frame.index, "float_moment_dis2nd", dis2);
        Ok(())
    }
}

/// Mean of the samples and of their squares (`f32` squares summed in
/// `f64`, as `compute_1st_moment` / `compute_2nd_moment`).
fn moments(samples: &[f32]) -> (f64, f64) {
    let (mut first, mut second) = (0.0f64, 0.0f64);
    for &s in samples {
        first += s as f64;
        second += (s * s) as f64;
    }
    moments_of_sums(first, second, samples.len())
}

/// The moments from the sums of `samples` samples and of their squares
/// (shared with the GPU extractor).
pub(crate) fn moments_of_sums(first: f64, second: f64, samples: usize) -> (f64, f64) {
    let n = samples as f64;
    (first / n, second / n)
}
