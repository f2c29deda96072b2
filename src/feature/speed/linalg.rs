//! The small dense linear algebra of SpEED's entropy model, in `f32` with
//! libvmaf's exact operation order (its `speed.c` adapts GSL):
//! eigenvalues of the symmetric covariance matrix by Householder
//! tridiagonalisation and implicit QR steps, and `A X = B` by a Householder
//! QR decomposition and back substitution.
//!
//! Where libvmaf calls the `double` functions `sqrt` (or divides by a
//! `double` constant) on `f32` values, the result is rounded back to `f32`
//! as in C.

use crate::cpu::simd_dispatch;

/// Pivots and eigenvalues below this are treated as zero.
pub const EPS: f64 = 1e-6;
const MAX_QR_ITERATIONS: usize = 500;

/// `sqrt` through `f64`, as C's `sqrt` on a `float` stored back to `float`
/// (equal to a correctly rounded `f32` square root).
#[inline]
fn sqrt(x: f32) -> f32 {
    f64::from(x).sqrt() as f32
}

/// +1 for non-negative values, else -1.
#[inline]
fn sign(x: f32) -> f32 {
    if x >= 0.0 {
        1.0
    } else {
        -1.0
    }
}

#[inline]
fn hypot(x: f32, y: f32) -> f32 {
    sqrt(x * x + y * y)
}

/// Eigenvalues of a symmetric n x n matrix, with scratch for repeated use.
#[derive(Debug, Clone)]
pub struct EigenSolver {
    n: usize,
    a: Vec<f32>,
    diagonal: Vec<f32>,
    subdiagonal: Vec<f32>,
    v: Vec<f32>,
    x: Vec<f32>,
}

impl EigenSolver {
    pub fn new(n: usize) -> Self {
        Self {
            n,
            a: vec![0.0; n * n],
            diagonal: vec![0.0; n],
            subdiagonal: vec![0.0; n],
            v: vec![0.0; n],
            x: vec![0.0; n],
        }
    }

    /// Writes the eigenvalues of `matrix` (row-major) to `out`, unsorted.
    pub fn eigenvalues(&mut self, matrix: &[f32], out: &mut [f32]) {
        let n = self.n;
        self.a.copy_from_slice(&matrix[..n * n]);
        if n == 1 {
            out[0] = self.a[0];
            return;
        }
        self.tridiagonalize();
        diagonalize(&mut self.diagonal, &mut self.subdiagonal[..n - 1]);
        out[..n].copy_from_slice(&self.diagonal);
    }

    /// Householder reduction to tridiagonal form (GSL `symmtd_decomp`).
    fn tridiagonalize(&mut self) {
        let n = self.n;
        let (a, v, x) = (&mut self.a, &mut self.v, &mut self.x);
        for i in 0..n - 2 {
            let tau = householder_column(a, n, i, i + 1);
            for j in i + 1..n {
                v[j] = a[j * n + i];
            }
            if tau != 0.0 {
                v[i + 1] = 1.0;
                let s = i + 1;
                // x = tau A v
                for r in s..n {
                    x[r] = 0.0;
                    for c in s..n {
                        x[r] += tau * a[r * n + c] * v[c];
                    }
                }
                // x -= (tau / 2) (x . v) v, the factor in f64 as in C.
                let xv = (s..n).fold(0.0f32, |acc, r| acc + x[r] * v[r]);
                let alpha = (-0.5 * f64::from(tau) * f64::from(xv)) as f32;
                for r in s..n {
                    x[r] += alpha * v[r];
                }
                // A -= x v' + v x'
                for r in s..n {
                    for c in s..n {
                        a[r * n + c] -= x[r] * v[c] + v[r] * x[c];
                    }
                }
            }
        }
        for i in 0..n {
            self.diagonal[i] = a[i * n + i];
        }
        for i in 0..n - 1 {
            self.subdiagonal[i] = a[(i + 1) * n + i];
        }
    }
}

/// Builds the Householder vector that zeroes column `col` below `start`
/// (stored in place, scaled so its first element is an implicit 1) and
/// returns its tau (GSL `linalg_householder_transform`).
fn householder_column(a: &mut [f32], n: usize, col: usize, start: usize) -> f32 {
    if n - start == 1 {
        return 0.0;
    }
    let norm_sq = (start + 1..n).fold(0.0f32, |acc, r| acc + a[r * n + col] * a[r * n + col]);
    let xnorm = sqrt(norm_sq);
    if xnorm == 0.0 {
        return 0.0;
    }
    let alpha = a[start * n + col];
    let beta = -sign(alpha) * hypot(alpha, xnorm);
    let tau = (beta - alpha) / beta;
    let s = alpha - beta;
    if s != 0.0 {
        for r in start..n {
            a[r * n + col] /= s;
        }
        a[start * n + col] = beta;
    }
    tau
}

/// Zeroes off-diagonal elements negligible next to their neighbours.
fn chop_small_elements(d: &[f32], sd: &mut [f32]) {
    for i in 0..sd.len() {
        if f64::from(sd[i].abs()) < EPS * f64::from(d[i].abs() + d[i + 1].abs()) {
            sd[i] = 0.0;
        }
    }
}

/// Implicit symmetric QR iterations until `sd` is zero (GSL `eigen_symm`);
/// the eigenvalues are left in `d`. Gives up after 500 steps, as libvmaf
/// (which then only logs a warning).
fn diagonalize(d: &mut [f32], sd: &mut [f32]) {
    chop_small_elements(d, sd);
    let mut b = d.len() - 1;
    let mut iterations = 0;
    while b > 0 && iterations < MAX_QR_ITERATIONS {
        if sd[b - 1] == 0.0 {
            b -= 1;
            continue;
        }
        // The largest unreduced block ending at b.
        let mut a = b - 1;
        while a > 0 && sd[a - 1] != 0.0 {
            a -= 1;
        }
        qr_step(&mut d[a..=b], &mut sd[a..b]);
        chop_small_elements(&d[a..=b], &mut sd[a..b]);
        iterations += 1;
    }
}

/// Wilkinson's shift from the trailing 2x2 block.
fn trailing_eigenvalue(d: &[f32], sd: &[f32]) -> f32 {
    let n = d.len();
    let (ta, tb, tab) = (d[n - 2], d[n - 1], sd[n - 2]);
    let dt = (f64::from(ta - tb) / 2.0) as f32;
    if dt > 0.0 {
        tb - tab * (tab / (dt + hypot(dt, tab)))
    } else if dt == 0.0 {
        tb - tab.abs()
    } else {
        tb + tab * (tab / (-dt + hypot(dt, tab)))
    }
}

/// A Givens rotation (c, s) that zeroes b against a.
fn givens(a: f32, b: f32) -> (f32, f32) {
    // 1 / sqrt(1 + t^2) is evaluated in f64 by libvmaf.
    let inverse_norm = |t: f32| (1.0 / f64::from(1.0 + t * t).sqrt()) as f32;
    if b == 0.0 {
        (1.0, 0.0)
    } else if b.abs() > a.abs() {
        let t = -a / b;
        let s1 = inverse_norm(t);
        (s1 * t, s1)
    } else {
        let t = -b / a;
        let c1 = inverse_norm(t);
        (c1, c1 * t)
    }
}

/// One implicit QR step on an unreduced tridiagonal block (GSL `qrstep`).
fn qr_step(d: &mut [f32], sd: &mut [f32]) {
    let n = d.len();
    let mut mu = trailing_eigenvalue(d, sd);
    if EPS * f64::from(mu.abs()) > f64::from(d[0].abs() + sd[0].abs()) {
        mu = 0.0;
    }
    let mut x = d[0] - mu;
    let mut z = sd[0];
    let mut ap = d[0];
    let mut bp = sd[0];
    let mut aq = d[1];

    if n == 2 {
        let (c, s) = givens(x, z);
        let ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp);
        let bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq);
        let aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq);
        d[0] = ap1;
        sd[0] = bp1;
        d[1] = aq1;
        return;
    }

    let mut bq = sd[1];
    let mut bk = 0.0f32;
    let mut zk = 0.0f32;
    for k in 0..n - 1 {
        let (c, s) = givens(x, z);
        // G' T G
        let bk1 = c * bk - s * zk;
        let ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp);
        let bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq);
        let zp1 = -s * bq;
        let aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq);
        let bq1 = c * bq;

        bk = bp1;
        zk = zp1;
        ap = aq1;
        bp = bq1;
        if k < n - 2 {
            aq = d[k + 2];
        }
        if k < n - 3 {
            bq = sd[k + 2];
        }
        d[k] = ap1;
        if k > 0 {
            sd[k - 1] = bk1;
        }
        if k < n - 2 {
            sd[k + 1] = bp;
        }
        x = bk;
        z = zk;
    }
    d[n - 1] = ap;
    sd[n - 2] = bk;
}

/// Solves `A X = B` for a square `A` by libvmaf's Householder QR, with
/// scratch for repeated use.
#[derive(Debug, Clone)]
pub struct QrSolver {
    n: usize,
    q: Vec<f32>,
    r: Vec<f32>,
    reflector: Vec<f32>,
    work: Vec<f32>,
    product: Vec<f32>,
    v: Vec<f32>,
    rhs: Vec<f32>,
}

impl QrSolver {
    pub fn new(n: usize) -> Self {
        let square = vec![0.0; n * n];
        Self {
            n,
            q: square.clone(),
            r: square.clone(),
            reflector: square.clone(),
            work: square.clone(),
            product: square,
            v: vec![0.0; n],
            rhs: Vec::new(),
        }
    }

    /// Solves `a x = b` for the n x `cols` matrix `x`; false (with `x`
    /// unspecified) when a pivot of R is below [`EPS`].
    pub fn solve(&mut self, a: &[f32], b: &[f32], cols: usize, x: &mut [f32]) -> bool {
        let n = self.n;
        self.decompose(a);
        // R X = Q' B, where Q' is the product of the reflections.
        self.rhs.resize(n * cols, 0.0);
        mat_mul(&mut self.rhs, &self.q, b, n, n, cols);
        back_substitute(&self.r, &self.rhs, x, n, cols)
    }

    /// libvmaf's `matrix_qr_decomposition`, leaving R in `self.r` and the
    /// product of the reflections (Q transposed) in `self.q`.
    fn decompose(&mut self, a: &[f32]) {
        let n = self.n;
        let z = &mut self.work;
        z.copy_from_slice(&a[..n * n]);
        identity(&mut self.q, n);
        for k in 0..n - 1 {
            // Restrict z to its trailing minor.
            for i in 0..n {
                for j in 0..n {
                    if i < k || j < k {
                        z[i * n + j] = if i == j { 1.0 } else { 0.0 };
                    }
                }
            }
            for i in 0..n {
                self.v[i] = z[i * n + k];
            }
            let norm = vector_norm(&self.v);
            // libvmaf takes the sign from A's diagonal, not from z's.
            self.v[k] += sign(a[k * n + k]) * norm;
            let norm = vector_norm(&self.v);
            for e in self.v.iter_mut() {
                *e /= norm;
            }
            // H = I - 2 v v'
            for i in 0..n {
                for j in 0..n {
                    self.reflector[i * n + j] = -2.0 * self.v[i] * self.v[j];
                }
            }
            for i in 0..n {
                self.reflector[i * n + i] += 1.0;
            }
            mat_mul(&mut self.product, &self.reflector, z, n, n, n);
            z.copy_from_slice(&self.product);
            mat_mul(&mut self.product, &self.reflector, &self.q, n, n, n);
            self.q.copy_from_slice(&self.product);
        }
        mat_mul(&mut self.r, &self.q, &a[..n * n], n, n, n);
    }
}

fn identity(m: &mut [f32], n: usize) {
    for i in 0..n {
        for j in 0..n {
            m[i * n + j] = if i == j { 1.0 } else { 0.0 };
        }
    }
}

fn vector_norm(v: &[f32]) -> f32 {
    sqrt(v.iter().fold(0.0f32, |acc, &e| acc + e * e))
}

simd_dispatch! {
    /// `dst = x y` for x (rows x inner) and y (inner x cols), each element
    /// summed over the inner index in order from 0.
    fn mat_mul(dst: &mut [f32], x: &[f32], y: &[f32], rows: usize, inner: usize, cols: usize) => mat_mul_impl
}

#[inline(always)]
fn mat_mul_impl(dst: &mut [f32], x: &[f32], y: &[f32], rows: usize, inner: usize, cols: usize) {
    dst[..rows * cols].fill(0.0);
    for i in 0..rows {
        let out = &mut dst[i * cols..][..cols];
        for k in 0..inner {
            let xik = x[i * inner + k];
            for (o, &ykj) in out.iter_mut().zip(&y[k * cols..][..cols]) {
                *o += xik * ykj;
            }
        }
    }
}

simd_dispatch! {
    /// Solves the upper triangular `r x = b` from the last row up.
    fn back_substitute(r: &[f32], b: &[f32], x: &mut [f32], n: usize, cols: usize) -> bool => back_substitute_impl
}

#[inline(always)]
fn back_substitute_impl(r: &[f32], b: &[f32], x: &mut [f32], n: usize, cols: usize) -> bool {
    for i in (0..n).rev() {
        let pivot = r[i * n + i];
        if f64::from(pivot.abs()) < EPS {
            return false;
        }
        let (solved_rows, rest) = x.split_at_mut((i + 1) * cols);
        let row = &mut solved_rows[i * cols..];
        row.copy_from_slice(&b[i * cols..][..cols]);
        for k in i + 1..n {
            let rik = r[i * n + k];
            for (t, &xk) in row.iter_mut().zip(&rest[(k - i - 1) * cols..][..cols]) {
                *t -= xk * rik;
            }
        }
        for t in row.iter_mut() {
            *t /= pivot;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spd(n: usize) -> Vec<f32> {
        // A symmetric, diagonally dominant matrix.
        let mut m = vec![0.0f32; n * n];
        for i in 0..n {
            for j in 0..n {
                m[i * n + j] = if i == j {
                    10.0 + i as f32
                } else {
                    1.0 / (1 + i + j) as f32
                };
            }
        }
        m
    }

    #[test]
    fn eigenvalues_of_a_diagonal_matrix() {
        let mut m = vec![0.0f32; 9];
        m[0] = 3.0;
        m[4] = 1.0;
        m[8] = 2.0;
        let mut out = [0.0; 3];
        EigenSolver::new(3).eigenvalues(&m, &mut out);
        let mut sorted = out;
        sorted.sort_by(f32::total_cmp);
        assert_eq!(sorted, [1.0, 2.0, 3.0]);
    }

    #[test]
    fn eigenvalues_keep_trace_and_solve_checks_out() {
        let n = 6;
        let m = spd(n);
        let mut eig = vec![0.0; n];
        EigenSolver::new(n).eigenvalues(&m, &mut eig);
        let trace: f32 = (0..n).map(|i| m[i * n + i]).sum();
        assert!((eig.iter().sum::<f32>() - trace).abs() < 1e-3, "{eig:?}");

        let b: Vec<f32> = (0..n * 2).map(|i| i as f32 - 3.0).collect();
        let mut x = vec![0.0; n * 2];
        assert!(QrSolver::new(n).solve(&m, &b, 2, &mut x));
        for i in 0..n {
            for j in 0..2 {
                let ax: f32 = (0..n).map(|k| m[i * n + k] * x[k * 2 + j]).sum();
                assert!((ax - b[i * 2 + j]).abs() < 1e-4);
            }
        }
    }

    #[test]
    fn singular_systems_are_reported() {
        let n = 3;
        let mut m = spd(n);
        m[2 * n..].fill(0.0);
        for i in 0..n {
            m[i * n + 2] = 0.0;
        }
        let mut x = vec![0.0; n];
        assert!(!QrSolver::new(n).solve(&m, &[1.0, 2.0, 3.0], 1, &mut x));
    }
}
