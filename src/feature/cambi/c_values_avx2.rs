//! cambi's c-values with AVX2, for CPUs without AVX-512: the code of
//! `c_values_avx512` (ADR 0031) on eight lanes for the rows of c-values
//! and sixteen for the slide, with vector masks where it has mask
//! registers; the same operations, so the same bits.

#![cfg(target_arch = "x86_64")]

use super::c_values::{ContrastTables, CONTRAST_WEIGHTS, UNCOUNTED};
use super::c_values_avx512::SPARE_CELLS;
use super::pooling::Survey;
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

/// Cells per block of a histogram row.
const BLOCK: usize = 16;

/// Moves the window down a row, as `c_values_avx512::slide` does: every
/// counted sample of `leaving` that differs from the one below it in
/// `entering` leaves the histograms, and that one comes in if counted,
/// each as whole 16-cell blocks at fixed places in its row. `counts`
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
    assert!(counts.len() >= band_size * width + SPARE_CELLS && SPARE_CELLS >= BLOCK);
    assert!(width > 0 && width < 1 << 20);
    assert!(band_size > 0 && band_size <= usize::from(UNCOUNTED));
    // Keys up to the band's last row are counted (`UNCOUNTED` is above it).
    let last_row = _mm256_set1_epi16((band_size - 1) as u16 as i16);
    let base = counts.as_mut_ptr();
    let mut x0 = 0;
    while x0 < columns {
        let lanes = (columns - x0).min(BLOCK);
        // Columns past the row read as unchanged.
        let (mut out, mut inc) = ([UNCOUNTED; BLOCK], [UNCOUNTED; BLOCK]);
        out[..lanes].copy_from_slice(&leaving[x0..x0 + lanes]);
        inc[..lanes].copy_from_slice(&entering[x0..x0 + lanes]);
        // SAFETY: sixteen keys each.
        let (out_v, inc_v) = unsafe {
            (
                _mm256_loadu_si256(out.as_ptr().cast()),
                _mm256_loadu_si256(inc.as_ptr().cast()),
            )
        };
        let same = _mm256_cmpeq_epi16(out_v, inc_v);
        let counted = |k: __m256i| _mm256_cmpeq_epi16(_mm256_min_epu16(k, last_row), k);
        // Two bits per column (a byte mask of 16-bit lanes).
        let mut gone = _mm256_movemask_epi8(_mm256_andnot_si256(same, counted(out_v))) as u32;
        let mut come = _mm256_movemask_epi8(_mm256_andnot_si256(same, counted(inc_v))) as u32;
        while gone != 0 {
            let x = x0 + gone.trailing_zeros() as usize / 2;
            gone &= gone - 1;
            gone &= gone - 1;
            let row = usize::from(leaving[x]);
            // SAFETY: the row is below `band_size`, checked above to lie in
            // `counts` with the spare cells.
            unsafe { add_window(base.add(row * width), x, width, pad, -1) };
        }
        while come != 0 {
            let x = x0 + come.trailing_zeros() as usize / 2;
            come &= come - 1;
            come &= come - 1;
            let row = usize::from(entering[x]);
            // SAFETY: as above.
            unsafe { add_window(base.add(row * width), x, width, pad, 1) };
        }
        x0 += BLOCK;
    }
}

/// 16 lanes of 0, 16 of -1, 16 of 0: sixteen consecutive entries from
/// `16 - from` set lanes `from..16`, from `31 - to` lanes `0..=to`.
static EDGES: [i16; 3 * BLOCK] = {
    let mut edges = [0; 3 * BLOCK];
    let mut i = BLOCK;
    while i < 2 * BLOCK {
        edges[i] = -1;
        i += 1;
    }
    edges
};

/// Adds `delta` to the cells of `row` within `pad` columns of `x` (and
/// below `width`), block by block.
///
/// # Safety
/// The CPU must have AVX2; `row` must have `width` cells and
/// [`SPARE_CELLS`] after them.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn add_window(row: *mut u16, x: usize, width: usize, pad: usize, delta: i16) {
    let first = x.saturating_sub(pad);
    let last = (x + pad).min(width - 1);
    if first > last {
        return; // a column past the picture (libvmaf's narrow rows)
    }
    let delta = _mm256_set1_epi16(delta);
    let edges = EDGES.as_ptr();
    for block in first / BLOCK..=last / BLOCK {
        let start = block * BLOCK;
        let from = first.saturating_sub(start);
        let to = (last - start).min(BLOCK - 1);
        // SAFETY: both reads lie in EDGES (from, to < 16); the block
        // starts below `width` and ends within the spare cells; lanes
        // outside the window add 0.
        unsafe {
            let lanes = _mm256_and_si256(
                _mm256_loadu_si256(edges.add(BLOCK - from).cast()),
                _mm256_loadu_si256(edges.add(2 * BLOCK - 1 - to).cast()),
            );
            let at = row.add(start).cast::<__m256i>();
            let cells = _mm256_loadu_si256(at);
            _mm256_storeu_si256(at, _mm256_add_epi16(cells, _mm256_and_si256(delta, lanes)));
        }
    }
}
