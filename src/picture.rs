//! What the samples of a picture are: chroma layout, bit depth, geometry.
//!
//! This module says nothing about where samples live. [`HostPicture`] is the
//! one storage kind here (host memory); device pictures live in `gpu/` and
//! imported frames in `import/`, all described by the same [`PictureFormat`].

use crate::error::{Error, Result};
use std::fmt;

pub(crate) mod huge;
mod mapped;
#[cfg(test)]
pub(crate) use mapped::refusal;
pub(crate) use mapped::Retired;
mod memory;

pub(crate) use memory::PictureBuffer;
pub use memory::PicturePool;
use memory::{HeapBuffer, Memory};

/// Chroma subsampling of a planar Y'CbCr picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChromaSubsampling {
    /// Luma only (4:0:0).
    Yuv400,
    Yuv420,
    Yuv422,
    Yuv444,
}

impl ChromaSubsampling {
    /// Number of planes (1 for 4:0:0, else 3).
    pub fn plane_count(self) -> usize {
        match self {
            Self::Yuv400 => 1,
            _ => 3,
        }
    }

    /// Horizontal and vertical chroma shift (log2 of the subsampling factor).
    pub fn chroma_shift(self) -> (u32, u32) {
        match self {
            Self::Yuv400 | Self::Yuv444 => (0, 0),
            Self::Yuv420 => (1, 1),
            Self::Yuv422 => (1, 0),
        }
    }

    /// Parses the `vmaf` tool's `--pixel_format` values (`420`, `422`, `444`,
    /// `400`) and the ffmpeg names (`yuv420p`, ...).
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "400" | "gray" | "yuv400p" | "mono" => Ok(Self::Yuv400),
            "420" | "yuv420p" => Ok(Self::Yuv420),
            "422" | "yuv422p" => Ok(Self::Yuv422),
            "444" | "yuv444p" => Ok(Self::Yuv444),
            _ => Err(Error::InvalidArgument(format!(
                "unknown pixel format '{s}' (expected 400, 420, 422 or 444)"
            ))),
        }
    }
}

impl fmt::Display for ChromaSubsampling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Yuv400 => "4:0:0",
            Self::Yuv420 => "4:2:0",
            Self::Yuv422 => "4:2:2",
            Self::Yuv444 => "4:4:4",
        })
    }
}

/// One of the (up to) three planes of a picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlaneId {
    Y = 0,
    Cb = 1,
    Cr = 2,
}

impl PlaneId {
    pub const ALL: [PlaneId; 3] = [PlaneId::Y, PlaneId::Cb, PlaneId::Cr];

    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for PlaneId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Y => "Y",
            Self::Cb => "Cb",
            Self::Cr => "Cr",
        })
    }
}

/// A set of planes, e.g. the planes an extractor reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PlaneMask(u8);

impl PlaneMask {
    pub const NONE: PlaneMask = PlaneMask(0);
    pub const LUMA: PlaneMask = PlaneMask(1);
    pub const CHROMA: PlaneMask = PlaneMask(0b110);
    pub const ALL: PlaneMask = PlaneMask(0b111);

    pub fn contains(self, plane: PlaneId) -> bool {
        self.0 & (1 << plane.index()) != 0
    }

    pub fn union(self, other: PlaneMask) -> PlaneMask {
        PlaneMask(self.0 | other.0)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn planes(self) -> impl Iterator<Item = PlaneId> {
        PlaneId::ALL.into_iter().filter(move |p| self.contains(*p))
    }
}

/// What the samples of a picture are: geometry, chroma layout and bit depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PictureFormat {
    pub width: u32,
    pub height: u32,
    pub subsampling: ChromaSubsampling,
    /// Significant bits per sample, 8 to 16. Samples above 8 bits are stored
    /// in 16-bit words, low bits significant (as in `yuv420p10le`).
    pub bit_depth: u8,
}

impl PictureFormat {
    /// The most pixels (width x height) accepted: 16384x16384, so 16K video
    /// and very wide strips fit, and a 4:4:4 16-bit frame is at most 1.5 GiB.
    /// Sizes come from file headers and flags, so a corrupt one must be
    /// refused before anything is allocated.
    pub const MAX_PIXELS: u64 = 16384 * 16384;

    pub fn new(
        width: u32,
        height: u32,
        subsampling: ChromaSubsampling,
        bit_depth: u8,
    ) -> Result<Self> {
        if width == 0 || height == 0 {
            return Err(Error::InvalidArgument(format!(
                "picture size {width}x{height}: width and height must be positive"
            )));
        }
        if width as u64 * height as u64 > Self::MAX_PIXELS {
            return Err(Error::InvalidArgument(format!(
                "picture size {width}x{height}: more than the {} pixels (16384x16384) supported",
                Self::MAX_PIXELS
            )));
        }
        if !(8..=16).contains(&bit_depth) {
            return Err(Error::InvalidArgument(format!(
                "bit depth {bit_depth}: must be 8 to 16"
            )));
        }
        Ok(Self {
            width,
            height,
            subsampling,
            bit_depth,
        })
    }

    /// Bytes per stored sample: 1 for 8-bit, 2 above.
    pub fn bytes_per_sample(&self) -> usize {
        if self.bit_depth > 8 {
            2
        } else {
            1
        }
    }

    pub fn plane_count(&self) -> usize {
        self.subsampling.plane_count()
    }

    /// Width and height of a plane, chroma rounded up (the layout files and
    /// decoders use: a 321-wide 4:2:0 picture has 161-wide chroma).
    pub fn plane_size(&self, plane: PlaneId) -> (usize, usize) {
        let (w, h) = (self.width as usize, self.height as usize);
        if plane == PlaneId::Y {
            return (w, h);
        }
        let (sx, sy) = self.subsampling.chroma_shift();
        ((w + (1 << sx) - 1) >> sx, (h + (1 << sy) - 1) >> sy)
    }

    /// Bytes of one tightly packed frame (all planes, no padding).
    pub fn frame_bytes(&self) -> usize {
        (0..self.plane_count())
            .map(|i| {
                let (w, h) = self.plane_size(PlaneId::ALL[i]);
                w * h * self.bytes_per_sample()
            })
            .sum()
    }
}

impl fmt::Display for PictureFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}x{} {} {}-bit",
            self.width, self.height, self.subsampling, self.bit_depth
        )
    }
}

/// A sample type a plane can be read as.
pub trait Sample: Copy + Send + Sync + 'static + Into<u32> + Default {
    const BYTES: usize;
}
impl Sample for u8 {
    const BYTES: usize = 1;
}
impl Sample for u16 {
    const BYTES: usize = 2;
}

/// A read-only view of one plane: `height` rows of `width` samples, rows
/// `stride` samples apart.
#[derive(Debug, Clone, Copy)]
pub struct PlaneRef<'a, T> {
    pub data: &'a [T],
    pub width: usize,
    pub height: usize,
    pub stride: usize,
}

impl<'a, T: Copy> PlaneRef<'a, T> {
    /// `data` as a plane of one row.
    pub(crate) fn one_row(data: &'a [T]) -> Self {
        Self {
            data,
            width: data.len(),
            height: 1,
            stride: data.len(),
        }
    }

    #[inline]
    pub fn row(&self, y: usize) -> &'a [T] {
        &self.data[y * self.stride..y * self.stride + self.width]
    }

    #[inline]
    pub fn at(&self, x: usize, y: usize) -> T {
        self.data[y * self.stride + x]
    }
}

crate::cpu::simd_dispatch! {
    /// The first row holding a sample above `limit`, and that sample: the
    /// check of samples against their bit depth. (Compiled once more for
    /// each SIMD level: SSE2 has no 16-bit unsigned maximum, and this runs
    /// over every sample read.)
    pub(crate) fn first_above(plane: &PlaneRef<'_, u16>, limit: u16) -> Option<(usize, u16)> => first_above_impl
}

#[inline(always)]
fn first_above_impl(plane: &PlaneRef<'_, u16>, limit: u16) -> Option<(usize, u16)> {
    // A whole-row maximum first (vectorised); the culprit only when there
    // is one.
    (0..plane.height).find_map(|y| {
        let row = plane.row(y);
        if row.iter().fold(0, |m, &v| m.max(v)) <= limit {
            return None;
        }
        row.iter().find(|&&v| v > limit).map(|&v| (y, v))
    })
}

/// One plane's samples at either storage width.
#[derive(Debug, Clone, Copy)]
pub enum PlaneSamples<'a> {
    U8(PlaneRef<'a, u8>),
    U16(PlaneRef<'a, u16>),
}

impl PlaneSamples<'_> {
    pub fn width(&self) -> usize {
        match self {
            Self::U8(p) => p.width,
            Self::U16(p) => p.width,
        }
    }
    pub fn height(&self) -> usize {
        match self {
            Self::U8(p) => p.height,
            Self::U16(p) => p.height,
        }
    }
}

/// Where each plane of a picture starts in its memory, and its row pitch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    /// Row pitch in samples.
    strides: [usize; 3],
    /// Byte offset of each plane (a multiple of [`PLANE_ALIGN`]).
    offsets: [usize; 3],
    /// Bytes of memory the planes need.
    bytes: usize,
}

/// Planes start at multiples of this many bytes: 16-bit samples are
/// aligned, and each plane begins on a cache line.
const PLANE_ALIGN: usize = 64;

impl Layout {
    /// Rows `align` samples apart at least (a multiple of `align`).
    fn new(format: &PictureFormat, align: usize) -> Self {
        Self::with_plane_align(format, align, PLANE_ALIGN)
    }

    /// Rows `align` samples apart at least, each plane starting at a
    /// multiple of `plane_align` bytes.
    fn with_plane_align(format: &PictureFormat, align: usize, plane_align: usize) -> Self {
        let align = align.max(1);
        let bps = format.bytes_per_sample();
        let (mut strides, mut offsets, mut bytes) = ([0; 3], [0; 3], 0);
        for i in 0..format.plane_count() {
            let (w, h) = format.plane_size(PlaneId::ALL[i]);
            strides[i] = w.div_ceil(align) * align;
            offsets[i] = bytes;
            bytes = (bytes + strides[i] * h * bps).div_ceil(plane_align) * plane_align;
        }
        Self {
            strides,
            offsets,
            bytes,
        }
    }

    /// Tightly packed rows (stride = width).
    fn packed(format: &PictureFormat) -> Self {
        Self::new(format, 1)
    }

    /// A packed frame as files hold it: tightly packed rows, each plane
    /// straight after the one before (not on [`PLANE_ALIGN`]).
    fn file(format: &PictureFormat) -> Self {
        Self::with_plane_align(format, 1, 1)
    }
}

/// A picture whose samples live in host memory: its own, or memory lent
/// by a [`PicturePool`] (given back when the picture is dropped).
pub struct HostPicture {
    format: PictureFormat,
    layout: Layout,
    memory: Memory,
}

impl fmt::Debug for HostPicture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostPicture")
            .field("format", &self.format)
            .field("strides", &self.layout.strides)
            .field("lent", &matches!(self.memory, Memory::Lent(_)))
            .field("mapped", &matches!(self.memory, Memory::Mapped(_)))
            .finish()
    }
}

/// A copy has its own memory (a lent picture's copy is not lent).
impl Clone for HostPicture {
    fn clone(&self) -> Self {
        Self {
            format: self.format,
            layout: self.layout,
            memory: Memory::Own(HeapBuffer::copy_of(
                &self.memory.bytes()[..self.layout.bytes],
            )),
        }
    }
}

impl HostPicture {
    /// A zeroed picture with tightly packed rows.
    pub fn new(format: PictureFormat) -> Self {
        Self::with_alignment(format, 1)
    }

    /// A zeroed picture whose row stride (in samples) is a multiple of
    /// `align` samples; pitch and width are independent.
    pub fn with_alignment(format: PictureFormat, align: usize) -> Self {
        let layout = Layout::new(&format, align);
        Self::from_parts(
            format,
            layout,
            Memory::Own(HeapBuffer::zeroed(layout.bytes)),
        )
    }

    /// The packed frame of `format` at byte `offset` of `file`, mapped in
    /// place (`picture::mapped`): no copy until it is written. The file
    /// must hold the whole frame, and a frame of samples above 8 bits must
    /// start at an even offset. Dropped, its mapping goes to `retired`
    /// (unmapped by the thread that maps frames), where given.
    pub(crate) fn map_file(
        format: PictureFormat,
        file: &std::fs::File,
        offset: u64,
        retired: Option<&mapped::Retired>,
    ) -> std::io::Result<Self> {
        assert!(
            format.bytes_per_sample() == 1 || offset.is_multiple_of(2),
            "16-bit samples at an odd offset"
        );
        let layout = Layout::file(&format);
        let bytes = mapped::MappedBytes::map(file, offset, layout.bytes, retired)?;
        Ok(Self::from_parts(
            format,
            layout,
            Memory::Mapped(Box::new(bytes)),
        ))
    }

    /// Whether the samples are a file's, mapped in place.
    #[cfg(test)]
    pub(crate) fn is_mapped(&self) -> bool {
        matches!(self.memory, Memory::Mapped(_))
    }

    fn from_parts(format: PictureFormat, layout: Layout, memory: Memory) -> Self {
        assert!(
            memory.bytes().len() >= layout.bytes,
            "picture memory holds {} bytes, the planes need {}",
            memory.bytes().len(),
            layout.bytes
        );
        Self {
            format,
            layout,
            memory,
        }
    }

    pub fn format(&self) -> &PictureFormat {
        &self.format
    }

    /// Row pitch of a plane, in samples.
    pub fn stride(&self, plane: PlaneId) -> usize {
        self.layout.strides[plane.index()]
    }

    /// Whether every plane's rows are tightly packed (stride = width), so
    /// that a plane of a packed file frame is its memory as it is.
    pub fn is_packed(&self) -> bool {
        self.layout == Layout::packed(&self.format)
    }

    /// Whether the memory is page-locked for device copies (lent by a GPU
    /// context's pool): an upload reads it directly.
    pub(crate) fn is_pinned(&self) -> bool {
        self.memory.pinned()
    }

    /// The byte range of a plane's stored rows.
    fn range(&self, plane: PlaneId) -> std::ops::Range<usize> {
        assert!(
            plane.index() < self.format.plane_count(),
            "plane {plane} absent from a {} picture",
            self.format.subsampling
        );
        let i = plane.index();
        let (_, h) = self.format.plane_size(plane);
        let start = self.layout.offsets[i];
        start..start + self.layout.strides[i] * h * self.format.bytes_per_sample()
    }

    /// A plane's stored rows as bytes (16-bit samples in native order).
    pub fn plane_bytes(&self, plane: PlaneId) -> &[u8] {
        let r = self.range(plane);
        &self.memory.bytes()[r]
    }

    /// As [`HostPicture::plane_bytes`], to write.
    pub fn plane_bytes_mut(&mut self, plane: PlaneId) -> &mut [u8] {
        let r = self.range(plane);
        &mut self.memory.bytes_mut()[r]
    }

    /// Every plane's stored bytes at once, in plane order: to write the
    /// planes on several threads.
    pub(crate) fn planes_bytes_mut(&mut self) -> Vec<&mut [u8]> {
        let ranges: Vec<_> = PlaneId::ALL[..self.format.plane_count()]
            .iter()
            .map(|&p| self.range(p))
            .collect();
        let (mut rest, mut base) = (self.memory.bytes_mut(), 0);
        let mut planes = Vec::with_capacity(ranges.len());
        for r in ranges {
            assert!(r.start >= base, "planes stored in order");
            let (plane, tail) = std::mem::take(&mut rest)[r.start - base..].split_at_mut(r.len());
            planes.push(plane);
            (rest, base) = (tail, r.end);
        }
        planes
    }

    pub fn plane(&self, plane: PlaneId) -> PlaneSamples<'_> {
        let (width, height) = self.format.plane_size(plane);
        let stride = self.stride(plane);
        let bytes = self.plane_bytes(plane);
        if self.format.bytes_per_sample() == 1 {
            PlaneSamples::U8(PlaneRef {
                data: bytes,
                width,
                height,
                stride,
            })
        } else {
            PlaneSamples::U16(PlaneRef {
                data: bytemuck::cast_slice(bytes),
                width,
                height,
                stride,
            })
        }
    }

    /// The plane as 8-bit samples; panics on a high-bit-depth picture.
    pub fn plane_u8(&self, plane: PlaneId) -> PlaneRef<'_, u8> {
        match self.plane(plane) {
            PlaneSamples::U8(p) => p,
            PlaneSamples::U16(_) => panic!("plane {plane} holds 16-bit samples"),
        }
    }

    /// The plane as 16-bit samples; panics on an 8-bit picture.
    pub fn plane_u16(&self, plane: PlaneId) -> PlaneRef<'_, u16> {
        match self.plane(plane) {
            PlaneSamples::U16(p) => p,
            PlaneSamples::U8(_) => panic!("plane {plane} holds 8-bit samples"),
        }
    }

    /// Mutable rows of an 8-bit plane, for writers (file readers, tests).
    pub fn plane_u8_mut(&mut self, plane: PlaneId) -> &mut [u8] {
        assert!(
            self.format.bytes_per_sample() == 1,
            "plane {plane} holds 16-bit samples"
        );
        self.plane_bytes_mut(plane)
    }

    pub fn plane_u16_mut(&mut self, plane: PlaneId) -> &mut [u16] {
        assert!(
            self.format.bytes_per_sample() == 2,
            "plane {plane} holds 8-bit samples"
        );
        bytemuck::cast_slice_mut(self.plane_bytes_mut(plane))
    }

    /// Mutable Cb and Cr planes at once, as bytes.
    fn chroma_bytes_mut(&mut self) -> (&mut [u8], &mut [u8]) {
        assert!(self.format.plane_count() == 3, "no chroma planes");
        let (cb, cr) = (self.range(PlaneId::Cb), self.range(PlaneId::Cr));
        let (head, tail) = self.memory.bytes_mut().split_at_mut(cr.start);
        (&mut head[cb], &mut tail[..cr.len()])
    }

    /// Mutable Cb and Cr rows of an 8-bit picture at once, for writers that
    /// fill both in one pass (de-interleaving CbCr); panics without chroma.
    pub fn chroma_u8_mut(&mut self) -> (&mut [u8], &mut [u8]) {
        assert!(
            self.format.bytes_per_sample() == 1,
            "no 8-bit chroma planes"
        );
        self.chroma_bytes_mut()
    }

    /// As [`HostPicture::chroma_u8_mut`], for pictures above 8 bits.
    pub fn chroma_u16_mut(&mut self) -> (&mut [u16], &mut [u16]) {
        assert!(
            self.format.bytes_per_sample() == 2,
            "no 16-bit chroma planes"
        );
        let (cb, cr) = self.chroma_bytes_mut();
        (bytemuck::cast_slice_mut(cb), bytemuck::cast_slice_mut(cr))
    }

    /// Copies every sample of `source`, a picture of the same format (its
    /// rows may be padded differently), into this one: e.g. a frame into a
    /// picture from [`Context::picture`](crate::Context::picture).
    pub fn copy_from(&mut self, source: &HostPicture) {
        assert_eq!(
            self.format, source.format,
            "copying a {} picture into a {} one",
            source.format, self.format
        );
        let bps = self.format.bytes_per_sample();
        for i in 0..self.format.plane_count() {
            let id = PlaneId::ALL[i];
            let (w, h) = self.format.plane_size(id);
            let (from, to) = (source.layout.strides[i] * bps, self.layout.strides[i] * bps);
            let (src, dst) = (source.plane_bytes(id), self.plane_bytes_mut(id));
            if from == to {
                dst.copy_from_slice(src);
                continue;
            }
            for y in 0..h {
                dst[y * to..y * to + w * bps].copy_from_slice(&src[y * from..y * from + w * bps]);
            }
        }
    }

    /// Fills every plane from one tightly packed frame in file layout
    /// (planes in order, little-endian 16-bit words above 8 bits).
    pub fn fill_from_packed(&mut self, bytes: &[u8]) {
        let fmt = self.format;
        assert_eq!(bytes.len(), fmt.frame_bytes(), "packed frame size");
        let bps = fmt.bytes_per_sample();
        let mut off = 0;
        for i in 0..fmt.plane_count() {
            let id = PlaneId::ALL[i];
            let (w, h) = fmt.plane_size(id);
            let pitch = self.layout.strides[i] * bps;
            let row = w * bps;
            let dst = self.plane_bytes_mut(id);
            for y in 0..h {
                dst[y * pitch..y * pitch + row].copy_from_slice(&bytes[off..off + row]);
                off += row;
            }
            if bps == 2 && cfg!(target_endian = "big") {
                for v in self.plane_u16_mut(id) {
                    *v = u16::from_le(*v);
                }
            }
        }
    }

    /// Checks every sample fits the bit depth (a 10-bit file with a stray
    /// 16-bit word would otherwise overflow integer extractors silently).
    pub fn max_sample(&self) -> u32 {
        let mut max = 0u32;
        for i in 0..self.format.plane_count() {
            let id = PlaneId::ALL[i];
            let m = match self.plane(id) {
                PlaneSamples::U8(p) => (0..p.height)
                    .map(|y| p.row(y).iter().copied().max().unwrap_or(0) as u32)
                    .max()
                    .unwrap_or(0),
                PlaneSamples::U16(p) => (0..p.height)
                    .map(|y| p.row(y).iter().copied().max().unwrap_or(0) as u32)
                    .max()
                    .unwrap_or(0),
            };
            max = max.max(m);
        }
        max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_size_chroma_rounds_up() {
        let f = PictureFormat::new(321, 179, ChromaSubsampling::Yuv420, 8).unwrap();
        assert_eq!(f.plane_size(PlaneId::Cb), (161, 90));
        assert_eq!(f.frame_bytes(), 321 * 179 + 2 * 161 * 90);
        let f = PictureFormat::new(321, 179, ChromaSubsampling::Yuv422, 10).unwrap();
        assert_eq!(f.plane_size(PlaneId::Cr), (161, 179));
        assert_eq!(f.frame_bytes(), 2 * (321 * 179 + 2 * 161 * 179));
    }

    #[test]
    fn stride_is_independent_of_width() {
        let f = PictureFormat::new(5, 2, ChromaSubsampling::Yuv400, 8).unwrap();
        let mut p = HostPicture::with_alignment(f, 32);
        assert_eq!(p.stride(PlaneId::Y), 32);
        p.fill_from_packed(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        let y = p.plane_u8(PlaneId::Y);
        assert_eq!(y.row(1), &[6, 7, 8, 9, 10]);
    }

    #[test]
    fn copies_keep_samples_whatever_the_padding() {
        let f = PictureFormat::new(5, 3, ChromaSubsampling::Yuv420, 10).unwrap();
        let mut packed = HostPicture::new(f);
        for (i, v) in packed.plane_u16_mut(PlaneId::Cr).iter_mut().enumerate() {
            *v = 100 + i as u16;
        }
        let mut padded = HostPicture::with_alignment(f, 16);
        padded.copy_from(&packed);
        let mut back = HostPicture::new(f);
        back.copy_from(&padded);
        assert_eq!(padded.plane_u16(PlaneId::Cr).row(1), &[103, 104, 105]);
        for p in PlaneId::ALL {
            assert_eq!(back.plane_bytes(p), packed.plane_bytes(p), "plane {p}");
        }
    }

    #[test]
    fn bad_formats_are_refused() {
        assert!(PictureFormat::new(0, 4, ChromaSubsampling::Yuv420, 8).is_err());
        assert!(PictureFormat::new(4, 4, ChromaSubsampling::Yuv420, 17).is_err());
        assert!(ChromaSubsampling::parse("411").is_err());
    }
}
