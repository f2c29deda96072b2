//! The decimation pass: low-pass a scale with the next scale's filter and
//! keep its even rows and columns (odd sizes round down).
//!
//! This portable code is the reference and the fallback; scale 0 of 8-bit
//! pictures, and of 9- to 15-bit pictures within their bit depth, takes
//! `decimate_u8_avx2` on CPUs with AVX2, other 16-bit planes
//! `decimate_wide_avx512` on CPUs with AVX-512.

use super::filter::{has_avx2, round_shift_u32, VifSample, LANES};
use super::tables::{FILTERS, MAX_HALF};
use crate::feature::common::mirrored_filter::{mirror, mirror_edges};
use crate::picture::{PlaneRef, Sample};

/// Scratch rows of the decimation pass, sized for scale 0.
#[derive(Debug)]
pub struct Decimator {
    width: usize,
    padded_ref: Vec<u32>,
    padded_dis: Vec<u32>,
    /// The padded rows split into even and odd columns, so that the
    /// horizontal pass, which keeps every other column, reads contiguously.
    split_ref: EvenOdd,
    split_dis: EvenOdd,
    #[cfg(target_arch = "x86_64")]
    rows_u8: super::decimate_u8_avx2::Rows,
    #[cfg(target_arch = "x86_64")]
    wide: super::decimate_wide_avx512::WideRow,
}

#[derive(Debug)]
struct EvenOdd {
    even: Vec<u32>,
    odd: Vec<u32>,
}

impl EvenOdd {
    fn new(len: usize) -> Self {
        Self {
            even: vec![0; len],
            odd: vec![0; len],
        }
    }

    fn split(&mut self, row: &[u32]) {
        let pairs = row.chunks_exact(2);
        if let [last] = pairs.remainder() {
            self.even[row.len() / 2] = *last;
        }
        for (pair, (e, o)) in pairs.zip(self.even.iter_mut().zip(&mut self.odd)) {
            (*e, *o) = (pair[0], pair[1]);
        }
    }
}

/// What one call of the pass works on.
struct Pass<'p, 'o, T> {
    reference: PlaneRef<'p, T>,
    distorted: PlaneRef<'p, T>,
    filter: &'static [u16],
    /// Brings the vertical sums back to 16 bits.
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
            split_ref: EvenOdd::new(width / 2 + MAX_HALF + 1),
            split_dis: EvenOdd::new(width / 2 + MAX_HALF + 1),
            #[cfg(target_arch = "x86_64")]
            rows_u8: super::decimate_u8_avx2::Rows::new(width),
            #[cfg(target_arch = "x86_64")]
            wide: super::decimate_wide_avx512::WideRow::new(width),
        }
    }

    /// Low-passes the pictures of scale `scale - 1` (`sample_bits`-bit
    /// samples) with scale `scale`'s filter and keeps the even rows and
    /// columns, as 16-bit values, into tightly packed `(w / 2) x (h / 2)`
    /// planes.
    pub fn run<T: VifSample>(
        &mut self,
        reference: PlaneRef<'_, T>,
        distorted: PlaneRef<'_, T>,
        scale: usize,
        sample_bits: u32,
        out_ref: &mut [u16],
        out_dis: &mut [u16],
    ) {
        assert!(
            reference.width <= self.width,
            "scratch sized for a narrower picture"
        );
        let mut pass = Pass {
            reference,
            distorted,
            filter: FILTERS[scale],
            mean_shift: sample_bits,
            out_ref,
            out_dis,
        };
        #[cfg(target_arch = "x86_64")]
        if let (Some(r), Some(d)) = (T::as_u16(reference), T::as_u16(distorted)) {
            if scale == 1 && (9..=15).contains(&sample_bits) && has_avx2() {
                let outputs = [&mut *pass.out_ref, &mut *pass.out_dis];
                // SAFETY: the CPU supports AVX2, checked; the rows were made
                // for this decimator's width; the bit depth is checked.
                let done = unsafe {
                    super::decimate_u8_avx2::decimate_u16(
                        &mut self.rows_u8,
                        [r, d],
                        sample_bits,
                        outputs,
                    )
                };
                if done {
                    return;
                }
            }
            use super::decimate_wide_avx512 as wide;
            if wide::available() {
                let outputs = [&mut *pass.out_ref, &mut *pass.out_dis];
                // SAFETY: the CPU supports the pass, checked; the row was
                // made for this decimator's width; the filter is VIF's.
                return unsafe {
                    wide::decimate(&mut self.wide, [r, d], pass.filter, sample_bits, outputs)
                };
            }
        }
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            if let (1, 8, Some(r), Some(d)) =
                (scale, sample_bits, T::as_u8(reference), T::as_u8(distorted))
            {
                let outputs = [&mut *pass.out_ref, &mut *pass.out_dis];
                // SAFETY: the CPU supports AVX2, checked just above; the
                // rows were made for this decimator's width.
                return unsafe {
                    super::decimate_u8_avx2::decimate(&mut self.rows_u8, [r, d], outputs)
                };
            }
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
    let half = pass.filter.len() / 2;
    let taps = pass.filter.len();
    for i in 0..out_h {
        // The source rows of each tap, mirrored at the picture's edges.
        let mut ref_rows: [&[T]; FILTERS[1].len()] = [&[]; FILTERS[1].len()];
        let mut dis_rows = ref_rows;
        for k in 0..taps {
            let y = mirror((2 * i + k) as isize - half as isize, h);
            ref_rows[k] = pass.reference.row(y);
            dis_rows[k] = pass.distorted.row(y);
        }
        let (ref_rows, dis_rows) = (&ref_rows[..taps], &dis_rows[..taps]);
        let mut j = 0;
        while j + LANES <= w {
            vertical_block::<T, LANES>(d, pass, ref_rows, dis_rows, j);
            j += LANES;
        }
        for j in j..w {
            vertical_block::<T, 1>(d, pass, ref_rows, dis_rows, j);
        }
        for (padded, split) in [
            (&mut d.padded_ref, &mut d.split_ref),
            (&mut d.padded_dis, &mut d.split_dis),
        ] {
            let row = &mut padded[MAX_HALF - half..MAX_HALF + w + half];
            mirror_edges(row, half);
            split.split(row);
        }

        let row_ref = &mut pass.out_ref[i * out_w..(i + 1) * out_w];
        let row_dis = &mut pass.out_dis[i * out_w..(i + 1) * out_w];
        let mut j = 0;
        while j + LANES <= out_w {
            horizontal_block::<LANES>(d, pass.filter, j, row_ref, row_dis);
            j += LANES;
        }
        for j in j..out_w {
            horizontal_block::<1>(d, pass.filter, j, row_ref, row_dis);
        }
    }
}

/// Output columns `j..j + B` of the horizontal pass: output column `j` is
/// the filter centred on padded column `2j + half`, so even taps read the
/// even columns and odd taps the odd ones.
#[inline(always)]
fn horizontal_block<const B: usize>(
    d: &Decimator,
    filter: &[u16],
    j: usize,
    row_ref: &mut [u16],
    row_dis: &mut [u16],
) {
    let mut sum_ref = [0u32; B];
    let mut sum_dis = [0u32; B];
    for (k, &c) in filter.iter().enumerate() {
        let (q, parity_odd) = (k / 2, k % 2 == 1);
        let (r, dd) = if parity_odd {
            (
                &d.split_ref.odd[j + q..j + q + B],
                &d.split_dis.odd[j + q..j + q + B],
            )
        } else {
            (
                &d.split_ref.even[j + q..j + q + B],
                &d.split_dis.even[j + q..j + q + B],
            )
        };
        let c = u32::from(c);
        for l in 0..B {
            sum_ref[l] = sum_ref[l].wrapping_add(c.wrapping_mul(r[l]));
            sum_dis[l] = sum_dis[l].wrapping_add(c.wrapping_mul(dd[l]));
        }
    }
    for l in 0..B {
        row_ref[j + l] = round_shift_u32(sum_ref[l], 16) as u16;
        row_dis[j + l] = round_shift_u32(sum_dis[l], 16) as u16;
    }
}

/// Columns `j..j + B` of the vertical pass over the tap rows.
#[inline(always)]
fn vertical_block<T: Sample, const B: usize>(
    d: &mut Decimator,
    pass: &Pass<'_, '_, T>,
    ref_rows: &[&[T]],
    dis_rows: &[&[T]],
    j: usize,
) {
    let mut acc_ref = [0u32; B];
    let mut acc_dis = [0u32; B];
    for ((&c, r), dd) in pass.filter.iter().zip(ref_rows).zip(dis_rows) {
        let (r, dd) = (&r[j..j + B], &dd[j..j + B]);
        let c = u32::from(c);
        for l in 0..B {
            acc_ref[l] = acc_ref[l].wrapping_add(c * r[l].into());
        }
        for l in 0..B {
            acc_dis[l] = acc_dis[l].wrapping_add(c * dd[l].into());
        }
    }
    let at = MAX_HALF + j;
    for l in 0..B {
        d.padded_ref[at + l] = round_shift_u32(acc_ref[l], pass.mean_shift);
        d.padded_dis[at + l] = round_shift_u32(acc_dis[l], pass.mean_shift);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::vif::moments::tests::test_pair;

    fn check<T: VifSample>(r: &[T], d: &[T], w: usize, h: usize, scale: usize, bits: u32) {
        let plane = |data| PlaneRef {
            data,
            width: w,
            height: h,
            stride: w,
        };
        let n = (w / 2) * (h / 2);
        let mut decimator = Decimator::new(w);
        let (mut best_ref, mut best_dis) = (vec![0; n], vec![0; n]);
        decimator.run(
            plane(r),
            plane(d),
            scale,
            bits,
            &mut best_ref,
            &mut best_dis,
        );
        let (mut out_ref, mut out_dis) = (vec![0; n], vec![0; n]);
        let mut pass = Pass {
            reference: plane(r),
            distorted: plane(d),
            filter: FILTERS[scale],
            mean_shift: bits,
            out_ref: &mut out_ref,
            out_dis: &mut out_dis,
        };
        decimate(&mut decimator, &mut pass);
        assert_eq!(
            (&out_ref, &out_dis),
            (&best_ref, &best_dis),
            "scale {scale} {w}x{h}"
        );
        assert!(out_ref.iter().any(|&v| v != 0));
    }

    /// The 16-bit multiply-add pass of 9- to 15-bit scale 0, called
    /// directly (so that a fallback cannot hide it), against the portable
    /// code; and its refusal of a sample above the bit depth.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn sample_bits_pass_matches_the_portable_pass() {
        use super::super::decimate_u8_avx2::decimate_u16;
        if !has_avx2() {
            eprintln!("skipped: this CPU lacks AVX2");
            return;
        }
        fn plane(data: &[u16], w: usize, h: usize) -> PlaneRef<'_, u16> {
            PlaneRef {
                data,
                width: w,
                height: h,
                stride: w,
            }
        }
        for (w, h) in [(37, 21), (66, 41), (10, 10), (203, 30)] {
            let n = (w / 2) * (h / 2);
            let mut decimator = Decimator::new(w);
            for bits in 9..=15 {
                let (mut r, d) = test_pair(w, h, (1 << bits) - 1, bits);
                // Full-scale rows: the AVX-512 pass's largest folded sums.
                r[..3 * w].fill((1 << bits) - 1);
                let (mut out_ref, mut out_dis) = (vec![0; n], vec![0; n]);
                let mut pass = Pass {
                    reference: plane(&r, w, h),
                    distorted: plane(&d, w, h),
                    filter: FILTERS[1],
                    mean_shift: bits,
                    out_ref: &mut out_ref,
                    out_dis: &mut out_dis,
                };
                decimate(&mut decimator, &mut pass);
                let (mut fast_ref, mut fast_dis) = (vec![0; n], vec![0; n]);
                let rows = &mut decimator.rows_u8;
                let outputs = [&mut fast_ref[..], &mut fast_dis[..]];
                // SAFETY: AVX2 checked above; the rows are made for w.
                let done = unsafe {
                    decimate_u16(rows, [plane(&r, w, h), plane(&d, w, h)], bits, outputs)
                };
                assert!(done, "{bits}-bit {w}x{h}");
                assert_eq!(
                    (fast_ref, fast_dis),
                    (out_ref, out_dis),
                    "{bits}-bit {w}x{h}"
                );
            }
            let (r, mut d) = test_pair(w, h, 1023, 9);
            d[w * h / 2] = 1024;
            let outputs = [&mut vec![0; n][..], &mut vec![0; n][..]];
            let rows = &mut decimator.rows_u8;
            // SAFETY: as above.
            let done =
                unsafe { decimate_u16(rows, [plane(&r, w, h), plane(&d, w, h)], 10, outputs) };
            assert!(!done, "{w}x{h}");
        }
    }

    /// The dispatched pass (AVX2 or AVX-512 where the CPU has it) against
    /// the portable code, on odd sizes and every decimating filter; 8-bit
    /// pictures also at their extremes (the AVX-512 pass adds mirrored
    /// samples before multiplying).
    #[test]
    fn simd_and_portable_passes_agree() {
        for (w, h) in [(37, 21), (66, 41), (10, 10), (203, 30)] {
            let (r, d) = test_pair(w, h, 255, 3);
            let narrow = |v: &[u16]| v.iter().map(|&x| x as u8).collect::<Vec<_>>();
            check(&narrow(&r), &narrow(&d), w, h, 1, 8);
            let white = vec![255u8; w * h];
            let stripes: Vec<u8> = (0..w * h)
                .map(|i| if (i / w + i % w) % 3 == 0 { 255 } else { 0 })
                .collect();
            check(&white, &stripes, w, h, 1, 8);
            for (scale, bits) in [(1, 9), (1, 10), (1, 12), (1, 15), (1, 16), (2, 16), (3, 16)] {
                let (r, d) = test_pair(w, h, (1 << bits) - 1, 3 + scale as u32);
                check(&r, &d, w, h, scale, bits);
            }
            // Samples above the bit depth: the 32-bit sums wrap alike.
            let (r, d) = test_pair(w, h, u32::from(u16::MAX), 5);
            check(&r, &d, w, h, 1, 10);
        }
    }
}
