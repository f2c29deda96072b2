//! The CIEDE2000 colour difference exactly as libvmaf's `ciede.c` computes
//! it (a port of av-metrics): `float` variables, with the `double`
//! intermediates that C's promotion rules put in between (`pow`, `sqrt`,
//! `atan2`, `cos`, `sin`, `exp` and constants like `M_PI` are `double`).
//!
//! Every cast below marks a C conversion; `pow(x, 2)` is written `x * x`
//! (exact for a `float` promoted to `double`, as GCC folds it), and the
//! other powers go through the C library like libvmaf's.

use std::array::from_fn;
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
    (1.0 - 0.17 * (h - PI / 6.0).cos()
        + 0.24 * (2.0 * h).cos()
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
#[inline]
pub fn ciede2000(c1: Lab, c2: Lab, k: Weights) -> f32 {
    ciede2000_lanes(&[c1], &[c2], k)[0]
}

/// CIEDE2000 differences of `N` colour pairs at once.
///
/// Each step runs over all lanes before the next, so that the lanes'
/// independent square roots, divisions and C library calls overlap (and
/// the plain arithmetic vectorises); every lane computes exactly what
/// [`ciede2000`] does.
#[inline(always)]
pub fn ciede2000_lanes<const N: usize>(c1: &[Lab; N], c2: &[Lab; N], k: Weights) -> [f32; N] {
    let delta_l_prime: [f32; N] = from_fn(|i| c2[i].l - c1[i].l);
    let l_bar: [f32; N] = from_fn(|i| (c1[i].l + c2[i].l) / 2.0);
    let chroma1: [f32; N] = from_fn(|i| (sq(c1[i].a as f64) + sq(c1[i].b as f64)).sqrt() as f32);
    let chroma2: [f32; N] = from_fn(|i| (sq(c2[i].a as f64) + sq(c2[i].b as f64)).sqrt() as f32);
    let c_bar: [f32; N] = from_fn(|i| (chroma1[i] + chroma2[i]) / 2.0);
    let c_bar7: [f64; N] = from_fn(|i| (c_bar[i] as f64).powf(7.0));
    let g: [f64; N] = from_fn(|i| 1.0 - (c_bar7[i] / (c_bar7[i] + POW25_7)).sqrt());
    let a_prime_1: [f32; N] = from_fn(|i| (c1[i].a as f64 + (c1[i].a / 2.0) as f64 * g[i]) as f32);
    let a_prime_2: [f32; N] = from_fn(|i| (c2[i].a as f64 + (c2[i].a / 2.0) as f64 * g[i]) as f32);
    let c_prime_1: [f32; N] =
        from_fn(|i| (sq(a_prime_1[i] as f64) + sq(c1[i].b as f64)).sqrt() as f32);
    let c_prime_2: [f32; N] =
        from_fn(|i| (sq(a_prime_2[i] as f64) + sq(c2[i].b as f64)).sqrt() as f32);
    let c_bar_prime: [f32; N] = from_fn(|i| (c_prime_1[i] + c_prime_2[i]) / 2.0);
    let delta_c_prime: [f32; N] = from_fn(|i| c_prime_2[i] - c_prime_1[i]);
    let s_sub_l: [f32; N] = from_fn(|i| {
        let l50 = sq((l_bar[i] - 50.0) as f64);
        (1.0 + (0.015 * l50) / (20.0 + l50).sqrt()) as f32
    });
    let s_sub_c: [f32; N] = from_fn(|i| (1.0 + 0.045 * c_bar_prime[i] as f64) as f32);
    let h_prime_1: [f32; N] = from_fn(|i| h_prime(c1[i].b, a_prime_1[i]));
    let h_prime_2: [f32; N] = from_fn(|i| h_prime(c2[i].b, a_prime_2[i]));
    let delta_h: [f32; N] =
        from_fn(|i| delta_h_prime(chroma1[i], chroma2[i], h_prime_1[i], h_prime_2[i]));
    let delta_upcase_h: [f32; N] = from_fn(|i| {
        (2.0 * ((c_prime_1[i] * c_prime_2[i]) as f64).sqrt() * (delta_h[i] as f64 / 2.0).sin())
            as f32
    });
    let h_bar: [f32; N] = from_fn(|i| upcase_h_bar_prime(h_prime_1[i], h_prime_2[i]));
    let t: [f32; N] = from_fn(|i| upcase_t(h_bar[i]));
    let s_sub_h: [f32; N] = from_fn(|i| (1.0 + 0.015 * c_bar_prime[i] as f64 * t[i] as f64) as f32);
    let r_t: [f32; N] = from_fn(|i| r_sub_t(c_bar_prime[i], h_bar[i]));
    let lightness: [f32; N] = from_fn(|i| delta_l_prime[i] / (k.l * s_sub_l[i]));
    let chroma: [f32; N] = from_fn(|i| delta_c_prime[i] / (k.c * s_sub_c[i]));
    let hue: [f32; N] = from_fn(|i| delta_upcase_h[i] / (k.h * s_sub_h[i]));
    from_fn(|i| {
        (sq(lightness[i] as f64)
            + sq(chroma[i] as f64)
            + sq(hue[i] as f64)
            + (r_t[i] * chroma[i] * hue[i]) as f64)
            .sqrt() as f32
    })
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
        let unit = Weights {
            l: 1.0,
            c: 1.0,
            h: 1.0,
        };
        let cases = [
            (
                lab(50.0, 2.6772, -79.7751),
                lab(50.0, 0.0, -82.7485),
                2.0425,
            ),
            (
                lab(50.0, 3.1571, -77.2803),
                lab(50.0, 0.0, -82.7485),
                2.8615,
            ),
            (lab(50.0, 0.0, 0.0), lab(50.0, -1.0, 2.0), 2.3669),
            (lab(50.0, 2.5, 0.0), lab(73.0, 25.0, -18.0), 27.1492),
            (
                lab(60.2574, -34.0099, 36.2677),
                lab(60.4626, -34.1751, 39.4387),
                1.2644,
            ),
        ];
        let lanes = ciede2000_lanes(&cases.map(|c| c.0), &cases.map(|c| c.1), unit);
        for ((c1, c2, expected), lane) in cases.into_iter().zip(lanes) {
            assert_eq!(lane.to_bits(), ciede2000(c1, c2, unit).to_bits());
            let d = ciede2000(c1, c2, unit);
            assert!(
                (d - expected).abs() < 1e-3,
                "{c1:?} {c2:?}: {d} != {expected}"
            );
            let back = ciede2000(c2, c1, unit);
            assert!((back - expected).abs() < 1e-3, "{c2:?} {c1:?}: {back}");
        }
    }
}
