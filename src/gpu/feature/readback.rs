//! Per-frame integer results of a GPU extractor: device accumulators that
//! each frame clears before its kernels, copied back to pinned memory and
//! read once their event fires. [`IN_FLIGHT`] + 1 slots, so the frames
//! after frame `i` that the engine keeps in flight can be queued before
//! frame `i` is read.

use super::IN_FLIGHT;
use crate::error::{Error, Result};
use crate::gpu::device::{DeviceBuffer, Event, Gpu, PinnedBuffer, Stream};
use crate::gpu::slice::DeviceSlice;
use std::collections::VecDeque;

struct Slot {
    device: DeviceBuffer,
    host: PinnedBuffer,
    done: Event,
}

pub(super) struct Readback {
    slots: Vec<Slot>,
    /// Queued frames, oldest first, with the slot holding their values
    /// (`None`: the frame launched nothing).
    queue: VecDeque<(u32, Option<usize>)>,
    next_slot: usize,
    words: usize,
}

impl Readback {
    /// Accumulators of `words` u64 values per frame.
    pub(super) fn new(gpu: &Gpu, words: usize) -> Result<Self> {
        let slot = || -> Result<Slot> {
            Ok(Slot {
                device: gpu.buffer(words * 8)?,
                host: gpu.pinned(words * 8)?,
                done: gpu.event()?,
            })
        };
        Ok(Self {
            slots: (0..=IN_FLIGHT).map(|_| slot()).collect::<Result<_>>()?,
            queue: VecDeque::new(),
            next_slot: 0,
            words,
        })
    }

    /// Clears the next slot's accumulators on `stream` and returns them for
    /// the frame's kernels; [`Readback::end`] must follow.
    pub(super) fn begin(&mut self, stream: &Stream) -> Result<DeviceSlice<u64>> {
        if self.queue.iter().filter(|(_, s)| s.is_some()).count() >= self.slots.len() {
            return Err(Error::Internal(
                "readback: every result slot is in flight (a frame must complete first)".into(),
            ));
        }
        let slot = &self.slots[self.next_slot];
        stream.fill_u32(&slot.device, 0)?;
        Ok(slot.device.slice(..))
    }

    /// Queues the copy of the accumulators filled since `begin`.
    pub(super) fn end(&mut self, index: u32, stream: &Stream) -> Result<()> {
        let s = self.next_slot;
        let slot = &mut self.slots[s];
        // SAFETY: `host` is read only after `done` fires.
        unsafe { stream.copy_to_pinned(&mut slot.host, &slot.device)? };
        slot.done.record(stream)?;
        self.queue.push_back((index, Some(s)));
        self.next_slot = (s + 1) % self.slots.len();
        Ok(())
    }

    /// Records a frame that launched no work (its values need none).
    pub(super) fn skip(&mut self, index: u32) {
        self.queue.push_back((index, None));
    }

    /// Waits for the oldest frame: its index and values (`None` for a
    /// skipped frame); `None` when nothing is queued.
    pub(super) fn complete(&mut self) -> Result<Option<(u32, Option<Vec<u64>>)>> {
        let Some((index, slot)) = self.queue.pop_front() else {
            return Ok(None);
        };
        let Some(s) = slot else {
            return Ok(Some((index, None)));
        };
        let slot = &self.slots[s];
        slot.done.synchronize()?;
        let values = slot.host.as_slice()[..self.words * 8]
            .chunks_exact(8)
            .map(|b| u64::from_ne_bytes(b.try_into().expect("8 bytes")))
            .collect();
        Ok(Some((index, Some(values))))
    }

    /// [`Readback::complete`] for an extractor that launches work every
    /// frame (a skipped frame is an internal error, named by `extractor`).
    pub(super) fn complete_launched(&mut self, extractor: &str) -> Result<Option<(u32, Vec<u64>)>> {
        match self.complete()? {
            None => Ok(None),
            Some((index, Some(values))) => Ok(Some((index, values))),
            Some((index, None)) => Err(Error::Internal(format!(
                "{extractor}: frame {index} launched no work"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::mock::MockDriver;

    /// The engine queues IN_FLIGHT frames beyond the one it reads: each
    /// must get its own slot, and one more is refused by name, not
    /// overwritten.
    #[test]
    fn a_slot_for_every_frame_in_flight_and_no_more() {
        let (_mock, gpu) = MockDriver::gpu();
        let stream = gpu.stream().unwrap();
        let mut results = Readback::new(&gpu, 2).unwrap();
        for index in 0..=IN_FLIGHT as u32 {
            results.begin(&stream).unwrap();
            results.end(index, &stream).unwrap();
        }
        let refused = results.begin(&stream).expect_err("no slot is free");
        assert!(
            refused
                .to_string()
                .contains("every result slot is in flight"),
            "{refused}"
        );
        // Reading the oldest frame frees its slot, in order.
        assert_eq!(results.complete().unwrap().map(|(i, _)| i), Some(0));
        results.begin(&stream).unwrap();
        results.end(IN_FLIGHT as u32 + 1, &stream).unwrap();
        for index in 1..=IN_FLIGHT as u32 + 1 {
            assert_eq!(results.complete().unwrap().map(|(i, _)| i), Some(index));
        }
        assert!(results.complete().unwrap().is_none());
    }
}
