//! cambi's c-values with AVX-512 (ADR 0031): the window's slide, its
//! changed columns found by vector compares and added as runs in fixed
//! blocks ([`slide`], `slide_runs`), and rows of c-values
//! sixteen pixels at a time with gathers ([`row_values`]).
//!
//! The portable row (`c_values::Pass::row_values`) branches per pixel and
//! per step on data that changes from pixel to pixel; here every lane runs
//! the same steps under a mask: the counts come from masked gathers (a
//! 32-bit gather at a 16-bit cell, its high half dropped), the products and
//! the reciprocals are the portable row's own operations (exact integer
//! products, one `f32` conversion, one rounded multiply), so the c-values
//! are the same bits. libvmaf's AVX2 row does likewise on eight lanes.

#![cfg(target_arch = "x86_64")]

use super::c_values::{ContrastTables, CONTRAST_WEIGHTS, UNCOUNTED};
use super::pooling::Survey;
use super::slide_runs::{RunAdder, SPARE_CELLS};
use std::arch::x86_64::*;

/// Pixels per vector.
const LANES: usize = 16;

/// The c-values of the row with keys `keys[..out.len()]` into `out`, from
/// `counts` (one row of `out.len()` cells per counted value, and one cell
/// more: a gather reads 32 bits at the last cell), adding the non-zero
/// ones to `survey`.
///
/// # Safety
/// The CPU must have AVX-512 F, BW and VL.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
pub(super) unsafe fn row_values(
    tables: &ContrastTables,
    counts: &[u16],
    keys: &[u16],
    out: &mut [f32],
    survey: &mut Survey,
) {
    let width = out.len();
    let reciprocal = tables.reciprocal();
    let band_size = tables.band_size();
    assert!(keys.len() >= width);
    assert!(counts.len() > band_size * width);
    let band_v = _mm512_set1_epi32(band_size as i32);
    let width_v = _mm512_set1_epi32(width as i32);
    let lane_ids = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let uncounted = _mm512_set1_epi32(i32::from(UNCOUNTED));
    let counts_ptr = counts.as_ptr();
    let recip_ptr = reciprocal.as_ptr();
    let recip_len = reciprocal.len() as i32;

    // The survey in vectors (its total may be added in any order, see
    // `Survey::join`); zeros add nothing to the sums.
    let mut sum_low = _mm512_setzero_pd();
    let mut sum_high = _mm512_setzero_pd();
    let mut smallest = _mm512_set1_ps(f32::INFINITY);
    let mut nonzero_count = 0usize;
    let mut x = 0;
    while x < width {
        let lanes = (width - x).min(LANES);
        let in_row: __mmask16 = if lanes == LANES {
            0xffff
        } else {
            (1u16 << lanes) - 1
        };
        // SAFETY: the mask keeps the load inside `keys[x..x + lanes]`.
        let key16 = unsafe { _mm256_maskz_loadu_epi16(in_row, keys.as_ptr().add(x).cast()) };
        let key = _mm512_cvtepu16_epi32(key16);
        let counted = _mm512_mask_cmpneq_epi32_mask(in_row, key, uncounted);
        let mut c_value = _mm512_setzero_ps();
        if counted != 0 {
            let column = _mm512_add_epi32(_mm512_set1_epi32(x as i32), lane_ids);
            let cell = _mm512_add_epi32(_mm512_mullo_epi32(key, width_v), column);
            // SAFETY: a counted lane's key is below band_size
            // (`ContrastTables::key`) and its column below `width`.
            let p0 = unsafe { gather_counts(counts_ptr, counted, cell) };
            for (d, (&(first, last), &weight)) in
                tables.step_rows().iter().zip(&CONTRAST_WEIGHTS).enumerate()
            {
                let from_first =
                    _mm512_mask_cmpge_epi32_mask(counted, key, _mm512_set1_epi32(first));
                let active = _mm512_mask_cmple_epi32_mask(from_first, key, _mm512_set1_epi32(last));
                if active == 0 {
                    continue;
                }
                // The portable row's slice indexing refuses a step past the
                // band (tables that would make one are broken); so does this.
                let above_key = _mm512_add_epi32(key, _mm512_set1_epi32(d as i32 + 1));
                assert_eq!(
                    _mm512_mask_cmpge_epi32_mask(active, above_key, band_v),
                    0,
                    "a c-value step reaches past the counted values"
                );
                let offset = _mm512_set1_epi32(((d + 1) * width) as i32);
                let above_cell = _mm512_add_epi32(cell, offset);
                let has_below =
                    _mm512_mask_cmpgt_epi32_mask(active, key, _mm512_set1_epi32(d as i32));
                let below_cell = _mm512_sub_epi32(cell, offset);
                // SAFETY: the rows above are checked to be in the band, the
                // rows below are at least 0 (`has_below`).
                let above = unsafe { gather_counts(counts_ptr, active, above_cell) };
                // SAFETY: as above.
                let below = unsafe { gather_counts(counts_ptr, has_below, below_cell) };
                let p = _mm512_max_epu32(above, below);
                let product =
                    _mm512_mullo_epi32(_mm512_mullo_epi32(_mm512_set1_epi32(weight), p0), p);
                let total = _mm512_add_epi32(p, p0);
                // Counts are at most window² and two of them index the
                // table in the portable row; a larger total would be a
                // broken invariant, refused as the slice indexing would.
                assert_eq!(
                    _mm512_mask_cmpge_epi32_mask(active, total, _mm512_set1_epi32(recip_len)),
                    0,
                    "c-value counts exceed the reciprocal table"
                );
                // SAFETY: the totals of the active lanes were just checked.
                let rcp = unsafe {
                    _mm512_mask_i32gather_ps::<4>(_mm512_setzero_ps(), active, total, recip_ptr)
                };
                let value = _mm512_mul_ps(_mm512_cvtepi32_ps(product), rcp);
                c_value = _mm512_mask_max_ps(c_value, active, c_value, value);
            }
        }
        // SAFETY: the mask keeps the store inside `out[x..x + lanes]`.
        unsafe { _mm512_mask_storeu_ps(out.as_mut_ptr().add(x), in_row, c_value) };
        let nonzero = _mm512_mask_cmp_ps_mask::<_CMP_NEQ_UQ>(in_row, c_value, _mm512_setzero_ps());
        nonzero_count += nonzero.count_ones() as usize;
        smallest = _mm512_mask_min_ps(smallest, nonzero, smallest, c_value);
        sum_low = _mm512_add_pd(sum_low, _mm512_cvtps_pd(_mm512_castps512_ps256(c_value)));
        sum_high = _mm512_add_pd(
            sum_high,
            _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(
                _mm512_castps_pd(c_value),
            ))),
        );
        x += LANES;
    }
    let total = _mm512_reduce_add_pd(_mm512_add_pd(sum_low, sum_high));
    let row = Survey::new(total, nonzero_count, _mm512_reduce_min_ps(smallest));
    *survey = survey.join(row);
}

/// The 16-bit `counts[cells[i]]` of the lanes in `lanes` (0 elsewhere),
/// each read as the low half of 32 bits.
///
/// # Safety
/// The CPU must have AVX-512 F; every cell of a lane in `lanes` must be
/// below the length of the buffer `counts` starts, less one (its high half
/// is the next cell).
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
unsafe fn gather_counts(counts: *const u16, lanes: __mmask16, cells: __m512i) -> __m512i {
    // SAFETY: the caller keeps every read inside the buffer.
    let pairs = unsafe {
        _mm512_mask_i32gather_epi32::<2>(_mm512_setzero_si512(), lanes, cells, counts.cast())
    };
    _mm512_and_si512(pairs, _mm512_set1_epi32(0xffff))
}

/// Moves the window down a row: every counted sample of `leaving` that
/// differs from the one below it in `entering` leaves the histograms, and
/// that one comes in if counted (`c_values::Pass::slide` without its
/// runs of pairs). `counts` holds `band_size` rows of `width` cells and
/// [`SPARE_CELLS`] after them.
///
/// The columns to update are found 32 at a time by vector compares, so no
/// branch depends on the samples; their samples are added to the
/// histograms as runs of equal keys ([`RunAdder::add_runs`]).
///
/// # Safety
/// The CPU must have AVX-512 F, BW and VL.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
pub(super) unsafe fn slide(
    counts: &mut [u16],
    leaving: &[u16],
    entering: &[u16],
    width: usize,
    pad: usize,
    band_size: usize,
) {
    let columns = leaving.len().min(entering.len());
    assert!(counts.len() >= band_size * width + SPARE_CELLS);
    assert!(width > 0 && width < 1 << 20 && band_size <= usize::from(u16::MAX));
    let band = _mm512_set1_epi16(band_size as u16 as i16);
    // Lane i: the key of column i - 1 (lane 0: its own; a run never
    // starts before a chunk).
    static PREVIOUS: [u16; 32] = {
        let mut lanes = [0; 32];
        let mut i = 1;
        while i < 32 {
            lanes[i] = i as u16 - 1;
            i += 1;
        }
        lanes
    };
    // SAFETY: PREVIOUS holds the 64 bytes read.
    let previous = unsafe { _mm512_loadu_si512(PREVIOUS.as_ptr().cast()) };
    // SAFETY: `counts` has the rows and spare cells (asserted) and is
    // borrowed for the adder's life; only keys below `band_size` are added.
    let adder = unsafe { RunAdder::new(counts.as_mut_ptr(), width, pad) };
    for x0 in (0..columns).step_by(32) {
        let lanes = (columns - x0).min(32);
        let in_row: __mmask32 = if lanes == 32 { !0 } else { (1u32 << lanes) - 1 };
        // SAFETY: the mask keeps both loads inside the rows of keys.
        let (out, inc) = unsafe {
            (
                _mm512_maskz_loadu_epi16(in_row, leaving.as_ptr().add(x0).cast()),
                _mm512_maskz_loadu_epi16(in_row, entering.as_ptr().add(x0).cast()),
            )
        };
        let changed = _mm512_mask_cmpneq_epi16_mask(in_row, out, inc);
        // Keys below the band size are counted (`UNCOUNTED` is above it).
        let gone = _mm512_mask_cmplt_epu16_mask(changed, out, band);
        let come = _mm512_mask_cmplt_epu16_mask(changed, inc, band);
        if gone | come == 0 {
            continue; // most chunks where few samples are counted
        }
        let same = |keys| _mm512_cmpeq_epi16_mask(keys, _mm512_permutexvar_epi16(previous, keys));
        // SAFETY: the keys of `gone` and `come` are below `band_size`.
        unsafe {
            adder.add_runs::<1>(x0, gone, same(out), leaving, true);
            adder.add_runs::<1>(x0, come, same(inc), entering, false);
        }
    }
}
