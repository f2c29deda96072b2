//! One level of libvmaf's integer 2-D db2 wavelet analysis: a vertical pass
//! into low/high rows, then a horizontal pass that decimates both into the
//! four subbands. Scale 0 reads the picture and keeps 16-bit details; scales
//! 1-3 work on the 32-bit approximation of the previous level.

#[cfg(target_arch = "x86_64")]
use super::dwt_rows::MAX_BIT_DEPTH;
use super::dwt_rows::{analyze_picture as analyze_rows, Low, RowPasses};
use super::tables::{DB2_HI, DB2_LO, DB2_LO_SUM};
use crate::cpu::{simd_dispatch, simd_level, SimdLevel};
use crate::picture::{PlaneRef, Sample};
use std::ops::Range;

/// Detail subbands of one picture at one scale, `width` x `height`, packed.
#[derive(Debug, Clone, Default)]
pub struct Bands<T> {
    /// High-pass vertically, low-pass horizontally.
    pub h: Vec<T>,
    /// Low-pass vertically, high-pass horizontally.
    pub v: Vec<T>,
    /// High-pass both ways.
    pub d: Vec<T>,
    pub width: usize,
    pub height: usize,
}

impl<T: Copy + Default> Bands<T> {
    /// Bands with room for `width` x `height` coefficients.
    pub fn with_capacity(width: usize, height: usize) -> Self {
        let n = width * height;
        Self {
            h: vec![T::default(); n],
            v: vec![T::default(); n],
            d: vec![T::default(); n],
            width,
            height,
        }
    }

    /// The three bands in libvmaf's theta order (h, v, d).
    pub fn all(&self) -> [&[T]; 3] {
        [&self.h, &self.v, &self.d]
    }

    /// Positions `range` of the three bands, in theta order (h, v, d).
    #[inline(always)]
    pub fn slices(&self, range: Range<usize>) -> [&[T]; 3] {
        [
            &self.h[range.clone()],
            &self.v[range.clone()],
            &self.d[range],
        ]
    }

    /// [`Self::slices`], mutable.
    #[inline(always)]
    pub fn slices_mut(&mut self, range: Range<usize>) -> [&mut [T]; 3] {
        [
            &mut self.h[range.clone()],
            &mut self.v[range.clone()],
            &mut self.d[range],
        ]
    }

    /// Uses the first `width` x `height` coefficients (within capacity).
    pub fn set_size(&mut self, width: usize, height: usize) {
        debug_assert!(width * height <= self.h.len());
        self.width = width;
        self.height = height;
    }
}

/// For each output of a 2:1 decimation of a signal of length `n`, the input
/// positions of the four filter taps (2i-1 .. 2i+2), mirrored like libvmaf:
/// -1 reads 1, and n + k reads n - 1 - k. Needs n >= 5 (libvmaf's own
/// index table is only consistent from there).
pub fn mirror_taps(n: usize) -> Vec<[usize; 4]> {
    debug_assert!(n >= 5);
    (0..n.div_ceil(2))
        .map(|i| {
            std::array::from_fn(|t| {
                let k = 2 * i as isize - 1 + t as isize;
                let n = n as isize;
                let k = if k < 0 {
                    -k
                } else if k >= n {
                    2 * n - k - 1
                } else {
                    k
                };
                k as usize
            })
        })
        .collect()
}

/// Tap tables of one scale: rows of the input for each output row, columns
/// for each output column.
#[derive(Debug, Clone)]
pub struct Taps {
    pub rows: Vec<[usize; 4]>,
    pub cols: Vec<[usize; 4]>,
}

impl Taps {
    /// Taps of a `width` x `height` input.
    pub fn new(width: usize, height: usize) -> Self {
        Self {
            rows: mirror_taps(height),
            cols: mirror_taps(width),
        }
    }
}

#[inline(always)]
fn filter32(f: &[i32; 4], s: [i32; 4]) -> i32 {
    // Wrapping like libvmaf's int32 accumulator (only 16-bit input can
    // overflow it).
    f[0].wrapping_mul(s[0])
        .wrapping_add(f[1].wrapping_mul(s[1]))
        .wrapping_add(f[2].wrapping_mul(s[2]))
        .wrapping_add(f[3].wrapping_mul(s[3]))
}

#[inline(always)]
fn filter64(f: &[i32; 4], s: [i32; 4]) -> i64 {
    f[0] as i64 * s[0] as i64
        + f[1] as i64 * s[1] as i64
        + f[2] as i64 * s[2] as i64
        + f[3] as i64 * s[3] as i64
}

/// Scratch rows of scale 0: the vertical pass, and horizontal outputs that
/// are not kept as they are (the 16-bit approximation before widening, and
/// the high-pass of the approximation-only analysis).
#[derive(Debug, Clone, Default)]
pub struct RowScratch {
    pub(super) lo: Vec<i16>,
    pub(super) hi: Vec<i16>,
    pub(super) out_lo: Vec<i16>,
    pub(super) out_hi: Vec<i16>,
}

impl RowScratch {
    pub fn new(width: usize) -> Self {
        let half = width.div_ceil(2);
        Self {
            lo: vec![0; width],
            hi: vec![0; width],
            out_lo: vec![0; half],
            out_hi: vec![0; half],
        }
    }
}

/// Whether libvmaf's AVX-512 scale-0 DWT (which produced the reference
/// scores) computes the last output column with its vector loop, i.e. with
/// unmirrored taps that read past the end of the low-pass row. Its loop
/// covers columns 1.. in blocks of 32 (8-bit) or 64 (16-bit) up to
/// `out_w - ((out_w - 1) % block)`, which includes the last column exactly
/// when `out_w - 1` is a multiple of the block (e.g. 321 pixels wide, 8-bit).
/// Only the approximation and the v band of that column change; the h and d
/// bands there would read stale memory, but no score reads them.
pub fn simd_reads_past_row(out_w: usize, sample_bytes: usize) -> bool {
    let block = if sample_bytes == 1 { 32 } else { 64 };
    out_w > 1 && (out_w - 1).is_multiple_of(block)
}

/// Number of output columns `1..=n` whose four taps `2j-1 ..= 2j+2` all
/// lie inside a row of `width` (the rest are mirrored at the edges).
pub(super) fn interior_outputs(width: usize, out_w: usize) -> usize {
    (width.saturating_sub(3) / 2).min(out_w.saturating_sub(1))
}

/// Output columns that need mirrored taps: the first and those past the
/// interior.
pub(super) fn edge_outputs(n: usize, out_w: usize) -> impl Iterator<Item = usize> {
    std::iter::once(0).chain(n + 1..out_w)
}

/// One output of the scale-0 horizontal pass: libvmaf's rounded `>> 16`.
#[inline(always)]
pub(super) fn fine_tap(f: &[i32; 4], s: [i32; 4]) -> i16 {
    (filter32(f, s).wrapping_add(1 << 15) >> 16) as i16
}

/// Horizontal pass of scale 0 over outputs `from..=n` (whose taps all lie
/// in `row`) into `low` (low-pass) and `high` (high-pass): the portable
/// pass, and the vector passes' last few outputs.
#[inline(always)]
pub(super) fn horizontal_outputs(
    row: &[i16],
    from: usize,
    n: usize,
    low: Low<'_>,
    high: &mut [i16],
) {
    match low {
        Low::Wide(out) => outputs_into(row, from, n, out, high),
        Low::Narrow(out) => outputs_into(row, from, n, out, high),
    }
}

/// [`horizontal_outputs`] into low-pass outputs of either width, as
/// chunked loops that vectorize.
#[inline(always)]
fn outputs_into<T: From<i16>>(row: &[i16], from: usize, n: usize, low: &mut [T], high: &mut [i16]) {
    if from > n {
        return;
    }
    let left = row[2 * from - 1..1 + 2 * n].chunks_exact(2);
    let right = row[2 * from + 1..3 + 2 * n].chunks_exact(2);
    for ((lo, hi), (a, b)) in low[from..=n]
        .iter_mut()
        .zip(&mut high[from..=n])
        .zip(left.zip(right))
    {
        let s = [a[0] as i32, a[1] as i32, b[0] as i32, b[1] as i32];
        *lo = T::from(fine_tap(&DB2_LO, s));
        *hi = fine_tap(&DB2_HI, s);
    }
}

/// The outputs of scale 0's horizontal pass with mirrored taps: the first column
/// and those past the interior.
#[inline(always)]
pub(super) fn horizontal_fine_edges(
    row: &[i16],
    cols: &[[usize; 4]],
    dst_lo: &mut [i16],
    dst_hi: &mut [i16],
) {
    let out_w = cols.len();
    for j in edge_outputs(interior_outputs(row.len(), out_w), out_w) {
        let s = cols[j].map(|k| row[k] as i32);
        dst_lo[j] = fine_tap(&DB2_LO, s);
        dst_hi[j] = fine_tap(&DB2_HI, s);
    }
}

/// The last column's (approximation, v) outputs as libvmaf's AVX-512 DWT
/// computes them when [`simd_reads_past_row`]: the low-pass row `lo` is
/// followed in memory by the high-pass row `hi`, and the unmirrored taps
/// past its end read the start of it.
pub(super) fn overrun_column(lo: &[i16], hi: &[i16], out_w: usize) -> (i16, i16) {
    let (w, j) = (lo.len(), out_w - 1);
    let s: [i32; 4] = std::array::from_fn(|t| {
        let p = 2 * j + t - 1;
        (if p < w { lo[p] } else { hi[p - w] }) as i32
    });
    (fine_tap(&DB2_LO, s), fine_tap(&DB2_HI, s))
}

/// Vertical pass of scale 0 for one output row.
#[inline(always)]
pub(super) fn vertical_fine<S: Sample>(
    rows: [&[S]; 4],
    bit_depth: u32,
    lo: &mut [i16],
    hi: &mut [i16],
) {
    let round = 1i32 << (bit_depth - 1);
    // Centres samples on zero: the low-pass filter has DC gain DB2_LO_SUM.
    let offset = DB2_LO_SUM * round;
    let w = lo.len();
    let [r0, r1, r2, r3] = rows.map(|r| &r[..w]);
    let hi = &mut hi[..w];
    for j in 0..w {
        let s = [
            r0[j].into() as i32,
            r1[j].into() as i32,
            r2[j].into() as i32,
            r3[j].into() as i32,
        ];
        let l = filter32(&DB2_LO, s).wrapping_sub(offset);
        lo[j] = (l.wrapping_add(round) >> bit_depth) as i16;
        let h = filter32(&DB2_HI, s);
        hi[j] = (h.wrapping_add(round) >> bit_depth) as i16;
    }
}

/// Scale 0: analyses a `bit_depth`-bit picture plane. The approximation
/// (16-bit values widened to 32 bits) goes to `approx`; the details go to
/// `details` unless it is `None` (`adm_skip_scale0` needs only the
/// approximation). Up to 12 bits with AVX-512 (ADR 0032) or AVX2 (ADR
/// 0035), else the portable loops compiled for the widest instruction set.
pub fn analyze_picture<S: Sample>(
    src: &PlaneRef<'_, S>,
    bit_depth: u32,
    taps: &Taps,
    scratch: &mut RowScratch,
    approx: &mut [i32],
    details: Option<&mut Bands<i16>>,
) {
    analyze_picture_with(simd_level(), src, bit_depth, taps, scratch, approx, details)
}

/// [`analyze_picture`] with the vector passes of `level` at most (and of
/// the CPU's level at most): the unit tests run each on one machine.
pub(super) fn analyze_picture_with<S: Sample>(
    level: SimdLevel,
    src: &PlaneRef<'_, S>,
    bit_depth: u32,
    taps: &Taps,
    scratch: &mut RowScratch,
    approx: &mut [i32],
    details: Option<&mut Bands<i16>>,
) {
    let passes = match level.min(simd_level()) {
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx512 if bit_depth <= MAX_BIT_DEPTH => super::dwt_avx512::passes(),
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx2 if bit_depth <= MAX_BIT_DEPTH => super::dwt_avx2::passes(),
        _ => RowPasses {
            vertical: vertical_portable::<S>,
            horizontal: horizontal_portable,
        },
    };
    // SAFETY: the CPU has the passes' instruction set (its level is at
    // least theirs; the portable passes need none).
    unsafe { analyze_rows(passes, src, bit_depth, taps, scratch, approx, details) }
}

simd_dispatch! {
    /// The portable vertical pass of scale 0.
    fn vertical_portable<S: Sample>(
        rows: [&[S]; 4],
        bit_depth: u32,
        lo: &mut [i16],
        hi: &mut [i16],
    ) => vertical_fine
}

simd_dispatch! {
    /// The portable horizontal pass of scale 0's interior outputs `1..=n`.
    fn horizontal_portable(row: &[i16], n: usize, low: Low<'_>, high: &mut [i16]) => horizontal_interior
}

#[inline(always)]
fn horizontal_interior(row: &[i16], n: usize, low: Low<'_>, high: &mut [i16]) {
    horizontal_outputs(row, 1, n, low, high);
}

/// Rounding of the two passes of scales 1, 2 and 3: (add, shift) for the
/// vertical pass, then for the horizontal pass.
pub(crate) const COARSE_ROUNDING: [((i64, u32), (i64, u32)); 3] = [
    ((0, 0), (16384, 15)),
    ((32768, 16), (32768, 16)),
    ((32768, 16), (16384, 15)),
];

/// Vertical-pass rows of scales 1-3 for both pictures, laid out as libvmaf
/// lays them out (reference low, reference high, distorted low, distorted
/// high, each `width` long, in one buffer reused by every scale): the
/// reference scores depend on what its vector code reads past these rows.
#[derive(Debug, Clone, Default)]
pub struct CoarseScratch {
    rows: Vec<i32>,
}

impl CoarseScratch {
    /// Scratch for inputs up to `max_width` wide.
    pub fn new(max_width: usize) -> Self {
        // Two extra values: the furthest a vector block reads past the end.
        Self {
            rows: vec![0; 4 * max_width + 2],
        }
    }
}

/// One picture's input and outputs at a scale of [`analyze_approx_pair`].
pub struct Level<'a> {
    /// Approximation of the previous scale, `width` wide.
    pub src: &'a [i32],
    pub approx: &'a mut [i32],
    pub details: &'a mut Bands<i32>,
}

/// Whether libvmaf's AVX-512 DWT of scales 1-3 (which produced the
/// reference scores) computes the last output column in its vector loop,
/// which covers columns 1.. in blocks of 8 up to `out_w - ((out_w - 1) % 8)`:
/// then that column's taps are not mirrored and read past the end of each
/// row into the next row of [`CoarseScratch`] (past the distorted high-pass
/// row: values the previous scale left there).
pub(crate) fn coarse_simd_reads_past_row(out_w: usize) -> bool {
    out_w > 1 && (out_w - 1).is_multiple_of(8)
}

/// Horizontal pass of scales 1-3 (see [`horizontal_outputs`]).
#[inline(always)]
fn horizontal_coarse(
    row: &[i32],
    cols: &[[usize; 4]],
    (add, shift): (i64, u32),
    dst_lo: &mut [i32],
    dst_hi: &mut [i32],
) {
    let out_w = cols.len();
    let n = interior_outputs(row.len(), out_w);
    let pass = |f: &[i32; 4], s: [i32; 4]| ((filter64(f, s) + add) >> shift) as i32;
    let left = row[1..1 + 2 * n].chunks_exact(2);
    let right = row[3..3 + 2 * n].chunks_exact(2);
    for ((lo, hi), (a, b)) in dst_lo[1..=n]
        .iter_mut()
        .zip(&mut dst_hi[1..=n])
        .zip(left.zip(right))
    {
        let s = [a[0], a[1], b[0], b[1]];
        *lo = pass(&DB2_LO, s);
        *hi = pass(&DB2_HI, s);
    }
    for j in edge_outputs(n, out_w) {
        let s = cols[j].map(|k| row[k]);
        dst_lo[j] = pass(&DB2_LO, s);
        dst_hi[j] = pass(&DB2_HI, s);
    }
}

/// Vertical pass of scales 1-3 for one output row.
#[inline(always)]
fn vertical_coarse(rows: [&[i32]; 4], (add, shift): (i64, u32), lo: &mut [i32], hi: &mut [i32]) {
    let w = lo.len();
    let [r0, r1, r2, r3] = rows.map(|r| &r[..w]);
    let hi = &mut hi[..w];
    if (add, shift) == (0, 0) {
        // Scale 1: its input, scale 0's approximation, is 16-bit, so every
        // sum lies within 54822 * 2^15 < 2^31: exact in 32 bits.
        for j in 0..w {
            let s = [r0[j], r1[j], r2[j], r3[j]];
            lo[j] = filter32(&DB2_LO, s);
            hi[j] = filter32(&DB2_HI, s);
        }
        return;
    }
    for j in 0..w {
        let s = [r0[j], r1[j], r2[j], r3[j]];
        lo[j] = ((filter64(&DB2_LO, s) + add) >> shift) as i32;
        hi[j] = ((filter64(&DB2_HI, s) + add) >> shift) as i32;
    }
}

#[inline(always)]
fn analyze_approx_pair_impl(
    width: usize,
    scale: usize,
    taps: &Taps,
    scratch: &mut CoarseScratch,
    reference: Level<'_>,
    distorted: Level<'_>,
) {
    let (out_w, out_h) = (taps.cols.len(), taps.rows.len());
    let (vertical, horizontal) = COARSE_ROUNDING[scale - 1];
    let overrun = coarse_simd_reads_past_row(out_w);
    let mut levels = [reference, distorted];
    for level in levels.iter_mut() {
        level.details.set_size(out_w, out_h);
    }
    let tmp = &mut scratch.rows[..];
    for (i, rows) in taps.rows.iter().enumerate() {
        for (p, level) in levels.iter().enumerate() {
            let (lo, hi) = tmp[2 * p * width..(2 * p + 2) * width].split_at_mut(width);
            vertical_coarse(
                rows.map(|r| &level.src[r * width..(r + 1) * width]),
                vertical,
                lo,
                hi,
            );
        }
        let out = i * out_w..(i + 1) * out_w;
        for (p, level) in levels.iter_mut().enumerate() {
            let (lo_base, hi_base) = (2 * p * width, (2 * p + 1) * width);
            let da = &mut level.approx[out.clone()];
            let [dh, dv, dd] = level.details.slices_mut(out.clone());
            horizontal_coarse(
                &tmp[lo_base..lo_base + width],
                &taps.cols,
                horizontal,
                da,
                dv,
            );
            horizontal_coarse(
                &tmp[hi_base..hi_base + width],
                &taps.cols,
                horizontal,
                dh,
                dd,
            );
            if overrun {
                let j = out_w - 1;
                let (add, shift) = horizontal;
                let pass = |f: &[i32; 4], s: [i32; 4]| ((filter64(f, s) + add) >> shift) as i32;
                let at = |base: usize| std::array::from_fn(|t| tmp[base + 2 * j + t - 1]);
                let (sl, sh): ([i32; 4], [i32; 4]) = (at(lo_base), at(hi_base));
                da[j] = pass(&DB2_LO, sl);
                dv[j] = pass(&DB2_HI, sl);
                dh[j] = pass(&DB2_LO, sh);
                dd[j] = pass(&DB2_HI, sh);
            }
        }
    }
}

simd_dispatch! {
    /// Scales 1-3: analyses the `width`-wide approximations of the previous
    /// scale of both pictures.
    pub fn analyze_approx_pair(
        width: usize,
        scale: usize,
        taps: &Taps,
        scratch: &mut CoarseScratch,
        reference: Level<'_>,
        distorted: Level<'_>,
    ) => analyze_approx_pair_impl
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::fuzz::Rng;

    /// Runs the scale-0 analysis of a `w` x `h` plane of random `bits`-bit
    /// samples (rows `stride` apart) with the vector passes of `level` at
    /// most: (approximation, h, v, d).
    fn analyze_random<S: Sample + TryFrom<u32>>(
        level: SimdLevel,
        (w, h, stride): (usize, usize, usize),
        bits: u32,
        with_details: bool,
        seed: u64,
    ) -> [Vec<i32>; 4] {
        // xorshift needs a non-zero seed.
        let mut rng = Rng(seed + 1);
        let data: Vec<S> = (0..stride * h)
            .map(|_| {
                let r = rng.next_u64();
                // Mostly random, sometimes the extremes.
                let v = match (r >> 60) % 4 {
                    0 => 0,
                    1 => (1 << bits) - 1,
                    _ => (r >> 33) as u32 & ((1 << bits) - 1),
                };
                S::try_from(v).ok().unwrap()
            })
            .collect();
        let plane = PlaneRef {
            data: &data,
            width: w,
            height: h,
            stride,
        };
        let taps = Taps::new(w, h);
        let (out_w, out_h) = (taps.cols.len(), taps.rows.len());
        let mut bands = Bands::with_capacity(out_w, out_h);
        let mut approx = vec![0; out_w * out_h];
        let details = with_details.then_some(&mut bands);
        analyze_picture_with(
            level,
            &plane,
            bits,
            &taps,
            &mut RowScratch::new(w),
            &mut approx,
            details,
        );
        let widen = |b: &[i16]| b.iter().map(|&x| x as i32).collect();
        [approx, widen(&bands.h), widen(&bands.v), widen(&bands.d)]
    }

    /// Every vector level the CPU has (AVX-512, AVX2) against the portable
    /// loops, bit for bit.
    #[test]
    fn vector_scale0_matches_portable() {
        let levels = crate::cpu::vector_levels();
        if levels.is_empty() {
            return;
        }
        // Odd and even sizes, one or several vector blocks and their tails
        // (16 and 32 columns, 8 and 16 outputs), rows with padding, and the
        // widths where libvmaf's vector loop reads past the row (half
        // widths 33 at 8 bits, 65 at 16).
        let sizes = [
            (5, 5, 5),
            (37, 9, 40),
            (48, 5, 48),
            (50, 6, 56),
            (64, 6, 64),
            (65, 7, 65),
            (66, 5, 70),
            (129, 6, 129),
            (130, 5, 130),
            (333, 11, 340),
        ];
        for level in levels {
            for (k, &size) in sizes.iter().enumerate() {
                for with_details in [true, false] {
                    let seed = k as u64;
                    let portable = SimdLevel::Baseline;
                    assert_eq!(
                        analyze_random::<u8>(level, size, 8, with_details, seed),
                        analyze_random::<u8>(portable, size, 8, with_details, seed),
                        "{level:?} 8-bit {size:?} details {with_details}"
                    );
                    for bits in [10, 12] {
                        assert_eq!(
                            analyze_random::<u16>(level, size, bits, with_details, seed),
                            analyze_random::<u16>(portable, size, bits, with_details, seed),
                            "{level:?} {bits}-bit {size:?} details {with_details}"
                        );
                    }
                }
            }
        }
    }

    /// Scale 1's vertical pass in 32 bits is exact: on 16-bit input no
    /// sum reaches 2^31 (the largest takes every sample at an extreme of
    /// the sign of its tap), so it equals the 64-bit pass of scales 2-3.
    #[test]
    fn scale1_vertical_pass_fits_32_bits() {
        for f in [DB2_LO, DB2_HI] {
            let worst = |sign: i64| -> i64 {
                f.iter()
                    .map(|&c| {
                        let s = if (c as i64) * sign > 0 { 32767 } else { -32768 };
                        c as i64 * s
                    })
                    .sum()
            };
            assert!(worst(1) < 1 << 31 && worst(-1) >= -(1 << 31));
        }
        let mut rng = Rng(3);
        let w = 37;
        let rows: Vec<Vec<i32>> = (0..4)
            .map(|_| {
                (0..w)
                    .map(|j| match j % 5 {
                        0 => -32768,
                        1 => 32767,
                        _ => (rng.next_u64() >> 48) as u16 as i16 as i32,
                    })
                    .collect()
            })
            .collect();
        let rows: [&[i32]; 4] = std::array::from_fn(|k| rows[k].as_slice());
        let (mut lo, mut hi) = (vec![0; w], vec![0; w]);
        vertical_coarse(rows, COARSE_ROUNDING[0].0, &mut lo, &mut hi);
        for j in 0..w {
            let s = rows.map(|r| r[j]);
            assert_eq!(lo[j] as i64, filter64(&DB2_LO, s), "column {j}");
            assert_eq!(hi[j] as i64, filter64(&DB2_HI, s), "column {j}");
        }
    }

    #[test]
    fn taps_mirror_like_libvmaf() {
        // libvmaf: first output reads 1,0,1,2; past the end n+k reads n-1-k.
        assert_eq!(
            mirror_taps(7),
            vec![[1, 0, 1, 2], [1, 2, 3, 4], [3, 4, 5, 6], [5, 6, 6, 5]]
        );
        assert_eq!(
            mirror_taps(8),
            vec![[1, 0, 1, 2], [1, 2, 3, 4], [3, 4, 5, 6], [5, 6, 7, 7]]
        );
    }

    #[test]
    fn flat_picture_has_no_detail() {
        let w = 9;
        let data = vec![77u8; w * 6];
        let plane = PlaneRef {
            data: &data,
            width: w,
            height: 6,
            stride: w,
        };
        let taps = Taps::new(w, 6);
        let mut bands = Bands::with_capacity(5, 3);
        let mut approx = vec![0; 15];
        analyze_picture(
            &plane,
            8,
            &taps,
            &mut RowScratch::new(w),
            &mut approx,
            Some(&mut bands),
        );
        assert!(bands
            .h
            .iter()
            .chain(&bands.v)
            .chain(&bands.d)
            .all(|&x| x == 0));
        assert!(approx.iter().all(|&a| a == approx[0]));
    }
}
