//! Three `f32` planes of one size, packed row after row: an R'G'B', linear
//! RGB or XYB picture.

#[derive(Debug, Clone, Default)]
pub struct Planes3 {
    pub width: usize,
    pub height: usize,
    pub planes: [Vec<f32>; 3],
}

impl Planes3 {
    /// Sets the size; the contents are then unspecified.
    pub fn reshape(&mut self, width: usize, height: usize) {
        self.width = width;
        self.height = height;
        for p in &mut self.planes {
            p.resize(width * height, 0.0);
        }
    }

    /// Row `y` of each plane.
    pub fn rows_mut(&mut self, y: usize) -> [&mut [f32]; 3] {
        let w = self.width;
        let [a, b, c] = &mut self.planes;
        [
            &mut a[y * w..][..w],
            &mut b[y * w..][..w],
            &mut c[y * w..][..w],
        ]
    }
}
