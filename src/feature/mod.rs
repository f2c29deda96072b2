//! Feature extractors: the [`Extractor`] trait, the values they emit, and the
//! registry that finds them by libvmaf name.
//!
//! An extractor is a record (name, options, planes read, outputs provided)
//! plus per-instance state. The context creates instances through the
//! registry, so a model or the command line only ever names features.

mod c_text;
pub mod options;
pub mod registry;

pub mod adm;
pub mod cambi;
pub mod ciede;
pub(crate) mod common;
pub mod float_adm;
pub mod float_ansnr;
pub mod float_moment;
pub mod float_motion;
pub mod float_ms_ssim;
pub mod float_psnr;
pub mod float_ssim;
pub mod float_vif;
pub mod integer_ms_ssim;
pub mod integer_ssim;
pub mod motion;
pub mod psnr;
pub mod psnr_hvs;
pub mod speed;
pub mod ssimulacra2;
pub mod vif;

use crate::error::Result;
use crate::picture::{HostPicture, PictureFormat, PlaneMask};
pub use options::{OptionSpec, OptionValue, Options, RawOptions};
pub use registry::{find, ExtractorInfo, JointWork, REGISTRY};

/// One reference/distorted pair handed to an extractor.
#[derive(Clone, Copy)]
pub struct FrameInput<'a> {
    /// Frame index in the input (not in the subsampled output).
    pub index: u32,
    pub reference: &'a HostPicture,
    pub distorted: &'a HostPicture,
}

/// Where extractors put per-frame feature values.
#[derive(Debug, Default, Clone)]
pub struct FeatureSink {
    values: Vec<(u32, String, f64)>,
    aggregates: Vec<(String, f64)>,
}

impl FeatureSink {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `value` for feature `name` at frame `index`. Temporal
    /// extractors may emit for an earlier frame than the one being extracted.
    pub fn emit(&mut self, index: u32, name: &str, value: f64) {
        self.values.push((index, name.to_string(), value));
    }

    pub fn drain(&mut self) -> std::vec::Drain<'_, (u32, String, f64)> {
        self.values.drain(..)
    }

    pub fn values(&self) -> &[(u32, String, f64)] {
        &self.values
    }

    /// Records a whole-run value (libvmaf's
    /// `vmaf_feature_collector_set_aggregate`, e.g. psnr's `apsnr_y`, which
    /// the `vmaf` tool prints under `aggregate_metrics`), set in `flush`.
    pub fn set_aggregate(&mut self, name: &str, value: f64) {
        self.aggregates.push((name.to_string(), value));
    }

    pub fn drain_aggregates(&mut self) -> std::vec::Drain<'_, (String, f64)> {
        self.aggregates.drain(..)
    }

    pub fn aggregates(&self) -> &[(String, f64)] {
        &self.aggregates
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty() && self.aggregates.is_empty()
    }
}

/// A running feature extractor.
///
/// Non-temporal extractors see each frame independently, so the context may
/// run several instances in parallel on different frames. A temporal one
/// (`temporal() == true`) gets every frame of the input, in order, on one
/// instance, even under `--subsample`.
pub trait Extractor: Send {
    /// libvmaf's extractor name, e.g. `adm`.
    fn name(&self) -> &'static str;

    /// The planes this extractor reads (a later GPU context uploads only
    /// these).
    fn planes(&self) -> PlaneMask;

    /// True when results depend on earlier frames.
    fn temporal(&self) -> bool {
        false
    }

    /// Computes the features of one frame.
    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()>;

    /// Emits what is still pending after the last frame (e.g. `motion2` of
    /// the last frame).
    fn flush(&mut self, _sink: &mut FeatureSink) -> Result<()> {
        Ok(())
    }
}

/// Creates an extractor instance for pictures of `format`.
pub type CreateFn = fn(&Options, &PictureFormat) -> Result<Box<dyn Extractor>>;
