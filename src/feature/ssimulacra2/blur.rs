//! libjxl's recursive Gaussian blur (`tools/gauss_blur.cc`): Charalampidis
//! (2016), "Recursive Implementation of the Gaussian Filter Using Truncated
//! Cosine Functions", three poles k = 1, 3, 5, zero outside the picture.
//!
//! Each pole is an oscillator with its poles on the unit circle, so rounding
//! errors add up along a row instead of dying out: the score moves by tenths
//! when the operation order differs (VMAFx's unfused blur was 0.4 off on the
//! 1280x720 golden pair). Both passes therefore repeat libjxl's operations
//! exactly:
//!
//! * horizontal: libjxl's 4-lane form, which computes four outputs at a time
//!   from the last two with pre-multiplied constants (`mul_in`, `mul_prev`,
//!   `mul_prev2`), scalar steps at the left border (to the first multiple of
//!   4 at or after radius + 1) and at the right end;
//! * vertical: per column `y = fma(n2, top + bottom, -fma(d1, y1, y2))`
//!   (Highway's `MulAdd(n2, sum, NegMulSub(d1, y1, y2))`).
//!
//! The output is the sum of the three poles, `y1 + (y3 + y5)`.

use super::fma::fma_kernel;

/// The blur's sigma in SSIMULACRA 2.
pub const SIGMA: f64 = 1.5;

/// Lanes of libjxl's unrolled horizontal pass (`JXL_GAUSS_MAX_LANES`).
const LANES: usize = 4;

/// The filter constants, `f32` as libjxl stores them (computed in `f64`).
#[derive(Debug, Clone, PartialEq)]
pub struct RecursiveGaussian {
    /// libjxl's `N`: the input taps are `n - N - 1` and `n + N - 1`.
    pub radius: usize,
    pub n2: [f32; 3],
    pub d1: [f32; 3],
    /// Per pole, the weight of input `i` in output lane `j` is
    /// `mul_in[j - i]`.
    pub mul_in: [[f32; LANES]; 3],
    /// Per pole and lane: the weight of the previous output.
    pub mul_prev: [[f32; LANES]; 3],
    /// Per pole and lane: the weight of the output before that.
    pub mul_prev2: [[f32; LANES]; 3],
}

impl RecursiveGaussian {
    /// libjxl's `CreateRecursiveGaussian`, operation for operation.
    pub fn new(sigma: f64) -> Self {
        let pi = std::f64::consts::PI; // libjxl's kPi, the same double
        let radius = (3.2795 * sigma + 0.2546).round(); // (57), "N"

        // Table I, first row.
        let pi_div_2r = pi / (2.0 * radius);
        let omega = [pi_div_2r, 3.0 * pi_div_2r, 5.0 * pi_div_2r];

        // (37), k = 1, 3, 5.
        let p_1 = 1.0 / (0.5 * omega[0]).tan();
        let p_3 = -1.0 / (0.5 * omega[1]).tan();
        let p_5 = 1.0 / (0.5 * omega[2]).tan();

        // (44).
        let r_1 = p_1 * p_1 / omega[0].sin();
        let r_3 = -p_3 * p_3 / omega[1].sin();
        let r_5 = p_5 * p_5 / omega[2].sin();

        // (50).
        let neg_half_sigma2 = -0.5 * sigma * sigma;
        let recip_radius = 1.0 / radius;
        let rho = omega.map(|w| (neg_half_sigma2 * w * w).exp() * recip_radius);

        // Second part of (52).
        let d_13 = p_1 * r_3 - r_1 * p_3;
        let d_35 = p_3 * r_5 - r_3 * p_5;
        let d_51 = p_5 * r_1 - r_5 * p_1;

        // (52), k = 5.
        let recip_d13 = 1.0 / d_13;
        let zeta_15 = d_35 * recip_d13;
        let zeta_35 = d_51 * recip_d13;

        let a = inverse_3x3([[p_1, p_3, p_5], [r_1, r_3, r_5], [zeta_15, zeta_35, 1.0]]);
        let gamma = [
            1.0,
            radius * radius - sigma * sigma, // (55)
            zeta_15 * rho[0] + zeta_35 * rho[1] + rho[2],
        ];
        let beta = a.map(|row| {
            // libjxl's Mul3x3Vector: `e += a[y][x] * b[x]` from e = 0.
            let mut e = 0.0;
            for (m, g) in row.iter().zip(&gamma) {
                e += m * g;
            }
            e
        }); // (53)

        let mut rg = RecursiveGaussian {
            radius: radius as usize,
            n2: [0.0; 3],
            d1: [0.0; 3],
            mul_in: [[0.0; LANES]; 3],
            mul_prev: [[0.0; LANES]; 3],
            mul_prev2: [[0.0; LANES]; 3],
        };
        for i in 0..3 {
            let n2 = -beta[i] * (omega[i] * (radius + 1.0)).cos(); // (33)
            let d1 = -2.0 * omega[i].cos(); // (33)
            rg.n2[i] = n2 as f32;
            rg.d1[i] = d1 as f32;
            let d_2 = d1 * d1;
            // (35) expanded for four consecutive outputs (libjxl's sympy).
            rg.mul_prev[i] = [
                -d1,
                d_2 - 1.0,
                -d_2 * d1 + 2.0 * d1,
                d_2 * d_2 - 3.0 * d_2 + 1.0,
            ]
            .map(|v| v as f32);
            rg.mul_prev2[i] = [-1.0, d1, -d_2 + 1.0, d_2 * d1 - 2.0 * d1].map(|v| v as f32);
            rg.mul_in[i] =
                [n2, -d1 * n2, d_2 * n2 - n2, -d_2 * d1 * n2 + 2.0 * d1 * n2].map(|v| v as f32);
        }
        rg
    }
}

/// libjxl's `Inv3x3Matrix` (cofactors, then times 1 / determinant).
fn inverse_3x3(m: [[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let t = [
        [
            m[1][1] * m[2][2] - m[1][2] * m[2][1],
            m[0][2] * m[2][1] - m[0][1] * m[2][2],
            m[0][1] * m[1][2] - m[0][2] * m[1][1],
        ],
        [
            m[1][2] * m[2][0] - m[1][0] * m[2][2],
            m[0][0] * m[2][2] - m[0][2] * m[2][0],
            m[0][2] * m[1][0] - m[0][0] * m[1][2],
        ],
        [
            m[1][0] * m[2][1] - m[1][1] * m[2][0],
            m[0][1] * m[2][0] - m[0][0] * m[2][1],
            m[0][0] * m[1][1] - m[0][1] * m[1][0],
        ],
    ];
    let det = m[0][0] * t[0][0] + m[0][1] * t[1][0] + m[0][2] * t[2][0];
    let idet = 1.0 / det;
    t.map(|row| row.map(|v| v * idet))
}

/// Blurs `width x height` planes, keeping the scratch between calls.
#[derive(Debug, Clone)]
pub struct Blur {
    rg: RecursiveGaussian,
    /// The horizontal pass's output.
    temp: Vec<f32>,
    /// The vertical pass's last two outputs per pole and column.
    state: Vec<f32>,
}

impl Default for Blur {
    fn default() -> Self {
        Self::new(SIGMA)
    }
}

impl Blur {
    pub fn new(sigma: f64) -> Self {
        Self {
            rg: RecursiveGaussian::new(sigma),
            temp: Vec::new(),
            state: Vec::new(),
        }
    }

    pub fn constants(&self) -> &RecursiveGaussian {
        &self.rg
    }

    /// `output = blur(input)`, both `width x height` packed rows
    /// (libjxl's `FastGaussian`: every row, then every column).
    pub fn run(&mut self, input: &[f32], output: &mut [f32], width: usize, height: usize) {
        let n = width * height;
        assert!(
            input.len() >= n && output.len() >= n,
            "blur: plane too small"
        );
        self.temp.resize(n, 0.0);
        self.state.resize(6 * width, 0.0);
        horizontal(&self.rg, &input[..n], &mut self.temp, width);
        vertical(
            &self.rg,
            &self.temp,
            &mut output[..n],
            width,
            height,
            &mut self.state,
        );
    }
}

fma_kernel! {
    /// The horizontal pass over every row of a `width`-wide plane.
    pub fn horizontal(rg: &RecursiveGaussian, input: &[f32], output: &mut [f32], width: usize)
        => horizontal_body
}

/// Rows blurred side by side: each output is still computed exactly as
/// libjxl computes it for its own row, one row per vector lane.
const ROWS: usize = 8;

#[inline(always)]
fn horizontal_body(rg: &RecursiveGaussian, input: &[f32], output: &mut [f32], width: usize) {
    let height = input.len() / width;
    let groups = height / ROWS;
    // Groups of rows, transposed so each column of the group is one vector.
    let mut columns = vec![[0.0f32; ROWS]; width];
    let mut blurred = vec![[0.0f32; ROWS]; width];
    for g in 0..groups {
        let rows_in = &input[g * ROWS * width..][..ROWS * width];
        for (x, col) in columns.iter_mut().enumerate() {
            *col = std::array::from_fn(|r| rows_in[r * width + x]);
        }
        horizontal_line(rg, &columns, &mut blurred);
        let rows_out = &mut output[g * ROWS * width..][..ROWS * width];
        for (x, col) in blurred.iter().enumerate() {
            for (r, &v) in col.iter().enumerate() {
                rows_out[r * width + x] = v;
            }
        }
    }
    for (row_in, row_out) in input[groups * ROWS * width..]
        .chunks_exact(width)
        .zip(output[groups * ROWS * width..].chunks_exact_mut(width))
    {
        horizontal_line(rg, row_in, row_out);
    }
}

/// One value of a row ([`f32`]) or of several rows side by side.
trait Lane: Copy {
    const ZERO: Self;
    fn add(self, other: Self) -> Self;
    /// `self * k`.
    fn mul(self, k: f32) -> Self;
    /// `fma(k, self, acc)`, singly rounded.
    fn mul_add(self, k: f32, acc: Self) -> Self;
}

impl Lane for f32 {
    const ZERO: Self = 0.0;
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self + other
    }
    #[inline(always)]
    fn mul(self, k: f32) -> Self {
        self * k
    }
    #[inline(always)]
    fn mul_add(self, k: f32, acc: Self) -> Self {
        k.mul_add(self, acc)
    }
}

impl Lane for [f32; ROWS] {
    const ZERO: Self = [0.0; ROWS];
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        std::array::from_fn(|r| self[r] + other[r])
    }
    #[inline(always)]
    fn mul(self, k: f32) -> Self {
        std::array::from_fn(|r| self[r] * k)
    }
    #[inline(always)]
    fn mul_add(self, k: f32, acc: Self) -> Self {
        std::array::from_fn(|r| k.mul_add(self[r], acc[r]))
    }
}

/// libjxl's `FastGaussian1D` on one row (or rows side by side).
#[inline(always)]
fn horizontal_line<V: Lane>(rg: &RecursiveGaussian, input: &[V], out: &mut [V]) {
    let xsize = input.len() as isize;
    let radius = rg.radius as isize;
    // The last two outputs per pole (libjxl broadcasts them to every lane).
    let mut prev = [V::ZERO; 3];
    let mut prev2 = [V::ZERO; 3];

    let mut n = 1 - radius;
    let lanes = LANES as isize;
    let first_aligned = (radius + 1 + lanes - 1) / lanes * lanes;
    while n < first_aligned.min(xsize) {
        scalar_step(rg, input, out, n, &mut prev, &mut prev2);
        n += 1;
    }
    // Four outputs at a time, no bounds checks needed.
    while n < xsize - radius + 1 - (lanes - 1) {
        let lo = (n - radius - 1) as usize;
        let hi = (n + radius - 1) as usize;
        let sum: [V; LANES] = std::array::from_fn(|j| input[lo + j].add(input[hi + j]));
        let mut o = [[V::ZERO; LANES]; 3];
        for k in 0..3 {
            let mul_in = &rg.mul_in[k];
            let mut v: [V; LANES] = std::array::from_fn(|j| sum[0].mul(mul_in[j]));
            // Input i reaches lanes j >= i (libjxl's ShiftLeftLanes<i>; the
            // lanes below get `+ 0 * input`, which changes nothing).
            for (i, input) in sum.iter().enumerate().skip(1) {
                for (j, v) in v.iter_mut().enumerate().skip(i) {
                    *v = input.mul_add(mul_in[j - i], *v);
                }
            }
            for (v, &w) in v.iter_mut().zip(&rg.mul_prev2[k]) {
                *v = prev2[k].mul_add(w, *v);
            }
            for (v, &w) in v.iter_mut().zip(&rg.mul_prev[k]) {
                *v = prev[k].mul_add(w, *v);
            }
            prev2[k] = v[LANES - 2];
            prev[k] = v[LANES - 1];
            o[k] = v;
        }
        for j in 0..LANES {
            out[n as usize + j] = o[0][j].add(o[1][j].add(o[2][j]));
        }
        n += lanes;
    }
    while n < xsize {
        scalar_step(rg, input, out, n, &mut prev, &mut prev2);
        n += 1;
    }
}

/// One output of [`horizontal_line`] with bounds checks: lane 0 of libjxl's
/// vectors.
#[inline(always)]
fn scalar_step<V: Lane>(
    rg: &RecursiveGaussian,
    input: &[V],
    out: &mut [V],
    n: isize,
    prev: &mut [V; 3],
    prev2: &mut [V; 3],
) {
    let xsize = input.len() as isize;
    let radius = rg.radius as isize;
    let (left, right) = (n - radius - 1, n + radius - 1);
    let left_val = if left >= 0 {
        input[left as usize]
    } else {
        V::ZERO
    };
    let right_val = if right < xsize {
        input[right as usize]
    } else {
        V::ZERO
    };
    let sum = left_val.add(right_val);
    let mut o = [V::ZERO; 3];
    for k in 0..3 {
        let mut v = sum.mul(rg.mul_in[k][0]);
        v = prev2[k].mul_add(rg.mul_prev2[k][0], v);
        prev2[k] = prev[k];
        v = prev[k].mul_add(rg.mul_prev[k][0], v);
        prev[k] = v;
        o[k] = v;
    }
    if n >= 0 {
        out[n as usize] = o[0].add(o[1].add(o[2]));
    }
}

fma_kernel! {
    /// The vertical pass: `output` from the horizontal pass's `input`, both
    /// `width x height`; `state` holds 6 `width` rows.
    pub fn vertical(
        rg: &RecursiveGaussian,
        input: &[f32],
        output: &mut [f32],
        width: usize,
        height: usize,
        state: &mut [f32],
    ) => vertical_body
}

#[inline(always)]
fn vertical_body(
    rg: &RecursiveGaussian,
    input: &[f32],
    output: &mut [f32],
    width: usize,
    height: usize,
    state: &mut [f32],
) {
    let radius = rg.radius as isize;
    let ysize = height as isize;
    state.fill(0.0);
    let (prev, prev2) = state.split_at_mut(3 * width);
    let row = |y: isize| (y >= 0 && y < ysize).then(|| &input[y as usize * width..][..width]);
    for n in (1 - radius)..ysize {
        // Rows outside the picture read as zero; adding a zero changes
        // nothing, so this is libjxl's one- or two-input sum.
        let top = row(n - radius - 1);
        let bottom = row(n + radius - 1);
        let out = (n >= 0).then(|| &mut output[n as usize * width..][..width]);
        for k in 0..3 {
            let (n2, d1) = (rg.n2[k], rg.d1[k]);
            let y1 = &mut prev[k * width..][..width];
            let y2 = &mut prev2[k * width..][..width];
            let mut step = |x: usize, sum: f32| {
                let y = n2.mul_add(sum, -d1.mul_add(y1[x], y2[x]));
                y2[x] = y1[x];
                y1[x] = y;
            };
            match (top, bottom) {
                (Some(t), Some(b)) => (0..width).for_each(|x| step(x, t[x] + b[x])),
                (Some(t), None) => (0..width).for_each(|x| step(x, t[x])),
                (None, Some(b)) => (0..width).for_each(|x| step(x, b[x])),
                (None, None) => (0..width).for_each(|x| step(x, 0.0)),
            }
        }
        if let Some(out) = out {
            let (y_1, rest) = prev.split_at(width);
            let (y_3, y_5) = rest.split_at(width);
            for (x, o) in out.iter_mut().enumerate() {
                *o = y_1[x] + (y_3[x] + y_5[x]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_libjxls_for_sigma_1_5() {
        let rg = RecursiveGaussian::new(SIGMA);
        assert_eq!(rg.radius, 5);
        // The filter is normalised: a constant row far from the borders
        // keeps its value (up to float rounding).
        let input = vec![1.0f32; 200];
        let mut out = vec![0.0f32; 200];
        horizontal(&rg, &input, &mut out, 200);
        assert!((out[100] - 1.0).abs() < 1e-4, "{}", out[100]);
        // Lane 0 of each pole's four-output form is the plain recursion.
        for k in 0..3 {
            assert_eq!(rg.mul_in[k][0], rg.n2[k]);
            assert_eq!(rg.mul_prev[k][0], -rg.d1[k]);
            assert_eq!(rg.mul_prev2[k][0], -1.0);
        }
    }

    /// The recursion in `f64`, one output at a time: what both passes
    /// compute up to `f32` rounding.
    fn reference(rg: &RecursiveGaussian, input: &[f32]) -> Vec<f64> {
        let (len, r) = (input.len() as isize, rg.radius as isize);
        let at = |i: isize| {
            if (0..len).contains(&i) {
                input[i as usize] as f64
            } else {
                0.0
            }
        };
        let mut y = [[0.0f64; 2]; 3];
        let mut out = Vec::new();
        for n in (1 - r)..len {
            let sum = at(n - r - 1) + at(n + r - 1);
            let mut total = 0.0;
            for (k, y) in y.iter_mut().enumerate() {
                let v = rg.n2[k] as f64 * sum - rg.d1[k] as f64 * y[0] - y[1];
                *y = [v, y[0]];
                total += v;
            }
            if n >= 0 {
                out.push(total);
            }
        }
        out
    }

    #[test]
    fn both_passes_compute_the_recursion() {
        let rg = RecursiveGaussian::new(SIGMA);
        for len in [1, 5, 7, 8, 11, 12, 37, 300] {
            let line: Vec<f32> = (0..len).map(|i| ((i * 37) % 11) as f32 / 10.0).collect();
            let expected = reference(&rg, &line);
            let mut by_row = vec![0.0f32; len];
            horizontal(&rg, &line, &mut by_row, len);
            let mut by_column = vec![0.0f32; len];
            let mut state = vec![0.0f32; 6];
            vertical(&rg, &line, &mut by_column, 1, len, &mut state);
            for i in 0..len {
                assert!((by_row[i] as f64 - expected[i]).abs() < 1e-5, "{len} {i}");
                assert!(
                    (by_column[i] as f64 - expected[i]).abs() < 1e-5,
                    "{len} {i}"
                );
            }
        }
    }

    #[test]
    fn portable_build_gives_the_same_bits() {
        // The dispatched kernels (AVX2 + FMA here when the CPU has them)
        // against their bodies called directly (built without FMA, so
        // `mul_add` is the C library's fmaf): 13 rows, 8 side by side plus
        // 5 alone.
        let rg = RecursiveGaussian::new(SIGMA);
        let (w, h) = (77, 13);
        let input: Vec<f32> = (0..w * h)
            .map(|i| ((i * 7919) % 1000) as f32 / 997.0)
            .collect();
        let (mut a, mut b) = (vec![0.0f32; w * h], vec![0.0f32; w * h]);
        horizontal(&rg, &input, &mut a, w);
        horizontal_body(&rg, &input, &mut b, w);
        assert_eq!(a, b);
        let mut state = vec![0.0f32; 6 * w];
        let (mut c, mut d) = (vec![0.0f32; w * h], vec![0.0f32; w * h]);
        vertical(&rg, &a, &mut c, w, h, &mut state);
        vertical_body(&rg, &a, &mut d, w, h, &mut state);
        assert_eq!(c, d);
    }
}
