//! GPU extractors: the same libvmaf names, options and outputs as their CPU
//! counterparts, with the per-pixel work in kernels.
//!
//! A GPU extractor queues a frame's work on the context's stream
//! ([`GpuExtractor::enqueue`]) and hands its values over later
//! ([`GpuExtractor::complete`]), so the host reads the next frame while the
//! device works. Each frame clears its accumulators before its kernels.

mod adm;
mod cambi;
mod ciede;
mod float_adm;
mod float_common;
mod float_moment;
mod float_motion;
mod float_ms_ssim;
mod float_psnr;
mod float_ssim;
mod float_vif;
mod integer_ssim;
mod motion;
mod psnr;
mod psnr_hvs;
mod readback;
mod speed;
mod vif;

use super::device::{Gpu, Stream};
use super::planes::{FramePlanes, PairPlanes};
use crate::error::Result;
use crate::feature::{ExtractorInfo, FeatureSink, Options};
use crate::picture::PictureFormat;

/// Frames an extractor may have queued when `submit` returns: while the
/// host waits for the oldest one's values, the device has the next ones to
/// work on (and their kernels run beside each other on the lanes). Every
/// per-frame resource ring (results, partial sums) holds one more.
pub(crate) const IN_FLIGHT: usize = 2;

pub trait GpuExtractor: Send {
    fn name(&self) -> &'static str;

    /// The planes the kernels read (the context uploads only these).
    fn planes(&self) -> PairPlanes;

    /// Queues frame `index`'s work on `stream`. Frames come in order.
    fn enqueue(&mut self, index: u32, planes: &FramePlanes<'_>, stream: &Stream) -> Result<()>;

    /// Waits for the oldest queued frame and emits its values; returns its
    /// index, or `None` when nothing is queued.
    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>>;

    /// Emits what is left after the last frame (all frames completed).
    fn flush(&mut self, _sink: &mut FeatureSink) -> Result<()> {
        Ok(())
    }

    /// How many instances of this extractor the engine should create for
    /// pictures of `format`, taking frames in turn, each on its own lane.
    /// More than one only where a frame's values depend on that frame alone
    /// (nothing carried from frame to frame, nothing left for `flush`) and
    /// spreading was measured to pay (see `SPREAD`).
    fn instances(&self, _format: &PictureFormat) -> usize {
        1
    }
}

/// Instances of a frames-independent extractor where spreading pays: with
/// two, frame N+1's first (large) kernels run beside frame N's coarse
/// scales, which leave most of the device idle. H200, 1080p `vmaf_v0.6.1`:
/// 7,700 -> 8,900 fps; three gave no more (`docs/performance.md`, "Where the
/// time goes").
pub(crate) const SPREAD: usize = 2;

/// [`SPREAD`] up to 1440p, one instance above: at 2160p the integer VIF
/// and ADM fill the device on their own, and spreading them lost 0.5-1 %.
pub(super) fn spread_up_to_1440p(format: &PictureFormat) -> usize {
    if u64::from(format.width) * u64::from(format.height) <= 2560 * 1440 {
        SPREAD
    } else {
        1
    }
}

/// The GPU version of extractor `name`, if there is one.
pub fn create(
    name: &str,
    options: &Options,
    format: &PictureFormat,
    gpu: &Gpu,
) -> Option<Result<Box<dyn GpuExtractor>>> {
    match name {
        "psnr" => Some(
            psnr::GpuPsnr::create(options, format, gpu)
                .map(|x| Box::new(x) as Box<dyn GpuExtractor>),
        ),
        "motion" | "motion_v2" => {
            let info = crate::feature::find(name).ok()?;
            create_joint(&[(info, options)], format, gpu)
        }
        "vif" => Some(
            vif::GpuVif::create(options, format, gpu).map(|x| Box::new(x) as Box<dyn GpuExtractor>),
        ),
        "adm" => Some(
            adm::GpuAdm::create(options, format, gpu).map(|x| Box::new(x) as Box<dyn GpuExtractor>),
        ),
        "float_motion" => Some(
            float_motion::GpuFloatMotion::create(options, format, gpu)
                .map(|x| Box::new(x) as Box<dyn GpuExtractor>),
        ),
        "float_vif" => float_vif::GpuFloatVif::create(options, format, gpu)
            .map(|x| x.map(|x| Box::new(x) as Box<dyn GpuExtractor>)),
        "float_psnr" => Some(
            float_psnr::GpuFloatPsnr::create(options, format, gpu)
                .map(|x| Box::new(x) as Box<dyn GpuExtractor>),
        ),
        "float_adm" => Some(
            float_adm::GpuFloatAdm::create(options, format, gpu)
                .map(|x| Box::new(x) as Box<dyn GpuExtractor>),
        ),
        "float_moment" => Some(
            float_moment::GpuFloatMoment::create(options, format, gpu)
                .map(|x| Box::new(x) as Box<dyn GpuExtractor>),
        ),
        "float_ssim" => Some(
            float_ssim::GpuFloatSsim::create(options, format, gpu)
                .map(|x| Box::new(x) as Box<dyn GpuExtractor>),
        ),
        "float_ms_ssim" => Some(
            float_ms_ssim::GpuFloatMsSsim::create(options, format, gpu)
                .map(|x| Box::new(x) as Box<dyn GpuExtractor>),
        ),
        "ssim" => Some(
            integer_ssim::GpuIntegerSsim::create(options, format, gpu)
                .map(|x| Box::new(x) as Box<dyn GpuExtractor>),
        ),
        "ciede" => Some(
            ciede::GpuCiede::create(options, format, gpu)
                .map(|x| Box::new(x) as Box<dyn GpuExtractor>),
        ),
        "psnr_hvs" => Some(
            psnr_hvs::GpuPsnrHvs::create(options, format, gpu)
                .map(|x| Box::new(x) as Box<dyn GpuExtractor>),
        ),
        "speed_chroma" => Some(
            speed::GpuSpeedChroma::create(options, format, gpu)
                .map(|x| Box::new(x) as Box<dyn GpuExtractor>),
        ),
        "speed_temporal" => Some(
            speed::GpuSpeedTemporal::create(options, format, gpu)
                .map(|x| Box::new(x) as Box<dyn GpuExtractor>),
        ),
        // The c-values kernel needs more shared memory per block (81 KiB
        // with the default options) than AMD parts give (64 KiB): on HIP
        // the CPU extractor scores cambi.
        "cambi" if gpu.backend() != "HIP" => Some(
            cambi::GpuCambi::create(options, format, gpu)
                .map(|x| Box::new(x) as Box<dyn GpuExtractor>),
        ),
        _ => None,
    }
}

/// The GPU version of a context slot serving `requests` (several only for
/// extractors sharing their work, ADR 0018: `motion` and `motion_v2` write
/// their names from one SAD), if there is one.
pub(crate) fn create_joint(
    requests: &[(&'static ExtractorInfo, &Options)],
    format: &PictureFormat,
    gpu: &Gpu,
) -> Option<Result<Box<dyn GpuExtractor>>> {
    match requests {
        [] => None,
        [(info, options)] if !matches!(info.name, "motion" | "motion_v2") => {
            create(info.name, options, format, gpu)
        }
        _ if requests
            .iter()
            .all(|(i, _)| matches!(i.name, "motion" | "motion_v2"))
            && format.width <= motion::MAX_WIDTH =>
        {
            Some(
                motion::GpuMotion::create(requests, format, gpu)?
                    .map(|x| Box::new(x) as Box<dyn GpuExtractor>),
            )
        }
        _ => None,
    }
}

/// Names of the extractors with a GPU version.
/// (`float_vif` only with kernel scale 1 and no prescaling, `cambi` only on
/// CUDA; otherwise the CPU extractor scores them.)
pub const AVAILABLE: &[&str] = &[
    "psnr",
    "adm",
    "motion",
    "motion_v2",
    "vif",
    "float_motion",
    "float_vif",
    "float_psnr",
    "float_moment",
    "float_adm",
    "float_ssim",
    "float_ms_ssim",
    "ssim",
    "ciede",
    "psnr_hvs",
    "speed_chroma",
    "speed_temporal",
    "cambi",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::picture::ChromaSubsampling;

    #[test]
    fn spreading_stops_above_1440p() {
        let at = |w, h| {
            spread_up_to_1440p(&PictureFormat::new(w, h, ChromaSubsampling::Yuv420, 8).unwrap())
        };
        assert_eq!(at(1920, 1080), SPREAD);
        assert_eq!(at(2560, 1440), SPREAD);
        assert_eq!(at(3840, 2160), 1);
    }
}
