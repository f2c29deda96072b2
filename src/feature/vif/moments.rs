//! The moment pass: per pixel of one scale, the Gaussian-weighted local
//! means and second moments of both pictures, fed straight into the VIF
//! statistic row by row.
//!
//! This portable code is the reference and the fallback. On x86-64 with
//! AVX2 it runs compiled for AVX2 with the statistic in intrinsics
//! (`stats_avx2`), and scale 0 of 8-bit pictures, the bulk of the work,
//! takes the 16-bit multiply-add path of `moments_u8_avx2`, and scale 0 of
//! 9- to 15-bit pictures that of `moments_u16_vnni` on CPUs with AVX-512
//! VNNI. Otherwise 16-bit samples (scale 0 above 8 bits, scales 1 and 2)
//! take the 16-bit multiply-add path of `moments_u16_avx2` (its horizontal
//! pass and statistic in AVX-512 where the CPU has VNNI), unless a sample
//! is above the bit depth; what is left (scale 3, pictures with such a
//! sample) takes the exact double-precision path of `moments_wide_avx512`
//! on CPUs with AVX-512.

use super::filter::{
    has_avx2, round_shift_u32, SquareAccumulator, VerticalShifts, VifSample, LANES,
};
use super::log2::Log2Table;
use super::stats::{MomentBlock, ScaleSums};
#[cfg(target_arch = "x86_64")]
use super::stats_avx2::VecSums;
use super::tables::{FILTERS, MAX_HALF};
use crate::feature::common::mirrored_filter::{mirror, mirror_edges};
use crate::picture::PlaneRef;

/// Columns per block of the vertical pass.
const VERTICAL_LANES: usize = 8;

/// One vertically filtered row per quantity, with `MAX_HALF` mirrored
/// columns each side.
///
/// The second moments are held as doubles: they are integers below 2^32
/// and their weighted sums stay below 2^49, so double arithmetic is exact
/// and twice as wide per vector as the 64-bit integers C uses.
#[derive(Debug)]
struct PaddedRows {
    mu1: Vec<u32>,
    mu2: Vec<u32>,
    xx: Vec<f64>,
    yy: Vec<f64>,
    xy: Vec<f64>,
}

/// Scratch of the moment pass, sized for the widest scale.
#[derive(Debug)]
pub struct MomentFilter {
    width: usize,
    rows: PaddedRows,
    #[cfg(target_arch = "x86_64")]
    rows16: super::moments_u8_avx2::Rows16,
    #[cfg(target_arch = "x86_64")]
    wide: super::moments_wide_avx512::WideRows,
    /// Made on first use: only pictures of 9 to 15 bits need it.
    #[cfg(target_arch = "x86_64")]
    ring: super::moments_u16_vnni::ProductRing,
    /// Made on first use: only 16-bit samples need it.
    #[cfg(target_arch = "x86_64")]
    ring_avx2: super::moments_u16_avx2::ProductRing,
}

/// What one call of the pass works on.
struct Pass<'a, 'p, T> {
    reference: PlaneRef<'p, T>,
    distorted: PlaneRef<'p, T>,
    filter: &'static [u16],
    shifts: VerticalShifts,
    log2: &'a Log2Table,
    gain_limit: f64,
}

impl MomentFilter {
    pub fn new(width: usize) -> Self {
        let n = width + 2 * MAX_HALF;
        Self {
            width,
            rows: PaddedRows {
                mu1: vec![0; n],
                mu2: vec![0; n],
                xx: vec![0.0; n],
                yy: vec![0.0; n],
                xy: vec![0.0; n],
            },
            #[cfg(target_arch = "x86_64")]
            rows16: super::moments_u8_avx2::Rows16::new(width),
            #[cfg(target_arch = "x86_64")]
            wide: super::moments_wide_avx512::WideRows::new(width),
            #[cfg(target_arch = "x86_64")]
            ring: Default::default(),
            #[cfg(target_arch = "x86_64")]
            ring_avx2: Default::default(),
        }
    }

    /// Sums the VIF statistic over every pixel of scale `scale` (pictures
    /// `reference` and `distorted` of `sample_bits`-bit samples, no wider
    /// than this filter was made for).
    pub fn accumulate<T: VifSample>(
        &mut self,
        reference: PlaneRef<'_, T>,
        distorted: PlaneRef<'_, T>,
        scale: usize,
        sample_bits: u32,
        log2: &Log2Table,
        gain_limit: f64,
    ) -> ScaleSums {
        assert!(
            reference.width <= self.width,
            "scratch sized for a narrower picture"
        );
        let pass = Pass {
            reference,
            distorted,
            filter: FILTERS[scale],
            shifts: VerticalShifts::for_bits(sample_bits),
            log2,
            gain_limit,
        };
        #[cfg(target_arch = "x86_64")]
        if let (Some(r), Some(d)) = (T::as_u16(reference), T::as_u16(distorted)) {
            use super::moments_u16_vnni as u16_vnni;
            if scale == 0
                && sample_bits > 8
                && sample_bits <= u16_vnni::MAX_BITS
                && u16_vnni::available()
            {
                // SAFETY: the CPU supports the pass, checked.
                let sums = unsafe {
                    u16_vnni::accumulate(&mut self.ring, r, d, sample_bits, log2, gain_limit)
                };
                if let Some(sums) = sums {
                    return sums;
                }
            }
            if has_avx2() {
                let ring = &mut self.ring_avx2;
                // SAFETY: the CPU supports AVX2, checked.
                let sums = unsafe {
                    super::moments_u16_avx2::accumulate(
                        ring,
                        r,
                        d,
                        scale,
                        sample_bits,
                        log2,
                        gain_limit,
                    )
                };
                if let Some(sums) = sums {
                    return sums;
                }
            }
            use super::moments_wide_avx512 as wide;
            if wide::available() {
                let pass = wide::WidePass {
                    reference: r,
                    distorted: d,
                    filter: pass.filter,
                    shifts: pass.shifts,
                };
                // SAFETY: the CPU supports the pass, checked; the rows were
                // made for this filter's width.
                return unsafe { wide::accumulate(&mut self.wide, &pass, log2, gain_limit) };
            }
        }
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            if let (0, 8, Some(r), Some(d)) =
                (scale, sample_bits, T::as_u8(reference), T::as_u8(distorted))
            {
                let rows = &mut self.rows16;
                if super::moments_u8_avx2::has_vnni() {
                    // SAFETY: the CPU supports AVX2 and VNNI, checked; the
                    // rows were made for this filter's width.
                    return unsafe {
                        super::moments_u8_avx2::accumulate_vnni(rows, r, d, log2, gain_limit)
                    };
                }
                // SAFETY: the CPU supports AVX2, checked just above; the
                // rows were made for this filter's width.
                return unsafe { super::moments_u8_avx2::accumulate(rows, r, d, log2, gain_limit) };
            }
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { accumulate_avx2(&mut self.rows, &pass) };
        }
        accumulate(&mut self.rows, &pass)
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn accumulate_avx2<T: VifSample>(
    rows: &mut PaddedRows,
    pass: &Pass<'_, '_, T>,
) -> ScaleSums {
    let mut sums = Sums {
        scalar: ScaleSums::default(),
        vector: Some(VecSums::new(pass.log2, pass.gain_limit)),
    };
    accumulate_into(rows, pass, &mut sums);
    sums.finish()
}

/// Where the horizontal pass puts the statistic: whole blocks into the
/// vector sums where the CPU has them, the rest into the scalar sums.
struct Sums {
    scalar: ScaleSums,
    /// Only made on CPUs with AVX2.
    #[cfg(target_arch = "x86_64")]
    vector: Option<VecSums>,
}

impl Sums {
    fn finish(mut self) -> ScaleSums {
        #[cfg(target_arch = "x86_64")]
        if let Some(v) = &mut self.vector {
            v.finish(&mut self.scalar);
        }
        self.scalar
    }

    #[inline(always)]
    fn add_block<const B: usize>(&mut self, block: &MomentBlock<B>, log2: &Log2Table, gain: f64) {
        #[cfg(target_arch = "x86_64")]
        if let (8, Some(v)) = (B, &mut self.vector) {
            use std::arch::x86_64::{__m256i, _mm256_loadu_si256};
            let load = |lanes: &[u32; B]| -> __m256i {
                // SAFETY: B is 8: 32 bytes.
                unsafe { _mm256_loadu_si256(lanes.as_ptr().cast()) }
            };
            // SAFETY: the vector sums exist only on CPUs with AVX2.
            unsafe {
                v.add(
                    load(&block.mu1),
                    load(&block.mu2),
                    load(&block.xx),
                    load(&block.yy),
                    load(&block.xy),
                )
            };
            return;
        }
        self.scalar.add_block(block, log2, gain);
    }
}

#[inline(always)]
fn accumulate<T: VifSample>(rows: &mut PaddedRows, pass: &Pass<'_, '_, T>) -> ScaleSums {
    let mut sums = Sums {
        scalar: ScaleSums::default(),
        #[cfg(target_arch = "x86_64")]
        vector: None,
    };
    accumulate_into(rows, pass, &mut sums);
    sums.finish()
}

#[inline(always)]
fn accumulate_into<T: VifSample>(rows: &mut PaddedRows, pass: &Pass<'_, '_, T>, sums: &mut Sums) {
    let (w, h) = (pass.reference.width, pass.reference.height);
    let half = pass.filter.len() / 2;
    for i in 0..h {
        vertical(rows, pass, i);
        let columns = MAX_HALF - half..MAX_HALF + w + half;
        for row in [&mut rows.mu1, &mut rows.mu2] {
            mirror_edges(&mut row[columns.clone()], half);
        }
        for row in [&mut rows.xx, &mut rows.yy, &mut rows.xy] {
            mirror_edges(&mut row[columns.clone()], half);
        }
        horizontal(rows, pass, sums);
    }
}

/// Vertical pass of row `i` into the middle of the padded rows.
#[inline(always)]
fn vertical<T: VifSample>(rows: &mut PaddedRows, pass: &Pass<'_, '_, T>, i: usize) {
    let (w, h) = (pass.reference.width, pass.reference.height);
    let taps = pass.filter.len();
    let half = taps / 2;
    // The source rows of each tap, mirrored at the picture's edges.
    let mut ref_rows: [&[T]; FILTERS[0].len()] = [&[]; FILTERS[0].len()];
    let mut dis_rows = ref_rows;
    for k in 0..taps {
        let y = mirror(i as isize + k as isize - half as isize, h);
        ref_rows[k] = pass.reference.row(y);
        dis_rows[k] = pass.distorted.row(y);
    }
    let (ref_rows, dis_rows) = (&ref_rows[..taps], &dis_rows[..taps]);
    let mut j = 0;
    while j + VERTICAL_LANES <= w {
        vertical_block::<T, VERTICAL_LANES>(rows, pass, ref_rows, dis_rows, j);
        j += VERTICAL_LANES;
    }
    for j in j..w {
        vertical_block::<T, 1>(rows, pass, ref_rows, dis_rows, j);
    }
}

/// Columns `j..j + B` of the vertical pass.
#[inline(always)]
fn vertical_block<T: VifSample, const B: usize>(
    rows: &mut PaddedRows,
    pass: &Pass<'_, '_, T>,
    ref_rows: &[&[T]],
    dis_rows: &[&[T]],
    j: usize,
) {
    let mut mu1 = [0u32; B];
    let mut mu2 = [0u32; B];
    let mut xx = [T::SquareAcc::default(); B];
    let mut yy = [T::SquareAcc::default(); B];
    let mut xy = [T::SquareAcc::default(); B];
    for ((&c, r), d) in pass.filter.iter().zip(ref_rows).zip(dis_rows) {
        let (r, d) = (&r[j..j + B], &d[j..j + B]);
        let ci = u32::from(c);
        for l in 0..B {
            mu1[l] = mu1[l].wrapping_add(ci * r[l].into());
        }
        for l in 0..B {
            mu2[l] = mu2[l].wrapping_add(ci * d[l].into());
        }
        for l in 0..B {
            xx[l] = xx[l].add(T::weighted_product(c, r[l], r[l]));
        }
        for l in 0..B {
            yy[l] = yy[l].add(T::weighted_product(c, d[l], d[l]));
        }
        for l in 0..B {
            xy[l] = xy[l].add(T::weighted_product(c, r[l], d[l]));
        }
    }
    let at = MAX_HALF + j;
    let shifts = pass.shifts;
    for l in 0..B {
        rows.mu1[at + l] = round_shift_u32(mu1[l], shifts.mean);
        rows.mu2[at + l] = round_shift_u32(mu2[l], shifts.mean);
        rows.xx[at + l] = f64::from(xx[l].narrow(shifts.square));
        rows.yy[at + l] = f64::from(yy[l].narrow(shifts.square));
        rows.xy[at + l] = f64::from(xy[l].narrow(shifts.square));
    }
}

/// Horizontal pass over the padded rows, each pixel into `sums`.
#[inline(always)]
fn horizontal<T>(rows: &PaddedRows, pass: &Pass<'_, '_, T>, sums: &mut Sums) {
    let w = pass.reference.width;
    let mut j = 0;
    while j + LANES <= w {
        horizontal_block::<T, LANES>(rows, pass, j, sums);
        j += LANES;
    }
    for j in j..w {
        horizontal_block::<T, 1>(rows, pass, j, sums);
    }
}

/// Columns `j..j + B` of the horizontal pass. The filters are symmetric,
/// so mirrored taps are summed before weighting (exact: the integer sums
/// wrap as C's do and their true values fit; the double sums are exact
/// integers).
#[inline(always)]
fn horizontal_block<T, const B: usize>(
    rows: &PaddedRows,
    pass: &Pass<'_, '_, T>,
    j: usize,
    sums: &mut Sums,
) {
    let taps = pass.filter.len();
    let half = taps / 2;
    let first = MAX_HALF - half + j;
    let mut mu1 = [0u32; B];
    let mut mu2 = [0u32; B];
    let mut xx = [0f64; B];
    let mut yy = [0f64; B];
    let mut xy = [0f64; B];
    for (k, &c) in pass.filter[..half].iter().enumerate() {
        let (s, t) = (first + k, first + taps - 1 - k);
        let (ci, cf) = (u32::from(c), f64::from(c));
        let (m1a, m1b) = (&rows.mu1[s..s + B], &rows.mu1[t..t + B]);
        let (m2a, m2b) = (&rows.mu2[s..s + B], &rows.mu2[t..t + B]);
        for l in 0..B {
            mu1[l] = mu1[l].wrapping_add(ci.wrapping_mul(m1a[l].wrapping_add(m1b[l])));
        }
        for l in 0..B {
            mu2[l] = mu2[l].wrapping_add(ci.wrapping_mul(m2a[l].wrapping_add(m2b[l])));
        }
        for (acc, row) in [
            (&mut xx, &rows.xx),
            (&mut yy, &rows.yy),
            (&mut xy, &rows.xy),
        ] {
            let (a, b) = (&row[s..s + B], &row[t..t + B]);
            for l in 0..B {
                acc[l] += cf * (a[l] + b[l]);
            }
        }
    }
    let s = first + half;
    let (ci, cf) = (u32::from(pass.filter[half]), f64::from(pass.filter[half]));
    let (m1, m2) = (&rows.mu1[s..s + B], &rows.mu2[s..s + B]);
    for l in 0..B {
        mu1[l] = mu1[l].wrapping_add(ci.wrapping_mul(m1[l]));
        mu2[l] = mu2[l].wrapping_add(ci.wrapping_mul(m2[l]));
    }
    for (acc, row) in [
        (&mut xx, &rows.xx),
        (&mut yy, &rows.yy),
        (&mut xy, &rows.xy),
    ] {
        let x = &row[s..s + B];
        for l in 0..B {
            acc[l] += cf * x[l];
        }
    }
    let block = MomentBlock {
        mu1,
        mu2,
        xx: xx.map(round_q16),
        yy: yy.map(round_q16),
        xy: xy.map(round_q16),
    };
    sums.add_block(&block, pass.log2, pass.gain_limit);
}

/// `(v + 2^15) >> 16` for an integer-valued double `0 <= v < 2^52`, as
/// libvmaf narrows its 64-bit sums to 32 bits.
#[inline(always)]
fn round_q16(v: f64) -> u32 {
    const BIAS: f64 = 4503599627370496.0; // 2^52
    let q = ((v + 32768.0) * (1.0 / 65536.0)).floor();
    (q + BIAS).to_bits().wrapping_sub(BIAS.to_bits()) as u32
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A picture with flat areas, texture, and (in the distorted one)
    /// inverted and noisy areas, so every branch of the statistic runs.
    pub fn test_pair(w: usize, h: usize, max: u32, seed: u32) -> (Vec<u16>, Vec<u16>) {
        let mut state = seed | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state
        };
        let (mut r, mut d) = (vec![0u16; w * h], vec![0u16; w * h]);
        for y in 0..h {
            for x in 0..w {
                let region = (x * 4 / w) + 4 * (y * 2 / h);
                let base = (x * 7 + y * 3) as u32 % (max / 2 + 1);
                let texture = next() % (max / 2 + 1);
                let rv = match region % 4 {
                    0 => max / 3,
                    1 => base,
                    _ => (base + texture).min(max),
                };
                let dv = match region % 3 {
                    0 => rv,
                    1 => max - rv,
                    _ => (rv + next() % (max / 8 + 1)).min(max),
                };
                r[y * w + x] = rv as u16;
                d[y * w + x] = dv as u16;
            }
        }
        (r, d)
    }

    fn plane<T>(data: &[T], w: usize, h: usize) -> PlaneRef<'_, T> {
        PlaneRef {
            data,
            width: w,
            height: h,
            stride: w,
        }
    }

    /// The dispatched pass (AVX2 where the CPU has it) against the portable
    /// code, on odd sizes and every scale's filter.
    #[test]
    fn simd_and_portable_passes_agree() {
        let log2 = Log2Table::get();
        for (w, h) in [(37, 21), (67, 40), (9, 9)] {
            let (r16, d16) = test_pair(w, h, 255, 7);
            let (r8, d8): (Vec<u8>, Vec<u8>) = (
                r16.iter().map(|&v| v as u8).collect(),
                d16.iter().map(|&v| v as u8).collect(),
            );
            let mut filter = MomentFilter::new(w);
            for gain_limit in [100.0, 1.0] {
                let shifts = VerticalShifts::for_bits(8);
                let (r, d) = (plane(&r8, w, h), plane(&d8, w, h));
                let pass = Pass {
                    reference: r,
                    distorted: d,
                    filter: FILTERS[0],
                    shifts,
                    log2,
                    gain_limit,
                };
                let portable = accumulate(&mut filter.rows, &pass);
                let best = filter.accumulate(r, d, 0, 8, log2, gain_limit);
                assert_eq!(portable, best, "8-bit {w}x{h}");
                #[cfg(target_arch = "x86_64")]
                if has_avx2() {
                    use super::super::moments_u8_avx2 as u8_avx2;
                    // SAFETY: AVX2 (and VNNI below) checked; rows sized for w.
                    let avx2 =
                        unsafe { u8_avx2::accumulate(&mut filter.rows16, r, d, log2, gain_limit) };
                    assert_eq!(portable, avx2, "8-bit AVX2 {w}x{h}");
                    if u8_avx2::has_vnni() {
                        // SAFETY: the CPU features were detected by the test's guard above.
                        let vnni = unsafe {
                            u8_avx2::accumulate_vnni(&mut filter.rows16, r, d, log2, gain_limit)
                        };
                        assert_eq!(portable, vnni, "8-bit VNNI {w}x{h}");
                    }
                }
                assert_ne!(portable, ScaleSums::default());
            }
            for (scale, bits) in [(0, 10), (0, 12), (0, 16), (1, 16), (2, 16), (3, 16)] {
                let (r, d) = test_pair(w, h, (1 << bits) - 1, 11 + scale as u32);
                let shifts = VerticalShifts::for_bits(bits);
                let (r, d) = (plane(&r, w, h), plane(&d, w, h));
                let pass = Pass {
                    reference: r,
                    distorted: d,
                    filter: FILTERS[scale],
                    shifts,
                    log2,
                    gain_limit: 100.0,
                };
                let portable = accumulate(&mut filter.rows, &pass);
                let best = filter.accumulate(r, d, scale, bits, log2, 100.0);
                assert_eq!(portable, best, "{bits}-bit scale {scale} {w}x{h}");
            }
        }
    }

    /// The 16-bit multiply-add pass of scale 0 above 8 bits, called
    /// directly (so that a fallback cannot hide it), against the portable
    /// code at every bit depth it takes, on widths with and without a
    /// partial vector; and its refusal of a sample above the bit depth.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn wide_sample_vnni_pass_matches_the_portable_pass() {
        use super::super::moments_u16_vnni as u16_vnni;
        if !u16_vnni::available() {
            eprintln!("skipped: this CPU lacks AVX-512 VNNI and VBMI");
            return;
        }
        let log2 = Log2Table::get();
        for (w, h) in [(37, 21), (64, 19), (97, 33), (70, 22), (33, 16), (9, 9)] {
            let mut filter = MomentFilter::new(w);
            for bits in 9..=u16_vnni::MAX_BITS {
                let (r, d) = test_pair(w, h, (1 << bits) - 1, bits + w as u32);
                let (r, d) = (plane(&r, w, h), plane(&d, w, h));
                for gain_limit in [100.0, 1.0] {
                    let pass = Pass {
                        reference: r,
                        distorted: d,
                        filter: FILTERS[0],
                        shifts: VerticalShifts::for_bits(bits),
                        log2,
                        gain_limit,
                    };
                    let portable = accumulate(&mut filter.rows, &pass);
                    // SAFETY: the CPU features were checked above.
                    let vnni = unsafe {
                        u16_vnni::accumulate(&mut filter.ring, r, d, bits, log2, gain_limit)
                    };
                    assert_eq!(Some(portable), vnni, "{bits}-bit {w}x{h}");
                    assert_ne!(portable, ScaleSums::default());
                }
            }
            // One sample one above the bit depth, in the last row.
            let (mut r, d) = test_pair(w, h, 1023, 5);
            r[w * h - 1] = 1024;
            let (r, d) = (plane(&r, w, h), plane(&d, w, h));
            // SAFETY: as above.
            let refused = unsafe { u16_vnni::accumulate(&mut filter.ring, r, d, 10, log2, 1.0) };
            assert_eq!(refused, None, "{w}x{h}");
        }
    }

    /// The AVX2 16-bit multiply-add pass, called directly (so that a
    /// fallback cannot hide it), against the portable code: scale 0 at
    /// every bit depth it takes and scales 1 and 2, on widths with and
    /// without a partial vector, with samples at their extremes; its
    /// refusal of scale 3, of 8-bit samples and of a sample above the bit
    /// depth.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn avx2_16_bit_pass_matches_the_portable_pass() {
        use super::super::moments_u16_avx2 as u16_avx2;
        if !has_avx2() {
            eprintln!("skipped: this CPU lacks AVX2");
            return;
        }
        let log2 = Log2Table::get();
        for (w, h) in [(37, 21), (64, 19), (97, 33), (70, 22), (33, 16), (16, 16)] {
            let mut filter = MomentFilter::new(w);
            let cases = (9..=16).map(|bits| (0, bits)).chain([(1, 16), (2, 16)]);
            for (scale, bits) in cases {
                let max = (1u32 << bits) - 1;
                let (r, d) = test_pair(w, h, max, bits + w as u32 + scale as u32);
                let (flat, full) = (vec![max as u16; w * h], vec![0u16; w * h]);
                let pairs = [(&r, &d), (&flat, &flat), (&flat, &full), (&full, &flat)];
                for (n, (r, d)) in pairs.into_iter().enumerate() {
                    let (r, d) = (plane(r, w, h), plane(d, w, h));
                    for gain_limit in [100.0, 1.0] {
                        let pass = Pass {
                            reference: r,
                            distorted: d,
                            filter: FILTERS[scale],
                            shifts: VerticalShifts::for_bits(bits),
                            log2,
                            gain_limit,
                        };
                        let portable = accumulate(&mut filter.rows, &pass);
                        // SAFETY: AVX2 checked above.
                        let avx2 = unsafe {
                            u16_avx2::accumulate(
                                &mut filter.ring_avx2,
                                r,
                                d,
                                scale,
                                bits,
                                log2,
                                gain_limit,
                            )
                        };
                        let case = format!("{bits}-bit scale {scale} {w}x{h} pair {n}");
                        assert_eq!(Some(portable), avx2, "{case}");
                        if n == 0 {
                            assert_ne!(portable, ScaleSums::default(), "{case}");
                        }
                    }
                }
            }
            let (mut r, d) = test_pair(w, h, 1023, 5);
            let (pr, pd) = (plane(&r, w, h), plane(&d, w, h));
            let mut refused = |scale, bits| {
                // SAFETY: as above.
                unsafe {
                    u16_avx2::accumulate(&mut filter.ring_avx2, pr, pd, scale, bits, log2, 1.0)
                }
            };
            assert_eq!(refused(3, 16), None, "scale 3, {w}x{h}");
            assert_eq!(refused(0, 8), None, "8-bit, {w}x{h}");
            // One sample one above the bit depth, in the last row.
            r[w * h - 1] = 1024;
            let pr = plane(&r, w, h);
            // SAFETY: as above.
            let over =
                unsafe { u16_avx2::accumulate(&mut filter.ring_avx2, pr, pd, 0, 10, log2, 1.0) };
            assert_eq!(over, None, "{w}x{h}");
        }
    }

    /// Samples above the declared bit depth overflow libvmaf's 32-bit
    /// sums; every path wraps them as C does (the double-precision path by
    /// reducing modulo 2^32), so even such input gives the same bits.
    #[test]
    fn samples_above_the_bit_depth_wrap_alike_on_every_path() {
        let log2 = Log2Table::get();
        let (w, h) = (45, 23);
        let (r, d) = test_pair(w, h, u32::from(u16::MAX), 3);
        let (r, d) = (plane(&r, w, h), plane(&d, w, h));
        let mut filter = MomentFilter::new(w);
        for bits in [10, 12] {
            let pass = Pass {
                reference: r,
                distorted: d,
                filter: FILTERS[0],
                shifts: VerticalShifts::for_bits(bits),
                log2,
                gain_limit: 100.0,
            };
            let portable = accumulate(&mut filter.rows, &pass);
            let best = filter.accumulate(r, d, 0, bits, log2, 100.0);
            assert_eq!(portable, best, "{bits}-bit pass fed 16-bit samples");
        }
    }
}
