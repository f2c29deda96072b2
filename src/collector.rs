//! Per-frame feature values, gathered from extractor slots that may finish
//! frames out of order (threads), and read back in libvmaf's order.
//!
//! libvmaf's collector lists features in the order their names were first
//! written, in processing order: a temporal extractor that writes `motion2`
//! of frame 0 while processing frame 1 puts it after everything written
//! while processing frame 0. We rebuild that order from a key recorded with
//! each value, (frame being processed, slot, position in that call), so it
//! is the same whatever the thread timing.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

/// When a value was written: while processing which frame (`u32::MAX` for
/// the final flush), by which slot, and its position within that call.
pub type WriteKey = (u32, usize, usize);

#[derive(Debug, Default)]
pub struct FeatureCollector {
    names: Vec<String>,
    ids: HashMap<String, usize>,
    first_write: Vec<WriteKey>,
    frames: BTreeMap<u32, Vec<(usize, f64)>>,
    aggregates: Vec<Vec<(String, f64)>>,
    /// Where each slot's writes rank within one processing step (its index
    /// unless [`FeatureCollector::write_first`] moved it ahead), and how
    /// many steps later they count.
    write_rank: Vec<(usize, u32)>,
    progress: Vec<SlotProgress>,
    /// Frames submitted so far.
    submitted: u32,
    /// Non-temporal slots process every `subsample`th frame.
    subsample: u32,
    /// Every slot has flushed: every frame is complete.
    flushed: bool,
    /// Process CPU time when the first value was recorded (libvmaf's
    /// feature-collector timer starts there).
    first_value_cpu: Option<Duration>,
}

/// CPU time used by the whole process so far (C's `clock()`, which
/// libvmaf's timer reads).
pub fn process_cpu_time() -> Duration {
    use nix::time::{clock_gettime, ClockId};
    clock_gettime(ClockId::CLOCK_PROCESS_CPUTIME_ID)
        .map(Duration::from)
        .unwrap_or_default()
}

/// How far one extractor slot has processed the input: every frame below
/// `next` that it processes has been processed; `ahead` holds frames done
/// out of order (worker threads).
#[derive(Debug, Default, Clone)]
struct SlotProgress {
    temporal: bool,
    next: u32,
    ahead: BTreeSet<u32>,
}

/// How many frames past frame `i` a temporal extractor may still write
/// values of frame `i` (motion's five-frame window derives frame 0 from the
/// SAD of frame 2; `motion2` of `i` needs frame `i + 1`). Non-temporal
/// extractors write a frame's values while processing it.
pub const TEMPORAL_LOOKAHEAD: u32 = 2;

impl FeatureCollector {
    /// A collector for `slots` extractor slots, each temporal or not;
    /// non-temporal slots process every `subsample`th frame only.
    pub fn new(slot_count: usize) -> Self {
        Self {
            aggregates: vec![Vec::new(); slot_count],
            write_rank: (0..slot_count).map(|slot| (slot, 0)).collect(),
            progress: vec![SlotProgress::default(); slot_count],
            ..Self::default()
        }
    }

    /// Says which slots are temporal (they process every frame and write
    /// values up to [`TEMPORAL_LOOKAHEAD`] frames late); the others process
    /// every `subsample`th frame.
    pub fn plan(&mut self, temporal: &[bool], subsample: u32) {
        for (p, &t) in self.progress.iter_mut().zip(temporal) {
            p.temporal = t;
        }
        self.subsample = subsample.max(1);
    }

    /// Orders the writes as libvmaf's do when it has a worker pool: it runs
    /// its temporal extractors (the slots marked `first`) on the calling
    /// thread and hands the frame to the pool, whose workers start on it
    /// while the calling thread reads and processes the next frame. So a
    /// `first` slot's writes rank ahead of the others' of the same step and
    /// of the step before (the pool's work on a frame lands after the
    /// calling thread's on the next one, as libvmaf's goldens show).
    pub fn write_first(&mut self, first: &[bool]) {
        let mut order: Vec<usize> = (0..self.write_rank.len()).collect();
        order.sort_by_key(|&slot| !first.get(slot).copied().unwrap_or(false));
        for (rank, slot) in order.into_iter().enumerate() {
            let lag = u32::from(!first.get(slot).copied().unwrap_or(false));
            self.write_rank[slot] = (rank, lag);
        }
    }

    /// Frame `frame` was submitted (frames are submitted in order).
    pub fn submitted(&mut self, frame: u32) {
        self.submitted = self.submitted.max(frame + 1);
    }

    /// Slot `slot` has finished processing frame `frame`.
    pub fn processed(&mut self, slot: usize, frame: u32) {
        let submitted = self.submitted.max(frame + 1);
        let subsample = self.subsample.max(1);
        let p = &mut self.progress[slot];
        if frame >= p.next {
            p.ahead.insert(frame);
        }
        loop {
            let n = p.next;
            let skipped = !p.temporal && !n.is_multiple_of(subsample) && n < submitted;
            if skipped || p.ahead.remove(&n) {
                p.next += 1;
            } else {
                break;
            }
        }
    }

    /// Every slot has flushed: all submitted frames are complete.
    pub fn flushed(&mut self) {
        self.flushed = true;
    }

    /// How many leading frames are complete: no extractor will write a
    /// value for them any more.
    pub fn complete_frames(&self) -> u32 {
        if self.flushed {
            return self.submitted;
        }
        let subsample = self.subsample.max(1);
        self.progress
            .iter()
            .map(|p| {
                if p.temporal {
                    p.next.saturating_sub(TEMPORAL_LOOKAHEAD)
                } else {
                    // Frames this slot does not score are past once seen.
                    let mut n = p.next;
                    while n < self.submitted && !n.is_multiple_of(subsample) {
                        n += 1;
                    }
                    n
                }
            })
            .min()
            .unwrap_or(self.submitted)
            .min(self.submitted)
    }

    /// Records `value` of feature `name` for `frame`. A name written twice
    /// for one frame (the same feature from two extractor instances whose
    /// options do not change it) keeps the first value.
    pub fn add(&mut self, key: WriteKey, frame: u32, name: String, value: f64) {
        if self.first_value_cpu.is_none() {
            self.first_value_cpu = Some(process_cpu_time());
        }
        let (step, slot, seq) = key;
        let (rank, lag) = self.write_rank.get(slot).copied().unwrap_or((slot, 0));
        let key = (step.saturating_add(lag), rank, seq);
        let id = match self.ids.get(&name) {
            Some(&id) => {
                self.first_write[id] = self.first_write[id].min(key);
                id
            }
            None => {
                self.names.push(name.clone());
                self.ids.insert(name, self.names.len() - 1);
                self.first_write.push(key);
                self.names.len() - 1
            }
        };
        let values = self.frames.entry(frame).or_default();
        if !values.iter().any(|&(i, _)| i == id) {
            values.push((id, value));
        }
    }

    /// Process CPU time since the first value was recorded (zero if none
    /// was).
    pub fn cpu_since_first_value(&self) -> Duration {
        self.first_value_cpu
            .map_or(Duration::ZERO, |t| process_cpu_time().saturating_sub(t))
    }

    /// Records a whole-run value (psnr's aPSNR).
    pub fn add_aggregate(&mut self, slot: usize, name: String, value: f64) {
        self.aggregates[slot].push((name, value));
    }

    /// Whole-run values in slot order.
    pub fn aggregates(&self) -> Vec<(String, f64)> {
        self.aggregates.iter().flatten().cloned().collect()
    }

    /// The features of one frame, in the order of their first write.
    pub fn frame(&self, frame: u32) -> Vec<(String, f64)> {
        let mut values = self.frames.get(&frame).cloned().unwrap_or_default();
        values.sort_by_key(|&(id, _)| self.first_write[id]);
        values
            .into_iter()
            .map(|(id, v)| (self.names[id].clone(), v))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_complete_once_every_slot_is_past_them() {
        let mut c = FeatureCollector::new(2);
        c.plan(&[false, true], 2);
        for f in 0..6 {
            c.submitted(f);
        }
        // Slot 0 (every 2nd frame) out of order, slot 1 (temporal) in order.
        c.processed(0, 2);
        assert_eq!(c.complete_frames(), 0);
        c.processed(0, 0);
        for f in 0..3 {
            c.processed(1, f);
        }
        // Slot 0 is past frame 3 (frame 3 is not one it scores); slot 1
        // may still write frame 1's values.
        assert_eq!(c.complete_frames(), 1);
        c.processed(1, 3);
        c.processed(1, 4);
        assert_eq!(c.complete_frames(), 3);
        c.flushed();
        assert_eq!(c.complete_frames(), 6);
    }

    #[test]
    fn order_is_first_write_in_processing_order() {
        let mut c = FeatureCollector::new(2);
        // Written out of order, as threads may deliver them.
        c.add((1, 0, 0), 1, "adm".into(), 1.0);
        c.add((1, 1, 1), 0, "motion2".into(), 2.0);
        c.add((1, 1, 0), 1, "sad".into(), 3.0);
        c.add((0, 1, 0), 0, "sad".into(), 4.0);
        c.add((0, 0, 0), 0, "adm".into(), 5.0);
        c.add((u32::MAX, 1, 0), 1, "motion2".into(), 6.0);
        let names = |f| c.frame(f).into_iter().map(|(n, _)| n).collect::<Vec<_>>();
        assert_eq!(names(0), ["adm", "sad", "motion2"]);
        assert_eq!(names(1), ["adm", "sad", "motion2"]);
        assert_eq!(c.frame(0)[1].1, 4.0);
    }

    #[test]
    fn slots_written_first_lead_their_step_and_the_one_before() {
        let mut c = FeatureCollector::new(4);
        c.write_first(&[false, true, false, true]);
        for slot in 0..4 {
            c.add((0, slot, 0), 0, format!("s{slot}"), 0.0);
        }
        // Slot 3 writes a new name for frame 0 while processing frame 1.
        c.add((1, 3, 0), 0, "late".into(), 0.0);
        let names = c.frame(0).into_iter().map(|(n, _)| n).collect::<Vec<_>>();
        assert_eq!(names, ["s1", "s3", "late", "s0", "s2"]);
    }
}
