//! The per-scale stages of libvmaf's float ADM (`adm_tools.c`): decoupling
//! the distorted detail bands into restored and additive parts, contrast
//! sensitivity weighting, contrast masking, and the p-norm pooling of the
//! numerator and denominator.
//!
//! Planes come in (h, v, d) triples, libvmaf's angle order.

use super::dwt::Bands;
use crate::feature::common::float_plane::FloatPlane;

pub type Triple = [FloatPlane; 3];

/// `FLOAT_ONE_BY_30` / `FLOAT_ONE_BY_15`: `double` literals, so the products
/// they appear in are computed in `double`.
const ONE_BY_30: f64 = 0.0333333351;
const ONE_BY_15: f64 = 0.0666666701;

/// A band region, rows `top..bottom`, columns `left..right`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Region {
    pub left: isize,
    pub top: isize,
    pub right: isize,
    pub bottom: isize,
}

impl Region {
    /// The region ADM pools: `border_factor` of each side left out
    /// (`int left = w * border_factor - 0.5;`).
    pub fn pooled(w: usize, h: usize, border_factor: f64) -> Self {
        let left = (w as f64 * border_factor - 0.5) as isize;
        let top = (h as f64 * border_factor - 0.5) as isize;
        Self {
            left,
            top,
            right: w as isize - left,
            bottom: h as isize - top,
        }
    }

    /// The pooled region widened by the masking filter's reach (one tap
    /// before, two after) and clamped to the band: where decoupling and CSF
    /// weighting are computed.
    pub fn widened(w: usize, h: usize, border_factor: f64) -> Self {
        let left = (w as f64 * border_factor - 0.5 - 1.0) as isize;
        let top = (h as f64 * border_factor - 0.5 - 1.0) as isize;
        Self {
            left: left.max(0),
            top: top.max(0),
            right: (w as isize - left + 2).min(w as isize),
            bottom: (h as isize - top + 2).min(h as isize),
        }
    }

    fn cols(&self) -> std::ops::Range<usize> {
        self.left.max(0) as usize..self.right.max(0) as usize
    }

    fn rows(&self) -> std::ops::Range<usize> {
        self.top.max(0) as usize..self.bottom.max(0) as usize
    }

    /// Sample count, as the noise constant uses it.
    fn area(&self) -> i64 {
        ((self.right - self.left) * (self.bottom - self.top)) as i64
    }
}

/// libvmaf's `DIVS`: on x86 a multiplication by `rcpss`'s reciprocal
/// estimate refined by one Newton-Raphson step (`ADM_OPT_RECIP_DIVISION`),
/// so the quotient depends on the processor as libvmaf's does; elsewhere a
/// plain division, as libvmaf without SSE2.
#[inline(always)]
fn divs(n: f32, d: f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_cvtss_f32, _mm_rcp_ss, _mm_set_ss};
        // SAFETY: SSE is part of the x86_64 baseline.
        #[allow(unused_unsafe)]
        let xi = unsafe { _mm_cvtss_f32(_mm_rcp_ss(_mm_set_ss(d))) };
        n * (xi + xi * (1.0 - d * xi))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        n / d
    }
}

/// `adm_decouple_s` over `region`: splits each distorted detail coefficient
/// into the part explained by the reference (`restored`, gain-limited) and
/// the rest (`additive`).
#[inline(always)]
pub fn decouple(
    reference: &Bands,
    distorted: &Bands,
    restored: &mut Triple,
    additive: &mut Triple,
    region: Region,
    enhn_gain_limit: f64,
) {
    let (w, h) = (reference.h.width, reference.h.height);
    for p in restored.iter_mut().chain(additive.iter_mut()) {
        p.reshape(w, h);
    }
    let cos_1deg_sq = cos_1deg_sq();
    let eps = 1e-30f64 as f32;
    let [rh, rv, rd] = restored;
    let [ah, av, ad] = additive;
    for i in region.rows() {
        let (oh, ov, od) = (reference.h.row(i), reference.v.row(i), reference.d.row(i));
        let (th, tv, td) = (distorted.h.row(i), distorted.v.row(i), distorted.d.row(i));
        let (rh, rv, rd) = (rh.row_mut(i), rv.row_mut(i), rd.row_mut(i));
        let (ah, av, ad) = (ah.row_mut(i), av.row_mut(i), ad.row_mut(i));
        for j in region.cols() {
            let (o, t) = ([oh[j], ov[j], od[j]], [th[j], tv[j], td[j]]);
            // Is the angle between (oh, ov) and (th, tv) under one degree?
            let ot_dp = o[0] * t[0] + o[1] * t[1];
            let o_mag_sq = o[0] * o[0] + o[1] * o[1];
            let t_mag_sq = t[0] * t[0] + t[1] * t[1];
            let angle_flag = ot_dp >= 0.0 && ot_dp * ot_dp >= cos_1deg_sq * o_mag_sq * t_mag_sq;
            let rst = [0, 1, 2].map(|b| restore(o[b], t[b], eps, angle_flag, enhn_gain_limit));
            rh[j] = rst[0];
            rv[j] = rst[1];
            rd[j] = rst[2];
            ah[j] = t[0] - rst[0];
            av[j] = t[1] - rst[1];
            ad[j] = t[2] - rst[2];
        }
    }
}

/// `const float cos_1deg_sq = cos(1.0 * M_PI / 180.0) * cos(...)`: the
/// decouple's angle test threshold.
pub fn cos_1deg_sq() -> f32 {
    let cos_1deg = (1.0f64 * std::f64::consts::PI / 180.0).cos();
    (cos_1deg * cos_1deg) as f32
}

/// One band of the decouple: `o` scaled by the clipped ratio `t / o`, then,
/// for nearly parallel vectors, enhancement allowed up to the gain limit
/// (the limit arithmetic is in `double`, as C promotes it).
#[inline(always)]
fn restore(o: f32, t: f32, eps: f32, angle_flag: bool, gain_limit: f64) -> f32 {
    // `k < 0 ? 0 : (k > 1 ? 1 : k)`; NaN passes through either way.
    let k = divs(t, o + eps).clamp(0.0, 1.0);
    let mut rst = k * o;
    if angle_flag && (rst as f64) > 0.0 {
        let e = rst as f64 * gain_limit;
        rst = (if e < t as f64 { e } else { t as f64 }) as f32;
    }
    if angle_flag && (rst as f64) < 0.0 {
        let e = rst as f64 * gain_limit;
        rst = (if e > t as f64 { e } else { t as f64 }) as f32;
    }
    rst
}

/// `adm_csf_s` over `region`: `weighted = w * src` and `filtered =
/// |weighted| / 30`, the masking filter's neighbour taps.
#[inline(always)]
pub fn csf(
    src: &Triple,
    weights: [f32; 3],
    region: Region,
    weighted: &mut Triple,
    filtered: &mut Triple,
) {
    let (w, h) = (src[0].width, src[0].height);
    for theta in 0..3 {
        weighted[theta].reshape(w, h);
        filtered[theta].reshape(w, h);
        let f = weights[theta];
        for i in region.rows() {
            let s = &src[theta].row(i)[region.cols()];
            let dw = &mut weighted[theta].row_mut(i)[region.cols()];
            for (d, &x) in dw.iter_mut().zip(s) {
                *d = f * x;
            }
            let dw = &weighted[theta].row(i)[region.cols()];
            let df = &mut filtered[theta].row_mut(i)[region.cols()];
            for (d, &x) in df.iter_mut().zip(dw) {
                *d = (ONE_BY_30 * x.abs() as f64) as f32;
            }
        }
    }
}

/// How pooled values are raised: `x^3` by multiplication when the p-norm
/// is 3 (libvmaf's fast path), `powf` otherwise.
#[derive(Debug, Clone, Copy)]
pub struct PNorm(pub f64);

impl PNorm {
    /// `dst[j] = pow(src[j])`.
    #[inline(always)]
    fn pow_into(self, values: &mut [f32]) {
        if self.0 == 3.0 {
            for x in values {
                *x = *x * *x * *x;
            }
        } else {
            let p = self.0 as f32;
            for x in values {
                *x = x.powf(p);
            }
        }
    }

    /// `powf(accum, 1.0f / adm_p_norm) + get_noise_constant(...)`
    #[inline(always)]
    fn finish(self, accum: f32, region: Region, noise_weight: f64) -> f32 {
        let inv = (1.0f64 / self.0) as f32;
        let noise = ((region.area() as f64 * noise_weight) as f32).powf(inv);
        accum.powf(inv) + noise
    }
}

/// Adds `values` to the row sums in order (three independent chains).
#[inline(always)]
fn add_in_order(inner: &mut [f32; 3], values: [&[f32]; 3]) {
    let [h, v, d] = values;
    for ((&x, &y), &z) in h.iter().zip(v).zip(d) {
        inner[0] += x;
        inner[1] += y;
        inner[2] += z;
    }
}

/// Row buffers of [`den_scale`] and [`cm`].
#[derive(Debug, Default)]
pub struct RowScratch {
    thr: Vec<f32>,
    values: [Vec<f32>; 3],
}

/// `adm_csf_den_scale_s`: the p-norm of the CSF-weighted reference detail
/// bands over the pooled region, summed over the three angles.
#[inline(always)]
pub fn den_scale(
    reference: &Bands,
    weights: [f32; 3],
    region: Region,
    noise_weight: f64,
    p: PNorm,
    scratch: &mut RowScratch,
) -> f32 {
    let bands = reference.details();
    let cols = region.cols();
    let mut accum = [0.0f32; 3];
    for v in &mut scratch.values {
        v.resize(cols.len(), 0.0);
    }
    for i in region.rows() {
        for theta in 0..3 {
            let src = &bands[theta].row(i)[cols.clone()];
            let f = weights[theta];
            let out = &mut scratch.values[theta][..];
            for (o, &x) in out.iter_mut().zip(src) {
                *o = (f * x).abs();
            }
            p.pow_into(out);
        }
        let mut inner = [0.0f32; 3];
        let [a, b, c] = &scratch.values;
        add_in_order(&mut inner, [a, b, c]);
        for theta in 0..3 {
            accum[theta] += inner[theta];
        }
    }
    pool(accum, p, region, noise_weight)
}

/// The pooled value of a scale from its three angles' sums of powers:
/// each angle's p-th root plus the noise floor, the three added up.
pub fn pool(accum: [f32; 3], p: PNorm, region: Region, noise_weight: f64) -> f32 {
    let [h, v, d] = accum.map(|a| p.finish(a, region, noise_weight));
    h + v + d
}

/// Contrast masking settings of one [`cm`] call.
#[derive(Debug, Clone, Copy)]
pub struct Masking {
    pub border_factor: f64,
    pub noise_weight: f64,
    /// `adm_bypass_cm`: no masking threshold.
    pub bypass: bool,
    pub p: PNorm,
}

/// `adm_cm_s`: the p-norm over the pooled region of the CSF-weighted `src`
/// bands less their masking threshold (the 3x3 neighbourhood of `filtered`
/// with the centre from `weighted`, summed over the three angles).
#[inline(always)]
pub fn cm(
    src: &Triple,
    weighted: &Triple,
    filtered: &Triple,
    weights: [f32; 3],
    m: Masking,
    scratch: &mut RowScratch,
) -> f32 {
    let (w, h) = (src[0].width, src[0].height);
    let region = Region::pooled(w, h, m.border_factor);
    let start_col = region.left.max(1) as usize;
    let end_col = (region.right.min(w as isize - 1).max(0) as usize).max(start_col);
    let start_row = region.top.max(1) as usize;
    let end_row = region.bottom.min(h as isize - 1).max(0) as usize;

    // Rows and columns in libvmaf's order: the first one only when the
    // region reaches it, the inner ones, the last one only when reached.
    let first_col = region.left <= 0;
    let last_col = region.right > w as isize - 1;
    let rows = (region.top <= 0)
        .then_some(0)
        .into_iter()
        .chain(start_row..end_row)
        .chain((region.bottom > h as isize - 1).then_some(h - 1));
    // Visited columns are `lo..hi`: contiguous, since the first and last
    // columns sit right next to the inner range.
    let lo = if first_col { 0 } else { start_col };
    let hi = if last_col { w } else { end_col };

    scratch.thr.resize(w, 0.0);
    for v in &mut scratch.values {
        v.resize(w, 0.0);
    }
    let mut accum = [0.0f32; 3];
    for i in rows {
        let thr = &mut scratch.thr[..];
        if m.bypass {
            thr.fill(0.0);
        } else {
            thresholds(
                weighted,
                filtered,
                i,
                first_col,
                start_col..end_col,
                last_col,
                thr,
            );
        }
        for theta in 0..3 {
            let s = &src[theta].row(i)[lo..hi];
            let f = weights[theta];
            let out = &mut scratch.values[theta][lo..hi];
            for ((o, &x), &t) in out.iter_mut().zip(s).zip(&thr[lo..hi]) {
                let x = (x * f).abs() - t;
                *o = if x < 0.0 { 0.0 } else { x };
            }
            m.p.pow_into(out);
        }
        let mut inner = [0.0f32; 3];
        let [a, b, c] = &scratch.values;
        add_in_order(&mut inner, [&a[lo..hi], &b[lo..hi], &c[lo..hi]]);
        for theta in 0..3 {
            accum[theta] += inner[theta];
        }
    }
    pool(accum, m.p, region, m.noise_weight)
}

/// Masking thresholds of row `i` at the columns [`cm`] visits: for each
/// angle, the nine-tap sum (neighbours from `filtered`, the centre
/// `|weighted| / 15` added in `double`), the three angles added up. Taps
/// before the first row/column mirror to index 1; past the last they repeat
/// the last one.
#[inline(always)]
fn thresholds(
    weighted: &Triple,
    filtered: &Triple,
    i: usize,
    first_col: bool,
    inner: std::ops::Range<usize>,
    last_col: bool,
    thr: &mut [f32],
) {
    let h = weighted[0].height;
    let w = weighted[0].width;
    let up = if i == 0 { 1 } else { i - 1 };
    let down = if i + 1 >= h { h - 1 } else { i + 1 };
    // One column with explicit neighbour columns (the mirrored edges).
    let at = |j: usize, left: usize, right: usize| -> f32 {
        let mut total = 0.0f32;
        for theta in 0..3 {
            let f = &filtered[theta];
            let (r0, r1, r2) = (f.row(up), f.row(i), f.row(down));
            let centre = weighted[theta].row(i)[j];
            total += nine_taps(
                [r0[left], r0[j], r0[right]],
                [r1[left], r1[right]],
                centre,
                [r2[left], r2[j], r2[right]],
            );
        }
        total
    };
    if first_col {
        thr[0] = at(0, 1, 1);
    }
    if last_col {
        thr[w - 1] = at(w - 1, w - 2, w - 1);
    }
    let (s, e) = (inner.start, inner.end);
    if s >= e {
        return;
    }
    let n = e - s;
    let t = &mut thr[s..e];
    t.fill(0.0);
    for theta in 0..3 {
        let f = &filtered[theta];
        let (r0, r1, r2) = (f.row(up), f.row(i), f.row(down));
        let (a0, a1, a2) = (&r0[s - 1..e - 1], &r0[s..e], &r0[s + 1..e + 1]);
        let (b0, b2) = (&r1[s - 1..e - 1], &r1[s + 1..e + 1]);
        let (c0, c1, c2) = (&r2[s - 1..e - 1], &r2[s..e], &r2[s + 1..e + 1]);
        let centre = &weighted[theta].row(i)[s..e];
        for j in 0..n {
            t[j] += nine_taps(
                [a0[j], a1[j], a2[j]],
                [b0[j], b2[j]],
                centre[j],
                [c0[j], c1[j], c2[j]],
            );
        }
    }
}

/// The nine-tap sum of one angle, in libvmaf's order: row above, then the
/// centre row with `FLOAT_ONE_BY_15 * |centre|` added in `double`, then the
/// row below.
#[inline(always)]
fn nine_taps(above: [f32; 3], beside: [f32; 2], centre: f32, below: [f32; 3]) -> f32 {
    let mut sum = 0.0f32;
    sum += above[0];
    sum += above[1];
    sum += above[2];
    sum += beside[0];
    sum = (sum as f64 + ONE_BY_15 * centre.abs() as f64) as f32;
    sum += beside[1];
    sum += below[0];
    sum += below[1];
    sum += below[2];
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_match_libvmaf_integer_truncation() {
        // 288 * 0.1 - 0.5 = 28.3 -> 28; widened: 27.3 -> 27, right 288 - 27 + 2.
        let p = Region::pooled(288, 162, 0.1);
        assert_eq!((p.left, p.right, p.top, p.bottom), (28, 260, 15, 147));
        let q = Region::widened(288, 162, 0.1);
        assert_eq!((q.left, q.right, q.top, q.bottom), (27, 263, 14, 150));
        // Tiny bands: truncation toward zero, then clamping.
        let t = Region::widened(6, 6, 0.1);
        assert_eq!((t.left, t.right), (0, 6));
    }

    #[test]
    fn division_is_close_to_exact() {
        for &(n, d) in &[(1.0f32, 3.0f32), (-7.5, 0.25), (1e-3, 123.0)] {
            assert!((divs(n, d) - n / d).abs() <= (n / d).abs() * 1e-6);
        }
    }
}
