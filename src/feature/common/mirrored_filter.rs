//! The separable, edge-mirrored convolution of libvmaf's float extractors
//! (`common/convolution.c`, `vif_tools.c`), and its building blocks, among
//! them the edge rule that VIF, motion and SpEED filters also use.
//!
//! Bit-exactness notes: every sum starts from `0.0` and adds the taps in
//! filter order, in `f32`, with no fused multiply-add, exactly as the C loops
//! do (Rust never contracts `a * b + c`).

use super::float_plane::FloatPlane;

/// Index of tap `i` (may lie outside `0..n`, by less than `n`) mirrored
/// into the plane the way libvmaf's VIF, motion and SpEED filters do: about
/// the edge sample, which is not repeated (reflect-101: `-i` before the
/// start, `2n - i - 2` past the end).
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

/// Fills the `half` values beyond each edge of `row`, whose middle
/// `row.len() - 2 * half` values are the data, by [`mirror`]'s rule.
#[inline]
pub fn mirror_edges<V: Copy>(row: &mut [V], half: usize) {
    let last = row.len() - half - 1;
    for f in 1..=half {
        row[half - f] = row[half + f];
        row[last + f] = row[last - f];
    }
}

/// Whether tap `k` of `filter` weighs as tap `len - 1 - k`: the mirrored
/// taps that folding passes add before multiplying (compile-time).
pub const fn is_symmetric(filter: &[u16]) -> bool {
    let mut k = 0;
    while k < filter.len() {
        if filter[k] != filter[filter.len() - 1 - k] {
            return false;
        }
        k += 1;
    }
    true
}

/// The most taps a filter here has (VIF's largest Gaussian).
pub const MAX_TAPS: usize = 65;

/// `out[j] = sum_k filter[k] * rows[k][j]` for every `j` of `out`, the taps
/// added in filter order starting from `0.0`, as libvmaf's loops do. One
/// pass per tap over the (L1-resident) output row vectorises well.
#[inline(always)]
pub fn fir(filter: &[f32], rows: &[&[f32]], out: &mut [f32]) {
    let n = out.len();
    out.fill(0.0);
    for (&f, row) in filter.iter().zip(rows) {
        for (o, &x) in out.iter_mut().zip(&row[..n]) {
            *o += f * x;
        }
    }
}

/// The rows a vertical filter of `taps` taps reads for output row `y`, in
/// tap order, [`mirror`]ed into the plane.
#[inline(always)]
pub fn tap_rows(plane: &FloatPlane, y: usize, taps: usize) -> [&[f32]; MAX_TAPS] {
    assert!(taps <= MAX_TAPS, "{taps} taps: at most {MAX_TAPS}");
    let r = (taps / 2) as isize;
    let mut rows: [&[f32]; MAX_TAPS] = [&[]; MAX_TAPS];
    for (k, row) in rows.iter_mut().enumerate().take(taps) {
        *row = plane.row(mirror(y as isize - r + k as isize, plane.height));
    }
    rows
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
    #[inline(always)]
    pub fn body_mut(&mut self) -> &mut [f32] {
        &mut self.buf[self.radius..self.radius + self.width]
    }

    /// Fills the pads from the body with [`mirror`]'s rule.
    #[inline(always)]
    pub fn mirror_edges(&mut self) {
        mirror_edges(&mut self.buf[..self.width + 2 * self.radius], self.radius);
    }

    /// The horizontal pass at every position: `out[j] = sum_k f[k] *
    /// row[j - r + k]`, taps added in filter order.
    #[inline(always)]
    pub fn filter_into(&self, filter: &[f32], out: &mut [f32]) {
        let w = self.width;
        let mut windows: [&[f32]; MAX_TAPS] = [&[]; MAX_TAPS];
        for (k, win) in windows.iter_mut().enumerate().take(filter.len()) {
            *win = &self.buf[k..k + w];
        }
        fir(filter, &windows, &mut out[..w]);
    }

    /// The horizontal pass at even positions only: `out[j] = (filtered
    /// row)[2j]` for `j < width / 2`, the input of libvmaf's `vif_dec2`.
    #[inline(always)]
    pub fn filter_even_into(&self, filter: &[f32], out: &mut [f32]) {
        let n = self.width / 2;
        for (j, o) in out[..n].iter_mut().enumerate() {
            let src = &self.buf[2 * j..2 * j + filter.len()];
            let mut acc = 0.0f32;
            for (&f, &s) in filter.iter().zip(src) {
                acc += f * s;
            }
            *o = acc;
        }
    }
}

/// libvmaf's `convolution_f32_c_s` / `vif_filter1d_s`: the separable filter
/// over the whole plane (vertical, then horizontal), edges mirrored.
#[inline(always)]
pub fn convolve(filter: &[f32], src: &FloatPlane, dst: &mut FloatPlane, row: &mut PaddedRow) {
    let r = filter.len() / 2;
    dst.reshape(src.width, src.height);
    row.reshape(src.width, r);
    for y in 0..src.height {
        fir(filter, &tap_rows(src, y, filter.len()), row.body_mut());
        row.mirror_edges();
        row.filter_into(filter, dst.row_mut(y));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirror_skips_the_edge_sample() {
        assert_eq!(mirror(-2, 5), 2);
        assert_eq!(mirror(-1, 5), 1);
        assert_eq!(mirror(0, 5), 0);
        assert_eq!(mirror(4, 5), 4);
        assert_eq!(mirror(5, 5), 3);
        assert_eq!(mirror(6, 5), 2);
        assert_eq!(mirror(4, 3), 0);
        let mut row = [0, 0, 10, 11, 12, 0, 0];
        mirror_edges(&mut row, 2);
        assert_eq!(row, [12, 11, 10, 11, 12, 11, 10]);
    }

    /// The padded horizontal pass equals the direct definition.
    #[test]
    fn convolve_matches_direct_definition() {
        for (w, h) in [(7, 6), (40, 5)] {
            convolve_case(w, h);
        }
    }

    fn convolve_case(w: usize, h: usize) {
        let mut src = FloatPlane::new(w, h);
        for (i, v) in src.samples_mut().iter_mut().enumerate() {
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
        fir(&f, &tap_rows(&src, 2, f.len()), row.body_mut());
        row.mirror_edges();
        row.filter_even_into(&f, &mut even);
        for (j, e) in even.iter().enumerate() {
            assert_eq!(e.to_bits(), dst.row(2)[2 * j].to_bits());
        }
    }
}
