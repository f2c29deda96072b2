//! Pieces shared by the AVX-512 and AVX2 loops that work on 16-bit words
//! (32 or 16 to a vector): masks of a row's last partial vector, samples
//! loaded as words, and pairs of weights for `vpmaddwd`.

#![cfg(target_arch = "x86_64")]

use crate::picture::Sample;
use std::arch::x86_64::*;

/// A mask of the first `n` (at most 32) lanes.
pub fn first_lanes(n: usize) -> __mmask32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1u32 << n) - 1
    }
}

/// Two 16-bit weights as one `vpmaddwd` operand (first in the low half).
pub fn weight_pair(first: i32, second: i32) -> i32 {
    (first as u16 as u32 | (second as u16 as u32) << 16) as i32
}

/// Up to 32 samples at `p` (the lanes in `lanes`) as 16-bit words, the
/// lanes past them 0.
///
/// # Safety
/// The CPU must have AVX-512 F and BW; the lanes in `lanes` must be
/// readable.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
pub unsafe fn load_samples<S: Sample>(p: *const S, lanes: __mmask32) -> __m512i {
    // SAFETY: the caller's; masked-off lanes are not read.
    unsafe {
        if S::BYTES == 1 {
            _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(lanes, p.cast()))
        } else {
            _mm512_maskz_loadu_epi16(lanes, p.cast())
        }
    }
}

/// Sixteen samples at `p` as 16-bit words, with AVX2.
///
/// # Safety
/// The CPU must have AVX2; sixteen samples at `p` must be readable.
#[inline]
#[target_feature(enable = "avx2")]
pub unsafe fn load16_samples<S: Sample>(p: *const S) -> __m256i {
    // SAFETY: the caller's.
    unsafe {
        if S::BYTES == 1 {
            _mm256_cvtepu8_epi16(_mm_loadu_si128(p.cast()))
        } else {
            _mm256_loadu_si256(p.cast())
        }
    }
}
