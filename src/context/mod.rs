//! A scoring run: the extractor set, frame scheduling (inline or on worker
//! threads), collection of per-frame values, and model prediction at the end.

use crate::collector::{FeatureCollector, WriteKey};
use crate::error::{Error, Result};
use crate::feature::{
    self, Extractor, ExtractorInfo, FeatureSink, FrameInput, Options, RawOptions,
};
use crate::gpu::bind::BindCounts;
use crate::gpu::Gpu;
use crate::model::{FeatureRequest, Model};
use crate::picture::{HostPicture, PictureFormat, PlaneMask};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

mod frames;
mod gpu;
mod gpu_frames;
mod threaded;

use frames::FrameQueue;
use gpu::GpuEngine;
use threaded::Workers;

/// One extractor of the run's set, with its resolved options.
#[derive(Clone)]
struct Slot {
    info: &'static ExtractorInfo,
    options: Options,
    temporal: bool,
    /// Requests of other extractors this slot's instance also serves
    /// ([`ExtractorInfo::joint`]: e.g. `motion_v2` next to `motion`).
    joined: Vec<(&'static ExtractorInfo, Options)>,
}

impl Slot {
    fn create(&self, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
        match self.info.joint {
            Some(joint) if !self.joined.is_empty() => (joint.create)(&self.requests(), format)
                .expect("a joined slot's requests were accepted together"),
            _ => (self.info.create)(&self.options, format),
        }
    }

    /// Every request the slot serves: its own, then the joined ones.
    fn requests(&self) -> Vec<(&'static ExtractorInfo, &Options)> {
        std::iter::once((self.info, &self.options))
            .chain(self.joined.iter().map(|(i, o)| (*i, o)))
            .collect()
    }

    /// Whether the slot already computes `info` with `options`.
    fn serves(&self, info: &ExtractorInfo, options: &Options) -> bool {
        self.requests()
            .iter()
            .any(|(i, o)| i.name == info.name && o.canonical() == options.canonical())
    }

    /// Joins the request to this slot when both extractors share their work
    /// and the joint instance accepts it; errors of that instance are the
    /// request's.
    fn try_join(
        &mut self,
        info: &'static ExtractorInfo,
        options: &Options,
        format: &PictureFormat,
    ) -> Result<bool> {
        let (Some(mine), Some(theirs)) = (self.info.joint, info.joint) else {
            return Ok(false);
        };
        if !std::ptr::eq(mine, theirs) {
            return Ok(false);
        }
        let mut requests = self.requests();
        requests.push((info, options));
        match (mine.create)(&requests, format) {
            None => Ok(false),
            Some(probe) => {
                probe?;
                self.joined.push((info, options.clone()));
                Ok(true)
            }
        }
    }
}

/// Builds a [`Context`]: the picture format, the models and features to
/// compute and how to schedule them.
#[derive(Debug, Clone)]
pub struct ContextBuilder {
    format: PictureFormat,
    features: Vec<(String, RawOptions)>,
    models: Vec<Model>,
    threads: usize,
    subsample: u32,
    gpu: Option<Gpu>,
    allow_device_copy: bool,
    fence_timeout: Duration,
}

impl ContextBuilder {
    pub fn new(format: PictureFormat) -> Self {
        Self {
            format,
            features: Vec::new(),
            models: Vec::new(),
            threads: 1,
            subsample: 1,
            gpu: None,
            allow_device_copy: false,
            fence_timeout: Duration::from_secs(10),
        }
    }

    /// How long an imported frame's acquire fence may take to signal
    /// (default 10 s); past it [`Error::FenceTimeout`] names the fence,
    /// frame and side. A fence the host waits for (sync_file, host fence,
    /// Vulkan timeline on the host, GL sync) fails its frame, which is
    /// released. A fence the device waits for (CUDA/HIP event, Vulkan
    /// semaphore fd on a GPU context) is checked before the host blocks on
    /// later work; its wait cannot be withdrawn from the stream, so the
    /// context fails from then on and keeps (leaks) the frames and device
    /// objects that wait could still touch rather than release them.
    pub fn fence_timeout(mut self, timeout: Duration) -> Self {
        self.fence_timeout = timeout;
        self
    }

    /// Runs the extractors that have a GPU version on `gpu` (the others
    /// on the calling thread).
    pub fn gpu(mut self, gpu: Gpu) -> Self {
        self.gpu = Some(gpu);
        self
    }

    /// Lets imported device frames whose planes cannot be read in place
    /// (address or pitch not aligned) be copied on the device instead of
    /// refused. Off by default: an import is zero-copy or fails.
    pub fn allow_device_copy(mut self, allow: bool) -> Self {
        self.allow_device_copy = allow;
        self
    }

    /// Adds a model: its features join the extractor set (shared with other
    /// models and `feature` requests) and its scores are appended to every
    /// scored frame.
    pub fn model(mut self, model: Model) -> Self {
        self.models.push(model);
        self
    }

    /// Adds an extractor by libvmaf name (or alias) with `key=value`
    /// options. Asking twice for the same extractor with the same options
    /// computes it once; on the CPU, extractors that do the same work share
    /// one instance (`motion` and `motion_v2`: one SAD per frame).
    pub fn feature(mut self, name: &str, options: RawOptions) -> Self {
        self.features.push((name.to_string(), options));
        self
    }

    /// Worker threads; 0 or 1 runs every extractor on the calling thread.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Scores every `n`th frame (libvmaf's `--subsample`); temporal
    /// extractors still see every frame.
    pub fn subsample(mut self, n: u32) -> Self {
        self.subsample = n;
        self
    }

    pub fn build(self) -> Result<Context> {
        if self.subsample == 0 {
            return Err(Error::InvalidArgument(
                "subsample must be at least 1".into(),
            ));
        }
        let models = self
            .models
            .into_iter()
            .map(|m| {
                let requests = m.feature_requests()?;
                Ok((m, requests))
            })
            .collect::<Result<Vec<_>>>()?;
        let requested = models
            .iter()
            .flat_map(|(_, reqs)| {
                reqs.iter()
                    .map(|r| (r.extractor.name.to_string(), r.options.clone()))
            })
            .chain(self.features.iter().cloned());
        let mut slots: Vec<Slot> = Vec::new();
        for (name, raw) in requested {
            let name = name.as_str();
            let raw = &raw;
            let info = feature::find(name)?;
            let options = Options::resolve(name, info.options, raw)?;
            if slots.iter().any(|s| s.serves(info, &options)) {
                continue;
            }
            // On the CPU, extractors that share their work share an instance
            // (GPU versions are created per request).
            if self.gpu.is_none() {
                let mut joined = false;
                for s in &mut slots {
                    if s.try_join(info, &options, &self.format)? {
                        joined = true;
                        break;
                    }
                }
                if joined {
                    continue;
                }
            }
            // Creating one instance up front checks the options against the
            // picture format and tells whether the extractor is temporal.
            let probe = (info.create)(&options, &self.format)?;
            slots.push(Slot {
                info,
                temporal: probe.temporal(),
                options,
                joined: Vec::new(),
            });
        }
        let engine = if let Some(gpu) = &self.gpu {
            let mut engine = GpuEngine::start(gpu, &slots, &self.format, self.threads)?;
            engine.imported.allow_device_copy = self.allow_device_copy;
            engine.imported.fence_timeout = self.fence_timeout;
            Engine::Gpu(Box::new(engine))
        } else if self.threads <= 1 {
            Engine::Inline(
                slots
                    .iter()
                    .map(|s| s.create(&self.format))
                    .collect::<Result<_>>()?,
            )
        } else {
            let all: Vec<usize> = (0..slots.len()).collect();
            Engine::Threaded(Workers::start(&slots, &all, &self.format, self.threads)?)
        };
        Ok(Context {
            format: self.format,
            subsample: self.subsample,
            collector: FeatureCollector::new(slots.len()),
            slots,
            models,
            engine,
            next_index: 0,
            error: None,
            frames: FrameQueue::new(self.fence_timeout),
        })
    }
}

/// A scoring run over a sequence of reference/distorted picture pairs.
pub struct Context {
    format: PictureFormat,
    subsample: u32,
    slots: Vec<Slot>,
    models: Vec<(Model, Vec<FeatureRequest>)>,
    engine: Engine,
    collector: FeatureCollector,
    next_index: u32,
    error: Option<Error>,
    /// Pairs waiting for fences or for earlier pairs (imported frames, and
    /// host pictures submitted behind them).
    frames: FrameQueue,
}

/// What the run produced for the frames it scores.
#[derive(Debug, Clone, Default)]
pub struct FeatureScores {
    /// (frame index, values) for each scored frame: features in a fixed
    /// order, then each model's score, then the bootstrap members and
    /// statistics of each model (libvmaf's order).
    pub frames: Vec<(u32, Vec<(String, f64)>)>,
    /// Whole-run metrics (psnr's aPSNR), in extractor order.
    pub aggregate: Vec<(String, f64)>,
}

impl Context {
    pub fn format(&self) -> &PictureFormat {
        &self.format
    }

    /// The planes some extractor of the set reads.
    pub fn planes_needed(&self) -> PlaneMask {
        match &self.engine {
            Engine::Inline(x) => x.iter().fold(PlaneMask::NONE, |m, e| m.union(e.planes())),
            Engine::Threaded(w) => w.planes,
            Engine::Gpu(g) => g.planes_needed(),
        }
    }

    /// Names of the extractors in the set, in order (duplicates removed;
    /// one that shares another's instance follows it).
    pub fn extractor_names(&self) -> Vec<&'static str> {
        self.slots
            .iter()
            .flat_map(|s| s.requests().into_iter().map(|(i, _)| i.name))
            .collect()
    }

    /// Scores the next frame pair. With worker threads this returns once the
    /// pair is queued; errors of earlier frames surface here or in `finish`.
    /// Behind imported frames still waiting on fences, the pair waits its
    /// turn (pairs are scored in submission order).
    pub fn submit(&mut self, reference: HostPicture, distorted: HostPicture) -> Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.check_pictures(&reference, &distorted)?;
        let index = self.next_index;
        self.next_index += 1;
        if self.frames.is_empty() {
            return self.process(index, Pictures::Owned(reference, distorted));
        }
        self.frames.push_pictures(index, reference, distorted);
        self.process_ready(false)
    }

    /// Scores the next pair from pictures the caller keeps: nothing of them
    /// is kept once this returns (the GPU engine has staged what it reads,
    /// the inline CPU engine has scored them; worker threads get copies), so
    /// the caller may refill the same two pictures for every frame.
    pub fn submit_borrowed(
        &mut self,
        reference: &HostPicture,
        distorted: &HostPicture,
    ) -> Result<()> {
        let threaded = matches!(self.engine, Engine::Threaded(_));
        if threaded || !self.frames.is_empty() {
            return self.submit(reference.clone(), distorted.clone());
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.check_pictures(reference, distorted)?;
        let index = self.next_index;
        self.next_index += 1;
        self.process(index, Pictures::Borrowed(reference, distorted))
    }

    fn check_pictures(&self, reference: &HostPicture, distorted: &HostPicture) -> Result<()> {
        for (which, p) in [("reference", reference), ("distorted", distorted)] {
            if p.format() != &self.format {
                return Err(Error::PictureMismatch(format!(
                    "frame {}: {which} picture is {}, the context scores {}",
                    self.next_index,
                    p.format(),
                    self.format
                )));
            }
        }
        Ok(())
    }

    /// Scores pair `index` now (its turn has come).
    fn process(&mut self, index: u32, pictures: Pictures<'_>) -> Result<()> {
        let scored = index.is_multiple_of(self.subsample);
        match &mut self.engine {
            Engine::Gpu(g) => {
                g.submit(
                    index,
                    pictures,
                    scored,
                    &self.slots,
                    &mut self.collector,
                    &mut self.error,
                )?;
            }
            Engine::Inline(extractors) => {
                let (reference, distorted) = pictures.refs();
                let frame = FrameInput {
                    index,
                    reference,
                    distorted,
                };
                let mut sink = FeatureSink::new();
                for (slot, x) in extractors.iter_mut().enumerate() {
                    if scored || self.slots[slot].temporal {
                        x.extract(&frame, &mut sink)?;
                        for (seq, (i, name, v)) in sink.drain().enumerate() {
                            self.collector.add((index, slot, seq), i, name, v);
                        }
                    }
                }
            }
            Engine::Threaded(w) => {
                let sent = w.send(index, pictures.into_pair(), scored);
                w.drain_ready(&mut self.collector, &mut self.error);
                // A lane that stopped has sent its reason: prefer it to the
                // bare "stopped" of the failed send.
                if let Err(e) = sent {
                    return Err(self.error.take().unwrap_or(e));
                }
            }
        }
        Ok(())
    }

    /// How imported frames reached the extractors on the device, and how
    /// many planes were transferred from host memory (host pictures'
    /// uploads and host-memory frames; `None` without a GPU).
    pub fn transfer_counts(&self) -> Option<(BindCounts, u64)> {
        match &self.engine {
            Engine::Gpu(g) => Some((
                g.imported.counts(),
                g.host_copies() + g.imported.host_uploads(),
            )),
            _ => None,
        }
    }

    /// Flushes temporal extractors, waits for every frame and returns the
    /// features of the scored frames.
    pub fn finish(mut self) -> Result<FeatureScores> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.process_ready(true)?;
        match self.engine {
            Engine::Inline(mut extractors) => {
                let mut sink = FeatureSink::new();
                for (slot, x) in extractors.iter_mut().enumerate() {
                    x.flush(&mut sink)?;
                    for (seq, (i, name, v)) in sink.drain().enumerate() {
                        self.collector.add((FLUSH, slot, seq), i, name, v);
                    }
                    for (name, v) in sink.drain_aggregates() {
                        self.collector.add_aggregate(slot, name, v);
                    }
                }
            }
            Engine::Threaded(w) => w.finish(&mut self.collector)?,
            Engine::Gpu(g) => g.finish(&mut self.collector)?,
        }
        let frames = (0..self.next_index)
            .filter(|i| i % self.subsample == 0)
            .map(|i| {
                let mut values = self.collector.frame(i);
                predict(&self.models, i, &mut values)?;
                Ok((i, values))
            })
            .collect::<Result<_>>()?;
        Ok(FeatureScores {
            frames,
            aggregate: self.collector.aggregates(),
        })
    }
}

/// Appends every model's outputs to one frame's feature values.
fn predict(
    models: &[(Model, Vec<FeatureRequest>)],
    frame: u32,
    values: &mut Vec<(String, f64)>,
) -> Result<()> {
    if models.is_empty() {
        return Ok(());
    }
    let lookup: HashMap<&str, f64> = values.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let mut scores = Vec::new();
    let mut extras = Vec::new();
    for (model, requests) in models {
        let p = model.predict_frame(requests, frame, |name| lookup.get(name).copied())?;
        let mut outputs = p.iter().map(|(n, v)| (n.to_string(), v));
        scores.extend(outputs.next());
        extras.extend(outputs);
    }
    values.extend(scores);
    values.extend(extras);
    Ok(())
}

enum Engine {
    Inline(Vec<Box<dyn Extractor>>),
    Threaded(Workers),
    Gpu(Box<GpuEngine>),
}

/// Moves a sink's values and aggregates into the collector under the write
/// key of processing step `at` and `slot`.
fn collect(collector: &mut FeatureCollector, sink: &mut FeatureSink, at: u32, slot: usize) {
    for (seq, (i, name, v)) in sink.drain().enumerate() {
        collector.add((at, slot, seq), i, name, v);
    }
    for (name, v) in sink.drain_aggregates() {
        collector.add_aggregate(slot, name, v);
    }
}

type Pair = Arc<(HostPicture, HostPicture)>;

/// A pair's host pictures: moved in, borrowed for the call, or shared.
enum Pictures<'a> {
    Owned(HostPicture, HostPicture),
    Borrowed(&'a HostPicture, &'a HostPicture),
    Shared(Pair),
}

impl Pictures<'_> {
    fn refs(&self) -> (&HostPicture, &HostPicture) {
        match self {
            Pictures::Owned(r, d) => (r, d),
            Pictures::Borrowed(r, d) => (r, d),
            Pictures::Shared(p) => (&p.0, &p.1),
        }
    }

    /// Shared ownership, for worker threads (borrowed pictures are copied).
    fn into_pair(self) -> Pair {
        match self {
            Pictures::Owned(r, d) => Arc::new((r, d)),
            Pictures::Borrowed(r, d) => Arc::new((r.clone(), d.clone())),
            Pictures::Shared(p) => p,
        }
    }
}
/// The processing index of the final flush: after every frame.
const FLUSH: u32 = u32::MAX;
