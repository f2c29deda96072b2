//! What psnr_hvs's GPU twin (`gpu/feature/psnr_hvs.rs`) takes from this
//! extractor: the scored sizes and plane weights, the CSF weights its
//! kernels apply, and the scores from per-plane totals.

pub(crate) use super::blocks::{block_count, score_of_total};
pub(crate) use super::csf::Weights;
pub(crate) use super::{emit_scores, plane_weights, scored_sizes};
