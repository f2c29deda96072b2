//! The GPU engine: the library stream, shared device planes, GPU
//! extractors, and host extractors for features without a GPU version.

use super::gpu_frames::ImportedFrames;
use super::*;
use crate::gpu::feature::{self as gpu_feature, GpuExtractor};
use crate::gpu::lanes::Lanes;
use crate::gpu::planes::{FramePlanes, PairPlanes, SharedPlanes};
use std::mem::ManuallyDrop;

/// The GPU engine: the library's streams (an entry stream, a lane per GPU
/// extractor instance, an exit stream: `gpu/lanes.rs`), the shared device planes,
/// the GPU extractors of the set, and the CPU extractors of features that
/// have no GPU version yet (inline, or on worker threads with `threads > 1`).
pub(super) struct GpuEngine {
    /// Dropped by hand: leaked if the engine is stuck (see `Drop`).
    pub(super) lanes: ManuallyDrop<Lanes>,
    pub(super) planes: ManuallyDrop<SharedPlanes>,
    pub(super) gpu: Gpu,
    pub(super) on_gpu: Vec<OnGpu>,
    pub(super) on_host: HostSide,
    /// Device frames bound in place, held until their readers finish.
    pub(super) imported: ImportedFrames,
}

/// Where the CPU extractors of a GPU run go.
pub(super) enum HostSide {
    Inline(Vec<(usize, Box<dyn Extractor>)>),
    Threaded(Workers),
}

impl GpuEngine {
    pub(super) fn start(
        gpu: &Gpu,
        slots: &[Slot],
        format: &PictureFormat,
        threads: usize,
    ) -> Result<Self> {
        let mut on_gpu = Vec::new();
        let mut host_slots = Vec::new();
        let mut mask = PairPlanes::NONE;
        let mut lanes = 0;
        for (i, s) in slots.iter().enumerate() {
            let create = || gpu_feature::create_joint(&s.requests(), format, gpu);
            match create() {
                Some(x) => {
                    let first = x?;
                    mask = mask.union(first.planes());
                    let count = first.instances(format);
                    let mut instances = vec![first];
                    for _ in 1..count {
                        instances.push(create().expect("created once already")?);
                    }
                    on_gpu.push(OnGpu::new(i, instances, &mut lanes));
                }
                None => host_slots.push(i),
            }
        }
        let on_host = if threads > 1 && !host_slots.is_empty() {
            HostSide::Threaded(Workers::start(slots, &host_slots, format, threads)?)
        } else {
            HostSide::Inline(
                host_slots
                    .iter()
                    .map(|&i| Ok((i, slots[i].create(format)?)))
                    .collect::<Result<_>>()?,
            )
        };
        // Both made before either is wrapped: a failure making the planes
        // drops the lanes (a ManuallyDrop made first would leak them).
        let lanes = Lanes::new(gpu, lanes)?;
        let planes = SharedPlanes::new(gpu, *format, mask)?;
        Ok(Self {
            lanes: ManuallyDrop::new(lanes),
            planes: ManuallyDrop::new(planes),
            gpu: gpu.clone(),
            on_gpu,
            on_host,
            imported: ImportedFrames::default(),
        })
    }

    /// Planes copied from host memory so far.
    pub(super) fn host_copies(&self) -> u64 {
        self.planes.host_copies()
    }

    pub(super) fn planes_needed(&self) -> PlaneMask {
        let host = match &self.on_host {
            HostSide::Inline(x) => x
                .iter()
                .fold(PlaneMask::NONE, |m, (_, x)| m.union(x.planes())),
            HostSide::Threaded(w) => w.planes,
        };
        host.union(self.planes.mask())
    }

    pub(super) fn submit(
        &mut self,
        index: u32,
        pictures: Pictures<'_>,
        scored: bool,
        slots: &[Slot],
        collector: &mut FeatureCollector,
        error: &mut Option<Error>,
    ) -> Result<()> {
        self.imported.check_stuck()?;
        let mut sink = FeatureSink::new();
        let wanted = |slot: usize| scored || slots[slot].temporal;
        // Pinned pictures the engine owns are read by the device copy
        // where they are, and kept (shared) until it has completed.
        let pictures = match pictures {
            Pictures::Owned(r, d) if r.is_pinned() && d.is_pinned() => {
                Pictures::Shared(Arc::new((r, d)))
            }
            other => other,
        };
        if self.on_gpu.iter().any(|x| wanted(x.slot)) {
            let planes = match &pictures {
                Pictures::Shared(pair) => {
                    self.planes
                        .upload_lent(&self.gpu, self.lanes.entry(), pair)?
                }
                _ => {
                    let (reference, distorted) = pictures.refs();
                    self.planes
                        .upload(&self.gpu, self.lanes.entry(), reference, distorted)?
                }
            };
            let set = planes.set();
            enqueue_all(&mut self.on_gpu, index, &planes, &self.lanes, wanted)?;
            self.planes.release(set, self.lanes.exit())?;
        }
        // The host works while the device does.
        match &mut self.on_host {
            HostSide::Inline(extractors) => {
                let (reference, distorted) = pictures.refs();
                let frame = FrameInput {
                    index,
                    reference,
                    distorted,
                };
                for (slot, x) in extractors {
                    if wanted(*slot) {
                        x.extract(&frame, &mut sink)?;
                        collect(collector, &mut sink, index, *slot);
                        collector.processed(*slot, index);
                    }
                }
            }
            HostSide::Threaded(w) => {
                let sent = w.send(index, pictures.into_pair(), scored);
                w.drain_ready(collector, error);
                if let Err(e) = sent {
                    return Err(error.take().unwrap_or(e));
                }
            }
        }
        self.complete_older(collector)
    }

    /// Keeps up to [`IN_FLIGHT`] frames queued per extractor and hands
    /// over the older ones.
    pub(super) fn complete_older(&mut self, collector: &mut FeatureCollector) -> Result<()> {
        // The oldest queued frames' results follow their acquire waits:
        // those fences must have signalled (or time out) first.
        self.imported.wait_acquired(&self.gpu, IN_FLIGHT)?;
        let mut sink = FeatureSink::new();
        for x in &mut self.on_gpu {
            x.complete_down_to(IN_FLIGHT, &mut sink, collector)?;
        }
        Ok(())
    }

    pub(super) fn finish(mut self, collector: &mut FeatureCollector) -> Result<()> {
        let result = self
            .imported
            .wait_acquired(&self.gpu, 0)
            .and_then(|()| self.finish_extractors(collector));
        if self.imported.is_stuck() {
            // Waiting for the device would never end (see `Drop`).
            return result;
        }
        // Every read has finished (or failed): frames held for their readers
        // are released either way.
        self.lanes.synchronize()?;
        self.imported.release_all();
        result
    }

    fn finish_extractors(&mut self, collector: &mut FeatureCollector) -> Result<()> {
        let mut sink = FeatureSink::new();
        for x in &mut self.on_gpu {
            x.complete_down_to(0, &mut sink, collector)?;
            for i in &mut x.instances {
                i.extractor.flush(&mut sink)?;
                collect(collector, &mut sink, FLUSH, x.slot);
            }
        }
        match std::mem::replace(&mut self.on_host, HostSide::Inline(Vec::new())) {
            HostSide::Inline(mut extractors) => {
                for (slot, x) in &mut extractors {
                    x.flush(&mut sink)?;
                    collect(collector, &mut sink, FLUSH, *slot);
                }
            }
            HostSide::Threaded(w) => w.finish(collector)?,
        }
        Ok(())
    }
}

impl Drop for GpuEngine {
    /// A stuck engine (a device-waited acquire fence timed out) leaks its
    /// device objects: freeing memory or imports synchronizes the device,
    /// which waits for that fence for good, and the producer's frames must
    /// not be released while a queued read of them may still run.
    fn drop(&mut self) {
        if self.imported.is_stuck() {
            std::mem::forget(std::mem::take(&mut self.on_gpu));
            self.imported.leak();
        } else {
            // SAFETY: dropped once, here, and not used after.
            unsafe {
                std::mem::ManuallyDrop::drop(&mut self.planes);
                std::mem::ManuallyDrop::drop(&mut self.lanes);
            }
        }
    }
}

pub(super) use crate::gpu::feature::IN_FLIGHT;

/// A GPU extractor of the set: one instance, or several taking its frames
/// in turn, each on its own lane ([`GpuExtractor::instances`]), so one
/// frame's last kernels (coarse scales, a few blocks each) run beside the
/// next frame's first instead of after them.
pub(super) struct OnGpu {
    pub(super) slot: usize,
    pub(super) instances: Vec<Instance>,
    /// The instance the next frame goes to.
    turn: usize,
    /// The instance holding the oldest queued frame: frames are completed
    /// in the turn order they were queued in, so this follows `turn`.
    oldest: usize,
}

pub(super) struct Instance {
    pub(super) extractor: Box<dyn GpuExtractor>,
    /// Its stream in [`Lanes`].
    lane: usize,
    /// Frames queued and not yet completed.
    queued: usize,
}

impl OnGpu {
    /// Takes the next `instances.len()` lanes from `lanes`.
    fn new(slot: usize, instances: Vec<Box<dyn GpuExtractor>>, lanes: &mut usize) -> Self {
        let instances = instances
            .into_iter()
            .map(|extractor| {
                *lanes += 1;
                Instance {
                    extractor,
                    lane: *lanes - 1,
                    queued: 0,
                }
            })
            .collect();
        Self {
            slot,
            instances,
            turn: 0,
            oldest: 0,
        }
    }

    /// Completes the oldest queued frames, across instances in frame
    /// order, until at most `left` are queued on each instance.
    fn complete_down_to(
        &mut self,
        left: usize,
        sink: &mut FeatureSink,
        collector: &mut FeatureCollector,
    ) -> Result<()> {
        while self.instances.iter().any(|i| i.queued > left) {
            let oldest = self.oldest;
            self.oldest = (oldest + 1) % self.instances.len();
            let instance = &mut self.instances[oldest];
            instance.queued -= 1;
            if let Some(at) = instance.extractor.complete(sink)? {
                // Values are keyed by the frame they were computed for, as
                // the CPU engine writes them: output order does not depend
                // on the pipelining.
                collect(collector, sink, at, self.slot);
                collector.processed(self.slot, at);
            }
        }
        Ok(())
    }
}

/// Queues frame `index` on every GPU extractor that wants it (on the
/// instance whose turn it is), each on its own lane after the entry
/// stream's work so far; the exit stream then follows them all.
pub(super) fn enqueue_all(
    on_gpu: &mut [OnGpu],
    index: u32,
    planes: &FramePlanes<'_>,
    lanes: &Lanes,
    wanted: impl Fn(usize) -> bool,
) -> Result<()> {
    lanes.fork()?;
    for x in on_gpu.iter_mut().filter(|x| wanted(x.slot)) {
        let turn = x.turn;
        x.turn = (turn + 1) % x.instances.len();
        let instance = &mut x.instances[turn];
        instance
            .extractor
            .enqueue(index, planes, lanes.enter(instance.lane)?)?;
        instance.queued += 1;
        lanes.leave(instance.lane)?;
    }
    Ok(())
}
