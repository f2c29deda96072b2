//! Writes a host picture in a producer layout: the bytes a decoder or
//! renderer would hand over (used by examples and tests to play producer,
//! and as the reference the layout kernels are checked against).

use super::layout::PixelFormat;
use crate::picture::{HostPicture, PlaneId, PlaneSamples};

/// Memory plane `plane` of `picture` in `format`, rows `pitch` bytes apart.
/// Samples are stored as they are (shifted up for the `P` formats), so the
/// picture's bit depth should be the format's.
pub fn pack_plane(
    picture: &HostPicture,
    format: PixelFormat,
    plane: usize,
    pitch: usize,
) -> Vec<u8> {
    let f = picture.format();
    let (row_bytes, rows) = format.plane_extent(plane, f.width, f.height);
    let bps = format.bytes_per_sample();
    let shift = format.sample_shift();
    let sample = |id: PlaneId, x: usize, y: usize| -> u32 {
        let v = match picture.plane(id) {
            PlaneSamples::U8(s) => u32::from(s.at(x, y)),
            PlaneSamples::U16(s) => u32::from(s.at(x, y)),
        };
        v << shift
    };
    let mut out = vec![0u8; pitch * rows.saturating_sub(1) + row_bytes];
    for y in 0..rows {
        for i in 0..row_bytes / bps {
            let v = if format.is_semi_planar() && plane == 1 {
                // Cb, Cr, Cb, Cr, ...
                sample(PlaneId::ALL[1 + i % 2], i / 2, y)
            } else {
                sample(PlaneId::ALL[plane], i, y)
            };
            let at = y * pitch + i * bps;
            out[at..at + bps].copy_from_slice(&v.to_le_bytes()[..bps]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::picture::{ChromaSubsampling, PictureFormat};

    #[test]
    fn p010_interleaves_and_shifts() {
        let format = PictureFormat::new(4, 2, ChromaSubsampling::Yuv420, 10).unwrap();
        let mut p = HostPicture::new(format);
        p.plane_u16_mut(PlaneId::Y)
            .copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 1023]);
        p.plane_u16_mut(PlaneId::Cb).copy_from_slice(&[10, 11]);
        p.plane_u16_mut(PlaneId::Cr).copy_from_slice(&[20, 21]);
        let luma = pack_plane(&p, PixelFormat::P010, 0, 10);
        assert_eq!(luma.len(), 18);
        assert_eq!(&luma[..2], &(1u16 << 6).to_le_bytes());
        assert_eq!(&luma[16..18], &(1023u16 << 6).to_le_bytes());
        let chroma = pack_plane(&p, PixelFormat::P010, 1, 8);
        let words: Vec<u16> = chroma
            .chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]) >> 6)
            .collect();
        assert_eq!(words, [10, 20, 11, 21]);
    }
}
