//! Decoupling: splits each distorted detail coefficient into the part that
//! restores the reference (`restored`, a gain of at most 1 on the reference
//! coefficient) and the additive impairment (`additive` = distorted -
//! restored). Where the reference and distorted (h, v) vectors point within
//! 1 degree, an enhancement up to `adm_enhn_gain_limit` counts as restored.
//!
//! A fractional gain limit makes the enhanced coefficient fractional, and
//! libvmaf turns it back into an integer two ways: its vector code rounds
//! to nearest (even), its scalar code truncates. Which columns take which
//! follows its AVX-512 loop ([`vector_decoupled`], ADR 0039).

use crate::cpu::{has_avx512, simd_dispatch};
use std::ops::Range;

/// One row's coefficients to decouple: the reference and distorted ones
/// of the three orientations (h, v, d), and where the restored and
/// additive ones go; all of one length.
pub struct Row<'a, C> {
    pub reference: [&'a [C]; 3],
    pub distorted: [&'a [C]; 3],
    pub restored: [&'a mut [C]; 3],
    pub additive: [&'a mut [C]; 3],
}

impl<C> Row<'_, C> {
    /// The first `mid` coefficients and the rest, as two rows.
    fn split_at(self, mid: usize) -> (Self, Self) {
        fn split<C>(s: [&[C]; 3], mid: usize) -> [[&[C]; 3]; 2] {
            let [a, b, c] = s.map(|s| s.split_at(mid));
            [[a.0, b.0, c.0], [a.1, b.1, c.1]]
        }
        fn split_mut<C>(s: [&mut [C]; 3], mid: usize) -> [[&mut [C]; 3]; 2] {
            let [a, b, c] = s.map(|s| s.split_at_mut(mid));
            [[a.0, b.0, c.0], [a.1, b.1, c.1]]
        }
        let [reference, reference_rest] = split(self.reference, mid);
        let [distorted, distorted_rest] = split(self.distorted, mid);
        let [restored, restored_rest] = split_mut(self.restored, mid);
        let [additive, additive_rest] = split_mut(self.additive, mid);
        (
            Row {
                reference,
                distorted,
                restored,
                additive,
            },
            Row {
                reference: reference_rest,
                distorted: distorted_rest,
                restored: restored_rest,
                additive: additive_rest,
            },
        )
    }

    /// The row's length (every slice checked to have it).
    pub fn len(&self) -> usize {
        let n = self.reference[0].len();
        let lens = self
            .reference
            .iter()
            .chain(&self.distorted)
            .map(|s| s.len());
        let out = self.restored.iter().chain(&self.additive).map(|s| s.len());
        assert!(
            lens.chain(out).all(|len| len == n),
            "decoupling: rows of different lengths"
        );
        n
    }
}

/// How an enhanced coefficient, `restored * gain_limit` clamped to the
/// distorted one, becomes an integer again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    /// To nearest, ties to even: libvmaf's vector code (`cvtpd_epi32`).
    Nearest,
    /// Toward zero: libvmaf's scalar code (C's conversion).
    Truncate,
}

/// The enhancement gain limit, and how its products are rounded.
#[derive(Debug, Clone, Copy)]
pub struct GainLimit {
    pub limit: f64,
    pub rounding: Rounding,
}

impl GainLimit {
    /// Rounds a clamped enhanced coefficient (finite, between 0 and an i32).
    #[inline(always)]
    fn round(self, limited: f64) -> f64 {
        match self.rounding {
            Rounding::Nearest => limited.round_ties_even(),
            Rounding::Truncate => limited.trunc(),
        }
    }
}

/// A detail coefficient: 16 bits at scale 0, 32 bits at scales 1-3. The two
/// widths compute the gain t/o differently (direct reciprocal table vs.
/// normalised divisor), exactly as libvmaf does.
pub trait Coef: Copy + Default + Send + Sync + 'static {
    /// Decouples one row: `restored` and `additive` from `reference` and
    /// `distorted`.
    fn decouple(row: Row<'_, Self>, gain: GainLimit);
}

impl Coef for i16 {
    fn decouple(row: Row<'_, i16>, gain: GainLimit) {
        decouple_fine(true, row, gain)
    }
}

impl Coef for i32 {
    fn decouple(row: Row<'_, i32>, gain: GainLimit) {
        decouple_coarse(true, row, gain)
    }
}

/// The columns of a `width`-wide band that libvmaf's AVX-512 code
/// decouples in 16-column blocks: it decouples columns `left..right`
/// (`left` one short of the scored border, where the masking's neighbours
/// start, as in `Region::with_halo`; `right = width - left + 2`; both
/// within the band) and leaves the last `(right - left) % 16` to scalar
/// code.
pub fn vector_decoupled(width: usize) -> Range<usize> {
    // libvmaf's `int left = w * ADM_BORDER_FACTOR - 0.5 - 1` (C's
    // truncation), at least 0.
    let left = (width as f64 * 0.1 - 0.5 - 1.0).max(0.0) as usize;
    let right = (width + 2).saturating_sub(left).min(width);
    left..left + right.saturating_sub(left) / 16 * 16
}

/// Decouples a row that starts at the first column libvmaf decouples,
/// rounding a fractional gain limit's products as libvmaf's AVX-512 build
/// does: to nearest in the first `vector_columns` coefficients, truncated
/// after them. (A whole gain limit's products are whole: one pass.)
pub fn decouple_as_libvmaf<C: Coef>(row: Row<'_, C>, gain_limit: f64, vector_columns: usize) {
    let gain = |rounding| GainLimit {
        limit: gain_limit,
        rounding,
    };
    if gain_limit.fract() == 0.0 {
        return C::decouple(row, gain(Rounding::Truncate));
    }
    let mid = vector_columns.min(row.len());
    let (blocks, rest) = row.split_at(mid);
    C::decouple(blocks, gain(Rounding::Nearest));
    C::decouple(rest, gain(Rounding::Truncate));
}

/// cos(1 degree)^2, stored as float as in libvmaf.
pub(crate) fn cos_1deg_sq() -> f64 {
    let c = (1.0 * std::f64::consts::PI / 180.0).cos();
    (c * c) as f32 as f64
}

/// True when the (h, v) vectors of reference `o` and distorted `t` are less
/// than 1 degree apart. libvmaf rounds the int64 dot product and squared
/// norms to float, then compares in double; `dot`, `o_mag` and `t_mag` are
/// given exactly (as f64 sums of exact products).
#[inline(always)]
fn within_1deg(cos_sq: f64, dot: f64, o_mag: f64, t_mag: f64) -> bool {
    let dot = dot as f32 as f64 / 4096.0;
    let o_mag = o_mag as f32 as f64 / 4096.0;
    let t_mag = t_mag as f32 as f64 / 4096.0;
    dot >= 0.0 && dot * dot >= cos_sq * o_mag * t_mag
}

/// Applies the enhancement gain limit to the restored coefficient `rst` of
/// an aligned pair: `rst * gain_limit`, but not past the distorted `t`.
/// libvmaf applies it when (k / 2^15) * (o / 64), in float, is non-zero:
/// with k in [0, 2^15] that is when k > 0 and o != 0, with the sign of o.
#[inline(always)]
fn gain_limited(rst: i32, t: i32, o: i32, k: i32, aligned: bool, gain: GainLimit) -> i32 {
    let boosted = rst as f64 * gain.limit;
    let t_f = t as f64;
    let limited = if o > 0 {
        boosted.min(t_f)
    } else {
        boosted.max(t_f)
    };
    // SAFETY: `limited` is finite and lies between 0 and `t` (an i32), and
    // so does its rounding; the unchecked conversion vectorizes.
    let limited = unsafe { gain.round(limited).to_int_unchecked::<i32>() };
    if aligned && k > 0 && o != 0 {
        limited
    } else {
        rst
    }
}

/// Scale 0: `t / o` in Q15 is `(DIV_LOOKUP[o] * t + 2^14) >> 15`, with
/// `DIV_LOOKUP[o] = sign(o) * trunc(2^30 / |o|)`. Every step is an exact
/// integer in f64 (|product| < 2^46), which lets the loop vectorize.
#[inline(always)]
fn restore_fine(o: i32, t: i32, aligned: bool, gain: GainLimit) -> i32 {
    let recip = (1_073_741_824.0 / (o.unsigned_abs() as f64)).trunc();
    let recip = if o < 0 { -recip } else { recip };
    let k = ((recip * t as f64 + 16384.0) / 32768.0).floor();
    // The NaN/infinity of o == 0 is discarded here.
    let k = if o == 0 {
        32768.0
    } else {
        k.clamp(0.0, 32768.0)
    };
    // SAFETY: k is an integer in [0, 32768].
    let k = unsafe { k.to_int_unchecked::<i32>() };
    let rst = ((k * o + 16384) >> 15) as i16 as i32;
    gain_limited(rst, t, o, k, aligned, gain) as i16 as i32
}

#[inline(always)]
fn decouple_fine_impl(row: Row<'_, i16>, gain: GainLimit) {
    let n = row.len();
    let cos_sq = cos_1deg_sq();
    let [oh, ov, od] = row.reference.map(|s| &s[..n]);
    let [th, tv, td] = row.distorted.map(|s| &s[..n]);
    let [rh, rv, rd] = row.restored.map(|s| &mut s[..n]);
    let [ah, av, ad] = row.additive.map(|s| &mut s[..n]);
    for j in 0..n {
        let (oh, ov, od) = (oh[j] as i32, ov[j] as i32, od[j] as i32);
        let (th, tv, td) = (th[j] as i32, tv[j] as i32, td[j] as i32);
        // Products of two 16-bit values fit in i32; their sums are exact in f64.
        let dot = (oh * th) as f64 + (ov * tv) as f64;
        let o_mag = (oh * oh) as f64 + (ov * ov) as f64;
        let t_mag = (th * th) as f64 + (tv * tv) as f64;
        let aligned = within_1deg(cos_sq, dot, o_mag, t_mag);
        let (h, v, d) = (
            restore_fine(oh, th, aligned, gain),
            restore_fine(ov, tv, aligned, gain),
            restore_fine(od, td, aligned, gain),
        );
        rh[j] = h as i16;
        rv[j] = v as i16;
        rd[j] = d as i16;
        ah[j] = (th - h) as i16;
        av[j] = (tv - v) as i16;
        ad[j] = (td - d) as i16;
    }
}

/// Decoupling of a row of 16-bit scale-0 coefficients: with AVX-512 if
/// `vector` and the CPU has it (the unit tests run both loops on one
/// machine), else the portable loop compiled for the widest instruction
/// set.
pub(super) fn decouple_fine(vector: bool, row: Row<'_, i16>, gain: GainLimit) {
    #[cfg(target_arch = "x86_64")]
    if vector && has_avx512() {
        // SAFETY: the CPU has AVX-512 (checked above).
        return unsafe { super::decouple_avx512::decouple_fine(row, gain) };
    }
    decouple_fine_avx2(vector, row, gain)
}

/// [`decouple_fine`] without AVX-512: with AVX2 if `vector` and the CPU
/// has it, else the portable loop.
fn decouple_fine_avx2(vector: bool, row: Row<'_, i16>, gain: GainLimit) {
    #[cfg(target_arch = "x86_64")]
    if vector && crate::cpu::has_avx2() {
        // SAFETY: the CPU has AVX2 (checked above).
        return unsafe { super::decouple_avx2::decouple_fine(row, gain) };
    }
    let _ = vector;
    decouple_fine_portable(row, gain)
}

simd_dispatch! {
    /// The portable scale-0 loop.
    fn decouple_fine_portable(row: Row<'_, i16>, gain: GainLimit) => decouple_fine_impl
}

/// Scales 1-3: `t / o` in Q15 from libvmaf's reciprocal table with the
/// divisor reduced to its 15 most significant bits (rounded) and the shift
/// grown by as many bits. The table entry `trunc(2^30 / d)` is computed
/// exactly in f64 instead of looked up, which keeps the loop branch-free.
#[inline(always)]
fn ratio_q15_wide(o: i32, t: i32) -> i64 {
    let abs_o = o.unsigned_abs();
    let shift = if abs_o < 32768 {
        0
    } else {
        17 - abs_o.leading_zeros()
    };
    let divisor = abs_o.wrapping_add((1u32 << shift) >> 1) >> shift;
    // divisor == 0 only for o == 0, which the caller discards.
    let recip = (1_073_741_824.0 / divisor as f64).trunc() as i64;
    let recip = if o < 0 { -recip } else { recip };
    (recip * t as i64 + (1i64 << (14 + shift))) >> (15 + shift)
}

#[inline(always)]
fn restore_coarse(o: i32, t: i32, aligned: bool, gain: GainLimit) -> i32 {
    let k = if o == 0 {
        32768
    } else {
        ratio_q15_wide(o, t).clamp(0, 32768)
    };
    let rst = ((k * o as i64 + 16384) >> 15) as i32;
    gain_limited(rst, t, o, k as i32, aligned, gain)
}

#[inline(always)]
fn decouple_coarse_impl(row: Row<'_, i32>, gain: GainLimit) {
    let n = row.len();
    let cos_sq = cos_1deg_sq();
    let [oh, ov, od] = row.reference.map(|s| &s[..n]);
    let [th, tv, td] = row.distorted.map(|s| &s[..n]);
    let [rh, rv, rd] = row.restored.map(|s| &mut s[..n]);
    let [ah, av, ad] = row.additive.map(|s| &mut s[..n]);
    for j in 0..n {
        let (o, t) = ([oh[j], ov[j], od[j]], [th[j], tv[j], td[j]]);
        // libvmaf's int64 arithmetic; exact in i128 would differ only
        // past 2^63, which 32-bit coefficients cannot reach in practice.
        let [o0, o1] = [o[0] as i64, o[1] as i64];
        let [t0, t1] = [t[0] as i64, t[1] as i64];
        let dot = o0.wrapping_mul(t0).wrapping_add(o1.wrapping_mul(t1));
        let o_mag = o0.wrapping_mul(o0).wrapping_add(o1.wrapping_mul(o1));
        let t_mag = t0.wrapping_mul(t0).wrapping_add(t1.wrapping_mul(t1));
        // int64 -> float rounds once, as i64 -> f32 does.
        let aligned = within_1deg(
            cos_sq,
            dot as f32 as f64,
            o_mag as f32 as f64,
            t_mag as f32 as f64,
        );
        let r = [
            restore_coarse(o[0], t[0], aligned, gain),
            restore_coarse(o[1], t[1], aligned, gain),
            restore_coarse(o[2], t[2], aligned, gain),
        ];
        rh[j] = r[0];
        rv[j] = r[1];
        rd[j] = r[2];
        ah[j] = t[0].wrapping_sub(r[0]);
        av[j] = t[1].wrapping_sub(r[1]);
        ad[j] = t[2].wrapping_sub(r[2]);
    }
}

/// Decoupling of a row of 32-bit coefficients of scales 1-3, as
/// [`decouple_fine`].
pub(super) fn decouple_coarse(vector: bool, row: Row<'_, i32>, gain: GainLimit) {
    #[cfg(target_arch = "x86_64")]
    if vector && has_avx512() {
        // SAFETY: the CPU has AVX-512 (checked above).
        return unsafe { super::decouple_avx512::decouple_coarse(row, gain) };
    }
    let _ = vector;
    decouple_coarse_portable(row, gain)
}

simd_dispatch! {
    /// The portable loop of scales 1-3.
    fn decouple_coarse_portable(row: Row<'_, i32>, gain: GainLimit) => decouple_coarse_impl
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::adm::dwt::Bands;
    use crate::feature::adm::region::Region;
    use crate::feature::adm::tables::DIV_LOOKUP;
    use crate::testing::fuzz::Rng;

    fn gain(limit: f64, rounding: Rounding) -> GainLimit {
        GainLimit { limit, rounding }
    }

    /// libvmaf's scale-0 restore with its table and int64 arithmetic: its
    /// scalar code clamps the enhanced coefficient, then truncates; its
    /// vector code rounds it to nearest, then clamps.
    fn restore_fine_reference(o: i16, t: i16, aligned: bool, gain: GainLimit) -> i16 {
        let k = if o == 0 {
            32768
        } else {
            (((DIV_LOOKUP[(o as i32 + 32768) as usize] as i64 * t as i64 + 16384) >> 15) as i32)
                .clamp(0, 32768)
        };
        let rst = ((k * o as i32 + 16384) >> 15) as i16;
        let f = (k as f32 / 32768.0) * (o as f32 / 64.0);
        let (r, tf) = (rst as f64 * gain.limit, t as f64);
        if gain.rounding == Rounding::Nearest {
            let (r, t) = (r.round_ties_even() as i32, t as i32);
            return if aligned && f > 0.0 {
                r.min(t) as i16
            } else if aligned && f < 0.0 {
                r.max(t) as i16
            } else {
                rst
            };
        }
        if aligned && f > 0.0 {
            (if r < tf { r } else { tf }) as i16
        } else if aligned && f < 0.0 {
            (if r > tf { r } else { tf }) as i16
        } else {
            rst
        }
    }

    #[test]
    fn float_reciprocal_matches_table() {
        let values = [
            -32768, -32767, -20000, -4097, -300, -7, -1, 0, 1, 2, 3, 5, 77, 1000, 4096, 12345,
            32767,
        ];
        for &o in &values {
            for &t in &values {
                for (aligned, limit) in [(false, 100.0), (true, 100.0), (true, 1.0), (true, 1.7)] {
                    for rounding in [Rounding::Nearest, Rounding::Truncate] {
                        let g = gain(limit, rounding);
                        let got = restore_fine(o, t, aligned, g) as i16;
                        let want = restore_fine_reference(o as i16, t as i16, aligned, g);
                        assert_eq!(got, want, "o={o} t={t} aligned={aligned} {g:?}");
                    }
                }
            }
        }
    }

    /// libvmaf's scale 1-3 ratio with its table lookup.
    fn ratio_q15_wide_reference(o: i32, t: i32) -> i64 {
        let abs_o = o.unsigned_abs();
        let (msb, shift) = if abs_o < 32768 {
            (abs_o, 0)
        } else {
            let k = 17 - abs_o.leading_zeros();
            ((abs_o + (1 << (k - 1))) >> k, k)
        };
        let sign = if o < 0 { -1 } else { 1 };
        (DIV_LOOKUP[msb as u16 as usize + 32768] as i64 * t as i64 * sign + (1i64 << (14 + shift)))
            >> (15 + shift)
    }

    #[test]
    fn wide_ratio_matches_table() {
        let values = [
            i32::MIN + 1,
            -2_000_000_000,
            -70000,
            -65537,
            -32769,
            -32768,
            -32767,
            -1,
            1,
            2,
            3,
            32767,
            32768,
            32769,
            65535,
            65536,
            98303,
            1 << 20,
            123_456_789,
            i32::MAX,
        ];
        for &o in &values {
            for &t in &values {
                assert_eq!(
                    ratio_q15_wide(o, t),
                    ratio_q15_wide_reference(o, t),
                    "o={o} t={t}"
                );
            }
        }
    }

    #[test]
    fn wide_ratio_matches_narrow_for_small_divisors() {
        for (o, t) in [(100, 57), (-3000, 1234), (32767, -32768), (5, 5)] {
            let narrow = (DIV_LOOKUP[(o + 32768) as usize] as i64 * t as i64 + 16384) >> 15;
            assert_eq!(narrow, ratio_q15_wide(o, t), "{o} {t}");
        }
    }

    /// Bands of `w` x `h` coefficients: small values, the extremes, and a
    /// distorted picture near the reference so that many pairs align.
    fn fine_pair(w: usize, h: usize, seed: u64) -> (Bands<i16>, Bands<i16>) {
        let mut rng = Rng(seed);
        let mut next = move || (rng.next_u64() >> 32) as u32;
        let (mut o, mut t) = (Bands::with_capacity(w, h), Bands::with_capacity(w, h));
        for band in 0..3 {
            let (ob, tb) = match band {
                0 => (&mut o.h, &mut t.h),
                1 => (&mut o.v, &mut t.v),
                _ => (&mut o.d, &mut t.d),
            };
            for (ov, tv) in ob.iter_mut().zip(tb.iter_mut()) {
                let extreme = [i16::MIN, i16::MIN + 1, -1, 0, 1, i16::MAX][next() as usize % 6];
                *ov = match next() % 8 {
                    0 => extreme,
                    1 => next() as i16,
                    _ => (next() % 601) as i16 - 300,
                };
                *tv = match next() % 8 {
                    0 => extreme,
                    1 => next() as i16,
                    2 => *ov,
                    3 => ov.saturating_mul(2),
                    _ => ov.saturating_add((next() % 41) as i16 - 20),
                };
            }
        }
        (o, t)
    }

    #[test]
    fn avx512_fine_matches_portable() {
        if !has_avx512() {
            eprintln!("skipped: this CPU has no AVX-512");
            return;
        }
        for (w, h, seed) in [(37, 9, 1), (64, 5, 2), (161, 7, 3), (16, 3, 4)] {
            let (o, t) = fine_pair(w, h, seed);
            assert_loops_agree(&o, &t, decouple_fine);
        }
    }

    #[test]
    fn avx2_fine_matches_portable() {
        if !crate::cpu::has_avx2() {
            eprintln!("skipped: this CPU has no AVX2");
            return;
        }
        for (w, h, seed) in [(37, 9, 1), (64, 5, 2), (161, 7, 3), (16, 3, 4), (8, 3, 5)] {
            let (o, t) = fine_pair(w, h, seed);
            assert_loops_agree(&o, &t, decouple_fine_avx2);
        }
    }

    /// A decoupling entry point: (vector, row, gain limit).
    type Decouple<C> = fn(bool, Row<'_, C>, GainLimit);

    /// `decouple` over the rows of `region`, the coefficients outside it
    /// left as they were.
    #[allow(clippy::too_many_arguments)]
    fn decouple_region<C: Coef>(
        decouple: Decouple<C>,
        vector: bool,
        o: &Bands<C>,
        t: &Bands<C>,
        region: &Region,
        gain: GainLimit,
        r: &mut Bands<C>,
        a: &mut Bands<C>,
    ) {
        let w = o.width;
        for i in region.top..region.bottom {
            let cols = i * w + region.left..i * w + region.right;
            let row = Row {
                reference: o.slices(cols.clone()),
                distorted: t.slices(cols.clone()),
                restored: r.slices_mut(cols.clone()),
                additive: a.slices_mut(cols),
            };
            decouple(vector, row, gain);
        }
    }

    /// Runs `decouple` with and without AVX-512 on the whole band and on an
    /// inner region, with whole and fractional gain limits, and compares
    /// every output coefficient (those outside the region must be left).
    fn assert_loops_agree<C: Coef + PartialEq + std::fmt::Debug + From<i8>>(
        o: &Bands<C>,
        t: &Bands<C>,
        decouple: Decouple<C>,
    ) {
        let (w, h) = (o.width, o.height);
        let whole = Region {
            top: 0,
            bottom: h,
            left: 0,
            right: w,
        };
        let inner = Region {
            top: 1,
            bottom: h - 1,
            left: 3,
            right: w - 2,
        };
        for region in [whole, inner] {
            let gains = [100.0, 1.0, 1.7, 37.25].map(|limit| {
                [Rounding::Nearest, Rounding::Truncate].map(|rounding| gain(limit, rounding))
            });
            for gain in gains.into_iter().flatten() {
                let run = |vector| {
                    let mut r = Bands::with_capacity(w, h);
                    let mut a = Bands::with_capacity(w, h);
                    for b in [&mut r.h, &mut r.v, &mut r.d, &mut a.h, &mut a.v, &mut a.d] {
                        b.fill(C::from(7));
                    }
                    decouple_region(decouple, vector, o, t, &region, gain, &mut r, &mut a);
                    [r.h, r.v, r.d, a.h, a.v, a.d]
                };
                assert_eq!(run(true), run(false), "{w}x{h} {region:?} {gain:?}");
            }
        }
    }

    /// Coarse bands: values of every magnitude up to the i32 extremes, and a
    /// distorted picture near the reference.
    fn coarse_pair(w: usize, h: usize, seed: u64) -> (Bands<i32>, Bands<i32>) {
        let mut rng = Rng(seed);
        let mut next = move || (rng.next_u64() >> 32) as u32;
        let (mut o, mut t) = (Bands::with_capacity(w, h), Bands::with_capacity(w, h));
        for band in 0..3 {
            let (ob, tb) = match band {
                0 => (&mut o.h, &mut t.h),
                1 => (&mut o.v, &mut t.v),
                _ => (&mut o.d, &mut t.d),
            };
            for (ov, tv) in ob.iter_mut().zip(tb.iter_mut()) {
                let extreme = [
                    i32::MIN,
                    i32::MIN + 1,
                    -32769,
                    -32768,
                    -1,
                    0,
                    1,
                    32767,
                    32768,
                    65535,
                    i32::MAX,
                ][next() as usize % 11];
                // A random magnitude: 2^0 .. 2^31.
                let sized = |r: u32, bits: u32| (r as i32) >> (31 - bits.min(31));
                *ov = match next() % 8 {
                    0 => extreme,
                    1 => next() as i32,
                    _ => sized(next(), next() % 32),
                };
                *tv = match next() % 8 {
                    0 => extreme,
                    1 => next() as i32,
                    2 => *ov,
                    3 => ov.saturating_mul(2),
                    4 => *ov / 3,
                    _ => ov.saturating_add(sized(next(), next() % 20)),
                };
            }
        }
        (o, t)
    }

    #[test]
    fn avx512_coarse_matches_portable() {
        if !has_avx512() {
            eprintln!("skipped: this CPU has no AVX-512");
            return;
        }
        for (w, h, seed) in [(37, 9, 5), (64, 5, 6), (161, 7, 7), (8, 3, 8), (300, 40, 9)] {
            let (o, t) = coarse_pair(w, h, seed);
            assert_loops_agree(&o, &t, decouple_coarse);
        }
    }

    #[test]
    fn vector_fine_loops_align_the_extreme_vectors() {
        // (h, v) = (-2^15, -2^15) against itself: the dot product and norms
        // are 2^31, past i32. The pair is aligned, so the diagonal's
        // enhancement (1000 -> 2000) counts as restored under a gain limit
        // of 100. Every loop the CPU runs (AVX-512 where it has it, AVX2,
        // the portable one).
        let mut o = Bands::with_capacity(16, 1);
        o.h.fill(i16::MIN);
        o.v.fill(i16::MIN);
        o.d.fill(1000);
        let mut t = o.clone();
        t.d.fill(2000);
        let region = Region {
            top: 0,
            bottom: 1,
            left: 0,
            right: 16,
        };
        if !has_avx512() {
            eprintln!("this CPU has no AVX-512: its loop is not checked");
        }
        let fine: [Decouple<i16>; 2] = [decouple_fine, decouple_fine_avx2];
        for (vector, decouple) in [(true, fine[0]), (true, fine[1]), (false, fine[0])] {
            let (mut r, mut a) = (Bands::with_capacity(16, 1), Bands::with_capacity(16, 1));
            let gain = gain(100.0, Rounding::Truncate);
            decouple_region(decouple, vector, &o, &t, &region, gain, &mut r, &mut a);
            assert_eq!(r.h, vec![i16::MIN; 16], "vector {vector}");
            assert_eq!(r.d, vec![2000; 16], "vector {vector}");
            assert_eq!(a.d, vec![0; 16], "vector {vector}");
        }
    }

    #[test]
    fn enhancement_is_capped_by_gain_limit() {
        // t = 2o: the gain 2 is clamped to 1 unless the enhancement gain
        // limit lets the aligned coefficient grow back to t.
        let g = |limit| gain(limit, Rounding::Truncate);
        assert_eq!(restore_fine(1000, 2000, true, g(1.0)), 1000);
        assert_eq!(restore_fine(1000, 2000, true, g(100.0)), 2000);
        assert_eq!(restore_fine(1000, 2000, true, g(1.5)), 1500);
        assert_eq!(restore_fine(1000, 2000, false, g(100.0)), 1000);
        assert_eq!(restore_coarse(40000, 80000, true, g(100.0)), 80000);
        assert_eq!(restore_coarse(-40000, -40000, false, g(1.0)), -40000);
    }

    #[test]
    fn fractional_enhancements_round_as_libvmaf_code_does() {
        // 1001 * 1.5 = 1501.5 and 1003 * 1.5 = 1504.5: the vector code's
        // rounding takes the even neighbour, the scalar code truncates.
        let (nearest, truncate) = (gain(1.5, Rounding::Nearest), gain(1.5, Rounding::Truncate));
        assert_eq!(restore_fine(1001, 3000, true, nearest), 1502);
        assert_eq!(restore_fine(1003, 3000, true, nearest), 1504);
        assert_eq!(restore_fine(1001, 3000, true, truncate), 1501);
        assert_eq!(restore_fine(-1001, -3000, true, nearest), -1502);
        assert_eq!(restore_fine(-1001, -3000, true, truncate), -1501);
        assert_eq!(restore_coarse(40001, 90000, true, nearest), 60002);
        assert_eq!(restore_coarse(40001, 90000, true, truncate), 60001);
        // Clamped to t, both roundings agree.
        assert_eq!(restore_fine(1001, 1200, true, nearest), 1200);
    }

    #[test]
    fn libvmaf_vector_blocks_start_where_the_masking_neighbours_do() {
        for w in 1..5000 {
            let halo = Region::scored(w, 1).with_halo(w, 1);
            assert_eq!(vector_decoupled(w).start, halo.left, "width {w}");
        }
        // 1920 / 2 = 960: left 94, right 868, 774 columns, 48 blocks + 6.
        assert_eq!(vector_decoupled(960), 94..862);
        // Small bands keep every column (left 0, right the width).
        assert_eq!(vector_decoupled(17), 0..16);
        assert_eq!(vector_decoupled(15), 0..0);
    }

    #[test]
    fn a_fractional_gain_rounds_the_vector_columns_only() {
        // Every coefficient 1001 against 3000, aligned (v = h): 1501.5.
        let w = 40;
        let mut o = Bands::with_capacity(w, 1);
        let mut t = Bands::with_capacity(w, 1);
        for b in [&mut o.h, &mut o.v, &mut o.d] {
            b.fill(1001);
        }
        for b in [&mut t.h, &mut t.v, &mut t.d] {
            b.fill(3000);
        }
        let (mut r, mut a) = (Bands::with_capacity(w, 1), Bands::with_capacity(w, 1));
        let mut decouple = |gain_limit| {
            let row = Row {
                reference: o.slices(0..w),
                distorted: t.slices(0..w),
                restored: r.slices_mut(0..w),
                additive: a.slices_mut(0..w),
            };
            decouple_as_libvmaf(row, gain_limit, 32);
            (r.clone(), a.clone())
        };
        let (r, a) = decouple(1.5);
        assert_eq!(r.h[..32], [1502; 32]);
        assert_eq!(r.h[32..], [1501; 8]);
        assert_eq!(a.d[31..33], [3000 - 1502, 3000 - 1501]);
        // A whole gain: one pass, no rounding to choose.
        let (r, _) = decouple(2.0);
        assert_eq!(r.v, vec![2002; w]);
    }
}
