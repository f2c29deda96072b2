//! libvmaf's float VIF (`compute_vif` in `vif.c`, `vif_statistic_s` in
//! `vif_tools.c`): four scales, each blurred with its own Gaussian and
//! decimated by two, with the "matching_matlab" statistic and the fast
//! polynomial `log2`.
//!
//! The filtered planes are produced one row at a time and consumed at once,
//! so no full-size intermediate plane exists besides the decimated images.

use crate::feature::common::float_plane::FloatPlane;
use crate::feature::common::mirrored_filter::{fir, tap_rows, PaddedRow, MAX_TAPS};

/// Per-scale numerator and denominator sums, as libvmaf's `float`s.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct VifSums {
    pub num: [f32; 4],
    pub den: [f32; 4],
}

/// Buffers reused from frame to frame.
#[derive(Debug, Default)]
pub struct VifScratch {
    ref_scaled: [FloatPlane; 2],
    dis_scaled: [FloatPlane; 2],
    /// Vertical-pass rows (padded) of mu1, mu2, ref^2, dis^2, ref*dis.
    vertical: [PaddedRow; 5],
    /// The same after the horizontal pass.
    filtered: [Vec<f32>; 5],
    /// Per-sample statistic values of one row.
    num_row: Vec<f32>,
    den_row: Vec<f32>,
}

impl VifScratch {
    pub fn new(width: usize, height: usize) -> Self {
        let half = |n: usize| n / 2;
        let plane = || FloatPlane::new(half(width), half(height));
        Self {
            ref_scaled: [plane(), plane()],
            dis_scaled: [plane(), plane()],
            vertical: std::array::from_fn(|_| PaddedRow::new(width, 0)),
            filtered: std::array::from_fn(|_| vec![0.0; width]),
            num_row: vec![0.0; width],
            den_row: vec![0.0; width],
        }
    }
}

/// The VIF sums of one reference/distorted pair of `f32` planes (samples
/// already offset by -128).
pub fn compute_vif(
    reference: &FloatPlane,
    distorted: &FloatPlane,
    kernels: &[Vec<f32>; 4],
    params: VifParams,
    scratch: &mut VifScratch,
) -> VifSums {
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::has_avx2() {
        // SAFETY: the CPU supports AVX2.
        return unsafe { compute_vif_avx2(reference, distorted, kernels, params, scratch) };
    }
    compute_vif_impl(reference, distorted, kernels, params, scratch)
}

/// [`compute_vif_impl`] compiled for AVX2: wider vectors, the same
/// arithmetic (Rust never fuses multiply-adds, so results are identical).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn compute_vif_avx2(
    reference: &FloatPlane,
    distorted: &FloatPlane,
    kernels: &[Vec<f32>; 4],
    params: VifParams,
    scratch: &mut VifScratch,
) -> VifSums {
    compute_vif_impl(reference, distorted, kernels, params, scratch)
}

#[inline(always)]
fn compute_vif_impl(
    reference: &FloatPlane,
    distorted: &FloatPlane,
    kernels: &[Vec<f32>; 4],
    params: VifParams,
    scratch: &mut VifScratch,
) -> VifSums {
    let mut sums = VifSums::default();
    let VifScratch {
        ref_scaled,
        dis_scaled,
        vertical,
        filtered,
        num_row,
        den_row,
    } = scratch;
    for (scale, kernel) in kernels.iter().enumerate() {
        if scale == 0 && params.skip_scale0 {
            continue;
        }
        if scale > 0 {
            // Scale s is scale s-1 blurred with scale s's kernel, every
            // other row and column kept. Even slots hold odd scales.
            let (src_ref, dst_ref) = pick(ref_scaled, reference, scale);
            decimate(kernel, src_ref, dst_ref, &mut vertical[0]);
            let (src_dis, dst_dis) = pick(dis_scaled, distorted, scale);
            decimate(kernel, src_dis, dst_dis, &mut vertical[0]);
        }
        let (r, d) = if scale == 0 {
            (reference, distorted)
        } else {
            (&ref_scaled[scale % 2], &dis_scaled[scale % 2])
        };
        let (num, den) = scale_sums(kernel, r, d, params, vertical, filtered, [num_row, den_row]);
        sums.num[scale] = num;
        sums.den[scale] = den;
    }
    sums
}

/// Source (scale - 1) and destination (scale) of a decimation step.
fn pick<'a>(
    scaled: &'a mut [FloatPlane; 2],
    original: &'a FloatPlane,
    scale: usize,
) -> (&'a FloatPlane, &'a mut FloatPlane) {
    let [a, b] = scaled;
    match scale {
        1 => (original, b),
        s if s % 2 == 0 => (b, a),
        _ => (a, b),
    }
}

/// `vif_filter1d` then `vif_dec2`: blurs `src` and keeps the samples at even
/// rows and columns, `src / 2` (rounded down) in each direction.
#[inline(always)]
fn decimate(kernel: &[f32], src: &FloatPlane, dst: &mut FloatPlane, row: &mut PaddedRow) {
    dst.reshape(src.width / 2, src.height / 2);
    row.reshape(src.width, kernel.len() / 2);
    for y in 0..dst.height {
        fir(kernel, &tap_rows(src, 2 * y, kernel.len()), row.body_mut());
        row.mirror_edges();
        row.filter_even_into(kernel, dst.row_mut(y));
    }
}

/// The numerator and denominator of one scale: the five filtered planes
/// (means, second moments) row by row, each row's statistic summed in
/// `f32`, then added to the scale total.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn scale_sums(
    kernel: &[f32],
    r: &FloatPlane,
    d: &FloatPlane,
    params: VifParams,
    vertical: &mut [PaddedRow; 5],
    filtered: &mut [Vec<f32>; 5],
    [num_row, den_row]: [&mut Vec<f32>; 2],
) -> (f32, f32) {
    let w = r.width;
    num_row.resize(w, 0.0);
    den_row.resize(w, 0.0);
    let radius = kernel.len() / 2;
    for (v, f) in vertical.iter_mut().zip(filtered.iter_mut()) {
        v.reshape(w, radius);
        f.resize(w, 0.0);
    }
    let mut accum_num = 0.0f32;
    let mut accum_den = 0.0f32;
    for y in 0..r.height {
        vertical_moments(
            kernel,
            &tap_rows(r, y, kernel.len()),
            &tap_rows(d, y, kernel.len()),
            vertical,
        );
        for (v, f) in vertical.iter_mut().zip(filtered.iter_mut()) {
            v.mirror_edges();
            v.filter_into(kernel, f);
        }
        let [mu1, mu2, xx, yy, xy] = &*filtered;
        let (num, den) = row_statistic(&mu1[..w], mu2, xx, yy, xy, params, num_row, den_row);
        accum_num += num;
        accum_den += den;
    }
    (accum_num, accum_den)
}

/// The vertical pass of the five local moments: for each column, `sum_k
/// f[k] * x` with `x` = ref, dis, ref^2, dis^2 and ref*dis of the tap rows
/// (`vif_filter1d`, `_sq`, `_xy`), taps added in filter order.
#[inline(always)]
fn vertical_moments(
    filter: &[f32],
    r: &[&[f32]; MAX_TAPS],
    d: &[&[f32]; MAX_TAPS],
    out: &mut [PaddedRow; 5],
) {
    let [o0, o1, o2, o3, o4] = out;
    fir(filter, r, o0.body_mut());
    fir(filter, d, o1.body_mut());
    let (xx, yy, xy) = (o2.body_mut(), o3.body_mut(), o4.body_mut());
    let n = xx.len();
    xx.fill(0.0);
    yy.fill(0.0);
    xy.fill(0.0);
    for (k, &f) in filter.iter().enumerate() {
        let (a, b) = (&r[k][..n], &d[k][..n]);
        for (o, &x) in xx.iter_mut().zip(a) {
            *o += f * (x * x);
        }
        for (o, &y) in yy.iter_mut().zip(b) {
            *o += f * (y * y);
        }
        for ((o, &x), &y) in xy.iter_mut().zip(a).zip(b) {
            *o += f * (x * y);
        }
    }
}

/// The statistic's parameters.
#[derive(Debug, Clone, Copy)]
pub struct VifParams {
    /// `(float) vif_enhn_gain_limit`
    pub enhn_gain_limit: f32,
    /// `vif_sigma_nsq`, a `double` in libvmaf: it promotes the expressions
    /// it appears in.
    pub sigma_nsq: f64,
    /// `vif_skip_scale0`: scale 0's sums are not computed (left 0); the
    /// other scales do not depend on them.
    pub skip_scale0: bool,
}

impl VifParams {
    /// `powf(vif_sigma_nsq, 2.0f) / (255.0*255.0)`, stored as a float: the
    /// low-variance numerator's scale.
    pub fn sigma_max_inv(&self) -> f32 {
        ((self.sigma_nsq as f32).powf(2.0) as f64 / (255.0 * 255.0)) as f32
    }
}

const EPS: f32 = 1.0e-10;

/// `vif_statistic_s` over one row ("matching_matlab" mode): the row sums of
/// the information numerator and denominator. The per-sample values are
/// computed branch-free into `num`/`den` (so they vectorise), then added up
/// in order, as libvmaf adds them.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn row_statistic(
    mu1: &[f32],
    mu2: &[f32],
    xx: &[f32],
    yy: &[f32],
    xy: &[f32],
    p: VifParams,
    num: &mut [f32],
    den: &mut [f32],
) -> (f32, f32) {
    let n = mu1.len();
    let (mu2, xx, yy, xy) = (&mu2[..n], &xx[..n], &yy[..n], &xy[..n]);
    let (num, den) = (&mut num[..n], &mut den[..n]);
    let sigma_max_inv = p.sigma_max_inv();
    let nsq = p.sigma_nsq;
    let limit = p.enhn_gain_limit;
    for j in 0..n {
        let (m1, m2) = (mu1[j], mu2[j]);
        let sigma1_sq = max0(xx[j] - m1 * m1);
        let sigma2_sq = max0(yy[j] - m2 * m2);
        let sigma12 = xy[j] - m1 * m2;

        let g = sigma12 / (sigma1_sq + EPS);
        let sv_sq = sigma2_sq - g * sigma12;
        // if (sigma1_sq < eps) { g = 0; sv_sq = sigma2_sq; sigma1_sq = 0; }
        let flat1 = sigma1_sq < EPS;
        let (g, sv_sq, sigma1_sq) = if flat1 {
            (0.0, sigma2_sq, 0.0)
        } else {
            (g, sv_sq, sigma1_sq)
        };
        // if (sigma2_sq < eps) { g = 0; sv_sq = 0; }
        let flat2 = sigma2_sq < EPS;
        let (g, sv_sq) = if flat2 { (0.0, 0.0) } else { (g, sv_sq) };
        // if (g < 0) { sv_sq = sigma2_sq; g = 0; }
        let (g, sv_sq) = if g < 0.0 {
            (0.0, sigma2_sq)
        } else {
            (g, sv_sq)
        };
        let sv_sq = if sv_sq > EPS { sv_sq } else { EPS };
        let g = if g < limit { g } else { limit };

        // Evaluated in double, rounded to float by log2f's parameter.
        let num_arg = 1.0 + (g * g * sigma1_sq) as f64 / (sv_sq as f64 + nsq);
        let den_arg = 1.0 + sigma1_sq as f64 / nsq;
        let num_val = if sigma12 < 0.0 {
            0.0
        } else {
            log2_approx(num_arg as f32)
        };
        let den_val = log2_approx(den_arg as f32);
        let low = (sigma1_sq as f64) < nsq;
        num[j] = if low {
            1.0 - sigma2_sq * sigma_max_inv
        } else {
            num_val
        };
        den[j] = if low { 1.0 } else { den_val };
    }
    let mut row_num = 0.0f32;
    let mut row_den = 0.0f32;
    for (&a, &b) in num.iter().zip(den.iter()) {
        row_num += a;
        row_den += b;
    }
    (row_num, row_den)
}

/// C's `MAX(x, 0.0f)`: NaN and -0.0 become 0.0.
#[inline(always)]
fn max0(x: f32) -> f32 {
    if x > 0.0 {
        x
    } else {
        0.0
    }
}

/// `log2_poly_s`: Horner coefficients (C `double` literals in a `float`
/// table), highest power first.
const LOG2_POLY: [f32; 9] = crate::feature::common::to_f32([
    -0.012671635276421,
    0.064841182402670,
    -0.157048836463065,
    0.257167726303123,
    -0.353800560300520,
    0.480131410397451,
    -0.721314327952201,
    1.442694803896991,
    0.0,
]);

/// libvmaf's `log2f_approx` (VIF_OPT_FAST_LOG2): exponent plus a degree-8
/// polynomial of the mantissa.
#[inline(always)]
pub fn log2_approx(x: f32) -> f32 {
    let bits = x.to_bits();
    let exponent = (bits & 0x7F80_0000) >> 23;
    let mantissa = bits & 0x007F_FFFF;
    let remain = f32::from_bits(mantissa | 0x3F80_0000);
    let log_base = (exponent as i32 - 127) as f32;
    let t = remain - 1.0;
    let mut log_remain = 0.0f32;
    for c in LOG2_POLY {
        log_remain = log_remain * t + c;
    }
    // Written as selects rather than early returns so callers vectorise.
    if x == 0.0 {
        f32::NEG_INFINITY
    } else if x < 0.0 {
        f32::NAN
    } else {
        log_base + log_remain
    }
}

/// Smallest plane side for which every scale's kernel fits (mirrored taps
/// stay inside the plane).
pub fn min_side(kernels: &[Vec<f32>; 4]) -> usize {
    (1..)
        .find(|&n| {
            let mut side = n;
            kernels.iter().enumerate().all(|(scale, k)| {
                if scale > 0 {
                    // Decimation filters the previous scale, then halves it.
                    if side <= k.len() / 2 {
                        return false;
                    }
                    side /= 2;
                }
                side > k.len() / 2
            })
        })
        .unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_approx_is_close_to_log2() {
        for &x in &[1.0f32, 1.5, 2.0, 3.7, 100.0, 12345.678] {
            assert!((log2_approx(x) - x.log2()).abs() < 1e-4, "{x}");
        }
        assert_eq!(log2_approx(1.0), 0.0);
        assert_eq!(log2_approx(0.0), f32::NEG_INFINITY);
    }

    #[test]
    fn avx2_build_gives_identical_sums() {
        let (r, d) = (
            FloatPlane::texture(101, 67, 1),
            FloatPlane::texture(101, 67, 2),
        );
        let k = super::super::kernels::kernels_for(1.0).unwrap();
        let p = VifParams {
            enhn_gain_limit: 100.0,
            sigma_nsq: 2.0,
            skip_scale0: false,
        };
        let base = compute_vif_impl(&r, &d, &k, p, &mut VifScratch::default());
        assert!(base
            .num
            .iter()
            .chain(&base.den)
            .all(|v| v.is_finite() && *v != 0.0));
        #[cfg(target_arch = "x86_64")]
        if crate::cpu::has_avx2() {
            // SAFETY: checked above.
            let wide = unsafe { compute_vif_avx2(&r, &d, &k, p, &mut VifScratch::default()) };
            assert_eq!(base, wide);
        }
    }

    #[test]
    fn min_side_of_default_kernels() {
        let k = super::super::kernels::kernels_for(1.0).unwrap();
        // radius 8 at scale 0 and 1 (of the full plane), 2 at n/2, 1 at n/4 and n/8.
        assert_eq!(min_side(&k), 16);
    }
}
