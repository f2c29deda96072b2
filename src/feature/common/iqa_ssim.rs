//! libvmaf's `_iqa_ssim` in its default configuration (11x11 Gaussian
//! window, K1 = 0.01, K2 = 0.03, L = 255): the mean SSIM of two pictures and
//! the means of its luminance, contrast and structure terms. Shared by
//! `float_ssim` and every scale of `float_ms_ssim`.

use super::iqa_filter::{Convolver, GAUSSIAN_11};

/// Window size: pictures must be at least this wide and high.
pub const WINDOW: usize = GAUSSIAN_11.len();

/// Means over all window positions, rounded to `f32` as libvmaf returns them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SsimMeans {
    pub ssim: f32,
    pub l: f32,
    pub c: f32,
    pub s: f32,
}

/// Scratch buffers, reused across frames and scales.
#[derive(Debug, Default)]
pub struct SsimScratch {
    conv: Convolver,
    ref_mu: Vec<f32>,
    cmp_mu: Vec<f32>,
    ref_var: Vec<f32>,
    cmp_var: Vec<f32>,
    covar: Vec<f32>,
}

/// Stabilising constants `(c1, c2, c3)` as libvmaf computes them, in `f32`.
pub(crate) fn constants() -> (f32, f32, f32) {
    const L: f32 = 255.0;
    let (k1l, k2l) = (0.01f32 * L, 0.03f32 * L);
    let c2 = k2l * k2l;
    (k1l * k1l, c2, c2 / 2.0)
}

/// SSIM of `reference` and `distorted` (`w x h`, packed rows). The caller
/// guarantees `w, h >= WINDOW`.
pub fn ssim(
    reference: &[f32],
    distorted: &[f32],
    w: usize,
    h: usize,
    s: &mut SsimScratch,
) -> SsimMeans {
    let rows = |y: usize| y * w..(y + 1) * w;
    let conv = &mut s.conv;
    conv.convolve_valid(
        w,
        h,
        &GAUSSIAN_11,
        |y, r| r.copy_from_slice(&reference[rows(y)]),
        &mut s.ref_mu,
    );
    conv.convolve_valid(
        w,
        h,
        &GAUSSIAN_11,
        |y, r| r.copy_from_slice(&distorted[rows(y)]),
        &mut s.cmp_mu,
    );
    let products = |a: &[f32], b: &[f32], y: usize, r: &mut [f32]| {
        for ((o, &x), &z) in r.iter_mut().zip(&a[rows(y)]).zip(&b[rows(y)]) {
            *o = x * z;
        }
    };
    conv.convolve_valid(
        w,
        h,
        &GAUSSIAN_11,
        |y, r| products(reference, reference, y, r),
        &mut s.ref_var,
    );
    conv.convolve_valid(
        w,
        h,
        &GAUSSIAN_11,
        |y, r| products(distorted, distorted, y, r),
        &mut s.cmp_var,
    );
    conv.convolve_valid(
        w,
        h,
        &GAUSSIAN_11,
        |y, r| products(reference, distorted, y, r),
        &mut s.covar,
    );

    let (c1, c2, c3) = constants();
    let (mut ssim_sum, mut l_sum, mut c_sum, mut s_sum) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let pixels = s
        .ref_mu
        .iter()
        .zip(&s.cmp_mu)
        .zip(&s.ref_var)
        .zip(&s.cmp_var)
        .zip(&s.covar);
    for ((((&mu1, &mu2), &sq1), &sq2), &both) in pixels {
        // Local (co)variances: E[x^2] - E[x]^2, negatives from rounding
        // clamped (zli-nflx's `MAX(0.0, ...)`).
        let var1 = non_negative(sq1 - mu1 * mu1);
        let var2 = non_negative(sq2 - mu2 * mu2);
        let cov = both - mu1 * mu2;
        let sigma12 = (var1 * var2).sqrt();

        // Mixed precision exactly as in C: numerators promote to double,
        // the `float` denominators and the structure term stay `float`.
        let l = (2.0 * mu1 as f64 * mu2 as f64 + c1 as f64) / (mu1 * mu1 + mu2 * mu2 + c1) as f64;
        let c = (2.0 * sigma12 as f64 + c2 as f64) / (var1 + var2 + c2) as f64;
        // A flat, identical region can leave a tiny negative covariance
        // against a zero sigma product; libvmaf clamps it so s stays 1.
        let cov = if cov < 0.0 && sigma12 <= 0.0 {
            0.0
        } else {
            cov
        };
        let st = ((cov + c3) / (sigma12 + c3)) as f64;

        ssim_sum += l * c * st;
        l_sum += l;
        c_sum += c;
        s_sum += st;
    }
    SsimMeans::from_sums([ssim_sum, l_sum, c_sum, s_sum], s.ref_mu.len())
}

impl SsimMeans {
    /// The means of the per-position sums of `l * c * s`, `l`, `c` and `s`
    /// over `positions` window positions.
    pub(crate) fn from_sums(sums: [f64; 4], positions: usize) -> Self {
        let n = positions as f64;
        let [ssim, l, c, s] = sums.map(|x| (x / n) as f32);
        SsimMeans { ssim, l, c, s }
    }
}

/// C's `MAX(0.0, x)` (keeps NaN, like the C macro).
fn non_negative(x: f32) -> f32 {
    if 0.0 > x {
        0.0
    } else {
        x
    }
}
