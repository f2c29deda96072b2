//! What adm's GPU twin (`gpu/feature/adm.rs`) takes from this extractor,
//! and nothing else of it is used outside: the set-up from options and
//! format (`Config`, `Scoring`, `band_sizes`), the arithmetic the kernels
//! reproduce to give the CPU's bits (the CSF-weighted scale kernels, the
//! 1-degree cosine, the columns libvmaf decouples in vector blocks, the shifts of the decoupling and denominator stages,
//! the SIMD edge reads and rounding of the wavelet), and the scores and
//! names from per-scale sums (`ScaleSums`, `output`).

pub(crate) use super::cm::ScaleKernel;
pub(crate) use super::decouple::{cos_1deg_sq, vector_decoupled};
pub(crate) use super::den::{fine_row_shift, CoarseShifts};
pub(crate) use super::dwt::{coarse_simd_reads_past_row, simd_reads_past_row, COARSE_ROUNDING};
pub(crate) use super::output::{self, Names, Pooling};
pub(crate) use super::pipeline::{band_sizes, ScaleSums, Scoring, SCALES};
pub(crate) use super::region::Region;
pub(crate) use super::Config;
