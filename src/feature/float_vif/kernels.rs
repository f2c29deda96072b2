//! The Gaussian kernels of libvmaf's VIF (`vif_get_filter` in
//! `vif_tools.c`): generated in `float` from the scale and the kernel scale,
//! not read from a table, so the arithmetic below follows the C types.

use crate::error::{Error, Result};

/// `valid_kernelscales` of `vif_tools.h` (C `float` expressions).
const VALID_KERNELSCALES: [f32; 21] = [
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

/// The four kernels (scale 0 to 3) for `kernelscale`, or an error when
/// libvmaf does not accept that kernel scale.
pub fn kernels_for(kernelscale: f64) -> Result<[Vec<f32>; 4]> {
    let ks = kernelscale as f32;
    // `fabsf(kernelscale - valid_kernelscales[i]) < 1e-3`
    if !VALID_KERNELSCALES.iter().any(|&v| ((ks - v).abs() as f64) < 1e-3) {
        return Err(Error::BadOption {
            owner: "float_vif".into(),
            option: "vif_kernelscale".into(),
            reason: format!(
                "{kernelscale} is not supported (supported: 1, 1/2, 3/2, 2, 2/3, 2.4, 360/97, 4/3, 3.5/3, \
                 3.75/3, 4.25/3, 5/3, 3, 1/2.25, 1.4746, 1.54, 1.6, 1.06667, 0.711111, 0.74074, 1.111111)"
            ),
        });
    }
    Ok(std::array::from_fn(|scale| kernel(scale, ks)))
}

/// `vif_get_filter_size`: `2^(4 - scale) + 1` taps scaled by the kernel
/// scale, rounded up to an odd number, at least 3.
fn kernel_width(scale: usize, ks: f32) -> usize {
    let n = ((1 << (4 - scale)) + 1) as f32;
    let ceiling = (n * ks).ceil() as i32;
    let odd = if ceiling % 2 == 0 { ceiling + 1 } else { ceiling };
    odd.max(3) as usize
}

/// `vif_get_filter`: a Gaussian of standard deviation `width / 5`,
/// normalised by its `float` sum.
fn kernel(scale: usize, ks: f32) -> Vec<f32> {
    let width = kernel_width(scale, ks);
    let stdev = width as f32 / 5.0;
    let half = (width as i32 - 1) / 2;
    let mut out: Vec<f32> = (0..width as i32)
        .map(|i| gaussian_pdf((i - half) as f32, stdev))
        .collect();
    let mut sum = 0.0f32;
    for &v in &out {
        sum += v;
    }
    for v in &mut out {
        *v /= sum;
    }
    out
}

/// `get_gaussian_pdf(x, 0, stdev)`: the exponent in `double` (C's `-0.5`
/// literal promotes it), each factor rounded to `float`.
fn gaussian_pdf(x: f32, stdev: f32) -> f32 {
    let (x, s) = (x as f64, stdev as f64);
    let num = (-0.5 * x / s * x / s).exp() as f32;
    let den = (1.0 / (s * (2.0 * std::f64::consts::PI).sqrt())) as f32;
    num / den
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_widths_and_normalisation() {
        let k = kernels_for(1.0).unwrap();
        assert_eq!(k.each_ref().map(|k| k.len()), [17, 9, 5, 3]);
        for kernel in &k {
            let sum: f64 = kernel.iter().map(|&v| v as f64).sum();
            assert!((sum - 1.0).abs() < 1e-6);
            let r = kernel.len() / 2;
            assert!(kernel[..=r].windows(2).all(|p| p[0] <= p[1]), "rises to its centre");
            assert!((0..r).all(|i| kernel[i] == kernel[kernel.len() - 1 - i]), "symmetric");
        }
        assert_eq!(kernels_for(2.0).unwrap().each_ref().map(|k| k.len()), [35, 19, 11, 7]);
        assert_eq!(
            kernels_for(360.0 / 97.0).unwrap().each_ref().map(|k| k.len()),
            [65, 35, 19, 13]
        );
    }

    #[test]
    fn unsupported_scale_is_an_error() {
        let e = kernels_for(3.5).unwrap_err().to_string();
        assert!(e.contains("vif_kernelscale") && e.contains("not supported"), "{e}");
        assert!(kernels_for(1.0005).is_ok());
    }
}
