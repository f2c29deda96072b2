//! A separable 3-tap mode filter that removes isolated samples before the
//! contrast counts (libvmaf's `filter_mode`): each row is filtered
//! horizontally, then each interior row becomes the vertical mode of the
//! three filtered rows around it. The first and last columns skip the
//! horizontal pass; the first and last rows keep their input samples.

use super::plane::Plane;
use crate::cpu::simd_dispatch;

/// The value two of `a`, `b`, `c` share, else the smallest.
#[inline(always)]
fn mode3(a: u16, b: u16, c: u16) -> u16 {
    let smallest = a.min(b).min(c);
    let pair = if b == c { b } else { smallest };
    if a == b || a == c {
        a
    } else {
        pair
    }
}

fn horizontal(src: &[u16], dst: &mut [u16]) {
    let width = src.len();
    dst[0] = src[0];
    if width > 1 {
        let inner = dst[1..width - 1]
            .iter_mut()
            .zip(&src[..width - 2])
            .zip(&src[1..width - 1])
            .zip(&src[2..]);
        for (((d, &left), &centre), &right) in inner {
            *d = mode3(left, centre, right);
        }
        dst[width - 1] = src[width - 1];
    }
}

/// Three horizontally filtered rows, a ring indexed by row.
#[derive(Debug, Clone)]
pub struct ModeScratch {
    rows: [Vec<u16>; 3],
}

impl ModeScratch {
    pub fn new(max_width: usize) -> Self {
        Self {
            rows: [vec![0; max_width], vec![0; max_width], vec![0; max_width]],
        }
    }
}

simd_dispatch! {
    /// Filters the top-left `width` x `height` of `image` in place.
    pub fn apply(image: &mut Plane, width: usize, height: usize, scratch: &mut ModeScratch) => apply_impl
}

#[inline(always)]
fn apply_impl(image: &mut Plane, width: usize, height: usize, scratch: &mut ModeScratch) {
    for y in 0..height {
        horizontal(&image.row(y)[..width], &mut scratch.rows[y % 3][..width]);
        // Row y-1 is written once rows y-2..=y are filtered; row y itself
        // still holds its input for the next iteration's horizontal pass.
        if y > 1 {
            let [r0, r1, r2] = &scratch.rows;
            let out = &mut image.row_mut(y - 1)[..width];
            let rows = out
                .iter_mut()
                .zip(&r0[..width])
                .zip(&r1[..width])
                .zip(&r2[..width]);
            for (((o, &a), &b), &c) in rows {
                *o = mode3(a, b, c);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_or_minimum() {
        assert_eq!(mode3(5, 5, 1), 5);
        assert_eq!(mode3(1, 5, 5), 5);
        assert_eq!(mode3(5, 1, 5), 5);
        assert_eq!(mode3(3, 1, 2), 1);
    }

    #[test]
    fn interior_rows_take_the_mode() {
        let mut p = Plane::new(4, 3);
        p.data
            .copy_from_slice(&[1, 9, 1, 1, 2, 2, 7, 2, 3, 3, 3, 8]);
        apply(&mut p, 4, 3, &mut ModeScratch::new(4));
        // Horizontal: [1,1,1,1], [2,2,2,2], [3,3,3,8]; vertical mode of
        // distinct values is their minimum.
        assert_eq!(p.data, vec![1, 9, 1, 1, 1, 1, 1, 1, 3, 3, 3, 8]);
    }
}
