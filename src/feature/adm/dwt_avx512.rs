//! ADM's scale-0 DWT with AVX-512 (ADR 0032), for samples of up to 12 bits.
//!
//! Both passes are pairs of 16-bit products summed by `vpmaddwd`: the
//! vertical pass pairs rows (0, 1) and (2, 3) of 32 columns; the horizontal
//! pass reads its row twice, one and three samples on, so that each 32-bit
//! lane holds the taps (2j - 1, 2j) and (2j + 1, 2j + 2) of output j. Up to
//! 12 bits no sum wraps (the portable loops wrap like libvmaf's int32 sums,
//! which only 16-bit samples reach) and every output fits 16 bits (both
//! passes' outputs lie within +-27411), so packing with saturation is the
//! portable `as i16`. Columns with mirrored taps, and libvmaf's read past the
//! row (`dwt::simd_reads_past_row`), are left to the portable code's
//! functions.

#![cfg(target_arch = "x86_64")]

use super::dwt::{
    edge_outputs, horizontal_fine_edges, interior_outputs, overrun_column, simd_reads_past_row,
    Bands, RowScratch, Taps,
};
use super::tables::{DB2_HI, DB2_LO, DB2_LO_SUM};
use crate::feature::common::words16::{first_lanes, load_samples, weight_pair};
use crate::picture::{PlaneRef, Sample};
use std::arch::x86_64::*;

/// The deepest samples these loops take exactly.
pub(super) const MAX_BIT_DEPTH: u32 = 12;

/// [`dwt::analyze_picture`](super::dwt::analyze_picture) with AVX-512.
///
/// # Safety
/// The CPU must have AVX-512 F, BW, DQ and VL.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
pub(super) unsafe fn analyze_picture<S: Sample>(
    src: &PlaneRef<'_, S>,
    bit_depth: u32,
    taps: &Taps,
    scratch: &mut RowScratch,
    approx: &mut [i32],
    mut details: Option<&mut Bands<i16>>,
) {
    assert!((1..=MAX_BIT_DEPTH).contains(&bit_depth));
    let (w, out_w, out_h) = (src.width, taps.cols.len(), taps.rows.len());
    let simd_overrun = details.is_some() && simd_reads_past_row(out_w, S::BYTES);
    if let Some(d) = details.as_deref_mut() {
        d.set_size(out_w, out_h);
    }
    let n = interior_outputs(w, out_w);
    let (lo, hi) = (&mut scratch.lo[..w], &mut scratch.hi[..w]);
    let (out_lo, out_hi) = (&mut scratch.out_lo[..out_w], &mut scratch.out_hi[..out_w]);
    for (i, rows) in taps.rows.iter().enumerate() {
        // SAFETY: the CPU's features are the caller's; the rows are `w` long.
        unsafe { vertical(rows.map(|r| src.row(r)), bit_depth, lo, hi) };
        let out = i * out_w..(i + 1) * out_w;
        let approx_row = &mut approx[out.clone()];
        match details.as_deref_mut() {
            None => {
                // SAFETY: as above; outputs 1..=n lie in rows of out_w.
                unsafe { horizontal(lo, n, Low::Wide(approx_row), out_hi) };
                horizontal_fine_edges(lo, &taps.cols, out_lo, out_hi);
            }
            Some(d) => {
                let [dh, dv, dd] = d.slices_mut(out);
                // SAFETY: as above.
                unsafe {
                    horizontal(lo, n, Low::Wide(approx_row), dv);
                    horizontal(hi, n, Low::Narrow(dh), dd);
                }
                horizontal_fine_edges(lo, &taps.cols, out_lo, dv);
                horizontal_fine_edges(hi, &taps.cols, dh, dd);
                if simd_overrun {
                    (out_lo[out_w - 1], dv[out_w - 1]) = overrun_column(lo, hi, out_w);
                }
            }
        }
        // The mirrored columns' approximation went to `out_lo`.
        for j in edge_outputs(n, out_w) {
            approx_row[j] = out_lo[j] as i32;
        }
    }
}

/// Where the low-pass outputs of [`horizontal`] go: the approximation
/// (widened to 32 bits) or a 16-bit band.
enum Low<'a> {
    Wide(&'a mut [i32]),
    Narrow(&'a mut [i16]),
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
    let low_len = match &low {
        Low::Wide(out) => out.len(),
        Low::Narrow(out) => out.len(),
    };
    assert!(low_len > n);
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
