//! `integer_ms_ssim`: VMAFx's MS-SSIM (its `float_ms_ssim`, which VMAFx
//! also calls `integer_ms_ssim`), written under libvmaf's `float_ms_ssim`
//! names. It is libvmaf 3.2.0's `float_ms_ssim` (shared code: the
//! single-scale SSIM, the pyramid loop, the score and the lcs outputs) with
//! VMAFx's differences (`tests/golden/README.md`):
//!
//! * between scales it halves with the separable 9/7 filter in `f32` with
//!   fused multiply-adds ([`decimate_97`]), not libvmaf's rounded 9x9 table
//!   summed in double;
//! * it refuses pictures below 176x176 when it is created;
//! * each per-scale term enters the product as `pow(fabs(term), exponent)`;
//! * `enable_chroma` also scores the Cb and Cr planes
//!   (`float_ms_ssim_cb`, `float_ms_ssim_cr`; their planes must be 176x176
//!   too); `enable_lcs` stays luma only.

use super::common::iqa_ssim::SsimMeans;
use super::common::picture_copy::{check_bit_depth, picture_copy};
use super::common::ssim_db::ScoreScale;
use super::float_ms_ssim::{combine, emit_lcs, Pyramid, SCALES};
use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, OptionSpec, Options};
use crate::error::{Error, Result};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

const NAME: &str = "integer_ms_ssim";

/// The smallest side VMAFx scores.
pub const MIN_SIDE: usize = 176;

/// Output names: libvmaf's score name, and one per chroma plane.
const SCORE: &str = "float_ms_ssim";
const CHROMA: [(PlaneId, &str); 2] = [
    (PlaneId::Cb, "float_ms_ssim_cb"),
    (PlaneId::Cr, "float_ms_ssim_cr"),
];

static OPTIONS: [OptionSpec; 4] = [
    // Also emit the luminance, contrast and structure terms (luma).
    OptionSpec::bool("enable_lcs", false),
    // Write scores as -10 log10(1 - score).
    OptionSpec::bool("enable_db", false),
    // Cap dB scores at what a half-LSB error over the picture would give.
    OptionSpec::bool("clip_db", false),
    // Also score the chroma planes.
    OptionSpec::bool("enable_chroma", false),
];

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: NAME,
    aliases: &[],
    options: &OPTIONS,
    provides: &[],
    create: create as CreateFn,
    joint: None,
    gpu: Some(&crate::gpu::feature::integer_ms_ssim::TWIN),
};

fn create(options: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    Ok(Box::new(IntegerMsSsim {
        outputs: Outputs::create(options, format)?,
        pyramid: Pyramid::default(),
        scratch: Vec::new(),
    }))
}

/// The set-up and the "emit from the per-scale means" step, for any engine.
#[derive(Debug, Clone, Copy)]
pub struct Outputs {
    enable_lcs: bool,
    chroma: bool,
    score_scale: ScoreScale,
}

impl Outputs {
    /// Checks the format (bit depth; every scored plane at least 176x176)
    /// and resolves the options.
    pub fn create(options: &Options, format: &PictureFormat) -> Result<Self> {
        check_bit_depth(NAME, format)?;
        // A 4:0:0 picture has no chroma to score: luma only (as VMAFx).
        let chroma = options.bool("enable_chroma") && format.plane_count() == 3;
        let mut planes = vec![(PlaneId::Y, "luma")];
        if chroma {
            planes.extend([(PlaneId::Cb, "Cb"), (PlaneId::Cr, "Cr")]);
        }
        for (plane, what) in planes {
            let (w, h) = format.plane_size(plane);
            if w < MIN_SIDE || h < MIN_SIDE {
                return Err(Error::Extractor {
                    extractor: NAME.into(),
                    reason: format!(
                        "{what} plane {w}x{h} of a {}x{} picture is too small: \
                         {SCALES} scales need at least {MIN_SIDE}x{MIN_SIDE}",
                        format.width, format.height
                    ),
                });
            }
        }
        Ok(Self {
            enable_lcs: options.bool("enable_lcs"),
            chroma,
            score_scale: ScoreScale::from_options(options, format),
        })
    }

    /// The planes scored, in output order.
    pub fn planes(&self) -> &'static [PlaneId] {
        if self.chroma {
            &[PlaneId::Y, PlaneId::Cb, PlaneId::Cr]
        } else {
            &[PlaneId::Y]
        }
    }

    /// VMAFx's score of one plane from its per-scale means.
    pub fn score(&self, means: &[SsimMeans; SCALES]) -> f64 {
        self.score_scale.apply(combine(means, f64::abs))
    }

    /// Writes the luma score (and its lcs terms).
    pub fn emit_luma(&self, index: u32, means: &[SsimMeans; SCALES], sink: &mut FeatureSink) {
        sink.emit(index, SCORE, self.score(means));
        if self.enable_lcs {
            emit_lcs(index, means, sink);
        }
    }

    /// Writes a chroma plane's score.
    pub fn emit_chroma(
        &self,
        index: u32,
        plane: PlaneId,
        means: &[SsimMeans; SCALES],
        sink: &mut FeatureSink,
    ) {
        if let Some((_, name)) = CHROMA.iter().find(|(p, _)| *p == plane) {
            sink.emit(index, name, self.score(means));
        }
    }
}

/// The 9/7 biorthogonal low-pass, the 1-D factor VMAFx filters with.
pub const LOW_PASS_97: [f32; 9] = [
    0.026727, -0.016828, -0.078201, 0.266846, 0.602914, 0.266846, -0.078201, -0.016828, 0.026727,
];
const HALF: isize = 4;

/// Mirror with the edge sample repeated: -1 -> 0, n -> n - 1. Any index
/// within one picture length of it.
fn mirror(i: isize, n: usize) -> usize {
    let n = n as isize;
    (if i < 0 {
        -1 - i
    } else if i >= n {
        2 * n - i - 1
    } else {
        i
    }) as usize
}

/// VMAFx's halving: `src` (`w x h`, packed) filtered with [`LOW_PASS_97`]
/// at even columns (horizontal pass into `tmp`, all rows), then at even
/// rows, each output `fma(sample, tap, acc)` from tap 0 to 8 with `acc`
/// starting at 0; output `ceil(w/2) x ceil(h/2)` into `dst`, size returned.
/// The caller guarantees `w, h >= 5`.
pub fn decimate_97(
    src: &[f32],
    w: usize,
    h: usize,
    tmp: &mut Vec<f32>,
    dst: &mut Vec<f32>,
) -> (usize, usize) {
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::has_fma() {
        // SAFETY: the CPU supports FMA, checked just above.
        return unsafe { decimate_97_fma(src, w, h, tmp, dst) };
    }
    decimate_97_portable(src, w, h, tmp, dst)
}

/// The same code compiled with hardware FMA (`mul_add` is one instruction
/// instead of a libm call; the result is the same single rounding).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn decimate_97_fma(
    src: &[f32],
    w: usize,
    h: usize,
    tmp: &mut Vec<f32>,
    dst: &mut Vec<f32>,
) -> (usize, usize) {
    decimate_97_portable(src, w, h, tmp, dst)
}

#[inline(always)]
fn decimate_97_portable(
    src: &[f32],
    w: usize,
    h: usize,
    tmp: &mut Vec<f32>,
    dst: &mut Vec<f32>,
) -> (usize, usize) {
    let (wo, ho) = (w.div_ceil(2), h.div_ceil(2));
    tmp.resize(wo * h, 0.0);
    for (row, out) in src.chunks_exact(w).zip(tmp.chunks_exact_mut(wo)) {
        for (xo, o) in out.iter_mut().enumerate() {
            let x = 2 * xo as isize - HALF;
            let mut acc = 0.0f32;
            for (k, &t) in LOW_PASS_97.iter().enumerate() {
                acc = row[mirror(x + k as isize, w)].mul_add(t, acc);
            }
            *o = acc;
        }
    }
    dst.resize(wo * ho, 0.0);
    for (yo, out) in dst.chunks_exact_mut(wo).enumerate() {
        out.fill(0.0);
        let y = 2 * yo as isize - HALF;
        // Tap-outer over the row: the same per-sample order, vectorized.
        for (k, &t) in LOW_PASS_97.iter().enumerate() {
            let r = mirror(y + k as isize, h);
            for (o, &v) in out.iter_mut().zip(&tmp[r * wo..(r + 1) * wo]) {
                *o = v.mul_add(t, *o);
            }
        }
    }
    (wo, ho)
}

struct IntegerMsSsim {
    outputs: Outputs,
    pyramid: Pyramid,
    /// The horizontal pass of a halving.
    scratch: Vec<f32>,
}

impl Extractor for IntegerMsSsim {
    fn name(&self) -> &'static str {
        NAME
    }

    fn planes(&self) -> PlaneMask {
        if self.outputs.chroma {
            PlaneMask::ALL
        } else {
            PlaneMask::LUMA
        }
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        for &plane in self.outputs.planes() {
            let size = frame.reference.format().plane_size(plane);
            let (r, d) = self.pyramid.base();
            picture_copy(frame.reference, plane, 0, r);
            picture_copy(frame.distorted, plane, 0, d);
            let tmp = &mut self.scratch;
            let means = self.pyramid.means(size, |fine, w, h, coarse| {
                decimate_97(fine, w, h, tmp, coarse)
            });
            if plane == PlaneId::Y {
                self.outputs.emit_luma(frame.index, &means, sink);
            } else {
                self.outputs.emit_chroma(frame.index, plane, &means, sink);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirror_repeats_the_edge() {
        assert_eq!(mirror(-1, 10), 0);
        assert_eq!(mirror(-4, 10), 3);
        assert_eq!(mirror(10, 10), 9);
        assert_eq!(mirror(13, 10), 6);
        assert_eq!(mirror(5, 10), 5);
    }

    #[test]
    fn flat_picture_keeps_its_level_and_ceil_size() {
        // The taps sum to 1 (in f32 FMA, to within an ulp or two).
        let src = vec![100.0f32; 13 * 7];
        let (mut tmp, mut dst) = (Vec::new(), Vec::new());
        assert_eq!(decimate_97(&src, 13, 7, &mut tmp, &mut dst), (7, 4));
        assert_eq!(dst.len(), 28);
        assert!(dst.iter().all(|&v| (v - 100.0).abs() < 1e-3), "{dst:?}");
    }

    #[test]
    fn taps_accumulate_in_order_with_fma() {
        // One impulse at column 0 of a row: output 0 reads it through taps
        // 3 (index -1 -> 0) and 4, accumulated as two fused steps.
        let mut src = vec![0.0f32; 9 * 5];
        for y in 0..5 {
            src[y * 9] = 1.0;
        }
        let (mut tmp, mut dst) = (Vec::new(), Vec::new());
        decimate_97(&src, 9, 5, &mut tmp, &mut dst);
        let h0 = 1.0f32.mul_add(LOW_PASS_97[4], 1.0f32.mul_add(LOW_PASS_97[3], 0.0));
        assert_eq!(tmp[0], h0);
    }
}
