//! cambi's c-values with AVX2, for CPUs without AVX-512: the code of
//! `c_values_avx512` (ADR 0031) on eight lanes for the rows of c-values
//! and sixteen for the slide, with vector masks where it has mask
//! registers; the same operations, so the same bits.

#![cfg(target_arch = "x86_64")]

use super::c_values::{ContrastTables, CONTRAST_WEIGHTS, UNCOUNTED};
use super::pooling::Survey;
use super::slide_runs::{RunAdder, SPARE_CELLS};
use std::arch::x86_64::*;

/// Pixels per vector of the rows of c-values.
const LANES: usize = 8;

/// All 32 bits of every lane where `mask` has a lane set.
#[inline]
#[target_feature(enable = "avx2")]
fn any(mask: __m256i) -> bool {
    _mm256_testz_si256(mask, mask) == 0
}

/// The c-values of the row with keys `keys[..out.len()]` into `out`, from
/// `counts` (one row of `out.len()` cells per counted value, and one cell
/// more: a gather reads 32 bits at the last cell), adding the non-zero
/// ones to `survey`.
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
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
    let band_v = _mm256_set1_epi32(band_size as i32);
    let width_v = _mm256_set1_epi32(width as i32);
    let lane_ids = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let uncounted = _mm256_set1_epi32(i32::from(UNCOUNTED));
    let zero = _mm256_setzero_si256();
    let counts_ptr = counts.as_ptr();
    let recip_ptr = reciprocal.as_ptr();
    let recip_len = _mm256_set1_epi32(reciprocal.len() as i32);

    // The survey in vectors (its total may be added in any order, see
    // `Survey::join`); zeros add nothing to the sums.
    let mut sum_low = _mm256_setzero_pd();
    let mut sum_high = _mm256_setzero_pd();
    let mut smallest = _mm256_set1_ps(f32::INFINITY);
    let mut nonzero_count = 0usize;
    let mut x = 0;
    while x < width {
        let lanes = (width - x).min(LANES);
        // Lanes past the row read as uncounted keys.
        let mut tail = [UNCOUNTED; LANES];
        tail[..lanes].copy_from_slice(&keys[x..x + lanes]);
        // SAFETY: eight keys.
        let key = _mm256_cvtepu16_epi32(unsafe { _mm_loadu_si128(tail.as_ptr().cast()) });
        let counted =
            _mm256_andnot_si256(_mm256_cmpeq_epi32(key, uncounted), _mm256_set1_epi32(-1));
        let mut c_value = _mm256_setzero_ps();
        if any(counted) {
            let column = _mm256_add_epi32(_mm256_set1_epi32(x as i32), lane_ids);
            let cell = _mm256_add_epi32(_mm256_mullo_epi32(key, width_v), column);
            // SAFETY: a counted lane's key is below band_size
            // (`ContrastTables::key`) and its column below `width`.
            let p0 = unsafe { gather_counts(counts_ptr, counted, cell) };
            for (d, (&(first, last), &weight)) in
                tables.step_rows().iter().zip(&CONTRAST_WEIGHTS).enumerate()
            {
                // first <= key <= last, in counted lanes.
                let from_first = _mm256_cmpgt_epi32(_mm256_set1_epi32(first), key);
                let to_last = _mm256_cmpgt_epi32(key, _mm256_set1_epi32(last));
                let outside = _mm256_or_si256(from_first, to_last);
                let active = _mm256_andnot_si256(outside, counted);
                if !any(active) {
                    continue;
                }
                // The portable row's slice indexing refuses a step past the
                // band (tables that would make one are broken); so does this.
                let above_key = _mm256_add_epi32(key, _mm256_set1_epi32(d as i32 + 1));
                let in_band = _mm256_cmpgt_epi32(band_v, above_key);
                assert!(
                    !any(_mm256_andnot_si256(in_band, active)),
                    "a c-value step reaches past the counted values"
                );
                let offset = _mm256_set1_epi32(((d + 1) * width) as i32);
                let above_cell = _mm256_add_epi32(cell, offset);
                let has_below =
                    _mm256_and_si256(active, _mm256_cmpgt_epi32(key, _mm256_set1_epi32(d as i32)));
                let below_cell = _mm256_sub_epi32(cell, offset);
                // SAFETY: the rows above are checked to be in the band, the
                // rows below are at least 0 (`has_below`).
                let above = unsafe { gather_counts(counts_ptr, active, above_cell) };
                // SAFETY: as above.
                let below = unsafe { gather_counts(counts_ptr, has_below, below_cell) };
                let p = _mm256_max_epu32(above, below);
                let product =
                    _mm256_mullo_epi32(_mm256_mullo_epi32(_mm256_set1_epi32(weight), p0), p);
                let total = _mm256_add_epi32(p, p0);
                // Counts are at most window² and two of them index the
                // table in the portable row; a larger total would be a
                // broken invariant, refused as the slice indexing would.
                let in_table = _mm256_cmpgt_epi32(recip_len, total);
                assert!(
                    !any(_mm256_andnot_si256(in_table, active)),
                    "c-value counts exceed the reciprocal table"
                );
                // SAFETY: the totals of the active lanes were just checked.
                let rcp = unsafe {
                    _mm256_mask_i32gather_ps::<4>(
                        _mm256_setzero_ps(),
                        recip_ptr,
                        total,
                        _mm256_castsi256_ps(active),
                    )
                };
                let value = _mm256_mul_ps(_mm256_cvtepi32_ps(product), rcp);
                let larger = _mm256_max_ps(c_value, value);
                c_value = _mm256_blendv_ps(c_value, larger, _mm256_castsi256_ps(active));
            }
        }
        let mut values = [0f32; LANES];
        // SAFETY: eight values.
        unsafe { _mm256_storeu_ps(values.as_mut_ptr(), c_value) };
        out[x..x + lanes].copy_from_slice(&values[..lanes]);
        // Lanes past the row are uncounted: their c-values are 0.
        let nonzero = _mm256_cmp_ps::<_CMP_NEQ_UQ>(c_value, _mm256_castsi256_ps(zero));
        nonzero_count += _mm256_movemask_ps(nonzero).count_ones() as usize;
        smallest = _mm256_blendv_ps(smallest, _mm256_min_ps(smallest, c_value), nonzero);
        sum_low = _mm256_add_pd(sum_low, _mm256_cvtps_pd(_mm256_castps256_ps128(c_value)));
        sum_high = _mm256_add_pd(
            sum_high,
            _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(c_value)),
        );
        x += LANES;
    }
    let mut sums = [0f64; 4];
    // SAFETY: four values.
    unsafe { _mm256_storeu_pd(sums.as_mut_ptr(), _mm256_add_pd(sum_low, sum_high)) };
    let mut least = [0f32; LANES];
    // SAFETY: eight values.
    unsafe { _mm256_storeu_ps(least.as_mut_ptr(), smallest) };
    let least = least.into_iter().fold(f32::INFINITY, f32::min);
    let row = Survey::new(sums.iter().sum(), nonzero_count, least);
    *survey = survey.join(row);
}

/// The 16-bit `counts[cells[i]]` of the lanes set in `lanes` (0
/// elsewhere), each read as the low half of 32 bits.
///
/// # Safety
/// The CPU must have AVX2; every cell of a lane in `lanes` must be below
/// the length of the buffer `counts` starts, less one (its high half is
/// the next cell).
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn gather_counts(counts: *const u16, lanes: __m256i, cells: __m256i) -> __m256i {
    // SAFETY: the caller keeps every read inside the buffer.
    let pairs = unsafe {
        _mm256_mask_i32gather_epi32::<2>(_mm256_setzero_si256(), counts.cast(), cells, lanes)
    };
    _mm256_and_si256(pairs, _mm256_set1_epi32(0xffff))
}

/// Columns compared per step of the slide.
const BLOCK: usize = 16;

/// Moves the window down a row, as `c_values_avx512::slide` does: every
/// counted sample of `leaving` that differs from the one below it in
/// `entering` leaves the histograms, and that one comes in if counted,
/// added as runs of equal keys ([`RunAdder::add_runs`]). `counts`
/// holds `band_size` rows of `width` cells and [`SPARE_CELLS`] after them.
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
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
    assert!(width > 0 && width < 1 << 20);
    assert!(band_size > 0 && band_size <= usize::from(UNCOUNTED));
    // Keys up to the band's last row are counted (`UNCOUNTED` is above it).
    let last_row = _mm256_set1_epi16((band_size - 1) as u16 as i16);
    // SAFETY: `counts` has the rows and spare cells (asserted) and is
    // borrowed for the adder's life; only keys below `band_size` are added.
    let adder = unsafe { RunAdder::new(counts.as_mut_ptr(), width, pad) };
    for x0 in (0..columns).step_by(BLOCK) {
        let lanes = (columns - x0).min(BLOCK);
        // Columns past the row read as unchanged. From entry 0, the keys
        // one column before (entry 0 compared with column 0 matters not:
        // a run never starts before a chunk).
        let (mut out, mut inc) = ([UNCOUNTED; BLOCK + 1], [UNCOUNTED; BLOCK + 1]);
        out[1..=lanes].copy_from_slice(&leaving[x0..x0 + lanes]);
        inc[1..=lanes].copy_from_slice(&entering[x0..x0 + lanes]);
        let load = |keys: &[u16; BLOCK + 1], from: usize| {
            assert!(from <= 1);
            // SAFETY: sixteen keys from entry 0 or 1 of seventeen.
            unsafe { _mm256_loadu_si256(keys.as_ptr().add(from).cast()) }
        };
        let (out_v, inc_v) = (load(&out, 1), load(&inc, 1));
        let same = _mm256_cmpeq_epi16(out_v, inc_v);
        let counted = |k: __m256i| _mm256_cmpeq_epi16(_mm256_min_epu16(k, last_row), k);
        // Two bits per column (a byte mask of 16-bit lanes).
        let bits = |v: __m256i| _mm256_movemask_epi8(v) as u32;
        let gone = bits(_mm256_andnot_si256(same, counted(out_v)));
        let come = bits(_mm256_andnot_si256(same, counted(inc_v)));
        if gone | come == 0 {
            continue; // most chunks where few samples are counted
        }
        let same = |keys: &[u16; BLOCK + 1], v| bits(_mm256_cmpeq_epi16(v, load(keys, 0)));
        // SAFETY: the keys of `gone` and `come` are below `band_size`.
        unsafe {
            adder.add_runs::<2>(x0, gone, same(&out, out_v), leaving, true);
            adder.add_runs::<2>(x0, come, same(&inc, inc_v), entering, false);
        }
    }
}
