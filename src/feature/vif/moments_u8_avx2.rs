//! The moment pass at scale 0 of 8-bit pictures, with AVX2 16-bit
//! multiply-adds (`vpmaddwd`), as libvmaf's own x86 code does it.
//!
//! `vpmaddwd` multiplies signed 16-bit pairs and adds each pair into 32
//! bits. To keep every operand signed and 16 bits wide, values are held
//! offset by their range's midpoint (samples minus 128, 16-bit values minus
//! 32768, i.e. with the top bit flipped), and the offsets are added back
//! with exact identities that hold because the filter's taps sum to 2^16:
//!
//! - `Σc·x = Σc·x' + 2^23` and `Σc·x² = Σc·x'² + 256·Σc·x' + 2^30`, and
//!   `Σc·xy = Σc·x'y' + 128·(Σc·x' + Σc·y') + 2^30`, with `x' = x - 128`;
//! - `Σc·v = Σc·v' + 2^31` for 16-bit `v` and `v' = v - 32768`.
//!
//! All sums wrap modulo 2^32 and their true values fit 32 bits, so the
//! results are exact. The 32-bit second moments of the vertical pass are
//! split into 16-bit halves for the horizontal pass; the horizontal result
//! `(Σc·(hi·2^16 + lo) + 2^15) >> 16` is `Σc·hi + ((Σc·lo + 2^15) >> 16)`.
//!
//! The horizontal pass computes even and odd output columns in separate
//! vectors (each 32-bit lane pairs two neighbouring taps of one column);
//! the statistic is summed over pixels, so their order does not matter.

#![cfg(target_arch = "x86_64")]

use super::log2::Log2Table;
use super::stats::{MomentBlock, ScaleSums};
use super::stats_avx2::VecSums;
use super::stats_avx512::VecSums16;
use super::tables::FILTERS;
use crate::feature::common::mirrored_filter::{is_symmetric, mirror, mirror_edges};
use crate::picture::PlaneRef;
use std::arch::x86_64::*;

/// Taps of the scale-0 filter.
pub(super) const TAPS: usize = FILTERS[0].len();
pub(super) const HALF: usize = TAPS / 2;
/// Tap pairs; the last pair's second tap has weight 0.
pub(super) const PAIRS: usize = TAPS.div_ceil(2);
/// The weights of taps `2p` and `2p + 1` in the low and high halves of one
/// 32-bit lane, as the multiply-adds pair them (the 18th weight is 0).
pub(super) fn tap_pair(p: usize) -> i32 {
    filter_pair(FILTERS[0], p)
}

/// The weights of taps `2p` and `2p + 1` of `filter` (every weight below
/// 2^15), as [`tap_pair`] pairs them; taps past the end weigh 0.
pub(super) fn filter_pair(filter: &[u16], p: usize) -> i32 {
    let weight = |k: usize| filter.get(k).map_or(0, |&c| i32::from(c));
    weight(2 * p) | (weight(2 * p + 1) << 16)
}

/// Pixels per vector block.
const BLOCK: usize = 16;

/// Vertically filtered rows of the eight 16-bit quantities, offset by
/// -32768, `HALF` mirrored columns each side and a block of slack.
#[derive(Debug)]
pub struct Rows16 {
    /// mu1, mu2, then the high and low halves of xx, yy, xy.
    rows: [Vec<i16>; 8],
}

const MU1: usize = 0;
const MU2: usize = 1;
const XX: usize = 2;
const YY: usize = 4;
const XY: usize = 6;

impl Rows16 {
    pub fn new(width: usize) -> Self {
        Self {
            rows: std::array::from_fn(|_| vec![0; width + 2 * HALF + BLOCK]),
        }
    }

    /// True when the rows are long enough for pictures `w` wide.
    pub(super) fn fits(&self, w: usize) -> bool {
        self.rows[0].len() >= w + 2 * HALF + BLOCK
    }

    /// The rows, for a vertical pass written elsewhere (mu1, mu2, then the
    /// high and low halves of xx, yy, xy; data from column `HALF`).
    pub(super) fn rows_mut(&mut self) -> &mut [Vec<i16>; 8] {
        &mut self.rows
    }
}

/// Flips the top bit: a 16-bit value to its offset signed form and back.
#[inline(always)]
fn offset(v: u32) -> i16 {
    (v as u16 ^ 0x8000) as i16
}

#[inline(always)]
fn unoffset(v: i16) -> u32 {
    u32::from(v as u16 ^ 0x8000)
}

/// True when the CPU runs the AVX-512 pass: VNNI's multiply-adds and
/// VBMI's byte permutes (Ice Lake and later, Zen 4; Cascade Lake, with
/// VNNI but not VBMI, takes the AVX2 pass).
pub fn has_vnni() -> bool {
    static VBMI: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    crate::cpu::has_avx512_vnni()
        && *VBMI.get_or_init(|| std::arch::is_x86_feature_detected!("avx512vbmi"))
}

/// Sums the VIF statistic over scale 0 of an 8-bit pair.
///
/// # Safety
/// The CPU must support AVX2; `rows` must be made for a width of at least
/// `reference.width`.
pub unsafe fn accumulate(
    rows: &mut Rows16,
    reference: PlaneRef<'_, u8>,
    distorted: PlaneRef<'_, u8>,
    log2: &Log2Table,
    gain_limit: f64,
) -> ScaleSums {
    // SAFETY: the CPU feature was detected before this path was chosen.
    unsafe { avx2::accumulate(rows, reference, distorted, log2, gain_limit) }
}

/// The horizontal pass of rows made by a vertical pass (mirrored to `w +
/// 2 * HALF` columns), each pixel into `sums`, with AVX-512 VNNI.
///
/// # Safety
/// The CPU must support [`has_vnni`]; `rows` made for a width of at least
/// `w`.
pub(super) unsafe fn horizontal_vnni(
    rows: &Rows16,
    w: usize,
    log2: &Log2Table,
    gain_limit: f64,
    sums: &mut ScaleSums,
) {
    assert!(rows.rows[0].len() >= w + 2 * HALF + BLOCK);
    // SAFETY: the caller upholds this function's contract.
    unsafe {
        vnni::horizontal::<TAPS>(
            rows,
            FILTERS[0].try_into().unwrap(),
            w,
            log2,
            gain_limit,
            sums,
        )
    }
}

/// The horizontal pass of rows made by a vertical pass with `filter` (of
/// `N` taps, every weight below 2^15; rows mirrored to `N / 2` columns
/// each side of the `w` from column `HALF`), each pixel into `sums`: with
/// AVX-512 VNNI (and its sixteen-lane statistic) where the CPU has it,
/// otherwise with AVX2.
///
/// # Safety
/// The CPU must support AVX2; `rows` made for a width of at least `w`.
pub(super) unsafe fn horizontal_best<const N: usize>(
    rows: &Rows16,
    filter: &[u16; N],
    w: usize,
    log2: &Log2Table,
    gain_limit: f64,
    sums: &mut ScaleSums,
) {
    assert!(rows.rows[0].len() >= w + 2 * HALF + BLOCK);
    // SAFETY: the caller upholds this function's contract.
    unsafe {
        if has_vnni() {
            vnni::horizontal::<N>(rows, filter, w, log2, gain_limit, sums)
        } else {
            avx2::horizontal::<N>(rows, filter, w, log2, gain_limit, sums)
        }
    }
}

/// [`accumulate`] with AVX-512 VNNI's fused multiply-adds.
///
/// # Safety
/// As [`accumulate`], and the CPU must support [`has_vnni`].
pub unsafe fn accumulate_vnni(
    rows: &mut Rows16,
    reference: PlaneRef<'_, u8>,
    distorted: PlaneRef<'_, u8>,
    log2: &Log2Table,
    gain_limit: f64,
) -> ScaleSums {
    // SAFETY: the CPU feature was detected before this path was chosen.
    unsafe { vnni::accumulate(rows, reference, distorted, log2, gain_limit) }
}

/// The vertical pass of one row into `rows` (from column `HALF`) with
/// AVX2: each pair of rows interleaved by byte unpacks, sixteen columns
/// as two vectors of eight. Mirrored rows are folded as in
/// [`vertical_avx512`] (whose note gives the offsets that keep the folded
/// terms in 16 bits): 5 multiply-adds per quantity, not 9.
#[target_feature(enable = "avx2")]
unsafe fn vertical_avx2(
    rows: &mut Rows16,
    ref_rows: &[&[u8]; TAPS],
    dis_rows: &[&[u8]; TAPS],
    w: usize,
) {
    const { assert!(is_symmetric(FILTERS[0]) && TAPS == 17) };
    assert!(ref_rows.iter().chain(dis_rows).all(|r| r.len() >= w));
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        let flip = _mm_set1_epi8(-128);
        const FOLDED: usize = HALF / 2;
        let weights: [__m256i; FOLDED + 1] = std::array::from_fn(|p| {
            let centre = i32::from(FILTERS[0][HALF]);
            _mm256_set1_epi32(if p < FOLDED { tap_pair(p) } else { centre })
        });
        let square_offset = _mm256_set1_epi16(i16::MIN);
        let product_offset = _mm256_set1_epi16(256);
        let quarter = _mm256_set1_epi16(1 << 14);
        let mut j = 0;
        while j + BLOCK <= w {
            // Lane m of half h: (x[a][j + 8h + m] - 128, x[b][j + 8h + m] - 128).
            let pair = |rows: &[&[u8]; TAPS], a: usize, b: usize| {
                let ra = _mm_xor_si128(_mm_loadu_si128(rows[a].as_ptr().add(j).cast()), flip);
                let rb = _mm_xor_si128(_mm_loadu_si128(rows[b].as_ptr().add(j).cast()), flip);
                [
                    _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(ra, rb)),
                    _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(ra, rb)),
                ]
            };
            let zero = _mm256_setzero_si256();
            let mut acc = [[zero; 2]; 5];
            for (p, &c) in weights[..FOLDED].iter().enumerate() {
                let (k, m) = (2 * p, TAPS - 1 - 2 * p);
                let (xa, xb) = (pair(ref_rows, k, k + 1), pair(ref_rows, m, m - 1));
                let (ya, yb) = (pair(dis_rows, k, k + 1), pair(dis_rows, m, m - 1));
                for h in 0..2 {
                    let square = |a, b| {
                        let s =
                            _mm256_add_epi16(_mm256_mullo_epi16(a, a), _mm256_mullo_epi16(b, b));
                        _mm256_xor_si256(s, square_offset)
                    };
                    let product = _mm256_sub_epi16(
                        _mm256_add_epi16(
                            _mm256_mullo_epi16(xa[h], ya[h]),
                            _mm256_mullo_epi16(xb[h], yb[h]),
                        ),
                        product_offset,
                    );
                    let terms = [
                        _mm256_add_epi16(xa[h], xb[h]),
                        _mm256_add_epi16(ya[h], yb[h]),
                        square(xa[h], xb[h]),
                        square(ya[h], yb[h]),
                        product,
                    ];
                    for (a, t) in acc.iter_mut().zip(terms) {
                        a[h] = _mm256_add_epi32(a[h], _mm256_madd_epi16(t, c));
                    }
                }
            }
            let c = weights[FOLDED];
            let (x, y) = (pair(ref_rows, HALF, HALF), pair(dis_rows, HALF, HALF));
            for h in 0..2 {
                let sq = |v| _mm256_sub_epi16(_mm256_mullo_epi16(v, v), quarter);
                let xy = _mm256_sub_epi16(_mm256_mullo_epi16(x[h], y[h]), _mm256_set1_epi16(128));
                let terms = [x[h], y[h], sq(x[h]), sq(y[h]), xy];
                for (a, t) in acc.iter_mut().zip(terms) {
                    a[h] = _mm256_add_epi32(a[h], _mm256_madd_epi16(t, c));
                }
            }
            let [s1, s2, sxx, syy, sxy] = acc;
            let mut out = [[zero; 2]; 8];
            let bias = _mm256_set1_epi32(32768);
            for h in 0..2 {
                let (x, y) = (s1[h], s2[h]);
                // (Σc·x + 128) >> 8 with Σc·x = x + 2^23, offset by -32768.
                let mean = |s| {
                    let v = _mm256_srli_epi32::<8>(_mm256_add_epi32(
                        s,
                        _mm256_set1_epi32((1 << 23) + 128),
                    ));
                    _mm256_sub_epi32(v, bias)
                };
                out[MU1][h] = mean(x);
                out[MU2][h] = mean(y);
                // Σc·x² = Σc·x'² + 256·Σc·x' + 2^30, with Σc·x'² = sxx + 2^30.
                let base = _mm256_set1_epi32(i32::MIN);
                let xx =
                    _mm256_add_epi32(_mm256_add_epi32(sxx[h], _mm256_slli_epi32::<8>(x)), base);
                let yy =
                    _mm256_add_epi32(_mm256_add_epi32(syy[h], _mm256_slli_epi32::<8>(y)), base);
                // Σc·xy = Σc·x'y' + 128·(Σc·x' + Σc·y') + 2^30, Σc·x'y' = sxy + 2^23.
                let xy = _mm256_add_epi32(
                    _mm256_add_epi32(sxy[h], _mm256_slli_epi32::<7>(_mm256_add_epi32(x, y))),
                    _mm256_set1_epi32((1 << 30) + (1 << 23)),
                );
                for (q, v) in [(XX, xx), (YY, yy), (XY, xy)] {
                    out[q][h] = _mm256_sub_epi32(_mm256_srli_epi32::<16>(v), bias);
                    out[q + 1][h] =
                        _mm256_sub_epi32(_mm256_and_si256(v, _mm256_set1_epi32(0xffff)), bias);
                }
            }
            for (row, [lo, hi]) in rows.rows.iter_mut().zip(out) {
                // packs interleaves 128-bit lanes; the permute restores order.
                let packed = _mm256_permute4x64_epi64(_mm256_packs_epi32(lo, hi), 0xd8);
                let dst = &mut row[HALF + j..HALF + j + BLOCK];
                _mm256_storeu_si256(dst.as_mut_ptr().cast(), packed);
            }
            j += BLOCK;
        }
        vertical_tail(rows, ref_rows, dis_rows, j, w);
    }
}

/// The vertical pass of one row into `rows` (from column `HALF`) with
/// AVX-512: sixteen columns per vector, each pair of rows interleaved
/// into 16-bit halves of one 32-bit lane by one byte permute.
///
/// The filter is symmetric, so rows `k` and `16 - k` share a weight and
/// their terms are added before the multiply-adds (5 per quantity, not
/// 9). Each folded term is kept in 16 bits by offsets whose sums over the
/// taps (which sum to 2^16) are added back at the end:
///
/// - `x' + x''` of two offset samples lies in [-256, 254];
/// - `x'^2 - 2^14` lies in [-2^14, 0], so two of them in [-2^15, 0]:
///   `Σc·x'^2 = Σc·(x'^2 - 2^14) + 2^30`;
/// - `x'y' - 128` lies in [-2^14, 16256], two of them in [-2^15, 32512]:
///   `Σc·x'y' = Σc·(x'y' - 128) + 2^23`.
///
/// The 16-bit sums wrap while they are formed, but every true value is
/// in range, so the wrapped words are the exact terms.
///
/// # Safety
/// The CPU must support [`has_vnni`]; `rows` made for a width of at least
/// `w`, every row at least `w` samples long.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vnni")]
unsafe fn vertical_avx512(
    rows: &mut Rows16,
    ref_rows: &[&[u8]; TAPS],
    dis_rows: &[&[u8]; TAPS],
    w: usize,
) {
    const { assert!(is_symmetric(FILTERS[0]) && TAPS == 17) };
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        const WIDE: usize = 16;
        // Byte 4m of the result: byte m of the first row; byte 4m + 2:
        // byte m of the second (index 64 + m); the others zeroed by the
        // mask, so each 16-bit half holds one sample.
        let mut index = [0u8; 64];
        for m in 0..WIDE {
            index[4 * m] = m as u8;
            index[4 * m + 2] = (64 + m) as u8;
        }
        let index = _mm512_loadu_si512(index.as_ptr().cast());
        let keep: __mmask64 = 0x5555_5555_5555_5555;
        let mid = _mm512_set1_epi16(128);
        // Folded pairs: taps (k, k + 1) with their mirrors (16 - k, 15 - k)
        // for k = 0, 2, 4, 6; then the centre tap 8 alone (its partner
        // weight 0, read from row 8 again and unfolded).
        const FOLDED: usize = HALF / 2;
        let weights: [__m512i; FOLDED + 1] = std::array::from_fn(|p| {
            let centre = i32::from(FILTERS[0][HALF]);
            _mm512_set1_epi32(if p < FOLDED { tap_pair(p) } else { centre })
        });
        let ref_ptrs: [*const u8; TAPS] = std::array::from_fn(|k| {
            assert!(ref_rows[k].len() >= w && dis_rows[k].len() >= w);
            ref_rows[k].as_ptr()
        });
        let dis_ptrs: [*const u8; TAPS] = std::array::from_fn(|k| dis_rows[k].as_ptr());
        assert!(rows.rows[0].len() >= w + 2 * HALF);
        let out_ptrs = rows.rows.each_mut().map(|row| row.as_mut_ptr().add(HALF));
        let square_offset = _mm512_set1_epi16(i16::MIN);
        let product_offset = _mm512_set1_epi16(256);
        let mut j = 0;
        while j + WIDE <= w {
            let zero = _mm512_setzero_si512();
            let mut acc = [zero; 5];
            // Lane m: (x[a][j + m] - 128, x[b][j + m] - 128).
            let pair = |ptrs: &[*const u8; TAPS], a: usize, b: usize| {
                let lo = _mm_loadu_si128(ptrs[a].add(j).cast());
                let hi = _mm_loadu_si128(ptrs[b].add(j).cast());
                let both = _mm512_maskz_permutex2var_epi8(
                    keep,
                    _mm512_castsi128_si512(lo),
                    index,
                    _mm512_castsi128_si512(hi),
                );
                _mm512_sub_epi16(both, mid)
            };
            for (p, &c) in weights[..FOLDED].iter().enumerate() {
                let (k, m) = (2 * p, TAPS - 1 - 2 * p);
                let (xa, xb) = (pair(&ref_ptrs, k, k + 1), pair(&ref_ptrs, m, m - 1));
                let (ya, yb) = (pair(&dis_ptrs, k, k + 1), pair(&dis_ptrs, m, m - 1));
                let square = |a, b| {
                    let s = _mm512_add_epi16(_mm512_mullo_epi16(a, a), _mm512_mullo_epi16(b, b));
                    _mm512_xor_si512(s, square_offset)
                };
                let product = _mm512_sub_epi16(
                    _mm512_add_epi16(_mm512_mullo_epi16(xa, ya), _mm512_mullo_epi16(xb, yb)),
                    product_offset,
                );
                acc[0] = _mm512_dpwssd_epi32(acc[0], _mm512_add_epi16(xa, xb), c);
                acc[1] = _mm512_dpwssd_epi32(acc[1], _mm512_add_epi16(ya, yb), c);
                acc[2] = _mm512_dpwssd_epi32(acc[2], square(xa, xb), c);
                acc[3] = _mm512_dpwssd_epi32(acc[3], square(ya, yb), c);
                acc[4] = _mm512_dpwssd_epi32(acc[4], product, c);
            }
            {
                let c = weights[FOLDED];
                let (x, y) = (pair(&ref_ptrs, HALF, HALF), pair(&dis_ptrs, HALF, HALF));
                let quarter = _mm512_set1_epi16(1 << 14);
                acc[0] = _mm512_dpwssd_epi32(acc[0], x, c);
                acc[1] = _mm512_dpwssd_epi32(acc[1], y, c);
                let sq = |v| _mm512_sub_epi16(_mm512_mullo_epi16(v, v), quarter);
                acc[2] = _mm512_dpwssd_epi32(acc[2], sq(x), c);
                acc[3] = _mm512_dpwssd_epi32(acc[3], sq(y), c);
                let xy = _mm512_sub_epi16(_mm512_mullo_epi16(x, y), _mm512_set1_epi16(128));
                acc[4] = _mm512_dpwssd_epi32(acc[4], xy, c);
            }
            let [x, y, sxx, syy, sxy] = acc;
            let bias = _mm512_set1_epi32(32768);
            // (Σc·x + 128) >> 8 with Σc·x = x + 2^23, offset by -32768.
            let mean = |s| {
                let v =
                    _mm512_srli_epi32::<8>(_mm512_add_epi32(s, _mm512_set1_epi32((1 << 23) + 128)));
                _mm512_sub_epi32(v, bias)
            };
            // Σc·x² = Σc·x'² + 256·Σc·x' + 2^30, with Σc·x'² = sxx + 2^30.
            let base = _mm512_set1_epi32(i32::MIN);
            let xx = _mm512_add_epi32(_mm512_add_epi32(sxx, _mm512_slli_epi32::<8>(x)), base);
            let yy = _mm512_add_epi32(_mm512_add_epi32(syy, _mm512_slli_epi32::<8>(y)), base);
            // Σc·xy = Σc·x'y' + 128·(Σc·x' + Σc·y') + 2^30, Σc·x'y' = sxy + 2^23.
            let xy = _mm512_add_epi32(
                _mm512_add_epi32(sxy, _mm512_slli_epi32::<7>(_mm512_add_epi32(x, y))),
                _mm512_set1_epi32((1 << 30) + (1 << 23)),
            );
            let high = |v| _mm512_sub_epi32(_mm512_srli_epi32::<16>(v), bias);
            let low = |v| _mm512_sub_epi32(_mm512_and_si512(v, _mm512_set1_epi32(0xffff)), bias);
            let out = [
                mean(x),
                mean(y),
                high(xx),
                low(xx),
                high(yy),
                low(yy),
                high(xy),
                low(xy),
            ];
            for (dst, v) in out_ptrs.iter().zip(out) {
                // Every value is in the i16 range: the truncating narrow is exact.
                _mm256_storeu_si256(dst.add(j).cast(), _mm512_cvtepi32_epi16(v));
            }
            j += WIDE;
        }
        vertical_tail(rows, ref_rows, dis_rows, j, w);
    }
}

/// The vertical pass of columns `from..w` of one row, one at a time.
fn vertical_tail(
    rows: &mut Rows16,
    ref_rows: &[&[u8]; TAPS],
    dis_rows: &[&[u8]; TAPS],
    from: usize,
    w: usize,
) {
    let filter = FILTERS[0];
    for j in from..w {
        let (mut m1, mut m2, mut xx, mut yy, mut xy) = (0u32, 0u32, 0u32, 0u32, 0u32);
        for k in 0..TAPS {
            let c = u32::from(filter[k]);
            let (x, y) = (u32::from(ref_rows[k][j]), u32::from(dis_rows[k][j]));
            m1 += c * x;
            m2 += c * y;
            xx = xx.wrapping_add(c * x * x);
            yy = yy.wrapping_add(c * y * y);
            xy = xy.wrapping_add(c * x * y);
        }
        let at = HALF + j;
        rows.rows[MU1][at] = offset((m1 + 128) >> 8);
        rows.rows[MU2][at] = offset((m2 + 128) >> 8);
        for (q, v) in [(XX, xx), (YY, yy), (XY, xy)] {
            rows.rows[q][at] = offset(v >> 16);
            rows.rows[q + 1][at] = offset(v & 0xffff);
        }
    }
}

/// No wider blocks (AVX2): the horizontal pass starts at column 0.
#[inline(always)]
fn no_wide_blocks(_: &Rows16, _: usize, _: &mut VecSums) -> usize {
    0
}

/// The horizontal pass over 32-column blocks with AVX-512 (sixteen even
/// and sixteen odd columns per vector pair), each pixel into `sums`;
/// returns the first column left for narrower blocks.
///
/// # Safety
/// The CPU must support [`has_vnni`]; every row at least `w + 2 * HALF +
/// BLOCK` long, mirrored for `w`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn horizontal_avx512(rows: &Rows16, w: usize, sums: &mut VecSums16) -> usize {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        const WIDE: usize = 32;
        let pair_weights: [__m512i; PAIRS] =
            std::array::from_fn(|p| _mm512_set1_epi32(tap_pair(p)));
        assert!(rows
            .rows
            .iter()
            .all(|row| row.len() >= w + 2 * HALF + BLOCK));
        let starts = rows.rows.each_ref().map(|row| row.as_ptr());
        let mut j = 0;
        while j + WIDE <= w {
            let zero = _mm512_setzero_si512();
            // [quantity][even, odd columns]; lane m of the even vector:
            // taps k, k+1 of column j + 2m.
            let mut acc = [[zero; 2]; 8];
            for (p, &c) in pair_weights.iter().enumerate() {
                let k = j + 2 * p;
                for (a, &start) in acc.iter_mut().zip(&starts) {
                    // SAFETY: the reads end before column j + 2 * PAIRS + WIDE
                    // <= w + 2 * HALF + BLOCK (asserted above).
                    let src = start.add(k);
                    a[0] = _mm512_dpwssd_epi32(a[0], _mm512_loadu_si512(src.cast()), c);
                    a[1] = _mm512_dpwssd_epi32(a[1], _mm512_loadu_si512(src.add(1).cast()), c);
                }
            }
            let top = _mm512_set1_epi32(i32::MIN);
            let round = _mm512_set1_epi32(1 << 15);
            // Even columns, then odd (one closure call each, not a loop
            // over indices of `acc`).
            let mut add_columns = |parity: usize| {
                let sum = |q: usize| _mm512_add_epi32(acc[q][parity], top);
                let moment = |q: usize| {
                    let low = _mm512_srli_epi32::<16>(_mm512_add_epi32(sum(q + 1), round));
                    _mm512_add_epi32(sum(q), low)
                };
                sums.add(sum(MU1), sum(MU2), moment(XX), moment(YY), moment(XY));
            };
            add_columns(0);
            add_columns(1);
            j += WIDE;
        }
        j
    }
}

/// The passes, compiled once per instruction set: `dot` is
/// `acc + madd(a, b)`, one fused instruction with VNNI. (A macro, because
/// the target features of a function cannot be generic.)
macro_rules! moment_pass {
    ($module:ident, $features:literal, $dot:expr, $sums:ident, $vertical:path, $wide:path) => {
        mod $module {
            use super::*;

            #[inline]
            #[target_feature(enable = $features)]
            unsafe fn dot(acc: __m256i, a: __m256i, b: __m256i) -> __m256i {
                $dot(acc, a, b)
            }

            /// See [`super::accumulate`].
            #[target_feature(enable = $features)]
            pub unsafe fn accumulate(
                rows: &mut Rows16,
                reference: PlaneRef<'_, u8>,
                distorted: PlaneRef<'_, u8>,
                log2: &Log2Table,
                gain_limit: f64,
            ) -> ScaleSums {
                // SAFETY: the caller upholds this function's `# Safety` contract.
                unsafe {
                    let (w, h) = (reference.width, reference.height);
                    assert!(rows.rows[0].len() >= w + 2 * HALF + BLOCK);
                    let mut sums = ScaleSums::default();
                    for i in 0..h {
                        let mut ref_rows: [&[u8]; TAPS] = [&[]; TAPS];
                        let mut dis_rows = ref_rows;
                        for k in 0..TAPS {
                            let y = mirror(i as isize + k as isize - HALF as isize, h);
                            ref_rows[k] = reference.row(y);
                            dis_rows[k] = distorted.row(y);
                        }
                        $vertical(rows, &ref_rows, &dis_rows, w);
                        for row in &mut rows.rows {
                            mirror_edges(&mut row[..w + 2 * HALF], HALF);
                        }
                        let filter = FILTERS[0].try_into().unwrap();
                        horizontal::<TAPS>(rows, filter, w, log2, gain_limit, &mut sums);
                    }
                    sums
                }
            }

            /// The horizontal pass of the padded rows (mirrored `N / 2`
            /// columns each side), each pixel into `sums`.
            #[target_feature(enable = $features)]
            pub(super) unsafe fn horizontal<const N: usize>(
                rows: &Rows16,
                filter: &[u16; N],
                w: usize,
                log2: &Log2Table,
                gain_limit: f64,
                sums: &mut ScaleSums,
            ) {
                // SAFETY: the caller upholds this function's `# Safety` contract.
                unsafe {
                    const { assert!(N <= TAPS && N % 2 == 1) };
                    // The first column the filter reads.
                    let first = HALF - N / 2;
                    let mut vec_sums = $sums::new(log2, gain_limit);
                    let pair_weights: [__m256i; PAIRS] =
                        std::array::from_fn(|p| _mm256_set1_epi32(filter_pair(filter, p)));
                    let pair_weights = &pair_weights[..N.div_ceil(2)];
                    let starts = rows.rows.each_ref().map(|row| row.as_ptr().add(first));
                    // Wider blocks first where the instruction set has them
                    // (written for the scale-0 filter).
                    let mut j = if N == TAPS && *filter == *FILTERS[0] {
                        $wide(rows, w, &mut vec_sums)
                    } else {
                        0
                    };
                    while j + BLOCK <= w {
                        let zero = _mm256_setzero_si256();
                        // [quantity][even, odd columns]; lane m of the even
                        // vector: taps k, k+1 of column j + 2m.
                        let mut acc = [[zero; 2]; 8];
                        for (p, &c) in pair_weights.iter().enumerate() {
                            let k = j + 2 * p;
                            for (a, &start) in acc.iter_mut().zip(&starts) {
                                // SAFETY: the reads end at column first + j + 2 *
                                // pairs + BLOCK <= w + HALF + N / 2 + 1 <= w + 2 *
                                // HALF + BLOCK (N <= TAPS), inside every row (asserted
                                // by the callers; all rows have one length).
                                let src = start.add(k);
                                a[0] = dot(a[0], _mm256_loadu_si256(src.cast()), c);
                                a[1] = dot(a[1], _mm256_loadu_si256(src.add(1).cast()), c);
                            }
                        }
                        let top = _mm256_set1_epi32(i32::MIN);
                        let round = _mm256_set1_epi32(1 << 15);
                        // (A closure called directly, not through `map`, so that it
                        // inlines with this function's target features.)
                        let moments = |parity: usize| {
                            let sum = |q: usize| _mm256_add_epi32(acc[q][parity], top);
                            let moment = |q: usize| {
                                let low =
                                    _mm256_srli_epi32(_mm256_add_epi32(sum(q + 1), round), 16);
                                _mm256_add_epi32(sum(q), low)
                            };
                            [sum(MU1), sum(MU2), moment(XX), moment(YY), moment(XY)]
                        };
                        vec_sums.add16(moments(0), moments(1));
                        j += BLOCK;
                    }
                    for j in j..w {
                        let mut s = [0u32; 8];
                        for (k, &c) in filter.iter().enumerate() {
                            for (acc, row) in s.iter_mut().zip(&rows.rows) {
                                let v = unoffset(row[first + j + k]);
                                *acc = acc.wrapping_add(u32::from(c) * v);
                            }
                        }
                        let moment =
                            |q: usize| s[q].wrapping_add(s[q + 1].wrapping_add(1 << 15) >> 16);
                        let block = MomentBlock {
                            mu1: [s[MU1]],
                            mu2: [s[MU2]],
                            xx: [moment(XX)],
                            yy: [moment(YY)],
                            xy: [moment(XY)],
                        };
                        sums.add_block::<1>(&block, log2, gain_limit);
                    }
                    vec_sums.finish(sums);
                }
            }
        }
    };
}

moment_pass!(
    avx2,
    "avx2",
    |acc, a, b| _mm256_add_epi32(acc, _mm256_madd_epi16(a, b)),
    VecSums,
    vertical_avx2,
    no_wide_blocks
);
moment_pass!(
    vnni,
    "avx2,avx512f,avx512bw,avx512vbmi,avx512vnni,avx512vl",
    _mm256_dpwssd_epi32,
    VecSums16,
    vertical_avx512,
    horizontal_avx512
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::fuzz::Rng;

    /// The folded vertical passes (AVX-512, AVX2; those the CPU has)
    /// against the one-column-at-a-time pass, word for word, on rows where the folded 16-bit terms reach
    /// their bounds (all 0 and all 255 samples, 0 against 255) and on
    /// random rows half made of extremes, over whole vectors and a tail.
    #[test]
    fn folded_vertical_pass_matches_the_column_pass() {
        if !crate::cpu::has_avx2() {
            eprintln!("skipped: the CPU lacks AVX2");
            return;
        }
        if !has_vnni() {
            eprintln!("the CPU lacks AVX-512 VNNI and VBMI: the AVX2 pass alone");
        }
        let w = 16 * 5 + 7;
        let mut rng = Rng(41);
        let mut random = |extremes: bool| -> u8 {
            let v = rng.next_u64();
            if extremes && v.is_multiple_of(2) {
                [0, 255, 127, 128, 1][(v >> 8) as usize % 5]
            } else {
                (v >> 16) as u8
            }
        };
        type Rows = Vec<Vec<u8>>;
        let constant = |v: u8| -> Rows { vec![vec![v; w]; TAPS] };
        let mut cases: Vec<(Rows, Rows)> = vec![
            (constant(0), constant(0)),
            (constant(255), constant(255)),
            (constant(0), constant(255)),
            (constant(255), constant(0)),
        ];
        for extremes in [true, true, false] {
            let mut rows = || -> Rows {
                (0..TAPS)
                    .map(|_| (0..w).map(|_| random(extremes)).collect())
                    .collect()
            };
            let (r, d) = (rows(), rows());
            cases.push((r, d));
        }
        for (n, (r, d)) in cases.iter().enumerate() {
            let r: [&[u8]; TAPS] = std::array::from_fn(|k| r[k].as_slice());
            let d: [&[u8]; TAPS] = std::array::from_fn(|k| d[k].as_slice());
            let (mut avx2, mut column) = (Rows16::new(w), Rows16::new(w));
            // SAFETY: AVX2 checked above; rows made for w.
            unsafe { vertical_avx2(&mut avx2, &r, &d, w) };
            let mut passes = vec![("AVX2", avx2)];
            if has_vnni() {
                let mut avx512 = Rows16::new(w);
                // SAFETY: VNNI and VBMI checked; rows made for w.
                unsafe { vertical_avx512(&mut avx512, &r, &d, w) };
                passes.push(("AVX-512", avx512));
            }
            vertical_tail(&mut column, &r, &d, 0, w);
            for q in 0..8 {
                let span = HALF..HALF + w;
                for (name, vector) in &passes {
                    assert_eq!(
                        vector.rows[q][span.clone()],
                        column.rows[q][span.clone()],
                        "{name}: case {n}, quantity {q}"
                    );
                }
            }
        }
    }
}
