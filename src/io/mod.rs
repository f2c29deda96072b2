//! Video file input, streamed one frame at a time: raw planar `.yuv`
//! (geometry from the caller) and `.y4m` (geometry from its header).

mod y4m;
mod yuv;

pub use y4m::Y4mReader;
pub use yuv::YuvReader;

use crate::error::{Error, Result};
use crate::picture::{HostPicture, PictureFormat, PlaneId};
use std::io::Read;
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

    /// The file name, for messages.
    fn path(&self) -> &Path;
}

/// Opens `path` as `.y4m` (by extension or by its `YUV4MPEG2` signature) or
/// as raw `.yuv` with the geometry in `raw_format`. For `.y4m`, a given
/// `raw_format` must agree with the header.
pub fn open(path: &Path, raw_format: Option<PictureFormat>) -> Result<Box<dyn FrameSource>> {
    let is_y4m = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("y4m"))
        || has_y4m_signature(path)?;
    if is_y4m {
        let r = Y4mReader::open(path)?;
        if let Some(f) = raw_format {
            if f != r.format() {
                return Err(Error::BadHeader {
                    path: path.into(),
                    reason: format!(
                        "header says {}, but the command line says {}",
                        r.format(),
                        f
                    ),
                });
            }
        }
        Ok(Box::new(r))
    } else {
        let f = raw_format.ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{}: raw .yuv input needs --width, --height, --pixel_format and --bitdepth",
                path.display()
            ))
        })?;
        Ok(Box::new(YuvReader::open(path, f)?))
    }
}

fn has_y4m_signature(path: &Path) -> Result<bool> {
    let mut f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut sig = [0u8; 10];
    let mut got = 0;
    while got < sig.len() {
        match f.read(&mut sig[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    Ok(&sig[..got] == b"YUV4MPEG2 ")
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

/// Fills `picture` from a packed frame and checks every sample fits the bit
/// depth: a stray out-of-range word would silently overflow the integer
/// extractors.
pub(crate) fn unpack_checked(
    path: &Path,
    frame: u64,
    bytes: &[u8],
    picture: &mut HostPicture,
) -> Result<()> {
    picture.fill_from_packed(bytes);
    let fmt = *picture.format();
    if fmt.bit_depth > 8 && fmt.bit_depth < 16 {
        let limit = (1u32 << fmt.bit_depth) - 1;
        for i in 0..fmt.plane_count() {
            let plane = PlaneId::ALL[i];
            let p = picture.plane_u16(plane);
            for y in 0..p.height {
                if let Some(&v) = p.row(y).iter().find(|&&v| v as u32 > limit) {
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
