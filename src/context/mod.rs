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
use crate::picture::{HostPicture, PictureBuffer, PictureFormat, PicturePool, PlaneMask};
use crate::pool::{PooledMetric, Pooler};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod frames;
mod gpu;
mod gpu_frames;
mod threaded;

use frames::FrameQueue;
use gpu::GpuEngine;
use threaded::Workers;

/// The extractors libvmaf flags `VMAF_FEATURE_EXTRACTOR_TEMPORAL`: with a
/// worker pool it runs them on the calling thread before the pool's, so
/// their features lead each frame's list.
const LIBVMAF_INLINE: [&str; 3] = ["float_motion", "psnr", "speed_temporal"];

/// One extractor of the run's set, with its resolved options.
struct Slot {
    info: &'static ExtractorInfo,
    options: Options,
    temporal: bool,
    /// Requests of other extractors this slot's instance also serves
    /// ([`ExtractorInfo::joint`]: e.g. `motion_v2` next to `motion`).
    joined: Vec<(&'static ExtractorInfo, Options)>,
    /// The planes its instances read.
    planes: PlaneMask,
    /// The instance made when the slot was planned (to check the options
    /// against the format and learn what it reads), handed to the first
    /// [`Slot::create`]: an extractor's buffers are allocated and faulted
    /// in once, not once more for the check. Dropped once the engine is
    /// built.
    spare: Mutex<Option<Box<dyn Extractor>>>,
}

impl Slot {
    fn new(info: &'static ExtractorInfo, options: Options, probe: Box<dyn Extractor>) -> Self {
        Self {
            info,
            options,
            temporal: probe.temporal(),
            joined: Vec::new(),
            planes: probe.planes(),
            spare: Mutex::new(Some(probe)),
        }
    }

    /// An instance for `format` (the builder's, which the spare was made
    /// for).
    fn create(&self, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
        if let Some(spare) = self.take_spare() {
            return Ok(spare);
        }
        match self.info.joint {
            Some(joint) if !self.joined.is_empty() => (joint.create)(&self.requests(), format)
                .expect("a joined slot's requests were accepted together"),
            _ => (self.info.create)(&self.options, format),
        }
    }

    fn take_spare(&self) -> Option<Box<dyn Extractor>> {
        self.spare
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    /// Every request the slot serves: its own, then the joined ones.
    fn requests(&self) -> Vec<(&'static ExtractorInfo, &Options)> {
        std::iter::once((self.info, &self.options))
            .chain(self.joined.iter().map(|(i, o)| (*i, o)))
            .collect()
    }

    /// Whether the slot already has a request of the same feature name as
    /// `info` with `options`: the extractor and its naming options' values
    /// (libvmaf's `vmaf_feature_name_from_options`). libvmaf keeps the
    /// first instance of a name and drops later ones, whatever their other
    /// options (`vif` then `vif=debug=true` gives no debug outputs).
    fn serves(&self, info: &ExtractorInfo, options: &Options) -> bool {
        self.requests()
            .iter()
            .any(|(i, o)| i.name == info.name && o.name_suffix() == options.name_suffix())
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
                // The joint instance serves every request: it is the spare.
                let probe = probe?;
                self.joined.push((info, options.clone()));
                self.planes = probe.planes();
                *self
                    .spare
                    .get_mut()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(probe);
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

    /// Adds the default model, `vmaf_v0.6.1` (what the command line scores
    /// without `-m`): its pooled score is then `scores.pooled("vmaf")`.
    pub fn default_model(self) -> Self {
        self.model(Model::default_model())
    }

    /// Adds an extractor by libvmaf name (or alias) with `key=value`
    /// options. As in libvmaf, a request whose feature name (the extractor
    /// and the options that name its outputs) an earlier request or a
    /// model already has is dropped, its other options (`debug`,
    /// `enable_mse`, ...) with it; models' extractors come first.
    /// Extractors that do the same work share one instance (`motion` and
    /// `motion_v2`: one SAD per frame), on the CPU and the GPU.
    pub fn feature(mut self, name: &str, options: RawOptions) -> Self {
        self.features.push((name.to_string(), options));
        self
    }

    /// The most worker threads [`ContextBuilder::threads`] accepts: more
    /// than any machine's cores, and each thread holds its own extractors.
    pub const MAX_THREADS: usize = 1024;

    /// Worker threads; 0 or 1 runs every extractor on the calling thread.
    /// At most [`ContextBuilder::MAX_THREADS`].
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
        if self.threads > Self::MAX_THREADS {
            return Err(Error::InvalidArgument(format!(
                "threads {}: at most {} worker threads",
                self.threads,
                Self::MAX_THREADS
            )));
        }
        check_model_names(&self.models)?;
        let pictures = self.picture_pool();
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
            // Extractors that share their work share an instance (on the
            // GPU too: its versions take the slot's requests).
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
            // Creating one instance up front checks the options against the
            // picture format and tells whether the extractor is temporal.
            let probe = (info.create)(&options, &self.format)?;
            slots.push(Slot::new(info, options, probe));
        }
        let engine = if let Some(gpu) = &self.gpu {
            let mut engine = GpuEngine::start(gpu, &slots, &self.format, self.threads)?;
            engine
                .imported
                .configure(self.fence_timeout, self.allow_device_copy);
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
        // Spares no engine took (a GPU engine's, a lane's beyond the
        // first) hold a CPU extractor's buffers for nothing.
        for slot in &slots {
            drop(slot.take_spare());
        }
        let mut collector = FeatureCollector::new(slots.len());
        let temporal: Vec<bool> = slots.iter().map(|s| s.temporal).collect();
        collector.plan(&temporal, self.subsample);
        if self.threads >= 1 {
            // libvmaf with a worker pool (any thread count but 0) writes its
            // temporal extractors' features before the pool's.
            let first: Vec<bool> = slots
                .iter()
                .map(|s| LIBVMAF_INLINE.contains(&s.info.name))
                .collect();
            collector.write_first(&first);
        }
        Ok(Context {
            format: self.format,
            subsample: self.subsample,
            collector,
            slots,
            models,
            engine,
            next_index: 0,
            error: None,
            frames: FrameQueue::new(self.fence_timeout),
            stream: FrameStream::default(),
            pictures,
        })
    }

    /// The context's pool: pinned buffers on a GPU (uploads read them
    /// directly), heap buffers otherwise. It keeps what a producer reading
    /// ahead, the frames in flight and the worker threads' queues hold.
    fn picture_pool(&self) -> PicturePool {
        let keep = 16 + 4 * self.threads;
        match &self.gpu {
            Some(gpu) => {
                let gpu = gpu.clone();
                PicturePool::with_buffers(self.format, keep, move |bytes| {
                    Ok(Box::new(gpu.pinned(bytes)?) as Box<dyn PictureBuffer>)
                })
            }
            None => PicturePool::new(self.format, keep),
        }
    }
}

/// Refuses two models that report under one name (as the `vmaf` tool does):
/// their scores would overwrite each other.
fn check_model_names(models: &[Model]) -> Result<()> {
    for (i, later) in models.iter().enumerate() {
        for earlier in &models[..i] {
            if let Some(name) = later
                .output_names()
                .iter()
                .find(|n| earlier.output_names().contains(n))
            {
                return Err(Error::InvalidArgument(format!(
                    "models {} and {} both report '{name}': give each model its own name \
                     (--model ...:name=NAME)",
                    earlier.label(),
                    later.label()
                )));
            }
        }
    }
    Ok(())
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
    /// Frames handed out as they finish (see [`Context::on_frame`]).
    stream: FrameStream,
    /// Pictures to fill, reused (see [`Context::picture`]).
    pictures: PicturePool,
}

/// One scored frame: its index and its values (features, then model
/// scores), as [`FeatureScores::frames`] holds them.
pub type FrameValues = (u32, Vec<(String, f64)>);

/// Called with each scored frame's values as soon as the frame is complete.
pub type FrameCallback = Box<dyn FnMut(u32, &[(String, f64)]) + Send>;

/// Scored frames handed out while the run goes on, in frame order.
#[derive(Default)]
struct FrameStream {
    /// Someone asked for frames as they finish: compute them then.
    on: bool,
    callback: Option<FrameCallback>,
    /// Frames below this are published.
    published: u32,
    /// Published frames not yet taken by [`Context::take_finished`].
    ready: std::collections::VecDeque<FrameValues>,
    /// Every published frame, for pooling and `score_at`.
    done: Vec<FrameValues>,
}

impl FrameStream {
    /// Publishes the frames that completed since the last call (when
    /// someone asked for them).
    fn publish(
        &mut self,
        collector: &FeatureCollector,
        models: &[(Model, Vec<FeatureRequest>)],
        subsample: u32,
    ) -> Result<()> {
        if !self.on {
            return Ok(());
        }
        let complete = collector.complete_frames();
        while self.published < complete {
            let i = self.published;
            self.published += 1;
            if !i.is_multiple_of(subsample) {
                continue;
            }
            let mut values = collector.frame(i);
            predict(models, i, &mut values)?;
            if let Some(callback) = &mut self.callback {
                callback(i, &values);
            }
            self.ready.push_back((i, values.clone()));
            self.done.push((i, values));
        }
        Ok(())
    }
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
    /// Process CPU seconds from the first feature value collected to the
    /// end of extraction (before prediction): libvmaf's feature-collector
    /// timer, which the `vmaf` tool's `fps` divides the frame count by.
    pub extraction_cpu_seconds: f64,
}

impl FeatureScores {
    /// The value of feature or model output `name` (e.g. `vmaf`,
    /// `integer_adm2`, `psnr_y`) at frame `frame`.
    pub fn get(&self, frame: u32, name: &str) -> Option<f64> {
        let (_, values) = self.frames.iter().find(|(i, _)| *i == frame)?;
        values.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }

    /// `name`'s value in every scored frame that has it, in frame order.
    pub fn values(&self, name: &str) -> Vec<(u32, f64)> {
        self.frames
            .iter()
            .filter_map(|(i, values)| {
                values
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| (*i, *v))
            })
            .collect()
    }

    /// `name` pooled over the scored frames (min, max, mean, harmonic mean,
    /// bit for bit as libvmaf pools), or `None` when no frame has it or
    /// some frame lacks it (where libvmaf's pooling fails too). A model's
    /// pooled score is `pooled("vmaf")` (or the model's name).
    pub fn pooled(&self, name: &str) -> Option<PooledMetric> {
        pool_named(self.frames.iter().map(|(_, v)| v.as_slice()), name)
    }

    /// The names of the first frame's values, in order.
    pub fn names(&self) -> Vec<&str> {
        self.frames
            .first()
            .map(|(_, v)| v.iter().map(|(n, _)| n.as_str()).collect())
            .unwrap_or_default()
    }

    /// The whole-run value `name` (psnr's `apsnr_y`).
    pub fn aggregate(&self, name: &str) -> Option<f64> {
        self.aggregate
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }
}

/// Pools `name` over frames; `None` if no frame has it or one lacks it.
fn pool_named<'a>(
    frames: impl Iterator<Item = &'a [(String, f64)]>,
    name: &str,
) -> Option<PooledMetric> {
    let mut pooler = Pooler::new();
    for values in frames {
        let (_, v) = values.iter().find(|(n, _)| n == name)?;
        pooler.push(*v);
    }
    pooler.finish()
}

impl Context {
    pub fn format(&self) -> &PictureFormat {
        &self.format
    }

    /// A picture of the context's format to fill and submit, its memory
    /// reused from pictures this context has finished reading: the way to
    /// make a picture per frame without allocating one. On a GPU its memory
    /// is pinned and the upload reads it where it is. Its samples are
    /// whatever the last frame left: fill every plane.
    pub fn picture(&self) -> Result<HostPicture> {
        self.pictures.picture()
    }

    /// The pool [`Context::picture`] draws from, to share with threads
    /// that fill pictures (a clone shares the pool).
    pub fn picture_pool(&self) -> &PicturePool {
        &self.pictures
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
        self.collector.submitted(index);
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
                        self.collector.processed(slot, index);
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
        self.publish()
    }

    /// Calls `callback` with each scored frame's values (features, then
    /// model scores, as [`FeatureScores::frames`] holds them) as soon as the
    /// frame and every frame its temporal features look at are done, in
    /// frame order, from `submit`/`submit_frames` or `finish` on the caller's
    /// thread. Frames already complete are handed over at once.
    pub fn on_frame(&mut self, callback: impl FnMut(u32, &[(String, f64)]) + Send + 'static) {
        self.stream.on = true;
        self.stream.callback = Some(Box::new(callback));
        if let Err(e) = self.publish() {
            self.error.get_or_insert(e);
        }
    }

    /// The scored frames that completed since the last call, in frame order
    /// (an iterator over a snapshot: call again after more submits).
    pub fn take_finished(&mut self) -> Result<std::collections::vec_deque::IntoIter<FrameValues>> {
        self.stream.on = true;
        self.publish()?;
        Ok(std::mem::take(&mut self.stream.ready).into_iter())
    }

    /// How many leading frames are complete: their values will not change.
    pub fn frames_complete(&self) -> u32 {
        self.collector.complete_frames()
    }

    /// The values of scored frame `index` (libvmaf's
    /// `vmaf_score_at_index`): features and model scores, once the frame is
    /// complete.
    pub fn score_at(&mut self, index: u32) -> Result<Vec<(String, f64)>> {
        self.stream.on = true;
        self.publish()?;
        if let Some((_, values)) = self.stream.done.iter().find(|(i, _)| *i == index) {
            return Ok(values.clone());
        }
        Err(Error::InvalidArgument(
            if !index.is_multiple_of(self.subsample) {
                format!("frame {index} is not scored (subsample {})", self.subsample)
            } else {
                format!(
                    "frame {index} is not complete yet ({} of {} submitted frames are)",
                    self.collector.complete_frames(),
                    self.next_index
                )
            },
        ))
    }

    /// `name` pooled over the scored frames complete so far (min, max, mean
    /// and harmonic mean, as libvmaf pools), or `None` before the first
    /// frame or for a name no frame has.
    pub fn pooled_so_far(&mut self, name: &str) -> Result<Option<PooledMetric>> {
        self.stream.on = true;
        self.publish()?;
        Ok(pool_named(
            self.stream.done.iter().map(|(_, v)| v.as_slice()),
            name,
        ))
    }

    /// Publishes the frames that completed since the last call.
    fn publish(&mut self) -> Result<()> {
        self.stream
            .publish(&self.collector, &self.models, self.subsample)
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
        let extraction_cpu_seconds = self.collector.cpu_since_first_value().as_secs_f64();
        self.collector.flushed();
        self.stream
            .publish(&self.collector, &self.models, self.subsample)?;
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
            extraction_cpu_seconds,
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
