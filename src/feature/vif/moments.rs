//! The moment pass: per pixel of one scale, the Gaussian-weighted local
//! means and second moments of both pictures, fed straight into the VIF
//! statistic row by row.

use super::filter::{
    has_avx2, mirror, mirror_edges, round_shift_u32, SquareAccumulator, VerticalShifts, VifSample,
    LANES,
};
use super::stats::{MomentBlock, ScaleSums};
use super::tables::{FILTERS, MAX_HALF};
use crate::picture::PlaneRef;

/// One vertically filtered row per quantity, with `MAX_HALF` mirrored
/// columns each side.
#[derive(Debug)]
struct PaddedRows {
    mu1: Vec<u32>,
    mu2: Vec<u32>,
    xx: Vec<u32>,
    yy: Vec<u32>,
    xy: Vec<u32>,
}

/// Scratch of the moment pass, sized for the widest scale.
#[derive(Debug)]
pub struct MomentFilter {
    width: usize,
    rows: PaddedRows,
}

/// What one call of the pass works on.
struct Pass<'a, 'p, T> {
    reference: PlaneRef<'p, T>,
    distorted: PlaneRef<'p, T>,
    filter: &'static [u16],
    shifts: VerticalShifts,
    log2: &'a [u16; 65536],
    gain_limit: f64,
}

impl MomentFilter {
    pub fn new(width: usize) -> Self {
        let n = width + 2 * MAX_HALF;
        Self {
            width,
            rows: PaddedRows {
                mu1: vec![0; n],
                mu2: vec![0; n],
                xx: vec![0; n],
                yy: vec![0; n],
                xy: vec![0; n],
            },
        }
    }

    /// Sums the VIF statistic over every pixel of scale `scale` (pictures
    /// `reference` and `distorted`, no wider than this filter was made for).
    pub fn accumulate<T: VifSample>(
        &mut self,
        reference: PlaneRef<'_, T>,
        distorted: PlaneRef<'_, T>,
        scale: usize,
        shifts: VerticalShifts,
        log2: &[u16; 65536],
        gain_limit: f64,
    ) -> ScaleSums {
        assert!(reference.width <= self.width, "scratch sized for a narrower picture");
        let pass = Pass {
            reference,
            distorted,
            filter: FILTERS[scale],
            shifts,
            log2,
            gain_limit,
        };
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { accumulate_avx2(&mut self.rows, &pass) };
        }
        accumulate(&mut self.rows, &pass)
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn accumulate_avx2<T: VifSample>(rows: &mut PaddedRows, pass: &Pass<'_, '_, T>) -> ScaleSums {
    accumulate(rows, pass)
}

#[inline(always)]
fn accumulate<T: VifSample>(rows: &mut PaddedRows, pass: &Pass<'_, '_, T>) -> ScaleSums {
    let (w, h) = (pass.reference.width, pass.reference.height);
    let half = pass.filter.len() / 2;
    let mut sums = ScaleSums::default();
    for i in 0..h {
        vertical(rows, pass, i);
        for row in [&mut rows.mu1, &mut rows.mu2, &mut rows.xx, &mut rows.yy, &mut rows.xy] {
            mirror_edges(&mut row[MAX_HALF - half..MAX_HALF + w + half], half);
        }
        horizontal(rows, pass, &mut sums);
    }
    sums
}

/// Vertical pass of row `i` into the middle of the padded rows.
#[inline(always)]
fn vertical<T: VifSample>(rows: &mut PaddedRows, pass: &Pass<'_, '_, T>, i: usize) {
    let w = pass.reference.width;
    let mut j = 0;
    while j + LANES <= w {
        vertical_block::<T, LANES>(rows, pass, i, j);
        j += LANES;
    }
    for j in j..w {
        vertical_block::<T, 1>(rows, pass, i, j);
    }
}

/// Columns `j..j + B` of the vertical pass.
#[inline(always)]
fn vertical_block<T: VifSample, const B: usize>(
    rows: &mut PaddedRows,
    pass: &Pass<'_, '_, T>,
    i: usize,
    j: usize,
) {
    let h = pass.reference.height;
    let half = pass.filter.len() / 2;
    let mut mu1 = [0u32; B];
    let mut mu2 = [0u32; B];
    let mut xx = [T::SquareAcc::default(); B];
    let mut yy = [T::SquareAcc::default(); B];
    let mut xy = [T::SquareAcc::default(); B];
    for (k, &c) in pass.filter.iter().enumerate() {
        let y = mirror(i as isize + k as isize - half as isize, h);
        let r = &pass.reference.row(y)[j..j + B];
        let d = &pass.distorted.row(y)[j..j + B];
        let c = u32::from(c);
        for l in 0..B {
            let (r, d): (u32, u32) = (r[l].into(), d[l].into());
            let (cr, cd) = (c * r, c * d);
            mu1[l] = mu1[l].wrapping_add(cr);
            mu2[l] = mu2[l].wrapping_add(cd);
            xx[l] = xx[l].add_product(cr, r);
            yy[l] = yy[l].add_product(cd, d);
            xy[l] = xy[l].add_product(cr, d);
        }
    }
    let at = MAX_HALF + j;
    let shifts = pass.shifts;
    for l in 0..B {
        rows.mu1[at + l] = round_shift_u32(mu1[l], shifts.mean);
        rows.mu2[at + l] = round_shift_u32(mu2[l], shifts.mean);
        rows.xx[at + l] = xx[l].narrow(shifts.square);
        rows.yy[at + l] = yy[l].narrow(shifts.square);
        rows.xy[at + l] = xy[l].narrow(shifts.square);
    }
}

/// Horizontal pass over the padded rows, each pixel into `sums`.
#[inline(always)]
fn horizontal<T>(rows: &PaddedRows, pass: &Pass<'_, '_, T>, sums: &mut ScaleSums) {
    let w = pass.reference.width;
    let mut j = 0;
    while j + LANES <= w {
        horizontal_block::<T, LANES>(rows, pass, j, sums);
        j += LANES;
    }
    for j in j..w {
        horizontal_block::<T, 1>(rows, pass, j, sums);
    }
}

/// Columns `j..j + B` of the horizontal pass. The filters are symmetric,
/// so mirrored taps are summed before weighting (exact: the sums wrap as
/// C's do and their true values fit).
#[inline(always)]
fn horizontal_block<T, const B: usize>(
    rows: &PaddedRows,
    pass: &Pass<'_, '_, T>,
    j: usize,
    sums: &mut ScaleSums,
) {
    let taps = pass.filter.len();
    let half = taps / 2;
    let first = MAX_HALF - half + j;
    let mut mu1 = [0u32; B];
    let mut mu2 = [0u32; B];
    let mut xx = [0u64; B];
    let mut yy = [0u64; B];
    let mut xy = [0u64; B];
    for (k, &c) in pass.filter[..half].iter().enumerate() {
        let (s, t) = (first + k, first + taps - 1 - k);
        let (c32, c64) = (u32::from(c), u64::from(c));
        let (m1a, m1b) = (&rows.mu1[s..s + B], &rows.mu1[t..t + B]);
        let (m2a, m2b) = (&rows.mu2[s..s + B], &rows.mu2[t..t + B]);
        let (xa, xb) = (&rows.xx[s..s + B], &rows.xx[t..t + B]);
        let (ya, yb) = (&rows.yy[s..s + B], &rows.yy[t..t + B]);
        let (za, zb) = (&rows.xy[s..s + B], &rows.xy[t..t + B]);
        for l in 0..B {
            mu1[l] = mu1[l].wrapping_add(c32.wrapping_mul(m1a[l].wrapping_add(m1b[l])));
            mu2[l] = mu2[l].wrapping_add(c32.wrapping_mul(m2a[l].wrapping_add(m2b[l])));
            xx[l] = xx[l].wrapping_add(c64 * u64::from(xa[l]) + c64 * u64::from(xb[l]));
            yy[l] = yy[l].wrapping_add(c64 * u64::from(ya[l]) + c64 * u64::from(yb[l]));
            xy[l] = xy[l].wrapping_add(c64 * u64::from(za[l]) + c64 * u64::from(zb[l]));
        }
    }
    let s = first + half;
    let (c32, c64) = (u32::from(pass.filter[half]), u64::from(pass.filter[half]));
    for l in 0..B {
        mu1[l] = mu1[l].wrapping_add(c32.wrapping_mul(rows.mu1[s + l]));
        mu2[l] = mu2[l].wrapping_add(c32.wrapping_mul(rows.mu2[s + l]));
        xx[l] = xx[l].wrapping_add(c64 * u64::from(rows.xx[s + l]));
        yy[l] = yy[l].wrapping_add(c64 * u64::from(rows.yy[s + l]));
        xy[l] = xy[l].wrapping_add(c64 * u64::from(rows.xy[s + l]));
    }
    let round = |v: u64| (v.wrapping_add(1 << 15) >> 16) as u32;
    let block = MomentBlock {
        mu1,
        mu2,
        xx: xx.map(round),
        yy: yy.map(round),
        xy: xy.map(round),
    };
    sums.add_block(&block, pass.log2, pass.gain_limit);
}
