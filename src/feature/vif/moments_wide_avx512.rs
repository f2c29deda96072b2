//! The moment pass for samples wider than 8 bits (every decimated scale,
//! and scale 0 of pictures `moments_u16_vnni` does not take: 16-bit ones,
//! those with a sample above their bit depth, and all on CPUs without
//! VNNI) in double precision with AVX-512 and fused multiply-adds, eight
//! columns per vector.
//!
//! libvmaf sums these moments in 64-bit integers, which x86 multiplies
//! slowly. Here every operand and every partial sum is a non-negative
//! integer below 2^53 (a tap weight below 2^16 times a sample below 2^16
//! times a sample: below 2^48; seventeen of them: below 2^53), so each
//! multiplication, fused multiply-add and addition in double precision is
//! exact and the results are libvmaf's integers, whatever the order. The
//! rounding shifts are exact too: `floor((v + 2^(s-1)) * 2^-s)`, and so
//! is the reduction modulo 2^32 where libvmaf narrows to, or wraps in, 32
//! bits (which only samples above the picture's bit depth reach), so any
//! 16-bit input gives libvmaf's results.

#![cfg(target_arch = "x86_64")]

use super::filter::VerticalShifts;
use super::log2::Log2Table;
use super::stats::{MomentBlock, ScaleSums};
use super::stats_avx512::VecSums16;
use super::tables::MAX_HALF;
use crate::feature::common::mirrored_filter::{mirror, mirror_edges};
use crate::picture::PlaneRef;
use std::arch::x86_64::*;

/// Columns per vector.
const LANES: usize = 8;

/// One vertically filtered row per quantity, `MAX_HALF` mirrored columns
/// each side and a vector of slack.
#[derive(Debug)]
pub struct WideRows {
    /// mu1, mu2, xx, yy, xy.
    rows: [Vec<f64>; 5],
}

const MU1: usize = 0;
const MU2: usize = 1;
const XX: usize = 2;
const YY: usize = 3;
const XY: usize = 4;

impl WideRows {
    pub fn new(width: usize) -> Self {
        Self {
            rows: std::array::from_fn(|_| vec![0.0; width + 2 * MAX_HALF + LANES]),
        }
    }
}

/// True when the CPU may run this pass and the decimation's (AVX-512 and
/// FMA).
pub fn available() -> bool {
    crate::cpu::has_avx512() && crate::cpu::has_fma()
}

/// What one call of the pass works on.
pub struct WidePass<'p> {
    pub reference: PlaneRef<'p, u16>,
    pub distorted: PlaneRef<'p, u16>,
    pub filter: &'static [u16],
    pub shifts: VerticalShifts,
}

/// Sums the VIF statistic over one scale of a pair of 16-bit planes
/// holding samples of at most 16 bits.
///
/// # Safety
/// The CPU must support [`available`]; `rows` must be made for a width of
/// at least `pass.reference.width`; the filter must have at most
/// `2 * MAX_HALF + 1` taps.
#[target_feature(enable = "avx2,fma,avx512f")]
pub unsafe fn accumulate(
    rows: &mut WideRows,
    pass: &WidePass<'_>,
    log2: &Log2Table,
    gain_limit: f64,
) -> ScaleSums {
    // One copy per filter length, so that the tap loops unroll.
    // SAFETY: the caller upholds this function's contract.
    unsafe {
        match pass.filter.len() {
            17 => accumulate_taps::<17>(rows, pass, log2, gain_limit),
            9 => accumulate_taps::<9>(rows, pass, log2, gain_limit),
            5 => accumulate_taps::<5>(rows, pass, log2, gain_limit),
            3 => accumulate_taps::<3>(rows, pass, log2, gain_limit),
            n => unreachable!("integer VIF has no {n}-tap filter"),
        }
    }
}

/// [`accumulate`] for a filter of `TAPS` taps.
#[target_feature(enable = "avx2,fma,avx512f")]
unsafe fn accumulate_taps<const TAPS: usize>(
    rows: &mut WideRows,
    pass: &WidePass<'_>,
    log2: &Log2Table,
    gain_limit: f64,
) -> ScaleSums {
    let (w, h) = (pass.reference.width, pass.reference.height);
    let half = TAPS / 2;
    assert!(pass.filter.len() == TAPS && half <= MAX_HALF);
    assert!(rows.rows[0].len() >= w + 2 * MAX_HALF + LANES);
    assert!(pass.distorted.width == w && pass.distorted.height == h);
    let weights: [f64; TAPS] = std::array::from_fn(|k| f64::from(pass.filter[k]));
    let mut sums = ScaleSums::default();
    // SAFETY: AVX-512, as this function.
    let mut vec_sums = unsafe { VecSums16::new(log2, gain_limit) };
    let mut ref_rows: [&[u16]; TAPS] = [&[]; TAPS];
    let mut dis_rows = ref_rows;
    for i in 0..h {
        for k in 0..TAPS {
            let y = mirror(i as isize + k as isize - half as isize, h);
            ref_rows[k] = pass.reference.row(y);
            dis_rows[k] = pass.distorted.row(y);
        }
        // SAFETY: AVX-512 and FMA, as this function; rows sized above.
        unsafe { vertical(rows, pass, &weights, &ref_rows, &dis_rows, w) };
        let columns = MAX_HALF - half..MAX_HALF + w + half;
        for row in &mut rows.rows {
            mirror_edges(&mut row[columns.clone()], half);
        }
        // SAFETY: as above.
        unsafe {
            horizontal(
                rows,
                pass.filter,
                &weights,
                w,
                &mut vec_sums,
                &mut sums,
                log2,
                gain_limit,
            )
        };
    }
    // SAFETY: as above.
    unsafe { vec_sums.finish(&mut sums) };
    sums
}

/// Each lane rounded down to an integer (shared with the decimation).
#[inline]
#[target_feature(enable = "avx2,fma,avx512f")]
pub(super) fn floor(v: __m512d) -> __m512d {
    _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(v)
}

/// `floor((v + 2^(shift-1)) * 2^-shift)`, exact for integer `v < 2^53`;
/// `v` itself for a zero shift.
#[inline]
#[target_feature(enable = "avx2,fma,avx512f")]
fn round_shift(v: __m512d, shift: u32) -> __m512d {
    if shift == 0 {
        return v;
    }
    let half = _mm512_set1_pd(f64::from(1u32 << (shift - 1)));
    let scale = _mm512_set1_pd(1.0 / f64::from(1u32 << shift));
    floor(_mm512_mul_pd(_mm512_add_pd(v, half), scale))
}

/// `v mod 2^32`, exact for integer `0 <= v < 2^53`: C's cast of a 64-bit
/// integer to 32 bits, or its wrapping 32-bit sum.
#[inline]
#[target_feature(enable = "avx2,fma,avx512f")]
fn wrap32(v: __m512d) -> __m512d {
    const TWO_32: f64 = 4294967296.0;
    let wraps = floor(_mm512_mul_pd(v, _mm512_set1_pd(1.0 / TWO_32)));
    _mm512_fnmadd_pd(wraps, _mm512_set1_pd(TWO_32), v)
}

/// Eight 16-bit samples as doubles.
///
/// # Safety
/// `row` must hold eight samples from `j`.
#[inline]
#[target_feature(enable = "avx2,fma,avx512f")]
unsafe fn load8(row: &[u16], j: usize) -> __m512d {
    debug_assert!(j + LANES <= row.len());
    // SAFETY: the caller guarantees eight samples from j.
    let v = unsafe { _mm_loadu_si128(row.as_ptr().add(j).cast()) };
    _mm512_cvtepi32_pd(_mm256_cvtepu16_epi32(v))
}

/// The vertical pass of one row into the rows (from column `MAX_HALF`).
#[target_feature(enable = "avx2,fma,avx512f")]
unsafe fn vertical<const TAPS: usize>(
    rows: &mut WideRows,
    pass: &WidePass<'_>,
    weights: &[f64; TAPS],
    ref_rows: &[&[u16]; TAPS],
    dis_rows: &[&[u16]; TAPS],
    w: usize,
) {
    let shifts = pass.shifts;
    // Sums of `BLOCKS` neighbouring blocks of eight columns from column j:
    // independent chains of additions, to keep the FMA units busy.
    #[inline(always)]
    fn sums<const TAPS: usize, const BLOCKS: usize>(
        weights: &[f64; TAPS],
        ref_rows: &[&[u16]; TAPS],
        dis_rows: &[&[u16]; TAPS],
        j: usize,
    ) -> [[__m512d; 5]; BLOCKS] {
        // SAFETY: only called from `vertical` (AVX-512 and FMA) with
        // j + 8 * BLOCKS <= w, and every source row holds w samples.
        unsafe {
            let zero = _mm512_setzero_pd();
            let mut acc = [[zero; 5]; BLOCKS];
            for ((&c, r), d) in weights.iter().zip(ref_rows).zip(dis_rows) {
                let c = _mm512_set1_pd(c);
                for (b, [m1, m2, xx, yy, xy]) in acc.iter_mut().enumerate() {
                    let (r, d) = (load8(r, j + b * LANES), load8(d, j + b * LANES));
                    let (cr, cd) = (_mm512_mul_pd(c, r), _mm512_mul_pd(c, d));
                    *m1 = _mm512_add_pd(*m1, cr);
                    *m2 = _mm512_add_pd(*m2, cd);
                    *xx = _mm512_fmadd_pd(cr, r, *xx);
                    *yy = _mm512_fmadd_pd(cd, d, *yy);
                    *xy = _mm512_fmadd_pd(cr, d, *xy);
                }
            }
            acc
        }
    }
    let mut store = |[m1, m2, xx, yy, xy]: [__m512d; 5], j: usize| {
        let out = [
            round_shift(m1, shifts.mean),
            round_shift(m2, shifts.mean),
            wrap32(round_shift(xx, shifts.square)),
            wrap32(round_shift(yy, shifts.square)),
            wrap32(round_shift(xy, shifts.square)),
        ];
        for (row, v) in rows.rows.iter_mut().zip(out) {
            let dst = &mut row[MAX_HALF + j..MAX_HALF + j + LANES];
            // SAFETY: eight doubles, bounds checked by the slice.
            unsafe { _mm512_storeu_pd(dst.as_mut_ptr(), v) };
        }
    };
    let mut j = 0;
    while j + 2 * LANES <= w {
        let [a, b] = sums::<TAPS, 2>(weights, ref_rows, dis_rows, j);
        store(a, j);
        store(b, j + LANES);
        j += 2 * LANES;
    }
    if j + LANES <= w {
        let [a] = sums::<TAPS, 1>(weights, ref_rows, dis_rows, j);
        store(a, j);
        j += LANES;
    }
    for j in j..w {
        // The same integers, one column at a time.
        let (mut m1, mut m2, mut xx, mut yy, mut xy) = (0u64, 0u64, 0u64, 0u64, 0u64);
        for ((&c, r), d) in pass.filter.iter().zip(ref_rows).zip(dis_rows) {
            let (c, r, d) = (u64::from(c), u64::from(r[j]), u64::from(d[j]));
            m1 += c * r;
            m2 += c * d;
            xx += c * r * r;
            yy += c * d * d;
            xy += c * r * d;
        }
        let round = |v: u64, shift: u32| {
            if shift == 0 {
                v
            } else {
                (v + (1 << (shift - 1))) >> shift
            }
        };
        let at = MAX_HALF + j;
        rows.rows[MU1][at] = round(m1, shifts.mean) as f64;
        rows.rows[MU2][at] = round(m2, shifts.mean) as f64;
        // `as u32`: C's narrowing cast.
        rows.rows[XX][at] = f64::from(round(xx, shifts.square) as u32);
        rows.rows[YY][at] = f64::from(round(yy, shifts.square) as u32);
        rows.rows[XY][at] = f64::from(round(xy, shifts.square) as u32);
    }
}

/// The horizontal pass of the padded rows, each pixel into the sums. The
/// filters are symmetric, so mirrored taps are added before weighting.
#[target_feature(enable = "avx2,fma,avx512f")]
#[allow(clippy::too_many_arguments)]
unsafe fn horizontal<const TAPS: usize>(
    rows: &WideRows,
    filter: &[u16],
    weights: &[f64; TAPS],
    w: usize,
    vec_sums: &mut VecSums16,
    sums: &mut ScaleSums,
    log2: &Log2Table,
    gain_limit: f64,
) {
    let (taps, half) = (TAPS, TAPS / 2);
    // Eight columns starting at column `j` of quantity `q`.
    let block = |q: usize, j: usize| {
        let first = MAX_HALF - half + j;
        // SAFETY: the reads span columns first..first + taps - 1 + 8,
        // inside the row (width + 2 * MAX_HALF + 8) as j + 8 <= w.
        let filtered = unsafe {
            let p = rows.rows[q].as_ptr();
            let mut acc = _mm512_mul_pd(
                _mm512_set1_pd(weights[half]),
                _mm512_loadu_pd(p.add(first + half)),
            );
            for (k, &c) in weights[..half].iter().enumerate() {
                let pair = _mm512_add_pd(
                    _mm512_loadu_pd(p.add(first + k)),
                    _mm512_loadu_pd(p.add(first + taps - 1 - k)),
                );
                acc = _mm512_fmadd_pd(_mm512_set1_pd(c), pair, acc);
            }
            acc
        };
        if q < XX {
            // The means wrap as C's 32-bit sums do.
            _mm512_cvttpd_epu32(wrap32(filtered))
        } else {
            _mm512_cvttpd_epu32(round_shift(filtered, 16))
        }
    };
    let mut j = 0;
    while j + 2 * LANES <= w {
        // (Direct calls, not `map`, so that the closure inlines with this
        // function's target features.)
        let quantities = |j| {
            [
                block(MU1, j),
                block(MU2, j),
                block(XX, j),
                block(YY, j),
                block(XY, j),
            ]
        };
        let (low, high) = (quantities(j), quantities(j + LANES));
        // SAFETY: the CPU has AVX-512, as this function.
        unsafe { vec_sums.add16(low, high) };
        j += 2 * LANES;
    }
    for j in j..w {
        let first = MAX_HALF - half + j;
        let filtered = |q: usize| -> u64 {
            let row = &rows.rows[q];
            filter
                .iter()
                .enumerate()
                .map(|(k, &c)| u64::from(c) * row[first + k] as u64)
                .sum()
        };
        let moment = |q: usize| ((filtered(q) + (1 << 15)) >> 16) as u32;
        let block = MomentBlock {
            mu1: [filtered(MU1) as u32],
            mu2: [filtered(MU2) as u32],
            xx: [moment(XX)],
            yy: [moment(YY)],
            xy: [moment(XY)],
        };
        sums.add_block::<1>(&block, log2, gain_limit);
    }
}
