//! YUV4MPEG2 (`.y4m`): a text header with the geometry, then `FRAME` lines
//! each followed by one packed planar frame.

use super::input::{Input, Stream};
use super::{check_format, check_samples, read_stream_frame, FrameMapper, FrameSource, Mapped};
use crate::error::{Error, Result};
use crate::picture::{ChromaSubsampling, HostPicture, PictureFormat, PicturePool};
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

/// Longest header or FRAME line accepted: a corrupt file must not make us
/// read a huge "line".
const MAX_LINE: u64 = 4096;

pub struct Y4mReader {
    path: PathBuf,
    file: Stream,
    format: PictureFormat,
    /// Packed frame bytes, for pictures whose rows are not packed.
    buf: Vec<u8>,
    line: Vec<u8>,
    next: u64,
    /// The header's `XCOLORRANGE=` value (`FULL`, `LIMITED`), if any.
    color_range: Option<String>,
    mapper: FrameMapper,
}

impl Y4mReader {
    /// Opens `path` (`-`: standard input) and reads its header.
    pub fn open(path: &Path) -> Result<Self> {
        let input = Input::open(path)?;
        let (path, len) = input.describe();
        Self::from_stream(path, input.into_stream(Vec::new()), len)
    }

    /// Reads the header from `file`; `len`: the size of a regular file.
    pub(crate) fn from_stream(path: PathBuf, mut file: Stream, len: Option<u64>) -> Result<Self> {
        let mut line = Vec::new();
        read_line(&mut file, &mut line, "header").map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidData => bad_header(&path, &e.to_string()),
            _ => Error::io(&path, e),
        })?;
        let header = std::str::from_utf8(&line).map_err(|_| bad_header(&path, "not text"))?;
        let format = parse_header(header).map_err(|reason| bad_header(&path, &reason))?;
        let color_range = color_range(header);
        // The frame buffer is allocated from the header: a regular file that
        // cannot hold one frame has a corrupt header, not a huge frame.
        let frame = format.frame_bytes() as u64;
        if let Some(len) = len.filter(|&len| len < frame) {
            return Err(bad_header(
                &path,
                &format!(
                    "the header gives {format} frames of {frame} bytes, but the file is only {len} bytes"
                ),
            ));
        }
        Ok(Self {
            path,
            file,
            buf: Vec::new(),
            format,
            line,
            next: 0,
            color_range,
            mapper: FrameMapper::new(len),
        })
    }

    fn bad(&self, frame: u64, reason: String) -> Error {
        Error::BadInput {
            path: self.path.clone(),
            frame,
            reason,
        }
    }

    /// Reads the next `FRAME` line; false at a clean end of file.
    fn frame_line(&mut self) -> Result<bool> {
        let frame = self.next;
        let has_line = read_line(&mut self.file, &mut self.line, "FRAME line")
            .map_err(|e| self.bad(frame, e.to_string()))?;
        if has_line && !self.line.starts_with(b"FRAME") {
            let shown = String::from_utf8_lossy(&self.line[..self.line.len().min(16)]).into_owned();
            return Err(self.bad(frame, format!("expected a FRAME line, found '{shown}'")));
        }
        Ok(has_line)
    }

    /// Reads the samples after a `FRAME` line into `picture`.
    fn read_samples(&mut self, picture: &mut HostPicture) -> Result<()> {
        let frame = self.next;
        let read = read_stream_frame(&mut self.file, picture, &mut self.buf)
            .map_err(|e| Error::io(&self.path, e))?;
        let got = read.bytes;
        let bytes = self.format.frame_bytes();
        if got < bytes {
            return Err(self.bad(frame, format!("truncated: {got} of {bytes} bytes")));
        }
        if !read.fits {
            check_samples(&self.path, frame, picture)?;
        }
        self.next += 1;
        Ok(())
    }
}

fn bad_header(path: &Path, reason: &str) -> Error {
    Error::BadHeader {
        path: path.into(),
        reason: reason.to_string(),
    }
}

/// Reads one `\n`-terminated line (without the `\n`), at most MAX_LINE bytes;
/// `what` names it in errors.
fn read_line(r: &mut impl BufRead, line: &mut Vec<u8>, what: &str) -> std::io::Result<bool> {
    line.clear();
    let n = r.by_ref().take(MAX_LINE).read_until(b'\n', line)?;
    if n == 0 {
        return Ok(false);
    }
    if line.last() != Some(&b'\n') {
        let reason = if n as u64 == MAX_LINE {
            format!("{what} longer than {MAX_LINE} bytes, the most accepted (corrupt, or not YUV4MPEG2)")
        } else {
            format!("{what} without a newline (truncated, or not YUV4MPEG2)")
        };
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, reason));
    }
    line.pop();
    Ok(true)
}

/// Parses `YUV4MPEG2 W.. H.. [F..] [I..] [A..] [C..] [X..]`.
fn parse_header(header: &str) -> std::result::Result<PictureFormat, String> {
    let mut tokens = header.split(' ');
    if tokens.next() != Some("YUV4MPEG2") {
        return Err("missing YUV4MPEG2 signature".into());
    }
    let (mut w, mut h, mut colorspace) = (None, None, "420jpeg");
    for t in tokens.filter(|t| !t.is_empty()) {
        // The tag is the first character (which may be any UTF-8 one).
        let (tag, value) = t.split_at(t.chars().next().map_or(0, char::len_utf8));
        match tag {
            "W" => {
                w = Some(
                    value
                        .parse::<u32>()
                        .map_err(|_| format!("bad width '{value}'"))?,
                )
            }
            "H" => {
                h = Some(
                    value
                        .parse::<u32>()
                        .map_err(|_| format!("bad height '{value}'"))?,
                )
            }
            "C" => colorspace = value,
            "I" if !matches!(value, "p" | "?") => {
                return Err(format!("interlaced input (I{value}) is not supported"))
            }
            _ => {} // frame rate, aspect, extensions: not needed to score
        }
    }
    let w = w.ok_or("no W (width) tag")?;
    let h = h.ok_or("no H (height) tag")?;
    let (subsampling, bit_depth) = parse_colorspace(colorspace)?;
    PictureFormat::new(w, h, subsampling, bit_depth).map_err(|e| e.to_string())
}

/// The `XCOLORRANGE=` extension's value (ffmpeg writes `FULL` or `LIMITED`).
fn color_range(header: &str) -> Option<String> {
    header
        .split(' ')
        .find_map(|t| t.strip_prefix("XCOLORRANGE="))
        .map(str::to_string)
}

fn parse_colorspace(c: &str) -> std::result::Result<(ChromaSubsampling, u8), String> {
    use ChromaSubsampling::*;
    let (layout, depth) = match c.split_once('p') {
        // "420p10", "444p16", but not "420paldv" (a 4:2:0 siting tag).
        Some((l, d)) if !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) => (
            l,
            d.parse::<u8>()
                .map_err(|_| format!("bad bit depth in C{c}"))?,
        ),
        _ => (c, 8),
    };
    let sub = match layout {
        "420" | "420jpeg" | "420mpeg2" | "420paldv" => Yuv420,
        "422" => Yuv422,
        "444" => Yuv444,
        "mono" => Yuv400,
        "mono16" => return Ok((Yuv400, 16)),
        _ => return Err(format!("unsupported colorspace C{c}")),
    };
    Ok((sub, depth))
}

impl FrameSource for Y4mReader {
    fn format(&self) -> PictureFormat {
        self.format
    }

    fn read_into(&mut self, picture: &mut HostPicture) -> Result<bool> {
        check_format(&self.path, &self.format, picture)?;
        if !self.frame_line()? {
            return Ok(false);
        }
        self.read_samples(picture)?;
        Ok(true)
    }

    fn read_next(&mut self, pool: &PicturePool, map: bool) -> Result<Option<HostPicture>> {
        if !self.frame_line()? {
            return Ok(None);
        }
        if map {
            let (frame, bytes) = (self.next, self.format.frame_bytes());
            let file = &mut self.file;
            match self.mapper.map(file, &self.path, frame, self.format)? {
                Mapped::Frame(picture) => {
                    self.next += 1;
                    return Ok(Some(picture));
                }
                Mapped::End => {
                    return Err(self.bad(frame, format!("truncated: 0 of {bytes} bytes")))
                }
                Mapped::Read => {}
            }
        }
        let mut picture = pool.picture()?;
        self.read_samples(&mut picture)?;
        Ok(Some(picture))
    }

    fn position(&self) -> u64 {
        self.next
    }

    fn color_range(&self) -> Option<&str> {
        self.color_range.as_deref()
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        let f = parse_header("YUV4MPEG2 W576 H324 F30:1 Ip A1:1 C420jpeg XYSCSS=420JPEG").unwrap();
        assert_eq!(
            (f.width, f.height, f.subsampling, f.bit_depth),
            (576, 324, ChromaSubsampling::Yuv420, 8)
        );
        let f = parse_header("YUV4MPEG2 W352 H288 C422p10").unwrap();
        assert_eq!(
            (f.subsampling, f.bit_depth),
            (ChromaSubsampling::Yuv422, 10)
        );
        let f = parse_header("YUV4MPEG2 W8 H8").unwrap();
        assert_eq!(f.subsampling, ChromaSubsampling::Yuv420);
        assert!(parse_header("YUV4MPEG2 W8").unwrap_err().contains("H"));
        assert!(parse_header("YUV4MPEG2 W8 H8 C411")
            .unwrap_err()
            .contains("C411"));
        assert!(parse_header("YUV4MPEG2 W8 H8 It")
            .unwrap_err()
            .contains("interlaced"));
        assert!(parse_header("RIFF").is_err());
    }

    /// Found by the y4m fuzz target: a tag that is a multi-byte character
    /// (header bytes d6 b2 ...) split the token inside it and panicked.
    #[test]
    fn a_tag_of_any_character_is_a_tag() {
        let f = parse_header("YUV4MPEG2 W9 H51 F25:1 \u{5b2}PMPEG2 C444").unwrap();
        assert_eq!((f.width, f.height), (9, 51));
        assert!(parse_header("YUV4MPEG2 \u{5b2} W8 H8").is_ok());
        assert!(parse_header("YUV4MPEG2 W\u{e9}8 H8")
            .unwrap_err()
            .contains("bad width"));
    }
}
