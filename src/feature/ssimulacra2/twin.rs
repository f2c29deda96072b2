//! What the GPU twin (`gpu::feature::ssimulacra2`) takes from the CPU
//! extractor: the format check, the option, the scales, every constant the
//! kernels use (computed here, as the CPU computes them), and the score
//! from the per-scale sums.

use super::colour::{Coefficients, YuvMatrix};
use super::{blur, linear, maps, score, xyb};
use crate::error::Result;
use crate::feature::Options;
use crate::picture::PictureFormat;

pub(crate) use super::check_format;
pub(crate) use super::maps::SUMS;
pub(crate) use super::score::ScaleNorms;
pub(crate) use super::{scale_sizes, MAX_SCALES};

/// The `yuv_matrix` option (refused outside [0, 3] as the CPU refuses it).
pub(crate) fn matrix(options: &Options) -> Result<YuvMatrix> {
    super::matrix_of(options)
}

/// The conversion's `f32` constants, in the kernel's `struct Colour`
/// order.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ColourConstants {
    pub coefficients: Coefficients,
    /// `1 / (2^bits - 1)`.
    pub inv_peak: f32,
    pub p: [f32; 5],
    pub q: [f32; 5],
    pub threshold: f32,
    pub low_div_inv: f32,
    pub opsin: [f32; 9],
    pub bias: f32,
    pub neg_bias_cbrt: f32,
}

impl ColourConstants {
    pub(crate) fn new(matrix: YuvMatrix, format: &PictureFormat) -> Self {
        Self {
            coefficients: Coefficients::new(matrix),
            inv_peak: super::colour::inv_peak(format.bit_depth),
            p: linear::P,
            q: linear::Q,
            threshold: linear::THRESHOLD,
            low_div_inv: linear::LOW_DIV_INV,
            opsin: xyb::OPSIN,
            bias: xyb::BIAS,
            neg_bias_cbrt: xyb::neg_bias_cbrt(),
        }
    }
}

/// The blur's constants (sigma 1.5).
pub(crate) fn blur_constants() -> blur::RecursiveGaussian {
    blur::RecursiveGaussian::new(blur::SIGMA)
}

/// The norms of one scale from its sums (per channel, [`SUMS`] of them in
/// [`maps::channel_sums`] order) over `pixels` pixels.
pub(crate) fn scale_norms(sums: &[[f64; SUMS]; 3], pixels: usize) -> ScaleNorms {
    let mut norms = ScaleNorms::default();
    for (c, sums) in sums.iter().enumerate() {
        (norms.ssim[c], norms.edge[c]) = maps::norms(sums, pixels);
    }
    norms
}

/// The score of one frame from its scales' norms.
pub(crate) fn frame_score(scales: &[ScaleNorms]) -> f64 {
    score::score(scales)
}
