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
}

impl YuvReader {
    /// Opens `path` (`-`: standard input) as frames of `format`.
    pub fn open(path: &Path, format: PictureFormat) -> Result<Self> {
        let input = Input::open(path)?;
        let (path, len) = input.describe();
        Self::from_stream(path, input.into_stream(Vec::new()), len, format)
    }

    /// `len`: the size of a regular file (`None` for a pipe).
    pub(crate) fn from_stream(
        path: PathBuf,
        file: Stream,
        len: Option<u64>,
        format: PictureFormat,
    ) -> Result<Self> {
        let frame = format.frame_bytes() as u64;
        // Catch the wrong-geometry mistake up front, where it is cheap to say
        // what is wrong, rather than as a short last frame (pipes have no
        // size: they are checked frame by frame).
        if let Some(len) = len.filter(|len| len % frame != 0) {
            return Err(Error::BadInput {
                path,
                frame: len / frame,
                reason: format!(
                    "file size {len} is not a whole number of {format} frames ({frame} bytes each): \
                     truncated, or wrong width/height/pixel format/bit depth"
                ),
            });
        }
        Ok(Self {
            path,
            file,
            format,
            buf: Vec::new(),
            next: 0,
            mapper: FrameMapper::new(len),
        })
    }
}

impl FrameSource for YuvReader {
    fn format(&self) -> PictureFormat {
        self.format
    }

    fn read_into(&mut self, picture: &mut HostPicture) -> Result<bool> {
        check_format(&self.path, &self.format, picture)?;
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
}
