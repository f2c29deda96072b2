//! The CIEDE2000 colour difference exactly as libvmaf's `ciede.c` computes
//! it (a port of av-metrics): `float` variables, with the `double`
//! intermediates that C's promotion rules put in between (`pow`, `sqrt`,
//! `atan2`, `cos`, `sin`, `exp` and constants like `M_PI` are `double`).
//!
//! Every cast below marks a C conversion; `pow(x, 2)` is written `x * x`
//! (exact for a `float` promoted to `double`, as GCC folds it), and the
//! other powers go through the C library like libvmaf's.

use std::f64::consts::PI;

/// A colour in CIELAB, as libvmaf's `LABColor` (three `float`s).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Lab {
    pub l: f32,
    pub a: f32,
    pub b: f32,
}

/// The parametric weighting factors kL, kC, kH of the formula.
#[derive(Debug, Clone, Copy)]
pub struct Weights {
    pub l: f32,
    pub c: f32,
    pub h: f32,
}

/// libvmaf's `default_ksub = { .l = 0.65, .c = 1.0, .h = 4.0 }`.
pub const LIBVMAF_WEIGHTS: Weights = Weights {
    l: 0.65,
    c: 1.0,
    h: 4.0,
};

/// `pow(25, 7)` in `double` (exact).
const POW25_7: f64 = 6_103_515_625.0;
/// `powf(25., 7)` as GCC folds it: 25^7 rounded to `float`.
const POW25_7_F32: f32 = 6_103_515_625.0;

#[inline(always)]
fn sq(x: f64) -> f64 {
    x * x
}

/// Hue angle in [0, 2 pi) of the vector (y, x), as `atan2(x, y)`.
#[inline(always)]
fn h_prime(x: f32, y: f32) -> f32 {
    if x == 0.0 && y == 0.0 {
        return 0.0;
    }
    let hue = (x as f64).atan2(y as f64) as f32;
    if hue < 0.0 {
        (hue as f64 + 2.0 * PI) as f32
    } else {
        hue
    }
}

#[inline(always)]
fn delta_h_prime(c1: f32, c2: f32, h1: f32, h2: f32) -> f32 {
    if c1 == 0.0 || c2 == 0.0 {
        return 0.0;
    }
    let diff = h2 - h1;
    if ((h1 - h2).abs() as f64) <= PI {
        diff
    } else if h2 <= h1 {
        (diff as f64 + 2.0 * PI) as f32
    } else {
        (diff as f64 - 2.0 * PI) as f32
    }
}

#[inline(always)]
fn upcase_h_bar_prime(h1: f32, h2: f32) -> f32 {
    let sum = h1 + h2;
    if ((h1 - h2) as f64).abs() > PI {
        ((sum as f64 + 2.0 * PI) / 2.0) as f32
    } else {
        (sum as f64 / 2.0) as f32
    }
}

#[inline(always)]
fn upcase_t(h_bar: f32) -> f32 {
    let h = h_bar as f64;
    (1.0 - 0.17 * (h - PI / 6.0).cos() + 0.24 * (2.0 * h).cos()
        + 0.32 * (3.0 * h + PI / 30.0).cos()
        - 0.20 * (4.0 * h - 7.0 * PI / 20.0).cos()) as f32
}

#[inline(always)]
fn radians_to_degrees(radians: f32) -> f32 {
    (radians as f64 * (180.0 / PI)) as f32
}

#[inline(always)]
fn degrees_to_radians(degrees: f32) -> f32 {
    (degrees as f64 * (PI / 180.0)) as f32
}

#[inline(always)]
fn r_sub_t(c_bar_prime: f32, h_bar: f32) -> f32 {
    let degrees = ((radians_to_degrees(h_bar) as f64 - 275.0) * (1.0 / 25.0)) as f32;
    let c7 = c_bar_prime.powf(7.0);
    let ratio = c7 / (c7 + POW25_7_F32);
    // `exp(-(powf(degrees, 2)))`: the square is a `float` product.
    let angle = degrees_to_radians((60.0 * (-(degrees * degrees) as f64).exp()) as f32);
    (-2.0 * (ratio as f64).sqrt() * (angle as f64).sin()) as f32
}

/// CIEDE2000 difference of two colours.
#[inline(always)]
pub fn ciede2000(c1: Lab, c2: Lab, k: Weights) -> f32 {
    let delta_l_prime = c2.l - c1.l;
    let l_bar = (c1.l + c2.l) / 2.0;
    let chroma1 = (sq(c1.a as f64) + sq(c1.b as f64)).sqrt() as f32;
    let chroma2 = (sq(c2.a as f64) + sq(c2.b as f64)).sqrt() as f32;
    let c_bar = (chroma1 + chroma2) / 2.0;
    let c_bar7 = (c_bar as f64).powf(7.0);
    let g = 1.0 - (c_bar7 / (c_bar7 + POW25_7)).sqrt();
    let a_prime_1 = (c1.a as f64 + (c1.a / 2.0) as f64 * g) as f32;
    let a_prime_2 = (c2.a as f64 + (c2.a / 2.0) as f64 * g) as f32;
    let c_prime_1 = (sq(a_prime_1 as f64) + sq(c1.b as f64)).sqrt() as f32;
    let c_prime_2 = (sq(a_prime_2 as f64) + sq(c2.b as f64)).sqrt() as f32;
    let c_bar_prime = (c_prime_1 + c_prime_2) / 2.0;
    let delta_c_prime = c_prime_2 - c_prime_1;
    let l50 = sq((l_bar - 50.0) as f64);
    let s_sub_l = (1.0 + (0.015 * l50) / (20.0 + l50).sqrt()) as f32;
    let s_sub_c = (1.0 + 0.045 * c_bar_prime as f64) as f32;
    let h_prime_1 = h_prime(c1.b, a_prime_1);
    let h_prime_2 = h_prime(c2.b, a_prime_2);
    let delta_h = delta_h_prime(chroma1, chroma2, h_prime_1, h_prime_2);
    let delta_upcase_h = (2.0
        * ((c_prime_1 * c_prime_2) as f64).sqrt()
        * (delta_h as f64 / 2.0).sin()) as f32;
    let h_bar = upcase_h_bar_prime(h_prime_1, h_prime_2);
    let t = upcase_t(h_bar);
    let s_sub_h = (1.0 + 0.015 * c_bar_prime as f64 * t as f64) as f32;
    let r_t = r_sub_t(c_bar_prime, h_bar);
    let lightness = delta_l_prime / (k.l * s_sub_l);
    let chroma = delta_c_prime / (k.c * s_sub_c);
    let hue = delta_upcase_h / (k.h * s_sub_h);
    (sq(lightness as f64) + sq(chroma as f64) + sq(hue as f64) + (r_t * chroma * hue) as f64)
        .sqrt() as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lab(l: f32, a: f32, b: f32) -> Lab {
        Lab { l, a, b }
    }

    #[test]
    fn identical_colours_differ_by_zero() {
        let c = lab(53.2, 80.1, 67.2);
        assert_eq!(ciede2000(c, c, LIBVMAF_WEIGHTS), 0.0);
    }

    /// Pairs from Sharma, Wu and Dalal's CIEDE2000 test data (kL = kC = kH
    /// = 1), covering the hue wrap-around and zero-chroma branches; the
    /// `float` arithmetic agrees to about 1e-4.
    #[test]
    fn matches_sharma_reference_pairs() {
        let unit = Weights { l: 1.0, c: 1.0, h: 1.0 };
        let cases = [
            (lab(50.0, 2.6772, -79.7751), lab(50.0, 0.0, -82.7485), 2.0425),
            (lab(50.0, 3.1571, -77.2803), lab(50.0, 0.0, -82.7485), 2.8615),
            (lab(50.0, 0.0, 0.0), lab(50.0, -1.0, 2.0), 2.3669),
            (lab(50.0, 2.5, 0.0), lab(73.0, 25.0, -18.0), 27.1492),
            (lab(60.2574, -34.0099, 36.2677), lab(60.4626, -34.1751, 39.4387), 1.2644),
        ];
        for (c1, c2, expected) in cases {
            let d = ciede2000(c1, c2, unit);
            assert!((d - expected).abs() < 1e-3, "{c1:?} {c2:?}: {d} != {expected}");
            let back = ciede2000(c2, c1, unit);
            assert!((back - expected).abs() < 1e-3, "{c2:?} {c1:?}: {back}");
        }
    }
}
