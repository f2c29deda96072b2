//! How a producer's frame is laid out in memory: planar or semi-planar
//! (decoder) pixel formats, the memory planes they have, and the checks that
//! a plane's offset, pitch and extent fit the memory behind it.

use super::ImportError;
use crate::error::Result;
use crate::picture::{ChromaSubsampling, PictureFormat};
use drm_fourcc::DrmFourcc;
use std::fmt;

/// A frame's pixel format as producers name it.
///
/// Planar formats keep Y, Cb and Cr in planes of their own (Y alone for
/// 4:0:0), samples above 8 bits in 16-bit little-endian words, low bits
/// significant: exactly the layout the scoring engine reads, so a planar
/// frame can be read in place. Semi-planar formats (what hardware decoders
/// write) keep Y in one plane and Cb/Cr interleaved in a second; the `P`
/// formats hold their samples in the high bits of 16-bit words. They are
/// de-interleaved (and shifted down) into planar form before scoring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PixelFormat {
    Planar {
        subsampling: ChromaSubsampling,
        bit_depth: u8,
    },
    /// 4:2:0, 8-bit, Y + interleaved CbCr.
    Nv12,
    /// 4:2:2, 8-bit.
    Nv16,
    /// 4:4:4, 8-bit.
    Nv24,
    /// 4:2:0, 10-bit in the high bits of 16.
    P010,
    /// 4:2:2, 10-bit in the high bits of 16.
    P210,
    /// 4:4:4, 10-bit in the high bits of 16.
    P410,
    /// 4:2:0, 16-bit.
    P016,
    /// 4:2:2, 16-bit.
    P216,
    /// 4:4:4, 16-bit.
    P416,
}

impl PixelFormat {
    /// Every semi-planar format, for tests and messages.
    pub const SEMI_PLANAR: [PixelFormat; 9] = [
        Self::Nv12,
        Self::Nv16,
        Self::Nv24,
        Self::P010,
        Self::P210,
        Self::P410,
        Self::P016,
        Self::P216,
        Self::P416,
    ];

    pub fn subsampling(self) -> ChromaSubsampling {
        use ChromaSubsampling::*;
        match self {
            Self::Planar { subsampling, .. } => subsampling,
            Self::Nv12 | Self::P010 | Self::P016 => Yuv420,
            Self::Nv16 | Self::P210 | Self::P216 => Yuv422,
            Self::Nv24 | Self::P410 | Self::P416 => Yuv444,
        }
    }

    /// Significant bits per sample.
    pub fn bit_depth(self) -> u8 {
        match self {
            Self::Planar { bit_depth, .. } => bit_depth,
            Self::Nv12 | Self::Nv16 | Self::Nv24 => 8,
            Self::P010 | Self::P210 | Self::P410 => 10,
            Self::P016 | Self::P216 | Self::P416 => 16,
        }
    }

    /// Bytes one stored sample takes.
    pub fn bytes_per_sample(self) -> usize {
        match self {
            Self::Planar { bit_depth, .. } if bit_depth <= 8 => 1,
            Self::Nv12 | Self::Nv16 | Self::Nv24 => 1,
            _ => 2,
        }
    }

    pub fn is_semi_planar(self) -> bool {
        !matches!(self, Self::Planar { .. })
    }

    /// How far stored samples are shifted up in their word (6 for the
    /// 10-bit `P` formats, whose low 6 bits are zero).
    pub fn sample_shift(self) -> u32 {
        match self {
            Self::P010 | Self::P210 | Self::P410 => 6,
            _ => 0,
        }
    }

    /// Planes in memory: 1 (4:0:0), 2 (semi-planar) or 3 (planar).
    pub fn memory_planes(self) -> usize {
        if self.is_semi_planar() {
            2
        } else {
            self.subsampling().plane_count()
        }
    }

    /// The format the engine scores a `width` x `height` frame of this
    /// layout as.
    pub fn picture_format(self, width: u32, height: u32) -> Result<PictureFormat> {
        PictureFormat::new(width, height, self.subsampling(), self.bit_depth())
    }

    /// Bytes per row and rows of memory plane `plane` of a `width` x
    /// `height` frame (an interleaved CbCr row holds two samples per chroma
    /// column).
    pub fn plane_extent(self, plane: usize, width: u32, height: u32) -> (usize, usize) {
        let (w, h) = (width as usize, height as usize);
        let bps = self.bytes_per_sample();
        if plane == 0 {
            return (w * bps, h);
        }
        let (sx, sy) = self.subsampling().chroma_shift();
        let (cw, ch) = ((w + (1 << sx) - 1) >> sx, (h + (1 << sy) - 1) >> sy);
        let per_column = if self.is_semi_planar() { 2 } else { 1 };
        (cw * bps * per_column, ch)
    }

    /// The format of a DRM fourcc (what dma-buf producers name).
    pub fn from_drm(fourcc: DrmFourcc) -> Result<Self> {
        use ChromaSubsampling::*;
        let planar = |subsampling, bit_depth| Self::Planar {
            subsampling,
            bit_depth,
        };
        Ok(match fourcc {
            DrmFourcc::R8 => planar(Yuv400, 8),
            DrmFourcc::R16 => planar(Yuv400, 16),
            DrmFourcc::Yuv420 => planar(Yuv420, 8),
            DrmFourcc::Yuv422 => planar(Yuv422, 8),
            DrmFourcc::Yuv444 => planar(Yuv444, 8),
            DrmFourcc::Nv12 => Self::Nv12,
            DrmFourcc::Nv16 => Self::Nv16,
            DrmFourcc::Nv24 => Self::Nv24,
            DrmFourcc::P010 => Self::P010,
            DrmFourcc::P210 => Self::P210,
            DrmFourcc::P016 => Self::P016,
            other => {
                return Err(ImportError::new("dma-buf", format!("{other}"))
                    .reason(
                        "no scoring layout for this DRM format (supported: R8, R16, YUV420, \
                         YUV422, YUV444, NV12, NV16, NV24, P010, P210, P016)",
                    )
                    .into())
            }
        })
    }

    /// The DRM fourcc of this format, where DRM has one.
    pub fn drm(self) -> Option<DrmFourcc> {
        use ChromaSubsampling::*;
        Some(match self {
            Self::Planar {
                subsampling: Yuv400,
                bit_depth: 8,
            } => DrmFourcc::R8,
            Self::Planar {
                subsampling: Yuv400,
                bit_depth: 16,
            } => DrmFourcc::R16,
            Self::Planar {
                subsampling,
                bit_depth: 8,
            } => match subsampling {
                Yuv420 => DrmFourcc::Yuv420,
                Yuv422 => DrmFourcc::Yuv422,
                Yuv444 => DrmFourcc::Yuv444,
                Yuv400 => unreachable!("matched above"),
            },
            Self::Nv12 => DrmFourcc::Nv12,
            Self::Nv16 => DrmFourcc::Nv16,
            Self::Nv24 => DrmFourcc::Nv24,
            Self::P010 => DrmFourcc::P010,
            Self::P210 => DrmFourcc::P210,
            Self::P016 => DrmFourcc::P016,
            _ => return None,
        })
    }
}

impl fmt::Display for PixelFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Planar {
                subsampling,
                bit_depth,
            } => write!(f, "planar {subsampling} {bit_depth}-bit"),
            other => write!(f, "{}", format!("{other:?}").to_uppercase()),
        }
    }
}

/// Where one memory plane starts and how far apart its rows are, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlaneLayout {
    pub offset: u64,
    pub pitch: u64,
}

impl PlaneLayout {
    pub fn new(offset: u64, pitch: u64) -> Self {
        Self { offset, pitch }
    }

    /// Bytes from `offset` to the end of the plane's last row.
    pub fn span(&self, row_bytes: usize, rows: usize) -> u64 {
        if rows == 0 {
            return 0;
        }
        self.pitch * (rows as u64 - 1) + row_bytes as u64
    }
}

/// Checks plane `plane` of a `width` x `height` frame against the memory
/// behind it (`memory_bytes`, `None` when the size is not known). Returns the
/// plane's row bytes and rows.
pub(crate) fn check_plane(
    format: PixelFormat,
    width: u32,
    height: u32,
    plane: usize,
    layout: &PlaneLayout,
    memory_bytes: Option<u64>,
    error: impl Fn() -> ImportError,
) -> Result<(usize, usize)> {
    let (row_bytes, rows) = format.plane_extent(plane, width, height);
    if layout.pitch < row_bytes as u64 {
        return Err(error()
            .plane(plane)
            .reason(format!(
                "pitch {} is less than a row's {row_bytes} bytes",
                layout.pitch
            ))
            .into());
    }
    let bps = format.bytes_per_sample() as u64;
    if !layout.offset.is_multiple_of(bps) || !layout.pitch.is_multiple_of(bps) {
        return Err(error()
            .plane(plane)
            .reason(format!(
                "offset {} and pitch {} must be multiples of the {bps}-byte sample",
                layout.offset, layout.pitch
            ))
            .into());
    }
    if let Some(size) = memory_bytes {
        let end = layout.offset + layout.span(row_bytes, rows);
        if end > size {
            return Err(error()
                .plane(plane)
                .reason(format!(
                    "rows end at byte {end} (offset {} + pitch {} x {rows} rows) but the \
                     memory holds {size}",
                    layout.offset, layout.pitch
                ))
                .into());
        }
    }
    Ok((row_bytes, rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn semi_planar_formats_describe_their_planes() {
        let f = PixelFormat::P010;
        assert_eq!(f.memory_planes(), 2);
        assert_eq!(f.plane_extent(0, 321, 179), (642, 179));
        // 161 chroma columns, Cb and Cr interleaved, 2 bytes each.
        assert_eq!(f.plane_extent(1, 321, 179), (644, 90));
        assert_eq!(f.sample_shift(), 6);
        assert_eq!(PixelFormat::Nv24.plane_extent(1, 10, 4), (20, 4));
        assert_eq!(PixelFormat::P216.plane_extent(1, 10, 4), (20, 4));
        let pf = PixelFormat::Nv16.picture_format(64, 32).unwrap();
        assert_eq!(pf.subsampling, ChromaSubsampling::Yuv422);
        assert_eq!(pf.bit_depth, 8);
    }

    #[test]
    fn drm_formats_round_trip() {
        for f in PixelFormat::SEMI_PLANAR {
            if let Some(d) = f.drm() {
                assert_eq!(PixelFormat::from_drm(d).unwrap(), f);
            }
        }
        let err = PixelFormat::from_drm(DrmFourcc::Argb8888).unwrap_err();
        assert!(matches!(err, Error::Import { .. }), "{err}");
        assert!(err.to_string().contains("AR24"), "{err}");
    }

    #[test]
    fn plane_checks_name_what_is_wrong() {
        let f = PixelFormat::Nv12;
        let e = || ImportError::new("host", "NV12");
        let ok = check_plane(
            f,
            64,
            32,
            1,
            &PlaneLayout::new(4096, 64),
            Some(4096 + 64 * 16),
            e,
        );
        assert_eq!(ok.unwrap(), (64, 16));
        let short = check_plane(f, 64, 32, 1, &PlaneLayout::new(0, 32), None, e).unwrap_err();
        assert!(short.to_string().contains("plane 1"), "{short}");
        assert!(short.to_string().contains("pitch 32"), "{short}");
        let past = check_plane(f, 64, 32, 0, &PlaneLayout::new(8, 64), Some(2048), e).unwrap_err();
        assert!(past.to_string().contains("memory holds 2048"), "{past}");
        let odd = check_plane(
            PixelFormat::P010,
            64,
            32,
            0,
            &PlaneLayout::new(1, 128),
            None,
            || ImportError::new("host", "P010"),
        )
        .unwrap_err();
        assert!(odd.to_string().contains("2-byte sample"), "{odd}");
    }
}
