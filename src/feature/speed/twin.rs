//! What the GPU twins of `speed_chroma` and `speed_temporal`
//! (`gpu/feature/speed.rs`) take from these extractors: their set-ups
//! (options, geometry, prescaling, filters), the block statistics the
//! kernels fill, and the scores from them.

pub(crate) use super::chroma::{ChromaOutputs, ChromaSetup};
pub(crate) use super::config::SpeedConfig;
pub(crate) use super::core::{combine, filters, prescaler, SpeedScore};
pub(crate) use super::estimate::BlockStats;
pub(crate) use super::geometry::{Geometry, BLOCK_AREA};
pub(crate) use super::resample::ScaleMethod;
pub(crate) use super::temporal::TemporalSetup;
