//! The moment pass at scale 0 of 9- to 15-bit pictures with AVX-512 VNNI
//! 16-bit multiply-adds, into the 16-bit rows of `moments_u8_avx2`, whose
//! horizontal pass it shares.
//!
//! libvmaf sums these moments in 64-bit integers. Here every operand is
//! made to fit a signed 16-bit lane: a sample `x < 2^15` as it is, and a
//! product `x·y < 2^30` as its high part `x·y >> 15` and its low part
//! `x·y & 0x7fff`. The filter's taps sum to 2^16, so every weighted sum
//! of such parts stays below 2^31 and `vpdpwssd` adds it exactly. The
//! vertical results are then put together in 32 bits:
//!
//! - a mean, `(Σc·x + 2^(B-1)) >> B`, below 2^16 for `B`-bit samples;
//! - a second moment, `(Σc·x·y + 2^(s-1)) >> s` with `s = 2(B - 8) <= 14`,
//!   is `(Σc·hi << (15 - s)) + ((Σc·lo + 2^(s-1)) >> s)`, since `Σc·hi`
//!   is multiplied by `2^15`, a multiple of `2^s`; it is below 2^32 for
//!   `B`-bit samples, so no wrapping is lost.
//!
//! Both bounds need every sample below `2^B`. Each row's samples are
//! checked as it is first read; a picture with a larger sample (libvmaf
//! wraps those in 32 bits) is left to the double-precision pass.
//!
//! A sample's parts are made once per picture row, into a ring of the
//! rows the vertical filter spans. The vertical pass makes `ROWS` output
//! rows at a time: each ring row is then loaded, and each pair of
//! neighbouring ring rows interleaved, once for all of them (one output
//! row at a time, the loads of eight 16-bit planes per tap made the pass
//! bound by the memory it read).

#![cfg(target_arch = "x86_64")]

use super::log2::Log2Table;
use super::moments_u8_avx2::{horizontal_vnni, tap_pair, Rows16, HALF, PAIRS, TAPS};
use super::stats::ScaleSums;
use crate::feature::common::mirrored_filter::{mirror, mirror_edges};
use crate::feature::common::words16::first_lanes;
use crate::picture::PlaneRef;
use std::arch::x86_64::*;
use std::mem::MaybeUninit;

/// Columns per vector.
const WIDE: usize = 32;
/// Output rows per vertical pass.
const ROWS: usize = 4; // (the pairing in `vertical` is written for four)
/// Ring rows those output rows read: consecutive picture rows (mirrored
/// rows at the edges are rows inside the span), so that row `y` can live
/// in slot `y % SPAN`.
const SPAN: usize = TAPS + ROWS - 1;
/// Ring planes per row: x, y, then the high and low parts of xx, yy, xy.
const PLANES: usize = 8;
/// The ring planes and the rows of `Rows16` share one order.
const X: usize = 0;
const Y: usize = 1;
const XX: usize = 2;
const YY: usize = 4;
const XY: usize = 6;

/// The widest samples this pass takes.
pub const MAX_BITS: u32 = 15;

/// The 16-bit parts of the picture rows in use.
#[derive(Debug, Default)]
struct Parts {
    /// `SPAN` rows of `PLANES * stride` values: the planes' vectors of
    /// each block of `WIDE` columns side by side, so that the vertical
    /// pass reads each ring row in order.
    values: Vec<i16>,
    /// Values per ring row: the width rounded up to whole vectors.
    stride: usize,
    /// The picture row each slot holds (`usize::MAX`: none).
    held: [usize; SPAN],
}

impl Parts {
    /// Plane `q` of the block of columns from `j` of ring row `slot`.
    fn at(slot: usize, j: usize, q: usize, stride: usize) -> usize {
        slot * PLANES * stride + j * PLANES + q * WIDE
    }
}

/// Scratch of this pass: the ring and the vertical pass's output rows.
#[derive(Debug, Default)]
pub struct ProductRing {
    parts: Parts,
    rows: Vec<Rows16>,
}

impl ProductRing {
    /// Sizes the ring for rows of `w` samples and forgets what it held.
    fn reset(&mut self, w: usize) {
        let parts = &mut self.parts;
        parts.stride = w.next_multiple_of(WIDE);
        let len = SPAN * PLANES * parts.stride;
        if parts.values.len() < len {
            parts.values.resize(len, 0);
        }
        parts.held = [usize::MAX; SPAN];
        if !self.rows.first().is_some_and(|rows| rows.fits(w)) {
            self.rows = (0..ROWS).map(|_| Rows16::new(w)).collect();
        }
    }
}

/// True when the CPU runs this pass (that of `moments_u8_avx2::has_vnni`,
/// whose horizontal pass this one uses).
pub fn available() -> bool {
    super::moments_u8_avx2::has_vnni()
}

/// Sums the VIF statistic over scale 0 of a pair of `bits`-bit pictures,
/// or `None` when a sample is `2^bits` or more.
///
/// # Safety
/// The CPU must support [`available`].
pub unsafe fn accumulate(
    ring: &mut ProductRing,
    reference: PlaneRef<'_, u16>,
    distorted: PlaneRef<'_, u16>,
    bits: u32,
    log2: &Log2Table,
    gain_limit: f64,
) -> Option<ScaleSums> {
    assert!((9..=MAX_BITS).contains(&bits), "{bits}-bit samples");
    let (w, h) = (reference.width, reference.height);
    assert!(distorted.width == w && distorted.height == h);
    ring.reset(w);
    let limit = ((1u32 << bits) - 1) as u16;
    let mut sums = ScaleSums::default();
    let mut i = 0;
    while i < h {
        let n = ROWS.min(h - i);
        let mut slots = [0; SPAN];
        for (k, slot) in slots.iter_mut().enumerate() {
            // Rows past the last output row's taps repeat its last one.
            let k = k.min(TAPS + n - 2);
            let y = mirror((i + k) as isize - HALF as isize, h);
            *slot = y % SPAN;
            if ring.parts.held[*slot] != y {
                // SAFETY: the CPU supports AVX-512 BW (the caller's contract).
                let fits = unsafe {
                    fill(
                        &mut ring.parts,
                        *slot,
                        reference.row(y),
                        distorted.row(y),
                        limit,
                    )
                };
                if !fits {
                    return None;
                }
                ring.parts.held[*slot] = y;
            }
        }
        // SAFETY: the CPU supports the pass; the ring holds the rows and
        // `reset` sized the output rows.
        unsafe { vertical(&ring.parts, &slots, &mut ring.rows, w, bits) };
        for rows in &mut ring.rows[..n] {
            for row in rows.rows_mut() {
                mirror_edges(&mut row[..w + 2 * HALF], HALF);
            }
            // SAFETY: as above.
            unsafe { horizontal_vnni(rows, w, log2, gain_limit, &mut sums) };
        }
        i += n;
    }
    Some(sums)
}

/// Puts the parts of one row of each picture into ring slot `slot`
/// (zeros past the row's end); false when a sample is above `limit`.
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn fill(parts: &mut Parts, slot: usize, r: &[u16], d: &[u16], limit: u16) -> bool {
    let (w, stride) = (r.len(), parts.stride);
    assert!(d.len() == w && stride >= w);
    let base = Parts::at(slot, 0, 0, stride);
    let values = &mut parts.values[base..base + PLANES * stride];
    let limit = _mm512_set1_epi16(limit as i16);
    let low15 = _mm512_set1_epi16(0x7fff);
    // `(high part, low part)` of the 32-bit products of 16-bit lanes.
    let split = |a: __m512i, b: __m512i| {
        let (low, high) = (_mm512_mullo_epi16(a, b), _mm512_mulhi_epu16(a, b));
        let top = _mm512_or_si512(_mm512_slli_epi16::<1>(high), _mm512_srli_epi16::<15>(low));
        (top, _mm512_and_si512(low, low15))
    };
    let mut over: __mmask32 = 0;
    let mut j = 0;
    while j < w {
        let mask = first_lanes(w - j);
        // SAFETY: the masked loads read only the row's samples from j.
        let (x, y) = unsafe {
            (
                _mm512_maskz_loadu_epi16(mask, r.as_ptr().add(j).cast()),
                _mm512_maskz_loadu_epi16(mask, d.as_ptr().add(j).cast()),
            )
        };
        over |= _mm512_cmpgt_epu16_mask(x, limit) | _mm512_cmpgt_epu16_mask(y, limit);
        let (xx, yy, xy) = (split(x, x), split(y, y), split(x, y));
        let planes = [x, y, xx.0, xx.1, yy.0, yy.1, xy.0, xy.1];
        for (q, v) in planes.into_iter().enumerate() {
            let at = Parts::at(0, j, q, stride);
            let dst = &mut values[at..at + WIDE];
            // SAFETY: 32 values, bounds checked by the slice (the stride
            // is a whole number of vectors).
            unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast(), v) };
        }
        j += WIDE;
    }
    over == 0
}

/// The vertical pass of `ROWS` output rows into `outs` (from column
/// `HALF`): output row `r` filters the ring rows in `slots[r..r + TAPS]`.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn vertical(parts: &Parts, slots: &[usize; SPAN], outs: &mut [Rows16], w: usize, bits: u32) {
    let weights: [__m512i; PAIRS] = std::array::from_fn(|p| _mm512_set1_epi32(tap_pair(p)));
    let square = 2 * (bits - 8);
    let mean_shift = _mm_cvtsi32_si128(bits as i32);
    let mean_round = _mm512_set1_epi32(1 << (bits - 1));
    let square_shift = _mm_cvtsi32_si128(square as i32);
    let high_shift = _mm_cvtsi32_si128((15 - square) as i32);
    let square_round = _mm512_set1_epi32(1 << (square - 1));
    let bias = _mm512_set1_epi32(32768);
    let low16 = _mm512_set1_epi32(0xffff);
    assert!(outs.len() == ROWS && outs.iter().all(|rows| rows.fits(w)));
    assert!(parts.stride >= w);
    // Ring row k's first block; the 21st, past the span, is only read by
    // the last output row's last pair, whose second weight is 0: it reads
    // the 20th again.
    let rows: [*const i16; SPAN + 1] = std::array::from_fn(|k| {
        let at = Parts::at(slots[k.min(SPAN - 1)], 0, 0, parts.stride);
        parts.values[at..at + PLANES * parts.stride].as_ptr()
    });
    let mut j = 0;
    while j < w {
        let zero = _mm512_setzero_si512();
        // [plane][output row][columns of the low, high interleave]: each
        // 32-bit lane holds one column's sum; the unpacks pair two rows'
        // values of columns 8l..8l+3 (low) and 8l+4..8l+7 (high) of each
        // 128-bit lane l. Output row r filters ring rows r..r + TAPS.
        // Not zeroed first: every plane is written below (zeroing the
        // array took a memset call per block).
        let mut acc = [const { MaybeUninit::<[[__m512i; 2]; ROWS]>::uninit() }; PLANES];
        for (q, plane_sums) in acc.iter_mut().enumerate() {
            // (Sums local to the plane's loop, so that they stay in
            // registers.)
            let mut sums = [[zero; 2]; ROWS];
            let offset = j * PLANES + q * WIDE;
            // SAFETY: a ring row holds PLANES * stride values and
            // offset + WIDE <= that, as j + WIDE <= stride.
            let load = |k: usize| unsafe { _mm512_loadu_si512(rows[k].add(offset).cast()) };
            // Pair m of ring rows: even (2m, 2m + 1) and odd (2m + 1,
            // 2m + 2). Output rows 0 and 1 take them as their tap pair m
            // (`lead`), rows 2 and 3 as their tap pair m - 1 (`trail`).
            let mut first = load(0);
            let mut step = |m: usize, lead: bool, trail: bool| {
                let (second, third) = (load(2 * m + 1), load(2 * m + 2));
                let even = (
                    _mm512_unpacklo_epi16(first, second),
                    _mm512_unpackhi_epi16(first, second),
                );
                let odd = (
                    _mm512_unpacklo_epi16(second, third),
                    _mm512_unpackhi_epi16(second, third),
                );
                let mut add = |r: usize, (low, high): (__m512i, __m512i), c: __m512i| {
                    sums[r][0] = _mm512_dpwssd_epi32(sums[r][0], low, c);
                    sums[r][1] = _mm512_dpwssd_epi32(sums[r][1], high, c);
                };
                if lead {
                    add(0, even, weights[m]);
                    add(1, odd, weights[m]);
                }
                if trail {
                    add(2, even, weights[m - 1]);
                    add(3, odd, weights[m - 1]);
                }
                first = third;
            };
            step(0, true, false);
            for m in 1..PAIRS {
                step(m, true, true);
            }
            step(PAIRS, false, true);
            plane_sums.write(sums);
        }
        // Results offset by -32768 into the i16 range, as `Rows16` holds
        // them; packs puts each 128-bit lane's low and high columns back
        // in order (and is exact: every value is in range).
        let mean = |s: __m512i| {
            let v = _mm512_srl_epi32(_mm512_add_epi32(s, mean_round), mean_shift);
            _mm512_sub_epi32(v, bias)
        };
        let moment = |high: __m512i, low: __m512i| {
            _mm512_add_epi32(
                _mm512_sll_epi32(high, high_shift),
                _mm512_srl_epi32(_mm512_add_epi32(low, square_round), square_shift),
            )
        };
        let mask = first_lanes(w - j);
        // SAFETY: the loop above wrote every plane.
        let acc = |q: usize| unsafe { acc[q].assume_init_ref() };
        for (r, rows) in outs.iter_mut().enumerate() {
            let mut out = [[zero; 2]; PLANES];
            // (`half` indexes the planes' sums and `out` alike.)
            #[allow(clippy::needless_range_loop)]
            for half in 0..2 {
                out[X][half] = mean(acc(X)[r][half]);
                out[Y][half] = mean(acc(Y)[r][half]);
                for q in [XX, YY, XY] {
                    let v = moment(acc(q)[r][half], acc(q + 1)[r][half]);
                    out[q][half] = _mm512_sub_epi32(_mm512_srli_epi32::<16>(v), bias);
                    out[q + 1][half] = _mm512_sub_epi32(_mm512_and_si512(v, low16), bias);
                }
            }
            for (row, [low, high]) in rows.rows_mut().iter_mut().zip(out) {
                // SAFETY: the masked store writes columns HALF + j up to
                // HALF + w, inside the row (`fits`, asserted above).
                unsafe {
                    _mm512_mask_storeu_epi16(
                        row.as_mut_ptr().add(HALF + j),
                        mask,
                        _mm512_packs_epi32(low, high),
                    )
                };
            }
        }
        j += WIDE;
    }
}
