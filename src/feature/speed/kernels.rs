//! SpEED's own Gaussian (libvmaf `speed.c`): the anti-alias filter applied
//! before decimating by 16. Its low-pass filters are VIF's
//! ([`crate::feature::common::vif_kernels`]).

use crate::feature::common::vif_kernels::{filter_size, gaussian_kernel};

/// The anti-alias filter for decimating by 2^`scale` at once
/// (`speed_get_antialias_filter`): the scale-1 size, with sigma widened by
/// sqrt(scale) as if the scale-1 filter had been applied `scale` times.
pub fn antialias_filter(scale: u32, kernelscale: f32) -> Vec<f32> {
    let size = filter_size(1, kernelscale);
    let sigma = f64::from(scale).sqrt() * size as f64 / f64::from(5.0f32);
    gaussian_kernel(size, sigma as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn antialias_filter_is_normalised_and_symmetric() {
        let f = antialias_filter(4, 1.0);
        assert_eq!(f.len(), 9);
        let sum: f32 = f.iter().sum();
        assert!((sum - 1.0).abs() < 1e-6, "{f:?}");
        assert!(f.iter().zip(f.iter().rev()).all(|(a, b)| a == b));
    }
}
