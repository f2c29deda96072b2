//! The per-pixel error maps of one channel at one scale and their 1- and
//! 4-norms, as libjxl's `SSIMMap` and `EdgeDiffMap` compute them: the
//! per-pixel terms in `f32` where libjxl uses `float`, the error and the
//! sums in `f64`; the sums per column, then across columns in a fixed tree
//! ([`channel_sums`]).

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

/// Sums per channel and scale, in this order: the SSIM error and its 4th
/// power, the artifact and its 4th power, the detail lost and its 4th
/// power.
pub const SUMS: usize = 6;

/// The [`SUMS`] of one channel at one scale from the blurred planes
/// (`mu1 = blur(img1)`, `mu2 = blur(img2)`, `s11 = blur(img1 img1)`,
/// `s22 = blur(img2 img2)`, `s12 = blur(img1 img2)`), all `width` wide.
///
/// Order (not libjxl's, which adds every term into one running sum in
/// raster order): each column's terms are added in row order, then the
/// columns' sums in [`tree_sum`]'s fixed tree, so a GPU can add every
/// column at once and give the same bits. Against libjxl's order the
/// sums differ by double rounding only (the scores by far less than the
/// 0.01 the golden check allows; tests/parity/ssimulacra2.rs).
#[allow(clippy::too_many_arguments)]
pub fn channel_sums(
    img1: &[f32],
    img2: &[f32],
    mu1: &[f32],
    mu2: &[f32],
    s11: &[f32],
    s22: &[f32],
    s12: &[f32],
    width: usize,
) -> [f64; SUMS] {
    let mut columns: [Vec<f64>; SUMS] = std::array::from_fn(|_| vec![0.0f64; width]);
    let mut d = vec![0.0f64; width];
    for start in (0..img1.len()).step_by(width) {
        let at = |p| part(p, start, width);
        ssim_errors(at(mu1), at(mu2), at(s11), at(s22), at(s12), &mut d);
        let [c0, c1, c2, c3, c4, c5] = &mut columns;
        for (x, &d) in d.iter().enumerate() {
            c0[x] += d;
            c1[x] += quartic(d);
        }
        edge_ratios(at(img1), at(mu1), at(img2), at(mu2), &mut d);
        for (x, &d1) in d.iter().enumerate() {
            let artifact = at_least_zero(d1);
            let detail_lost = at_least_zero(-d1);
            c2[x] += artifact;
            c3[x] += quartic(artifact);
            c4[x] += detail_lost;
            c5[x] += quartic(detail_lost);
        }
    }
    columns.map(|mut c| tree_sum(&mut c))
}

/// The sum of `values` in a fixed pairwise tree, in place: at each level
/// (`step` 1, 2, 4, ...) `values[a] += values[a + step]` for every `a` a
/// multiple of `2 step` with `a + step` inside; the total ends in
/// `values[0]` (0 for none). kernels/ssimulacra2.cu adds in the same tree.
pub fn tree_sum(values: &mut [f64]) -> f64 {
    let n = values.len();
    let mut step = 1;
    while step < n {
        let mut a = 0;
        while a + step < n {
            values[a] += values[a + step];
            a += 2 * step;
        }
        step *= 2;
    }
    values.first().copied().unwrap_or(0.0)
}

/// `([mean, 4-norm] of the SSIM error, [artifact mean, artifact 4-norm,
/// detail-lost mean, detail-lost 4-norm])` from a channel's [`SUMS`] over
/// `pixels` pixels.
pub fn norms(sums: &[f64; SUMS], pixels: usize) -> ([f64; 2], [f64; 4]) {
    let one_per_pixels = 1.0 / pixels as f64;
    let mean = |s: f64| one_per_pixels * s;
    let norm4 = |s: f64| (one_per_pixels * s).sqrt().sqrt();
    (
        [mean(sums[0]), norm4(sums[1])],
        [mean(sums[2]), norm4(sums[3]), mean(sums[4]), norm4(sums[5])],
    )
}

/// `len` values of `p` from `start`.
fn part(p: &[f32], start: usize, len: usize) -> &[f32] {
    &p[start..][..len]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_adds_neighbours_then_pairs_of_pairs() {
        // Five values: ((v0 + v1) + (v2 + v3)) + v4, the shape the kernel
        // adds in (0.1 + 0.2 + 0.3 in another order rounds otherwise).
        let v = [0.1, 0.2, 0.3, 1e-17, 0.4];
        let mut t = v;
        assert_eq!(tree_sum(&mut t), ((v[0] + v[1]) + (v[2] + v[3])) + v[4]);
        assert_eq!(tree_sum(&mut [2.5]), 2.5);
        assert_eq!(tree_sum(&mut []), 0.0);
        let mut seven = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];
        assert_eq!(tree_sum(&mut seven), 127.0);
    }

    #[test]
    fn sums_follow_each_column_then_the_tree() {
        // Identical pictures: no error anywhere.
        let (w, h) = (5, 3);
        let img: Vec<f32> = (0..w * h).map(|i| i as f32 / 16.0).collect();
        let sq: Vec<f32> = img.iter().map(|v| v * v).collect();
        let sums = channel_sums(&img, &img, &img, &img, &sq, &sq, &sq, w);
        assert_eq!(sums, [0.0; SUMS]);
        let (ssim, edge) = norms(&sums, w * h);
        assert_eq!((ssim, edge), ([0.0; 2], [0.0; 4]));
    }
}
