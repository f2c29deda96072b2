//! What cambi's GPU twin (`gpu/feature/cambi.rs`) takes from this
//! extractor: the set-up (`setup`, `Config`, `Geometry`), the tables and
//! thresholds its kernels reproduce (contrast weights, requantisation,
//! the spatial mask's threshold), and the pooling of per-scale c-values.

pub(crate) use super::c_values::CONTRAST_WEIGHTS;
pub(crate) use super::pooling::{combine_scales, top_k_count};
pub(crate) use super::preprocess::{nearest_indices, Requantize};
pub(crate) use super::spatial_mask::mask_threshold;
pub(crate) use super::{out_of_range_error, setup, Config, Geometry, NUM_SCALES};
