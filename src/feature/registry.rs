//! The table of extractors by libvmaf name.

use super::ssimulacra2;
use super::{adm, cambi, motion, psnr, vif, CreateFn, Extractor, OptionSpec, Options};
use super::{ciede, psnr_hvs};
use super::{float_adm, float_motion, float_vif, speed};
use super::{float_ansnr, float_moment, float_ms_ssim, float_psnr, float_ssim};
use super::{integer_ms_ssim, integer_ssim};
use crate::error::{Error, Result};
use crate::gpu::feature::GpuTwin;
use crate::picture::PictureFormat;

/// What the registry knows of an extractor before creating one.
pub struct ExtractorInfo {
    /// libvmaf's extractor name (`--feature NAME`).
    pub name: &'static str,
    /// Other names [`find`] accepts for it (VMAFx's `integer_ssim` for
    /// `ssim`); the instance, its dedup key and its outputs are the same.
    pub aliases: &'static [&'static str],
    pub options: &'static [OptionSpec],
    /// Output names without option suffixes, as libvmaf's
    /// `provided_features` (models find extractors through these).
    pub provides: &'static [&'static str],
    pub create: CreateFn,
    /// Extractors with the same `joint` can have one instance serve several
    /// of their requests (`motion` and `motion_v2` compute one SAD).
    pub joint: Option<&'static JointWork>,
    /// Its GPU version, if it has one (several records may name one twin
    /// that serves their joint work).
    pub gpu: Option<&'static GpuTwin>,
}

/// One instance for requests of several extractors that do the same work.
pub struct JointWork {
    /// Creates an instance serving every `(extractor, options)` request, in
    /// order, each writing its own names; `None` when these requests cannot
    /// share the work (the caller then creates them apart).
    pub create: JointFn,
}

/// See [`JointWork::create`].
pub type JointFn =
    fn(&[(&'static ExtractorInfo, &Options)], &PictureFormat) -> Option<Result<Box<dyn Extractor>>>;

impl std::fmt::Debug for ExtractorInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtractorInfo")
            .field("name", &self.name)
            .finish()
    }
}

/// Every extractor this build knows.
pub static REGISTRY: &[&ExtractorInfo] = &[
    &adm::INFO,
    &motion::INFO,
    &vif::INFO,
    &psnr::INFO,
    &float_psnr::INFO,
    &float_moment::INFO,
    &float_ansnr::INFO,
    &float_ssim::INFO,
    &float_ms_ssim::INFO,
    &float_vif::INFO,
    &float_motion::INFO,
    &float_adm::INFO,
    &speed::chroma::INFO,
    &speed::temporal::INFO,
    &cambi::INFO,
    &ciede::INFO,
    &psnr_hvs::INFO,
    &integer_ssim::INFO,
    &motion::v2::INFO,
    &integer_ms_ssim::INFO,
    &ssimulacra2::INFO,
];

impl ExtractorInfo {
    /// Whether `name` is this extractor's name or one of its aliases.
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }
}

/// Finds an extractor by name or alias.
pub fn find(name: &str) -> Result<&'static ExtractorInfo> {
    REGISTRY
        .iter()
        .copied()
        .find(|i| i.answers_to(name))
        .ok_or_else(|| Error::UnknownFeature {
            name: name.to_string(),
            known: REGISTRY
                .iter()
                .flat_map(|i| std::iter::once(&i.name).chain(i.aliases))
                .copied()
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// Finds the extractor that provides an output name (e.g. `integer_adm2`).
pub fn find_provider(feature: &str) -> Option<&'static ExtractorInfo> {
    REGISTRY
        .iter()
        .copied()
        .find(|i| i.provides.contains(&feature))
}
