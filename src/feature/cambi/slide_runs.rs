//! The vector slides' histogram updates (`c_values_avx512::slide`,
//! `c_values_avx2::slide`), a run at a time (ADR 0031, amended).
//!
//! A sample leaving or entering the window adds -1 or 1 to the cells of
//! its key's histogram row within `pad` columns of it. Samples of one key
//! at consecutive columns (a run: 2.8 columns on average with cambi's
//! defaults on the 10-bit 1080p bench pair, an upscaled clip; shorter on
//! native pictures) are added at once: each cell
//! gets the number of the run's windows that cover it, a trapezoid
//! computed per 16-cell block in 16-bit lanes. A run of `r` samples then
//! loads and stores `(r + 2 pad) / 16 + 1` blocks instead of `r` times
//! `2 pad / 16 + 1`. The blocks lie at fixed places in the row, so a later
//! run of the same key loads exactly a block stored before, which the CPU
//! forwards from its store buffer. Runs are found by bit operations on the
//! vector compares' masks, never cross a chunk of compared columns, and
//! no branch depends on whether a sample continues a run. The counts
//! wrap, so the order of the updates does not matter.

#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::*;

/// Cells per block of a histogram row.
const BLOCK: usize = 16;

/// Cells the histograms need after their last row: a block read and
/// written whole reaches up to `BLOCK - 1` cells past a row's end.
pub(super) const SPARE_CELLS: usize = BLOCK;

/// The most columns a chunk of compared columns has (so a run's length).
const MAX_CHUNK: usize = 32;

/// 16 lanes of -1, then 16 of 0: sixteen consecutive entries from `15 -
/// to` set lanes `0..=to`.
static UP_TO: [i16; 2 * BLOCK] = {
    let mut lanes = [0; 2 * BLOCK];
    let mut i = 0;
    while i < BLOCK {
        lanes[i] = -1;
        i += 1;
    }
    lanes
};

/// For each run in a chunk of columns: its first column and its length.
/// `side` has the bits of the columns whose samples leave (or enter),
/// `same` those whose key equals the previous column's; `BITS` bits per
/// column (the lowest set), at most 32 columns.
#[inline(always)]
fn for_each_run<const BITS: u32>(side: u32, same: u32, mut run: impl FnMut(usize, usize)) {
    let column = (1u64 << BITS) - 1;
    let (side, same) = (u64::from(side), u64::from(same));
    // Columns that continue the run of the column before them.
    let continues = side & (side << BITS) & same;
    let mut starts = side & !continues;
    while starts != 0 {
        let at = starts.trailing_zeros();
        starts &= !(column << at);
        let len = (!(continues >> (at + BITS))).trailing_zeros() / BITS + 1;
        run((at / BITS) as usize, len as usize);
    }
}

/// Adds runs of samples to histogram rows.
pub(super) struct RunAdder {
    /// `band_size` rows of `width` cells, and [`SPARE_CELLS`] after them.
    counts: *mut u16,
    width: usize,
    pad: usize,
    /// Lane `l`: `l - pad` and `l + pad + 1`, the reach of the windows that
    /// cover cell `l` of a block (relative to the block's first cell).
    reach_low: __m256i,
    reach_high: __m256i,
}

impl RunAdder {
    /// Runs added to `counts`.
    ///
    /// # Safety
    /// The CPU must have AVX2; `counts` must hold `band_size` rows of
    /// `width` cells and [`SPARE_CELLS`] after them, alive and not otherwise
    /// accessed while this adder is.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn new(counts: *mut u16, width: usize, pad: usize) -> Self {
        // Offsets within a run's blocks stay far inside 16-bit lanes.
        assert!(width > 0 && pad < 1 << 12);
        let lane = _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        Self {
            counts,
            width,
            pad,
            reach_low: _mm256_sub_epi16(lane, _mm256_set1_epi16(pad as i16)),
            reach_high: _mm256_add_epi16(lane, _mm256_set1_epi16(pad as i16 + 1)),
        }
    }

    /// Adds (or with `removes` removes) the samples of the columns `x0 +
    /// c` whose bits are set in `side`, run by run ([`for_each_run`]):
    /// `same` marks the columns whose key equals the previous column's,
    /// `keys` holds the key of every column, `BITS` bits per column.
    ///
    /// # Safety
    /// The CPU must have AVX2; the key of every column in `side` below the
    /// histograms' `band_size`; `side` at most 32 columns.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn add_runs<const BITS: u32>(
        &self,
        x0: usize,
        side: u32,
        same: u32,
        keys: &[u16],
        removes: bool,
    ) {
        for_each_run::<BITS>(side, same, |at, len| {
            let x = x0 + at;
            // SAFETY: the run's key is below `band_size`; 1 <= len <= 32.
            unsafe { self.add(keys[x], x, len, removes) };
        });
    }

    /// Adds (or with `removes` removes) one sample of `key` at each column
    /// `start..start + len` to the cells of its row within `pad` columns of
    /// it (and below `width`): each cell changes by the number of those
    /// columns within `pad` of it.
    ///
    /// # Safety
    /// The CPU must have AVX2; `key` below the histograms' `band_size`;
    /// `1 <= len <= 32`.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn add(&self, key: u16, start: usize, len: usize, removes: bool) {
        debug_assert!((1..=MAX_CHUNK).contains(&len));
        let end = start + len - 1;
        let first = start.saturating_sub(self.pad);
        let last = (end + self.pad).min(self.width - 1);
        if first > last {
            return; // columns past the picture (libvmaf's narrow rows)
        }
        // SAFETY: the key's row lies in `counts` (the caller's contract).
        let row = unsafe { self.counts.add(usize::from(key) * self.width) };
        let first_block = first / BLOCK;
        let origin = first_block * BLOCK;
        // The run's columns relative to the block: from below pad + 16 and
        // 32 + pad + 16, falling by 16 a block to above -(32 + 2 pad + 32).
        let mut from = _mm256_set1_epi16((start - origin) as i16);
        let mut past = _mm256_set1_epi16((end + 1 - origin) as i16);
        let step = _mm256_set1_epi16(BLOCK as i16);
        for block in first_block..=last / BLOCK {
            let at = block * BLOCK;
            // Cell l is covered by columns max(start, l - pad) ..= min(end,
            // l + pad).
            let covered = _mm256_sub_epi16(
                _mm256_min_epi16(past, self.reach_high),
                _mm256_max_epi16(from, self.reach_low),
            );
            let mut cover = _mm256_max_epi16(covered, _mm256_setzero_si256());
            if at + BLOCK > last + 1 {
                // The row's last block: cells past `last` (past the
                // picture) keep their counts.
                // SAFETY: `last - at` < 16, so the read lies in UP_TO.
                let keep = unsafe {
                    _mm256_loadu_si256(UP_TO.as_ptr().add(BLOCK - 1 - (last - at)).cast())
                };
                cover = _mm256_and_si256(cover, keep);
            }
            // SAFETY: the block starts below `width` and ends within the
            // spare cells; cells outside the windows change by 0.
            unsafe {
                let cells_at = row.add(at).cast::<__m256i>();
                let cells = _mm256_loadu_si256(cells_at);
                let cells = if removes {
                    _mm256_sub_epi16(cells, cover)
                } else {
                    _mm256_add_epi16(cells, cover)
                };
                _mm256_storeu_si256(cells_at, cells);
            }
            from = _mm256_sub_epi16(from, step);
            past = _mm256_sub_epi16(past, step);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs<const BITS: u32>(side: u32, same: u32) -> Vec<(usize, usize)> {
        let mut found = Vec::new();
        for_each_run::<BITS>(side, same, |at, len| found.push((at, len)));
        found
    }

    #[test]
    fn runs_are_consecutive_columns_of_equal_keys() {
        // Columns 0-2 leave with one key, 3 with another, 5-6 alike, 31.
        let side = 0b0110_1111 | 1 << 31;
        let same = 0b0100_0110 | 1 << 31;
        assert_eq!(runs::<1>(side, same), [(0, 3), (3, 1), (5, 2), (31, 1)]);
        // A column equal to one that does not move starts a run.
        assert_eq!(runs::<1>(0b1100, 0b1110), [(2, 2)]);
        assert_eq!(runs::<1>(!0, !0), [(0, 32)]);
        assert_eq!(runs::<1>(0, !0), []);
        // Two bits a column (byte masks of 16-bit lanes).
        assert_eq!(runs::<2>(0b1111_0011, 0b1111_0000), [(0, 1), (2, 2)]);
        assert_eq!(
            runs::<2>(!0, 0),
            (0..16).map(|x| (x, 1)).collect::<Vec<_>>()
        );
    }
}
