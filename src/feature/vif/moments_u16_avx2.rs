//! The moment pass for 16-bit samples with AVX2 16-bit multiply-adds
//! (`vpmaddwd`): scale 0 of 9- to 16-bit pictures, and the decimated
//! scales whose filter weights are below 2^15 (1 and 2; scale 3's centre
//! weight is not, and its three taps over a 64th of the pixels are left
//! to the portable pass). Its vertical results go into the 16-bit rows of
//! `moments_u8_avx2`, whose horizontal pass it shares.
//!
//! libvmaf sums these moments in 64-bit integers. Here every operand is
//! a signed 16-bit lane offset by -2^15 (its top bit flipped): a sample
//! `x` as `x - 2^15`, and a product `x·y < 2^32` as its high and low
//! halves, each offset. The filter's taps sum to 2^16, so the weighted
//! sum of offset values is the weighted sum of the values minus 2^31,
//! exact modulo 2^32; and every weighted sum of 16-bit values is below
//! 2^32. From these sums:
//!
//! - a mean is `(Σc·x + 2^(B-1)) >> B` for `B`-bit samples;
//! - a second moment `(Σc·x·y + 2^(s-1)) >> s`, `s <= 16`, is
//!   `(Σc·hi << (16 - s)) + ((Σc·lo + 2^(s-1)) >> s)`, since `Σc·hi` is
//!   multiplied by 2^16, a multiple of 2^s; modulo 2^32, as libvmaf
//!   narrows it.
//!
//! The second moments are libvmaf's for any 16-bit samples. A mean fits
//! the 16-bit rows only when every sample is below 2^B, so each row's
//! samples are checked as it is first read, and a picture with a larger
//! sample (libvmaf keeps such means in 32 bits) is left to the portable
//! pass.
//!
//! As in `moments_u16_vnni`, a sample's parts are made once per picture
//! row, into a ring of the rows the vertical filter spans, and the
//! vertical pass makes four output rows at a time, loading and
//! interleaving each pair of ring rows once for all of them.

#![cfg(target_arch = "x86_64")]

use super::filter::VerticalShifts;
use super::log2::Log2Table;
use super::moments_u8_avx2::{filter_pair, horizontal_best, Rows16, HALF, TAPS};
use super::stats::ScaleSums;
use super::tables::FILTERS;
use crate::feature::common::mirrored_filter::{mirror, mirror_edges};
use crate::picture::PlaneRef;
use std::arch::x86_64::*;
use std::mem::MaybeUninit;

/// Columns per vector.
const BLOCK: usize = 16;
/// Output rows per vertical pass.
const ROWS: usize = 4; // (the pairing in `vertical` is written for four)
/// The most ring rows those output rows read (with the widest filter):
/// consecutive picture rows (mirrored rows at the edges are rows inside
/// the span), so that row `y` can live in slot `y % span`.
const MAX_SPAN: usize = TAPS + ROWS - 1;
/// Tap pairs of the widest filter.
const MAX_PAIRS: usize = TAPS.div_ceil(2);
/// Ring planes per row: x, y, then the high and low halves of xx, yy, xy
/// (the order of the rows of `Rows16`).
const PLANES: usize = 8;
const X: usize = 0;
const Y: usize = 1;
const XX: usize = 2;
const YY: usize = 4;
const XY: usize = 6;

/// The offset parts of the picture rows in use.
#[derive(Debug, Default)]
struct Parts {
    /// `MAX_SPAN` rows of `PLANES * stride` values: the planes' vectors of
    /// each block of `BLOCK` columns side by side, so that the vertical
    /// pass reads each ring row in order.
    values: Vec<i16>,
    /// Values per ring row and plane: the width rounded up to whole
    /// vectors.
    stride: usize,
    /// The picture row each slot holds (`usize::MAX`: none).
    held: [usize; MAX_SPAN],
}

impl Parts {
    /// Plane `q` of the block of columns from `j` of ring row `slot`.
    fn at(slot: usize, j: usize, q: usize, stride: usize) -> usize {
        slot * PLANES * stride + j * PLANES + q * BLOCK
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
        parts.stride = w.next_multiple_of(BLOCK);
        let len = MAX_SPAN * PLANES * parts.stride;
        if parts.values.len() < len {
            parts.values.resize(len, 0);
        }
        parts.held = [usize::MAX; MAX_SPAN];
        if !self.rows.first().is_some_and(|rows| rows.fits(w)) {
            self.rows = (0..ROWS).map(|_| Rows16::new(w)).collect();
        }
    }
}

/// Sums the VIF statistic over scale `scale` of a pair of `bits`-bit
/// pictures (16 for the decimated scales), or `None` when this pass does
/// not take them: scale 3, samples of 8 bits, or a sample of `2^bits` or
/// more.
///
/// # Safety
/// The CPU must support AVX2.
pub unsafe fn accumulate(
    ring: &mut ProductRing,
    reference: PlaneRef<'_, u16>,
    distorted: PlaneRef<'_, u16>,
    scale: usize,
    bits: u32,
    log2: &Log2Table,
    gain_limit: f64,
) -> Option<ScaleSums> {
    if !(9..=16).contains(&bits) {
        return None;
    }
    let pass = Pass {
        reference,
        distorted,
        shifts: VerticalShifts::for_bits(bits),
        limit: u16::MAX >> (16 - bits),
        log2,
        gain_limit,
    };
    // SAFETY: the CPU supports AVX2 (the caller's contract).
    unsafe {
        match scale {
            0 => pass.run::<17>(ring, FILTERS[0]),
            1 => pass.run::<9>(ring, FILTERS[1]),
            2 => pass.run::<5>(ring, FILTERS[2]),
            _ => None,
        }
    }
}

/// What one call of the pass works on.
struct Pass<'a, 'p> {
    reference: PlaneRef<'p, u16>,
    distorted: PlaneRef<'p, u16>,
    shifts: VerticalShifts,
    /// The largest sample the means' 16 bits hold.
    limit: u16,
    log2: &'a Log2Table,
    gain_limit: f64,
}

impl Pass<'_, '_> {
    /// The pass with the `N`-tap `filter`.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    unsafe fn run<const N: usize>(
        &self,
        ring: &mut ProductRing,
        filter: &[u16],
    ) -> Option<ScaleSums> {
        let filter: &[u16; N] = filter.try_into().expect("the filter has N taps");
        let (reference, distorted) = (self.reference, self.distorted);
        let (w, h) = (reference.width, reference.height);
        assert!(distorted.width == w && distorted.height == h);
        ring.reset(w);
        let (half, span) = (N / 2, N + ROWS - 1);
        let mut sums = ScaleSums::default();
        let mut i = 0;
        while i < h {
            let n = ROWS.min(h - i);
            let mut slots = [0; MAX_SPAN];
            for (k, slot) in slots[..span].iter_mut().enumerate() {
                // Rows past the last output row's taps repeat its last one.
                let k = k.min(N + n - 2);
                let y = mirror((i + k) as isize - half as isize, h);
                *slot = y % span;
                if ring.parts.held[*slot] != y {
                    let (r, d) = (reference.row(y), distorted.row(y));
                    // SAFETY: the CPU supports AVX2 (the caller's contract).
                    if !unsafe { fill(&mut ring.parts, *slot, r, d, self.limit) } {
                        return None;
                    }
                    ring.parts.held[*slot] = y;
                }
            }
            // SAFETY: as above; the ring holds the rows and `reset` sized
            // the output rows.
            unsafe { vertical(&ring.parts, &slots, &mut ring.rows, filter, w, self.shifts) };
            for rows in &mut ring.rows[..n] {
                for row in rows.rows_mut() {
                    mirror_edges(&mut row[HALF - half..HALF + w + half], half);
                }
                // SAFETY: as above; the rows were made for this width.
                unsafe { horizontal_best(rows, filter, w, self.log2, self.gain_limit, &mut sums) };
            }
            i += n;
        }
        Some(sums)
    }
}

/// Puts the offset parts of one row of each picture into ring slot `slot`
/// (those of zero samples past the row's end); false when a sample is
/// above `limit`.
#[target_feature(enable = "avx2")]
unsafe fn fill(parts: &mut Parts, slot: usize, r: &[u16], d: &[u16], limit: u16) -> bool {
    let (w, stride) = (r.len(), parts.stride);
    assert!(d.len() == w && stride >= w);
    let base = Parts::at(slot, 0, 0, stride);
    let values = &mut parts.values[base..base + PLANES * stride];
    let flip = _mm256_set1_epi16(i16::MIN);
    let load = |row: &[u16], j: usize| {
        if j + BLOCK <= w {
            // SAFETY: 16 samples of the row from j.
            return unsafe { _mm256_loadu_si256(row.as_ptr().add(j).cast()) };
        }
        let mut block = [0u16; BLOCK];
        block[..w - j].copy_from_slice(&row[j..]);
        // SAFETY: 16 values.
        unsafe { _mm256_loadu_si256(block.as_ptr().cast()) }
    };
    // (high half, low half) of the 32-bit products of 16-bit lanes, offset.
    let split = |a: __m256i, b: __m256i| {
        (
            _mm256_xor_si256(_mm256_mulhi_epu16(a, b), flip),
            _mm256_xor_si256(_mm256_mullo_epi16(a, b), flip),
        )
    };
    let mut top = _mm256_setzero_si256();
    let mut j = 0;
    while j < w {
        let (x, y) = (load(r, j), load(d, j));
        top = _mm256_max_epu16(top, _mm256_max_epu16(x, y));
        let (xx, yy, xy) = (split(x, x), split(y, y), split(x, y));
        let (xo, yo) = (_mm256_xor_si256(x, flip), _mm256_xor_si256(y, flip));
        let planes = [xo, yo, xx.0, xx.1, yy.0, yy.1, xy.0, xy.1];
        for (q, v) in planes.into_iter().enumerate() {
            let at = Parts::at(0, j, q, stride);
            let dst = &mut values[at..at + BLOCK];
            // SAFETY: 16 values, bounds checked by the slice (the stride
            // is a whole number of vectors).
            unsafe { _mm256_storeu_si256(dst.as_mut_ptr().cast(), v) };
        }
        j += BLOCK;
    }
    let limit = _mm256_set1_epi16(limit as i16);
    let fits = _mm256_cmpeq_epi16(_mm256_max_epu16(top, limit), limit);
    _mm256_movemask_epi8(fits) == -1
}

/// The vertical pass with the `N`-tap `filter` of `ROWS` output rows into
/// `outs` (from column `HALF`): output row `r` filters the ring rows in
/// `slots[r..r + N]`.
#[target_feature(enable = "avx2")]
unsafe fn vertical<const N: usize>(
    parts: &Parts,
    slots: &[usize; MAX_SPAN],
    outs: &mut [Rows16],
    filter: &[u16; N],
    w: usize,
    shifts: VerticalShifts,
) {
    const { assert!(N <= TAPS && N % 2 == 1) };
    let (pairs, span) = (N.div_ceil(2), N + ROWS - 1);
    let weights: [__m256i; MAX_PAIRS] =
        std::array::from_fn(|p| _mm256_set1_epi32(filter_pair(filter, p)));
    // The sums of offset values are 2^31 short; adding it back and the
    // rounding term is one wrapping addition.
    let rounded =
        |shift: u32| _mm256_set1_epi32((1u32 << 31).wrapping_add(1 << (shift - 1)) as i32);
    let (mean_add, low_add) = (rounded(shifts.mean), rounded(shifts.square));
    let high_add = _mm256_set1_epi32(i32::MIN);
    let mean_shift = _mm_cvtsi32_si128(shifts.mean as i32);
    let low_shift = _mm_cvtsi32_si128(shifts.square as i32);
    let high_shift = _mm_cvtsi32_si128(16 - shifts.square as i32);
    let bias = _mm256_set1_epi32(32768);
    let low16 = _mm256_set1_epi32(0xffff);
    assert!(outs.len() == ROWS && outs.iter().all(|rows| rows.fits(w)));
    assert!(parts.stride >= w && shifts.square <= 16);
    // Ring row k's first block; the one past the span is only read by the
    // last output row's last pair, whose second weight is 0: it reads the
    // last row again.
    let rows: [*const i16; MAX_SPAN + 1] = std::array::from_fn(|k| {
        let at = Parts::at(slots[k.min(span - 1)], 0, 0, parts.stride);
        parts.values[at..at + PLANES * parts.stride].as_ptr()
    });
    let mut j = 0;
    while j < w {
        let zero = _mm256_setzero_si256();
        // [plane][output row][columns of the low, high interleave]: each
        // 32-bit lane holds one column's sum; the unpacks pair two rows'
        // values of columns 8l..8l+3 (low) and 8l+4..8l+7 (high) of each
        // 128-bit lane l. Output row r filters ring rows r..r + N.
        // Not zeroed first: every plane is written below (zeroing the
        // array took a memset call per block).
        let mut acc = [const { MaybeUninit::<[[__m256i; 2]; ROWS]>::uninit() }; PLANES];
        for (q, plane_sums) in acc.iter_mut().enumerate() {
            // (Sums local to the plane's loop, so that they stay in
            // registers.)
            let mut sums = [[zero; 2]; ROWS];
            let offset = j * PLANES + q * BLOCK;
            // SAFETY: a ring row holds PLANES * stride values and
            // offset + BLOCK <= that, as j + BLOCK <= stride.
            let load = |k: usize| unsafe { _mm256_loadu_si256(rows[k].add(offset).cast()) };
            // Pair m of ring rows: even (2m, 2m + 1) and odd (2m + 1,
            // 2m + 2). Output rows 0 and 1 take them as their tap pair m
            // (`lead`), rows 2 and 3 as their tap pair m - 1 (`trail`).
            let mut first = load(0);
            let mut step = |m: usize, lead: bool, trail: bool| {
                let (second, third) = (load(2 * m + 1), load(2 * m + 2));
                let even = (
                    _mm256_unpacklo_epi16(first, second),
                    _mm256_unpackhi_epi16(first, second),
                );
                let odd = (
                    _mm256_unpacklo_epi16(second, third),
                    _mm256_unpackhi_epi16(second, third),
                );
                let mut add = |r: usize, (low, high): (__m256i, __m256i), c: __m256i| {
                    sums[r][0] = _mm256_add_epi32(sums[r][0], _mm256_madd_epi16(low, c));
                    sums[r][1] = _mm256_add_epi32(sums[r][1], _mm256_madd_epi16(high, c));
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
            for m in 1..pairs {
                step(m, true, true);
            }
            step(pairs, false, true);
            plane_sums.write(sums);
        }
        // Results offset by -32768 into the i16 range, as `Rows16` holds
        // them; packs puts each 128-bit lane's low and high columns back
        // in order (and is exact: every value is in range).
        let mean = |s: __m256i| {
            let v = _mm256_srl_epi32(_mm256_add_epi32(s, mean_add), mean_shift);
            _mm256_sub_epi32(v, bias)
        };
        let moment = |high: __m256i, low: __m256i| {
            _mm256_add_epi32(
                _mm256_sll_epi32(_mm256_add_epi32(high, high_add), high_shift),
                _mm256_srl_epi32(_mm256_add_epi32(low, low_add), low_shift),
            )
        };
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
                    out[q][half] = _mm256_sub_epi32(_mm256_srli_epi32::<16>(v), bias);
                    out[q + 1][half] = _mm256_sub_epi32(_mm256_and_si256(v, low16), bias);
                }
            }
            for (row, [low, high]) in rows.rows_mut().iter_mut().zip(out) {
                // Columns HALF + j up to a whole vector past it: inside
                // the row (`fits`, asserted above), the columns past the
                // width overwritten by the mirroring or never read.
                let dst = &mut row[HALF + j..HALF + j + BLOCK];
                // SAFETY: 16 values, bounds checked by the slice.
                unsafe {
                    _mm256_storeu_si256(dst.as_mut_ptr().cast(), _mm256_packs_epi32(low, high))
                };
            }
        }
        j += BLOCK;
    }
}
