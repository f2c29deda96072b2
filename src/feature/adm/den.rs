//! The ADM denominator: the CSF-weighted cube norm of the reference's detail
//! coefficients, per orientation, over the scored region.
//!
//! Split in two steps shared with the GPU extractor: the integer sums
//! (`*_sums`, computed on the GPU there) and their float weighting
//! (`weigh_*`).

use super::cm::{ceil_log2, half};
use super::dwt::Bands;
use super::region::Region;
use crate::cpu::simd_dispatch;

/// Per-row rounding shift of the scale-0 sums, so that a large picture
/// cannot overflow them.
pub(crate) fn fine_row_shift(region: &Region) -> u32 {
    ((region.area() as f64).log2() - 20.0).ceil().max(0.0) as u32
}

simd_dispatch! {
    /// Scale 0: sums |c|^3 of each orientation in u64, rounded and shifted by
    /// [`fine_row_shift`] per row.
    pub fn fine_sums(reference: &Bands<i16>, region: &Region) -> [u64; 3] => fine_sums_impl
}

#[inline(always)]
fn fine_sums_impl(reference: &Bands<i16>, region: &Region) -> [u64; 3] {
    let shift = fine_row_shift(region);
    let round = half(shift) as u64;
    let w = reference.width;
    let mut sums = [0u64; 3];
    for (t, band) in reference.all().into_iter().enumerate() {
        for i in region.top..region.bottom {
            let row = &band[i * w + region.left..i * w + region.right];
            let inner = row.iter().fold(0u64, |acc, &c| {
                let a = (c as i32).unsigned_abs() as u64;
                acc.wrapping_add(a * a * a)
            });
            sums[t] = sums[t].wrapping_add(inner.wrapping_add(round) >> shift);
        }
    }
    sums
}

/// Scale 0: the sums of [`fine_sums`] weighted by `weights`^3.
pub(crate) fn weigh_fine(sums: [u64; 3], region: &Region, weights: [f32; 3]) -> [f32; 3] {
    // 6 bits of the DWT's Q format remain per factor: 18 after cubing.
    let scale = 2f64.powf(18.0 - fine_row_shift(region) as f64);
    weigh(sums, scale, weights)
}

/// Bits of the Q format left in a cube at scales 1, 2, 3.
const COARSE_FLOAT_SHIFT: [u32; 3] = [32, 27, 23];
/// Squaring shifts at scales 1, 2, 3 (libvmaf rounds with 1 << shift, a
/// full unit rather than a half).
const COARSE_SQUARE_SHIFT: [u32; 3] = [31, 30, 31];

/// Rounding shifts of the scale 1-3 sums: after squaring, after cubing and
/// per row.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CoarseShifts {
    pub square: u32,
    pub cube: u32,
    pub row: u32,
}

impl CoarseShifts {
    pub(crate) fn new(scale: usize, region: &Region) -> Self {
        Self {
            square: COARSE_SQUARE_SHIFT[scale - 1],
            cube: ceil_log2(region.width(), 0.0),
            row: ceil_log2(region.height(), 0.0),
        }
    }
}

simd_dispatch! {
    /// Scales 1-3: |c|^3 with rounding shifts after squaring, cubing and each
    /// row.
    pub fn coarse_sums(reference: &Bands<i32>, scale: usize, region: &Region) -> [u64; 3] => coarse_sums_impl
}

#[inline(always)]
fn coarse_sums_impl(reference: &Bands<i32>, scale: usize, region: &Region) -> [u64; 3] {
    let shifts = CoarseShifts::new(scale, region);
    let sq_shift = shifts.square;
    let sq_round = 1u64 << sq_shift;
    let cube_shift = shifts.cube;
    let cube_round = half(cube_shift) as u64;
    let row_shift = shifts.row;
    let row_round = half(row_shift) as u64;
    let w = reference.width;
    let mut sums = [0u64; 3];
    for (t, band) in reference.all().into_iter().enumerate() {
        for i in region.top..region.bottom {
            let row = &band[i * w + region.left..i * w + region.right];
            let inner = row.iter().fold(0u64, |acc, &c| {
                let a = c.unsigned_abs() as u64;
                acc.wrapping_add(
                    ((((a * a + sq_round) >> sq_shift) * a) + cube_round) >> cube_shift,
                )
            });
            sums[t] = sums[t].wrapping_add(inner.wrapping_add(row_round) >> row_shift);
        }
    }
    sums
}

/// Scales 1-3: the sums of [`coarse_sums`] weighted like scale 0.
pub(crate) fn weigh_coarse(
    sums: [u64; 3],
    scale: usize,
    region: &Region,
    weights: [f32; 3],
) -> [f32; 3] {
    let shifts = CoarseShifts::new(scale, region);
    let exp = COARSE_FLOAT_SHIFT[scale - 1]
        .wrapping_sub(shifts.row)
        .wrapping_sub(shifts.cube);
    weigh(sums, 2f64.powf(exp as f64), weights)
}

/// `(sum / scale) * weight^3` in double, as libvmaf, then to float.
fn weigh(sums: [u64; 3], scale: f64, weights: [f32; 3]) -> [f32; 3] {
    std::array::from_fn(|t| ((sums[t] as f64 / scale) * (weights[t] as f64).powf(3.0)) as f32)
}
