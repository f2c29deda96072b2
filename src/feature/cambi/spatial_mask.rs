//! The spatial mask: CAMBI only looks at flat areas, where banding shows.
//! A sample is "flat" when it equals its right and lower neighbours (edges
//! count as equal); a pixel is kept when more than a size-dependent number
//! of the 7x7 samples around it are flat (libvmaf's `get_spatial_mask`).

use super::plane::Plane;
use crate::cpu::simd_dispatch;

const FILTER_SIZE: usize = 7;
const PAD: usize = FILTER_SIZE / 2;

/// Scratch rows for the mask, sized for the widest picture.
#[derive(Debug, Clone)]
pub struct MaskScratch {
    /// Flatness of the last `FILTER_SIZE` rows, a ring indexed by row.
    flat: Vec<Vec<u8>>,
    /// Flat samples per column over the current 7 rows.
    column_sums: Vec<u16>,
}

impl MaskScratch {
    pub fn new(max_width: usize) -> Self {
        Self {
            flat: vec![vec![0; max_width]; FILTER_SIZE],
            column_sums: vec![0; max_width],
        }
    }
}

fn ceil_log2(n: u32) -> i32 {
    if n <= 1 {
        0
    } else {
        32 - (n - 1).leading_zeros() as i32
    }
}

/// The count of flat samples a window must exceed, growing with the
/// picture area (libvmaf's `get_mask_index`).
pub fn mask_threshold(width: usize, height: usize) -> u32 {
    let blocks = ((width >> 6) as u32).wrapping_mul((height >> 6) as u32);
    let filter_area = (FILTER_SIZE * FILTER_SIZE) as i32;
    (((filter_area + 3 * (ceil_log2(blocks) - 11) - 1) >> 1) as u16).into()
}

simd_dispatch! {
    /// Marks the flat samples of row `y` (1 when equal to both neighbours).
    /// (This and the column sums' updates below run over every sample of
    /// every frame: compiled for each SIMD level, they vectorize at its
    /// width instead of the baseline's 16 bytes.)
    fn flat_row(image: &Plane, width: usize, height: usize, y: usize, out: &mut [u8]) => flat_row_impl
}

#[inline(always)]
fn flat_row_impl(image: &Plane, width: usize, height: usize, y: usize, out: &mut [u8]) {
    let row = &image.row(y)[..width];
    let out = &mut out[..width];
    let last = width - 1;
    if y + 1 < height {
        let below = &image.row(y + 1)[..width];
        for (((o, &a), &right), &down) in out[..last]
            .iter_mut()
            .zip(&row[..last])
            .zip(&row[1..])
            .zip(below)
        {
            *o = u8::from(a == right) & u8::from(a == down);
        }
        out[last] = u8::from(row[last] == below[last]);
    } else {
        for ((o, &a), &right) in out[..last].iter_mut().zip(&row[..last]).zip(&row[1..]) {
            *o = u8::from(a == right);
        }
        out[last] = 1;
    }
}

/// Writes 1 into `mask` where the 7x7 window around a pixel of the
/// `width` x `height` image holds more than the threshold of flat samples
/// (outside the picture counts as not flat), else 0.
pub fn compute(
    image: &Plane,
    mask: &mut Plane,
    width: usize,
    height: usize,
    scratch: &mut MaskScratch,
) {
    let threshold = mask_threshold(width, height);
    let MaskScratch { flat, column_sums } = scratch;
    let sums = &mut column_sums[..width];
    sums.fill(0);
    // Rows 0..PAD enter the window before the first output row.
    for y in 0..PAD.min(height) {
        flat_row(image, width, height, y, &mut flat[y % FILTER_SIZE]);
        add_row(sums, &flat[y % FILTER_SIZE][..width]);
    }
    for y in 0..height {
        // The leaving row's slot is the one the entering row takes.
        if y > PAD {
            let leaving = y - PAD - 1;
            sub_row(sums, &flat[leaving % FILTER_SIZE][..width]);
        }
        let entering = y + PAD;
        if entering < height {
            let slot = entering % FILTER_SIZE;
            flat_row(image, width, height, entering, &mut flat[slot]);
            add_row(sums, &flat[slot][..width]);
        }
        threshold_row(sums, threshold, &mut mask.row_mut(y)[..width]);
    }
}

simd_dispatch! {
    /// Adds a row's flat marks to the column sums.
    fn add_row(sums: &mut [u16], flat: &[u8]) => add_row_impl
}

simd_dispatch! {
    /// Takes a row's flat marks from the column sums.
    fn sub_row(sums: &mut [u16], flat: &[u8]) => sub_row_impl
}

#[inline(always)]
fn add_row_impl(sums: &mut [u16], flat: &[u8]) {
    for (s, &f) in sums.iter_mut().zip(flat) {
        *s = s.wrapping_add(u16::from(f));
    }
}

#[inline(always)]
fn sub_row_impl(sums: &mut [u16], flat: &[u8]) {
    for (s, &f) in sums.iter_mut().zip(flat) {
        *s = s.wrapping_sub(u16::from(f));
    }
}

simd_dispatch! {
    /// 7-wide horizontal sums of the column sums (clipped at the edges),
    /// compared with the threshold.
    fn threshold_row(sums: &[u16], threshold: u32, out: &mut [u16]) => threshold_row_impl
}

#[inline(always)]
fn threshold_row_impl(sums: &[u16], threshold: u32, out: &mut [u16]) {
    let width = sums.len();
    let window = |x: usize| -> u32 {
        sums[x.saturating_sub(PAD)..(x + PAD + 1).min(width)]
            .iter()
            .map(|&s| u32::from(s))
            .sum()
    };
    let head = PAD.min(width);
    let tail_start = width.saturating_sub(PAD).max(head);
    // The edges, clipped; the middle adds seven shifted slices (a window
    // holds at most 49 flat samples, so 16 bits hold the sum).
    for (x, o) in out.iter_mut().enumerate().take(head) {
        *o = u16::from(window(x) > threshold);
    }
    if tail_start > head {
        let tap = |k: usize| &sums[head + k - PAD..tail_start + k - PAD];
        let middle = out[head..tail_start]
            .iter_mut()
            .zip(tap(0))
            .zip(tap(1))
            .zip(tap(2))
            .zip(tap(3))
            .zip(tap(4))
            .zip(tap(5))
            .zip(tap(6));
        for (((((((o, &a), &b), &c), &d), &e), &f), &g) in middle {
            let total = a + b + c + d + e + f + g;
            *o = u16::from(u32::from(total) > threshold);
        }
    }
    for (x, o) in out.iter_mut().enumerate().skip(tail_start) {
        *o = u16::from(window(x) > threshold);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_follows_picture_area() {
        // 576x324: 9x5 blocks of 64, ceil(log2(45)) = 6 -> (49 - 15 - 1) / 2.
        assert_eq!(mask_threshold(576, 324), 16);
        // 30x16 blocks, ceil(log2(480)) = 9 -> (49 - 6 - 1) / 2.
        assert_eq!(mask_threshold(1920, 1080), 21);
        assert_eq!(mask_threshold(100, 50), 7);
    }

    /// The mask against a direct count of every 7x7 window.
    #[test]
    fn matches_brute_force_window_counts() {
        for (w, h) in [(23, 17), (100, 9), (5, 6), (7, 3), (1, 4)] {
            brute_force_check(w, h);
        }
    }

    fn brute_force_check(w: usize, h: usize) {
        let mut image = Plane::new(w, h);
        let mut seed = 7u32;
        for v in image.data.iter_mut() {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            *v = ((seed >> 16) % 3) as u16;
        }
        let mut mask = Plane::new(w, h);
        compute(&image, &mut mask, w, h, &mut MaskScratch::new(w));
        let at = |x: usize, y: usize| image.data[y * w + x];
        let flat = |x: usize, y: usize| {
            (x + 1 == w || at(x, y) == at(x + 1, y)) && (y + 1 == h || at(x, y) == at(x, y + 1))
        };
        let threshold = mask_threshold(w, h);
        for y in 0..h {
            for x in 0..w {
                let mut n = 0;
                for yy in y.saturating_sub(3)..(y + 4).min(h) {
                    for xx in x.saturating_sub(3)..(x + 4).min(w) {
                        n += u32::from(flat(xx, yy));
                    }
                }
                assert_eq!(mask.data[y * w + x], u16::from(n > threshold), "({x},{y})");
            }
        }
    }
}
