//! The decimation pass for 16-bit planes (scale 0 of 10- to 16-bit
//! pictures, and the decimated scales) in double precision with AVX-512,
//! eight columns per vector, instead of 32-bit integer multiplies.
//!
//! Exact for the reason `moments_wide_avx512` is: every product and sum is
//! a non-negative integer below 2^53 (a weight below 2^16 times a value
//! below 2^32, nine of them), and where libvmaf's 32-bit sums wrap (only
//! values above the picture's bit depth reach that) the bits kept are the
//! same. So the output is `decimate::decimate`'s.

#![cfg(target_arch = "x86_64")]

use super::tables::MAX_HALF;
use crate::feature::common::mirrored_filter::{mirror, mirror_edges};
use crate::picture::PlaneRef;
use std::arch::x86_64::*;

/// Columns per vector.
const LANES: usize = 8;

/// Scratch: one vertically filtered row, `MAX_HALF` mirrored columns each
/// side and two vectors of slack (the horizontal pass reads 16 columns to
/// keep 8).
#[derive(Debug)]
pub struct WideRow {
    padded: Vec<f64>,
}

impl WideRow {
    pub fn new(width: usize) -> Self {
        Self {
            padded: vec![0.0; width + 2 * MAX_HALF + 2 * LANES],
        }
    }
}

/// The moment pass's instruction sets and rounding.
pub use super::moments_wide_avx512::available;
use super::moments_wide_avx512::floor;

/// Low-passes both planes with `filter` and keeps their even rows and
/// columns into `outputs` (`(w / 2) x (h / 2)`, tightly packed); the
/// vertical sums are brought back to 16 bits by `mean_shift`.
///
/// # Safety
/// The CPU must support [`available`]; `row` must be made for a width of
/// at least the planes'; `filter` must be one of VIF's decimating filters
/// (9, 5 or 3 taps).
#[target_feature(enable = "avx2,fma,avx512f,avx512vl")]
pub unsafe fn decimate(
    row: &mut WideRow,
    planes: [PlaneRef<'_, u16>; 2],
    filter: &'static [u16],
    mean_shift: u32,
    outputs: [&mut [u16]; 2],
) {
    // One copy per filter length, so that the tap loops unroll.
    // SAFETY: the caller upholds this function's contract.
    unsafe {
        match filter.len() {
            9 => decimate_taps::<9>(row, planes, filter, mean_shift, outputs),
            5 => decimate_taps::<5>(row, planes, filter, mean_shift, outputs),
            3 => decimate_taps::<3>(row, planes, filter, mean_shift, outputs),
            n => unreachable!("integer VIF has no {n}-tap decimating filter"),
        }
    }
}

#[target_feature(enable = "avx2,fma,avx512f,avx512vl")]
unsafe fn decimate_taps<const TAPS: usize>(
    row: &mut WideRow,
    planes: [PlaneRef<'_, u16>; 2],
    filter: &'static [u16],
    mean_shift: u32,
    outputs: [&mut [u16]; 2],
) {
    let (w, h) = (planes[0].width, planes[0].height);
    let (out_w, half) = (w / 2, TAPS / 2);
    assert!(filter.len() == TAPS && half <= MAX_HALF && (1..=16).contains(&mean_shift));
    assert!(row.padded.len() >= w + 2 * MAX_HALF + 2 * LANES);
    let weights: [f64; TAPS] = std::array::from_fn(|k| f64::from(filter[k]));
    let mean_round = f64::from(1u32 << (mean_shift - 1));
    let mean_scale = 1.0 / f64::from(1u32 << mean_shift);
    // Keeps the even lanes of two vectors of eight: columns 2m of 16.
    let evens = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
    for (plane, out) in planes.into_iter().zip(outputs) {
        assert!(plane.width == w && plane.height == h && out.len() >= out_w * (h / 2));
        for i in 0..h / 2 {
            let mut taps: [&[u16]; TAPS] = [&[]; TAPS];
            for (k, tap) in taps.iter_mut().enumerate() {
                *tap = plane.row(mirror((2 * i + k) as isize - half as isize, h));
            }
            // Vertical: (Σc·x + 2^(s-1)) >> s, every column. The true sums
            // are below 2^32, so C's wrapping sum is the exact one.
            let mut j = 0;
            while j + LANES <= w {
                let mut acc = _mm512_setzero_pd();
                for (&c, tap) in weights.iter().zip(&taps) {
                    // SAFETY: the tap row holds w samples and j + 8 <= w.
                    let x = _mm512_cvtepi32_pd(_mm256_cvtepu16_epi32(unsafe {
                        _mm_loadu_si128(tap.as_ptr().add(j).cast())
                    }));
                    acc = _mm512_fmadd_pd(_mm512_set1_pd(c), x, acc);
                }
                let v = floor(_mm512_mul_pd(
                    _mm512_add_pd(acc, _mm512_set1_pd(mean_round)),
                    _mm512_set1_pd(mean_scale),
                ));
                let dst = &mut row.padded[MAX_HALF + j..MAX_HALF + j + LANES];
                // SAFETY: eight doubles, bounds checked by the slice.
                unsafe { _mm512_storeu_pd(dst.as_mut_ptr(), v) };
                j += LANES;
            }
            for (j, out) in row.padded[MAX_HALF..MAX_HALF + w]
                .iter_mut()
                .enumerate()
                .skip(j)
            {
                let sum: u64 = filter
                    .iter()
                    .zip(&taps)
                    .map(|(&c, tap)| u64::from(c) * u64::from(tap[j]))
                    .sum();
                *out = ((sum + (1 << (mean_shift - 1))) >> mean_shift) as f64;
            }
            mirror_edges(&mut row.padded[MAX_HALF - half..MAX_HALF + w + half], half);

            // Horizontal: output column o is the filter centred on padded
            // column 2o + half. C's sum and its rounding addition wrap at
            // 32 bits, but only bits 16 to 31 are kept, which the wrapping
            // does not change: the exact sum's bits 16 to 31 are the same.
            let first = MAX_HALF - half;
            let out_row = &mut out[i * out_w..(i + 1) * out_w];
            let mut o = 0;
            while o + LANES <= out_w {
                let mut acc = _mm512_setzero_pd();
                for (k, &c) in weights.iter().enumerate() {
                    // SAFETY: reads columns first + 2o + k .. + 16, at most
                    // w + 2 * half + 7 as 2(o + 8) <= w: inside the row.
                    let v = unsafe {
                        let p = row.padded.as_ptr().add(first + 2 * o + k);
                        _mm512_permutex2var_pd(
                            _mm512_loadu_pd(p),
                            evens,
                            _mm512_loadu_pd(p.add(LANES)),
                        )
                    };
                    acc = _mm512_fmadd_pd(_mm512_set1_pd(c), v, acc);
                }
                let rounded = _mm512_add_pd(acc, _mm512_set1_pd(32768.0));
                // Below 2^38 / 2^16: exact in 32 bits; the narrowing to 16
                // bits is C's cast.
                let v = floor(_mm512_mul_pd(rounded, _mm512_set1_pd(1.0 / 65536.0)));
                let narrow = _mm256_cvtepi32_epi16(_mm512_cvttpd_epu32(v));
                // SAFETY: eight 16-bit values, bounds checked by the slice.
                unsafe { _mm_storeu_si128(out_row[o..o + LANES].as_mut_ptr().cast(), narrow) };
                o += LANES;
            }
            for (o, out) in out_row.iter_mut().enumerate().skip(o) {
                let sum = filter.iter().enumerate().fold(0u32, |s, (k, &c)| {
                    let v = row.padded[first + 2 * o + k] as u64 as u32;
                    s.wrapping_add(u32::from(c).wrapping_mul(v))
                });
                *out = (sum.wrapping_add(1 << 15) >> 16) as u16;
            }
        }
    }
}
