//! The `speed_prescale` resamplers (libvmaf `vif_scale_frame_s`): nearest,
//! bilinear, bicubic and Lanczos-4, with libvmaf's pixel-centre mapping,
//! edge mirroring and `f32`/`f64` mix.

use super::convolve::FloatPlane;
use crate::feature::common::float_plane::FloatPlane as PackedPlane;
use std::f64::consts::PI;

/// `speed_prescale_method` values, as libvmaf names them.
pub const METHOD_NAMES: [&str; 4] = ["nearest", "bilinear", "bicubic", "lanczos4"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleMethod {
    Nearest,
    Bilinear,
    Bicubic,
    Lanczos4,
}

impl ScaleMethod {
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "nearest" => Self::Nearest,
            "bilinear" => Self::Bilinear,
            "bicubic" => Self::Bicubic,
            "lanczos4" => Self::Lanczos4,
            _ => return None,
        })
    }
}

/// Resamples planes of one size to another, with the per-column part of the
/// mapping computed once.
#[derive(Debug, Clone)]
pub struct Resampler {
    method: ScaleMethod,
    src: (usize, usize),
    dst: (usize, usize),
    ratio: (f32, f32),
    /// Source position of every output column (`(x + 0.5) * ratio - 0.5`).
    columns: Vec<f32>,
    /// For bilinear: the two source columns and the weight of the second.
    bilinear_columns: Vec<BilinearTap>,
}

/// Where one output sample interpolates from, along one axis.
#[derive(Debug, Clone, Copy)]
struct BilinearTap {
    first: usize,
    second: usize,
    /// Distance from `first` (libvmaf's `dx`, taken from the mirrored index).
    fraction: f32,
}

impl BilinearTap {
    fn new(position: f32, len: usize) -> Self {
        let first = mirror_index(f64::from(position).floor() as f32, len);
        let second = mirror_index(f64::from(position).ceil() as f32, len);
        Self {
            first,
            second,
            fraction: position - first as f32,
        }
    }
}

impl Resampler {
    pub fn new(method: ScaleMethod, src: (usize, usize), dst: (usize, usize)) -> Self {
        let ratio = (src.0 as f32 / dst.0 as f32, src.1 as f32 / dst.1 as f32);
        let columns: Vec<f32> = (0..dst.0).map(|x| centre(x, ratio.0)).collect();
        let bilinear_columns = match method {
            ScaleMethod::Bilinear => columns
                .iter()
                .map(|&x| BilinearTap::new(x, src.0))
                .collect(),
            _ => Vec::new(),
        };
        Self {
            method,
            src,
            dst,
            ratio,
            columns,
            bilinear_columns,
        }
    }

    /// [`Self::scale`] of a packed plane into a packed plane of the output
    /// size.
    pub fn scale_plane(&self, src: &PackedPlane, dst: &mut PackedPlane) {
        let view = FloatPlane {
            data: src.samples(),
            width: src.width,
            height: src.height,
            stride: src.width,
        };
        dst.reshape(self.dst.0, self.dst.1);
        let stride = dst.width;
        self.scale(view, dst.samples_mut(), stride);
    }

    /// Writes the resampled `src` into `dst`, rows `dst_stride` apart.
    pub fn scale(&self, src: FloatPlane<'_>, dst: &mut [f32], dst_stride: usize) {
        debug_assert_eq!((src.width, src.height), self.src);
        let (dst_w, dst_h) = self.dst;
        if self.src == self.dst {
            for y in 0..dst_h {
                dst[y * dst_stride..][..dst_w]
                    .copy_from_slice(&src.data[y * src.stride..][..dst_w]);
            }
            return;
        }
        for y in 0..dst_h {
            let out = &mut dst[y * dst_stride..][..dst_w];
            match self.method {
                ScaleMethod::Nearest => {
                    let sy = (y as f32 * self.ratio.1) as usize;
                    let row = &src.data[sy * src.stride..];
                    for (x, o) in out.iter_mut().enumerate() {
                        *o = row[(x as f32 * self.ratio.0) as usize];
                    }
                }
                ScaleMethod::Bilinear => {
                    let row = BilinearTap::new(centre(y, self.ratio.1), src.height);
                    bilinear_row(src, row, &self.bilinear_columns, out);
                }
                ScaleMethod::Bicubic => {
                    let yy = centre(y, self.ratio.1);
                    for (o, &xx) in out.iter_mut().zip(&self.columns) {
                        *o = bicubic(src, xx, yy);
                    }
                }
                ScaleMethod::Lanczos4 => {
                    let yy = centre(y, self.ratio.1);
                    for (o, &xx) in out.iter_mut().zip(&self.columns) {
                        *o = lanczos4(src, xx, yy);
                    }
                }
            }
        }
    }
}

/// The source coordinate of output sample `i`: `(i + 0.5) * ratio - 0.5`,
/// in `f64` then stored as `f32`.
fn centre(i: usize, ratio: f32) -> f32 {
    ((i as f64 + 0.5) * f64::from(ratio) - 0.5) as f32
}

/// libvmaf's `mirror` on `f32` coordinates: reflect about 0 and `right`.
fn mirror(i: f32, right: f32) -> f32 {
    if i < 0.0 {
        -i
    } else if i > right {
        2.0 * right - i
    } else {
        i
    }
}

/// A mirrored integer coordinate, as libvmaf converts it (`(int)`).
fn mirror_index(i: f32, len: usize) -> usize {
    mirror(i, (len - 1) as f32) as i32 as usize
}

fn bilinear_row(src: FloatPlane<'_>, row: BilinearTap, columns: &[BilinearTap], out: &mut [f32]) {
    let dy = row.fraction;
    let r1 = &src.data[row.first * src.stride..][..src.width];
    let r2 = &src.data[row.second * src.stride..][..src.width];
    for (o, c) in out.iter_mut().zip(columns) {
        let dx = c.fraction;
        *o = (1.0 - dy) * (1.0 - dx) * r1[c.first]
            + (1.0 - dy) * dx * r1[c.second]
            + dy * (1.0 - dx) * r2[c.first]
            + dy * dx * r2[c.second];
    }
}

fn bicubic_kernel(t: f32) -> f32 {
    let a = -0.75f32;
    let t = if t < 0.0 { -t } else { t };
    if t < 1.0 {
        ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0
    } else if t < 2.0 {
        (((t - 5.0) * t + 8.0) * t - 4.0) * a
    } else {
        0.0
    }
}

/// The four source positions (mirrored) around `pos` and their weights.
fn bicubic_taps(pos: f32, len: usize) -> ([usize; 4], [f32; 4]) {
    let p0 = f64::from(pos).floor() as i32;
    let d = pos - p0 as f32;
    (
        std::array::from_fn(|i| mirror_index((p0 + i as i32 - 1) as f32, len)),
        std::array::from_fn(|i| bicubic_kernel((i as i32 - 1) as f32 - d)),
    )
}

fn bicubic(src: FloatPlane<'_>, x: f32, y: f32) -> f32 {
    let (xs, wx) = bicubic_taps(x, src.width);
    let (ys, wy) = bicubic_taps(y, src.height);
    let mut value = 0.0f32;
    for (&yi, &wyj) in ys.iter().zip(&wy) {
        for (&xi, &wxi) in xs.iter().zip(&wx) {
            value += src.data[yi * src.stride + xi] * (wxi * wyj);
        }
    }
    value
}

fn lanczos4_kernel(x: f32, a: f32) -> f32 {
    if x == 0.0 {
        return 1.0;
    }
    if x > -a && x < a {
        let (x, a) = (f64::from(x), f64::from(a));
        return (a * (PI * x).sin() * (PI * x / a).sin() / (PI * PI * x * x)) as f32;
    }
    0.0
}

/// Lanczos-4's radius.
const LANCZOS_A: i32 = 4;

/// The nine source positions (mirrored) around `pos` and their weights.
fn lanczos4_taps(pos: f32, len: usize) -> ([usize; 9], [f32; 9]) {
    const A: i32 = LANCZOS_A;
    let p0 = f64::from(pos).floor() as i32;
    let d = pos - p0 as f32;
    (
        std::array::from_fn(|i| mirror_index((p0 + i as i32 - A) as f32, len)),
        std::array::from_fn(|i| lanczos4_kernel((i as i32 - A) as f32 - d, A as f32)),
    )
}

fn lanczos4(src: FloatPlane<'_>, x: f32, y: f32) -> f32 {
    let (xs, wx) = lanczos4_taps(x, src.width);
    let (ys, wy) = lanczos4_taps(y, src.height);
    let (mut value, mut weight_sum) = (0.0f32, 0.0f32);
    for (&yi, &wyj) in ys.iter().zip(&wy) {
        for (&xi, &wxi) in xs.iter().zip(&wx) {
            let weight = wxi * wyj;
            weight_sum += weight;
            value += src.data[yi * src.stride + xi] * weight;
        }
    }
    value / weight_sum
}

/// One axis of a [`Resampler`] as tables, for kernels that compute the
/// resampled samples themselves: output position `i` reads the source
/// positions `index[i * taps..][..taps]` (mirrored, in the order
/// [`Resampler::scale`] visits them) with the weights
/// `weight[i * taps..][..taps]`. Nearest: one position, no weight;
/// bilinear: the two positions and, as the first weight, the fraction
/// (libvmaf's `dx`); bicubic and Lanczos-4: 4 and 9 positions and their
/// kernel weights.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AxisTaps {
    pub taps: usize,
    pub index: Vec<i32>,
    pub weight: Vec<f32>,
}

impl AxisTaps {
    fn build<const T: usize>(len: usize, tap: impl Fn(usize) -> ([usize; T], [f32; T])) -> Self {
        let (mut index, mut weight) = (Vec::with_capacity(len * T), Vec::with_capacity(len * T));
        for i in 0..len {
            let (positions, weights) = tap(i);
            index.extend(positions.map(|p| p as i32));
            weight.extend(weights);
        }
        Self {
            taps: T,
            index,
            weight,
        }
    }
}

impl Resampler {
    /// The method [`Self::axis_taps`] describes: equal sizes are copied,
    /// which is nearest at ratio 1 (every sample read at its own position).
    pub(crate) fn table_method(&self) -> ScaleMethod {
        if self.src == self.dst {
            ScaleMethod::Nearest
        } else {
            self.method
        }
    }

    /// The columns' and the rows' tables of [`Self::table_method`].
    pub(crate) fn axis_taps(&self) -> (AxisTaps, AxisTaps) {
        let method = self.table_method();
        let axis = |dst: usize, src: usize, ratio: f32| match method {
            ScaleMethod::Nearest => {
                AxisTaps::build(dst, |i| ([(i as f32 * ratio) as usize], [0.0]))
            }
            ScaleMethod::Bilinear => AxisTaps::build(dst, |i| {
                let t = BilinearTap::new(centre(i, ratio), src);
                ([t.first, t.second], [t.fraction, 0.0])
            }),
            ScaleMethod::Bicubic => AxisTaps::build(dst, |i| bicubic_taps(centre(i, ratio), src)),
            ScaleMethod::Lanczos4 => AxisTaps::build(dst, |i| lanczos4_taps(centre(i, ratio), src)),
        };
        (
            axis(self.dst.0, self.src.0, self.ratio.0),
            axis(self.dst.1, self.src.1, self.ratio.1),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(w: usize, h: usize) -> Vec<f32> {
        (0..w * h)
            .map(|i| (i % w) as f32 + 10.0 * (i / w) as f32)
            .collect()
    }

    #[test]
    fn halving_a_ramp_bilinearly_averages_pairs() {
        let data = ramp(8, 4);
        let src = FloatPlane {
            data: &data,
            width: 8,
            height: 4,
            stride: 8,
        };
        let r = Resampler::new(ScaleMethod::Bilinear, (8, 4), (4, 2));
        let mut out = vec![0.0; 8];
        r.scale(src, &mut out, 4);
        assert_eq!(out, vec![5.5, 7.5, 9.5, 11.5, 25.5, 27.5, 29.5, 31.5]);
    }

    #[test]
    fn every_method_keeps_a_flat_plane_flat() {
        let data = vec![3.0f32; 20 * 12];
        let src = FloatPlane {
            data: &data,
            width: 20,
            height: 12,
            stride: 20,
        };
        for m in METHOD_NAMES {
            let r = Resampler::new(ScaleMethod::parse(m).unwrap(), (20, 12), (12, 7));
            let mut out = vec![0.0; 12 * 7];
            r.scale(src, &mut out, 12);
            assert!(out.iter().all(|&v| (v - 3.0).abs() < 1e-5), "{m}: {out:?}");
        }
    }

    /// What a kernel computes from [`AxisTaps`], operation by operation.
    fn from_tables(r: &Resampler, src: FloatPlane<'_>) -> Vec<f32> {
        let (cols, rows) = r.axis_taps();
        let (w, h) = r.dst;
        let at = |y: i32, x: i32| src.data[y as usize * src.stride + x as usize];
        let mut out = Vec::with_capacity(w * h);
        for y in 0..h {
            let (ry, wy) = (
                &rows.index[y * rows.taps..][..rows.taps],
                &rows.weight[y * rows.taps..],
            );
            for x in 0..w {
                let (cx, wx) = (
                    &cols.index[x * cols.taps..][..cols.taps],
                    &cols.weight[x * cols.taps..],
                );
                out.push(match r.table_method() {
                    ScaleMethod::Nearest => at(ry[0], cx[0]),
                    ScaleMethod::Bilinear => {
                        let (dy, dx) = (wy[0], wx[0]);
                        (1.0 - dy) * (1.0 - dx) * at(ry[0], cx[0])
                            + (1.0 - dy) * dx * at(ry[0], cx[1])
                            + dy * (1.0 - dx) * at(ry[1], cx[0])
                            + dy * dx * at(ry[1], cx[1])
                    }
                    ScaleMethod::Bicubic => {
                        let mut v = 0.0f32;
                        for j in 0..4 {
                            for i in 0..4 {
                                v += at(ry[j], cx[i]) * (wx[i] * wy[j]);
                            }
                        }
                        v
                    }
                    ScaleMethod::Lanczos4 => {
                        let (mut v, mut sum) = (0.0f32, 0.0f32);
                        for j in 0..9 {
                            for i in 0..9 {
                                let weight = wx[i] * wy[j];
                                sum += weight;
                                v += at(ry[j], cx[i]) * weight;
                            }
                        }
                        v / sum
                    }
                });
            }
        }
        out
    }

    #[test]
    fn tables_reproduce_every_method_bit_for_bit() {
        let (w, h) = (37, 23);
        let data: Vec<f32> = (0..w * h)
            .map(|i| ((i * 7919) % 251) as f32 * 0.37 - 40.0)
            .collect();
        let src = FloatPlane {
            data: &data,
            width: w,
            height: h,
            stride: w,
        };
        for m in METHOD_NAMES {
            for dst in [(18, 11), (37, 23), (37, 30), (90, 50), (23, 37)] {
                let r = Resampler::new(ScaleMethod::parse(m).unwrap(), (w, h), dst);
                let mut out = vec![0.0; dst.0 * dst.1];
                r.scale(src, &mut out, dst.0);
                let tables = from_tables(&r, src);
                assert!(
                    out.iter()
                        .zip(&tables)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{m} to {dst:?}"
                );
            }
        }
    }

    #[test]
    fn nearest_picks_the_truncated_position() {
        let data = ramp(6, 3);
        let src = FloatPlane {
            data: &data,
            width: 6,
            height: 3,
            stride: 6,
        };
        let r = Resampler::new(ScaleMethod::Nearest, (6, 3), (4, 2));
        let mut out = vec![0.0; 8];
        r.scale(src, &mut out, 4);
        // ratio 1.5: columns 0, 1, 3, 4; rows 0, 1.
        assert_eq!(out, vec![0.0, 1.0, 3.0, 4.0, 10.0, 11.0, 13.0, 14.0]);
    }

    /// FNV-1a-style hashes of the output bits of libvmaf's own
    /// `vif_scale_frame_s` (vif_tools.c at f85a853, gcc -O3, x86-64) on
    /// this test's input: every method matches C bit for bit.
    #[test]
    fn every_method_matches_libvmafs_bits() {
        const C: [(usize, usize, usize, u64); 16] = [
            (0, 18, 11, 0xb44658bb7732f56c),
            (0, 37, 30, 0x6e988ca03e179992),
            (0, 90, 50, 0x7610df069c8f71c8),
            (0, 23, 37, 0xd01ad2f9bc875a64),
            (1, 18, 11, 0x225ffceb1616871b),
            (1, 37, 30, 0x16f321d387a452d7),
            (1, 90, 50, 0xdb6756f80b316c7c),
            (1, 23, 37, 0xc36aaea40a0ab8c8),
            (2, 18, 11, 0x41758f3033b9ceab),
            (2, 37, 30, 0x05f0f5463ec8a96a),
            (2, 90, 50, 0xfc2f67aed525d8ab),
            (2, 23, 37, 0x7bc4f046ce1b78a3),
            (3, 18, 11, 0x792fccb3bdefb3e3),
            (3, 37, 30, 0xdef8d6ea58bf86a5),
            (3, 90, 50, 0xaad4086b2bdca314),
            (3, 23, 37, 0xbeb10271d626ade2),
        ];
        let (w, h) = (37, 23);
        let data: Vec<f32> = (0..w * h)
            .map(|i| ((i * 7919) % 251) as f32 * 0.37 - 40.0)
            .collect();
        let src = FloatPlane {
            data: &data,
            width: w,
            height: h,
            stride: w,
        };
        for (m, dw, dh, hash) in C {
            let method = ScaleMethod::parse(METHOD_NAMES[m]).unwrap();
            let mut out = vec![0.0; dw * dh];
            Resampler::new(method, (w, h), (dw, dh)).scale(src, &mut out, dw);
            let ours = out.iter().fold(0xcbf29ce484222325u64, |acc, v| {
                (acc ^ u64::from(v.to_bits())).wrapping_mul(0x100000001b3)
            });
            assert_eq!(ours, hash, "{} to {dw}x{dh}", METHOD_NAMES[m]);
        }
    }
}
