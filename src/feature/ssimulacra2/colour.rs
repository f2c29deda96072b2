//! Y'CbCr to the sRGB-encoded R'G'B' picture SSIMULACRA 2 scores, as VMAFx
//! converts it (see `tests/golden/README.md`, "ssimulacra2"):
//! nearest-neighbour chroma, samples over `2^b - 1` in `f32`, the 8-bit
//! limited-range offsets at every depth, fused multiply-adds, clamp to
//! [0, 1].

use super::fma::fma_kernel;
use super::planes::Planes3;
use crate::picture::{HostPicture, PlaneId, PlaneRef, PlaneSamples, Sample};

/// The `yuv_matrix` option: which matrix and range the input uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YuvMatrix {
    /// 0: BT.709, limited range (the default).
    Bt709Limited,
    /// 1: BT.601, limited range.
    Bt601Limited,
    /// 2: BT.709, full range.
    Bt709Full,
    /// 3: BT.601, full range.
    Bt601Full,
}

impl YuvMatrix {
    /// The option's value (0 to 3), or `None` outside.
    pub fn from_option(value: i32) -> Option<Self> {
        Some(match value {
            0 => Self::Bt709Limited,
            1 => Self::Bt601Limited,
            2 => Self::Bt709Full,
            3 => Self::Bt601Full,
            _ => return None,
        })
    }

    /// (kr, kg, kb).
    fn luma_weights(self) -> (f32, f32, f32) {
        match self {
            Self::Bt709Limited | Self::Bt709Full => (0.2126, 0.7152, 0.0722),
            Self::Bt601Limited | Self::Bt601Full => (0.299, 0.587, 0.114),
        }
    }

    fn limited(self) -> bool {
        matches!(self, Self::Bt709Limited | Self::Bt601Limited)
    }
}

/// The conversion's `f32` constants, computed as VMAFx computes them.
#[derive(Debug, Clone, Copy)]
pub struct Coefficients {
    pub y_off: f32,
    pub y_scale: f32,
    pub c_scale: f32,
    pub cr_r: f32,
    pub cb_g: f32,
    pub cr_g: f32,
    pub cb_b: f32,
}

impl Coefficients {
    pub fn new(matrix: YuvMatrix) -> Self {
        let (kr, kg, kb) = matrix.luma_weights();
        let limited = matrix.limited();
        Self {
            y_off: if limited { 16.0 / 255.0 } else { 0.0 },
            y_scale: if limited { 255.0 / 219.0 } else { 1.0 },
            c_scale: if limited { 255.0 / 224.0 } else { 1.0 },
            cr_r: 2.0 * (1.0 - kr),
            cb_g: -(2.0 * kb * (1.0 - kb)) / kg,
            cr_g: -(2.0 * kr * (1.0 - kr)) / kg,
            cb_b: 2.0 * (1.0 - kb),
        }
    }
}

/// The chroma column (or row) luma column `x` reads: `x` when chroma is as
/// wide as luma, `x >> 1` when exactly half as wide, else
/// `floor(x * chroma / luma)` capped at the last one (VMAFx's rule; ceil
/// half-size chroma at odd sizes gives `x >> 1` too).
pub fn chroma_index(x: usize, luma: usize, chroma: usize) -> usize {
    if chroma == luma {
        x
    } else if chroma * 2 == luma {
        x >> 1
    } else {
        (x * chroma / luma).min(chroma - 1)
    }
}

/// `1 / (2^bits - 1)` in `f32`: a sample times this is the sample over the
/// peak.
pub fn inv_peak(bit_depth: u8) -> f32 {
    1.0f32 / ((1u32 << bit_depth) - 1) as f32
}

/// Writes the clamped R'G'B' of `picture` (which has chroma) into `out`.
pub fn to_srgb(picture: &HostPicture, matrix: YuvMatrix, out: &mut Planes3) {
    let format = picture.format();
    let (w, h) = format.plane_size(PlaneId::Y);
    out.reshape(w, h);
    let coefficients = Coefficients::new(matrix);
    let inv_peak = inv_peak(format.bit_depth);
    match (
        picture.plane(PlaneId::Y),
        picture.plane(PlaneId::Cb),
        picture.plane(PlaneId::Cr),
    ) {
        (PlaneSamples::U8(y), PlaneSamples::U8(cb), PlaneSamples::U8(cr)) => {
            convert([y, cb, cr], inv_peak, &coefficients, out)
        }
        (PlaneSamples::U16(y), PlaneSamples::U16(cb), PlaneSamples::U16(cr)) => {
            convert([y, cb, cr], inv_peak, &coefficients, out)
        }
        _ => unreachable!("planes of one picture share one sample width"),
    }
}

fn convert<T: Sample>(
    [y, cb, cr]: [PlaneRef<'_, T>; 3],
    inv_peak: f32,
    coefficients: &Coefficients,
    out: &mut Planes3,
) {
    let (w, h) = (y.width, y.height);
    let columns: Vec<usize> = (0..w).map(|x| chroma_index(x, w, cb.width)).collect();
    let mut rows = [vec![0.0f32; w], vec![0.0f32; w], vec![0.0f32; w]];
    for row in 0..h {
        let chroma_row = chroma_index(row, h, cb.height);
        let [ys, us, vs] = &mut rows;
        // Each sample over the peak, chroma repeated to luma width.
        for (dst, &s) in ys.iter_mut().zip(y.row(row)) {
            *dst = s.into() as f32 * inv_peak;
        }
        let (cb_row, cr_row) = (cb.row(chroma_row), cr.row(chroma_row));
        for (x, &c) in columns.iter().enumerate() {
            us[x] = cb_row[c].into() as f32 * inv_peak;
            vs[x] = cr_row[c].into() as f32 * inv_peak;
        }
        let [r, g, b] = out.rows_mut(row);
        rgb_row(ys, us, vs, coefficients, r, g, b);
    }
}

fma_kernel! {
    /// One row of normalised Y', Cb', Cr' (samples over the peak) to
    /// clamped R', G', B'.
    pub fn rgb_row(
        y: &[f32],
        cb: &[f32],
        cr: &[f32],
        k: &Coefficients,
        r: &mut [f32],
        g: &mut [f32],
        b: &mut [f32],
    ) => rgb_row_body
}

#[inline(always)]
fn rgb_row_body(
    y: &[f32],
    cb: &[f32],
    cr: &[f32],
    k: &Coefficients,
    r: &mut [f32],
    g: &mut [f32],
    b: &mut [f32],
) {
    let n = y.len();
    let (cb, cr, r, g, b) = (&cb[..n], &cr[..n], &mut r[..n], &mut g[..n], &mut b[..n]);
    for x in 0..n {
        let yn = (y[x] - k.y_off) * k.y_scale;
        let un = (cb[x] - 0.5) * k.c_scale;
        let vn = (cr[x] - 0.5) * k.c_scale;
        r[x] = clamp01(k.cr_r.mul_add(vn, yn));
        g[x] = clamp01(k.cr_g.mul_add(vn, k.cb_g.mul_add(un, yn)));
        b[x] = clamp01(k.cb_b.mul_add(un, yn));
    }
}

/// VMAFx's `clampf(v, 0, 1)` (`f32::clamp` compares the same way).
#[inline(always)]
fn clamp01(v: f32) -> f32 {
    v.clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chroma_index_follows_the_golden_rule() {
        // 4:2:0 at even and odd width (ceil chroma): x >> 1.
        for x in 0..576 {
            assert_eq!(chroma_index(x, 576, 288), x >> 1);
        }
        for x in 0..321 {
            assert_eq!(chroma_index(x, 321, 161), x >> 1);
        }
        assert_eq!(chroma_index(7, 8, 8), 7);
        // Any other ratio: floor(x * c / w), capped.
        assert_eq!(chroma_index(8, 9, 3), 2);
    }

    #[test]
    fn limited_range_keeps_the_8_bit_offsets_at_every_depth() {
        let k = Coefficients::new(YuvMatrix::Bt709Limited);
        let ten_bit = |s: f32| (s * (1.0 / 1023.0) - k.y_off) * k.y_scale;
        assert!((ten_bit(64.0) - -0.000214).abs() < 1e-6);
        assert!((ten_bit(940.0) - 0.99685).abs() < 1e-5);
        let chroma = (128.0 * (1.0f32 / 255.0) - 0.5) * k.c_scale;
        assert!((chroma - 0.00223).abs() < 1e-5);
        assert!((k.cb_g - -0.187324).abs() < 1e-6);
        assert!((k.cr_g - -0.468124).abs() < 1e-6);
    }
}
