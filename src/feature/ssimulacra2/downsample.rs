//! libjxl's 2x2 box `Downsample` (`tools/ssimulacra2.cc`), done in linear
//! RGB: output ceil(w/2) x ceil(h/2), the last row and column repeated at odd
//! sizes, the four samples summed in `f32` in raster order, times 0.25.

use super::planes::Planes3;

/// `out` = `input` downsampled by two in each direction.
pub fn downsample(input: &Planes3, out: &mut Planes3) {
    let (w, h) = (input.width, input.height);
    let (ow, oh) = (w.div_ceil(2), h.div_ceil(2));
    out.reshape(ow, oh);
    for (src, dst) in input.planes.iter().zip(&mut out.planes) {
        for oy in 0..oh {
            let rows = [2 * oy, (2 * oy + 1).min(h - 1)].map(|y| &src[y * w..][..w]);
            for (ox, d) in dst[oy * ow..][..ow].iter_mut().enumerate() {
                let xs = [2 * ox, (2 * ox + 1).min(w - 1)];
                let mut sum = 0.0f32;
                for row in rows {
                    for x in xs {
                        sum += row[x];
                    }
                }
                *d = sum * 0.25;
            }
        }
    }
}
