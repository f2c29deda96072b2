//! The ADM denominator: the CSF-weighted cube norm of the reference's detail
//! coefficients, per orientation, over the scored region.

use super::cm::{ceil_log2, half};
use super::dwt::Bands;
use super::region::Region;

/// Scale 0: sums |c|^3 of each orientation in u64 (per-row rounding shift
/// so that a large picture cannot overflow), then weights by `weights`^3.
pub fn reference_energy_fine(
    reference: &Bands<i16>,
    region: &Region,
    weights: [f32; 3],
) -> [f32; 3] {
    let shift = ((region.area() as f64).log2() - 20.0).ceil().max(0.0) as u32;
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
    // 6 bits of the DWT's Q format remain per factor: 18 after cubing.
    let scale = 2f64.powf(18.0 - shift as f64);
    weigh(sums, scale, weights)
}

/// Bits of the Q format left in a cube at scales 1, 2, 3.
const COARSE_FLOAT_SHIFT: [u32; 3] = [32, 27, 23];
/// Squaring shifts at scales 1, 2, 3 (libvmaf rounds with 1 << shift, a
/// full unit rather than a half).
const COARSE_SQUARE_SHIFT: [u32; 3] = [31, 30, 31];

/// Scales 1-3: |c|^3 with rounding shifts after squaring, cubing and each
/// row, then weighted like scale 0.
pub fn reference_energy_coarse(
    reference: &Bands<i32>,
    scale: usize,
    region: &Region,
    weights: [f32; 3],
) -> [f32; 3] {
    let sq_shift = COARSE_SQUARE_SHIFT[scale - 1];
    let sq_round = 1u64 << sq_shift;
    let cube_shift = ceil_log2(region.width(), 0.0);
    let cube_round = half(cube_shift) as u64;
    let row_shift = ceil_log2(region.height(), 0.0);
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
    let exp = COARSE_FLOAT_SHIFT[scale - 1]
        .wrapping_sub(row_shift)
        .wrapping_sub(cube_shift);
    weigh(sums, 2f64.powf(exp as f64), weights)
}

/// `(sum / scale) * weight^3` in double, as libvmaf, then to float.
fn weigh(sums: [u64; 3], scale: f64, weights: [f32; 3]) -> [f32; 3] {
    std::array::from_fn(|t| ((sums[t] as f64 / scale) * (weights[t] as f64).powf(3.0)) as f32)
}
