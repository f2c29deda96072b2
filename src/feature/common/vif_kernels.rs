//! The Gaussian filters of libvmaf's `vif_tools.c`, shared by float VIF and
//! SpEED: generated in `float` from the scale and the kernel scale, not read
//! from a table, so the arithmetic below follows the C types.

use std::f64::consts::PI;

/// `valid_kernelscales` of `vif_tools.h` (C `float` expressions).
pub const VALID_KERNELSCALES: [f32; 21] = [
    1.0,
    1.0 / 2.0,
    3.0 / 2.0,
    2.0,
    2.0 / 3.0,
    24.0 / 10.0,
    360.0 / 97.0,
    4.0 / 3.0,
    3.5 / 3.0,
    3.75 / 3.0,
    4.25 / 3.0,
    5.0 / 3.0,
    3.0,
    1.0 / 2.25,
    1.4746,
    1.54,
    1.6,
    1.06667,
    0.711111,
    0.740740,
    1.111111,
];

/// libvmaf's `vif_validate_kernelscale`: within 1e-3 of a listed scale
/// (`fabsf(kernelscale - valid_kernelscales[i]) < 1e-3`).
pub fn is_valid_kernelscale(kernelscale: f32) -> bool {
    VALID_KERNELSCALES
        .iter()
        .any(|&k| f64::from((kernelscale - k).abs()) < 1e-3)
}

/// `vif_get_filter_size`: `2^(4 - scale) + 1` taps stretched by the kernel
/// scale, rounded up to an odd number, at least 3.
pub fn filter_size(scale: usize, kernelscale: f32) -> usize {
    let n = ((1 << (4 - scale)) + 1) as f32;
    let ceiling = (n * kernelscale).ceil() as i32;
    let odd = if ceiling % 2 == 0 {
        ceiling + 1
    } else {
        ceiling
    };
    odd.max(3) as usize
}

/// `vif_get_filter`: the low-pass filter of a scale, a Gaussian of
/// [`filter_size`] taps and standard deviation `size / 5`.
pub fn scale_filter(scale: usize, kernelscale: f32) -> Vec<f32> {
    let size = filter_size(scale, kernelscale);
    gaussian_kernel(size, size as f32 / 5.0)
}

/// A normalised Gaussian of odd `size` taps (`get_1d_gaussian_kernel`):
/// each tap in `f32` from a `f64` exponential, divided by their `f32` sum.
pub fn gaussian_kernel(size: usize, stdev: f32) -> Vec<f32> {
    let half = (size as i32 - 1) / 2;
    let mut taps: Vec<f32> = (0..size as i32)
        .map(|i| gaussian_pdf((i - half) as f32, stdev))
        .collect();
    let sum = taps.iter().fold(0.0f32, |acc, &t| acc + t);
    for t in &mut taps {
        *t /= sum;
    }
    taps
}

/// `get_gaussian_pdf(x, 0, stdev)`: the exponent in `double` (C's `-0.5`
/// literal promotes it), each factor rounded to `float`.
fn gaussian_pdf(x: f32, stdev: f32) -> f32 {
    let (d, s) = (f64::from(x), f64::from(stdev));
    let num = (-0.5 * d / s * d / s).exp() as f32;
    let den = (1.0 / (s * (2.0 * PI).sqrt())) as f32;
    num / den
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_scale_sizes() {
        assert_eq!(filter_size(1, 1.0), 9);
        assert_eq!(filter_size(4, 1.0), 3);
        assert_eq!(filter_size(0, 1.0), 17);
        assert_eq!(filter_size(1, 0.5), 5);
        assert_eq!(filter_size(4, 4.0), 9);
    }

    #[test]
    fn kernels_are_normalised_and_symmetric() {
        for f in [
            gaussian_kernel(9, 2.0 * 9.0 / 5.0),
            scale_filter(4, 1.0),
            scale_filter(1, 2.0),
        ] {
            let sum: f32 = f.iter().sum();
            assert!((sum - 1.0).abs() < 1e-6, "{f:?}");
            assert!(f.iter().zip(f.iter().rev()).all(|(a, b)| a == b));
        }
    }

    #[test]
    fn kernelscales_are_checked() {
        assert!(is_valid_kernelscale(1.0));
        assert!(is_valid_kernelscale(1.5004));
        assert!(!is_valid_kernelscale(1.2));
    }
}
