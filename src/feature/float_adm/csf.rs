//! Contrast sensitivity weights of the ADM wavelet bands, by
//! `adm_csf_mode` as libvmaf's `adm_tools.c` picks them: 1 Barten's CSF
//! (the integer extractor's, `barten_csf_tools.h`), 2 the DLM paper's
//! (`adm_native_csf`), any other Watson et al.'s DWT quantisation noise
//! thresholds (`dwt_quant_step` in `adm_tools.h`, the default); then the
//! per-scale user overrides `adm_f1sN` / `adm_f2sN`.

use crate::feature::adm::csf::{CsfConfig, CsfMode};
use crate::feature::common::to_f32;

/// `struct dwt_model_params` for luma (`dwt_7_9_YCbCr_threshold[0]`).
struct ModelParams {
    a: f32,
    k: f32,
    f0: f32,
    g: [f32; 4],
}

const LUMA: ModelParams = ModelParams {
    // C double literals stored into float fields.
    a: 0.495f64 as f32,
    k: 0.466f64 as f32,
    f0: 0.401f64 as f32,
    g: to_f32([1.501, 1.0, 0.534, 1.0]),
};

/// `dwt_7_9_basis_function_amplitudes[lambda][theta]`.
const AMPLITUDES: [[f32; 4]; 6] = [
    to_f32([0.62171, 0.67234, 0.72709, 0.67234]),
    to_f32([0.34537, 0.41317, 0.49428, 0.41317]),
    to_f32([0.18004, 0.22727, 0.28688, 0.22727]),
    to_f32([0.091401, 0.11792, 0.15214, 0.11792]),
    to_f32([0.045943, 0.059758, 0.077727, 0.059758]),
    to_f32([0.023013, 0.030018, 0.039156, 0.030018]),
];

/// `dwt_quant_step(&dwt_7_9_YCbCr_threshold[0], lambda, theta, ...)`, each
/// intermediate stored as C stores it (`float r`, `float temp`, `float Q`).
fn quant_step(lambda: usize, theta: usize, view_dist: f64, display_height: i32) -> f32 {
    let p = &LUMA;
    // Display visual resolution, pixels per degree.
    let r = (view_dist * display_height as f64 * std::f64::consts::PI / 180.0) as f32;
    let temp = ((2.0f64.powi(lambda as i32 + 1) * p.f0 as f64 * p.g[theta] as f64 / r as f64)
        .log10()) as f32;
    // `params->k * temp * temp` is float arithmetic.
    let exponent = p.k * temp * temp;
    (2.0 * p.a as f64 * 10.0f64.powf(exponent as f64) / AMPLITUDES[lambda][theta] as f64) as f32
}

/// `adm_native_csf` (`adm_csf_tools.h`), the DLM paper's CSF at the
/// nominal frequency of scale `lambda`; `diagonal` is its 45-degree band
/// (the oblique effect). Each `float` of the C code stays an `f32`.
fn native_csf(lambda: usize, view_dist: f64, display_height: i32, diagonal: bool) -> f32 {
    let r = (view_dist * display_height as f64 * std::f64::consts::PI / 180.0) as f32;
    let mut frequency = (r as f64 / 2f64.powi(lambda as i32 + 1)) as f32;
    if diagonal {
        frequency = (frequency as f64 / 0.7) as f32;
    }
    let f = frequency as f64;
    ((0.31 + 0.69 * f) * (-0.29 * f).exp()) as f32
}

/// The viewing conditions and CSF of the weights.
#[derive(Debug, Clone, Copy)]
pub struct Viewing {
    /// `adm_csf_mode`: 1 Barten, 2 native, anything else Watson.
    pub csf_mode: i32,
    pub view_dist: f64,
    pub display_height: i32,
    /// Barten only: scales of the h/v and diagonal weights.
    pub csf_scale: f64,
    pub csf_diag_scale: f64,
}

impl Viewing {
    /// libvmaf's defaults: Watson's CSF, 1080 lines at 3 heights.
    #[cfg(test)]
    pub const DEFAULT: Viewing = Viewing {
        csf_mode: 0,
        view_dist: 3.0,
        display_height: 1080,
        csf_scale: 1.0,
        csf_diag_scale: 1.0,
    };
}

/// The CSF weights of each scale: `[h, v, d]` = `[f1, f1, f2]`.
pub fn band_weights(
    viewing: Viewing,
    f1_overrides: [f64; 4],
    f2_overrides: [f64; 4],
) -> [[f32; 3]; 4] {
    let Viewing {
        csf_mode,
        view_dist,
        display_height,
        ..
    } = viewing;
    std::array::from_fn(|scale| {
        let (mut f1, mut f2) = match csf_mode {
            1 => {
                let barten = CsfConfig {
                    mode: CsfMode::Barten,
                    norm_view_dist: view_dist,
                    ref_display_height: display_height,
                    csf_scale: viewing.csf_scale,
                    csf_diag_scale: viewing.csf_diag_scale,
                };
                let w = barten.band_weights(scale);
                (w[0], w[2])
            }
            2 => (
                native_csf(scale, view_dist, display_height, false),
                native_csf(scale, view_dist, display_height, true),
            ),
            _ => (
                1.0f32 / quant_step(scale, 1, view_dist, display_height),
                1.0f32 / quant_step(scale, 2, view_dist, display_height),
            ),
        };
        // A negative override keeps the model value.
        if f1_overrides[scale] >= 0.0 {
            f1 = f1_overrides[scale] as f32;
        }
        if f2_overrides[scale] >= 0.0 {
            f2 = f2_overrides[scale] as f32;
        }
        [f1, f1, f2]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_grow_toward_coarse_scales() {
        let viewing = Viewing::DEFAULT;
        let w = band_weights(viewing, [-1.0; 4], [-1.0; 4]);
        for s in 1..4 {
            assert!(w[s][0] > w[s - 1][0], "{w:?}");
        }
        // The diagonal band is less visible than the h/v bands.
        assert!(w.iter().all(|s| s[2] < s[0]));
        let o = band_weights(viewing, [0.5, -1.0, -1.0, -1.0], [-1.0, -1.0, 2.0, -1.0]);
        assert_eq!((o[0][0], o[0][1], o[2][2]), (0.5, 0.5, 2.0));
        assert_eq!(o[1], w[1]);
    }
}
