//! sRGB-encoded to linear light, as libjxl does it: its colour management
//! undoes the sRGB transfer function with `TF_SRGB::DisplayFromEncoded`
//! (`lib/jxl/cms/transfer_functions-inl.h`), a 4/4 rational polynomial
//! above 0.04045 (evaluated with fused multiply-adds, Horner's scheme) and
//! `v / 12.92` (times the `f32` reciprocal) below. The primaries stay
//! (sRGB to linear sRGB), so nothing else is applied.

// The constants are libjxl's literals as written, rounded to f32 as there.
#![allow(clippy::excessive_precision)]

use super::fma::fma_kernel;

/// Numerator coefficients, constant term first.
pub(crate) const P: [f32; 5] = [
    2.200248328e-04,
    1.043637593e-02,
    1.624820318e-01,
    7.961564959e-01,
    8.210152774e-01,
];
/// Denominator coefficients, constant term first.
pub(crate) const Q: [f32; 5] = [
    2.631846970e-01,
    1.076976492e+00,
    4.987528350e-01,
    -5.512498495e-02,
    6.521209011e-03,
];
pub(crate) const THRESHOLD: f32 = 0.04045;
pub(crate) const LOW_DIV_INV: f32 = 1.0 / 12.92;

/// One encoded value to linear (sign kept, as libjxl mirrors negatives).
#[inline(always)]
pub fn srgb_to_linear(v: f32) -> f32 {
    let x = v.abs();
    let mut yp = P[4];
    let mut yq = Q[4];
    for i in (0..4).rev() {
        yp = yp.mul_add(x, P[i]);
        yq = yq.mul_add(x, Q[i]);
    }
    let magnitude = if x > THRESHOLD {
        yp / yq
    } else {
        x * LOW_DIV_INV
    };
    magnitude.copysign(v)
}

fma_kernel! {
    /// Converts every value of `plane` in place.
    pub fn to_linear(plane: &mut [f32]) => to_linear_body
}

#[inline(always)]
fn to_linear_body(plane: &mut [f32]) {
    for v in plane {
        *v = srgb_to_linear(*v);
    }
}

#[cfg(test)]
mod tests {
    use super::srgb_to_linear;

    #[test]
    fn follows_the_srgb_transfer_function() {
        for i in 0..=1000 {
            let v = i as f32 / 1000.0;
            let exact = if v <= 0.04045 {
                v as f64 / 12.92
            } else {
                ((v as f64 + 0.055) / 1.055).powf(2.4)
            };
            let ours = srgb_to_linear(v) as f64;
            assert!((ours - exact).abs() < 2e-6, "{v}: {ours} vs {exact}");
        }
        assert_eq!(srgb_to_linear(0.0), 0.0);
    }
}
