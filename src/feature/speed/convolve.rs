//! Separable filtering as libvmaf's `vif_filter1d_s` computes it: a vertical
//! pass into a row buffer, then a horizontal pass, each tap accumulated in
//! `f32` from 0 in filter order, with edges mirrored about the edge sample
//! (`cba|abc...`, libvmaf's reflect-101).
//!
//! [`filter_decimate16`] gives exactly the samples the full filter followed
//! by `vif_dec16_s` keeps, computing only those.

use crate::cpu::simd_dispatch;
use crate::feature::common::mirrored_filter::mirror;

/// A plane of `f32` samples: `height` rows of `width`, `stride` apart.
#[derive(Clone, Copy)]
pub struct FloatPlane<'a> {
    pub data: &'a [f32],
    pub width: usize,
    pub height: usize,
    pub stride: usize,
}

impl FloatPlane<'_> {
    fn row(&self, y: usize) -> &[f32] {
        &self.data[y * self.stride..][..self.width]
    }
}

simd_dispatch! {
    /// The vertical pass at row `y` into `out[..width]`.
    fn vertical_pass(filter: &[f32], src: FloatPlane<'_>, y: usize, out: &mut [f32]) => vertical_pass_impl
}

#[inline(always)]
fn vertical_pass_impl(filter: &[f32], src: FloatPlane<'_>, y: usize, out: &mut [f32]) {
    let radius = (filter.len() / 2) as isize;
    let out = &mut out[..src.width];
    out.fill(0.0);
    for (k, &f) in filter.iter().enumerate() {
        let row = src.row(mirror(y as isize - radius + k as isize, src.height));
        for (o, &s) in out.iter_mut().zip(row) {
            *o += f * s;
        }
    }
}

/// The horizontal pass at column `x` of a row of `width` samples.
#[inline]
fn horizontal_tap_sum(filter: &[f32], row: &[f32], x: usize) -> f32 {
    let radius = (filter.len() / 2) as isize;
    let mut acc = 0.0f32;
    for (k, &f) in filter.iter().enumerate() {
        acc += f * row[mirror(x as isize - radius + k as isize, row.len())];
    }
    acc
}

/// The horizontal pass over a whole row.
fn horizontal_pass(filter: &[f32], row: &[f32], out: &mut [f32]) {
    let width = row.len();
    let radius = filter.len() / 2;
    if width <= 2 * radius {
        for (x, o) in out[..width].iter_mut().enumerate() {
            *o = horizontal_tap_sum(filter, row, x);
        }
        return;
    }
    for x in (0..radius).chain(width - radius..width) {
        out[x] = horizontal_tap_sum(filter, row, x);
    }
    // Inner samples need no mirroring; taps outermost keeps each sum's
    // order while the samples vectorize.
    let inner = &mut out[radius..width - radius];
    inner.fill(0.0);
    for (k, &f) in filter.iter().enumerate() {
        let taps = &row[k..k + inner.len()];
        for (o, &s) in inner.iter_mut().zip(taps) {
            *o += f * s;
        }
    }
}

/// Filters `src` into `dst` (same size, `dst_stride` apart); `row` holds at
/// least `src.width` samples of scratch.
pub fn filter(
    filter: &[f32],
    src: FloatPlane<'_>,
    dst: &mut [f32],
    dst_stride: usize,
    row: &mut [f32],
) {
    for y in 0..src.height {
        vertical_pass(filter, src, y, row);
        horizontal_pass(
            filter,
            &row[..src.width],
            &mut dst[y * dst_stride..][..src.width],
        );
    }
}

/// The filtered samples at every 16th row and column of `src`, written as a
/// (width / 16) x (height / 16) plane `dst_stride` apart.
pub fn filter_decimate16(
    filter: &[f32],
    src: FloatPlane<'_>,
    dst: &mut [f32],
    dst_stride: usize,
    row: &mut [f32],
) {
    for y in 0..src.height / 16 {
        vertical_pass(filter, src, 16 * y, row);
        let row = &row[..src.width];
        for (x, out) in dst[y * dst_stride..][..src.width / 16]
            .iter_mut()
            .enumerate()
        {
            *out = horizontal_tap_sum(filter, row, 16 * x);
        }
    }
}

/// The rows of a `height`-row plane that [`filter_decimate16`] reads with a
/// `taps`-tap filter, in increasing order.
pub fn rows_read_by_decimate16(taps: usize, height: usize) -> Vec<usize> {
    let radius = (taps / 2) as isize;
    let mut read = vec![false; height];
    for y in 0..height / 16 {
        for k in 0..taps as isize {
            read[mirror(16 * y as isize - radius + k, height)] = true;
        }
    }
    (0..height).filter(|&y| read[y]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct two-pass definition, as libvmaf's scalar fallback.
    fn reference(filter: &[f32], src: FloatPlane<'_>) -> Vec<f32> {
        let (w, h, r) = (src.width, src.height, filter.len() as isize / 2);
        let mut out = vec![0.0; w * h];
        let mut tmp = vec![0.0f32; w];
        for i in 0..h {
            for (j, t) in tmp.iter_mut().enumerate() {
                let mut acc = 0.0f32;
                for (k, &f) in filter.iter().enumerate() {
                    let ii = mirror(i as isize - r + k as isize, h);
                    acc += f * src.data[ii * src.stride + j];
                }
                *t = acc;
            }
            for j in 0..w {
                let mut acc = 0.0f32;
                for (k, &f) in filter.iter().enumerate() {
                    acc += f * tmp[mirror(j as isize - r + k as isize, w)];
                }
                out[i * w + j] = acc;
            }
        }
        out
    }

    fn plane(h: usize, stride: usize) -> Vec<f32> {
        (0..stride * h)
            .map(|i| ((i * 7919) % 255) as f32 - 128.0 + (i % 3) as f32 * 0.25)
            .collect()
    }

    #[test]
    fn decimation_reads_the_filter_support_of_every_16th_row() {
        assert_eq!(rows_read_by_decimate16(3, 40), vec![0, 1, 15, 16, 17]);
        assert_eq!(
            rows_read_by_decimate16(5, 33),
            vec![0, 1, 2, 14, 15, 16, 17, 18]
        );
    }

    #[test]
    fn matches_the_direct_definition() {
        let f = [0.1f32, 0.2, 0.4, 0.2, 0.1];
        for (w, h) in [(37, 21), (4, 3), (5, 5)] {
            let data = plane(h, w + 3);
            let src = FloatPlane {
                data: &data,
                width: w,
                height: h,
                stride: w + 3,
            };
            let mut out = vec![0.0; w * h];
            filter(&f, src, &mut out, w, &mut vec![0.0; w]);
            assert_eq!(out, reference(&f, src), "{w}x{h}");
        }
    }

    #[test]
    fn decimation_keeps_every_16th_sample() {
        let f = [0.05f32, 0.1, 0.15, 0.2, 0.0, 0.2, 0.15, 0.1, 0.05];
        let (w, h) = (83, 50);
        let data = plane(h, w);
        let src = FloatPlane {
            data: &data,
            width: w,
            height: h,
            stride: w,
        };
        let full = reference(&f, src);
        let mut out = vec![0.0; (w / 16) * (h / 16)];
        filter_decimate16(&f, src, &mut out, w / 16, &mut vec![0.0; w]);
        for y in 0..h / 16 {
            for x in 0..w / 16 {
                assert_eq!(out[y * (w / 16) + x], full[16 * y * w + 16 * x]);
            }
        }
    }
}
