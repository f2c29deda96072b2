//! The IQA library's filters as libvmaf builds them (`iqa/convolve.c`,
//! `iqa/decimate.c`): a separable "valid" convolution for SSIM's local
//! statistics and a 2-D filter-and-subsample for its pyramids.
//!
//! Both sum `f32` products into an `f64` accumulator, tap by tap in kernel
//! order, and round the sum to `f32`; we keep exactly that per pixel but
//! loop tap-outer over whole rows so the work vectorizes.

/// 11-tap Gaussian (sigma 1.5), the 1-D factor of SSIM's window as libvmaf
/// rounds it (`g_gaussian_window_h`/`_v`).
pub const GAUSSIAN_11: [f32; 11] = [
    0.001028, 0.007599, 0.036001, 0.109361, 0.213006, 0.266012, 0.213006, 0.109361, 0.036001,
    0.007599, 0.001028,
];

/// Reusable buffers for [`Convolver::convolve_valid`].
#[derive(Debug, Default)]
pub struct Convolver {
    /// Horizontally filtered rows, `dst_w` wide, one per input row.
    cache: Vec<f32>,
    /// The input row being filtered.
    row: Vec<f32>,
    acc: Vec<f64>,
}

impl Convolver {
    /// libvmaf's `_iqa_convolve` (1-D separable build) with the same `taps`
    /// horizontally and vertically: `out` gets the `(w - n + 1) x (h - n + 1)`
    /// positions where the kernel lies inside the picture, packed.
    /// `fill_row(y, row)` provides input row `y` (so callers can filter
    /// products without storing them).
    ///
    /// The caller guarantees `w, h >= taps.len()`.
    pub fn convolve_valid(
        &mut self,
        w: usize,
        h: usize,
        taps: &[f32],
        mut fill_row: impl FnMut(usize, &mut [f32]),
        out: &mut Vec<f32>,
    ) {
        let n = taps.len();
        let (dst_w, dst_h) = (w + 1 - n, h + 1 - n);
        self.row.resize(w, 0.0);
        self.acc.resize(dst_w, 0.0);
        self.cache.resize(dst_w * h, 0.0);

        for (y, cached) in self.cache.chunks_exact_mut(dst_w).enumerate() {
            fill_row(y, &mut self.row);
            self.acc.fill(0.0);
            for (u, &k) in taps.iter().enumerate() {
                accumulate_products(&mut self.acc, &self.row[u..u + dst_w], k);
            }
            for (c, &a) in cached.iter_mut().zip(&self.acc) {
                *c = a as f32;
            }
        }

        out.resize(dst_w * dst_h, 0.0);
        for (y, dst) in out.chunks_exact_mut(dst_w).enumerate() {
            self.acc.fill(0.0);
            for (v, &k) in taps.iter().enumerate() {
                accumulate_products(&mut self.acc, &self.cache[(y + v) * dst_w..][..dst_w], k);
            }
            for (d, &a) in dst.iter_mut().zip(&self.acc) {
                *d = a as f32;
            }
        }
    }
}

/// One tap over a row: `acc[i] += (src[i] * k) as f64`, the `f32` product
/// widened before the `f64` add, as every IQA filter does it.
///
/// Element-wise with no reassociation, so any vector width gives the same
/// bits; on x86-64 an AVX2 build of the loop is picked at run time.
fn accumulate_products(acc: &mut [f64], src: &[f32], k: f32) {
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::has_avx2() {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { accumulate_products_avx2(acc, src, k) };
    }
    accumulate_products_portable(acc, src, k)
}

#[inline(always)]
fn accumulate_products_portable(acc: &mut [f64], src: &[f32], k: f32) {
    for (a, &s) in acc.iter_mut().zip(src) {
        *a += (s * k) as f64;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn accumulate_products_avx2(acc: &mut [f64], src: &[f32], k: f32) {
    // Rust never contracts `a + s * k` into an FMA, AVX2 or not.
    accumulate_products_portable(acc, src, k)
}

/// A square 2-D kernel, row-major, as `_iqa_decimate` uses it.
#[derive(Debug, Clone, Copy)]
pub struct Kernel2d<'a> {
    pub taps: &'a [f32],
    pub size: usize,
}

impl Kernel2d<'_> {
    /// First tap's offset from the centre: libvmaf centres even kernels one
    /// tap right of the middle (`-size/2 ..= size/2 - 1`).
    fn reach_before(&self) -> usize {
        self.size / 2
    }
}

/// Output size of decimating `len` samples by `factor` (`_iqa_decimate`'s
/// `len/factor + (len&1)`, which rounds up only for odd lengths).
pub fn decimated_len(len: usize, factor: usize) -> usize {
    len / factor + (len & 1)
}

/// Reusable buffers for [`Decimator::decimate`].
#[derive(Debug, Default)]
pub struct Decimator {
    /// The picture padded by mirroring, each row split into phases.
    padded: Vec<f32>,
    /// One padded row before the split.
    line: Vec<f32>,
    acc: Vec<f64>,
}

impl Decimator {
    /// libvmaf's `_iqa_decimate`: filters `src` (`w x h`, packed) with
    /// `kernel` at every `factor`-th position into `out` and returns the
    /// decimated size. Samples outside the picture mirror it
    /// (`KBND_SYMMETRIC`: -1 -> 0, w -> w-1).
    pub fn decimate(
        &mut self,
        src: &[f32],
        w: usize,
        h: usize,
        factor: usize,
        kernel: Kernel2d<'_>,
        out: &mut Vec<f32>,
    ) -> (usize, usize) {
        let (sw, sh) = (decimated_len(w, factor), decimated_len(h, factor));
        let n = kernel.size;
        let before = kernel.reach_before() as isize;
        // Pad once, so every tap reads in bounds, and split each padded row
        // into `factor` phases (column i*factor + p goes to phase p, slot i),
        // so the taps of consecutive outputs are consecutive in memory.
        let phase_len = sw + (n - 1) / factor;
        let row_len = phase_len * factor;
        let rows = (sh - 1) * factor + n;
        self.line.resize(row_len, 0.0);
        self.padded.resize(row_len * rows, 0.0);
        for (py, prow) in self.padded.chunks_exact_mut(row_len).enumerate() {
            let srow = &src[mirror(py as isize - before, h) * w..][..w];
            for (j, v) in self.line.iter_mut().enumerate() {
                *v = srow[mirror(j as isize - before, w)];
            }
            for (p, phase) in prow.chunks_exact_mut(phase_len).enumerate() {
                for (v, &l) in phase.iter_mut().zip(self.line[p..].iter().step_by(factor)) {
                    *v = l;
                }
            }
        }

        let acc = &mut self.acc;
        acc.resize(sw, 0.0);
        out.resize(sw * sh, 0.0);
        for (y, dst) in out.chunks_exact_mut(sw).enumerate() {
            acc.fill(0.0);
            for v in 0..n {
                let prow = &self.padded[(y * factor + v) * row_len..][..row_len];
                for (u, &k) in kernel.taps[v * n..(v + 1) * n].iter().enumerate() {
                    let start = (u % factor) * phase_len + u / factor;
                    accumulate_products(acc, &prow[start..start + sw], k);
                }
            }
            for (d, &a) in dst.iter_mut().zip(acc.iter()) {
                *d = a as f32;
            }
        }
        (sw, sh)
    }
}

/// `KBND_SYMMETRIC` on one axis of length `len`. Clamped for pictures
/// smaller than the kernel reach, which libvmaf would read out of bounds.
fn mirror(i: isize, len: usize) -> usize {
    let n = len as isize;
    let m = if i < 0 {
        -1 - i
    } else if i >= n {
        2 * n - 1 - i
    } else {
        i
    };
    m.clamp(0, n - 1) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirror_repeats_the_edge_sample() {
        assert_eq!(mirror(-1, 5), 0);
        assert_eq!(mirror(-2, 5), 1);
        assert_eq!(mirror(5, 5), 4);
        assert_eq!(mirror(6, 5), 3);
    }

    #[test]
    fn convolution_of_a_constant_is_the_kernel_sum() {
        let (w, h) = (13, 12);
        let mut out = Vec::new();
        Convolver::default().convolve_valid(w, h, &GAUSSIAN_11, |_, r| r.fill(2.0), &mut out);
        assert_eq!(out.len(), 3 * 2);
        let sum: f32 = GAUSSIAN_11.iter().sum();
        assert!(out.iter().all(|&v| (v - 2.0 * sum * sum).abs() < 1e-5));
    }

    #[test]
    fn decimation_rounds_odd_sizes_up() {
        let taps = [0.25f32; 4];
        let src: Vec<f32> = (0..5 * 3).map(|i| i as f32).collect();
        let mut out = Vec::new();
        let k = Kernel2d {
            taps: &taps,
            size: 2,
        };
        assert_eq!(
            Decimator::default().decimate(&src, 5, 3, 2, k, &mut out),
            (3, 2)
        );
        // Output (0,0) averages rows -1,0 and columns -1,0, all mirrored to 0.
        assert_eq!(out[0], 0.0);
        // Output (1,1) is centred on (2,2): rows 1..=2, columns 1..=2.
        assert_eq!(out[4], (6.0 + 7.0 + 11.0 + 12.0) / 4.0);
    }
}
