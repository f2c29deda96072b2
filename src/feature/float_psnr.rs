//! `float_psnr`: luma PSNR on float samples (libvmaf `float_psnr.c` and
//! `compute_psnr`), the float model's PSNR feature.

use super::common::picture_copy::picture_copy;
use super::common::psnr_scale::PsnrScale;
use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, Options};
use crate::error::Result;
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: "float_psnr",
    aliases: &[],
    options: &[],
    provides: &["float_psnr"],
    create: create as CreateFn,
    joint: None,
    gpu: Some(&crate::gpu::feature::float_psnr::TWIN),
};

fn create(_: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    Ok(Box::new(FloatPsnr {
        scale: PsnrScale::for_format(INFO.name, format)?,
        reference: Vec::new(),
        distorted: Vec::new(),
    }))
}

struct FloatPsnr {
    scale: PsnrScale,
    reference: Vec<f32>,
    distorted: Vec<f32>,
}

impl Extractor for FloatPsnr {
    fn name(&self) -> &'static str {
        INFO.name
    }

    fn planes(&self) -> PlaneMask {
        PlaneMask::LUMA
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        picture_copy(frame.reference, PlaneId::Y, 0, &mut self.reference);
        picture_copy(frame.distorted, PlaneId::Y, 0, &mut self.distorted);
        let score = psnr(&self.reference, &self.distorted, self.scale);
        sink.emit(frame.index, "float_psnr", score);
        Ok(())
    }
}

/// libvmaf's `compute_psnr`: squared `f32` differences summed in `f64`.
fn psnr(reference: &[f32], distorted: &[f32], scale: PsnrScale) -> f64 {
    let mut noise = 0.0f64;
    for (&r, &d) in reference.iter().zip(distorted) {
        let diff = r - d;
        noise += (diff * diff) as f64;
    }
    psnr_of_sum(noise, reference.len(), scale)
}

/// The score of `noise`, the sum of the squared differences of `samples`
/// sample pairs (shared with the GPU extractor).
pub(crate) fn psnr_of_sum(noise: f64, samples: usize, scale: PsnrScale) -> f64 {
    let noise = noise / samples as f64;
    let eps = 1e-10;
    let db = 10.0 * (scale.peak * scale.peak / noise.max(eps)).log10();
    db.min(scale.psnr_max)
}
