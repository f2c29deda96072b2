//! The per-pixel error maps of one channel at one scale and their 1- and
//! 4-norms, as libjxl's `SSIMMap` and `EdgeDiffMap` compute them: the
//! per-pixel terms in `f32` where libjxl uses `float`, the error and the
//! sums in `f64`, summed in raster order.

/// libjxl's `kC2`.
const C2: f32 = 0.0009;

/// `x^4` as libjxl's `quartic` (square twice).
#[inline(always)]
fn quartic(x: f64) -> f64 {
    let x = x * x;
    x * x
}

/// libjxl's `std::max(x, 0.0)` (a NaN would pass through).
#[inline(always)]
fn at_least_zero(x: f64) -> f64 {
    if x < 0.0 {
        0.0
    } else {
        x
    }
}

/// `len` values of `p` from `start`.
fn part(p: &[f32], start: usize, len: usize) -> &[f32] {
    &p[start..][..len]
}

/// Pixels per chunk: the error terms of a chunk are computed first (a loop
/// the compiler vectorises), then added in raster order.
const CHUNK: usize = 1024;

/// `[mean, 4-norm]` of the SSIM error map (SSIMULACRA 2's variant: no
/// luminance denominator, `1 - (mu1 - mu2)^2` instead) from the blurred
/// planes `mu1 = blur(a)`, `mu2 = blur(b)`, `s11 = blur(a a)`,
/// `s22 = blur(b b)`, `s12 = blur(a b)`.
pub fn ssim_norms(mu1: &[f32], mu2: &[f32], s11: &[f32], s22: &[f32], s12: &[f32]) -> [f64; 2] {
    let n = mu1.len();
    let mut sum = [0.0f64; 2];
    let mut d = [0.0f64; CHUNK];
    for start in (0..n).step_by(CHUNK) {
        let len = CHUNK.min(n - start);
        let at = |p| part(p, start, len);
        ssim_errors(at(mu1), at(mu2), at(s11), at(s22), at(s12), &mut d[..len]);
        for &d in &d[..len] {
            sum[0] += d;
            sum[1] += quartic(d);
        }
    }
    let one_per_pixels = 1.0 / n as f64;
    [
        one_per_pixels * sum[0],
        (one_per_pixels * sum[1]).sqrt().sqrt(),
    ]
}

/// The SSIM error of each pixel, `max(0, 1 - SSIM')`.
fn ssim_errors(mu1: &[f32], mu2: &[f32], s11: &[f32], s22: &[f32], s12: &[f32], d: &mut [f64]) {
    let n = d.len();
    let (mu1, mu2, s11, s22, s12) = (&mu1[..n], &mu2[..n], &s11[..n], &s22[..n], &s12[..n]);
    for i in 0..n {
        let (m1, m2) = (mu1[i], mu2[i]);
        let mu11 = m1 * m1;
        let mu22 = m2 * m2;
        let mu12 = m1 * m2;
        // `float num_m = 1.0 - (mu1 - mu2) * (mu1 - mu2);`: a double
        // subtraction rounded to float.
        let num_m = (1.0 - ((m1 - m2) * (m1 - m2)) as f64) as f32;
        let num_s = 2.0 * (s12[i] - mu12) + C2;
        let denom_s = (s11[i] - mu11) + (s22[i] - mu22) + C2;
        d[i] = at_least_zero(1.0 - (num_m * num_s / denom_s) as f64);
    }
}

/// `[artifact mean, artifact 4-norm, detail-lost mean, detail-lost 4-norm]`
/// of the edge maps: `d = (1 + |b - mu2|) / (1 + |a - mu1|) - 1`, artifacts
/// (edges the reference lacks) where `d > 0`, lost detail where `d < 0`.
pub fn edge_norms(img1: &[f32], mu1: &[f32], img2: &[f32], mu2: &[f32]) -> [f64; 4] {
    let n = img1.len();
    let mut sum = [0.0f64; 4];
    let mut d = [0.0f64; CHUNK];
    for start in (0..n).step_by(CHUNK) {
        let len = CHUNK.min(n - start);
        let at = |p| part(p, start, len);
        edge_ratios(at(img1), at(mu1), at(img2), at(mu2), &mut d[..len]);
        for &d1 in &d[..len] {
            let artifact = at_least_zero(d1);
            let detail_lost = at_least_zero(-d1);
            sum[0] += artifact;
            sum[1] += quartic(artifact);
            sum[2] += detail_lost;
            sum[3] += quartic(detail_lost);
        }
    }
    let one_per_pixels = 1.0 / n as f64;
    [
        one_per_pixels * sum[0],
        (one_per_pixels * sum[1]).sqrt().sqrt(),
        one_per_pixels * sum[2],
        (one_per_pixels * sum[3]).sqrt().sqrt(),
    ]
}

/// `d` of each pixel (the edge differences in `f32`, the ratio in `f64`).
fn edge_ratios(img1: &[f32], mu1: &[f32], img2: &[f32], mu2: &[f32], d: &mut [f64]) {
    let n = d.len();
    let (img1, mu1, img2, mu2) = (&img1[..n], &mu1[..n], &img2[..n], &mu2[..n]);
    for i in 0..n {
        let e1 = (img1[i] - mu1[i]).abs() as f64;
        let e2 = (img2[i] - mu2[i]).abs() as f64;
        d[i] = (1.0 + e2) / (1.0 + e1) - 1.0;
    }
}
