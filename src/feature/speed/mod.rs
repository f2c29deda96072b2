//! libvmaf's SpEED extractors (spatial efficient entropic differencing):
//! `speed_chroma` compares the Cb and Cr planes of reference and distorted,
//! `speed_temporal` the differences of consecutive luma frames.
//!
//! Both run one core: the plane (offset by -128) is optionally prescaled,
//! low-passed and decimated by 16, and its local mean removed; a Gaussian
//! scale mixture is fitted on its 5x5 blocks (one covariance matrix, its
//! eigenvalues, and a linear solve per block) to estimate each block's
//! entropy and variance; the score is the mean absolute difference of the
//! variance-weighted entropies of reference and distorted.
//!
//! Every step keeps libvmaf's `f32`/`f64` types and operation order, so the
//! scores are bit-identical to its own.

mod config;
pub(crate) mod convolve;
mod core;
mod estimate;
mod geometry;
mod kernels;
mod linalg;
pub(crate) mod resample;

pub mod chroma;
pub mod temporal;
pub(crate) mod twin;
