//! Video file input, streamed one frame at a time: raw planar `.yuv`
//! (geometry from the caller) and `.y4m` (geometry from its header), from
//! regular files, FIFOs, pipes or standard input (`-`), each opened once.

mod input;
#[cfg(test)]
mod mapped_reads;
#[cfg(test)]
mod piece_reads;
#[cfg(test)]
mod test_files;
mod y4m;
mod yuv;

pub use input::Input;
pub use y4m::Y4mReader;
pub use yuv::YuvReader;
pub(crate) use yuv::{partial_tail_error, PartialTail};

use crate::error::{Error, Result};
use crate::parallel;
use crate::picture::{
    first_above, HostPicture, PictureFormat, PicturePool, PlaneId, PlaneRef, Retired,
};
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// A stream of pictures of one format.
pub trait FrameSource: Send {
    fn format(&self) -> PictureFormat;

    /// Reads the next frame into `picture` (which must have this source's
    /// format). Returns `Ok(false)` at a clean end of file; a partial frame
    /// or a malformed one is an error naming the file and frame.
    fn read_into(&mut self, picture: &mut HostPicture) -> Result<bool>;

    /// Index of the next frame to be read.
    fn position(&self) -> u64;

    /// The next frame as a picture: with `map`, where the input allows it
    /// (a regular file; samples above 8 bits at an even offset), the file's
    /// frame mapped in place (no copy, no picture memory: ADR 0038);
    /// otherwise read into a picture from `pool`. `Ok(None)` at a clean end
    /// of file; errors as [`FrameSource::read_into`]'s.
    fn read_next(&mut self, pool: &PicturePool, map: bool) -> Result<Option<HostPicture>> {
        let _ = map;
        read_pooled(self, pool)
    }

    /// The file name, for messages.
    fn path(&self) -> &Path;

    /// The byte length of a regular file whose size alone places its
    /// frames (raw `.yuv`); `None` where it does not (a pipe, a `.y4m`
    /// file, whose frames carry headers).
    fn raw_file_len(&self) -> Option<u64> {
        None
    }

    /// What [`FrameSource::raw_file_len`] tells of the frames: how many
    /// whole ones, and whether a partial one follows them.
    fn frames_in_file(&self) -> Option<(u64, bool)> {
        let frame = self.format().frame_bytes() as u64;
        self.raw_file_len()
            .map(|len| (len / frame, len % frame != 0))
    }

    /// The colour range the file declares (y4m `XCOLORRANGE`: `FULL`,
    /// `LIMITED`); `None` when it says nothing. Scores ignore it.
    fn color_range(&self) -> Option<&str> {
        None
    }
}

/// Opens `path` (`-`: standard input) as `.y4m` (by extension or by its
/// `YUV4MPEG2` signature) or as raw `.yuv` with the geometry in
/// `raw_format`. For `.y4m`, a given `raw_format` must agree with the
/// header. To open two FIFOs fed by one writer, use [`Input`] (open both,
/// then read).
pub fn open(path: &Path, raw_format: Option<PictureFormat>) -> Result<Box<dyn FrameSource>> {
    Input::open(path)?.into_source(raw_format)
}

/// [`FrameSource::read_next`] into a picture from `pool`.
pub(crate) fn read_pooled<S: FrameSource + ?Sized>(
    source: &mut S,
    pool: &PicturePool,
) -> Result<Option<HostPicture>> {
    let mut picture = pool.picture()?;
    Ok(source.read_into(&mut picture)?.then_some(picture))
}

/// A reader's frames mapped in place while it may map them: a regular
/// file with a size, until the system refuses a mapping; the mappings of
/// frames dropped since are unmapped on the reader's thread.
pub(crate) struct FrameMapper {
    can_map: bool,
    retired: Retired,
}

/// What [`FrameMapper::map`] found.
pub(crate) enum Mapped {
    Frame(HostPicture),
    /// The file ends where the frame would start.
    End,
    /// Read this frame instead (the stream has not moved): its 16-bit
    /// samples start at an odd offset, which a mapping cannot give as
    /// 16-bit words, or the file does not map (a pipe, a file system
    /// without `mmap`: then no later frame is mapped either).
    Read,
}

impl FrameMapper {
    /// For an input of `len` bytes (`None`: not a regular file).
    pub(crate) fn new(len: Option<u64>) -> Self {
        Self {
            // Pseudo-files (procfs) report a size of 0 whatever they hold:
            // only a file with a size maps.
            can_map: len.is_some_and(|len| len > 0),
            retired: Retired::new(),
        }
    }

    /// Maps frame `frame` (of `format`) of the file at the stream's
    /// position, moves the stream past it and checks its samples. A file
    /// that ends inside the frame is reported truncated, as a read would.
    pub(crate) fn map(
        &mut self,
        stream: &mut input::Stream,
        path: &Path,
        frame: u64,
        format: PictureFormat,
    ) -> Result<Mapped> {
        if !self.can_map {
            return Ok(Mapped::Read);
        }
        // The frames scored since the last call, unmapped here.
        self.retired.unmap();
        let io = |e| Error::io(path, e);
        // Mapping pages past the file's end would fault when read.
        let Some((at, left)) = input::position_and_left(stream).map_err(io)? else {
            return Ok(Mapped::Read);
        };
        if format.bytes_per_sample() > 1 && !at.is_multiple_of(2) {
            return Ok(Mapped::Read);
        }
        let bytes = format.frame_bytes() as u64;
        if left == 0 {
            return Ok(Mapped::End);
        }
        if left < bytes {
            return Err(Error::BadInput {
                path: path.into(),
                frame,
                reason: format!("truncated: {left} of {bytes} bytes"),
            });
        }
        let file = input::stream_file(stream);
        let Ok(picture) = HostPicture::map_file(format, file, at, Some(&self.retired)) else {
            self.can_map = false;
            return Ok(Mapped::Read);
        };
        input::skip(stream, bytes).map_err(io)?;
        check_samples(path, frame, &picture)?;
        Ok(Mapped::Frame(picture))
    }
}

/// Reads exactly `buf.len()` bytes. Returns the number of bytes read, which
/// is less than requested only at end of file.
pub(crate) fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Bytes of a plane read at a time when its samples are checked against
/// the bit depth: the check reads them while they are still in the core's
/// cache, not in a second pass over the picture.
const CHECKED_CHUNK: usize = 256 << 10;

/// What [`read_frame`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrameRead {
    /// Bytes read: less than a frame only at the end of the input.
    pub bytes: usize,
    /// Every sample is known to fit the bit depth (checked as it was read,
    /// or 8 and 16-bit samples, which always do); otherwise the caller
    /// runs [`check_samples`], which also names a culprit.
    pub fits: bool,
}

/// Reads one packed frame (file layout: planes in order, little-endian
/// words above 8 bits) into `picture`. When the picture's rows are packed
/// as the file's (pictures from [`crate::HostPicture::new`] and from a
/// [`crate::PicturePool`] are), each plane is read straight into its
/// memory, checked chunk by chunk: no copy in between. Otherwise through
/// `buf`.
pub(crate) fn read_frame(
    r: &mut impl Read,
    picture: &mut HostPicture,
    buf: &mut Vec<u8>,
) -> std::io::Result<FrameRead> {
    let fmt = *picture.format();
    let limit = sample_limit(&fmt);
    if cfg!(target_endian = "little") && picture.is_packed() {
        let (mut bytes, mut fits) = (0, true);
        'planes: for plane in PlaneId::ALL.into_iter().take(fmt.plane_count()) {
            let dst = picture.plane_bytes_mut(plane);
            // Unchecked planes in one read.
            let chunk = if limit.is_some() {
                CHECKED_CHUNK
            } else {
                usize::MAX
            };
            for part in dst.chunks_mut(chunk) {
                let n = read_full(r, part)?;
                bytes += n;
                if n < part.len() {
                    break 'planes;
                }
                if let Some(limit) = limit {
                    let samples: &[u16] = bytemuck::cast_slice(part);
                    fits &= first_above(&PlaneRef::one_row(samples), limit).is_none();
                }
            }
        }
        return Ok(FrameRead { bytes, fits });
    }
    buf.resize(fmt.frame_bytes(), 0);
    let bytes = read_full(r, buf)?;
    if bytes == buf.len() {
        picture.fill_from_packed(buf);
    }
    Ok(FrameRead {
        bytes,
        fits: limit.is_none(),
    })
}

/// [`read_frame`] from an input's stream. A large frame of a regular file
/// that holds all of it is read at its offset in pieces, on several
/// threads ([`crate::parallel`]): one core reading from the page cache
/// cannot keep up with a device that scores 2160p pairs in half a
/// millisecond. Anything else (a pipe, a frame the file does not hold in
/// full, a picture with padded rows) is read in order by [`read_frame`].
pub(crate) fn read_stream_frame(
    stream: &mut input::Stream,
    picture: &mut HostPicture,
    buf: &mut Vec<u8>,
) -> std::io::Result<FrameRead> {
    let bytes = picture.format().frame_bytes();
    if cfg!(target_endian = "little") && bytes >= 2 * parallel::PIECE && picture.is_packed() {
        // A file that does not hold the whole frame is read in order,
        // which reports how much of it there is.
        if let Some((at, left)) = input::position_and_left(stream)? {
            if left >= bytes as u64 {
                let read = read_frame_at(input::stream_file(stream), at, picture)?;
                input::skip(stream, bytes as u64)?;
                #[cfg(test)]
                piece_reads::FRAMES_IN_PIECES.with(|n| n.set(n.get() + 1));
                return Ok(read);
            }
        }
    }
    read_frame(stream, picture, buf)
}

/// Reads the packed frame at `at` of `file` into a packed `picture`, in
/// pieces on several threads, checking samples as they arrive.
fn read_frame_at(file: &File, at: u64, picture: &mut HostPicture) -> std::io::Result<FrameRead> {
    let limit = sample_limit(picture.format());
    let bytes = picture.format().frame_bytes();
    let mut pieces = Vec::new();
    let mut offset = at;
    for plane in picture.planes_bytes_mut() {
        for part in plane.chunks_mut(parallel::PIECE) {
            let len = part.len() as u64;
            pieces.push((part, offset));
            offset += len;
        }
    }
    let fits = parallel::for_each_piece(pieces, bytes, |(part, offset)| {
        file.read_exact_at(part, offset)?;
        Ok(limit.is_none_or(|limit| {
            let samples: &[u16] = bytemuck::cast_slice(part);
            first_above(&PlaneRef::one_row(samples), limit).is_none()
        }))
    })
    .into_iter()
    .collect::<std::io::Result<Vec<bool>>>()?;
    Ok(FrameRead {
        bytes,
        fits: fits.into_iter().all(|f| f),
    })
}

/// The largest sample of the format's bit depth where samples are stored
/// wider than it (9 to 15 bits in 16-bit words); `None` where every stored
/// value fits.
fn sample_limit(fmt: &PictureFormat) -> Option<u16> {
    (fmt.bit_depth > 8 && fmt.bit_depth < 16).then(|| (1u16 << fmt.bit_depth) - 1)
}

/// Checks every sample fits the bit depth: a stray out-of-range word
/// would silently overflow the integer extractors.
pub(crate) fn check_samples(path: &Path, frame: u64, picture: &HostPicture) -> Result<()> {
    let fmt = *picture.format();
    if let Some(limit) = sample_limit(&fmt) {
        for i in 0..fmt.plane_count() {
            let plane = PlaneId::ALL[i];
            let p = picture.plane_u16(plane);
            if let Some((y, v)) = first_above(&p, limit) {
                return Err(Error::BadInput {
                    path: path.into(),
                    frame,
                    reason: format!(
                        "plane {plane} row {y}: sample {v} does not fit {} bits (wrong --bitdepth?)",
                        fmt.bit_depth
                    ),
                });
            }
        }
    }
    Ok(())
}

pub(crate) fn check_format(path: &Path, want: &PictureFormat, picture: &HostPicture) -> Result<()> {
    if picture.format() != want {
        return Err(Error::PictureMismatch(format!(
            "{}: reading {} frames into a {} picture",
            path.display(),
            want,
            picture.format()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::picture::ChromaSubsampling;

    /// A sample one above the bit depth is named by plane, row and value,
    /// wherever it is in a row (vector body or tail); one at the limit
    /// passes.
    #[test]
    fn a_sample_above_the_bit_depth_is_named() {
        let format = PictureFormat::new(37, 6, ChromaSubsampling::Yuv420, 10).unwrap();
        let path = Path::new("clip.yuv");
        let mut picture = HostPicture::new(format);
        picture.plane_u16_mut(PlaneId::Cb).fill(1023);
        assert!(check_samples(path, 4, &picture).is_ok());
        let (w, _) = format.plane_size(PlaneId::Cb);
        for x in [0, w - 1] {
            let mut bad = HostPicture::new(format);
            bad.plane_u16_mut(PlaneId::Cb)[2 * w + x] = 1024;
            match check_samples(path, 4, &bad) {
                Err(Error::BadInput { frame, reason, .. }) => {
                    assert_eq!(frame, 4);
                    assert!(
                        reason.starts_with("plane Cb row 2: sample 1024 does not fit 10 bits"),
                        "{reason}"
                    );
                }
                other => panic!("column {x}: {other:?}"),
            }
        }
    }

    /// A packed picture is checked chunk by chunk as it is read: a clean
    /// frame comes back known to fit; a stray sample in any chunk of any
    /// plane (here past the first chunk of luma, and the last sample of
    /// Cr) comes back unverified, and the check then names it. A picture
    /// with padded rows is read through the buffer and left to the check.
    #[test]
    fn samples_are_checked_as_they_are_read() {
        let format = PictureFormat::new(640, 480, ChromaSubsampling::Yuv420, 10).unwrap();
        assert!(format.plane_size(PlaneId::Y).0 * 480 * 2 > 2 * CHECKED_CHUNK);
        let clean: Vec<u8> = (0..format.frame_bytes() / 2)
            .flat_map(|i| ((i * 7 % 1024) as u16).to_le_bytes())
            .collect();
        let read = |bytes: &[u8], picture: &mut HostPicture| {
            read_frame(&mut std::io::Cursor::new(bytes), picture, &mut Vec::new()).unwrap()
        };
        let mut picture = HostPicture::new(format);
        assert!(picture.is_packed());
        let whole = FrameRead {
            bytes: format.frame_bytes(),
            fits: true,
        };
        assert_eq!(read(&clean, &mut picture), whole);
        assert_eq!(
            picture.plane_u16(PlaneId::Y).row(3)[5],
            ((3 * 640 + 5) * 7 % 1024) as u16
        );

        let luma_row = 300;
        for (at, named) in [
            ((luma_row * 640 + 17) * 2, "plane Y row 300: sample 1024"),
            (format.frame_bytes() - 2, "plane Cr row 239: sample 1024"),
        ] {
            let mut bad = clean.clone();
            bad[at..at + 2].copy_from_slice(&1024u16.to_le_bytes());
            let got = read(&bad, &mut picture);
            assert_eq!(
                got,
                FrameRead {
                    fits: false,
                    ..whole
                }
            );
            match check_samples(Path::new("clip.yuv"), 0, &picture) {
                Err(Error::BadInput { reason, .. }) => {
                    assert!(reason.starts_with(named), "{reason}")
                }
                other => panic!("{named}: {other:?}"),
            }
        }

        let mut padded = HostPicture::with_alignment(format, 256);
        assert!(!padded.is_packed());
        assert_eq!(
            read(&clean, &mut padded),
            FrameRead {
                fits: false,
                ..whole
            }
        );
        assert!(check_samples(Path::new("clip.yuv"), 0, &padded).is_ok());
        assert_eq!(
            padded.plane_u16(PlaneId::Y).row(3)[5],
            picture.plane_u16(PlaneId::Y).row(3)[5]
        );
    }
}
