//! The motion SAD of planes of up to 12 bits with AVX2: `sad_avx512`'s
//! passes (mirrored taps folded, products paired by `vpmaddwd`, 16-bit
//! lanes; its note says why every value fits) on 16 samples a vector.
//!
//! AVX2 has no masked loads of 16-bit words, so a row's last vector is
//! taken where it ends: the vertical pass writes its overlapping columns
//! again with the same values, and the horizontal pass zeroes the lanes
//! of outputs already summed.

#![cfg(target_arch = "x86_64")]

use super::sad::{horizontal_tap, FILTER, RADIUS};
use crate::feature::common::mirrored_filter::mirror;
use crate::feature::common::words16::{load16_samples, weight_pair};
use crate::picture::{PlaneRef, Sample};
use std::arch::x86_64::*;

/// Samples per vector.
const LANES: usize = 16;

/// Narrowest plane this pass takes (narrower ones take the portable pass):
/// a whole vector of interior outputs.
pub(super) const MIN_WIDTH: usize = LANES + 2 * RADIUS;

/// Deepest samples this pass takes exactly.
pub(super) const MAX_BITS: u32 = 12;

/// The start of each vector over `n` lanes from 0: every whole vector,
/// then one ending at `n` (overlapping the one before) where `n` is not a
/// multiple of the lanes; `n >= LANES`.
fn vector_starts(n: usize) -> impl Iterator<Item = usize> {
    let whole = n / LANES * LANES;
    (0..whole)
        .step_by(LANES)
        .chain((whole < n).then_some(n - LANES))
}

/// [`super::sad::blurred_difference_sad`] of planes of `bits` bits (at
/// most [`MAX_BITS`]), at least [`MIN_WIDTH`] wide; `hi` and `lo` are
/// scratch rows of their width. `None` when a sample is `2^bits` or more
/// (the 16-bit lanes would not hold the sums: the portable pass takes
/// those).
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
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
    let mut seen = _mm256_setzero_si256();
    let mut sad = 0u64;
    for i in 0..h {
        let taps: [usize; 5] =
            std::array::from_fn(|k| mirror(i as isize + k as isize - RADIUS as isize, h));
        let p = taps.map(|r| prev.row(r));
        let c = taps.map(|r| cur.row(r));
        // SAFETY: AVX2, as this function; the rows are `w` long.
        let any = unsafe { vertical(p, c, bits, hi, lo, &mut seen) };
        // Rows whose vertical pass is all zero add nothing.
        if any {
            // SAFETY: as above.
            sad += u64::from(unsafe { horizontal(hi, lo) });
        }
    }
    let above = _mm256_set1_epi16(!((1u32 << bits) - 1) as i16);
    (_mm256_testz_si256(seen, above) != 0).then_some(sad)
}

/// `sad::vertical_pass` into `hi = y >> 8` and `lo = y & 0xff`, as
/// `sad_avx512::vertical`; whether any `y` is nonzero. The centre rows'
/// samples are ORed into `seen`.
#[target_feature(enable = "avx2")]
unsafe fn vertical<T: Sample>(
    p: [&[T]; 5],
    c: [&[T]; 5],
    bits: u32,
    hi: &mut [i16],
    lo: &mut [i16],
    seen: &mut __m256i,
) -> bool {
    let w = hi.len();
    assert!(lo.len() == w && w >= LANES && p.iter().chain(&c).all(|r| r.len() >= w));
    let outer_inner = _mm256_set1_epi32(weight_pair(FILTER[0], FILTER[1]));
    // The centre's weight beside the rounding term, paired with 1.
    let centre_round = _mm256_set1_epi32(weight_pair(FILTER[2], 1 << (bits - 1)));
    let shift = _mm_cvtsi32_si128(bits as i32);
    let ones = _mm256_set1_epi16(1);
    let low_byte = _mm256_set1_epi32(0xff);
    let mut any = _mm256_setzero_si256();
    for j in vector_starts(w) {
        // SAFETY: columns j..j + LANES <= w lie within the rows.
        let pair = |k: usize| unsafe {
            (
                load16_samples(p[k].as_ptr().add(j)),
                load16_samples(c[k].as_ptr().add(j)),
            )
        };
        let d = |k: usize| {
            let (a, b) = pair(k);
            _mm256_sub_epi16(a, b)
        };
        let (middle_p, middle_c) = pair(2);
        *seen = _mm256_or_si256(*seen, _mm256_or_si256(middle_p, middle_c));
        let (outer, inner, centre) = (
            _mm256_add_epi16(d(0), d(4)),
            _mm256_add_epi16(d(1), d(3)),
            _mm256_sub_epi16(middle_p, middle_c),
        );
        // The low and high four columns of each 128-bit lane; the packs
        // below put them back in order.
        let sum = |a: __m256i, b: __m256i| {
            _mm256_sra_epi32(
                _mm256_add_epi32(
                    _mm256_madd_epi16(a, outer_inner),
                    _mm256_madd_epi16(b, centre_round),
                ),
                shift,
            )
        };
        let y_low = sum(
            _mm256_unpacklo_epi16(outer, inner),
            _mm256_unpacklo_epi16(centre, ones),
        );
        let y_high = sum(
            _mm256_unpackhi_epi16(outer, inner),
            _mm256_unpackhi_epi16(centre, ones),
        );
        any = _mm256_or_si256(any, _mm256_or_si256(y_low, y_high));
        let high = _mm256_packs_epi32(
            _mm256_srai_epi32::<8>(y_low),
            _mm256_srai_epi32::<8>(y_high),
        );
        let low = _mm256_packs_epi32(
            _mm256_and_si256(y_low, low_byte),
            _mm256_and_si256(y_high, low_byte),
        );
        // SAFETY: as above, for `hi` and `lo` (w long).
        unsafe {
            _mm256_storeu_si256(hi.as_mut_ptr().add(j).cast(), high);
            _mm256_storeu_si256(lo.as_mut_ptr().add(j).cast(), low);
        }
    }
    _mm256_testz_si256(any, any) == 0
}

/// `sad::horizontal_abs_sum`: the wrapping 32-bit sum over a row of the
/// absolute horizontal pass.
#[target_feature(enable = "avx2")]
unsafe fn horizontal(hi: &[i16], lo: &[i16]) -> u32 {
    let w = hi.len();
    assert!(lo.len() == w && w >= MIN_WIDTH);
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
    let outer_inner = _mm256_set1_epi32(weight_pair(FILTER[0], FILTER[1]));
    let centre = _mm256_set1_epi32(weight_pair(FILTER[2], 0));
    let zero = _mm256_setzero_si256();
    let round = _mm256_set1_epi32(1 << 15);
    let lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let mut total = zero;
    // Outputs RADIUS + s .. RADIUS + s + 16 of those whose taps are all
    // inside the row (w - 2 * RADIUS of them).
    let mut summed = 0;
    for s in vector_starts(w - 2 * RADIUS) {
        let filter = |row: &[i16]| {
            // SAFETY: output RADIUS + s + m reads taps s + m ..= s + m + 4
            // < w, as s + LANES <= w - 2 * RADIUS.
            let tap = |k: usize| unsafe { _mm256_loadu_si256(row.as_ptr().add(s + k).cast()) };
            let (outer, inner) = (
                _mm256_add_epi16(tap(0), tap(4)),
                _mm256_add_epi16(tap(1), tap(3)),
            );
            let middle = tap(2);
            let half = |a: __m256i, b: __m256i| {
                _mm256_add_epi32(
                    _mm256_madd_epi16(a, outer_inner),
                    _mm256_madd_epi16(b, centre),
                )
            };
            (
                half(
                    _mm256_unpacklo_epi16(outer, inner),
                    _mm256_unpacklo_epi16(middle, zero),
                ),
                half(
                    _mm256_unpackhi_epi16(outer, inner),
                    _mm256_unpackhi_epi16(middle, zero),
                ),
            )
        };
        let (a, b) = (filter(hi), filter(lo));
        // (A + ((B + 2^15) >> 8)) >> 8, as `sad::horizontal_tap`.
        let value = |a: __m256i, b: __m256i| {
            _mm256_abs_epi32(_mm256_srai_epi32::<8>(_mm256_add_epi32(
                a,
                _mm256_srai_epi32::<8>(_mm256_add_epi32(b, round)),
            )))
        };
        // Lanes hold outputs s + (0..4, 8..12) (low) and s + (4..8,
        // 12..16) (high), the unpacks' order; those below `summed` were
        // summed by the vector before.
        let fresh = |first: i32| {
            let output = _mm256_add_epi32(
                lane,
                _mm256_setr_epi32(
                    first,
                    first,
                    first,
                    first,
                    first + 4,
                    first + 4,
                    first + 4,
                    first + 4,
                ),
            );
            _mm256_cmpgt_epi32(output, _mm256_set1_epi32(summed as i32 - s as i32 - 1))
        };
        let (low_lanes, high_lanes) = (fresh(0), fresh(4));
        total = _mm256_add_epi32(total, _mm256_and_si256(value(a.0, b.0), low_lanes));
        total = _mm256_add_epi32(total, _mm256_and_si256(value(a.1, b.1), high_lanes));
        summed = s + LANES;
    }
    let mut lanes = [0u32; 8];
    // SAFETY: an unaligned store of 32 bytes into 32 bytes.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), total) };
    lanes.iter().fold(sum, |sum, &v| sum.wrapping_add(v))
}
