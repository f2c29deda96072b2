//! Worker threads: a pool for non-temporal extractors and one in-order
//! lane for temporal ones (ADR 0003).

use super::*;
use crossbeam_channel::{bounded, Receiver, Sender};
use std::thread::JoinHandle;

/// Values of one lane's frame (or flush): per-frame values with the key of
/// their write, and aggregates with their slot.
/// and the (slot, frame) pairs processed.
pub(super) type SlotResult = Result<(
    Vec<(WriteKey, u32, String, f64)>,
    Vec<(usize, String, f64)>,
    Vec<(usize, u32)>,
)>;

/// Worker threads: a pool that runs the non-temporal extractors on scored
/// frames in any order, and one lane that runs the temporal extractors on
/// every frame in order.
pub(super) struct Workers {
    parallel: Option<Sender<(u32, Pair)>>,
    temporal: Option<Sender<(u32, Pair)>>,
    results: Receiver<SlotResult>,
    handles: Vec<JoinHandle<()>>,
    pub(super) planes: PlaneMask,
    /// The slots these workers run.
    pub(super) slots: Vec<usize>,
}

/// Starts a worker thread; a thread the system refuses is an error, not a
/// panic.
fn spawn(work: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("vmafx-worker".into())
        .spawn(work)
        .map_err(|e| Error::Extractor {
            extractor: "worker".into(),
            reason: format!("cannot start a worker thread: {e}"),
        })
}

impl Workers {
    /// Workers for the slots listed in `which`.
    pub(super) fn start(
        slots: &[Slot],
        which: &[usize],
        format: &PictureFormat,
        threads: usize,
    ) -> Result<Self> {
        let (result_tx, results) = crossbeam_channel::unbounded();
        let parallel_slots: Vec<usize> = which
            .iter()
            .copied()
            .filter(|&i| !slots[i].temporal)
            .collect();
        let temporal_slots: Vec<usize> = which
            .iter()
            .copied()
            .filter(|&i| slots[i].temporal)
            .collect();
        let mut handles = Vec::new();
        let mut planes = PlaneMask::NONE;
        for s in which.iter().map(|&i| &slots[i]) {
            planes = planes.union(s.planes);
        }

        let parallel = if parallel_slots.is_empty() {
            None
        } else {
            // A bounded queue keeps memory flat: submit waits when the
            // workers are behind. One frame waiting per worker is enough
            // for each to find its next one when it finishes; more would
            // only hold pictures, memory a run's first frames fault in.
            let (tx, rx) = bounded::<(u32, Pair)>(threads);
            for _ in 0..threads {
                let lane = Lane::create(slots, &parallel_slots, format)?;
                let (rx, result_tx) = (rx.clone(), result_tx.clone());
                handles.push(spawn(move || lane.run(rx, result_tx))?);
            }
            Some(tx)
        };
        let temporal = if temporal_slots.is_empty() {
            None
        } else {
            let (tx, rx) = bounded::<(u32, Pair)>(threads);
            let lane = Lane::create(slots, &temporal_slots, format)?;
            let result_tx = result_tx.clone();
            handles.push(spawn(move || lane.run(rx, result_tx))?);
            Some(tx)
        };
        Ok(Self {
            parallel,
            temporal,
            results,
            handles,
            planes,
            slots: which.to_vec(),
        })
    }

    pub(super) fn send(&self, index: u32, pair: Pair, scored: bool) -> Result<()> {
        let lost = || Error::Extractor {
            extractor: "worker".into(),
            reason: "a worker thread stopped unexpectedly".into(),
        };
        if let Some(t) = &self.temporal {
            t.send((index, pair.clone())).map_err(|_| lost())?;
        }
        if scored {
            if let Some(p) = &self.parallel {
                p.send((index, pair)).map_err(|_| lost())?;
            }
        }
        Ok(())
    }

    pub(super) fn drain_ready(&self, collector: &mut FeatureCollector, error: &mut Option<Error>) {
        while let Ok(r) = self.results.try_recv() {
            absorb(r, collector, error);
        }
    }

    pub(super) fn finish(mut self, collector: &mut FeatureCollector) -> Result<()> {
        // Closing the queues tells the lanes to flush and exit.
        self.parallel.take();
        self.temporal.take();
        let mut error = None;
        for h in self.handles.drain(..) {
            if h.join().is_err() && error.is_none() {
                error = Some(Error::Extractor {
                    extractor: "worker".into(),
                    reason: "a worker thread panicked".into(),
                });
            }
        }
        while let Ok(r) = self.results.try_recv() {
            absorb(r, collector, &mut error);
        }
        error.map_or(Ok(()), Err)
    }
}

pub(super) fn absorb(r: SlotResult, collector: &mut FeatureCollector, error: &mut Option<Error>) {
    match r {
        Ok((values, aggregates, processed)) => {
            for (key, frame, name, v) in values {
                collector.add(key, frame, name, v);
            }
            for (slot, name, v) in aggregates {
                collector.add_aggregate(slot, name, v);
            }
            for (slot, frame) in processed {
                collector.processed(slot, frame);
            }
        }
        Err(e) => {
            error.get_or_insert(e);
        }
    }
}

/// The extractor instances one thread owns.
pub(super) struct Lane {
    extractors: Vec<(usize, Box<dyn Extractor>)>,
}

impl Lane {
    pub(super) fn create(slots: &[Slot], which: &[usize], format: &PictureFormat) -> Result<Self> {
        Ok(Self {
            extractors: which
                .iter()
                .map(|&i| Ok((i, slots[i].create(format)?)))
                .collect::<Result<_>>()?,
        })
    }

    pub(super) fn run(mut self, rx: Receiver<(u32, Pair)>, results: Sender<SlotResult>) {
        let mut sink = FeatureSink::new();
        for (index, pair) in rx {
            let frame = FrameInput {
                index,
                reference: &pair.0,
                distorted: &pair.1,
            };
            let r = self.each(index, &mut sink, |x, sink| x.extract(&frame, sink));
            let failed = r.is_err();
            let _ = results.send(r);
            if failed {
                return;
            }
        }
        let _ = results.send(self.each(FLUSH, &mut sink, |x, sink| x.flush(sink)));
    }

    pub(super) fn each(
        &mut self,
        at: u32,
        sink: &mut FeatureSink,
        mut f: impl FnMut(&mut dyn Extractor, &mut FeatureSink) -> Result<()>,
    ) -> SlotResult {
        let (mut values, mut aggregates, mut processed) = (Vec::new(), Vec::new(), Vec::new());
        for (slot, x) in &mut self.extractors {
            f(x.as_mut(), sink)?;
            if at != FLUSH {
                processed.push((*slot, at));
            }
            values.extend(
                sink.drain()
                    .enumerate()
                    .map(|(seq, (i, n, v))| ((at, *slot, seq), i, n, v)),
            );
            aggregates.extend(sink.drain_aggregates().map(|(n, v)| (*slot, n, v)));
        }
        Ok((values, aggregates, processed))
    }
}
