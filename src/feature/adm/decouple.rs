//! Decoupling: splits each distorted detail coefficient into the part that
//! restores the reference (`restored`, a gain of at most 1 on the reference
//! coefficient) and the additive impairment (`additive` = distorted -
//! restored). Where the reference and distorted (h, v) vectors point within
//! 1 degree, an enhancement up to `adm_enhn_gain_limit` counts as restored.

use super::dwt::Bands;
use super::region::Region;
use super::tables::DIV_LOOKUP;

/// A detail coefficient: 16 bits at scale 0, 32 bits at scales 1-3. The two
/// widths compute the gain differently (direct table lookup vs. normalised
/// divisor), exactly as libvmaf does.
pub trait Coef: Copy + Default + Send + Sync + 'static {
    fn to_i64(self) -> i64;
    /// C conversion of an integer to this type (keeps the low bits).
    fn from_i64(v: i64) -> Self;
    /// C conversion of a double to this type (truncates toward zero).
    fn from_f64(v: f64) -> Self;
    /// `t / o` in Q15 (the caller clamps it), `o != 0`.
    fn ratio_q15(o: Self, t: Self) -> i64;
}

impl Coef for i16 {
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self as i64
    }
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v as i16
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v as i16
    }
    #[inline(always)]
    fn ratio_q15(o: Self, t: Self) -> i64 {
        // libvmaf keeps this in an int32; |result| <= 2^30 always fits.
        ((DIV_LOOKUP[(o as i32 + 32768) as usize] as i64 * t as i64 + 16384) >> 15) as i32 as i64
    }
}

impl Coef for i32 {
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self as i64
    }
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v as i32
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v as i32
    }
    #[inline(always)]
    fn ratio_q15(o: Self, t: Self) -> i64 {
        // The divisor is reduced to its 15 most significant bits (rounded)
        // and the lookup's shift grows by as many bits.
        let abs_o = o.unsigned_abs();
        let (divisor, shift) = if abs_o < 32768 {
            (abs_o, 0)
        } else {
            let shift = 17 - abs_o.leading_zeros();
            (abs_o.wrapping_add(1 << (shift - 1)) >> shift, shift)
        };
        let sign = if o < 0 { -1 } else { 1 };
        let recip = DIV_LOOKUP[(divisor as u16 as usize) + 32768] as i64;
        (recip.wrapping_mul(t as i64).wrapping_mul(sign) + (1i64 << (14 + shift))) >> (15 + shift)
    }
}

/// cos(1 degree)^2, stored as float as in libvmaf.
fn cos_1deg_sq() -> f32 {
    let c = (1.0 * std::f64::consts::PI / 180.0).cos();
    (c * c) as f32
}

/// True when the (h, v) vectors of reference `o` and distorted `t` are less
/// than 1 degree apart, evaluated in libvmaf's float/double mix.
#[inline(always)]
fn within_1deg(cos_sq: f64, oh: i64, ov: i64, th: i64, tv: i64) -> bool {
    let dot = oh.wrapping_mul(th).wrapping_add(ov.wrapping_mul(tv));
    let o_mag = oh.wrapping_mul(oh).wrapping_add(ov.wrapping_mul(ov));
    let t_mag = th.wrapping_mul(th).wrapping_add(tv.wrapping_mul(tv));
    let dot = dot as f32 as f64 / 4096.0;
    dot >= 0.0
        && dot * dot >= cos_sq * (o_mag as f32 as f64 / 4096.0) * (t_mag as f32 as f64 / 4096.0)
}

/// The restored part of one distorted coefficient `t` given reference `o`.
#[inline(always)]
fn restore<C: Coef>(o: C, t: C, aligned: bool, gain_limit: f64) -> C {
    let (o64, t64) = (o.to_i64(), t.to_i64());
    let k = if o64 == 0 {
        32768
    } else {
        C::ratio_q15(o, t).clamp(0, 32768)
    };
    let rst = C::from_i64((k * o64 + 16384) >> 15);
    // libvmaf tests the sign of (k / 2^15) * (o / 64) in float: with k in
    // [0, 2^15] that is the sign of o when k > 0, and never underflows.
    if !aligned || k == 0 || o64 == 0 {
        return rst;
    }
    let boosted = rst.to_i64() as f64 * gain_limit;
    let t_f = t64 as f64;
    if o64 > 0 {
        C::from_f64(if boosted < t_f { boosted } else { t_f })
    } else {
        C::from_f64(if boosted > t_f { boosted } else { t_f })
    }
}

/// Decouples `dis` against `reference` over `region`, writing `restored`
/// and `additive` (bands of the same size; values outside `region` are left
/// as they were).
pub fn decouple<C: Coef>(
    reference: &Bands<C>,
    dis: &Bands<C>,
    region: &Region,
    gain_limit: f64,
    restored: &mut Bands<C>,
    additive: &mut Bands<C>,
) {
    let w = reference.width;
    restored.width = w;
    restored.height = reference.height;
    additive.width = w;
    additive.height = reference.height;
    let cos_sq = cos_1deg_sq() as f64;
    for i in region.top..region.bottom {
        let row = i * w + region.left..i * w + region.right;
        let (oh, ov, od) = (
            &reference.h[row.clone()],
            &reference.v[row.clone()],
            &reference.d[row.clone()],
        );
        let (th, tv, td) = (
            &dis.h[row.clone()],
            &dis.v[row.clone()],
            &dis.d[row.clone()],
        );
        let (rh, rv, rd) = (
            &mut restored.h[row.clone()],
            &mut restored.v[row.clone()],
            &mut restored.d[row.clone()],
        );
        for j in 0..row.len() {
            let aligned = within_1deg(
                cos_sq,
                oh[j].to_i64(),
                ov[j].to_i64(),
                th[j].to_i64(),
                tv[j].to_i64(),
            );
            rh[j] = restore(oh[j], th[j], aligned, gain_limit);
            rv[j] = restore(ov[j], tv[j], aligned, gain_limit);
            rd[j] = restore(od[j], td[j], aligned, gain_limit);
        }
        let (ah, av, ad) = (
            &mut additive.h[row.clone()],
            &mut additive.v[row.clone()],
            &mut additive.d[row],
        );
        for j in 0..ah.len() {
            ah[j] = C::from_i64(th[j].to_i64() - rh[j].to_i64());
            av[j] = C::from_i64(tv[j].to_i64() - rv[j].to_i64());
            ad[j] = C::from_i64(td[j].to_i64() - rd[j].to_i64());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_ratio_matches_narrow_for_small_divisors() {
        for (o, t) in [(100, 57), (-3000, 1234), (32767, -32768), (5, 5)] {
            assert_eq!(
                i16::ratio_q15(o as i16, t as i16),
                i32::ratio_q15(o, t),
                "{o} {t}"
            );
        }
    }

    #[test]
    fn identical_pictures_restore_everything() {
        for (o, t) in [(1000i32, 1000i32), (-77, -77), (40000, 40000)] {
            assert_eq!(restore(o, t, true, 100.0), t);
            assert_eq!(restore(o, t, false, 1.0), t);
        }
    }

    #[test]
    fn enhancement_is_capped_by_gain_limit() {
        // t = 2o: the gain 2 is clamped to 1 unless the enhancement gain
        // limit lets the aligned coefficient grow back to t.
        assert_eq!(restore(1000i16, 2000, true, 1.0), 1000);
        assert_eq!(restore(1000i16, 2000, true, 100.0), 2000);
        assert_eq!(restore(1000i16, 2000, true, 1.5), 1500);
        assert_eq!(restore(1000i16, 2000, false, 100.0), 1000);
    }
}
