//! The `speed_prescale` resamplers (libvmaf `vif_scale_frame_s`): nearest,
//! bilinear, bicubic and Lanczos-4, with libvmaf's pixel-centre mapping,
//! edge mirroring and `f32`/`f64` mix.

use super::convolve::FloatPlane;
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

fn bicubic(src: FloatPlane<'_>, x: f32, y: f32) -> f32 {
    let x0 = f64::from(x).floor() as i32;
    let y0 = f64::from(y).floor() as i32;
    let dx = x - x0 as f32;
    let dy = y - y0 as f32;
    let wx: [f32; 4] = std::array::from_fn(|i| bicubic_kernel((i as i32 - 1) as f32 - dx));
    let wy: [f32; 4] = std::array::from_fn(|i| bicubic_kernel((i as i32 - 1) as f32 - dy));
    let mut value = 0.0f32;
    for (j, &wyj) in wy.iter().enumerate() {
        let yi = mirror_index((y0 + j as i32 - 1) as f32, src.height);
        for (i, &wxi) in wx.iter().enumerate() {
            let xi = mirror_index((x0 + i as i32 - 1) as f32, src.width);
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

fn lanczos4(src: FloatPlane<'_>, x: f32, y: f32) -> f32 {
    const A: i32 = 4;
    let x0 = f64::from(x).floor() as i32;
    let y0 = f64::from(y).floor() as i32;
    let dx = x - x0 as f32;
    let dy = y - y0 as f32;
    let wx: [f32; 9] =
        std::array::from_fn(|i| lanczos4_kernel((i as i32 - A) as f32 - dx, A as f32));
    let wy: [f32; 9] =
        std::array::from_fn(|i| lanczos4_kernel((i as i32 - A) as f32 - dy, A as f32));
    let (mut value, mut weight_sum) = (0.0f32, 0.0f32);
    for (j, &wyj) in wy.iter().enumerate() {
        let yi = mirror_index((y0 + j as i32 - A) as f32, src.height);
        for (i, &wxi) in wx.iter().enumerate() {
            let weight = wxi * wyj;
            weight_sum += weight;
            let xi = mirror_index((x0 + i as i32 - A) as f32, src.width);
            value += src.data[yi * src.stride + xi] * weight;
        }
    }
    value / weight_sum
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
}
