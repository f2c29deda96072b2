//! What libvmaf's float extractors share: luma samples as `f32` planes
//! (`picture_copy`) and the separable, edge-mirrored convolution of
//! `common/convolution.c` and `vif_tools.c`.
//!
//! Bit-exactness notes: every sum starts from `0.0` and adds the taps in
//! filter order, in `f32`, with no fused multiply-add, exactly as the C loops
//! do (Rust never contracts `a * b + c`).

use crate::error::{Error, Result};
use crate::picture::{HostPicture, PictureFormat, PlaneId, PlaneSamples, Sample};

/// A plane of `f32` samples, rows `width` apart.
#[derive(Debug, Clone, Default)]
pub struct FloatPlane {
    pub data: Vec<f32>,
    pub width: usize,
    pub height: usize,
}

impl FloatPlane {
    pub fn new(width: usize, height: usize) -> Self {
        Self {
            data: vec![0.0; width * height],
            width,
            height,
        }
    }

    #[inline]
    pub fn row(&self, y: usize) -> &[f32] {
        &self.data[y * self.width..(y + 1) * self.width]
    }

    #[inline]
    pub fn row_mut(&mut self, y: usize) -> &mut [f32] {
        &mut self.data[y * self.width..(y + 1) * self.width]
    }

    /// Changes the geometry, keeping the allocation when it is big enough.
    pub fn reshape(&mut self, width: usize, height: usize) {
        self.width = width;
        self.height = height;
        self.data.resize(width * height, 0.0);
    }
}

/// libvmaf's `picture_copy`: luma samples to `f32`, scaled to the 8-bit
/// range (`x / 2^(bpc-8)`) and shifted by `offset`.
pub fn copy_luma(picture: &HostPicture, offset: i32, dst: &mut FloatPlane) {
    let format = picture.format();
    // libvmaf divides by 4, 16 or 256 for 10, 12 and 16 bits; the same
    // power of two serves every depth above 8.
    let scaler = (1u32 << (format.bit_depth.max(8) - 8)) as f32;
    match picture.plane(PlaneId::Y) {
        PlaneSamples::U8(p) => copy_rows(p.data, p.stride, 1.0, offset, dst),
        PlaneSamples::U16(p) => copy_rows(p.data, p.stride, scaler, offset, dst),
    }
}

fn copy_rows<T: Sample>(src: &[T], stride: usize, scaler: f32, offset: i32, dst: &mut FloatPlane) {
    let offset = offset as f32;
    let w = dst.width;
    for y in 0..dst.height {
        let s = &src[y * stride..y * stride + w];
        for (d, &v) in dst.row_mut(y).iter_mut().zip(s) {
            let v: u32 = v.into();
            // 8-bit: `(float)x + offset`; above: `(float)x / scaler + offset`
            // (dividing by 1.0 changes nothing).
            *d = v as f32 / scaler + offset;
        }
    }
}

/// Checks the picture geometry matches what the extractor was created for.
pub fn check_format(extractor: &str, expected: &PictureFormat, got: &HostPicture) -> Result<()> {
    if got.format() != expected {
        return Err(Error::PictureMismatch(format!(
            "{extractor}: created for {expected}, got a {} picture",
            got.format()
        )));
    }
    Ok(())
}

/// Index of tap `i` (may lie outside `0..n`) mirrored into the plane the
/// way libvmaf's float filters do: about the edge sample, which is not
/// repeated (`-i` before the start, `2n - i - 2` past the end).
#[inline]
pub fn mirror(i: isize, n: usize) -> usize {
    let n = n as isize;
    if i < 0 {
        (-i) as usize
    } else if i >= n {
        (2 * n - i - 2) as usize
    } else {
        i as usize
    }
}

/// One row of a padded buffer: `radius` mirrored samples each side of the
/// `width` samples a vertical pass wrote, ready for the horizontal pass.
#[derive(Debug, Clone, Default)]
pub struct PaddedRow {
    buf: Vec<f32>,
    radius: usize,
    width: usize,
}

impl PaddedRow {
    pub fn new(width: usize, radius: usize) -> Self {
        Self {
            buf: vec![0.0; width + 2 * radius],
            radius,
            width,
        }
    }

    pub fn reshape(&mut self, width: usize, radius: usize) {
        self.width = width;
        self.radius = radius;
        self.buf.resize(width + 2 * radius, 0.0);
    }

    /// The `width` samples in the middle.
    #[inline]
    pub fn body_mut(&mut self) -> &mut [f32] {
        &mut self.buf[self.radius..self.radius + self.width]
    }

    /// Fills the pads from the body with [`mirror`]'s rule.
    pub fn mirror_edges(&mut self) {
        let (r, w) = (self.radius, self.width);
        for m in 1..=r {
            self.buf[r - m] = self.buf[r + m];
            self.buf[r + w - 1 + m] = self.buf[r + w - 1 - m];
        }
    }

    /// The horizontal pass at every position: `out[j] = sum_k f[k] *
    /// row[j - r + k]`, taps added in filter order.
    pub fn filter_into(&self, filter: &[f32], out: &mut [f32]) {
        let w = self.width;
        let out = &mut out[..w];
        out.fill(0.0);
        for (k, &f) in filter.iter().enumerate() {
            let src = &self.buf[k..k + w];
            for (o, &s) in out.iter_mut().zip(src) {
                *o += f * s;
            }
        }
    }

    /// The horizontal pass at even positions only: `out[j] = (filtered
    /// row)[2j]` for `j < width / 2`, the input of libvmaf's `vif_dec2`.
    pub fn filter_even_into(&self, filter: &[f32], out: &mut [f32]) {
        let n = self.width / 2;
        let out = &mut out[..n];
        out.fill(0.0);
        for (k, &f) in filter.iter().enumerate() {
            let src = &self.buf[k..];
            for (j, o) in out.iter_mut().enumerate() {
                *o += f * src[2 * j];
            }
        }
    }
}

/// What the vertical pass reads at each tap.
#[derive(Debug, Clone, Copy)]
pub enum Taps<'a> {
    /// `x`
    Plain(&'a FloatPlane),
    /// `x * x` (`vif_filter1d_sq`)
    Square(&'a FloatPlane),
    /// `x * y` (`vif_filter1d_xy`)
    Product(&'a FloatPlane, &'a FloatPlane),
}

/// The vertical pass of one output row `y`: `out[j] = sum_k f[k] *
/// taps(row mirror(y - r + k))[j]`, taps added in filter order.
pub fn vertical_pass(filter: &[f32], taps: Taps<'_>, y: usize, out: &mut [f32]) {
    let r = filter.len() / 2;
    let (w, h) = match taps {
        Taps::Plain(p) | Taps::Square(p) | Taps::Product(p, _) => (p.width, p.height),
    };
    let out = &mut out[..w];
    out.fill(0.0);
    for (k, &f) in filter.iter().enumerate() {
        let row = mirror(y as isize - r as isize + k as isize, h);
        match taps {
            Taps::Plain(p) => {
                for (o, &a) in out.iter_mut().zip(p.row(row)) {
                    *o += f * a;
                }
            }
            Taps::Square(p) => {
                for (o, &a) in out.iter_mut().zip(p.row(row)) {
                    *o += f * (a * a);
                }
            }
            Taps::Product(p, q) => {
                for ((o, &a), &b) in out.iter_mut().zip(p.row(row)).zip(q.row(row)) {
                    *o += f * (a * b);
                }
            }
        }
    }
}

/// libvmaf's `convolution_f32_c_s` / `vif_filter1d_s`: the separable filter
/// over the whole plane (vertical, then horizontal), edges mirrored.
pub fn convolve(filter: &[f32], src: &FloatPlane, dst: &mut FloatPlane, row: &mut PaddedRow) {
    let r = filter.len() / 2;
    dst.reshape(src.width, src.height);
    row.reshape(src.width, r);
    for y in 0..src.height {
        vertical_pass(filter, Taps::Plain(src), y, row.body_mut());
        row.mirror_edges();
        row.filter_into(filter, dst.row_mut(y));
    }
}

/// Converts C's `static const float x[] = { <double literals> }`: each
/// literal is rounded to `double` first, then to `float`.
pub const fn to_f32<const N: usize>(v: [f64; N]) -> [f32; N] {
    let mut out = [0.0f32; N];
    let mut i = 0;
    while i < N {
        out[i] = v[i] as f32;
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirror_skips_the_edge_sample() {
        assert_eq!(mirror(-2, 5), 2);
        assert_eq!(mirror(-1, 5), 1);
        assert_eq!(mirror(4, 5), 4);
        assert_eq!(mirror(5, 5), 3);
        assert_eq!(mirror(6, 5), 2);
    }

    /// The padded horizontal pass equals the direct definition.
    #[test]
    fn convolve_matches_direct_definition() {
        let (w, h) = (7, 6);
        let mut src = FloatPlane::new(w, h);
        for (i, v) in src.data.iter_mut().enumerate() {
            *v = ((i * 37 % 23) as f32) * 0.37 - 3.0;
        }
        let f = [0.1f32, 0.2, 0.4, 0.2, 0.1];
        let mut dst = FloatPlane::default();
        let mut row = PaddedRow::default();
        convolve(&f, &src, &mut dst, &mut row);
        let r = 2isize;
        for y in 0..h {
            let mut tmp = vec![0f32; w];
            for (x, t) in tmp.iter_mut().enumerate() {
                let mut acc = 0f32;
                for (k, &c) in f.iter().enumerate() {
                    acc += c * src.row(mirror(y as isize - r + k as isize, h))[x];
                }
                *t = acc;
            }
            for x in 0..w {
                let mut acc = 0f32;
                for (k, &c) in f.iter().enumerate() {
                    acc += c * tmp[mirror(x as isize - r + k as isize, w)];
                }
                assert_eq!(acc.to_bits(), dst.row(y)[x].to_bits(), "({x},{y})");
            }
        }
        let mut even = vec![0f32; w / 2];
        row.reshape(w, 2);
        vertical_pass(&f, Taps::Plain(&src), 2, row.body_mut());
        row.mirror_edges();
        row.filter_even_into(&f, &mut even);
        for (j, e) in even.iter().enumerate() {
            assert_eq!(e.to_bits(), dst.row(2)[2 * j].to_bits());
        }
    }
}
