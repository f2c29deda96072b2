//! The Gaussian kernels of libvmaf's float VIF, one per scale, for a
//! kernel scale option.

use crate::error::{Error, Result};
use crate::feature::common::vif_kernels::{is_valid_kernelscale, scale_filter};

/// The four kernels (scale 0 to 3) for `kernelscale`, or an error when
/// libvmaf does not accept that kernel scale.
pub fn kernels_for(kernelscale: f64) -> Result<[Vec<f32>; 4]> {
    let ks = kernelscale as f32;
    if !is_valid_kernelscale(ks) {
        return Err(Error::BadOption {
            owner: "float_vif".into(),
            option: "vif_kernelscale".into(),
            reason: format!(
                "{kernelscale} is not supported (supported: 1, 1/2, 3/2, 2, 2/3, 2.4, 360/97, 4/3, 3.5/3, \
                 3.75/3, 4.25/3, 5/3, 3, 1/2.25, 1.4746, 1.54, 1.6, 1.06667, 0.711111, 0.74074, 1.111111)"
            ),
        });
    }
    Ok(std::array::from_fn(|scale| scale_filter(scale, ks)))
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
            assert!(
                kernel[..=r].windows(2).all(|p| p[0] <= p[1]),
                "rises to its centre"
            );
            assert!(
                (0..r).all(|i| kernel[i] == kernel[kernel.len() - 1 - i]),
                "symmetric"
            );
        }
        assert_eq!(
            kernels_for(2.0).unwrap().each_ref().map(|k| k.len()),
            [35, 19, 11, 7]
        );
        assert_eq!(
            kernels_for(360.0 / 97.0)
                .unwrap()
                .each_ref()
                .map(|k| k.len()),
            [65, 35, 19, 13]
        );
    }

    #[test]
    fn unsupported_scale_is_an_error() {
        let e = kernels_for(3.5).unwrap_err().to_string();
        assert!(
            e.contains("vif_kernelscale") && e.contains("not supported"),
            "{e}"
        );
        assert!(kernels_for(1.0005).is_ok());
    }
}
