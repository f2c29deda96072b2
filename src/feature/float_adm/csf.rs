//! Contrast sensitivity weights of the ADM wavelet bands: Watson et al.'s
//! DWT quantisation noise thresholds (`dwt_quant_step` in `adm_tools.h`),
//! libvmaf's default (`ADM_CSF_MODE_WATSON97`), with the per-scale user
//! overrides `adm_f1sN` / `adm_f2sN`.

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

/// The CSF weights of each scale: `[h, v, d]` = `[f1, f1, f2]`.
pub fn band_weights(
    view_dist: f64,
    display_height: i32,
    f1_overrides: [f64; 4],
    f2_overrides: [f64; 4],
) -> [[f32; 3]; 4] {
    std::array::from_fn(|scale| {
        let mut f1 = 1.0f32 / quant_step(scale, 1, view_dist, display_height);
        let mut f2 = 1.0f32 / quant_step(scale, 2, view_dist, display_height);
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
        let w = band_weights(3.0, 1080, [-1.0; 4], [-1.0; 4]);
        for s in 1..4 {
            assert!(w[s][0] > w[s - 1][0], "{w:?}");
        }
        // The diagonal band is less visible than the h/v bands.
        assert!(w.iter().all(|s| s[2] < s[0]));
        let o = band_weights(3.0, 1080, [0.5, -1.0, -1.0, -1.0], [-1.0, -1.0, 2.0, -1.0]);
        assert_eq!((o[0][0], o[0][1], o[2][2]), (0.5, 0.5, 2.0));
        assert_eq!(o[1], w[1]);
    }
}
