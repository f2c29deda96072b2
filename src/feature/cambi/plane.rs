//! The 10-bit working plane CAMBI transforms in place, scale after scale.
//!
//! libvmaf keeps one fixed-size buffer and shrinks the picture inside it, so
//! samples beyond the current scale keep what earlier steps left there. Its
//! sliding windows read those samples when a scale is narrower than the
//! window; keeping the same buffer model reproduces that exactly.

use crate::cpu::{simd_level, SimdLevel};

/// A `width` x `height` buffer of 10-bit samples, rows `width` apart.
#[derive(Debug, Clone)]
pub struct Plane {
    pub data: Vec<u16>,
    /// Row pitch, the allocated width.
    pub stride: usize,
    /// Allocated rows.
    pub rows: usize,
}

impl Plane {
    pub fn new(width: usize, height: usize) -> Self {
        Self {
            data: vec![0; width * height],
            stride: width,
            rows: height,
        }
    }

    #[inline]
    pub fn row(&self, y: usize) -> &[u16] {
        &self.data[y * self.stride..(y + 1) * self.stride]
    }

    #[inline]
    pub fn row_mut(&mut self, y: usize) -> &mut [u16] {
        &mut self.data[y * self.stride..(y + 1) * self.stride]
    }

    /// Halves the picture in place by keeping every other sample of every
    /// other row (libvmaf's `decimate`); `width` x `height` is the new size.
    pub fn decimate(&mut self, width: usize, height: usize) {
        decimate(&mut self.data, self.stride, width, height);
    }
}

/// libvmaf's `decimate` on the buffer: row `y` of the new size takes the
/// even samples of row `2y`.
fn decimate(data: &mut [u16], stride: usize, width: usize, height: usize) {
    // Row 0 reads further along its own row, ahead of the writes.
    for x in 0..width {
        data[x] = data[2 * x];
    }
    for y in 1..height {
        let (head, tail) = data.split_at_mut(2 * y * stride);
        let dst = &mut head[y * stride..y * stride + width];
        // Pairs (even, odd); the last odd sample may lie past the row.
        let src = &tail[..2 * width - 1];
        let done = keep_even(simd_level(), &mut dst[..width - 1], &src[..2 * width - 2]);
        for x in done..width - 1 {
            dst[x] = src[2 * x];
        }
        dst[width - 1] = src[2 * width - 2];
    }
}

/// Writes the even samples of `src` (twice as long) to a leading part of
/// `dst` as whole vectors of `level` at most (and of the CPU's level at
/// most) and returns its length (0 without AVX2).
fn keep_even(level: SimdLevel, dst: &mut [u16], src: &[u16]) -> usize {
    #[cfg(target_arch = "x86_64")]
    match level.min(simd_level()) {
        // SAFETY: the CPU has AVX-512.
        SimdLevel::Avx512 => return unsafe { keep_even_avx512(dst, src) },
        // SAFETY: the CPU has AVX2.
        SimdLevel::Avx2 => return unsafe { keep_even_avx2(dst, src) },
        SimdLevel::Baseline => {}
    }
    let _ = (level, dst, src);
    0
}

/// [`keep_even`], sixteen samples per step: each pair read as one 32-bit
/// lane, narrowed to its low (even) half.
///
/// # Safety
/// The CPU must have AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
unsafe fn keep_even_avx512(dst: &mut [u16], src: &[u16]) -> usize {
    use std::arch::x86_64::*;
    const LANES: usize = 16;
    let steps = dst.len().min(src.len() / 2) / LANES;
    for step in 0..steps {
        // SAFETY: step < steps keeps both accesses inside the slices.
        unsafe {
            let pairs = _mm512_loadu_si512(src.as_ptr().add(2 * LANES * step).cast());
            let even = _mm512_cvtepi32_epi16(pairs);
            _mm256_storeu_si256(dst.as_mut_ptr().add(LANES * step).cast(), even);
        }
    }
    steps * LANES
}

/// [`keep_even`], sixteen samples per step with AVX2: each pair read as
/// one 32-bit lane, its high (odd) half cleared, two vectors packed into
/// one and the packs' lane order undone.
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn keep_even_avx2(dst: &mut [u16], src: &[u16]) -> usize {
    use std::arch::x86_64::*;
    const LANES: usize = 16;
    let steps = dst.len().min(src.len() / 2) / LANES;
    let even = _mm256_set1_epi32(0xffff);
    for step in 0..steps {
        // SAFETY: step < steps keeps both accesses inside the slices.
        unsafe {
            let at = src.as_ptr().add(2 * LANES * step);
            let low = _mm256_and_si256(_mm256_loadu_si256(at.cast()), even);
            let high = _mm256_and_si256(_mm256_loadu_si256(at.add(LANES).cast()), even);
            // packus interleaves the 128-bit halves: low0 high0 low1 high1.
            let packed = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi32(low, high));
            _mm256_storeu_si256(dst.as_mut_ptr().add(LANES * step).cast(), packed);
        }
    }
    steps * LANES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimate_keeps_even_samples() {
        let mut p = Plane::new(5, 3);
        for (i, v) in p.data.iter_mut().enumerate() {
            *v = i as u16;
        }
        p.decimate(3, 2);
        assert_eq!(&p.row(0)[..3], &[0, 2, 4]);
        assert_eq!(&p.row(1)[..3], &[10, 12, 14]);
        // Beyond the new size the old samples stay.
        assert_eq!(p.row(0)[3..], [3, 4]);
        assert_eq!(p.row(2), &[10, 11, 12, 13, 14]);
    }

    /// Every level's vectors keep the even samples, whole vectors only.
    #[test]
    fn keep_even_at_every_level() {
        let src: Vec<u16> = (0..150).map(|i| (i * 37 % 1024) as u16).collect();
        for level in [SimdLevel::Baseline, SimdLevel::Avx2, SimdLevel::Avx512] {
            let mut dst = vec![u16::MAX; 70];
            let done = keep_even(level, &mut dst, &src);
            let expected = match level.min(simd_level()) {
                SimdLevel::Baseline => 0,
                _ => 64,
            };
            assert_eq!(done, expected, "{level:?}");
            for x in 0..70 {
                let want = if x < done { src[2 * x] } else { u16::MAX };
                assert_eq!(dst[x], want, "{level:?} sample {x}");
            }
        }
    }

    /// Rows long enough for whole vectors, with a partial one after them.
    #[test]
    fn decimate_wide_rows() {
        for (stride, rows, width, height) in [(75, 9, 38, 5), (64, 4, 32, 2), (100, 6, 40, 3)] {
            let mut p = Plane::new(stride, rows);
            for (i, v) in p.data.iter_mut().enumerate() {
                *v = (i * 7 % 1021) as u16;
            }
            let original = p.data.clone();
            p.decimate(width, height);
            for y in 0..height {
                for x in 0..width {
                    assert_eq!(
                        p.data[y * stride + x],
                        original[2 * y * stride + 2 * x],
                        "{width}x{height}: ({x}, {y})"
                    );
                }
            }
        }
    }
}
