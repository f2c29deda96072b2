//! Opening an input exactly once, whatever it is: a regular file, a FIFO, a
//! pipe (`/dev/stdin`, process substitution) or standard input (`-`).
//!
//! A pipe cannot be reopened or rewound, so the first bytes read to tell
//! y4m from raw are kept and handed on in front of the rest of the stream.

use super::PartialTail;
use super::{read_full, FrameSource, Y4mReader, YuvReader};
use crate::error::{Error, Result};
use crate::picture::PictureFormat;
use std::fs::File;
use std::io::{BufRead, BufReader, Chain, Cursor, Read, Seek, SeekFrom};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

/// The y4m signature, with the space that ends it.
const Y4M_SIGNATURE: &[u8] = b"YUV4MPEG2 ";

/// What the readers read from: the bytes already looked at, then the file.
pub(crate) type Stream = BufReader<Chain<Cursor<Vec<u8>>, File>>;

/// An opened input, not yet read from.
///
/// Opening a FIFO waits until a writer opens it. When two FIFOs are fed by
/// one writer, open both (reference first, as the `vmaf` tool does) before
/// reading either: reading the first one's signature before the second is
/// open would wait for a writer that is itself waiting for that open.
pub struct Input {
    path: PathBuf,
    file: File,
    /// The size of a regular file; `None` for pipes, FIFOs and terminals.
    len: Option<u64>,
}

impl Input {
    /// Opens `path`; `-` is standard input.
    pub fn open(path: &Path) -> Result<Self> {
        let (path, file) = if path.as_os_str() == "-" {
            let name = PathBuf::from("<stdin>");
            // A duplicate of descriptor 0, so every input is a `File`.
            let fd = std::io::stdin()
                .as_fd()
                .try_clone_to_owned()
                .map_err(|e| Error::io(&name, e))?;
            (name, File::from(fd))
        } else {
            let file = File::open(path).map_err(|e| Error::io(path, e))?;
            (path.to_path_buf(), file)
        };
        let meta = file.metadata().map_err(|e| Error::io(&path, e))?;
        Ok(Self {
            len: meta.is_file().then_some(meta.len()),
            path,
            file,
        })
    }

    /// The name used in messages (`<stdin>` for `-`).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the input as `.y4m` (by extension or by its `YUV4MPEG2`
    /// signature) or as raw `.yuv` with the geometry in `raw_format`. For
    /// `.y4m`, a given `raw_format` must agree with the header.
    ///
    /// A pipe or FIFO named `*.yuv` with a `raw_format` is raw without
    /// looking at it: looking would wait for data, and a writer feeding two
    /// FIFOs may be blocked on the other one.
    pub fn into_source(self, raw_format: Option<PictureFormat>) -> Result<Box<dyn FrameSource>> {
        self.into_source_with(raw_format, PartialTail::Refuse)
    }

    /// [`Input::into_source`], with what a raw file of a partial last frame
    /// does.
    pub(crate) fn into_source_with(
        mut self,
        raw_format: Option<PictureFormat>,
        partial: PartialTail,
    ) -> Result<Box<dyn FrameSource>> {
        let has_extension = |ext: &str| {
            self.path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case(ext))
        };
        let raw_by_name = raw_format.is_some() && self.len.is_none() && has_extension("yuv");
        let mut head = Vec::new();
        if !raw_by_name {
            head.resize(Y4M_SIGNATURE.len(), 0);
            let got = read_full(&mut self.file, &mut head).map_err(|e| Error::io(&self.path, e))?;
            head.truncate(got);
        }
        let is_y4m = head == Y4M_SIGNATURE || has_extension("y4m");
        let (path, len) = (self.path.clone(), self.len);
        let stream = self.into_stream(head);
        if is_y4m {
            let r = Y4mReader::from_stream(path, stream, len)?;
            if let Some(f) = raw_format {
                if f != r.format() {
                    return Err(Error::BadHeader {
                        path: r.path().into(),
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
            Ok(Box::new(YuvReader::from_stream(
                path, stream, len, f, partial,
            )?))
        }
    }

    /// The buffered stream of the whole input: `head` (bytes already read
    /// from the file), then the rest of the file.
    ///
    /// The buffer serves headers and small pictures: a read at least its
    /// size, made while it is empty, goes straight into the picture (one
    /// copy from the page cache, not two), so it is kept smaller than any
    /// plane worth that (64 KiB, a pipe's default capacity).
    pub(crate) fn into_stream(self, head: Vec<u8>) -> Stream {
        BufReader::with_capacity(64 << 10, Cursor::new(head).chain(self.file))
    }

    /// `(name, size of a regular file)`.
    pub(crate) fn describe(&self) -> (PathBuf, Option<u64>) {
        (self.path.clone(), self.len)
    }
}

/// The file under a stream.
pub(crate) fn stream_file(stream: &Stream) -> &File {
    stream.get_ref().get_ref().1
}

/// The offset in the file of the stream's next byte: the file's own
/// position less what the stream holds unread (its buffer, and what is
/// left of the bytes kept from the signature check).
pub(crate) fn stream_position(stream: &Stream) -> std::io::Result<u64> {
    let (kept, mut file) = stream.get_ref().get_ref();
    let kept_unread = (kept.get_ref().len() as u64).saturating_sub(kept.position());
    let held = stream.buffer().len() as u64 + kept_unread;
    let at = file.stream_position()?;
    at.checked_sub(held)
        .ok_or_else(|| std::io::Error::other("stream position before its buffer"))
}

/// For a regular file, the stream's position in it and the bytes the file
/// holds from there, by its size now, not when it was opened (a file cut
/// short since must not be mapped or read past its end); `None` for a
/// pipe, FIFO or terminal.
pub(crate) fn position_and_left(stream: &Stream) -> std::io::Result<Option<(u64, u64)>> {
    let meta = stream_file(stream).metadata()?;
    if !meta.is_file() {
        return Ok(None);
    }
    let at = stream_position(stream)?;
    Ok(Some((at, meta.len().saturating_sub(at))))
}

/// Moves a stream of a regular file `n` bytes on without reading them:
/// through its buffer, then what is left of the kept bytes, then a seek.
pub(crate) fn skip(stream: &mut Stream, n: u64) -> std::io::Result<()> {
    let buffered = (stream.buffer().len() as u64).min(n);
    stream.consume(buffered as usize);
    let mut n = n - buffered;
    let (kept, file) = stream.get_mut().get_mut();
    let kept_unread = (kept.get_ref().len() as u64).saturating_sub(kept.position());
    let from_kept = kept_unread.min(n);
    kept.set_position(kept.position() + from_kept);
    n -= from_kept;
    if n > 0 {
        let n =
            i64::try_from(n).map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        file.seek(SeekFrom::Current(n))?;
    }
    Ok(())
}
