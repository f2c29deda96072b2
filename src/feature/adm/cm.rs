//! Contrast masking: the restored detail (for ADM) or the additive
//! impairment (for AIM) is weighted by the CSF, reduced by a threshold that
//! the other part masks it with (its own CSF-weighted magnitude over a 3x3
//! neighbourhood of all three orientations), and summed as a cube norm.
//!
//! Scale 0 and scales 1-3 use different fixed-point formats; each
//! [`ScaleKernel`] holds one, the driver [`masked_sums`] is shared.

use super::decouple::Coef;
use super::dwt::Bands;
use super::region::Region;
use super::tables::{I4_ONE_BY_15, I4_ONE_BY_30, ONE_BY_15, ONE_BY_30};

/// Fixed-point arithmetic of contrast masking at one scale.
pub trait ScaleKernel {
    type C: Coef;
    /// CSF-weighted coefficient of orientation `theta` (libvmaf's `csf_a`).
    fn weighted(&self, c: Self::C, theta: usize) -> i32;
    /// A weighted coefficient's share of its neighbours' threshold (1/30).
    fn neighbour_mask(&self, w: i32) -> i32;
    /// A weighted coefficient's share of its own threshold (1/15).
    fn centre_mask(&self, w: i32) -> i32;
    /// The masked coefficient before thresholding.
    fn contrast(&self, c: Self::C, theta: usize) -> i32;
    /// max(|x| - threshold, 0)^3, rounded and shifted.
    fn cube_above(&self, x: i32, threshold: i32, theta: usize) -> i64;
    /// Per-row rounding shift of the row sums.
    fn row_shift(&self) -> u32;
    /// Turns the three accumulated sums into float cube-norm inputs.
    fn to_float(&self, sums: [i64; 3]) -> [f32; 3];
}

/// `ceil(log2(n) + bias)` as libvmaf computes shift amounts (negative results
/// cannot happen for the sizes the extractor accepts).
pub fn ceil_log2(n: usize, bias: f64) -> u32 {
    ((n as f64).log2() + bias).ceil().max(0.0) as u32
}

/// libvmaf's `(uint32_t)pow(2, shift - 1)`: the rounding term of a shift.
pub fn half(shift: u32) -> i64 {
    if shift == 0 {
        0
    } else {
        1 << (shift - 1)
    }
}

/// Scale 0: 16-bit coefficients, weights in Q21 (h, v) and Q23 (d).
pub struct FineKernel {
    rfactor: [i32; 3],
    cube_shift: [u32; 3],
    row_shift: u32,
}

impl FineKernel {
    /// Kernel for a `width` x `height` scale-0 band with fixed-point weights
    /// `rfactor`.
    pub fn new(rfactor: [u16; 3], width: usize, height: usize) -> Self {
        // The cube of a Q21/Q23 value needs 4 (h, v) or 3 (d) bits of
        // headroom per doubling of the width.
        let hv = ceil_log2(width, -4.0);
        Self {
            rfactor: rfactor.map(i32::from),
            cube_shift: [hv, hv, ceil_log2(width, -3.0)],
            row_shift: ceil_log2(height, 0.0),
        }
    }
}

/// Rounding shift of `weighted` at scale 0 per orientation, and its
/// rounding term (libvmaf's 65535 for d, not 65536).
const FINE_CSF_SHIFT: [u32; 3] = [15, 15, 17];
const FINE_CSF_ROUND: [i32; 3] = [16384, 16384, 65535];
/// Shift aligning the threshold with the Q21/Q23 contrast.
const FINE_THRESHOLD_SHIFT: [u32; 3] = [10, 10, 12];
const FINE_SQUARE_SHIFT: [u32; 3] = [29, 29, 30];
/// Bits still to remove from the cube sums: 3 * (6 + 21) - 29 and
/// 3 * (6 + 23) - 30.
const FINE_FLOAT_SHIFT: [u32; 3] = [52, 52, 57];

impl ScaleKernel for FineKernel {
    type C = i16;

    #[inline(always)]
    fn weighted(&self, c: i16, theta: usize) -> i32 {
        ((self.rfactor[theta] * c as i32 + FINE_CSF_ROUND[theta]) >> FINE_CSF_SHIFT[theta]) as i16
            as i32
    }

    #[inline(always)]
    fn neighbour_mask(&self, w: i32) -> i32 {
        ((ONE_BY_30 * w.abs() + 2048) >> 12) as i16 as i32
    }

    #[inline(always)]
    fn centre_mask(&self, w: i32) -> i32 {
        ((ONE_BY_15 * w.abs() + 2048) >> 12) as i16 as i32
    }

    #[inline(always)]
    fn contrast(&self, c: i16, theta: usize) -> i32 {
        c as i32 * self.rfactor[theta]
    }

    #[inline(always)]
    fn cube_above(&self, x: i32, threshold: i32, theta: usize) -> i64 {
        let x = x
            .wrapping_abs()
            .wrapping_sub(threshold << FINE_THRESHOLD_SHIFT[theta])
            .max(0) as i64;
        let sq_shift = FINE_SQUARE_SHIFT[theta];
        let x_sq = ((x * x + (1 << (sq_shift - 1))) >> sq_shift) as i32 as i64;
        let shift = self.cube_shift[theta];
        (x_sq * x + half(shift)) >> shift
    }

    fn row_shift(&self) -> u32 {
        self.row_shift
    }

    fn to_float(&self, sums: [i64; 3]) -> [f32; 3] {
        std::array::from_fn(|t| {
            let exp = FINE_FLOAT_SHIFT[t]
                .wrapping_sub(self.cube_shift[t])
                .wrapping_sub(self.row_shift);
            (sums[t] as f64 / 2f64.powf(exp as f64)) as f32
        })
    }
}

/// Scales 1-3: 32-bit coefficients, weights in Q32.
pub struct CoarseKernel {
    rfactor: [i64; 3],
    cube_shift: u32,
    row_shift: u32,
    float_scale: f32,
}

/// Bits still to remove from the cube sums of scales 1, 2, 3 (before the
/// width and height shifts).
const COARSE_FLOAT_SHIFT: [u32; 3] = [45, 39, 36];
/// libvmaf's rounding term `(int32_t)(1u << 31)` wraps to -2^31: the 1/15
/// and 1/30 filters of scales 1-3 round down by half instead of up (kept for
/// identical scores, Netflix/vmaf#955).
const COARSE_MASK_ROUND: i64 = i32::MIN as i64;

impl CoarseKernel {
    /// Kernel for scale `scale` (1-3) with `width` x `height` bands.
    pub fn new(rfactor: [u32; 3], scale: usize, width: usize, height: usize) -> Self {
        let cube_shift = ceil_log2(width, 0.0);
        let row_shift = ceil_log2(height, 0.0);
        let exp = COARSE_FLOAT_SHIFT[scale - 1]
            .wrapping_sub(cube_shift)
            .wrapping_sub(row_shift);
        Self {
            rfactor: rfactor.map(i64::from),
            cube_shift,
            row_shift,
            float_scale: 2f64.powf(exp as f64) as f32,
        }
    }
}

impl ScaleKernel for CoarseKernel {
    type C = i32;

    #[inline(always)]
    fn weighted(&self, c: i32, theta: usize) -> i32 {
        (self.rfactor[theta]
            .wrapping_mul(c as i64)
            .wrapping_add(1 << 27)
            >> 28) as i32
    }

    #[inline(always)]
    fn neighbour_mask(&self, w: i32) -> i32 {
        ((I4_ONE_BY_30 * w.wrapping_abs() as i64 + COARSE_MASK_ROUND) >> 32) as i32
    }

    #[inline(always)]
    fn centre_mask(&self, w: i32) -> i32 {
        ((I4_ONE_BY_15 * w.wrapping_abs() as i64 + COARSE_MASK_ROUND) >> 32) as i32
    }

    #[inline(always)]
    fn contrast(&self, c: i32, theta: usize) -> i32 {
        self.weighted(c, theta)
    }

    #[inline(always)]
    fn cube_above(&self, x: i32, threshold: i32, _theta: usize) -> i64 {
        let x = x.wrapping_abs().wrapping_sub(threshold).max(0) as i64;
        let x_sq = ((x * x + (1 << 29)) >> 30) as i32 as i64;
        (x_sq * x + half(self.cube_shift)) >> self.cube_shift
    }

    fn row_shift(&self) -> u32 {
        self.row_shift
    }

    fn to_float(&self, sums: [i64; 3]) -> [f32; 3] {
        // libvmaf divides the int64 sum by a float: both go through float.
        sums.map(|s| s as f32 / self.float_scale)
    }
}

/// Working planes of [`masked_sums`], sized for the largest band.
#[derive(Debug, Clone, Default)]
pub struct MaskScratch {
    /// Sum over orientations of the neighbour masks of the masker.
    mask: Vec<i32>,
    /// Vertical 3-sums of `mask` for one row.
    column_sums: Vec<i32>,
}

impl MaskScratch {
    pub fn new(max_band_len: usize, max_width: usize) -> Self {
        Self {
            mask: vec![0; max_band_len],
            column_sums: vec![0; max_width],
        }
    }
}

/// Contrast-masked cube sums of `target`, masked by `masker` (both bands of
/// the same size), per orientation h, v, d, over `region`.
pub fn masked_sums<K: ScaleKernel>(
    kernel: &K,
    target: &Bands<K::C>,
    masker: &Bands<K::C>,
    region: &Region,
    scratch: &mut MaskScratch,
) -> [i64; 3] {
    let (w, h) = (masker.width, masker.height);
    let halo = region.with_halo(w, h);
    let mask = &mut scratch.mask[..w * h];
    let [mh, mv, md] = masker.all();
    for i in halo.top..halo.bottom {
        let row = i * w + halo.left..i * w + halo.right;
        let (mh, mv, md) = (&mh[row.clone()], &mv[row.clone()], &md[row.clone()]);
        for (j, m) in mask[row].iter_mut().enumerate() {
            *m = kernel.neighbour_mask(kernel.weighted(mh[j], 0))
                + kernel.neighbour_mask(kernel.weighted(mv[j], 1))
                + kernel.neighbour_mask(kernel.weighted(md[j], 2));
        }
    }

    // Neighbours past the band edge: mirrored on the top/left side (row -1
    // reads row 1), repeated on the bottom/right side (row h reads h - 1).
    let up = |i: usize| if i == 0 { 1 } else { i - 1 };
    let down = |i: usize| if i + 1 == h { i } else { i + 1 };
    let left = |j: usize| if j == 0 { 1 } else { j - 1 };
    let right = |j: usize| if j + 1 == w { j } else { j + 1 };

    let [th, tv, td] = target.all();
    let column_sums = &mut scratch.column_sums[..w];
    let row_shift = kernel.row_shift();
    let row_round = half(row_shift);
    let mut sums = [0i64; 3];
    for i in region.top..region.bottom {
        let (ru, rc, rd) = (up(i) * w, i * w, down(i) * w);
        for j in halo.left..halo.right {
            column_sums[j] = mask[ru + j] + mask[rc + j] + mask[rd + j];
        }
        let mut row_sums = [0i64; 3];
        for j in region.left..region.right {
            let k = rc + j;
            let threshold = column_sums[left(j)] + column_sums[j] + column_sums[right(j)] - mask[k]
                + kernel.centre_mask(kernel.weighted(mh[k], 0))
                + kernel.centre_mask(kernel.weighted(mv[k], 1))
                + kernel.centre_mask(kernel.weighted(md[k], 2));
            row_sums[0] += kernel.cube_above(kernel.contrast(th[k], 0), threshold, 0);
            row_sums[1] += kernel.cube_above(kernel.contrast(tv[k], 1), threshold, 1);
            row_sums[2] += kernel.cube_above(kernel.contrast(td[k], 2), threshold, 2);
        }
        for t in 0..3 {
            sums[t] += (row_sums[t] + row_round) >> row_shift;
        }
    }
    sums
}

/// libvmaf's cube-norm score of one scale: the sum over orientations of
/// cbrt(sum) + cbrt(noise weight * area), in float.
pub fn cube_norm(sums: [f32; 3], region: &Region, noise_weight: f64) -> f32 {
    let noise = ((region.area() as f64 * noise_weight) as f32).powf(1.0 / 3.0);
    let [h, v, d] = sums.map(|s| s.powf(1.0f32 / 3.0) + noise);
    h + v + d
}
