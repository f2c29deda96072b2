//! `VmafContext`: libvmaf's scoring context over vmafx's [`Context`].
//!
//! libvmaf registers features and models before it knows the picture
//! format; vmafx's context is built for one format. So the C context keeps
//! what was registered and builds the engine at the first
//! `vmaf_read_pictures`. Frames' values are kept as libvmaf's feature
//! collector keeps them: what the engine produced (features, then the
//! mounted models' scores) plus imported scores and scores predicted on
//! demand by `vmaf_score_at_index`, which libvmaf writes too.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_double, c_int, c_uint};
use std::sync::Arc;

use super::dict::{take, VmafFeatureDictionary};
use super::error::{guard, invalid, required_str, CError, CResult};
use super::handles;
use super::model::{VmafModel, VmafModelCollection};
use super::picture::{self, format_of, PicturePool};
use super::types::*;
use crate::feature::RawOptions;
use crate::model::Model;
use crate::picture::PictureFormat;
use crate::pool::{PoolMethod, Pooler};
use crate::report::{self, FrameMetrics, OutputFormat, Precision, QualitySize, Report};
use crate::{Context, ContextBuilder};

type Values = Vec<(String, f64)>;

/// The C context.
pub struct VmafContext {
    cfg: VmafConfiguration,
    features: Vec<(String, RawOptions)>,
    models: Vec<Model>,
    engine: Option<Context>,
    format: Option<PictureFormat>,
    /// The engine's values per frame (features, then model scores).
    scored: BTreeMap<u32, Values>,
    /// Imported scores and predictions made on demand, per frame.
    extra: BTreeMap<u32, Values>,
    aggregate: Values,
    /// The engine's extraction CPU time, once flushed (libvmaf's `fps`).
    cpu_seconds: Option<f64>,
    pictures_read: u32,
    flushed: bool,
    pool: Option<Arc<PicturePool>>,
    /// The device of `vmaf_cuda_import_state`, and its device pictures.
    #[cfg(feature = "cuda")]
    gpu: Option<crate::gpu::Gpu>,
    #[cfg(feature = "cuda")]
    device_pictures: Option<super::cuda::DevicePictures>,
}

impl VmafContext {
    fn new(cfg: VmafConfiguration) -> Self {
        Self {
            cfg,
            features: Vec::new(),
            models: Vec::new(),
            engine: None,
            format: None,
            scored: BTreeMap::new(),
            extra: BTreeMap::new(),
            aggregate: Vec::new(),
            cpu_seconds: None,
            pictures_read: 0,
            flushed: false,
            pool: None,
            #[cfg(feature = "cuda")]
            gpu: None,
            #[cfg(feature = "cuda")]
            device_pictures: None,
        }
    }

    /// Scores on `gpu` (`vmaf_cuda_import_state`), unless `cfg.gpumask`
    /// turns the GPU off.
    #[cfg(feature = "cuda")]
    pub(crate) fn set_gpu(&mut self, gpu: crate::gpu::Gpu) -> CResult {
        self.check_registering("a CUDA state imported")?;
        self.gpu = Some(gpu);
        Ok(())
    }

    /// Device pictures of `format` (`vmaf_cuda_preallocate_pictures`).
    #[cfg(feature = "cuda")]
    pub(crate) fn set_device_pictures(&mut self, format: PictureFormat) -> CResult {
        let gpu = self.gpu.as_ref().ok_or_else(|| {
            invalid("device pictures need a device: call vmaf_cuda_import_state first")
        })?;
        if self.device_pictures.is_some() || self.pool.is_some() {
            return Err(invalid("pictures were already preallocated"));
        }
        self.device_pictures = Some(super::cuda::DevicePictures::new(gpu, format)?);
        Ok(())
    }

    /// A host picture pool (`vmaf_cuda_preallocate_pictures` with a host
    /// method).
    #[cfg(feature = "cuda")]
    pub(crate) fn set_host_pool(&mut self, format: PictureFormat, count: usize) -> CResult {
        if self.pool.is_some() {
            return Err(invalid("pictures were already preallocated"));
        }
        self.pool = Some(PicturePool::new(format, count));
        Ok(())
    }

    /// A preallocated picture: a device one when there are any, else from
    /// the host pool.
    #[cfg(feature = "cuda")]
    pub(crate) fn fetch_any(&mut self, pic: &mut VmafPicture) -> CResult {
        if let Some(device) = &self.device_pictures {
            return device.fetch(pic);
        }
        let pool = self.pool.as_ref().ok_or_else(|| {
            invalid("no preallocated pictures: call vmaf_cuda_preallocate_pictures first")
        })?;
        picture::fetch(pool, pic);
        Ok(())
    }

    fn subsample(&self) -> u32 {
        self.cfg.n_subsample.max(1)
    }

    /// Registration is only possible before the engine exists.
    fn check_registering(&self, what: &str) -> CResult {
        if self.engine.is_some() || self.flushed {
            return Err(invalid(format!(
                "{what} after the first vmaf_read_pictures: register every feature and model first"
            )));
        }
        Ok(())
    }

    fn mount(&mut self, model: &Model) -> CResult {
        self.check_registering("a model registered")?;
        // Registering the same model twice extracts its features once, as
        // libvmaf's feature set does.
        if !self.models.iter().any(|m| m.name() == model.name()) {
            self.models.push(model.clone());
        }
        Ok(())
    }

    fn build(&self, format: PictureFormat) -> CResult<Context> {
        let mut builder = ContextBuilder::new(format)
            .threads(self.cfg.n_threads as usize)
            .subsample(self.subsample());
        for model in &self.models {
            builder = builder.model(model.clone());
        }
        for (name, options) in &self.features {
            builder = builder.feature(name, options.clone());
        }
        #[cfg(feature = "cuda")]
        if let Some(gpu) = self.gpu.as_ref().filter(|_| self.cfg.gpumask == 0) {
            builder = builder.gpu(gpu.clone());
        }
        Ok(builder.build()?)
    }

    /// Moves frames the engine finished into `scored`.
    fn collect_finished(&mut self) -> CResult {
        if let Some(engine) = &mut self.engine {
            for (i, values) in engine.take_finished()? {
                self.scored.insert(i, values);
            }
        }
        Ok(())
    }

    fn read(
        &mut self,
        reference: &mut VmafPicture,
        distorted: &mut VmafPicture,
        index: u32,
    ) -> CResult {
        if index != self.pictures_read {
            return Err(invalid(format!(
                "index {index}: pictures are scored in order, the next index is {}",
                self.pictures_read
            )));
        }
        let format = format_of(
            reference.pix_fmt,
            reference.bpc,
            reference.w[0],
            reference.h[0],
        )?;
        let other = format_of(
            distorted.pix_fmt,
            distorted.bpc,
            distorted.w[0],
            distorted.h[0],
        )?;
        if other != format {
            return Err(invalid(format!(
                "index {index}: the reference is {format}, the distorted picture {other}"
            )));
        }
        if let Some(first) = self.format {
            if first != format {
                return Err(invalid(format!(
                    "index {index}: pictures are {format}, the first pair was {first}"
                )));
            }
        }
        if self.engine.is_none() {
            self.engine = Some(self.build(format)?);
            self.format = Some(format);
        }
        #[cfg(feature = "cuda")]
        if super::cuda::is_device_picture(reference) || super::cuda::is_device_picture(distorted) {
            return self.read_device(reference, distorted, index);
        }
        // Both are checked before either is taken, so a refusal leaves both
        // to the caller.
        // SAFETY: both are pictures from vmaf_picture_alloc or the pool, per
        // vmaf_read_pictures' contract.
        unsafe {
            picture::check_readable(reference, "ref")?;
            picture::check_readable(distorted, "dist")?;
        }
        // SAFETY: as above.
        let (r, d) = unsafe {
            (
                picture::take_for_scoring(reference, "ref")?,
                picture::take_for_scoring(distorted, "dist")?,
            )
        };
        self.pictures_read += 1;
        self.engine.as_mut().expect("built above").submit(r, d)?;
        self.collect_finished()
    }

    /// A pair of device pictures, scored in place on the device.
    #[cfg(feature = "cuda")]
    fn read_device(
        &mut self,
        reference: &mut VmafPicture,
        distorted: &mut VmafPicture,
        index: u32,
    ) -> CResult {
        if !(super::cuda::is_device_picture(reference) && super::cuda::is_device_picture(distorted))
        {
            return Err(invalid(format!(
                "index {index}: one picture is a CUDA device picture and the other is not"
            )));
        }
        if self.gpu.is_none() || self.cfg.gpumask != 0 {
            return Err(invalid(format!(
                "index {index}: CUDA device pictures, but the context scores on the CPU (gpumask {:#x})",
                self.cfg.gpumask
            )));
        }
        let r = super::cuda::take_frame(reference, "ref")?;
        let d = super::cuda::take_frame(distorted, "dist")?;
        self.pictures_read += 1;
        self.engine.as_mut().expect("built").submit_frames(&r, &d)?;
        self.collect_finished()
    }

    fn flush(&mut self) -> CResult {
        self.flushed = true;
        let Some(engine) = self.engine.take() else {
            return Ok(()); // nothing was read: nothing to flush
        };
        let scores = engine.finish()?;
        self.scored = scores.frames.into_iter().collect();
        self.aggregate = scores.aggregate;
        self.cpu_seconds = Some(scores.extraction_cpu_seconds);
        Ok(())
    }

    fn value(&self, name: &str, index: u32) -> Option<f64> {
        [&self.scored, &self.extra]
            .iter()
            .filter_map(|m| m.get(&index))
            .flat_map(|v| v.iter())
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }

    /// Refuses a frame the engine has not completed yet.
    fn check_complete(&self, index: u32) -> CResult {
        let complete = self
            .engine
            .as_ref()
            .map_or(self.pictures_read, |e| e.frames_complete());
        if index >= complete && !self.flushed && !self.extra.contains_key(&index) {
            return Err(invalid(format!(
                "frame {index} is not complete yet ({complete} of {} frames read are; later frames or a flush complete it)",
                self.pictures_read
            )));
        }
        Ok(())
    }

    fn feature_at(&mut self, name: &str, index: u32) -> CResult<f64> {
        self.collect_finished()?;
        if self.value(name, index).is_none() {
            self.check_complete(index)?;
        }
        self.value(name, index).ok_or_else(|| {
            invalid(format!(
                "no score '{name}' at index {index} ({} pictures read{})",
                self.pictures_read,
                if self.flushed {
                    ""
                } else {
                    ", not flushed yet"
                }
            ))
        })
    }

    /// A model's score at `index`, predicted from the frame's features and
    /// kept (so it is written too) when the engine did not compute it.
    fn model_at(&mut self, model: &Model, index: u32) -> CResult<f64> {
        self.collect_finished()?;
        if let Some(v) = self.value(model.name(), index) {
            return Ok(v);
        }
        self.check_complete(index)?;
        let requests = model.feature_requests()?;
        let prediction = model
            .predict_frame(&requests, index, |name| self.value(name, index))
            .map_err(CError::from)?;
        let outputs: Values = prediction.iter().map(|(n, v)| (n.to_string(), v)).collect();
        let score = prediction.score();
        self.extra.entry(index).or_default().extend(outputs);
        Ok(score)
    }

    /// libvmaf's pooling over `low..=high`, skipping frames left out by
    /// subsampling; `each` gives one frame's value.
    fn pool(
        &mut self,
        method: c_int,
        low: u32,
        high: u32,
        mut each: impl FnMut(&mut Self, u32) -> CResult<f64>,
    ) -> CResult<f64> {
        let method = pool_method(method)?;
        if low > high {
            return Err(invalid(format!("index_low {low} > index_high {high}")));
        }
        let mut pooler = Pooler::new();
        let subsample = self.subsample();
        for i in (low..=high).filter(|i| i % subsample == 0) {
            pooler.push(each(self, i)?);
        }
        let pooled = pooler.finish().ok_or_else(|| invalid("no frame to pool"))?;
        Ok(pooled.get(method))
    }

    fn report(&self) -> Report {
        let mut frames = Vec::new();
        let indices: std::collections::BTreeSet<u32> = self
            .scored
            .keys()
            .chain(self.extra.keys())
            .copied()
            .collect();
        for i in indices.into_iter().filter(|i| i % self.subsample() == 0) {
            let metrics: Values = [&self.scored, &self.extra]
                .iter()
                .filter_map(|m| m.get(&i))
                .flat_map(|v| v.iter().cloned())
                .collect();
            frames.push(FrameMetrics {
                frame_num: i,
                metrics,
            });
        }
        let fps = match self.cpu_seconds {
            Some(s) => self.pictures_read as f64 / s,
            None => f64::NAN,
        };
        let version = super::LIBVMAF_VERSION.to_str().expect("ASCII");
        Report::from_frames(version, fps, frames, self.aggregate.clone())
    }

    fn write(&mut self, path: &str, format: c_int) -> CResult {
        let format = match format {
            VMAF_OUTPUT_FORMAT_XML => OutputFormat::Xml,
            VMAF_OUTPUT_FORMAT_JSON => OutputFormat::Json,
            VMAF_OUTPUT_FORMAT_CSV => OutputFormat::Csv,
            VMAF_OUTPUT_FORMAT_SUB => OutputFormat::Sub,
            other => {
                return Err(invalid(format!(
                    "output format {other}: not one of XML (1), JSON (2), CSV (3), SUB (4)"
                )))
            }
        };
        self.collect_finished()?;
        let precision = output_precision()?;
        let report = self.report();
        let size = self.format.map_or(
            QualitySize {
                width: 0,
                height: 0,
            },
            |f| QualitySize {
                width: f.width,
                height: f.height,
            },
        );
        let file = std::fs::File::create(path)
            .map_err(|e| invalid(format!("could not open file: {path}: {e}")))?;
        let mut out = std::io::BufWriter::new(file);
        report::write_report(&report, format, precision, size, &mut out)
            .and_then(|()| std::io::Write::flush(&mut out))
            .map_err(|e| CError {
                errno: super::error::EIO,
                message: format!("writing {path}: {e}"),
            })
    }
}

/// The precision `vmaf_write_output` prints with: libvmaf's (`%.6f`), or
/// `VMAFX_OUTPUT_PRECISION` (`max`, `legacy`, or a digit count), a vmafx
/// extension for lossless logs from unmodified clients.
fn output_precision() -> CResult<Precision> {
    match std::env::var("VMAFX_OUTPUT_PRECISION") {
        Ok(text) => {
            Precision::parse(&text).map_err(|e| invalid(format!("VMAFX_OUTPUT_PRECISION: {e}")))
        }
        Err(_) => Ok(Precision::Legacy),
    }
}

pub(super) fn pool_method(method: c_int) -> CResult<PoolMethod> {
    match method {
        VMAF_POOL_METHOD_MIN => Ok(PoolMethod::Min),
        VMAF_POOL_METHOD_MAX => Ok(PoolMethod::Max),
        VMAF_POOL_METHOD_MEAN => Ok(PoolMethod::Mean),
        VMAF_POOL_METHOD_HARMONIC_MEAN => Ok(PoolMethod::HarmonicMean),
        other => Err(invalid(format!(
            "pool method {other}: not one of MIN (1), MAX (2), MEAN (3), HARMONIC_MEAN (4)"
        ))),
    }
}

/// The context behind a C pointer.
///
/// # Safety
/// `vmaf` is NULL or from `vmaf_init` and not closed.
unsafe fn context<'a>(vmaf: *mut VmafContext) -> CResult<&'a mut VmafContext> {
    // SAFETY: the caller's promise; closed or unknown handles are refused.
    unsafe { handles::get(vmaf, "vmaf (the context)") }
}

/// # Safety
/// `ptr` is NULL or points to a live `T` made by this library.
unsafe fn live<'a, T: 'static>(ptr: *mut T, what: &str) -> CResult<&'a mut T> {
    // SAFETY: the caller's promise; destroyed or unknown handles are refused.
    unsafe { handles::get(ptr, what) }
}

fn out<'a, T>(ptr: *mut T, what: &str) -> CResult<&'a mut T> {
    // SAFETY: C passes a writable pointer for results, or NULL.
    unsafe { ptr.as_mut() }.ok_or_else(|| invalid(format!("{what} is NULL")))
}

/// `int vmaf_init(VmafContext **vmaf, VmafConfiguration cfg)`.
///
/// # Safety
/// `vmaf` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn vmaf_init(vmaf: *mut *mut VmafContext, cfg: VmafConfiguration) -> c_int {
    super::error::set_log_level(cfg.log_level);
    guard("vmaf_init", || {
        let slot = out(vmaf, "vmaf")?;
        if cfg.n_threads as usize > ContextBuilder::MAX_THREADS {
            return Err(invalid(format!(
                "n_threads {}: at most {}",
                cfg.n_threads,
                ContextBuilder::MAX_THREADS
            )));
        }
        crate::cpu::restrict_by_cpumask(cfg.cpumask);
        *slot = handles::hand_out(VmafContext::new(cfg));
        Ok(())
    })
}

/// `int vmaf_close(VmafContext *vmaf)`: frees the context (unflushed
/// work is dropped); a closed context is refused by every later call.
///
/// # Safety
/// `vmaf` is NULL or from `vmaf_init` and not closed.
#[no_mangle]
pub unsafe extern "C" fn vmaf_close(vmaf: *mut VmafContext) -> c_int {
    guard("vmaf_close", || {
        // SAFETY: the caller's promise; closed or unknown handles are refused.
        drop(unsafe { handles::take_back(vmaf, "vmaf (the context)") }?);
        Ok(())
    })
}

/// `int vmaf_use_feature(VmafContext *vmaf, const char *feature_name,
/// VmafFeatureDictionary *opts_dict)`: takes ownership of `opts_dict` on
/// success (on failure the caller frees it, as with libvmaf).
///
/// # Safety
/// `vmaf` live; `feature_name` NUL-terminated; `opts_dict` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn vmaf_use_feature(
    vmaf: *mut VmafContext,
    feature_name: *const c_char,
    opts_dict: *mut VmafFeatureDictionary,
) -> c_int {
    guard("vmaf_use_feature", || {
        // SAFETY: the caller's promise.
        let ctx = unsafe { context(vmaf) }?;
        // SAFETY: the caller's promise.
        let name = unsafe { required_str(feature_name, "feature_name") }?;
        ctx.check_registering("a feature registered")?;
        let info = crate::feature::find(name)?;
        // SAFETY: NULL or a live dictionary, whose ownership passes here.
        let options = if opts_dict.is_null() {
            RawOptions::new()
        } else {
            // SAFETY: live, per the caller.
            let entries = unsafe { &(*opts_dict).entries };
            crate::feature::Options::resolve(name, info.options, entries)?;
            // SAFETY: checked valid; now owned here.
            unsafe { take(opts_dict) }
        };
        ctx.features.push((name.to_string(), options));
        Ok(())
    })
}

/// `int vmaf_use_features_from_model(VmafContext *vmaf, VmafModel *model)`:
/// extracts the model's features and scores every frame with it.
///
/// # Safety
/// `vmaf` and `model` are NULL or live.
#[no_mangle]
pub unsafe extern "C" fn vmaf_use_features_from_model(
    vmaf: *mut VmafContext,
    model: *mut VmafModel,
) -> c_int {
    guard("vmaf_use_features_from_model", || {
        // SAFETY: the caller's promise.
        let (ctx, model) = unsafe { (context(vmaf)?, live(model, "model")?) };
        ctx.mount(&model.model)
    })
}

/// `int vmaf_use_features_from_model_collection(VmafContext *vmaf,
/// VmafModelCollection *model_collection)`.
///
/// # Safety
/// `vmaf` and `model_collection` are NULL or live.
#[no_mangle]
pub unsafe extern "C" fn vmaf_use_features_from_model_collection(
    vmaf: *mut VmafContext,
    model_collection: *mut VmafModelCollection,
) -> c_int {
    guard("vmaf_use_features_from_model_collection", || {
        // SAFETY: the caller's promise.
        let (ctx, c) = unsafe { (context(vmaf)?, live(model_collection, "model_collection")?) };
        ctx.mount(&c.model)
    })
}

/// `int vmaf_import_feature_score(VmafContext *vmaf, const char *feature_name,
/// double value, unsigned index)`.
///
/// # Safety
/// `vmaf` live; `feature_name` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn vmaf_import_feature_score(
    vmaf: *mut VmafContext,
    feature_name: *const c_char,
    value: c_double,
    index: c_uint,
) -> c_int {
    guard("vmaf_import_feature_score", || {
        // SAFETY: the caller's promise.
        let ctx = unsafe { context(vmaf) }?;
        // SAFETY: the caller's promise.
        let name = unsafe { required_str(feature_name, "feature_name") }?;
        ctx.collect_finished()?;
        if ctx.value(name, index).is_some() {
            return Err(invalid(format!(
                "'{name}' at index {index} already has a score"
            )));
        }
        ctx.extra
            .entry(index)
            .or_default()
            .push((name.to_string(), value));
        Ok(())
    })
}

/// `int vmaf_read_pictures(VmafContext *vmaf, VmafPicture *ref,
/// VmafPicture *dist, unsigned index)`: takes both pictures (the caller must
/// not unreference them) and scores them as frame `index`; indices start at
/// 0 and rise by one. Both NULL: flush (every frame is then complete).
///
/// # Safety
/// `vmaf` live; `ref` and `dist` NULL or pictures from `vmaf_picture_alloc`
/// or the picture pool.
#[no_mangle]
pub unsafe extern "C" fn vmaf_read_pictures(
    vmaf: *mut VmafContext,
    r#ref: *mut VmafPicture,
    dist: *mut VmafPicture,
    index: c_uint,
) -> c_int {
    guard("vmaf_read_pictures", || {
        // SAFETY: the caller's promise.
        let ctx = unsafe { context(vmaf) }?;
        if ctx.flushed {
            return Err(invalid("the context was flushed: no more pictures"));
        }
        // SAFETY: NULL or live pictures, per the caller.
        match unsafe { (r#ref.as_mut(), dist.as_mut()) } {
            (None, None) => ctx.flush(),
            (Some(r), Some(d)) => ctx.read(r, d, index),
            _ => Err(invalid("one of ref and dist is NULL (both NULL flushes)")),
        }
    })
}

/// `int vmaf_feature_score_at_index(VmafContext *vmaf, const char *feature_name,
/// double *score, unsigned index)`.
///
/// # Safety
/// `vmaf` live; `feature_name` NUL-terminated; `score` writable.
#[no_mangle]
pub unsafe extern "C" fn vmaf_feature_score_at_index(
    vmaf: *mut VmafContext,
    feature_name: *const c_char,
    score: *mut c_double,
    index: c_uint,
) -> c_int {
    guard("vmaf_feature_score_at_index", || {
        // SAFETY: the caller's promise.
        let ctx = unsafe { context(vmaf) }?;
        // SAFETY: the caller's promise.
        let name = unsafe { required_str(feature_name, "feature_name") }?;
        let score = out(score, "score")?;
        *score = ctx.feature_at(name, index)?;
        Ok(())
    })
}

/// `int vmaf_score_at_index(VmafContext *vmaf, VmafModel *model,
/// double *score, unsigned index)`.
///
/// # Safety
/// `vmaf` and `model` live; `score` writable.
#[no_mangle]
pub unsafe extern "C" fn vmaf_score_at_index(
    vmaf: *mut VmafContext,
    model: *mut VmafModel,
    score: *mut c_double,
    index: c_uint,
) -> c_int {
    guard("vmaf_score_at_index", || {
        // SAFETY: the caller's promise.
        let (ctx, model) = unsafe { (context(vmaf)?, live(model, "model")?) };
        let score = out(score, "score")?;
        *score = ctx.model_at(&model.model, index)?;
        Ok(())
    })
}

/// The statistics of a collection at one frame.
fn collection_score(
    ctx: &mut VmafContext,
    c: &Model,
    index: u32,
    score: &mut VmafModelCollectionScore,
) -> CResult {
    ctx.model_at(c, index)?;
    let stat = |suffix: &str| {
        let name = format!("{}{suffix}", c.name());
        ctx.value(&name, index)
            .ok_or_else(|| invalid(format!("no '{name}' at index {index}")))
    };
    *score = VmafModelCollectionScore {
        r#type: VMAF_MODEL_COLLECTION_SCORE_BOOTSTRAP,
        bootstrap: BootstrapScore {
            bagging_score: stat("_bagging")?,
            stddev: stat("_stddev")?,
            ci_p95_lo: stat("_ci_p95_lo")?,
            ci_p95_hi: stat("_ci_p95_hi")?,
        },
    };
    Ok(())
}

/// `int vmaf_score_at_index_model_collection(VmafContext *vmaf,
/// VmafModelCollection *model_collection, VmafModelCollectionScore *score,
/// unsigned index)`.
///
/// # Safety
/// `vmaf` and `model_collection` live; `score` writable.
#[no_mangle]
pub unsafe extern "C" fn vmaf_score_at_index_model_collection(
    vmaf: *mut VmafContext,
    model_collection: *mut VmafModelCollection,
    score: *mut VmafModelCollectionScore,
    index: c_uint,
) -> c_int {
    guard("vmaf_score_at_index_model_collection", || {
        // SAFETY: the caller's promise.
        let (ctx, c) = unsafe { (context(vmaf)?, live(model_collection, "model_collection")?) };
        collection_score(ctx, &c.model, index, out(score, "score")?)
    })
}

/// `int vmaf_feature_score_pooled(VmafContext *vmaf, const char *feature_name,
/// enum VmafPoolingMethod pool_method, double *score, unsigned index_low,
/// unsigned index_high)`.
///
/// # Safety
/// `vmaf` live; `feature_name` NUL-terminated; `score` writable.
#[no_mangle]
pub unsafe extern "C" fn vmaf_feature_score_pooled(
    vmaf: *mut VmafContext,
    feature_name: *const c_char,
    pool_method: c_int,
    score: *mut c_double,
    index_low: c_uint,
    index_high: c_uint,
) -> c_int {
    guard("vmaf_feature_score_pooled", || {
        // SAFETY: the caller's promise.
        let ctx = unsafe { context(vmaf) }?;
        // SAFETY: the caller's promise.
        let name = unsafe { required_str(feature_name, "feature_name") }?;
        let score = out(score, "score")?;
        *score = ctx.pool(pool_method, index_low, index_high, |c, i| {
            c.feature_at(name, i)
        })?;
        Ok(())
    })
}

/// `int vmaf_score_pooled(VmafContext *vmaf, VmafModel *model,
/// enum VmafPoolingMethod pool_method, double *score, unsigned index_low,
/// unsigned index_high)`.
///
/// # Safety
/// `vmaf` and `model` live; `score` writable.
#[no_mangle]
pub unsafe extern "C" fn vmaf_score_pooled(
    vmaf: *mut VmafContext,
    model: *mut VmafModel,
    pool_method: c_int,
    score: *mut c_double,
    index_low: c_uint,
    index_high: c_uint,
) -> c_int {
    guard("vmaf_score_pooled", || {
        // SAFETY: the caller's promise.
        let (ctx, model) = unsafe { (context(vmaf)?, live(model, "model")?) };
        let score = out(score, "score")?;
        let m = &model.model;
        *score = ctx.pool(pool_method, index_low, index_high, |c, i| c.model_at(m, i))?;
        Ok(())
    })
}

/// `int vmaf_score_pooled_model_collection(VmafContext *vmaf,
/// VmafModelCollection *model_collection, enum VmafPoolingMethod pool_method,
/// VmafModelCollectionScore *score, unsigned index_low, unsigned index_high)`.
///
/// # Safety
/// `vmaf` and `model_collection` live; `score` writable.
#[no_mangle]
pub unsafe extern "C" fn vmaf_score_pooled_model_collection(
    vmaf: *mut VmafContext,
    model_collection: *mut VmafModelCollection,
    pool_method: c_int,
    score: *mut VmafModelCollectionScore,
    index_low: c_uint,
    index_high: c_uint,
) -> c_int {
    guard("vmaf_score_pooled_model_collection", || {
        // SAFETY: the caller's promise.
        let (ctx, c) = unsafe { (context(vmaf)?, live(model_collection, "model_collection")?) };
        let score = out(score, "score")?;
        let m = &c.model;
        let mut pooled = [0.0; 4];
        for (k, suffix) in ["_bagging", "_stddev", "_ci_p95_lo", "_ci_p95_hi"]
            .iter()
            .enumerate()
        {
            let name = format!("{}{suffix}", m.name());
            pooled[k] = ctx.pool(pool_method, index_low, index_high, |c, i| {
                c.model_at(m, i)?;
                c.feature_at(&name, i)
            })?;
        }
        *score = VmafModelCollectionScore {
            r#type: VMAF_MODEL_COLLECTION_SCORE_BOOTSTRAP,
            bootstrap: BootstrapScore {
                bagging_score: pooled[0],
                stddev: pooled[1],
                ci_p95_lo: pooled[2],
                ci_p95_hi: pooled[3],
            },
        };
        Ok(())
    })
}

/// `int vmaf_preallocate_pictures(VmafContext *vmaf, VmafPictureConfiguration cfg)`.
///
/// # Safety
/// `vmaf` live.
#[no_mangle]
pub unsafe extern "C" fn vmaf_preallocate_pictures(
    vmaf: *mut VmafContext,
    cfg: VmafPictureConfiguration,
) -> c_int {
    guard("vmaf_preallocate_pictures", || {
        // SAFETY: the caller's promise.
        let ctx = unsafe { context(vmaf) }?;
        if ctx.pool.is_some() {
            return Err(invalid("pictures were already preallocated"));
        }
        let p = cfg.pic_params;
        let format = format_of(p.pix_fmt, p.bpc, p.w, p.h)?;
        if cfg.pic_cnt == 0 || cfg.pic_cnt > 1024 {
            return Err(invalid(format!(
                "pic_cnt {}: must be 1 to 1024",
                cfg.pic_cnt
            )));
        }
        ctx.pool = Some(PicturePool::new(format, cfg.pic_cnt as usize));
        Ok(())
    })
}

/// `int vmaf_fetch_preallocated_picture(VmafContext *vmaf, VmafPicture *pic)`.
///
/// # Safety
/// `vmaf` live; `pic` writable.
#[no_mangle]
pub unsafe extern "C" fn vmaf_fetch_preallocated_picture(
    vmaf: *mut VmafContext,
    pic: *mut VmafPicture,
) -> c_int {
    guard("vmaf_fetch_preallocated_picture", || {
        // SAFETY: the caller's promise.
        let ctx = unsafe { context(vmaf) }?;
        let pic = out(pic, "pic")?;
        let pool = ctx
            .pool
            .as_ref()
            .ok_or_else(|| invalid("no picture pool: call vmaf_preallocate_pictures first"))?;
        picture::fetch(pool, pic);
        Ok(())
    })
}

/// `int vmaf_write_output(VmafContext *vmaf, const char *output_path,
/// enum VmafOutputFormat fmt)`.
///
/// # Safety
/// `vmaf` live; `output_path` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn vmaf_write_output(
    vmaf: *mut VmafContext,
    output_path: *const c_char,
    fmt: c_int,
) -> c_int {
    guard("vmaf_write_output", || {
        // SAFETY: the caller's promise.
        let ctx = unsafe { context(vmaf) }?;
        // SAFETY: the caller's promise.
        let path = unsafe { required_str(output_path, "output_path") }?;
        ctx.write(path, fmt)
    })
}
