//! Luma to the 10-bit working plane: nearest-sample resize to the encoding
//! resolution, requantization to 10 bits and, for encodes below 10 bits,
//! the 2x2 anti-dithering average (libvmaf's `cambi_preprocessing`).

use super::plane::Plane;
use crate::cpu::simd_dispatch;
use crate::picture::{first_above, PlaneRef, Sample};

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
/// such input; 16 bits cannot overflow, and 8-bit storage holds no sample
/// above 255). Row maxima in vectors (`picture::first_above`): this runs
/// over every sample of every frame.
pub fn first_out_of_range(luma: &PlaneRef<'_, u16>, bit_depth: u32) -> Option<u32> {
    if bit_depth >= 16 {
        return None;
    }
    let max = (1u16 << bit_depth) - 1;
    first_above(luma, max).map(|(_, v)| u32::from(v))
}

simd_dispatch! {
    /// Writes `luma` resized to `out_w` x `out_h` and requantized to 10 bits
    /// into the top-left of `out`.
    pub fn resize_to_10bit<T: Sample>(
        luma: &PlaneRef<'_, T>,
        bit_depth: u32,
        out: &mut Plane,
        out_w: usize,
        out_h: usize,
    ) => resize_to_10bit_impl
}

#[inline(always)]
fn resize_to_10bit_impl<T: Sample>(
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

simd_dispatch! {
    /// libvmaf's `anti_dithering_filter`: each sample becomes the average of
    /// the 2x2 block it starts (the last row and column average two
    /// samples), in place and computed from the unfiltered neighbours.
    pub fn anti_dither(plane: &mut Plane, width: usize, height: usize) => anti_dither_impl
}

/// Samples averaged per step: each step reads one sample past its block
/// before writing the block, so the in-place filter still reads the
/// unfiltered right neighbour (and the loop vectorizes).
const DITHER_BLOCK: usize = 32;

#[inline(always)]
fn anti_dither_impl(plane: &mut Plane, width: usize, height: usize) {
    for y in 0..height - 1 {
        let (top, bottom) = plane.data.split_at_mut((y + 1) * plane.stride);
        let cur = &mut top[y * plane.stride..y * plane.stride + width];
        let next = &bottom[..width];
        // Samples are 10-bit (at most 1024 after requantizing), so four of
        // them sum in 16 bits.
        let mut x = 0;
        while x + DITHER_BLOCK < width {
            let mut right = [0u16; DITHER_BLOCK + 1];
            right.copy_from_slice(&cur[x..=x + DITHER_BLOCK]);
            let below = &next[x..=x + DITHER_BLOCK];
            for (i, out) in cur[x..x + DITHER_BLOCK].iter_mut().enumerate() {
                *out = (right[i] + right[i + 1] + below[i] + below[i + 1]) >> 2;
            }
            x += DITHER_BLOCK;
        }
        for x in x..width - 1 {
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

    /// The blocked filter against the sample-by-sample one, on rows
    /// shorter and longer than a block and at the largest samples.
    #[test]
    fn anti_dither_blocks_match_the_plain_filter() {
        for (width, height) in [(2, 2), (31, 3), (32, 2), (33, 4), (65, 3), (100, 5)] {
            let mut plane = Plane::new(width + 3, height);
            for (i, v) in plane.data.iter_mut().enumerate() {
                *v = if i % 7 == 0 {
                    1024
                } else {
                    ((i * 37) % 1025) as u16
                };
            }
            let mut expected = plane.clone();
            for y in 0..height {
                for x in 0..width {
                    let at = |yy: usize, xx: usize| u32::from(plane.data[yy * plane.stride + xx]);
                    let (right, down) = (x + 1 < width, y + 1 < height);
                    let v = match (right, down) {
                        (true, true) => {
                            (at(y, x) + at(y, x + 1) + at(y + 1, x) + at(y + 1, x + 1)) >> 2
                        }
                        (false, true) => (at(y, x) + at(y + 1, x)) >> 1,
                        (true, false) => (at(y, x) + at(y, x + 1)) >> 1,
                        (false, false) => at(y, x),
                    };
                    expected.data[y * plane.stride + x] = v as u16;
                }
            }
            anti_dither(&mut plane, width, height);
            assert_eq!(plane.data, expected.data, "{width}x{height}");
        }
    }

    #[test]
    fn anti_dither_averages_blocks() {
        let mut p = Plane::new(3, 2);
        p.data.copy_from_slice(&[0, 4, 8, 4, 8, 12]);
        anti_dither(&mut p, 3, 2);
        assert_eq!(p.data, vec![4, 8, 10, 6, 10, 12]);
    }
}
