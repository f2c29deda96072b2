//! SpEED's Gaussian filters (libvmaf `vif_tools.c`): the filter sizes for a
//! kernel scale, the low-pass filter of a scale and the anti-alias filter
//! applied before decimating by 16.

use std::f64::consts::PI;

/// The kernel scales libvmaf accepts (`valid_kernelscales`, as `float`).
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

/// libvmaf's `vif_validate_kernelscale`: within 1e-3 of a listed scale.
pub fn is_valid_kernelscale(kernelscale: f32) -> bool {
    VALID_KERNELSCALES
        .iter()
        .any(|&k| f64::from((kernelscale - k).abs()) < 1e-3)
}

/// Taps of the scale-`scale` filter (`vif_get_filter_size`): 2^(4 - scale) + 1
/// stretched by the kernel scale, rounded up to odd, at least 3.
pub fn filter_size(scale: u32, kernelscale: f32) -> usize {
    let n = ((1 << (4 - scale)) + 1) as f32;
    let ceiling = (n * kernelscale).ceil() as i32;
    let odd = if ceiling % 2 == 0 {
        ceiling + 1
    } else {
        ceiling
    };
    odd.max(3) as usize
}

/// The low-pass filter of a scale (`vif_get_filter`): sigma = size / 5.
pub fn lowpass_filter(scale: u32, kernelscale: f32) -> Vec<f32> {
    let size = filter_size(scale, kernelscale);
    gaussian_kernel(size, size as f32 / 5.0)
}

/// The anti-alias filter for decimating by 2^`scale` at once
/// (`speed_get_antialias_filter`): the scale-1 size, with sigma widened by
/// sqrt(scale) as if the scale-1 filter had been applied `scale` times.
pub fn antialias_filter(scale: u32, kernelscale: f32) -> Vec<f32> {
    let size = filter_size(1, kernelscale);
    let sigma = f64::from(scale).sqrt() * size as f64 / f64::from(5.0f32);
    gaussian_kernel(size, sigma as f32)
}

/// A normalised Gaussian of odd `size` taps (`get_1d_gaussian_kernel`):
/// each tap in `f32` from a `f64` exponential, divided by their `f32` sum.
fn gaussian_kernel(size: usize, stdev: f32) -> Vec<f32> {
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
            antialias_filter(4, 1.0),
            lowpass_filter(4, 1.0),
            lowpass_filter(1, 2.0),
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
