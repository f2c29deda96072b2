//! The first decimation (scale 0 to 1) of 8-bit pictures, and of 9- to
//! 15-bit pictures whose samples are all within their bit depth, with AVX2
//! 16-bit multiply-adds: samples (below 2^15) and weights are signed 16-bit
//! as they are; the vertical results (16-bit) are held minus 32768 so that
//! they are too, and `Σc·v = Σc·v' + 2^31` (the taps sum to 2^16) restores
//! them. Sums wrap modulo 2^32 and their true values fit, so the results
//! are those of `decimate::decimate`. (A sample above its bit depth makes
//! libvmaf's 16-bit vertical results wrap; such pictures are left to the
//! other passes.)
//!
//! The horizontal pass keeps every other column, so each 32-bit lane pairs
//! two neighbouring taps of one output column.
//!
//! Pictures of up to 14 bits take AVX-512 BW passes where the CPU has
//! them: 32 columns a vector vertically, with the symmetric filter's
//! mirrored taps added first (two such samples sum below 2^15: 3
//! multiply-adds, not 5), and 16 output columns a vector horizontally.

#![cfg(target_arch = "x86_64")]

use super::tables::FILTERS;
use crate::feature::common::mirrored_filter::{is_symmetric, mirror, mirror_edges};
use crate::picture::{first_above, PlaneRef};
use std::arch::x86_64::*;

const FILTER: &[u16] = FILTERS[1];
const TAPS: usize = FILTER.len();
const HALF: usize = TAPS / 2;
const PAIRS: usize = TAPS.div_ceil(2);
/// Source columns per vertical block.
const BLOCK: usize = 16;

/// Scratch: one vertically filtered row per picture, offset by -32768,
/// `HALF` mirrored columns each side and a block of slack.
#[derive(Debug)]
pub struct Rows {
    padded: [Vec<i16>; 2],
}

impl Rows {
    pub fn new(width: usize) -> Self {
        Self {
            padded: std::array::from_fn(|_| vec![0; width + 2 * HALF + 2 * BLOCK]),
        }
    }
}

#[inline(always)]
fn weight(k: usize) -> i32 {
    if k < TAPS {
        i32::from(FILTER[k])
    } else {
        0
    }
}

/// Samples the vertical pass reads: 8-bit, or 9- to 15-bit within their
/// bit depth.
trait Sample: Copy + Into<u32> {
    /// Sixteen columns from `j` of rows `a` and `b` as (a, b) pairs of
    /// 16-bit values in the 32-bit lanes of two vectors.
    ///
    /// # Safety
    /// Inlined only into AVX2 code; both rows hold `j + BLOCK` samples.
    unsafe fn pairs(a: &[Self], b: &[Self], j: usize) -> [__m256i; 2];

    /// Puts the 16-bit results of `packs` over the two vectors of `pairs`
    /// in column order.
    ///
    /// # Safety
    /// As [`Sample::pairs`].
    unsafe fn in_order(packed: __m256i) -> __m256i;
}

impl Sample for u8 {
    #[inline(always)]
    unsafe fn pairs(a: &[u8], b: &[u8], j: usize) -> [__m256i; 2] {
        // SAFETY: the caller upholds this function's contract.
        unsafe {
            let a = _mm_loadu_si128(a[j..j + BLOCK].as_ptr().cast());
            let b = _mm_loadu_si128(b[j..j + BLOCK].as_ptr().cast());
            // Columns 0-7, then 8-15.
            [
                _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(a, b)),
                _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(a, b)),
            ]
        }
    }

    #[inline(always)]
    unsafe fn in_order(packed: __m256i) -> __m256i {
        // packs interleaves the 128-bit lanes; the permute restores order.
        // SAFETY: the caller upholds this function's contract.
        unsafe { _mm256_permute4x64_epi64(packed, 0xd8) }
    }
}

impl Sample for u16 {
    #[inline(always)]
    unsafe fn pairs(a: &[u16], b: &[u16], j: usize) -> [__m256i; 2] {
        // SAFETY: the caller upholds this function's contract.
        unsafe {
            let a = _mm256_loadu_si256(a[j..j + BLOCK].as_ptr().cast());
            let b = _mm256_loadu_si256(b[j..j + BLOCK].as_ptr().cast());
            // Columns 0-3 and 8-11, then 4-7 and 12-15.
            [_mm256_unpacklo_epi16(a, b), _mm256_unpackhi_epi16(a, b)]
        }
    }

    #[inline(always)]
    unsafe fn in_order(packed: __m256i) -> __m256i {
        // packs joins each 128-bit lane's two halves: already in order.
        packed
    }
}

/// Decimates both 8-bit pictures into `outputs` (`(w / 2) x (h / 2)`,
/// tightly packed).
///
/// # Safety
/// The CPU must support AVX2; `rows` must be made for a width of at least
/// the pictures'.
#[target_feature(enable = "avx2")]
pub unsafe fn decimate(rows: &mut Rows, pictures: [PlaneRef<'_, u8>; 2], outputs: [&mut [u16]; 2]) {
    // SAFETY: the caller upholds this function's contract.
    unsafe { decimate_bits(rows, pictures, 8, outputs) }
}

/// Samples the AVX-512 vertical pass reads, 32 at a time as 16-bit words.
trait WideSample: Sample {
    /// Samples `j..j + 32` of `row` as words.
    ///
    /// # Safety
    /// Inlined only into AVX-512 BW code.
    unsafe fn words(row: &[Self], j: usize) -> __m512i;
}

impl WideSample for u8 {
    #[inline(always)]
    unsafe fn words(row: &[u8], j: usize) -> __m512i {
        // SAFETY: the caller's; the slice checks the bounds.
        unsafe { _mm512_cvtepu8_epi16(_mm256_loadu_si256(row[j..j + 32].as_ptr().cast())) }
    }
}

impl WideSample for u16 {
    #[inline(always)]
    unsafe fn words(row: &[u16], j: usize) -> __m512i {
        // SAFETY: the caller's; the slice checks the bounds.
        unsafe { _mm512_loadu_si512(row[j..j + 32].as_ptr().cast()) }
    }
}

/// The vertical pass of samples of `bits` (at most [`MAX_FOLDED_BITS`]),
/// 32 columns a vector: mirrored taps `k` and `8 - k` added in 16 bits,
/// then paired for the multiply-adds as (0, 1), (2, 3) and (centre, none).
#[target_feature(enable = "avx2,avx512f,avx512bw")]
unsafe fn vertical_avx512<S: WideSample>(
    taps: &[&[S]; TAPS],
    padded: &mut [i16],
    w: usize,
    bits: u32,
) {
    const { assert!(TAPS == 9 && is_symmetric(FILTER)) };
    assert!(bits <= MAX_FOLDED_BITS);
    const WIDE: usize = 32;
    let pair = |a: usize, b: usize| _mm512_set1_epi32(weight(a) | (weight(b) << 16));
    let (c01, c23, centre) = (pair(0, 1), pair(2, 3), pair(HALF, TAPS));
    // (Σc·x + 2^(bits-1)) >> bits, minus 32768: the bias folded into the
    // rounding term (Σc·x < 2^(bits+16), so within i32), and the
    // arithmetic shift gives it at once.
    let round = _mm512_set1_epi32((1 << (bits - 1)) - (32768 << bits));
    let shift = _mm_cvtsi32_si128(bits as i32);
    let mut j = 0;
    while j + WIDE <= w {
        // SAFETY: AVX-512 BW, as this function; every row holds w samples.
        let words = |k: usize| unsafe { S::words(taps[k], j) };
        let folded: [__m512i; 4] =
            std::array::from_fn(|k| _mm512_add_epi16(words(k), words(TAPS - 1 - k)));
        let middle = words(HALF);
        let zero = _mm512_setzero_si512();
        // Each 128-bit lane's columns 0-3 (low) and 4-7 (high), as pairs.
        let sum = |unpack: fn(__m512i, __m512i) -> __m512i| {
            let a = _mm512_madd_epi16(unpack(folded[0], folded[1]), c01);
            let b = _mm512_madd_epi16(unpack(folded[2], folded[3]), c23);
            let c = _mm512_madd_epi16(unpack(middle, zero), centre);
            _mm512_sra_epi32(
                _mm512_add_epi32(_mm512_add_epi32(a, b), _mm512_add_epi32(c, round)),
                shift,
            )
        };
        let (low, high) = (
            sum(|a, b| _mm512_unpacklo_epi16(a, b)),
            sum(|a, b| _mm512_unpackhi_epi16(a, b)),
        );
        // packs joins each 128-bit lane's low and high columns in order;
        // every value is in the i16 range.
        let dst = &mut padded[HALF + j..HALF + j + WIDE];
        // SAFETY: 32 words, bounds checked by the slice.
        unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast(), _mm512_packs_epi32(low, high)) };
        j += WIDE;
    }
    vertical_tail(taps, padded, j, w, bits);
}

/// The horizontal pass, 16 output columns a vector.
#[target_feature(enable = "avx2,avx512f,avx512bw")]
unsafe fn horizontal_avx512(padded: &[i16], out: &mut [u16]) {
    const WIDE: usize = 16;
    let out_w = out.len();
    let weights: [__m512i; PAIRS] =
        std::array::from_fn(|p| _mm512_set1_epi32(weight(2 * p) | (weight(2 * p + 1) << 16)));
    let bias = _mm512_set1_epi32(i32::MIN.wrapping_add(1 << 15));
    let mut o = 0;
    // Output column o + m reads padded columns 2(o + m) + k.
    while o + WIDE <= out_w {
        let mut acc = _mm512_setzero_si512();
        for (p, &c) in weights.iter().enumerate() {
            let src = &padded[2 * o + 2 * p..2 * o + 2 * p + 2 * WIDE];
            // SAFETY: 32 words, bounds checked by the slice.
            let v = unsafe { _mm512_loadu_si512(src.as_ptr().cast()) };
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(v, c));
        }
        // Values fit 16 bits: the truncating narrow is exact.
        let v = _mm512_cvtepi32_epi16(_mm512_srli_epi32::<16>(_mm512_add_epi32(acc, bias)));
        let dst = &mut out[o..o + WIDE];
        // SAFETY: 16 words, bounds checked by the slice.
        unsafe { _mm256_storeu_si256(dst.as_mut_ptr().cast(), v) };
        o += WIDE;
    }
    horizontal_tail(padded, out, o);
}

/// Decimates both `bits`-bit pictures into `outputs` as [`decimate`]
/// does, or returns false, writing nothing, when a sample is `2^bits` or
/// more.
///
/// # Safety
/// As [`decimate`]; `bits` is 9 to 15.
#[target_feature(enable = "avx2")]
pub unsafe fn decimate_u16(
    rows: &mut Rows,
    pictures: [PlaneRef<'_, u16>; 2],
    bits: u32,
    outputs: [&mut [u16]; 2],
) -> bool {
    assert!((9..=15).contains(&bits), "{bits}-bit samples");
    let limit = ((1u32 << bits) - 1) as u16;
    if pictures.iter().any(|p| first_above(p, limit).is_some()) {
        return false;
    }
    // SAFETY: the caller upholds this function's contract.
    unsafe { decimate_bits(rows, pictures, bits, outputs) };
    true
}

/// The deepest samples whose mirrored pairs the AVX-512 vertical pass adds
/// in 16 bits (two 14-bit samples sum below 2^15).
const MAX_FOLDED_BITS: u32 = 14;

/// One instruction set's passes over an output row.
struct Passes<S> {
    vertical: unsafe fn(&[&[S]; TAPS], &mut [i16], usize, u32),
    horizontal: unsafe fn(&[i16], &mut [u16]),
}

/// Decimates both pictures of `bits`-bit samples, all within their depth:
/// with the AVX-512 passes where the CPU has them and the samples fold (at
/// most [`MAX_FOLDED_BITS`]), else with the AVX2 passes.
#[target_feature(enable = "avx2")]
unsafe fn decimate_bits<S: WideSample>(
    rows: &mut Rows,
    pictures: [PlaneRef<'_, S>; 2],
    bits: u32,
    outputs: [&mut [u16]; 2],
) {
    let passes: Passes<S> = if bits <= MAX_FOLDED_BITS && crate::cpu::has_avx512() {
        Passes {
            vertical: vertical_avx512::<S>,
            horizontal: horizontal_avx512,
        }
    } else {
        Passes {
            vertical: vertical::<S>,
            horizontal,
        }
    };
    let w = pictures[0].width;
    each_output_row(rows, pictures, outputs, |taps, padded, out| {
        // SAFETY: the CPU has the passes' instruction set (chosen above;
        // AVX2 is the caller's contract); rows sized by `each_output_row`.
        unsafe {
            (passes.vertical)(taps, padded, w, bits);
            mirror_edges(&mut padded[..w + 2 * HALF], HALF);
            (passes.horizontal)(padded, out);
        }
    });
}

/// Runs `row` on each output row of both pictures: the source rows of its
/// taps (mirrored at the edges), the padded row to filter them into, and
/// the output row.
#[inline(always)]
fn each_output_row<S: Sample>(
    rows: &mut Rows,
    pictures: [PlaneRef<'_, S>; 2],
    outputs: [&mut [u16]; 2],
    mut row: impl FnMut(&[&[S]; TAPS], &mut [i16], &mut [u16]),
) {
    let (w, h) = (pictures[0].width, pictures[0].height);
    let out_w = w / 2;
    assert!(rows.padded[0].len() >= w + 2 * HALF + 2 * BLOCK);
    for (picture, (padded, out)) in pictures.iter().zip(rows.padded.iter_mut().zip(outputs)) {
        for i in 0..h / 2 {
            let taps: [&[S]; TAPS] = std::array::from_fn(|k| {
                picture.row(mirror((2 * i + k) as isize - HALF as isize, h))
            });
            row(&taps, padded, &mut out[i * out_w..(i + 1) * out_w]);
        }
    }
}

/// The vertical pass of `bits`-bit samples within their bit depth.
#[target_feature(enable = "avx2")]
unsafe fn vertical<S: Sample>(taps: &[&[S]; TAPS], padded: &mut [i16], w: usize, bits: u32) {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        let shift = _mm_cvtsi32_si128(bits as i32);
        let round = _mm256_set1_epi32(1 << (bits - 1));
        let mut j = 0;
        while j + BLOCK <= w {
            let mut acc = [_mm256_setzero_si256(); 2];
            for p in 0..PAIRS {
                let (k0, k1) = (2 * p, 2 * p + 1);
                let c = _mm256_set1_epi32(weight(k0) | (weight(k1) << 16));
                // The missing last tap (weight 0) reads the previous row again.
                let pairs = S::pairs(taps[k0], taps[k1.min(TAPS - 1)], j);
                for (a, pair) in acc.iter_mut().zip(pairs) {
                    *a = _mm256_add_epi32(*a, _mm256_madd_epi16(pair, c));
                }
            }
            // (Σc·x + 2^(bits-1)) >> bits, minus 32768.
            let mean = |s| {
                let v = _mm256_srl_epi32(_mm256_add_epi32(s, round), shift);
                _mm256_sub_epi32(v, _mm256_set1_epi32(32768))
            };
            let packed = S::in_order(_mm256_packs_epi32(mean(acc[0]), mean(acc[1])));
            let dst = &mut padded[HALF + j..HALF + j + BLOCK];
            _mm256_storeu_si256(dst.as_mut_ptr().cast(), packed);
            j += BLOCK;
        }
        vertical_tail(taps, padded, j, w, bits);
    }
}

/// The vertical pass of columns `from..w`, one at a time.
fn vertical_tail<S: Sample>(
    taps: &[&[S]; TAPS],
    padded: &mut [i16],
    from: usize,
    w: usize,
    bits: u32,
) {
    for j in from..w {
        let sum: u32 = (0..TAPS)
            .map(|k| FILTER[k] as u32 * taps[k][j].into())
            .sum();
        padded[HALF + j] = (((sum + (1 << (bits - 1))) >> bits) as u16 ^ 0x8000) as i16;
    }
}

#[target_feature(enable = "avx2")]
unsafe fn horizontal(padded: &[i16], out: &mut [u16]) {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        let out_w = out.len();
        let mut o = 0;
        // Output column o + m reads padded columns 2(o + m) + k.
        while o + 8 <= out_w {
            let mut acc = _mm256_setzero_si256();
            for p in 0..PAIRS {
                let k = 2 * p;
                let c = _mm256_set1_epi32(weight(k) | (weight(k + 1) << 16));
                let src = &padded[2 * o + k..2 * o + k + 16];
                let v = _mm256_loadu_si256(src.as_ptr().cast());
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(v, c));
            }
            let bias = _mm256_set1_epi32(i32::MIN.wrapping_add(1 << 15));
            let v = _mm256_srli_epi32(_mm256_add_epi32(acc, bias), 16);
            // Values fit 16 bits: packus keeps them; the permute restores order.
            let packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(v, v), 0xd8);
            let dst = &mut out[o..o + 8];
            _mm_storeu_si128(dst.as_mut_ptr().cast(), _mm256_castsi256_si128(packed));
            o += 8;
        }
        horizontal_tail(padded, out, o);
    }
}

/// The horizontal pass of output columns from `from`, one at a time.
fn horizontal_tail(padded: &[i16], out: &mut [u16], from: usize) {
    for o in from..out.len() {
        let sum = (0..TAPS).fold(0u32, |s, k| {
            let v = u32::from(padded[2 * o + k] as u16 ^ 0x8000);
            s.wrapping_add(u32::from(FILTER[k]) * v)
        });
        out[o] = (sum.wrapping_add(1 << 15) >> 16) as u16;
    }
}
