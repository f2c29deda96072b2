//! The motion SAD of planes of up to 12 bits with AVX-512 BW: `sad`'s
//! passes on 32 samples a vector in 16-bit lanes, each filter's mirrored
//! taps added first and the products summed in pairs by `vpmaddwd` (the
//! portable loops take 16 samples a vector in 32-bit lanes and multiply
//! each tap).
//!
//! Up to 12 bits every value fits 16 bits where it is multiplied: the
//! differences and their folded sums (|d0 + d4| <= 8190), the rounding
//! term (2^11), and the vertical output's parts `hi = y >> 8` and `lo = y
//! & 0xff` (|y| < 2^16); the products' pair sums fit 32 bits. So the
//! results are the portable loops' bits. The
//! horizontal pass's outputs are only summed (absolute values, a wrapping
//! 32-bit sum per row), so their order within a vector does not matter.

#![cfg(target_arch = "x86_64")]

use super::sad::{horizontal_tap, FILTER, RADIUS};
use crate::feature::common::mirrored_filter::mirror;
use crate::feature::common::words16::{first_lanes, load_samples, weight_pair};
use crate::picture::{PlaneRef, Sample};
use std::arch::x86_64::*;

/// Samples per vector.
const LANES: usize = 32;

/// Narrowest plane this pass takes (narrower ones take the portable pass).
pub(super) const MIN_WIDTH: usize = 2 * LANES;

/// Deepest samples this pass takes exactly.
pub(super) const MAX_BITS: u32 = 12;

/// [`super::sad::blurred_difference_sad`] of planes of `bits` bits (at
/// most [`MAX_BITS`]), at least [`MIN_WIDTH`] wide; `hi` and `lo` are
/// scratch rows of their width. `None` when a sample is `2^bits` or more
/// (the 16-bit lanes would not hold the sums: the portable pass takes
/// those).
///
/// # Safety
/// The CPU must have AVX-512 F and BW.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
pub(super) unsafe fn blurred_difference_sad<T: Sample>(
    prev: &PlaneRef<'_, T>,
    cur: &PlaneRef<'_, T>,
    bits: u32,
    hi: &mut [i16],
    lo: &mut [i16],
) -> Option<u64> {
    let (w, h) = (cur.width, cur.height);
    assert!(w >= MIN_WIDTH && h >= 3 && prev.width == w && prev.height == h);
    assert!((1..=MAX_BITS).contains(&bits));
    let (hi, lo) = (&mut hi[..w], &mut lo[..w]);
    // Every sample's bits, ORed: each row is the centre tap of one output
    // row, where it is loaded.
    let mut seen = _mm512_setzero_si512();
    let mut sad = 0u64;
    for i in 0..h {
        let taps: [usize; 5] =
            std::array::from_fn(|k| mirror(i as isize + k as isize - RADIUS as isize, h));
        let p = taps.map(|r| prev.row(r));
        let c = taps.map(|r| cur.row(r));
        // SAFETY: AVX-512 BW, as this function; the rows are `w` long.
        let any = unsafe { vertical(p, c, bits, hi, lo, &mut seen) };
        // Rows whose vertical pass is all zero add nothing.
        if any {
            // SAFETY: as above.
            sad += u64::from(unsafe { horizontal(hi, lo) });
        }
    }
    let above = _mm512_set1_epi16(!((1u32 << bits) - 1) as i16);
    (_mm512_test_epi16_mask(seen, above) == 0).then_some(sad)
}

/// `sad::vertical_pass`, `y = (sum_k FILTER[k] * (p[k] - c[k]) +
/// 2^(bits - 1)) >> bits`, into `hi = y >> 8` and `lo = y & 0xff`;
/// whether any `y` is nonzero. The centre rows' samples are ORed into
/// `seen`.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
unsafe fn vertical<T: Sample>(
    p: [&[T]; 5],
    c: [&[T]; 5],
    bits: u32,
    hi: &mut [i16],
    lo: &mut [i16],
    seen: &mut __m512i,
) -> bool {
    let w = hi.len();
    assert!(lo.len() == w && p.iter().chain(&c).all(|r| r.len() >= w));
    let outer_inner = _mm512_set1_epi32(weight_pair(FILTER[0], FILTER[1]));
    // The centre's weight beside the rounding term, paired with 1.
    let centre_round = _mm512_set1_epi32(weight_pair(FILTER[2], 1 << (bits - 1)));
    let shift = _mm_cvtsi32_si128(bits as i32);
    let ones = _mm512_set1_epi16(1);
    let low_byte = _mm512_set1_epi32(0xff);
    let mut any = _mm512_setzero_si512();
    let mut j = 0;
    while j < w {
        let lanes = first_lanes(w - j);
        // SAFETY: the lanes in `lanes` lie within the rows (w long).
        let pair = |k: usize| unsafe {
            (
                load_samples(p[k].as_ptr().add(j), lanes),
                load_samples(c[k].as_ptr().add(j), lanes),
            )
        };
        let d = |k: usize| {
            let (a, b) = pair(k);
            _mm512_sub_epi16(a, b)
        };
        let (middle_p, middle_c) = pair(2);
        *seen = _mm512_or_si512(*seen, _mm512_or_si512(middle_p, middle_c));
        let (outer, inner, centre) = (
            _mm512_add_epi16(d(0), d(4)),
            _mm512_add_epi16(d(1), d(3)),
            _mm512_sub_epi16(middle_p, middle_c),
        );
        // The low and high four columns of each 128-bit lane; the packs
        // below put them back in order.
        let sum = |a: __m512i, b: __m512i| {
            _mm512_sra_epi32(
                _mm512_add_epi32(
                    _mm512_madd_epi16(a, outer_inner),
                    _mm512_madd_epi16(b, centre_round),
                ),
                shift,
            )
        };
        let y_low = sum(
            _mm512_unpacklo_epi16(outer, inner),
            _mm512_unpacklo_epi16(centre, ones),
        );
        let y_high = sum(
            _mm512_unpackhi_epi16(outer, inner),
            _mm512_unpackhi_epi16(centre, ones),
        );
        any = _mm512_or_si512(any, _mm512_or_si512(y_low, y_high));
        let high = _mm512_packs_epi32(
            _mm512_srai_epi32::<8>(y_low),
            _mm512_srai_epi32::<8>(y_high),
        );
        let low = _mm512_packs_epi32(
            _mm512_and_si512(y_low, low_byte),
            _mm512_and_si512(y_high, low_byte),
        );
        // SAFETY: as above, for `hi` and `lo` (w long).
        unsafe {
            _mm512_mask_storeu_epi16(hi.as_mut_ptr().add(j), lanes, high);
            _mm512_mask_storeu_epi16(lo.as_mut_ptr().add(j), lanes, low);
        }
        j += LANES;
    }
    _mm512_test_epi32_mask(any, any) != 0
}

/// `sad::horizontal_abs_sum`: the wrapping 32-bit sum over a row of the
/// absolute horizontal pass.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
unsafe fn horizontal(hi: &[i16], lo: &[i16]) -> u32 {
    let w = hi.len();
    assert!(lo.len() == w && w > 2 * RADIUS);
    // The outputs with mirrored taps, one at a time.
    let edge = |j: usize| {
        let at: [usize; 5] =
            std::array::from_fn(|k| mirror(j as isize + k as isize - RADIUS as isize, w));
        horizontal_tap(at.map(|x| i32::from(hi[x])), at.map(|x| i32::from(lo[x]))).unsigned_abs()
    };
    let mut sum = 0u32;
    for j in (0..RADIUS).chain(w - RADIUS..w) {
        sum = sum.wrapping_add(edge(j));
    }
    let outer_inner = _mm512_set1_epi32(weight_pair(FILTER[0], FILTER[1]));
    let centre = _mm512_set1_epi32(weight_pair(FILTER[2], 0));
    let zero = _mm512_setzero_si512();
    let round = _mm512_set1_epi32(1 << 15);
    let mut total = zero;
    // Outputs j.. j + 32 of those whose taps are all inside the row; lanes
    // past the row's last such output load zeros, which give 0.
    let mut j = RADIUS;
    while j < w - RADIUS {
        let lanes = first_lanes(w - RADIUS - j);
        let filter = |row: &[i16]| {
            // SAFETY: output j + m reads taps j + m - 2 ..= j + m + 2 < w
            // for the lanes in `lanes`.
            let tap = |k: usize| unsafe {
                _mm512_maskz_loadu_epi16(lanes, row.as_ptr().add(j - RADIUS + k).cast())
            };
            let (outer, inner) = (
                _mm512_add_epi16(tap(0), tap(4)),
                _mm512_add_epi16(tap(1), tap(3)),
            );
            let middle = tap(2);
            let half = |a: __m512i, b: __m512i| {
                _mm512_add_epi32(
                    _mm512_madd_epi16(a, outer_inner),
                    _mm512_madd_epi16(b, centre),
                )
            };
            (
                half(
                    _mm512_unpacklo_epi16(outer, inner),
                    _mm512_unpacklo_epi16(middle, zero),
                ),
                half(
                    _mm512_unpackhi_epi16(outer, inner),
                    _mm512_unpackhi_epi16(middle, zero),
                ),
            )
        };
        let (a, b) = (filter(hi), filter(lo));
        // (A + ((B + 2^15) >> 8)) >> 8, as `sad::horizontal_tap`.
        let value = |a: __m512i, b: __m512i| {
            _mm512_srai_epi32::<8>(_mm512_add_epi32(
                a,
                _mm512_srai_epi32::<8>(_mm512_add_epi32(b, round)),
            ))
        };
        total = _mm512_add_epi32(total, _mm512_abs_epi32(value(a.0, b.0)));
        total = _mm512_add_epi32(total, _mm512_abs_epi32(value(a.1, b.1)));
        j += LANES;
    }
    sum.wrapping_add(_mm512_reduce_add_epi32(total) as u32)
}
