//! ADM's scale-0 DWT passes with AVX2 (ADR 0035): `dwt_avx512`'s
//! arithmetic on 16 columns a vector vertically and 8 outputs
//! horizontally; a row's last few columns and outputs, which fill no
//! vector, take the portable arithmetic (the row loop: `dwt_rows`).

#![cfg(target_arch = "x86_64")]

use super::dwt::{horizontal_outputs, vertical_fine};
use super::dwt_rows::{Low, RowPasses, MAX_BIT_DEPTH};
use super::tables::{DB2_HI, DB2_LO, DB2_LO_SUM};
use crate::feature::common::words16::{load16_samples, weight_pair};
use crate::picture::Sample;
use std::arch::x86_64::*;

/// The passes, for [`dwt_rows::analyze_picture`](super::dwt_rows::analyze_picture)
/// on a CPU with AVX2.
pub(super) fn passes<S: Sample>() -> RowPasses<S> {
    RowPasses {
        vertical: vertical::<S>,
        horizontal,
    }
}

/// The eight 32-bit lanes of `v` narrowed to 16 bits, in order.
#[inline]
#[target_feature(enable = "avx2")]
fn narrow(v: __m256i) -> __m128i {
    _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v))
}

/// Vertical pass of one output row from its four input rows (taps in
/// order) into `lo` and `hi`, 16 columns at a time.
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
unsafe fn vertical<S: Sample>(rows: [&[S]; 4], bit_depth: u32, lo: &mut [i16], hi: &mut [i16]) {
    let w = lo.len();
    assert!(hi.len() == w && rows.iter().all(|r| r.len() >= w));
    assert!((1..=MAX_BIT_DEPTH).contains(&bit_depth));
    let round = 1i32 << (bit_depth - 1);
    let lo_bias = _mm256_set1_epi32(round - DB2_LO_SUM * round);
    let hi_bias = _mm256_set1_epi32(round);
    let shift = _mm_cvtsi32_si128(bit_depth as i32);
    let lo01 = _mm256_set1_epi32(weight_pair(DB2_LO[0], DB2_LO[1]));
    let lo23 = _mm256_set1_epi32(weight_pair(DB2_LO[2], DB2_LO[3]));
    let hi01 = _mm256_set1_epi32(weight_pair(DB2_HI[0], DB2_HI[1]));
    let hi23 = _mm256_set1_epi32(weight_pair(DB2_HI[2], DB2_HI[3]));
    let filter = |a: __m256i, b: __m256i, f01, f23, bias| {
        let sum = _mm256_add_epi32(_mm256_madd_epi16(a, f01), _mm256_madd_epi16(b, f23));
        _mm256_sra_epi32(_mm256_add_epi32(sum, bias), shift)
    };
    let mut x = 0;
    while x + 16 <= w {
        // SAFETY: columns x..x + 16 lie within the rows (w long).
        let s = rows.map(|r| unsafe { load16_samples(r.as_ptr().add(x)) });
        // Rows (0, 1) and (2, 3) interleaved: the low and high four columns
        // of each 128-bit lane, put back in order by the packs.
        let (a_low, a_high) = (
            _mm256_unpacklo_epi16(s[0], s[1]),
            _mm256_unpackhi_epi16(s[0], s[1]),
        );
        let (b_low, b_high) = (
            _mm256_unpacklo_epi16(s[2], s[3]),
            _mm256_unpackhi_epi16(s[2], s[3]),
        );
        let low_pass = _mm256_packs_epi32(
            filter(a_low, b_low, lo01, lo23, lo_bias),
            filter(a_high, b_high, lo01, lo23, lo_bias),
        );
        let high_pass = _mm256_packs_epi32(
            filter(a_low, b_low, hi01, hi23, hi_bias),
            filter(a_high, b_high, hi01, hi23, hi_bias),
        );
        // SAFETY: as above, for `lo` and `hi` (w long).
        unsafe {
            _mm256_storeu_si256(lo.as_mut_ptr().add(x).cast(), low_pass);
            _mm256_storeu_si256(hi.as_mut_ptr().add(x).cast(), high_pass);
        }
        x += 16;
    }
    if x < w {
        vertical_fine(rows.map(|r| &r[x..]), bit_depth, &mut lo[x..], &mut hi[x..]);
    }
}

/// Horizontal pass of outputs `1..=n` (those whose taps all lie in `row`)
/// into `low` and `high`, eight at a time.
///
/// # Safety
/// The CPU must have AVX2; `row` holds the taps of outputs up to `n` (2n +
/// 2 < row.len()), `low` and `high` more than `n` outputs.
#[target_feature(enable = "avx2")]
unsafe fn horizontal(row: &[i16], n: usize, mut low: Low<'_>, high: &mut [i16]) {
    assert!(n == 0 || 2 * n + 2 < row.len());
    assert!(high.len() > n && low.len() > n);
    let lo01 = _mm256_set1_epi32(weight_pair(DB2_LO[0], DB2_LO[1]));
    let lo23 = _mm256_set1_epi32(weight_pair(DB2_LO[2], DB2_LO[3]));
    let hi01 = _mm256_set1_epi32(weight_pair(DB2_HI[0], DB2_HI[1]));
    let hi23 = _mm256_set1_epi32(weight_pair(DB2_HI[2], DB2_HI[3]));
    let round = _mm256_set1_epi32(1 << 15);
    let filter = |a: __m256i, b: __m256i, f01, f23| {
        let sum = _mm256_add_epi32(_mm256_madd_epi16(a, f01), _mm256_madd_epi16(b, f23));
        _mm256_srai_epi32::<16>(_mm256_add_epi32(sum, round))
    };
    let mut j = 1;
    while j + 8 <= n + 1 {
        // SAFETY: taps 2j - 1 ..= 2(j + 7) + 2 <= 2n + 2 lie in the row
        // (asserted); outputs j .. j + 8 <= n + 1 in `low` and `high`.
        unsafe {
            let a = _mm256_loadu_si256(row.as_ptr().add(2 * j - 1).cast());
            let b = _mm256_loadu_si256(row.as_ptr().add(2 * j + 1).cast());
            let (l, h) = (filter(a, b, lo01, lo23), filter(a, b, hi01, hi23));
            match &mut low {
                Low::Wide(out) => _mm256_storeu_si256(out.as_mut_ptr().add(j).cast(), l),
                Low::Narrow(out) => _mm_storeu_si128(out.as_mut_ptr().add(j).cast(), narrow(l)),
            }
            _mm_storeu_si128(high.as_mut_ptr().add(j).cast(), narrow(h));
        }
        j += 8;
    }
    horizontal_outputs(row, j, n, low, high);
}
