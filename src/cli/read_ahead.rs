//! Reading ahead: each input is read on a thread of its own, straight into
//! pictures from the context's pool (pinned memory on a GPU) or, when the
//! CPU scores a regular file, as its frames mapped in place (ADR 0038),
//! while the context scores the frames before. Reading is most of the
//! command line's work when the device scores fast; two readers read both
//! inputs at once.

use crate::error::Result;
use crate::io::FrameSource;
use crate::picture::{HostPicture, PicturePool};
use crossbeam_channel::{bounded, Receiver};
use std::path::PathBuf;
use std::thread::JoinHandle;

/// Frames read ahead of the one being scored, per input, when a GPU
/// scores: reading is then the slow part, and a deeper queue rides out its
/// stalls.
pub const GPU_DEPTH: usize = 3;
/// The same when the CPU scores: reading is far faster than scoring, so
/// one frame ahead keeps the workers fed. Every frame in flight is a
/// picture whose memory the first run through must fault in (at 10 bits,
/// 6 MB a picture: 5-10 % of a 30-frame 1080p run), so no more than that.
pub const CPU_DEPTH: usize = 1;

/// What a reader sends: a frame, the end of the input, or why it stopped.
type Read = Result<Option<HostPicture>>;

/// One input read on its own thread.
pub struct ReadAhead {
    frames: Receiver<Read>,
    reader: JoinHandle<Box<dyn FrameSource>>,
    path: PathBuf,
    /// A regular file (it ends: reading it to its end to count is safe).
    is_file: bool,
}

impl ReadAhead {
    /// Reads `source` into pictures from `pool`, or with `map` as frames
    /// mapped in place where it can ([`FrameSource::read_next`]), up to
    /// `depth` frames ahead.
    pub fn start(
        mut source: Box<dyn FrameSource>,
        pool: PicturePool,
        depth: usize,
        map: bool,
    ) -> Self {
        let path = source.path().to_path_buf();
        let is_file = std::fs::metadata(&path).is_ok_and(|m| m.is_file());
        let (tx, frames) = bounded(depth);
        let reader = std::thread::Builder::new()
            .name("vmafx-read".into())
            .spawn(move || {
                loop {
                    let read = source.read_next(&pool, map);
                    let stop = !matches!(read, Ok(Some(_)));
                    // The receiver gone: the run stopped reading this input.
                    if tx.send(read).is_err() || stop {
                        break;
                    }
                }
                source
            })
            .expect("starting a reader thread");
        Self {
            frames,
            reader,
            path,
            is_file,
        }
    }

    /// The next frame; `None` at the end of the input.
    pub fn next(&mut self) -> Result<Option<HostPicture>> {
        // A reader always sends before it stops, so the channel does not
        // disconnect while it is being read.
        self.frames.recv().unwrap_or(Ok(None))
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Stops reading ahead and hands back the source of a regular file
    /// (its position counts every frame read, taken or not); `None` for a
    /// pipe or FIFO, whose reader may be waiting for data that never comes.
    pub fn stop(self) -> Option<Box<dyn FrameSource>> {
        drop(self.frames);
        if !self.is_file {
            return None;
        }
        self.reader.join().ok()
    }
}
