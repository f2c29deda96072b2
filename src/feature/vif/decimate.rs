//! The decimation pass: low-pass a scale with the next scale's filter and
//! keep its even rows and columns (odd sizes round down).

use super::filter::{has_avx2, mirror, mirror_edges, round_shift_u32, LANES};
use super::tables::{FILTERS, MAX_HALF};
use crate::picture::{PlaneRef, Sample};

/// Scratch rows of the decimation pass, sized for scale 0.
#[derive(Debug)]
pub struct Decimator {
    width: usize,
    padded_ref: Vec<u32>,
    padded_dis: Vec<u32>,
}

/// What one call of the pass works on.
struct Pass<'p, 'o, T> {
    reference: PlaneRef<'p, T>,
    distorted: PlaneRef<'p, T>,
    filter: &'static [u16],
    mean_shift: u32,
    out_ref: &'o mut [u16],
    out_dis: &'o mut [u16],
}

impl Decimator {
    pub fn new(width: usize) -> Self {
        Self {
            width,
            padded_ref: vec![0; width + 2 * MAX_HALF],
            padded_dis: vec![0; width + 2 * MAX_HALF],
        }
    }

    /// Low-passes the pictures of scale `scale - 1` with scale `scale`'s
    /// filter and keeps the even rows and columns, into tightly packed
    /// `(w / 2) x (h / 2)` planes. `mean_shift` brings the vertical sums back
    /// to 16 bits (the sample bit depth out of scale 0, else 16).
    pub fn run<T: Sample>(
        &mut self,
        reference: PlaneRef<'_, T>,
        distorted: PlaneRef<'_, T>,
        scale: usize,
        mean_shift: u32,
        out_ref: &mut [u16],
        out_dis: &mut [u16],
    ) {
        assert!(reference.width <= self.width, "scratch sized for a narrower picture");
        let mut pass = Pass {
            reference,
            distorted,
            filter: FILTERS[scale],
            mean_shift,
            out_ref,
            out_dis,
        };
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { decimate_avx2(self, &mut pass) };
        }
        decimate(self, &mut pass)
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn decimate_avx2<T: Sample>(d: &mut Decimator, pass: &mut Pass<'_, '_, T>) {
    decimate(d, pass)
}

#[inline(always)]
fn decimate<T: Sample>(d: &mut Decimator, pass: &mut Pass<'_, '_, T>) {
    let (w, h) = (pass.reference.width, pass.reference.height);
    let (out_w, out_h) = (w / 2, h / 2);
    let taps = pass.filter.len();
    let half = taps / 2;
    for i in 0..out_h {
        let mut j = 0;
        while j + LANES <= w {
            vertical_block::<T, LANES>(d, pass, 2 * i, j);
            j += LANES;
        }
        for j in j..w {
            vertical_block::<T, 1>(d, pass, 2 * i, j);
        }
        let pr = &mut d.padded_ref[MAX_HALF - half..MAX_HALF + w + half];
        let pd = &mut d.padded_dis[MAX_HALF - half..MAX_HALF + w + half];
        mirror_edges(pr, half);
        mirror_edges(pd, half);

        let row_ref = &mut pass.out_ref[i * out_w..(i + 1) * out_w];
        let row_dis = &mut pass.out_dis[i * out_w..(i + 1) * out_w];
        for j in 0..out_w {
            let (window_ref, window_dis) = (&pr[2 * j..2 * j + taps], &pd[2 * j..2 * j + taps]);
            let mut sum_ref = 0u32;
            let mut sum_dis = 0u32;
            for ((&c, &r), &d) in pass.filter.iter().zip(window_ref).zip(window_dis) {
                sum_ref = sum_ref.wrapping_add(u32::from(c).wrapping_mul(r));
                sum_dis = sum_dis.wrapping_add(u32::from(c).wrapping_mul(d));
            }
            row_ref[j] = round_shift_u32(sum_ref, 16) as u16;
            row_dis[j] = round_shift_u32(sum_dis, 16) as u16;
        }
    }
}

/// Columns `j..j + B` of the vertical pass of source row `y0`.
#[inline(always)]
fn vertical_block<T: Sample, const B: usize>(
    d: &mut Decimator,
    pass: &Pass<'_, '_, T>,
    y0: usize,
    j: usize,
) {
    let h = pass.reference.height;
    let half = pass.filter.len() / 2;
    let mut acc_ref = [0u32; B];
    let mut acc_dis = [0u32; B];
    for (k, &c) in pass.filter.iter().enumerate() {
        let y = mirror(y0 as isize + k as isize - half as isize, h);
        let r = &pass.reference.row(y)[j..j + B];
        let dd = &pass.distorted.row(y)[j..j + B];
        let c = u32::from(c);
        for l in 0..B {
            let (r, dd): (u32, u32) = (r[l].into(), dd[l].into());
            acc_ref[l] = acc_ref[l].wrapping_add(c * r);
            acc_dis[l] = acc_dis[l].wrapping_add(c * dd);
        }
    }
    let at = MAX_HALF + j;
    for l in 0..B {
        d.padded_ref[at + l] = round_shift_u32(acc_ref[l], pass.mean_shift);
        d.padded_dis[at + l] = round_shift_u32(acc_dis[l], pass.mean_shift);
    }
}
