//! ADM's scale-0 DWT, row by row: the loop that the portable passes
//! (`dwt`), the AVX-512 passes (ADR 0032, `dwt_avx512`) and the AVX2 passes
//! (ADR 0035, `dwt_avx2`) share. Each instruction set gives a vertical
//! pass and a horizontal pass over the outputs whose taps all lie inside
//! the row; the columns with mirrored taps, and libvmaf's read past the row
//! (`dwt::simd_reads_past_row`), are left to the portable code's functions.
//!
//! The vector passes, for samples of up to 12 bits, are pairs of 16-bit products summed by `vpmaddwd`: the
//! vertical pass pairs rows (0, 1) and (2, 3); the horizontal pass reads its
//! row twice, one and three samples on, so that each 32-bit lane holds the
//! taps (2j - 1, 2j) and (2j + 1, 2j + 2) of output j. Up to 12 bits no sum
//! wraps (the portable loops wrap like libvmaf's int32 sums, which only
//! 16-bit samples reach) and every output fits 16 bits (both passes'
//! outputs lie within +-27411), so packing with saturation is the portable
//! `as i16`.

use super::dwt::{
    edge_outputs, horizontal_fine_edges, interior_outputs, overrun_column, simd_reads_past_row,
    Bands, RowScratch, Taps,
};
use crate::picture::{PlaneRef, Sample};

/// The deepest samples the vector passes take exactly.
pub(super) const MAX_BIT_DEPTH: u32 = 12;

/// A vertical pass: one output row from its four input rows (taps in
/// order) into every column of `lo` and `hi`.
pub(super) type VerticalPass<S> =
    unsafe fn(rows: [&[S]; 4], bit_depth: u32, lo: &mut [i16], hi: &mut [i16]);

/// One instruction set's passes over a row.
pub(super) struct RowPasses<S> {
    pub vertical: VerticalPass<S>,
    /// The horizontal pass of outputs `1..=n` (those whose taps all lie in
    /// the row; 2n + 2 < its length) into `low` and `high`.
    pub horizontal: unsafe fn(&[i16], usize, Low<'_>, &mut [i16]),
}

/// [`dwt::analyze_picture`](super::dwt::analyze_picture) with `passes`.
///
/// # Safety
/// The CPU must have the instruction set of `passes`.
pub(super) unsafe fn analyze_picture<S: Sample>(
    passes: RowPasses<S>,
    src: &PlaneRef<'_, S>,
    bit_depth: u32,
    taps: &Taps,
    scratch: &mut RowScratch,
    approx: &mut [i32],
    mut details: Option<&mut Bands<i16>>,
) {
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
        unsafe { (passes.vertical)(rows.map(|r| src.row(r)), bit_depth, lo, hi) };
        let out = i * out_w..(i + 1) * out_w;
        let approx_row = &mut approx[out.clone()];
        match details.as_deref_mut() {
            None => {
                // SAFETY: as above; outputs 1..=n lie in rows of out_w.
                unsafe { (passes.horizontal)(lo, n, Low::Wide(approx_row), out_hi) };
                horizontal_fine_edges(lo, &taps.cols, out_lo, out_hi);
            }
            Some(d) => {
                let [dh, dv, dd] = d.slices_mut(out);
                // SAFETY: as above.
                unsafe {
                    (passes.horizontal)(lo, n, Low::Wide(approx_row), dv);
                    (passes.horizontal)(hi, n, Low::Narrow(dh), dd);
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

/// Where the low-pass outputs of a horizontal pass go: the approximation
/// (widened to 32 bits) or a 16-bit band.
pub(super) enum Low<'a> {
    Wide(&'a mut [i32]),
    Narrow(&'a mut [i16]),
}

impl Low<'_> {
    pub(super) fn len(&self) -> usize {
        match self {
            Low::Wide(out) => out.len(),
            Low::Narrow(out) => out.len(),
        }
    }
}
