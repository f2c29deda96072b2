//! [`FloatPlane`]: an owned plane of `f32` samples, the working image of
//! libvmaf's float VIF, ADM and motion.

/// A plane of `f32` samples, rows `width` apart. The buffer may be longer
/// than `width * height` (see [`FloatPlane::reshape`]); only [`samples`]
/// are meaningful.
///
/// [`samples`]: FloatPlane::samples
#[derive(Debug, Clone, Default)]
pub struct FloatPlane {
    data: Vec<f32>,
    pub width: usize,
    pub height: usize,
}

impl FloatPlane {
    pub fn new(width: usize, height: usize) -> Self {
        Self {
            data: vec![0.0; width * height],
            width,
            height,
        }
    }

    #[inline]
    pub fn row(&self, y: usize) -> &[f32] {
        &self.data[y * self.width..(y + 1) * self.width]
    }

    #[inline]
    pub fn row_mut(&mut self, y: usize) -> &mut [f32] {
        &mut self.data[y * self.width..(y + 1) * self.width]
    }

    /// The `width * height` samples, row after row.
    pub fn samples(&self) -> &[f32] {
        &self.data[..self.width * self.height]
    }

    pub fn samples_mut(&mut self) -> &mut [f32] {
        &mut self.data[..self.width * self.height]
    }

    /// Changes the geometry. The buffer only ever grows, so planes that
    /// shrink and grow from scale to scale, frame after frame, neither
    /// reallocate nor clear memory that is about to be overwritten.
    pub fn reshape(&mut self, width: usize, height: usize) {
        self.width = width;
        self.height = height;
        if self.data.len() < width * height {
            self.data.resize(width * height, 0.0);
        }
    }

    /// A deterministic textured plane for unit tests (a cheap LCG, offset
    /// by -128 like libvmaf's VIF and ADM input).
    #[cfg(test)]
    pub fn texture(w: usize, h: usize, seed: u32) -> Self {
        let mut p = Self::new(w, h);
        let mut x = seed;
        for (i, v) in p.samples_mut().iter_mut().enumerate() {
            x = x.wrapping_mul(1664525).wrapping_add(1013904223);
            *v = ((i % w) as f32 * 0.7 + (x >> 26) as f32) - 128.0;
        }
        p
    }
}
