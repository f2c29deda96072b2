//! What ciede's GPU twin (`gpu/feature/ciede.rs`) takes from this
//! extractor: the format check and chroma layout, and the score of the
//! frame's sum of colour differences.

pub(crate) use super::chroma::ChromaLayout;
pub(crate) use super::{check_format, feature_name, layout, score_of_sum};
