//! Python bindings of vmafx (`import vmafx`): files scored as the command
//! line scores them, a `Context` fed with numpy (or any buffer-protocol)
//! planes, results as frames finish, and `python -m vmafx`.
//!
//! Host planes are copied into the engine's pictures (one copy, as a file
//! read is); CUDA device arrays (`__dlpack__`, `__cuda_array_interface__`)
//! are read in place on a GPU context (`device.rs`). The GIL is released
//! while frames are scored. Errors raise `vmafx.VmafxError` with the
//! engine's message.

mod device;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use vmafx::gpu::{DeviceSelector, Gpu, GpuBackend};
use vmafx::io::open;
use vmafx::model::{Model, ModelSpec};
use vmafx::pool::PooledMetric;
use vmafx::{
    ChromaSubsampling, ContextBuilder, FeatureScores, HostPicture, PictureFormat, PlaneId,
};

create_exception!(
    _vmafx,
    VmafxError,
    PyException,
    "An error of vmafx: its message says what was wrong."
);

fn err(e: vmafx::Error) -> PyErr {
    VmafxError::new_err(e.to_string())
}

fn bad(message: impl Into<String>) -> PyErr {
    VmafxError::new_err(message.into())
}

/// A builder from the options Python passes.
fn builder(
    format: PictureFormat,
    models: &[String],
    features: &[String],
    threads: usize,
    subsample: u32,
) -> PyResult<ContextBuilder> {
    let mut b = ContextBuilder::new(format)
        .threads(threads)
        .subsample(subsample);
    for m in models {
        // A bare name is a built-in version, as `model="vmaf_v0.6.1"`.
        let spec = if m.contains('=') {
            m.clone()
        } else {
            format!("version={m}")
        };
        b = b.model(Model::load(&ModelSpec::parse(&spec).map_err(err)?).map_err(err)?);
    }
    for f in features {
        let (name, options) = vmafx::feature::options::parse_feature_spec(f).map_err(err)?;
        b = b.feature(&name, options);
    }
    Ok(b)
}

/// What a run produced: per-frame values and pooled scores.
#[pyclass(module = "vmafx", frozen)]
struct Result {
    scores: FeatureScores,
}

fn pooled_dict<'py>(py: Python<'py>, p: &PooledMetric) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("min", p.min)?;
    d.set_item("max", p.max)?;
    d.set_item("mean", p.mean)?;
    d.set_item("harmonic_mean", p.harmonic_mean)?;
    Ok(d)
}

fn values_dict<'py>(py: Python<'py>, values: &[(String, f64)]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in values {
        d.set_item(k, v)?;
    }
    Ok(d)
}

#[pymethods]
impl Result {
    /// The scored frames' indices, in order.
    #[getter]
    fn indices(&self) -> Vec<u32> {
        self.scores.frames.iter().map(|(i, _)| *i).collect()
    }

    /// Every scored frame's values: a list of dicts, name to value.
    #[getter]
    fn frames<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for (_, values) in &self.scores.frames {
            list.append(values_dict(py, values)?)?;
        }
        Ok(list)
    }

    /// The names of the values, in output order.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.scores
            .names()
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    /// `name` pooled over the scored frames: a dict with min, max, mean and
    /// harmonic_mean, as libvmaf pools.
    fn pooled<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
        let p = self.scores.pooled(name).ok_or_else(|| {
            bad(format!(
                "no value '{name}' in every scored frame (names: {:?})",
                self.scores.names()
            ))
        })?;
        pooled_dict(py, &p)
    }

    /// Whole-run values (psnr's `apsnr_y`, ...).
    #[getter]
    fn aggregate<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        values_dict(py, &self.scores.aggregate)
    }

    /// `name`'s value in every scored frame, in order.
    fn __getitem__(&self, name: &str) -> PyResult<Vec<f64>> {
        let v = self.scores.values(name);
        if v.is_empty() {
            return Err(pyo3::exceptions::PyKeyError::new_err(name.to_string()));
        }
        Ok(v.into_iter().map(|(_, x)| x).collect())
    }

    fn __len__(&self) -> usize {
        self.scores.frames.len()
    }

    fn __repr__(&self) -> String {
        let vmaf = self
            .scores
            .pooled("vmaf")
            .map(|p| format!(", vmaf mean {:.6}", p.mean));
        format!(
            "<vmafx.Result: {} frames{}>",
            self.scores.frames.len(),
            vmaf.unwrap_or_default()
        )
    }
}

/// The GPU that `backend` and `device` name (`None`: the CPU engine), and
/// the device selector.
fn open_gpu(backend: &str, device: &str) -> PyResult<(Option<Gpu>, DeviceSelector)> {
    let selector = DeviceSelector::parse(device).map_err(err)?;
    let gpu = match backend {
        "cpu" => None,
        "cuda" => Some(vmafx::gpu::open(GpuBackend::Cuda, &selector).map_err(err)?),
        "hip" => Some(vmafx::gpu::open(GpuBackend::Hip, &selector).map_err(err)?),
        "auto" => vmafx::gpu::open_any(&selector).ok(),
        other => {
            return Err(bad(format!(
                "backend '{other}': expected \"cpu\", \"cuda\", \"hip\" or \"auto\""
            )))
        }
    };
    Ok((gpu, selector))
}

/// Reads and drops the first `n` frames of `source`, as the command line's
/// `--frame_skip_ref`/`--frame_skip_dist`.
fn skip(source: &mut dyn vmafx::io::FrameSource, n: u64) -> PyResult<()> {
    let mut scratch = HostPicture::new(source.format());
    for _ in 0..n {
        if !source.read_into(&mut scratch).map_err(err)? {
            return Err(bad(format!(
                "{}: ended while skipping {n} frames",
                source.path().display()
            )));
        }
    }
    Ok(())
}

/// Scores two files (.y4m, or .yuv with `width`, `height`, `pix_fmt`,
/// `bit_depth`) as the command line does: on the CPU, or on a GPU with
/// `backend` and `device` as `Context`'s; `frame_skip_ref`,
/// `frame_skip_dist` and `frame_cnt` as the command line's (the first
/// scored frame is index 0).
#[pyfunction]
#[pyo3(signature = (reference, distorted, model=None, models=None, features=None, threads=0, subsample=1, width=None, height=None, pix_fmt=None, bit_depth=None, backend="cpu", device="0", frame_skip_ref=0, frame_skip_dist=0, frame_cnt=None))]
#[allow(clippy::too_many_arguments)]
fn score(
    py: Python<'_>,
    reference: std::path::PathBuf,
    distorted: std::path::PathBuf,
    model: Option<String>,
    models: Option<Vec<String>>,
    features: Option<Vec<String>>,
    threads: usize,
    subsample: u32,
    width: Option<u32>,
    height: Option<u32>,
    pix_fmt: Option<String>,
    bit_depth: Option<u8>,
    backend: &str,
    device: &str,
    frame_skip_ref: u64,
    frame_skip_dist: u64,
    frame_cnt: Option<u64>,
) -> PyResult<Result> {
    let raw = match (width, height) {
        (Some(w), Some(h)) => {
            let s = ChromaSubsampling::parse(pix_fmt.as_deref().unwrap_or("420")).map_err(err)?;
            Some(PictureFormat::new(w, h, s, bit_depth.unwrap_or(8)).map_err(err)?)
        }
        (None, None) => None,
        _ => return Err(bad("give both width and height for raw .yuv input")),
    };
    let mut all_models: Vec<String> = model
        .into_iter()
        .chain(models.unwrap_or_default())
        .collect();
    let features = features.unwrap_or_default();
    if all_models.is_empty() && features.is_empty() {
        all_models.push("vmaf_v0.6.1".into());
    }
    let scores = py.allow_threads(|| -> PyResult<FeatureScores> {
        let mut r = open(&reference, raw).map_err(err)?;
        let mut d = open(&distorted, raw).map_err(err)?;
        if r.format() != d.format() {
            return Err(bad(format!(
                "the reference is {}, the distorted video {}",
                r.format(),
                d.format()
            )));
        }
        let mut b = builder(r.format(), &all_models, &features, threads, subsample)?;
        if let (Some(g), _) = open_gpu(backend, device)? {
            b = b.gpu(g);
        }
        let mut ctx = b.build().map_err(err)?;
        skip(r.as_mut(), frame_skip_ref)?;
        skip(d.as_mut(), frame_skip_dist)?;
        let mut count: u64 = 0;
        while frame_cnt.is_none_or(|n| count < n) {
            count += 1;
            // The context's pictures: reused, and read in place on a GPU.
            let (mut rp, mut dp) = (ctx.picture().map_err(err)?, ctx.picture().map_err(err)?);
            if !(r.read_into(&mut rp).map_err(err)? && d.read_into(&mut dp).map_err(err)?) {
                break;
            }
            ctx.submit(rp, dp).map_err(err)?;
        }
        ctx.finish().map_err(err)
    })?;
    Ok(Result { scores })
}

/// A scoring run over pairs of frames of one format, fed from Python.
#[pyclass(module = "vmafx")]
struct Context {
    /// `None` once finished. Python objects may be shared by threads: the
    /// lock serializes them (a context is used by one thread at a time).
    inner: std::sync::Mutex<Option<vmafx::Context>>,
    format: PictureFormat,
    /// The context's pictures (reused memory, pinned on a GPU): arrays are
    /// copied into them without taking the lock.
    pictures: vmafx::PicturePool,
    /// The device a GPU context scores on, and its index when chosen by
    /// index (checked against DLPack arrays' device).
    gpu: Option<(Gpu, Option<i32>)>,
    /// Device arrays vmafx has released, dropped under the GIL.
    released: device::Graveyard,
}

/// A 2-D host array seen through numpy's `__array_interface__` (the same
/// description `__cuda_array_interface__` gives for device arrays): where
/// its samples are and how its rows are laid out.
struct ArrayView {
    data: usize,
    rows: usize,
    cols: usize,
    /// Bytes from one row to the next.
    row_pitch: usize,
    item: usize,
}

impl ArrayView {
    /// Reads the interface of `array`, checking the element type and that
    /// each row is contiguous.
    fn new(array: &Bound<'_, PyAny>, what: &str, item: usize) -> PyResult<Self> {
        let want = if item == 2 { "uint16" } else { "uint8" };
        let interface = array.getattr("__array_interface__").map_err(|_| {
            bad(format!(
                "{what}: not an array (no __array_interface__): give a numpy {want} array"
            ))
        })?;
        let typestr: String = interface.get_item("typestr")?.extract()?;
        device::element_type(what, &typestr, item)?;
        let shape: Vec<usize> = interface.get_item("shape")?.extract()?;
        // Optional in the protocol (absent or None: compact rows).
        let strides: Option<Vec<i64>> = match interface.get_item("strides") {
            Ok(s) => s.extract()?,
            Err(_) => None,
        };
        let (rows, cols, row_pitch) = device::row_layout(what, &shape, strides, item)?;
        let (data, _readonly): (usize, bool) = interface.get_item("data")?.extract()?;
        if data == 0 && rows * cols > 0 {
            return Err(bad(format!("{what}: data pointer is NULL")));
        }
        Ok(Self {
            data,
            rows,
            cols,
            row_pitch,
            item,
        })
    }

    /// `rows` rows of `cols` samples from `offset` bytes in, each `pitch`
    /// bytes apart (a part of a packed picture).
    fn part(&self, offset: usize, rows: usize, cols: usize, pitch: usize) -> Self {
        Self {
            data: self.data + offset,
            rows,
            cols,
            row_pitch: pitch,
            item: self.item,
        }
    }

    fn check_shape(&self, what: &str, rows: usize, cols: usize) -> PyResult<()> {
        if (self.rows, self.cols) != (rows, cols) {
            return Err(bad(format!(
                "{what}: shape ({}, {}), expected ({rows}, {cols})",
                self.rows, self.cols
            )));
        }
        Ok(())
    }

    /// Calls `put(y, x, sample)` for every sample. The array must stay alive
    /// and unchanged meanwhile (the caller holds it and the GIL).
    fn for_each(&self, mut put: impl FnMut(usize, usize, u32)) {
        for y in 0..self.rows {
            let row = (self.data + y * self.row_pitch) as *const u8;
            for x in 0..self.cols {
                // SAFETY: the interface promises rows x cols samples of
                // `item` bytes at these offsets; the array is alive.
                let v = unsafe {
                    if self.item == 2 {
                        (row.add(2 * x) as *const u16).read_unaligned() as u32
                    } else {
                        *row.add(x) as u32
                    }
                };
                put(y, x, v);
            }
        }
    }
}

/// The planes of one side: a tuple or list, or one device array (a
/// decoder's semi-planar surface).
fn planes_of<'py>(planes: &Bound<'py, PyAny>, side: &str) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if let Ok(t) = planes.downcast::<PyTuple>() {
        Ok(t.iter().collect())
    } else if let Ok(l) = planes.downcast::<PyList>() {
        Ok(l.iter().collect())
    } else if device::is_device_array(planes) || planes.hasattr("__array_interface__")? {
        Ok(vec![planes.clone()])
    } else {
        Err(bad(format!(
            "{side}: a tuple or list of planes (Y, Cb, Cr), or (Y, CbCr) semi-planar, or one array"
        )))
    }
}

impl Context {
    /// A picture from Python planes: 3 (planar) or 2 (semi-planar: Y and
    /// interleaved CbCr; above 8 bits the samples are in the high bits, as
    /// P010/P016).
    fn picture(&self, planes: &Bound<'_, PyAny>, side: &str) -> PyResult<HostPicture> {
        let planes = planes_of(planes, side)?;
        let f = self.format;
        // Every sample of every plane is written below (pool pictures are
        // packed: stride = width).
        let mut pic = self.pictures.picture().map_err(err)?;
        let n = f.plane_count();
        let (cw, ch) = f.plane_size(PlaneId::Cb);
        let (w, h) = (f.width as usize, f.height as usize);
        let item = f.bytes_per_sample();
        let (views, semi) = match planes.len() {
            1 if n == 3 => {
                // One array: a packed planar picture (1-D, Y then Cb then
                // Cr), or a semi-planar surface (Y rows, then CbCr rows).
                let what = format!("{side} (one array)");
                let v = ArrayView::new(&planes[0], &what, item)?;
                let packed = w * h + 2 * cw * ch;
                if (v.rows, v.cols) == (1, packed) {
                    let (y, c) = (w * h * item, cw * ch * item);
                    let parts = vec![
                        v.part(0, h, w, w * item),
                        v.part(y, ch, cw, cw * item),
                        v.part(y + c, ch, cw, cw * item),
                    ];
                    (parts, false)
                } else if (v.rows, v.cols) == (h + ch, w) && 2 * cw == w {
                    let parts = vec![
                        v.part(0, h, w, v.row_pitch),
                        v.part(h * v.row_pitch, ch, w, v.row_pitch),
                    ];
                    (parts, true)
                } else {
                    return Err(bad(format!(
                        "{what}: shape ({}, {}): one array is a packed planar picture ({packed},) \
                         or a semi-planar surface ({}, {w}) of an even width",
                        v.rows,
                        v.cols,
                        h + ch
                    )));
                }
            }
            k if k == n || (k == 2 && n == 3) => {
                let mut views = Vec::with_capacity(k);
                for (i, plane) in planes.iter().enumerate() {
                    views.push(ArrayView::new(plane, &format!("{side} plane {i}"), item)?);
                }
                (views, k == 2)
            }
            k => return Err(bad(format!(
                "{side}: {k} planes for a {f} picture (expected {n}, 2 semi-planar, or one array)"
            ))),
        };
        let shift = if semi && f.bit_depth > 8 {
            16 - f.bit_depth as u32
        } else {
            0
        };
        let cstride = pic.stride(PlaneId::Cb);
        for (i, view) in views.iter().enumerate() {
            let id = PlaneId::ALL[i];
            let what = format!("{side} plane {i}");
            let (w, h) = if semi && i == 1 {
                (cw * 2, ch)
            } else {
                f.plane_size(id)
            };
            view.check_shape(&what, h, w)?;
            let stride = pic.stride(id);
            match (item, semi && i == 1) {
                (1, false) => {
                    let dst = pic.plane_u8_mut(id);
                    view.for_each(|y, x, v| dst[y * stride + x] = v as u8);
                }
                (1, true) => {
                    let (cb, cr) = pic.chroma_u8_mut();
                    view.for_each(|y, x, v| {
                        let plane = if x % 2 == 0 { &mut *cb } else { &mut *cr };
                        plane[y * cstride + x / 2] = v as u8;
                    });
                }
                (_, false) => {
                    let dst = pic.plane_u16_mut(id);
                    view.for_each(|y, x, v| dst[y * stride + x] = (v >> shift) as u16);
                }
                (_, true) => {
                    let (cb, cr) = pic.chroma_u16_mut();
                    view.for_each(|y, x, v| {
                        let plane = if x % 2 == 0 { &mut *cb } else { &mut *cr };
                        plane[y * cstride + x / 2] = (v >> shift) as u16;
                    });
                }
            }
        }
        Ok(pic)
    }

    /// A pair of CUDA device arrays, read in place.
    fn submit_device(
        &self,
        py: Python<'_>,
        reference: &[Bound<'_, PyAny>],
        distorted: &[Bound<'_, PyAny>],
    ) -> PyResult<()> {
        let Some((gpu, index)) = &self.gpu else {
            return Err(bad(
                "CUDA device arrays need a GPU context: Context(..., backend=\"cuda\")",
            ));
        };
        for (side, planes) in [("reference", reference), ("distorted", distorted)] {
            if let Some(i) = planes.iter().position(|p| !device::is_device_array(p)) {
                return Err(bad(format!(
                    "{side} plane {i}: a host array beside device arrays: give every plane of a pair on the device"
                )));
            }
        }
        let r = device::frame(
            reference,
            "reference",
            &self.format,
            gpu,
            *index,
            &self.released,
        )?;
        let d = device::frame(
            distorted,
            "distorted",
            &self.format,
            gpu,
            *index,
            &self.released,
        )?;
        let mut guard = self.lock();
        let ctx = guard
            .as_mut()
            .ok_or_else(|| bad("the context is finished: no more frames"))?;
        py.allow_threads(|| ctx.submit_frames(&r, &d)).map_err(err)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<vmafx::Context>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[pymethods]
impl Context {
    /// `Context(width, height, pix_fmt="420", bit_depth=8, models=None,
    /// features=None, threads=0, subsample=1, backend="cpu", device="0")`;
    /// with neither models nor features, `vmaf_v0.6.1`. `backend`: "cpu",
    /// "cuda", "hip" or "auto" (a GPU when one opens, else the CPU);
    /// `device`: the GPU's index or UUID.
    #[new]
    #[pyo3(signature = (width, height, pix_fmt="420", bit_depth=8, models=None, features=None, threads=0, subsample=1, backend="cpu", device="0"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        width: u32,
        height: u32,
        pix_fmt: &str,
        bit_depth: u8,
        models: Option<Vec<String>>,
        features: Option<Vec<String>>,
        threads: usize,
        subsample: u32,
        backend: &str,
        device: &str,
    ) -> PyResult<Self> {
        let s = ChromaSubsampling::parse(pix_fmt).map_err(err)?;
        let format = PictureFormat::new(width, height, s, bit_depth).map_err(err)?;
        let mut models = models.unwrap_or_default();
        let features = features.unwrap_or_default();
        if models.is_empty() && features.is_empty() {
            models.push("vmaf_v0.6.1".into());
        }
        let (gpu, selector) = open_gpu(backend, device)?;
        let mut b = builder(format, &models, &features, threads, subsample)?;
        if let Some(g) = &gpu {
            // Arrays whose address or row pitch the kernels cannot read in
            // place (a compact tensor of a width that is no multiple of
            // 256 bytes) are copied once on the device, never on the host.
            b = b.gpu(g.clone()).allow_device_copy(true);
        }
        let inner = b.build().map_err(err)?;
        let index = match selector {
            DeviceSelector::Index(i) => i32::try_from(i).ok(),
            DeviceSelector::Uuid(_) => None,
        };
        Ok(Self {
            pictures: inner.picture_pool().clone(),
            inner: std::sync::Mutex::new(Some(inner)),
            format,
            gpu: gpu.map(|g| (g, index)),
            released: device::Graveyard::default(),
        })
    }

    /// Scores the next pair. Each side is a tuple of planes: (Y, Cb, Cr) as
    /// 2-D arrays, or (Y, CbCr) semi-planar (NV12; above 8 bits P010/P016,
    /// samples in the high bits); uint8 up to 8 bits, uint16 above. Host
    /// arrays (numpy) are copied; CUDA arrays (`__dlpack__`,
    /// `__cuda_array_interface__`) are read in place on a GPU context and
    /// kept alive until read.
    fn submit(
        &self,
        py: Python<'_>,
        reference: &Bound<'_, PyAny>,
        distorted: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.released.empty(py);
        let (rp, dp) = (
            planes_of(reference, "reference")?,
            planes_of(distorted, "distorted")?,
        );
        let on_device = |p: &[Bound<'_, PyAny>]| p.first().is_some_and(device::is_device_array);
        if on_device(&rp) || on_device(&dp) {
            return self.submit_device(py, &rp, &dp);
        }
        let r = self.picture(reference, "reference")?;
        let d = self.picture(distorted, "distorted")?;
        let mut guard = self.lock();
        let ctx = guard
            .as_mut()
            .ok_or_else(|| bad("the context is finished: no more frames"))?;
        py.allow_threads(|| ctx.submit(r, d)).map_err(err)
    }

    /// The frames completed since the last call: (index, {name: value}).
    fn finished<'py>(&self, py: Python<'py>) -> PyResult<Vec<(u32, Bound<'py, PyDict>)>> {
        self.released.empty(py);
        let mut guard = self.lock();
        let ctx = guard
            .as_mut()
            .ok_or_else(|| bad("the context is finished"))?;
        let done: Vec<_> = ctx.take_finished().map_err(err)?.collect();
        done.iter()
            .map(|(i, v)| Ok((*i, values_dict(py, v)?)))
            .collect()
    }

    /// Waits for every frame and returns the result.
    fn finish(&self, py: Python<'_>) -> PyResult<Result> {
        let ctx = self
            .lock()
            .take()
            .ok_or_else(|| bad("the context is finished already"))?;
        let scores = py.allow_threads(|| ctx.finish());
        self.released.empty(py);
        Ok(Result {
            scores: scores.map_err(err)?,
        })
    }
}

/// `python -m vmafx ARGS`: the command line, with its exit status.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> i32 {
    let args = match vmafx::cli::Args::try_from_command_line(argv) {
        Ok(a) => a,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayVersion => {
            eprintln!("{}", vmafx::cli::VMAF_VERSION);
            return 0;
        }
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    py.allow_threads(|| match vmafx::cli::run(&args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("vmafx: {e}");
            1
        }
    })
}

#[pymodule]
fn _vmafx(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("VmafxError", m.py().get_type::<VmafxError>())?;
    m.add_class::<Context>()?;
    m.add_class::<Result>()?;
    m.add_function(wrap_pyfunction!(score, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add("LIBVMAF_VERSION", "3.2.0")?;
    Ok(())
}
