//! GPU extractors: the same libvmaf names, options and outputs as their CPU
//! counterparts, with the per-pixel work in kernels.
//!
//! A GPU extractor queues a frame's work on the context's stream
//! ([`GpuExtractor::enqueue`]) and hands its values over later
//! ([`GpuExtractor::complete`]), so the host reads the next frame while the
//! device works. Each frame clears its accumulators before its kernels.

//!
//! Each GPU extractor's file defines its [`GpuTwin`] (`TWIN`), which its
//! CPU extractor's registry record names: the registry is the one list.

pub(crate) mod adm;
pub(crate) mod cambi;
pub(crate) mod ciede;
pub(crate) mod float_adm;
mod float_common;
pub(crate) mod float_moment;
pub(crate) mod float_motion;
pub(crate) mod float_ms_ssim;
pub(crate) mod float_psnr;
pub(crate) mod float_ssim;
pub(crate) mod float_vif;
pub(crate) mod integer_ms_ssim;
pub(crate) mod integer_ssim;
pub(crate) mod motion;
pub(crate) mod psnr;
pub(crate) mod psnr_hvs;
mod readback;
pub(crate) mod speed;
pub(crate) mod ssimulacra2;
pub(crate) mod vif;

use super::device::{Gpu, Stream};
use super::kernels::KernelSource;
use super::planes::{FramePlanes, PairPlanes};
use super::GpuBackend;
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

/// Instances of a frames-independent extractor whose frame is a long
/// chain of launches that leaves most of the device idle: speed_chroma's
/// estimate (one block per plane, sums in the CPU's order) and cambi's
/// scales. Each frame's chain runs beside three others. H200,
/// `vmaf_v1.0.16_3d0h` device-fed (one instance of speed_chroma, two of
/// cambi above 1440p before): 1080p 2,223 -> 5,417-5,444 fps, 2160p
/// 1,131-1,162 -> 1,219-1,223; three gave 5,155-5,163 and 1,214-1,222, six
/// no more (`docs/performance.md`, ADR 0034).
pub(super) const SPREAD_LONG_CHAINS: usize = 4;

/// An extractor's GPU version, named by its registry record
/// ([`ExtractorInfo::gpu`]): how to create it, the kernel modules it loads
/// and the backends it runs on.
pub struct GpuTwin {
    /// Creates the GPU extractor serving a context slot's requests (one, or
    /// several sharing their work: ADR 0018); `None` where these options or
    /// this format have no GPU version (the CPU extractor scores them).
    pub create: TwinFn,
    /// The modules of `kernels/` its kernels come from.
    pub modules: &'static [&'static KernelSource],
    /// The backends it runs on.
    pub backends: &'static [GpuBackend],
}

/// See [`GpuTwin::create`].
pub type TwinFn = fn(
    &[(&'static ExtractorInfo, &Options)],
    &PictureFormat,
    &Gpu,
) -> Option<Result<Box<dyn GpuExtractor>>>;

/// Both GPU backends.
pub(crate) const EVERY_BACKEND: &[GpuBackend] = &[GpuBackend::Cuda, GpuBackend::Hip];

/// The [`GpuTwin`] of an extractor served one request at a time by
/// `TYPE::create(options, format, gpu) -> Result<TYPE>`.
macro_rules! single_twin {
    ($ty:ty, $modules:expr, $backends:expr) => {
        $crate::gpu::feature::GpuTwin {
            create: |requests, format, gpu| {
                let [(_, options)] = requests else {
                    return None;
                };
                Some(
                    <$ty>::create(options, format, gpu)
                        .map(|x| Box::new(x) as Box<dyn $crate::gpu::feature::GpuExtractor>),
                )
            },
            modules: $modules,
            backends: $backends,
        }
    };
}
use single_twin;

impl GpuTwin {
    /// Whether it runs on `gpu`'s backend (the test drivers act as CUDA).
    pub fn runs_on(&self, gpu: &Gpu) -> bool {
        self.backends.contains(&gpu.backend())
    }
}

/// The GPU version of extractor `name` (or alias), if there is one for these
/// options, this format and `gpu`'s backend.
pub fn create(
    name: &str,
    options: &Options,
    format: &PictureFormat,
    gpu: &Gpu,
) -> Option<Result<Box<dyn GpuExtractor>>> {
    let info = crate::feature::find(name).ok()?;
    create_joint(&[(info, options)], format, gpu)
}

/// The GPU version of a context slot serving `requests` (several only for
/// extractors sharing their work, ADR 0018: `motion` and `motion_v2` write
/// their names from one SAD), if there is one.
pub(crate) fn create_joint(
    requests: &[(&'static ExtractorInfo, &Options)],
    format: &PictureFormat,
    gpu: &Gpu,
) -> Option<Result<Box<dyn GpuExtractor>>> {
    let twin = requests.first()?.0.gpu?;
    let same_twin = requests
        .iter()
        .all(|(info, _)| info.gpu.is_some_and(|t| std::ptr::eq(t, twin)));
    if !same_twin || !twin.runs_on(gpu) {
        return None;
    }
    (twin.create)(requests, format, gpu)
}

/// Names of the extractors with a GPU version on some backend (`float_vif`
/// only with kernel scale 1 and no prescaling, `cambi` only on CUDA;
/// otherwise the CPU extractor scores them).
pub fn available() -> impl Iterator<Item = &'static str> {
    crate::feature::REGISTRY
        .iter()
        .filter(|info| info.gpu.is_some())
        .map(|info| info.name)
}

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
