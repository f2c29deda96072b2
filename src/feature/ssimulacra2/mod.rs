//! `ssimulacra2`: SSIMULACRA 2 (Jon Sneyers, Cloudinary), libjxl's
//! `tools/ssimulacra2.cc` (commit `aea3a06e`, the April 2023 weights) on
//! the R'G'B' picture VMAFx's conversion makes of each frame.
//!
//! Per frame pair (every step a public function here, so a GPU twin can
//! produce the same bits step by step):
//!
//! 1. [`colour::to_srgb`]: Y'CbCr to sRGB-encoded R'G'B' in [0, 1]
//!    (`yuv_matrix`: 0 BT.709 limited, 1 BT.601 limited, 2 BT.709 full,
//!    3 BT.601 full), nearest-neighbour chroma.
//! 2. [`linear::to_linear`]: to linear light (libjxl's rational polynomial).
//! 3. Per scale, at most six: [`downsample::downsample`] (2x2 box in linear
//!    RGB, from scale 1 on), [`xyb::to_xyb`] (XYB made positive), and per
//!    channel five recursive Gaussian blurs ([`blur::Blur`], sigma 1.5) of
//!    a, b, a a, b b, a b, then [`maps::channel_sums`] (the SSIM and edge
//!    error terms, summed per column, then across columns in a fixed
//!    tree) and [`maps::norms`].
//! 4. [`score::score`]: the weighted sum of the 108 norms and libjxl's
//!    final polynomial, in `f64`; not clamped (it can go below 0).
//!
//! Sizes: like libjxl's tool, pictures under 8x8 are refused. A scale is
//! computed while the previous one is at least 8 pixels on each side, so
//! the last one may be smaller (321x179 gives 11x6 at scale 5); a picture
//! whose scales stop early (e.g. 64x64: five) keeps libjxl's reading of
//! the weights in sequence (see [`score::score`]). 4:0:0 input is refused
//! (the metric needs colour).
//!
//! Operation order: `f32` where libjxl uses `float`, fused multiply-adds
//! exactly where libjxl's Highway code uses `MulAdd` (colour conversion,
//! transfer function, opsin matrix, cube root, both blur passes), `f64`
//! for the error terms and sums. The blur decides the bits: see
//! [`blur`] and ADR 0017. The sums alone are not added in libjxl's order
//! (one running sum in raster order) but per column, then in a tree, so
//! the GPU twin (`twin.rs`, kernels/ssimulacra2.cu) gives the same bits.

pub mod blur;
pub mod colour;
pub mod downsample;
pub(crate) mod fma;
pub mod linear;
pub mod maps;
pub mod planes;
pub mod score;
pub(crate) mod twin;
pub mod xyb;

use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, OptionSpec, Options};
use crate::error::{Error, Result};
use crate::picture::{ChromaSubsampling, HostPicture, PictureFormat, PlaneMask};
use blur::Blur;
use colour::YuvMatrix;
use planes::Planes3;
use score::ScaleNorms;

static OPTIONS: [OptionSpec; 1] = [OptionSpec::int("yuv_matrix", 0, 0, 3)];

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: "ssimulacra2",
    aliases: &[],
    options: &OPTIONS,
    provides: &["ssimulacra2"],
    create: create as CreateFn,
    joint: None,
    gpu: Some(&crate::gpu::feature::ssimulacra2::TWIN),
};

/// Scales at most (1:1 to 1:32).
pub const MAX_SCALES: usize = 6;
/// libjxl's smallest picture, and the smallest scale it still halves.
pub const MIN_SIDE: usize = 8;

fn create(options: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    check_format(format)?;
    let matrix = matrix_of(options)?;
    Ok(Box::new(Ssimulacra2Extractor {
        metric: Ssimulacra2::new(matrix),
    }))
}

/// The `yuv_matrix` option.
fn matrix_of(options: &Options) -> Result<YuvMatrix> {
    let value = options.int("yuv_matrix");
    YuvMatrix::from_option(value).ok_or_else(|| Error::BadOption {
        owner: INFO.name.into(),
        option: "yuv_matrix".into(),
        reason: format!("{value} is outside [0, 3]"),
    })
}

/// The size of every scale scored for a `width x height` picture: the
/// picture, then each halving (ceil) while the previous scale is at least
/// [`MIN_SIDE`] on each side, at most [`MAX_SCALES`].
pub fn scale_sizes(width: usize, height: usize) -> Vec<(usize, usize)> {
    let mut sizes = Vec::with_capacity(MAX_SCALES);
    let (mut w, mut h) = (width, height);
    while sizes.len() < MAX_SCALES && w >= MIN_SIDE && h >= MIN_SIDE {
        if !sizes.is_empty() {
            (w, h) = (w.div_ceil(2), h.div_ceil(2));
        }
        sizes.push((w, h));
    }
    sizes
}

/// Refuses what the metric cannot score: 4:0:0 and pictures under 8x8.
pub fn check_format(format: &PictureFormat) -> Result<()> {
    let refuse = |reason: String| {
        Err(Error::Extractor {
            extractor: INFO.name.into(),
            reason,
        })
    };
    if format.subsampling == ChromaSubsampling::Yuv400 {
        return refuse("4:0:0 input has no colour; the metric needs Cb and Cr".into());
    }
    let (w, h) = (format.width as usize, format.height as usize);
    if w < MIN_SIDE || h < MIN_SIDE {
        return refuse(format!(
            "picture {w}x{h} is smaller than {MIN_SIDE}x{MIN_SIDE} (libjxl's minimum)"
        ));
    }
    Ok(())
}

/// The metric with its working buffers (reused from frame to frame).
#[derive(Debug, Clone)]
pub struct Ssimulacra2 {
    matrix: YuvMatrix,
    blur: Blur,
    /// Linear RGB of the reference and distorted picture at the current
    /// scale, and the next scale's.
    linear: [Planes3; 2],
    half: [Planes3; 2],
    xyb: [Planes3; 2],
    /// The product being blurred, then the five blurred planes.
    product: Vec<f32>,
    blurred: Blurred,
}

/// One channel's blurred planes at one scale.
#[derive(Debug, Clone, Default)]
struct Blurred {
    mu1: Vec<f32>,
    mu2: Vec<f32>,
    s11: Vec<f32>,
    s22: Vec<f32>,
    s12: Vec<f32>,
}

impl Ssimulacra2 {
    pub fn new(matrix: YuvMatrix) -> Self {
        Self {
            matrix,
            blur: Blur::default(),
            linear: Default::default(),
            half: Default::default(),
            xyb: Default::default(),
            product: Vec::new(),
            blurred: Blurred::default(),
        }
    }

    /// The score of one frame pair (same format, checked by
    /// [`check_format`]).
    pub fn frame_score(&mut self, reference: &HostPicture, distorted: &HostPicture) -> f64 {
        score::score(&self.frame_norms(reference, distorted))
    }

    /// The norms of every scale of one frame pair.
    pub fn frame_norms(
        &mut self,
        reference: &HostPicture,
        distorted: &HostPicture,
    ) -> Vec<ScaleNorms> {
        for (picture, linear) in [reference, distorted].into_iter().zip(&mut self.linear) {
            colour::to_srgb(picture, self.matrix, linear);
            for plane in &mut linear.planes {
                linear::to_linear(plane);
            }
        }
        let mut scales = Vec::with_capacity(MAX_SCALES);
        for scale in 0..MAX_SCALES {
            let (w, h) = (self.linear[0].width, self.linear[0].height);
            if w < MIN_SIDE || h < MIN_SIDE {
                break;
            }
            if scale > 0 {
                for (linear, half) in self.linear.iter_mut().zip(&mut self.half) {
                    downsample::downsample(linear, half);
                    std::mem::swap(linear, half);
                }
            }
            scales.push(self.scale_norms());
        }
        scales
    }

    /// The norms of the current scale (from `self.linear`).
    fn scale_norms(&mut self) -> ScaleNorms {
        let [xyb1, xyb2] = &mut self.xyb;
        xyb::to_xyb(&self.linear[0], xyb1);
        xyb::to_xyb(&self.linear[1], xyb2);
        let (w, h) = (xyb1.width, xyb1.height);
        let mut norms = ScaleNorms::default();
        for c in 0..3 {
            let (a, b) = (&xyb1.planes[c], &xyb2.planes[c]);
            let out = &mut self.blurred;
            let mut blur_product = |x: &[f32], y: &[f32], dst: &mut Vec<f32>| {
                multiply(x, y, &mut self.product);
                dst.resize(w * h, 0.0);
                self.blur.run(&self.product, dst, w, h);
            };
            blur_product(a, a, &mut out.s11);
            blur_product(b, b, &mut out.s22);
            blur_product(a, b, &mut out.s12);
            for (src, dst) in [(a, &mut out.mu1), (b, &mut out.mu2)] {
                dst.resize(w * h, 0.0);
                self.blur.run(src, dst, w, h);
            }
            let sums =
                maps::channel_sums(a, b, &out.mu1, &out.mu2, &out.s11, &out.s22, &out.s12, w);
            (norms.ssim[c], norms.edge[c]) = maps::norms(&sums, w * h);
        }
        norms
    }
}

/// `out = a * b`, element by element (libjxl's `Multiply`).
pub fn multiply(a: &[f32], b: &[f32], out: &mut Vec<f32>) {
    out.clear();
    out.extend(a.iter().zip(b).map(|(x, y)| x * y));
}

struct Ssimulacra2Extractor {
    metric: Ssimulacra2,
}

impl Extractor for Ssimulacra2Extractor {
    fn name(&self) -> &'static str {
        INFO.name
    }

    fn planes(&self) -> PlaneMask {
        PlaneMask::ALL
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        let value = self.metric.frame_score(frame.reference, frame.distorted);
        sink.emit(frame.index, "ssimulacra2", value);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_halve_while_the_previous_one_is_8_wide_and_high() {
        let sizes = scale_sizes(321, 179);
        assert_eq!(sizes.len(), 6);
        assert_eq!(sizes[1], (161, 90));
        assert_eq!(sizes[5], (11, 6));
        assert_eq!(scale_sizes(64, 64).len(), 5);
        assert_eq!(scale_sizes(8, 8), [(8, 8), (4, 4)]);
        assert_eq!(scale_sizes(1920, 1080).len(), MAX_SCALES);
    }
}
