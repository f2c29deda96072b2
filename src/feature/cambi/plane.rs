//! The 10-bit working plane CAMBI transforms in place, scale after scale.
//!
//! libvmaf keeps one fixed-size buffer and shrinks the picture inside it, so
//! samples beyond the current scale keep what earlier steps left there. Its
//! sliding windows read those samples when a scale is narrower than the
//! window; keeping the same buffer model reproduces that exactly.

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
        let stride = self.stride;
        // Row 0 reads further along its own row, ahead of the writes.
        for x in 0..width {
            self.data[x] = self.data[2 * x];
        }
        for y in 1..height {
            let (head, tail) = self.data.split_at_mut(2 * y * stride);
            let dst = &mut head[y * stride..y * stride + width];
            // Pairs (even, odd); the last odd sample may lie past the row.
            let src = &tail[..2 * width - 1];
            for (d, pair) in dst.iter_mut().zip(src.chunks_exact(2)) {
                *d = pair[0];
            }
            dst[width - 1] = src[2 * width - 2];
        }
    }
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
}
