//! SpEED's entropy model (libvmaf `est_params` and `get_speed_score`).
//!
//! The decimated, mean-removed plane is cut into 5x5 blocks, each taken as a
//! Gaussian scale mixture: the covariance K of the 25 block samples (over
//! every block position at once), its eigenvalues, and per block the
//! variance estimate s = (x' K^-1 x) / 25 give the block's entropy
//! sum_k log2(2 pi e (lambda_k s + sigma_nn^2)). The score compares the
//! variance-weighted entropies of reference and distorted.

use super::geometry::{Geometry, BLOCK, BLOCK_AREA};
use super::linalg::{EigenSolver, QrSolver, EPS};
use crate::cpu::simd_dispatch;

/// log2(2 pi e), as libvmaf's `log2(2 * M_PI * M_E)` folds it.
const LOG2_2PIE: f64 = 4.094191170361282;

/// Per-block entropies and variances of one plane.
#[derive(Debug, Clone)]
pub struct BlockStats {
    pub entropies: Vec<f32>,
    pub variances: Vec<f32>,
}

impl BlockStats {
    pub fn new(blocks: usize) -> Self {
        Self {
            entropies: vec![0.0; blocks],
            variances: vec![0.0; blocks],
        }
    }
}

/// Fits the model on planes of one geometry, with scratch for repeated use.
#[derive(Debug, Clone)]
pub struct Estimator {
    geometry: Geometry,
    /// Mean of the common window at each of the 25 block offsets.
    means: [f32; BLOCK_AREA],
    /// The truncated plane widened to `f64`, as the covariance sums read it.
    wide: Vec<f64>,
    covariance: Vec<f32>,
    eigenvalues: [f32; BLOCK_AREA],
    /// Block samples: row k holds sample k of every block.
    samples: Vec<f32>,
    solution: Vec<f32>,
    eigen: EigenSolver,
    qr: QrSolver,
}

impl Estimator {
    pub fn new(geometry: Geometry) -> Self {
        let t = geometry.truncated;
        let blocks = geometry.blocks();
        Self {
            geometry,
            means: [0.0; BLOCK_AREA],
            wide: vec![0.0; t.width * t.height],
            covariance: vec![0.0; BLOCK_AREA * BLOCK_AREA],
            eigenvalues: [0.0; BLOCK_AREA],
            samples: vec![0.0; BLOCK_AREA * blocks],
            solution: vec![0.0; BLOCK_AREA * blocks],
            eigen: EigenSolver::new(BLOCK_AREA),
            qr: QrSolver::new(BLOCK_AREA),
        }
    }

    /// Fits the model on `data` (the decimated plane, rows `stride` apart)
    /// into `out`. Returns false when the covariance matrix is singular; the
    /// variances are then 0, as libvmaf sets them.
    pub fn estimate(
        &mut self,
        data: &[f32],
        stride: usize,
        sigma_nn: f32,
        out: &mut BlockStats,
    ) -> bool {
        self.covariance_matrix(data, stride);
        self.eigen
            .eigenvalues(&self.covariance, &mut self.eigenvalues);
        self.gather_block_samples(data, stride);

        let blocks = self.geometry.blocks();
        let regular = !self.eigenvalues.iter().any(|&e| f64::from(e) < EPS);
        let solved = regular
            && self
                .qr
                .solve(&self.covariance, &self.samples, blocks, &mut self.solution);
        if !solved {
            self.solution.fill(0.0);
        }

        // s = sum_k x_k (K^-1 x)_k / 25, summed over k in order.
        let area = BLOCK_AREA as f32;
        let variances = &mut out.variances;
        for (v, (&x, &y)) in variances
            .iter_mut()
            .zip(self.solution.iter().zip(&self.samples))
        {
            *v = (x * y) / area;
        }
        for k in 1..BLOCK_AREA {
            let terms = self.solution[k * blocks..][..blocks]
                .iter()
                .zip(&self.samples[k * blocks..][..blocks]);
            for (v, (&x, &y)) in variances.iter_mut().zip(terms) {
                *v += (x * y) / area;
            }
        }

        out.entropies.fill(0.0);
        for &eigenvalue in &self.eigenvalues {
            let l = if eigenvalue < 0.0 { 0.0 } else { eigenvalue };
            for (e, &s) in out.entropies.iter_mut().zip(variances.iter()) {
                let term = f64::from(l * s + sigma_nn).log2() + LOG2_2PIE;
                *e = (f64::from(*e) + term) as f32;
            }
        }
        solved
    }

    /// The 25 x 25 covariance of the samples at every pair of block offsets,
    /// over the common window: means in `f32`, sums of products in `f64`.
    fn covariance_matrix(&mut self, data: &[f32], stride: usize) {
        let g = self.geometry;
        let (sw, sh) = (g.submatrix.width, g.submatrix.height);
        let count = g.submatrix_area();

        for r in 0..BLOCK {
            // The five column offsets are independent sums, each in row order.
            let mut sums = [0.0f32; BLOCK];
            for i in 0..sh {
                let row = &data[(r + i) * stride..][..sw + BLOCK - 1];
                for j in 0..sw {
                    for (c, sum) in sums.iter_mut().enumerate() {
                        *sum += row[j + c];
                    }
                }
            }
            for (c, sum) in sums.iter().enumerate() {
                self.means[r * BLOCK + c] = sum / count as f32;
            }
        }

        let tw = g.truncated.width;
        for (y, wide_row) in self.wide.chunks_exact_mut(tw).enumerate() {
            for (w, &s) in wide_row.iter_mut().zip(&data[y * stride..][..tw]) {
                *w = f64::from(s);
            }
        }

        // Offsets x = (r1, c1) against y = (r2, c2) for r2 <= r1: the 25
        // (c1, c2) sums of one (r1, r2) share their loads and run side by
        // side, each still one sum over the window in row order.
        let means: [[f64; BLOCK]; BLOCK] =
            std::array::from_fn(|r| std::array::from_fn(|c| f64::from(self.means[r * BLOCK + c])));
        for r1 in 0..BLOCK {
            for r2 in 0..=r1 {
                let sums = product_sums(
                    &self.wide[r1 * tw..],
                    &self.wide[r2 * tw..],
                    tw,
                    [sw, sh],
                    &means[r1],
                    &means[r2],
                );
                for (c1, row) in sums.iter().enumerate() {
                    for (c2, &sum) in row.iter().enumerate() {
                        let (x_index, y_index) = (r1 * BLOCK + c1, r2 * BLOCK + c2);
                        if y_index <= x_index {
                            let cov = (sum / count as f64) as f32;
                            self.covariance[x_index * BLOCK_AREA + y_index] = cov;
                            self.covariance[y_index * BLOCK_AREA + x_index] = cov;
                        }
                    }
                }
            }
        }
    }

    /// Sample (si, sj) of block (bi, bj) goes to row si * 5 + sj, column
    /// bi * blocks_horizontal + bj.
    fn gather_block_samples(&mut self, data: &[f32], stride: usize) {
        let g = self.geometry;
        let blocks = g.blocks();
        for si in 0..BLOCK {
            for sj in 0..BLOCK {
                let out = &mut self.samples[(si * BLOCK + sj) * blocks..][..blocks];
                for bi in 0..g.blocks_vertical {
                    let row = &data[(si + BLOCK * bi) * stride..];
                    for bj in 0..g.blocks_horizontal {
                        out[bi * g.blocks_horizontal + bj] = row[sj + BLOCK * bj];
                    }
                }
            }
        }
    }
}

/// How block variances weight the entropies (`speed_weight_var_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WeightMode(pub i32);

/// The mean over blocks of |reference - distorted| weighted entropy;
/// blocks where both entropies are below the noise floor's count as 0.
pub fn speed_score(
    reference: &BlockStats,
    distorted: &BlockStats,
    sigma_nn: f32,
    nn_floor: f32,
    mode: WeightMode,
) -> f32 {
    let base_entropy =
        (BLOCK_AREA as f64 * (f64::from((1.0 + nn_floor) * sigma_nn).log2() + LOG2_2PIE)) as f32;
    let log2_1p = |v: f32| f64::from(1.0 + v).log2();
    let log2_1p_wide = |v: f64| (1.0 + v).log2();
    let mut score = 0.0f32;
    let blocks = reference.entropies.len();
    for i in 0..blocks {
        let (re, de) = (reference.entropies[i], distorted.entropies[i]);
        if re < base_entropy && de < base_entropy {
            continue;
        }
        let (rv, dv) = (reference.variances[i], distorted.variances[i]);
        let mean = || f64::from(rv + dv) / 2.0;
        let (weight_ref, weight_dis) = match mode.0 {
            0 => (log2_1p(rv), log2_1p(dv)),
            1 => (log2_1p(rv), log2_1p(rv)),
            2 => (log2_1p(dv), log2_1p(dv)),
            3 => (log2_1p_wide(mean()), log2_1p_wide(mean())),
            4 => (log2_1p(rv), log2_1p_wide(mean())),
            5 => (
                log2_1p(rv),
                log2_1p_wide(0.75 * f64::from(rv) + 0.25 * f64::from(dv)),
            ),
            6 => (
                log2_1p(rv),
                log2_1p_wide(0.25 * f64::from(rv) + 0.75 * f64::from(dv)),
            ),
            // The option's range is 0..=6; libvmaf returns -EINVAL here.
            _ => return -22.0,
        };
        let spatial_ref = (f64::from(re) * weight_ref) as f32;
        let spatial_dis = (f64::from(de) * weight_dis) as f32;
        score += (spatial_ref - spatial_dis).abs();
    }
    score / blocks as f32
}

simd_dispatch! {
    /// The 5 x 5 sums of products of offset samples (`xs` and `ys` minus
    /// their offsets' means) over the `[width, height]` window, rows `tw`
    /// apart: each sum one chain in row order, as libvmaf adds them (the
    /// 25 chains side by side, which the wider levels hold in fewer
    /// registers; separate multiplies and adds, so every level gives the
    /// same bits).
    fn product_sums(
        xs: &[f64],
        ys: &[f64],
        tw: usize,
        window: [usize; 2],
        mean_x: &[f64; BLOCK],
        mean_y: &[f64; BLOCK],
    ) -> [[f64; BLOCK]; BLOCK] => product_sums_impl
}

#[inline(always)]
fn product_sums_impl(
    xs: &[f64],
    ys: &[f64],
    tw: usize,
    [sw, sh]: [usize; 2],
    mean_x: &[f64; BLOCK],
    mean_y: &[f64; BLOCK],
) -> [[f64; BLOCK]; BLOCK] {
    let mut sums = [[0.0f64; BLOCK]; BLOCK];
    for i in 0..sh {
        let xs = &xs[i * tw..][..tw];
        let ys = &ys[i * tw..][..tw];
        for j in 0..sw {
            let dx: [f64; BLOCK] = std::array::from_fn(|c| xs[j + c] - mean_x[c]);
            let dy: [f64; BLOCK] = std::array::from_fn(|c| ys[j + c] - mean_y[c]);
            for (row, &dxc) in sums.iter_mut().zip(&dx) {
                for (sum, &dyc) in row.iter_mut().zip(&dy) {
                    *sum += dxc * dyc;
                }
            }
        }
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_2pie_is_the_folded_constant() {
        let folded = (2.0 * std::f64::consts::PI * std::f64::consts::E).log2();
        assert_eq!(LOG2_2PIE, folded);
    }

    #[test]
    fn flat_planes_are_singular_and_score_zero() {
        let g = Geometry::new(160, 160, 1.0).unwrap();
        let mut est = Estimator::new(g);
        let data = vec![3.0f32; 10 * 10];
        let mut stats = BlockStats::new(g.blocks());
        assert!(!est.estimate(&data, 10, 0.29, &mut stats));
        assert!(stats.variances.iter().all(|&v| v == 0.0));
        let score = speed_score(&stats, &stats.clone(), 0.29, 0.0, WeightMode(0));
        assert_eq!(score, 0.0);
    }

    #[test]
    fn textured_planes_fit_positive_variances() {
        let g = Geometry::new(320, 160, 1.0).unwrap();
        let mut est = Estimator::new(g);
        let data: Vec<f32> = (0..20 * 10)
            .map(|i| ((i * 2654435761u64 as usize) % 97) as f32 - 48.0)
            .collect();
        let mut stats = BlockStats::new(g.blocks());
        assert!(est.estimate(&data, 20, 0.29, &mut stats));
        assert!(
            stats.variances.iter().all(|&v| v > 0.0),
            "{:?}",
            stats.variances
        );
    }
}
