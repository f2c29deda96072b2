//! ADM's scale-0 DWT passes with AVX-512 (ADR 0032): 32 columns a vector
//! vertically, 16 outputs horizontally, row tails under masks (the
//! arithmetic and the row loop: `dwt_rows`).

#![cfg(target_arch = "x86_64")]

use super::dwt_rows::{Low, RowPasses, MAX_BIT_DEPTH};
use super::tables::{DB2_HI, DB2_LO, DB2_LO_SUM};
use crate::feature::common::words16::{first_lanes, load_samples, weight_pair};
use crate::picture::Sample;
use std::arch::x86_64::*;

/// The passes, for [`dwt_rows::analyze_picture`](super::dwt_rows::analyze_picture)
/// on a CPU with AVX-512 F, BW, DQ and VL.
pub(super) fn passes<S: Sample>() -> RowPasses<S> {
    RowPasses {
        vertical: vertical::<S>,
        horizontal,
    }
}

/// Vertical pass of one output row from its four input rows (taps in
/// order) into `lo` and `hi`, 32 columns at a time.
///
/// # Safety
/// The CPU must have AVX-512 F, BW and VL.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
unsafe fn vertical<S: Sample>(rows: [&[S]; 4], bit_depth: u32, lo: &mut [i16], hi: &mut [i16]) {
    let w = lo.len();
    assert!(hi.len() == w && rows.iter().all(|r| r.len() >= w));
    assert!((1..=MAX_BIT_DEPTH).contains(&bit_depth));
    let round = 1i32 << (bit_depth - 1);
    let lo_bias = _mm512_set1_epi32(round - DB2_LO_SUM * round);
    let hi_bias = _mm512_set1_epi32(round);
    let shift = _mm_cvtsi32_si128(bit_depth as i32);
    let lo01 = _mm512_set1_epi32(weight_pair(DB2_LO[0], DB2_LO[1]));
    let lo23 = _mm512_set1_epi32(weight_pair(DB2_LO[2], DB2_LO[3]));
    let hi01 = _mm512_set1_epi32(weight_pair(DB2_HI[0], DB2_HI[1]));
    let hi23 = _mm512_set1_epi32(weight_pair(DB2_HI[2], DB2_HI[3]));
    let filter = |a: __m512i, b: __m512i, f01, f23, bias| {
        let sum = _mm512_add_epi32(_mm512_madd_epi16(a, f01), _mm512_madd_epi16(b, f23));
        _mm512_sra_epi32(_mm512_add_epi32(sum, bias), shift)
    };
    let mut x = 0;
    while x < w {
        let lanes = first_lanes(w - x);
        // SAFETY: the lanes in `lanes` lie within the rows (w long).
        let s = rows.map(|r| unsafe { load_samples(r.as_ptr().add(x), lanes) });
        // Rows (0, 1) and (2, 3) interleaved: the low and high four columns
        // of each 128-bit lane, put back in order by the packs.
        let (a_low, a_high) = (
            _mm512_unpacklo_epi16(s[0], s[1]),
            _mm512_unpackhi_epi16(s[0], s[1]),
        );
        let (b_low, b_high) = (
            _mm512_unpacklo_epi16(s[2], s[3]),
            _mm512_unpackhi_epi16(s[2], s[3]),
        );
        let low_pass = _mm512_packs_epi32(
            filter(a_low, b_low, lo01, lo23, lo_bias),
            filter(a_high, b_high, lo01, lo23, lo_bias),
        );
        let high_pass = _mm512_packs_epi32(
            filter(a_low, b_low, hi01, hi23, hi_bias),
            filter(a_high, b_high, hi01, hi23, hi_bias),
        );
        // SAFETY: as above, for `lo` and `hi` (w long).
        unsafe {
            _mm512_mask_storeu_epi16(lo.as_mut_ptr().add(x), lanes, low_pass);
            _mm512_mask_storeu_epi16(hi.as_mut_ptr().add(x), lanes, high_pass);
        }
        x += 32;
    }
}

/// Horizontal pass of outputs `1..=n` (those whose taps all lie in `row`)
/// into `low` and `high`, sixteen at a time.
///
/// # Safety
/// The CPU must have AVX-512 F, BW and VL; `row` holds the taps of outputs
/// up to `n` (2n + 2 < row.len()), `low` and `high` more than `n` outputs.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
unsafe fn horizontal(row: &[i16], n: usize, mut low: Low<'_>, high: &mut [i16]) {
    assert!(n == 0 || 2 * n + 2 < row.len());
    assert!(high.len() > n);
    assert!(low.len() > n);
    let lo01 = _mm512_set1_epi32(weight_pair(DB2_LO[0], DB2_LO[1]));
    let lo23 = _mm512_set1_epi32(weight_pair(DB2_LO[2], DB2_LO[3]));
    let hi01 = _mm512_set1_epi32(weight_pair(DB2_HI[0], DB2_HI[1]));
    let hi23 = _mm512_set1_epi32(weight_pair(DB2_HI[2], DB2_HI[3]));
    let round = _mm512_set1_epi32(1 << 15);
    let filter = |a: __m512i, b: __m512i, f01, f23| {
        let sum = _mm512_add_epi32(_mm512_madd_epi16(a, f01), _mm512_madd_epi16(b, f23));
        _mm512_srai_epi32::<16>(_mm512_add_epi32(sum, round))
    };
    let mut j = 1;
    while j <= n {
        let count = (n + 1 - j).min(16);
        let (outputs, taps) = (first_lanes(count) as __mmask16, first_lanes(2 * count));
        // SAFETY: taps 2j - 1 ..= 2(j + count - 1) + 2 lie in the row
        // (asserted); outputs j .. j + count in `low` and `high`.
        unsafe {
            let a = _mm512_maskz_loadu_epi16(taps, row.as_ptr().add(2 * j - 1));
            let b = _mm512_maskz_loadu_epi16(taps, row.as_ptr().add(2 * j + 1));
            let (l, h) = (filter(a, b, lo01, lo23), filter(a, b, hi01, hi23));
            // Narrowed in registers, then stored: a narrowing store to
            // memory costs more micro-operations.
            match &mut low {
                Low::Wide(out) => _mm512_mask_storeu_epi32(out.as_mut_ptr().add(j), outputs, l),
                Low::Narrow(out) => _mm256_mask_storeu_epi16(
                    out.as_mut_ptr().add(j),
                    outputs,
                    _mm512_cvtepi32_epi16(l),
                ),
            }
            _mm256_mask_storeu_epi16(high.as_mut_ptr().add(j), outputs, _mm512_cvtepi32_epi16(h));
        }
        j += 16;
    }
}
