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
use crate::cpu::simd_dispatch;

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
    pub(crate) rfactor: [i32; 3],
    pub(crate) cube_shift: [u32; 3],
    row_shift: u32,
}

impl FineKernel {
    /// Kernel for a `width` x `height` scale-0 band with fixed-point weights
    /// `rfactor`.
    pub fn new(rfactor: [u16; 3], width: usize, height: usize) -> Self {
        // libvmaf scales the cube shift with the width so that a row sum
        // cannot overflow: ceil(log2(w)) - 4 for h and v, - 3 for d.
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
    pub(crate) rfactor: [i64; 3],
    pub(crate) cube_shift: u32,
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

/// Working rows of [`masked_sums`], sized for the widest band.
#[derive(Debug, Clone, Default)]
pub struct MaskScratch {
    /// Per coefficient of the last [`RING_ROWS`] rows made (a ring), the
    /// sum over orientations of the neighbour masks of the additive
    /// impairment (masking the restored detail) and of the restored detail
    /// (masking the impairment, for AIM).
    mask_num: Vec<i32>,
    mask_aim: Vec<i32>,
    /// One row of vertical 3-sums of each mask, then of 3x3 neighbourhood
    /// sums without the centre.
    column_num: Vec<i32>,
    column_aim: Vec<i32>,
    box_num: Vec<i32>,
    box_aim: Vec<i32>,
}

/// Decouples one row of a band: `(row, restored, additive)`, the
/// outputs the row's coefficients within the scored region's halo.
pub type DecoupleRow<'a, C> = dyn Fn(usize, [&mut [C]; 3], [&mut [C]; 3]) + 'a;

/// Rows of the masks and of the decoupled bands kept at once: those above,
/// at and below the row summed, and the one made before them (rows are
/// made one ahead into rings, so that they never leave the cache: made as
/// whole planes, they were written out and read back).
pub(super) const RING_ROWS: usize = 4;

impl MaskScratch {
    pub fn new(max_width: usize) -> Self {
        Self {
            mask_num: vec![0; RING_ROWS * max_width],
            mask_aim: vec![0; RING_ROWS * max_width],
            column_num: vec![0; max_width],
            column_aim: vec![0; max_width],
            box_num: vec![0; max_width],
            box_aim: vec![0; max_width],
        }
    }
}

/// Cube sums per orientation (h, v, d) of one scale.
#[derive(Debug, Clone, Copy, Default)]
pub struct MaskedSums {
    /// The restored detail masked by the impairment (ADM numerator).
    pub num: [i64; 3],
    /// The impairment masked by the restored detail (AIM numerator).
    pub aim: [i64; 3],
}

/// Per coefficient of `[lo, hi)` of one row: the masks of all three
/// orientations of `a` (into `mask_a`) and of `b` (into `mask_b`).
#[inline(always)]
fn mask_row<K: ScaleKernel>(
    k: &K,
    a: [&[K::C]; 3],
    b: [&[K::C]; 3],
    mask_a: &mut [i32],
    mask_b: &mut [i32],
) {
    let n = mask_a.len();
    let (a0, a1, a2, b0, b1, b2) = (
        &a[0][..n],
        &a[1][..n],
        &a[2][..n],
        &b[0][..n],
        &b[1][..n],
        &b[2][..n],
    );
    let mask_b = &mut mask_b[..n];
    for j in 0..n {
        mask_a[j] = k.neighbour_mask(k.weighted(a0[j], 0))
            + k.neighbour_mask(k.weighted(a1[j], 1))
            + k.neighbour_mask(k.weighted(a2[j], 2));
        mask_b[j] = k.neighbour_mask(k.weighted(b0[j], 0))
            + k.neighbour_mask(k.weighted(b1[j], 1))
            + k.neighbour_mask(k.weighted(b2[j], 2));
    }
}

/// Sums over the 3x3 neighbourhood of each coefficient of row `cur` but the
/// coefficient itself, for columns `[c0, c1)`; `columns` holds the vertical
/// 3-sums. Past the band edge neighbours are mirrored on the left (column
/// -1 reads column 1) and repeated on the right (column w reads w - 1).
#[inline(always)]
fn neighbourhood_row(columns: &[i32], cur: &[i32], c0: usize, c1: usize, out: &mut [i32]) {
    let w = columns.len();
    let left = |j: usize| if j == 0 { 1 } else { j - 1 };
    let right = |j: usize| if j + 1 == w { j } else { j + 1 };
    let (inner0, inner1) = (c0.max(1), c1.min(w - 1));
    for j in (c0..inner0).chain(inner1.max(inner0)..c1) {
        out[j] = columns[left(j)] + columns[j] + columns[right(j)] - cur[j];
    }
    if inner0 < inner1 {
        let (l, m, r) = (
            &columns[inner0 - 1..inner1 - 1],
            &columns[inner0..inner1],
            &columns[inner0 + 1..inner1 + 1],
        );
        let (cur, out) = (&cur[inner0..inner1], &mut out[inner0..inner1]);
        for j in 0..out.len() {
            out[j] = l[j] + m[j] + r[j] - cur[j];
        }
    }
}

#[inline(always)]
fn masked_sums_impl<K: ScaleKernel>(
    kernel: &K,
    (w, h): (usize, usize),
    decouple: &DecoupleRow<'_, K::C>,
    (restored, additive): (&mut Bands<K::C>, &mut Bands<K::C>),
    region: &Region,
    scratch: &mut MaskScratch,
) -> MaskedSums {
    let halo = region.with_halo(w, h);
    restored.set_size(w, RING_ROWS);
    additive.set_size(w, RING_ROWS);
    let s = scratch;
    let ring = RING_ROWS * w;
    let (mask_num, mask_aim) = (&mut s.mask_num[..ring], &mut s.mask_aim[..ring]);
    // Rows past the band edge: mirrored at the top, repeated at the bottom.
    let up = |i: usize| if i == 0 { 1 } else { i - 1 };
    let down = |i: usize| if i + 1 == h { i } else { i + 1 };
    let row_shift = kernel.row_shift();
    let row_round = half(row_shift);
    let (c0, c1) = (region.left, region.right);
    let mut sums = MaskedSums::default();
    // The next mask row to make: rows are made as the sums first need
    // them (the row below the one summed), into a ring of rows.
    let mut made = halo.top;
    for i in region.top..region.bottom {
        while made <= up(i).max(down(i)) {
            let at = made % RING_ROWS * w;
            let masked = at + halo.left..at + halo.right;
            decouple(
                made,
                restored.slices_mut(masked.clone()),
                additive.slices_mut(masked.clone()),
            );
            mask_row(
                kernel,
                additive.slices(masked.clone()),
                restored.slices(masked.clone()),
                &mut mask_num[masked.clone()],
                &mut mask_aim[masked],
            );
            made += 1;
        }
        let [mu, mc, md] = [up(i), i, down(i)].map(|r| r % RING_ROWS * w);
        for (mask, column, boxed) in [
            (&*mask_num, &mut s.column_num, &mut s.box_num),
            (&*mask_aim, &mut s.column_aim, &mut s.box_aim),
        ] {
            let column = &mut column[..w];
            let (mu, mc, md) = (&mask[mu..mu + w], &mask[mc..mc + w], &mask[md..md + w]);
            for j in halo.left..halo.right {
                column[j] = mu[j] + mc[j] + md[j];
            }
            neighbourhood_row(column, mc, c0, c1, &mut boxed[..w]);
        }
        let (rst, add) = (restored.all(), additive.all());
        let rc = i % RING_ROWS * w;
        let row = rc + c0..rc + c1;
        let n = row.len();
        let (r0, r1, r2) = (
            &rst[0][row.clone()],
            &rst[1][row.clone()],
            &rst[2][row.clone()],
        );
        let (a0, a1, a2) = (&add[0][row.clone()], &add[1][row.clone()], &add[2][row]);
        let (r0, r1, r2, a0, a1, a2) = (&r0[..n], &r1[..n], &r2[..n], &a0[..n], &a1[..n], &a2[..n]);
        let (box_num, box_aim) = (&s.box_num[c0..c0 + n], &s.box_aim[c0..c0 + n]);
        let (mut num, mut aim) = ([0i64; 3], [0i64; 3]);
        let k = kernel;
        for j in 0..n {
            let (wa, wr) = (
                [
                    k.weighted(a0[j], 0),
                    k.weighted(a1[j], 1),
                    k.weighted(a2[j], 2),
                ],
                [
                    k.weighted(r0[j], 0),
                    k.weighted(r1[j], 1),
                    k.weighted(r2[j], 2),
                ],
            );
            let thr_num =
                box_num[j] + k.centre_mask(wa[0]) + k.centre_mask(wa[1]) + k.centre_mask(wa[2]);
            let thr_aim =
                box_aim[j] + k.centre_mask(wr[0]) + k.centre_mask(wr[1]) + k.centre_mask(wr[2]);
            num[0] = num[0].wrapping_add(k.cube_above(k.contrast(r0[j], 0), thr_num, 0));
            num[1] = num[1].wrapping_add(k.cube_above(k.contrast(r1[j], 1), thr_num, 1));
            num[2] = num[2].wrapping_add(k.cube_above(k.contrast(r2[j], 2), thr_num, 2));
            aim[0] = aim[0].wrapping_add(k.cube_above(k.contrast(a0[j], 0), thr_aim, 0));
            aim[1] = aim[1].wrapping_add(k.cube_above(k.contrast(a1[j], 1), thr_aim, 1));
            aim[2] = aim[2].wrapping_add(k.cube_above(k.contrast(a2[j], 2), thr_aim, 2));
        }
        for t in 0..3 {
            // Wrapping like libvmaf's int64 sums (only absurd inputs reach it).
            sums.num[t] = sums.num[t].wrapping_add(num[t].wrapping_add(row_round) >> row_shift);
            sums.aim[t] = sums.aim[t].wrapping_add(aim[t].wrapping_add(row_round) >> row_shift);
        }
    }
    sums
}

simd_dispatch! {
    /// Contrast-masked cube sums over `region` of the restored detail (masked
    /// by the additive impairment) and of the impairment (masked by the
    /// restored detail), per orientation, over bands of `size` (width,
    /// height). The restored detail and the impairment are made row by
    /// row by `decouple`, just before their masks need them, into `rings`
    /// of [`RING_ROWS`] rows of the bands' width.
    pub fn masked_sums<K: ScaleKernel>(
        kernel: &K,
        size: (usize, usize),
        decouple: &DecoupleRow<'_, K::C>,
        rings: (&mut Bands<K::C>, &mut Bands<K::C>),
        region: &Region,
        scratch: &mut MaskScratch,
    ) -> MaskedSums => masked_sums_impl
}

/// libvmaf's cube-norm score of one scale: the sum over orientations of
/// cbrt(sum) + cbrt(noise weight * area), in float.
pub fn cube_norm(sums: [f32; 3], region: &Region, noise_weight: f64) -> f32 {
    let noise = ((region.area() as f64 * noise_weight) as f32).powf(1.0 / 3.0);
    let [h, v, d] = sums.map(|s| s.powf(1.0f32 / 3.0) + noise);
    h + v + d
}
