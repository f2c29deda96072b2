//! Imported frames into a context (ADR 0010). A pair is queued with one
//! side per frame; each side becomes ready once its acquire fence has
//! signalled: at once when it has none (or it signalled already), on the
//! submitting thread for GL syncs, on the context's fence waiter thread
//! otherwise. A ready side of a CPU context has been read into a picture
//! and its frame reference dropped (so the producer's release fires right
//! after the copy); a GPU context gets the frame itself. Pairs are scored in
//! submission order as their turn comes, whenever the producer calls in;
//! `finish` waits for the rest.

use super::*;
use crate::import::gl_sync;
use crate::import::host_read::{check_host_readable, read_frame};
use crate::import::wait::HostWait;
use crate::import::waiter::{Job, Waiter};
use crate::import::{Acquire, Frame};
use std::collections::VecDeque;
use std::time::Instant;

pub(super) const SIDES: [&str; 2] = ["reference", "distorted"];

/// How errors name a frame's acquire fence, host- or device-waited.
pub(super) fn acquire_name(kind: &str, index: u32, side: &str) -> String {
    format!("{kind} (acquire of frame {index}, {side})")
}

/// How far one side of a queued pair has come.
pub(super) enum Side {
    /// Its acquire fence is on the waiter (the result carries the ticket).
    Waiting(u64),
    /// Read on the host.
    Picture(HostPicture),
    /// Acquired, for a GPU context to bind.
    Frame(Frame),
    /// Its fence timed out or failed, or reading it failed.
    Failed(Error),
}

struct Entry {
    index: u32,
    sides: [Side; 2],
}

/// The pairs of a context that wait for fences or for their turn.
pub(super) struct FrameQueue {
    entries: VecDeque<Entry>,
    /// Started with the first fence not signalled at submit.
    waiter: Option<Waiter<Side>>,
    next_ticket: u64,
    timeout: Duration,
}

impl FrameQueue {
    pub(super) fn new(timeout: Duration) -> Self {
        Self {
            entries: VecDeque::new(),
            waiter: None,
            next_ticket: 0,
            timeout,
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Queues a pair of host pictures behind the waiting frames.
    pub(super) fn push_pictures(
        &mut self,
        index: u32,
        reference: HostPicture,
        distorted: HostPicture,
    ) {
        self.entries.push_back(Entry {
            index,
            sides: [Side::Picture(reference), Side::Picture(distorted)],
        });
    }

    /// Takes in one side of pair `index`: waits a GL sync here, hands a host
    /// fence that has not signalled to the waiter, else delivers it now.
    fn admit(
        &mut self,
        index: u32,
        side: &str,
        frame: &Frame,
        read: Option<PlaneMask>,
    ) -> Result<Side> {
        let name = |kind: &str| acquire_name(kind, index, side);
        let pending = {
            let mut acquire = frame.acquire();
            if let Acquire::GlSync(sync) = *acquire {
                gl_sync::wait(sync.as_raw(), self.timeout, &name(acquire.kind()))?;
                *acquire = Acquire::None;
            }
            match HostWait::of(&acquire)? {
                Some(fence) if !fence.is_signalled(&name(fence.kind()))? => Some(fence),
                Some(_) => {
                    // Signalled: later readers need not wait (and a sync_file
                    // closes now).
                    *acquire = Acquire::None;
                    None
                }
                None => None,
            }
        };
        let deliver = delivery(frame.clone(), read);
        let Some(fence) = pending else {
            return deliver();
        };
        let waiter = match &mut self.waiter {
            Some(w) => w,
            w => w.insert(Waiter::start()?),
        };
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        waiter.add(Job {
            ticket,
            name: name(fence.kind()),
            fence,
            timeout: self.timeout,
            deadline: Instant::now() + self.timeout,
            then: Box::new(deliver),
        })?;
        Ok(Side::Waiting(ticket))
    }

    /// Puts the waiter's results ready now in their sides.
    fn absorb_ready(&mut self) {
        while let Some(result) = self.waiter.as_ref().and_then(|w| w.try_next()) {
            self.absorb(result);
        }
    }

    /// Waits for the waiter's next result (every job has a deadline).
    fn absorb_next(&mut self) -> Result<()> {
        let Some(waiter) = &self.waiter else {
            return Err(Error::InvalidArgument(
                "frames wait on fences but no fence waiter runs".into(),
            ));
        };
        let result = waiter.next(self.timeout + Duration::from_secs(5))?;
        self.absorb(result);
        Ok(())
    }

    fn absorb(&mut self, (ticket, result): (u64, Result<Side>)) {
        let side = self
            .entries
            .iter_mut()
            .flat_map(|e| e.sides.iter_mut())
            .find(|s| matches!(s, Side::Waiting(t) if *t == ticket));
        // A side of a pair that was never queued (its other side was
        // refused) has no place: dropping it releases its frame.
        if let Some(side) = side {
            *side = result.unwrap_or_else(Side::Failed);
        }
    }

    /// The front pair, once neither side waits.
    fn pop_ready(&mut self) -> Option<Entry> {
        let front = self.entries.front()?;
        if front.sides.iter().any(|s| matches!(s, Side::Waiting(_))) {
            return None;
        }
        self.entries.pop_front()
    }
}

/// What a side becomes once its fence has signalled: for a CPU context
/// (`read` = the planes to read) a picture, the frame reference dropped
/// right after the copy; for a GPU context the frame itself.
fn delivery(frame: Frame, read: Option<PlaneMask>) -> impl FnOnce() -> Result<Side> + Send {
    move || {
        {
            let mut acquire = frame.acquire();
            if !acquire.needs_device() {
                *acquire = Acquire::None;
            }
        }
        match read {
            Some(planes) => Ok(Side::Picture(read_frame(&frame, planes)?)),
            None => Ok(Side::Frame(frame)),
        }
    }
}

impl Context {
    /// Scores the next pair of imported frames. Returns without waiting on
    /// their acquire fences (except a GL sync, waited here where its GL
    /// context is current): pairs are scored in submission order once both
    /// fences have signalled, in this or a later call; [`Context::finish`]
    /// waits for the rest. The context keeps a reference to each frame
    /// until it has read it (a CPU context copies it as soon as its fence
    /// signals), so the producer's release signals fire after the last
    /// context's read. A refused pair is not kept.
    pub fn submit_frames(&mut self, reference: &Frame, distorted: &Frame) -> Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let index = self.next_index;
        let on_gpu = matches!(self.engine, Engine::Gpu(_));
        for (side, frame) in SIDES.into_iter().zip([reference, distorted]) {
            let format = frame.desc().picture_format()?;
            if format != self.format {
                return Err(Error::PictureMismatch(format!(
                    "frame {index}: the {side} frame is {format} ({}), the context scores {}",
                    frame.desc().format,
                    self.format
                )));
            }
            if !on_gpu {
                check_host_readable(frame)?;
            }
        }
        let read = (!on_gpu).then(|| self.planes_needed());
        let reference = self.frames.admit(index, SIDES[0], reference, read)?;
        let distorted = self.frames.admit(index, SIDES[1], distorted, read)?;
        self.next_index += 1;
        self.frames.entries.push_back(Entry {
            index,
            sides: [reference, distorted],
        });
        self.process_ready(false)
    }

    /// Hands the engine the queued pairs whose host-waited acquire fences
    /// have signalled since the last call, without submitting anything.
    ///
    /// A frame whose acquire is waited on the host (host fence, sync_file,
    /// Vulkan timeline waited on the host) reaches a GPU engine at the
    /// context's next call after it signals. A producer that waits for one
    /// of its frames back before it submits again (a small pool) calls this
    /// while it waits: a frame it holds may be behind such a fence.
    /// (Device-waited fences need nothing: such frames are handed over at
    /// submit and let go of once read.)
    pub fn poll(&mut self) -> Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.process_ready(false)
    }

    /// Scores the queued pairs whose turn has come; with `wait`, all of them.
    pub(super) fn process_ready(&mut self, wait: bool) -> Result<()> {
        loop {
            self.frames.absorb_ready();
            while let Some(entry) = self.frames.pop_ready() {
                self.dispatch(entry)?;
            }
            if !wait || self.frames.is_empty() {
                return Ok(());
            }
            self.frames.absorb_next()?;
        }
    }

    fn dispatch(&mut self, entry: Entry) -> Result<()> {
        let index = entry.index;
        match entry.sides {
            [Side::Failed(e), _] | [_, Side::Failed(e)] => Err(e),
            [Side::Picture(r), Side::Picture(d)] => self.process(index, Pictures::Owned(r, d)),
            [Side::Frame(r), Side::Frame(d)] => {
                let Engine::Gpu(g) = &mut self.engine else {
                    unreachable!("frames are handed on unread to GPU engines only")
                };
                let scored = index.is_multiple_of(self.subsample);
                self.collector.submitted(index);
                g.submit_frames(
                    index,
                    r,
                    d,
                    scored,
                    &self.slots,
                    &mut self.collector,
                    &mut self.error,
                )?;
                // Frames complete as results come in: as for pictures.
                self.publish()
            }
            _ => unreachable!("a pair's sides are both pictures or both frames"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::mock::MockDriver;
    use crate::import::{
        FrameDesc, HostFence, HostMemory, Memory, PixelFormat, PlaneLayout, Release,
    };
    use crate::picture::{ChromaSubsampling, PlaneId};
    use std::ptr::NonNull;

    fn format() -> PictureFormat {
        PictureFormat::new(64, 36, ChromaSubsampling::Yuv420, 8).unwrap()
    }

    fn picture(seed: u8) -> HostPicture {
        let mut p = HostPicture::new(format());
        for plane in PlaneId::ALL {
            for (i, s) in p.plane_u8_mut(plane).iter_mut().enumerate() {
                *s = (i as u8).wrapping_mul(seed) ^ seed;
            }
        }
        p
    }

    /// `p` as a planar frame in host memory (`bytes` keeps it alive).
    fn frame(p: &HostPicture, acquire: Acquire, bytes: &mut Vec<Box<[u8]>>) -> (Frame, HostFence) {
        let mut packed = Vec::new();
        let mut planes = Vec::new();
        for id in PlaneId::ALL {
            let q = p.plane_u8(id);
            planes.push(PlaneLayout::new(packed.len() as u64, q.width as u64));
            (0..q.height).for_each(|y| packed.extend_from_slice(q.row(y)));
        }
        let packed = packed.into_boxed_slice();
        // SAFETY: `bytes` keeps the box alive, unwritten, past the release.
        let memory =
            Memory::Host(unsafe { HostMemory::new(NonNull::from(&*packed).cast(), packed.len()) });
        bytes.push(packed);
        let planar = PixelFormat::Planar {
            subsampling: ChromaSubsampling::Yuv420,
            bit_depth: 8,
        };
        let released = HostFence::new();
        let desc = FrameDesc::new(64, 36, planar, memory, &planes);
        let f = Frame::new(desc, acquire, vec![Release::Host(released.clone())]).unwrap();
        (f, released)
    }

    /// A frame behind a host-waited fence reaches a GPU engine at the
    /// context's next call after the fence signals: `poll` is such a call,
    /// and the frame is let go of once the device has read it.
    #[test]
    fn poll_hands_a_gpu_engine_the_frames_whose_fences_signalled() {
        let (_, gpu) = MockDriver::gpu();
        let mut ctx = ContextBuilder::new(format())
            .feature("motion", vec![])
            .gpu(gpu)
            .build()
            .unwrap();
        let mut bytes = Vec::new();
        let written = HostFence::new();
        let (rf, released) = frame(&picture(1), Acquire::Host(written.clone()), &mut bytes);
        let (df, _) = frame(&picture(2), Acquire::None, &mut bytes);
        ctx.submit_frames(&rf, &df).unwrap();
        drop((rf, df));
        written.signal();
        let wait = std::time::Duration::from_millis(50);
        assert!(!released.wait(wait), "handed on without a call");
        ctx.poll().unwrap();
        assert!(released.wait(std::time::Duration::from_secs(5)));
        assert_eq!(ctx.finish().unwrap().frames.len(), 1);
    }

    #[test]
    fn gpu_contexts_take_frames_through_their_hook_in_order() {
        // float_ansnr has no GPU version: it scores on the host side of the
        // GPU engine (real values on the mock), from what the hook read.
        let score = |imported: bool| {
            let (_, gpu) = MockDriver::gpu();
            let mut ctx = ContextBuilder::new(format())
                .feature("float_ansnr", vec![])
                .feature("motion", vec![])
                .gpu(gpu)
                .build()
                .unwrap();
            let mut bytes = Vec::new();
            let mut released = Vec::new();
            let late = HostFence::new();
            for i in 0..3u8 {
                let (r, d) = (picture(i + 1), picture(i + 9));
                if !imported {
                    ctx.submit(r, d).unwrap();
                    continue;
                }
                // Frame 1's reference waits on a fence signalled after
                // frame 2 is submitted: frame 2 waits its turn.
                let acquire = if i == 1 {
                    Acquire::Host(late.clone())
                } else {
                    Acquire::None
                };
                let (rf, rr) = frame(&r, acquire, &mut bytes);
                let (df, dr) = frame(&d, Acquire::None, &mut bytes);
                ctx.submit_frames(&rf, &df).unwrap();
                released.extend([rr, dr]);
            }
            late.signal();
            let scores = ctx.finish().unwrap();
            assert!(released.iter().all(|f| f.is_signalled()));
            scores
        };
        let (want, got) = (score(false), score(true));
        assert_eq!(got.frames.len(), 3);
        assert_eq!(got.frames, want.frames);
    }
}
