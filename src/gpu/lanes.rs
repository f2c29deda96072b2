//! The streams a GPU context queues a frame's work on: an entry stream for
//! the frame's uploads, fence waits and layout passes, one lane (stream)
//! per GPU extractor instance (an extractor whose frames are independent
//! may have two, taking frames in turn), and an exit stream that joins the
//! lanes.
//!
//! Per frame: the entry stream makes the shared planes ready and records
//! `ready`; each lane that reads the frame waits for `ready`, queues its
//! extractor's kernels and records its `joined` event; the exit stream waits
//! for every lane's `joined`. Work recorded on the exit stream afterwards
//! (a frame's "done", a plane set's "free") follows every reader. So one
//! extractor's kernels run beside another's, frame N+1's upload runs beside
//! frame N's kernels, and each extractor still sees its frames in order on
//! its own lane (the state it carries from frame to frame stays ordered).
//!
//! Events are reused from frame to frame: a stream wait captures the
//! event's latest record at the time of the call, as CUDA and HIP define.

use super::device::{Event, Gpu, Stream};
use crate::error::Result;

pub struct Lanes {
    entry: Stream,
    exit: Stream,
    lanes: Vec<Stream>,
    ready: Event,
    joined: Vec<Event>,
}

impl Lanes {
    /// Streams for `count` extractors.
    pub fn new(gpu: &Gpu, count: usize) -> Result<Self> {
        Ok(Self {
            entry: gpu.stream()?,
            exit: gpu.stream()?,
            lanes: (0..count).map(|_| gpu.stream()).collect::<Result<_>>()?,
            ready: gpu.event()?,
            joined: (0..count).map(|_| gpu.event()).collect::<Result<_>>()?,
        })
    }

    /// Where a frame's uploads, fence waits and binding go.
    pub fn entry(&self) -> &Stream {
        &self.entry
    }

    /// Where work that must follow every reader of the frame goes.
    pub fn exit(&self) -> &Stream {
        &self.exit
    }

    /// The frame's planes are ready once the entry stream's work queued so
    /// far is done.
    pub fn fork(&self) -> Result<()> {
        self.ready.record(&self.entry)
    }

    /// Lane `i`, ordered after the last [`Lanes::fork`].
    pub fn enter(&self, i: usize) -> Result<&Stream> {
        self.lanes[i].wait(&self.ready)?;
        Ok(&self.lanes[i])
    }

    /// Orders the exit stream after lane `i`'s work queued so far.
    pub fn leave(&self, i: usize) -> Result<()> {
        self.joined[i].record(&self.lanes[i])?;
        self.exit.wait(&self.joined[i])
    }

    /// Waits, on the host, for everything queued on every stream.
    pub fn synchronize(&self) -> Result<()> {
        let mut result = self.entry.synchronize();
        for lane in &self.lanes {
            result = result.and(lane.synchronize());
        }
        result.and(self.exit.synchronize())
    }
}
