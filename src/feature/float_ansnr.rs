//! `float_ansnr`: anti-noise SNR (libvmaf `float_ansnr.c`, `ansnr.c`,
//! `ansnr_tools.c`). The reference is low-passed lightly (3x3) and the
//! distorted picture more strongly (5x5), so that noise the eye does not see
//! counts less; the score is signal over the remaining difference.

use super::common::picture_copy::picture_copy;
use super::common::psnr_scale::PsnrScale;
use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, Options};
use crate::error::{Error, Result};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: "float_ansnr",
    aliases: &[],
    options: &[],
    provides: &["float_ansnr", "float_anpsnr"],
    create: create as CreateFn,
    joint: None,
    gpu: None,
};

/// `ansnr_filter2d_ref_s`: the 3x3 binomial kernel, in `f32`.
const REF_FILTER: [[f32; 3]; 3] = [
    [1.0 / 16.0, 2.0 / 16.0, 1.0 / 16.0],
    [2.0 / 16.0, 4.0 / 16.0, 2.0 / 16.0],
    [1.0 / 16.0, 2.0 / 16.0, 1.0 / 16.0],
];

/// `ansnr_filter2d_dis_s`: weights /571, rounded from double to `f32`.
const DIS_FILTER: [[f32; 5]; 5] = {
    const W: [[f64; 5]; 5] = [
        [2.0, 7.0, 12.0, 7.0, 2.0],
        [7.0, 31.0, 52.0, 31.0, 7.0],
        [12.0, 52.0, 127.0, 52.0, 12.0],
        [7.0, 31.0, 52.0, 31.0, 7.0],
        [2.0, 7.0, 12.0, 7.0, 2.0],
    ];
    let mut k = [[0.0f32; 5]; 5];
    let mut i = 0;
    while i < 25 {
        k[i / 5][i % 5] = (W[i / 5][i % 5] / 571.0) as f32;
        i += 1;
    }
    k
};

fn create(_: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    let scale = PsnrScale::for_format(INFO.name, format)?;
    // The 5x5 filter mirrors two samples past each edge.
    if format.width < 3 || format.height < 3 {
        return Err(Error::Extractor {
            extractor: INFO.name.into(),
            reason: format!(
                "picture {}x{} is smaller than 3x3",
                format.width, format.height
            ),
        });
    }
    Ok(Box::new(FloatAnsnr {
        scale,
        buffers: Default::default(),
    }))
}

struct FloatAnsnr {
    scale: PsnrScale,
    /// Reference, distorted, padded copy, filtered reference, filtered
    /// distorted, and two row accumulators.
    buffers: [Vec<f32>; 7],
}

impl Extractor for FloatAnsnr {
    fn name(&self) -> &'static str {
        INFO.name
    }

    fn planes(&self) -> PlaneMask {
        PlaneMask::LUMA
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        let (w, h) = frame.reference.format().plane_size(PlaneId::Y);
        let [reference, distorted, padded, ref_filtered, dis_filtered, acc, inner] =
            &mut self.buffers;
        picture_copy(frame.reference, PlaneId::Y, -128, reference);
        picture_copy(frame.distorted, PlaneId::Y, -128, distorted);
        let mut rows = RowScratch { padded, acc, inner };
        filter2d(&REF_FILTER, reference, w, h, &mut rows, ref_filtered);
        filter2d(&DIS_FILTER, distorted, w, h, &mut rows, dis_filtered);

        let (signal, noise) = signal_and_noise(ref_filtered, dis_filtered, w);
        let PsnrScale { peak, psnr_max } = self.scale;
        // `float` division, as in C, before the double log.
        let ansnr = if noise == 0.0 {
            psnr_max
        } else {
            10.0 * ((signal / noise) as f64).log10()
        };
        let eps = 1e-10;
        let anpsnr = 10.0 * (peak * peak * w as f64 * h as f64 / (noise as f64).max(eps)).log10();
        sink.emit(frame.index, "float_ansnr", ansnr);
        sink.emit(frame.index, "float_anpsnr", anpsnr.min(psnr_max));
        Ok(())
    }
}

struct RowScratch<'a> {
    padded: &'a mut Vec<f32>,
    acc: &'a mut Vec<f32>,
    inner: &'a mut Vec<f32>,
}

/// `ansnr_filter2d_s`: an N x N filter over the whole picture, borders
/// mirrored without repeating the edge sample (-1 -> 1) at the start and
/// repeating it (n -> n-1) at the end. Each kernel row is summed on its
/// own in `f32`, then added to the pixel's `f32` total.
fn filter2d<const N: usize>(
    kernel: &[[f32; N]; N],
    src: &[f32],
    w: usize,
    h: usize,
    rows: &mut RowScratch<'_>,
    dst: &mut Vec<f32>,
) {
    let r = N / 2;
    let pw = w + 2 * r;
    // Pad once so every output pixel reads its window in bounds.
    rows.padded.resize(pw * (h + 2 * r), 0.0);
    for (py, prow) in rows.padded.chunks_exact_mut(pw).enumerate() {
        let srow = &src[mirror(py as isize - r as isize, h) * w..][..w];
        for (px, p) in prow.iter_mut().enumerate() {
            *p = srow[mirror(px as isize - r as isize, w)];
        }
    }

    rows.acc.resize(w, 0.0);
    rows.inner.resize(w, 0.0);
    dst.resize(w * h, 0.0);
    for (y, out) in dst.chunks_exact_mut(w).enumerate() {
        rows.acc.fill(0.0);
        for (fi, krow) in kernel.iter().enumerate() {
            let prow = &rows.padded[(y + fi) * pw..(y + fi + 1) * pw];
            rows.inner.fill(0.0);
            for (fj, &k) in krow.iter().enumerate() {
                for (i, &p) in rows.inner.iter_mut().zip(&prow[fj..fj + w]) {
                    *i += k * p;
                }
            }
            for (a, &i) in rows.acc.iter_mut().zip(rows.inner.iter()) {
                *a += i;
            }
        }
        out.copy_from_slice(rows.acc);
    }
}

/// ANSNR's border rule on one axis of length `len` (clamped for pictures
/// smaller than the reach, which the constructor refuses anyway).
fn mirror(i: isize, len: usize) -> usize {
    let n = len as isize;
    let m = if i < 0 {
        -i
    } else if i >= n {
        2 * n - i - 1
    } else {
        i
    };
    m.clamp(0, n - 1) as usize
}

/// `ansnr_mse_s`: energy of the filtered reference and of the difference,
/// summed per row in `f32`, rows summed in `f32`.
fn signal_and_noise(reference: &[f32], distorted: &[f32], w: usize) -> (f32, f32) {
    let (mut signal, mut noise) = (0.0f32, 0.0f32);
    for (r, d) in reference.chunks_exact(w).zip(distorted.chunks_exact(w)) {
        let (mut row_signal, mut row_noise) = (0.0f32, 0.0f32);
        for (&rv, &dv) in r.iter().zip(d) {
            row_signal += rv * rv;
            row_noise += (rv - dv) * (rv - dv);
        }
        signal += row_signal;
        noise += row_noise;
    }
    (signal, noise)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borders_mirror_asymmetrically() {
        assert_eq!(mirror(-1, 6), 1);
        assert_eq!(mirror(-2, 6), 2);
        assert_eq!(mirror(6, 6), 5);
        assert_eq!(mirror(7, 6), 4);
    }

    #[test]
    fn kernels_are_normalised() {
        let sum: f32 = DIS_FILTER.iter().flatten().sum();
        assert!((sum - 1.0).abs() < 1e-6);
        let sum: f32 = REF_FILTER.iter().flatten().sum();
        assert_eq!(sum, 1.0);
    }
}
