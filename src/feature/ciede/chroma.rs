//! Which chroma sample each luma position of a ciede picture uses.
//!
//! libvmaf upsamples chroma to 4:4:4 by repetition before converting to
//! Lab. Two of its cases are defective (ADRs/0004): at odd sizes it reads
//! past its floor-size chroma planes, and for 4:2:2 it swaps the horizontal
//! and vertical factors. We read our ceil-size planes, where every luma
//! position has its chroma sample, so odd sizes need no special case; the
//! 4:2:2 swap is reproduced unless the caller asks for the fix.

use crate::picture::{ChromaSubsampling, PictureFormat, PlaneRef, Sample};

/// Row alignment, in samples, of libvmaf's picture allocator
/// (`DATA_ALIGN`), which decides where its 4:2:2 misreads land.
const LIBVMAF_ALIGN: usize = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChromaLayout {
    /// 4:4:4: chroma at the luma position.
    Full,
    /// 4:2:0: chroma at (x / 2, y / 2).
    Quarter,
    /// 4:2:2: chroma at (x / 2, y).
    HalfWidth,
    /// libvmaf's 4:2:2 upsampling: luma row y reads chroma row y / 2 with
    /// no horizontal halving, so position x lands at offset
    /// `(y / 2) * padded_width + x` of its padded plane (padding reads 0).
    Upstream422 {
        /// libvmaf's chroma width, floor(W / 2).
        width: usize,
        /// libvmaf's chroma row pitch in samples.
        padded_width: usize,
    },
}

impl ChromaLayout {
    pub fn for_format(format: &PictureFormat, fix_422: bool) -> Self {
        match format.subsampling {
            ChromaSubsampling::Yuv444 | ChromaSubsampling::Yuv400 => Self::Full,
            ChromaSubsampling::Yuv420 => Self::Quarter,
            ChromaSubsampling::Yuv422 if fix_422 => Self::HalfWidth,
            ChromaSubsampling::Yuv422 => {
                let width = format.width as usize / 2;
                Self::Upstream422 {
                    width,
                    padded_width: width.div_ceil(LIBVMAF_ALIGN) * LIBVMAF_ALIGN,
                }
            }
        }
    }

    /// Writes the chroma samples of luma row `y` into `out` (one per luma
    /// column).
    pub fn fill_row<T: Sample>(&self, plane: &PlaneRef<'_, T>, y: usize, out: &mut [u16]) {
        let to16 = |s: T| Into::<u32>::into(s) as u16;
        match *self {
            Self::Full => {
                for (o, &s) in out.iter_mut().zip(plane.row(y)) {
                    *o = to16(s);
                }
            }
            Self::Quarter | Self::HalfWidth => {
                let row = plane.row(if *self == Self::Quarter { y / 2 } else { y });
                for (x, o) in out.iter_mut().enumerate() {
                    *o = to16(row[x / 2]);
                }
            }
            Self::Upstream422 {
                width,
                padded_width,
            } => {
                // A 1-column picture: libvmaf's chroma rows are 0 wide and
                // it reads nothing valid; read 0 rather than divide by 0.
                if padded_width == 0 {
                    out.fill(0);
                    return;
                }
                let start = (y / 2) * padded_width;
                for (x, o) in out.iter_mut().enumerate() {
                    let (row, col) = ((start + x) / padded_width, (start + x) % padded_width);
                    // Past the last row only for one-row pictures, where
                    // libvmaf reads the next plane or beyond its buffer.
                    *o = if col < width && row < plane.height {
                        to16(plane.at(col, row))
                    } else {
                        0
                    };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_column_422_picture_reads_zero_chroma_without_panicking() {
        let f = PictureFormat::new(1, 4, ChromaSubsampling::Yuv422, 8).unwrap();
        let layout = ChromaLayout::for_format(&f, false);
        let samples = [7u8; 4];
        let plane = PlaneRef {
            data: &samples,
            stride: 1,
            width: 1,
            height: 4,
        };
        let mut out = [9u16; 1];
        layout.fill_row(&plane, 3, &mut out);
        assert_eq!(out, [0]);
    }

    #[test]
    fn upstream_422_reads_rows_by_halves_and_wraps_through_padding() {
        let f = PictureFormat::new(80, 4, ChromaSubsampling::Yuv422, 8).unwrap();
        let layout = ChromaLayout::for_format(&f, false);
        assert_eq!(
            layout,
            ChromaLayout::Upstream422 {
                width: 40,
                padded_width: 64
            }
        );
        // Chroma plane 40 x 4, sample value = 100 * row + column.
        let data: Vec<u16> = (0..4)
            .flat_map(|r| (0..40).map(move |c| 100 * r + c))
            .collect();
        let plane = PlaneRef {
            data: &data,
            width: 40,
            height: 4,
            stride: 40,
        };
        let mut out = vec![0; 80];
        layout.fill_row(&plane, 3, &mut out);
        // Row 3 reads row 1: 40 samples, 24 of padding, then row 2.
        assert_eq!(out[0], 100);
        assert_eq!(out[39], 139);
        assert!(out[40..64].iter().all(|&s| s == 0));
        assert_eq!(out[64], 200);
        assert_eq!(out[79], 215);
    }

    #[test]
    fn fixed_422_halves_the_width() {
        let f = PictureFormat::new(5, 1, ChromaSubsampling::Yuv422, 8).unwrap();
        let layout = ChromaLayout::for_format(&f, true);
        let data = [7u8, 8, 9];
        let plane = PlaneRef::one_row(&data);
        let mut out = vec![0; 5];
        layout.fill_row(&plane, 0, &mut out);
        assert_eq!(out, [7, 7, 8, 8, 9]);
    }
}
