//! Xiph's `calc_psnrhvs` for one plane: the CSF-weighted, contrast-masked
//! squared error of overlapping 8x8 DCT blocks (a step of 7), as a
//! fraction of the squared peak.
//!
//! Each block's arithmetic is independent until its 64 error terms join
//! the plane total, so blocks of a block row are processed [`LANES`] at a
//! time, lane by lane with the exact `float` operation order of the C code
//! (vectorisable across lanes); the terms are then added to the running
//! `float` total one by one in libvmaf's order.

use super::csf::Weights;
use super::dct::fdct8x8;
use crate::picture::{PlaneRef, Sample};

/// Blocks transformed together.
pub const LANES: usize = 8;

type F = [f32; LANES];
type I = [i32; LANES];

/// `1 / 63.f * 64` and `1 / 15.f * 16`: unbiased variance factors.
const GLOBAL_VAR_SCALE: f32 = 1.0 / 63.0 * 64.0;
const QUADRANT_VAR_SCALE: f32 = 1.0 / 15.0 * 16.0;

/// The quadrant (`sub` in the C code) of block row `i`, column `j`.
#[inline(always)]
fn quadrant(i: usize, j: usize) -> usize {
    ((i & 12) >> 2) + ((j & 12) >> 1)
}

/// Per-block masking statistics of one side (source or distorted).
struct Side {
    /// Sample block, then its DCT; `block[pos][lane]`.
    block: [I; 64],
}

impl Side {
    /// The block's variance ratio: summed quadrant variances over the
    /// global variance (libvmaf's `s_gvar` after its update), per lane.
    #[inline(always)]
    fn variance_ratio(&self) -> F {
        let mut gmean = [0.0f32; LANES];
        let mut means = [[0.0f32; LANES]; 4];
        for i in 0..8 {
            for j in 0..8 {
                let (v, m) = (&self.block[8 * i + j], &mut means[quadrant(i, j)]);
                for l in 0..LANES {
                    gmean[l] += v[l] as f32;
                    m[l] += v[l] as f32;
                }
            }
        }
        for l in 0..LANES {
            gmean[l] /= 64.0;
            for m in &mut means {
                m[l] /= 16.0;
            }
        }
        let mut gvar = [0.0f32; LANES];
        let mut vars = [[0.0f32; LANES]; 4];
        for i in 0..8 {
            for j in 0..8 {
                let q = quadrant(i, j);
                let (v, mean, var) = (&self.block[8 * i + j], &means[q], &mut vars[q]);
                for l in 0..LANES {
                    let g = v[l] as f32 - gmean[l];
                    gvar[l] += g * g;
                    let m = v[l] as f32 - mean[l];
                    var[l] += m * m;
                }
            }
        }
        let mut ratio = [0.0f32; LANES];
        for l in 0..LANES {
            let g = gvar[l] * GLOBAL_VAR_SCALE;
            let v = vars.map(|v| v[l] * QUADRANT_VAR_SCALE);
            ratio[l] = if g > 0.0 {
                (v[0] + v[1] + v[2] + v[3]) / g
            } else {
                g
            };
        }
        ratio
    }

    /// The masking threshold scale from the transformed block:
    /// `sqrt(sum(c^2 * mask) * ratio) / 32` over the AC coefficients.
    #[inline(always)]
    fn mask_level(&self, ratio: &F, mask: &[f32; 64]) -> F {
        let mut sum = [0.0f32; LANES];
        for (c, &m) in self.block.iter().zip(mask).skip(1) {
            for l in 0..LANES {
                sum[l] += c[l].wrapping_mul(c[l]) as f32 * m;
            }
        }
        // C takes a `double` sqrt of the `float` product and divides by 32
        // before rounding to `float`; the `float` sqrt and the exact power
        // of two division round the same (53 >= 2 * 24 + 2 bits).
        std::array::from_fn(|l| (sum[l] * ratio[l]).sqrt() / 32.0)
    }
}

/// Running totals of one plane: libvmaf's `ret` and `pixels`.
struct Total {
    ret: f32,
    pixels: i32,
}

/// libvmaf's plane score (`calc_psnrhvs`) on the top-left `width` x
/// `height` samples of two planes of `bit_depth` bits.
pub fn plane_score<T: Sample>(
    src: &PlaneRef<'_, T>,
    dst: &PlaneRef<'_, T>,
    width: usize,
    height: usize,
    bit_depth: u8,
    weights: &Weights,
) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::has_avx2() {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { plane_score_avx2(src, dst, width, height, bit_depth, weights) };
    }
    plane_score_portable(src, dst, width, height, bit_depth, weights)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn plane_score_avx2<T: Sample>(
    src: &PlaneRef<'_, T>,
    dst: &PlaneRef<'_, T>,
    width: usize,
    height: usize,
    bit_depth: u8,
    weights: &Weights,
) -> f64 {
    plane_score_portable(src, dst, width, height, bit_depth, weights)
}

#[inline(always)]
fn plane_score_portable<T: Sample>(
    src: &PlaneRef<'_, T>,
    dst: &PlaneRef<'_, T>,
    width: usize,
    height: usize,
    bit_depth: u8,
    weights: &Weights,
) -> f64 {
    let blocks_across = block_count(width);
    let mut total = Total {
        ret: 0.0,
        pixels: 0,
    };
    let mut s = Side {
        block: [[0; LANES]; 64],
    };
    let mut d = Side {
        block: [[0; LANES]; 64],
    };
    for y in (0..block_count(height)).map(|b| 7 * b) {
        for first in (0..blocks_across).step_by(LANES) {
            let lanes = LANES.min(blocks_across - first);
            // Unused lanes repeat the last block; their results are dropped.
            let xs: [usize; LANES] = std::array::from_fn(|l| 7 * (first + l.min(lanes - 1)));
            load(src, y, &xs, &mut s.block);
            load(dst, y, &xs, &mut d.block);
            score_blocks(&mut s, &mut d, weights, lanes, &mut total);
        }
    }
    score_of_total(total.ret, total.pixels, bit_depth)
}

/// The plane score from its summed error terms and its sample count
/// (64 per block), in libvmaf's `float` arithmetic.
pub(crate) fn score_of_total(total: f32, pixels: i32, bit_depth: u8) -> f64 {
    let mut ret = total / pixels as f32;
    let peak = (1i32 << bit_depth) - 1;
    ret /= (peak * peak) as f32;
    ret as f64
}

/// Blocks along a side of `len` samples: positions 0, 7, 14, ... below
/// `len - 7`.
pub fn block_count(len: usize) -> usize {
    if len >= 8 {
        (len - 8) / 7 + 1
    } else {
        0
    }
}

#[inline(always)]
fn load<T: Sample>(plane: &PlaneRef<'_, T>, y: usize, xs: &[usize; LANES], block: &mut [I; 64]) {
    for i in 0..8 {
        let row = plane.row(y + i);
        for (l, &x) in xs.iter().enumerate() {
            let samples = &row[x..x + 8];
            for j in 0..8 {
                block[8 * i + j][l] = samples[j].into() as i32;
            }
        }
    }
}

#[inline(always)]
fn score_blocks(s: &mut Side, d: &mut Side, w: &Weights, lanes: usize, total: &mut Total) {
    let s_ratio = s.variance_ratio();
    let d_ratio = d.variance_ratio();
    fdct8x8(&mut s.block);
    fdct8x8(&mut d.block);
    let s_mask = s.mask_level(&s_ratio, &w.mask);
    let d_mask = d.mask_level(&d_ratio, &w.mask);
    let mask: F = std::array::from_fn(|l| {
        if d_mask[l] > s_mask[l] {
            d_mask[l]
        } else {
            s_mask[l]
        }
    });

    let mut terms = [[0.0f32; LANES]; 64];
    let coefficients = s.block.iter().zip(&d.block);
    for (pos, (term, (sc, dc))) in terms.iter_mut().zip(coefficients).enumerate() {
        for l in 0..LANES {
            let mut err = sc[l].wrapping_sub(dc[l]).wrapping_abs() as f32;
            if pos != 0 {
                let threshold = mask[l] / w.mask[pos];
                err = if err < threshold {
                    0.0
                } else {
                    err - threshold
                };
            }
            let weighted = err * w.csf[pos];
            term[l] = weighted * weighted;
        }
    }
    // The plane total is one `float` sum in block order: no reordering.
    for l in 0..lanes {
        for t in &terms {
            total.ret += t[l];
        }
    }
    total.pixels += 64 * lanes as i32;
}
