//! Raw planar `.yuv`: frames back to back, no header, geometry from the
//! caller; chroma planes ceil(W/2) wide as ffmpeg writes them.

use super::input::{Input, Stream};
use super::{
    check_format, check_samples, read_pooled, read_stream_frame, FrameMapper, FrameSource, Mapped,
};
use crate::error::{Error, Result};
use crate::picture::{HostPicture, PictureFormat, PicturePool};
use std::path::{Path, PathBuf};

pub struct YuvReader {
    path: PathBuf,
    file: Stream,
    format: PictureFormat,
    /// Packed frame bytes, for pictures whose rows are not packed.
    buf: Vec<u8>,
    next: u64,
    mapper: FrameMapper,
    /// A regular file's size.
    len: Option<u64>,
}

/// What opening a raw file does about a size that is not a whole number of
/// frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PartialTail {
    /// Refuses the file at once (the geometry is most likely wrong).
    Refuse,
    /// Reads the whole frames; the partial one is an error when read (the
    /// command line, where a shorter other input may end first).
    ErrorWhenRead,
}

/// The error of a file whose size is not a whole number of frames.
pub(crate) fn partial_tail_error(path: &Path, len: u64, format: PictureFormat) -> Error {
    let frame = format.frame_bytes() as u64;
    Error::BadInput {
        path: path.into(),
        frame: len / frame,
        reason: format!(
            "file size {len} is not a whole number of {format} frames ({frame} bytes each): \
             truncated, or wrong width/height/pixel format/bit depth"
        ),
    }
}

impl YuvReader {
    /// Opens `path` (`-`: standard input) as frames of `format`; a regular
    /// file whose size is not a whole number of frames is refused.
    pub fn open(path: &Path, format: PictureFormat) -> Result<Self> {
        let input = Input::open(path)?;
        let (path, len) = input.describe();
        Self::from_stream(
            path,
            input.into_stream(Vec::new()),
            len,
            format,
            PartialTail::Refuse,
        )
    }

    /// `len`: the size of a regular file (`None` for a pipe).
    pub(crate) fn from_stream(
        path: PathBuf,
        file: Stream,
        len: Option<u64>,
        format: PictureFormat,
        partial: PartialTail,
    ) -> Result<Self> {
        let frame = format.frame_bytes() as u64;
        // Catch the wrong-geometry mistake up front, where it is cheap to say
        // what is wrong, rather than as a short last frame (pipes have no
        // size: they are checked frame by frame).
        if let Some(len) = len.filter(|len| partial == PartialTail::Refuse && len % frame != 0) {
            return Err(partial_tail_error(&path, len, format));
        }
        Ok(Self {
            path,
            file,
            format,
            buf: Vec::new(),
            next: 0,
            mapper: FrameMapper::new(len),
            len,
        })
    }

    /// Refuses to read a regular file's partial last frame, saying why.
    fn check_not_partial(&self) -> Result<()> {
        match self.len {
            Some(len) if self.frames_in_file() == Some((self.next, true)) => {
                Err(partial_tail_error(&self.path, len, self.format))
            }
            _ => Ok(()),
        }
    }
}

impl FrameSource for YuvReader {
    fn format(&self) -> PictureFormat {
        self.format
    }

    fn read_into(&mut self, picture: &mut HostPicture) -> Result<bool> {
        check_format(&self.path, &self.format, picture)?;
        self.check_not_partial()?;
        let read = read_stream_frame(&mut self.file, picture, &mut self.buf)
            .map_err(|e| Error::io(&self.path, e))?;
        let got = read.bytes;
        if got == 0 {
            return Ok(false);
        }
        let frame = self.format.frame_bytes();
        if got < frame {
            return Err(Error::BadInput {
                path: self.path.clone(),
                frame: self.next,
                reason: format!("truncated: {got} of {frame} bytes"),
            });
        }
        if !read.fits {
            check_samples(&self.path, self.next, picture)?;
        }
        self.next += 1;
        Ok(true)
    }

    fn position(&self) -> u64 {
        self.next
    }

    fn read_next(&mut self, pool: &PicturePool, map: bool) -> Result<Option<HostPicture>> {
        if map {
            self.check_not_partial()?;
            let file = &mut self.file;
            match self.mapper.map(file, &self.path, self.next, self.format)? {
                Mapped::Frame(picture) => {
                    self.next += 1;
                    return Ok(Some(picture));
                }
                Mapped::End => return Ok(None),
                Mapped::Read => {}
            }
        }
        read_pooled(self, pool)
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn raw_file_len(&self) -> Option<u64> {
        self.len
    }
}
