//! Luma to the 10-bit working plane: nearest-sample resize to the encoding
//! resolution, requantization to 10 bits and, for encodes below 10 bits,
//! the 2x2 anti-dithering average (libvmaf's `cambi_preprocessing`).

use super::plane::Plane;
use crate::picture::{PlaneRef, Sample};

/// Maps a sample of `bit_depth` bits to 10 bits: a left shift below 10
/// bits, a rounded right shift above.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Requantize {
    pub(crate) left: u32,
    pub(crate) right: u32,
    pub(crate) round: u32,
}

impl Requantize {
    pub(crate) fn new(bit_depth: u32) -> Self {
        if bit_depth <= 10 {
            Self {
                left: 10 - bit_depth,
                right: 0,
                round: 0,
            }
        } else {
            let right = bit_depth - 10;
            Self {
                left: 0,
                right,
                round: 1 << (right - 1),
            }
        }
    }

    #[inline(always)]
    fn apply(self, v: u32) -> u16 {
        (((v << self.left) + self.round) >> self.right) as u16
    }
}

/// The first sample above the bit depth's maximum, if any (libvmaf refuses
/// such input; 8 and 16 bits cannot overflow).
pub fn first_out_of_range<T: Sample>(luma: &PlaneRef<'_, T>, bit_depth: u32) -> Option<u32> {
    if bit_depth == 8 || bit_depth >= 16 {
        return None;
    }
    let max = (1u32 << bit_depth) - 1;
    (0..luma.height)
        .flat_map(|y| luma.row(y).iter().map(|&v| v.into()))
        .find(|&v: &u32| v > max)
}

/// Writes `luma` resized to `out_w` x `out_h` and requantized to 10 bits
/// into the top-left of `out`.
pub fn resize_to_10bit<T: Sample>(
    luma: &PlaneRef<'_, T>,
    bit_depth: u32,
    out: &mut Plane,
    out_w: usize,
    out_h: usize,
) {
    let q = Requantize::new(bit_depth);
    if luma.width == out_w && luma.height == out_h {
        for y in 0..out_h {
            let dst = &mut out.row_mut(y)[..out_w];
            for (d, &s) in dst.iter_mut().zip(luma.row(y)) {
                *d = q.apply(s.into());
            }
        }
        return;
    }
    let columns = nearest_indices(luma.width, out_w);
    for (i, &row) in nearest_indices(luma.height, out_h).iter().enumerate() {
        let src = luma.row(row as usize);
        let dst = &mut out.row_mut(i)[..out_w];
        for (d, &x) in dst.iter_mut().zip(&columns) {
            *d = q.apply(src[x as usize].into());
        }
    }
}

/// The input sample each of `out_len` output positions picks when `in_len`
/// samples are resized: the nearest one to the centre of the output pixel,
/// positions stepped in single precision exactly as libvmaf does (the
/// accumulated rounding decides which sample is picked).
pub(crate) fn nearest_indices(in_len: usize, out_len: usize) -> Vec<u32> {
    let ratio = in_len as f32 / out_len as f32;
    let start = (f64::from(ratio / 2.0) - 0.5) as f32;
    let nearest = |pos: f32| (f64::from(pos) + 0.5) as i32 as usize;
    let mut pos = start;
    (0..out_len)
        .map(|_| {
            let i = nearest(pos).min(in_len - 1) as u32;
            pos += ratio;
            i
        })
        .collect()
}

/// libvmaf's `anti_dithering_filter`: each sample becomes the average of
/// the 2x2 block it starts (the last row and column average two samples),
/// in place and computed from the unfiltered neighbours.
pub fn anti_dither(plane: &mut Plane, width: usize, height: usize) {
    for y in 0..height - 1 {
        let (top, bottom) = plane.data.split_at_mut((y + 1) * plane.stride);
        let cur = &mut top[y * plane.stride..y * plane.stride + width];
        let next = &bottom[..width];
        for x in 0..width - 1 {
            let sum = u32::from(cur[x])
                + u32::from(cur[x + 1])
                + u32::from(next[x])
                + u32::from(next[x + 1]);
            cur[x] = (sum >> 2) as u16;
        }
        cur[width - 1] = ((u32::from(cur[width - 1]) + u32::from(next[width - 1])) >> 1) as u16;
    }
    let last = &mut plane.row_mut(height - 1)[..width];
    for x in 0..width - 1 {
        last[x] = ((u32::from(last[x]) + u32::from(last[x + 1])) >> 1) as u16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requantizes_to_10_bits() {
        assert_eq!(Requantize::new(8).apply(255), 1020);
        assert_eq!(Requantize::new(9).apply(511), 1022);
        assert_eq!(Requantize::new(10).apply(1023), 1023);
        assert_eq!(Requantize::new(12).apply(4095), 1024);
        assert_eq!(Requantize::new(12).apply(4093), 1023);
    }

    #[test]
    fn downscale_picks_centre_samples() {
        let src: Vec<u8> = (0..16).collect();
        let luma = PlaneRef {
            data: &src,
            width: 4,
            height: 4,
            stride: 4,
        };
        let mut out = Plane::new(2, 2);
        resize_to_10bit(&luma, 8, &mut out, 2, 2);
        // ratio 2: start 0.5, picks samples 1 and 3 of rows 1 and 3.
        assert_eq!(out.data, vec![5 << 2, 7 << 2, 13 << 2, 15 << 2]);
    }

    #[test]
    fn anti_dither_averages_blocks() {
        let mut p = Plane::new(3, 2);
        p.data.copy_from_slice(&[0, 4, 8, 4, 8, 12]);
        anti_dither(&mut p, 3, 2);
        assert_eq!(p.data, vec![4, 8, 10, 6, 10, 12]);
    }
}
