//! GPU throughput next to the CPU, host-fed: frames per second and ms per
//! frame at 1080p and 2160p (8-bit 4:2:0), with the upload split out.
//!
//! ```sh
//! cargo build --release --example gpu_bench
//! target/release/examples/gpu_bench [--frames 300] [--host-frames 60] [--threads 16] [--sizes 1080,2160]
//! ```
//!
//! Input: the first 8 frames of `examples/data/{ref,dist}_576x324*.y4m`
//! scaled up (nearest neighbour) and cycled. Every submit gets a fresh copy
//! of the pictures (one memcpy per picture and frame, as a decoder would
//! write them), on the calling thread. Rows:
//!
//! * `cuda` (pipelined): a `Context` with the GPU backend, as the CLI runs
//!   it: one frame in flight per extractor, wall-clock fps.
//! * `cuda` upload / kernels: the same extractors driven one frame at a
//!   time with timed CUDA events around the upload (staging → device) and
//!   around the kernels (clear, launches, result copy), device milliseconds.
//! * `vmaf_v0.6.1`: the whole model. On `cuda` only motion runs on the
//!   device; ADM and VIF (most of the work) still run on the host.
//! * `cpu`: the same `Context` without a GPU (one thread, like libvmaf's
//!   single-thread figure). CPU rows and the model rows run
//!   `--host-frames` frames; GPU-only sets run `--frames`. With
//!   `--threads N` (N > 1) the model also runs with N worker threads for
//!   the host extractors, on both backends.

use std::time::Instant;
use vmafx::feature::{self, FeatureSink, Options};
use vmafx::gpu::planes::{PairPlanes, SharedPlanes};
use vmafx::gpu::{self, DeviceSelector, Gpu, GpuBackend};
use vmafx::io::open;
use vmafx::model::{Model, ModelSpec};
use vmafx::{ChromaSubsampling, ContextBuilder, HostPicture, PictureFormat, PlaneId};

type Result<T> = std::result::Result<T, vmafx::Error>;

struct Args {
    frames: usize,
    host_frames: usize,
    threads: usize,
    sizes: Vec<(u32, u32)>,
}

fn parse_args() -> Args {
    let mut args = Args {
        frames: 300,
        host_frames: 60,
        threads: 1,
        sizes: vec![(1920, 1080), (3840, 2160)],
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let value = it.next().unwrap_or_else(|| usage(&a));
        match a.as_str() {
            "--frames" => args.frames = value.parse().unwrap_or_else(|_| usage(&a)),
            "--host-frames" => args.host_frames = value.parse().unwrap_or_else(|_| usage(&a)),
            "--threads" => args.threads = value.parse().unwrap_or_else(|_| usage(&a)),
            "--sizes" => {
                args.sizes = value
                    .split(',')
                    .map(|h| match h {
                        "720" => (1280, 720),
                        "1080" => (1920, 1080),
                        "2160" => (3840, 2160),
                        _ => usage(&a),
                    })
                    .collect()
            }
            _ => usage(&a),
        }
    }
    args
}

fn usage(arg: &str) -> ! {
    eprintln!("gpu_bench: bad argument {arg}; usage: gpu_bench [--frames N] [--host-frames N] [--threads N] [--sizes 720,1080,2160]");
    std::process::exit(2)
}

/// The first `n` frames of a y4m file.
fn read_frames(path: &std::path::Path, n: usize) -> Result<Vec<HostPicture>> {
    let mut src = open(path, None)?;
    let mut out = Vec::new();
    for _ in 0..n {
        let mut p = HostPicture::new(src.format());
        if !src.read_into(&mut p)? {
            break;
        }
        out.push(p);
    }
    Ok(out)
}

/// Nearest-neighbour scaling of an 8-bit picture to `format`.
fn scale(src: &HostPicture, format: PictureFormat) -> HostPicture {
    let mut dst = HostPicture::new(format);
    for plane in PlaneId::ALL {
        let s = src.plane_u8(plane);
        let (sw, sh) = (s.width, s.height);
        let (dw, dh) = format.plane_size(plane);
        let stride = dst.stride(plane);
        let out = dst.plane_u8_mut(plane);
        for y in 0..dh {
            let row = s.row(y * sh / dh);
            for (x, o) in out[y * stride..y * stride + dw].iter_mut().enumerate() {
                *o = row[x * sw / dw];
            }
        }
    }
    dst
}

struct Row {
    size: String,
    set: &'static str,
    backend: &'static str,
    frames: usize,
    fps: f64,
    staging_ms: Option<f64>,
    upload_ms: Option<f64>,
    kernel_ms: Option<f64>,
    note: String,
}

fn context(
    format: PictureFormat,
    set: &[&str],
    model: bool,
    threads: usize,
    gpu: Option<&Gpu>,
) -> Result<vmafx::Context> {
    let mut b = ContextBuilder::new(format).threads(threads);
    for name in set {
        b = b.feature(name, Vec::new());
    }
    if model {
        b = b.model(Model::load(&ModelSpec::version("vmaf_v0.6.1"))?);
    }
    if let Some(g) = gpu {
        b = b.gpu(g.clone());
    }
    b.build()
}

/// Wall-clock frames per second of a context over `frames` frames.
fn throughput(
    frames: &[(HostPicture, HostPicture)],
    n: usize,
    set: &[&str],
    model: bool,
    threads: usize,
    gpu: Option<&Gpu>,
) -> Result<f64> {
    let format = *frames[0].0.format();
    // One frame first: kernels load (and compile on a cold cache), buffers
    // are allocated; not timed.
    let mut warm = context(format, set, model, threads, gpu)?;
    warm.submit(frames[0].0.clone(), frames[0].1.clone())?;
    warm.finish()?;
    let mut ctx = context(format, set, model, threads, gpu)?;
    let start = Instant::now();
    for i in 0..n {
        let (r, d) = &frames[i % frames.len()];
        ctx.submit(r.clone(), d.clone())?;
    }
    ctx.finish()?;
    Ok(n as f64 / start.elapsed().as_secs_f64())
}

/// Mean milliseconds per frame of `set`'s GPU extractors, one frame at a
/// time: host copy into pinned staging (wall clock), then the staging →
/// device copy and the kernels, each between timed events (device time).
fn device_split(
    gpu: &Gpu,
    frames: &[(HostPicture, HostPicture)],
    n: usize,
    set: &[&str],
) -> Result<(f64, f64, f64)> {
    let format = *frames[0].0.format();
    let mut extractors = Vec::new();
    let mut needs = PairPlanes::NONE;
    for name in set {
        let info = feature::find(name)?;
        let options = Options::resolve(name, info.options, &[])?;
        let x = gpu::feature::create(name, &options, &format, gpu).expect("a GPU extractor")?;
        needs = needs.union(x.planes());
        extractors.push(x);
    }
    let stream = gpu.stream()?;
    let mut planes = SharedPlanes::new(gpu, format, needs)?;
    let (t0, t1, t2) = (gpu.timed_event()?, gpu.timed_event()?, gpu.timed_event()?);
    let mut sink = FeatureSink::new();
    let (mut staging, mut upload, mut kernels) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (r, d) = &frames[i % frames.len()];
        let start = Instant::now();
        planes.stage(gpu, r, d)?;
        staging += start.elapsed().as_secs_f64() * 1e3;
        t0.record(&stream)?;
        let frame = planes.enqueue_copies(&stream)?;
        t1.record(&stream)?;
        for x in &mut extractors {
            x.enqueue(i as u32, &frame, &stream)?;
        }
        t2.record(&stream)?;
        for x in &mut extractors {
            x.complete(&mut sink)?;
        }
        t2.synchronize()?;
        upload += f64::from(t1.elapsed_ms_since(&t0)?);
        kernels += f64::from(t2.elapsed_ms_since(&t1)?);
        sink.drain().for_each(drop);
    }
    let n = n as f64;
    Ok((staging / n, upload / n, kernels / n))
}

fn main() -> Result<()> {
    let args = parse_args();
    let root = std::env::var_os("VMAFX_TEST_ROOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
    let data = root.join("examples/data");
    let refs = read_frames(&data.join("ref_576x324.y4m"), 8)?;
    let dists = read_frames(&data.join("dist_576x324_x264_crf30.y4m"), 8)?;
    let gpu = match gpu::open(GpuBackend::Cuda, &DeviceSelector::default()) {
        Ok(g) => {
            println!("device: {}", g.describe());
            Some(g)
        }
        Err(e) => {
            println!("no CUDA device ({e}): CPU rows only");
            None
        }
    };
    println!(
        "host: {} logical CPUs; input: examples/data 576x324 frames 0-7 scaled up, cycled\n",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let mut rows = Vec::new();
    for &(w, h) in &args.sizes {
        let format = PictureFormat::new(w, h, ChromaSubsampling::Yuv420, 8)?;
        let frames: Vec<_> = refs
            .iter()
            .zip(&dists)
            .map(|(r, d)| (scale(r, format), scale(d, format)))
            .collect();
        let size = format!("{w}x{h}");
        let mut sets: Vec<(&'static str, &[&str], bool, usize)> = vec![
            ("psnr", &["psnr"], false, 1),
            ("motion", &["motion"], false, 1),
            ("psnr+motion", &["psnr", "motion"], false, 1),
            ("vmaf_v0.6.1", &[], true, 1),
        ];
        if args.threads > 1 {
            sets.push(("vmaf_v0.6.1", &[], true, args.threads));
        }
        for (set, names, model, threads) in sets {
            let cpu_fps = throughput(&frames, args.host_frames, names, model, threads, None)?;
            rows.push(Row {
                size: size.clone(),
                set,
                backend: "cpu",
                frames: args.host_frames,
                fps: cpu_fps,
                staging_ms: None,
                upload_ms: None,
                kernel_ms: None,
                note: format!("{threads} thread(s)"),
            });
            let Some(g) = &gpu else { continue };
            // The model is host-bound (ADM, VIF): as many frames as the CPU rows.
            let n = if model { args.host_frames } else { args.frames };
            let fps = throughput(&frames, n, names, model, threads, Some(g))?;
            let split_set: &[&str] = if model { &["motion"] } else { names };
            let (st, up, k) = device_split(g, &frames, args.frames.min(100), split_set)?;
            rows.push(Row {
                size: size.clone(),
                set,
                backend: "cuda",
                frames: n,
                fps,
                staging_ms: Some(st),
                upload_ms: Some(up),
                kernel_ms: Some(k),
                note: if model {
                    format!("motion on GPU; ADM, VIF on host ({threads} thread(s))")
                } else {
                    "pipelined".to_string()
                },
            });
            eprintln!("done {size} {set}");
        }
    }
    println!("| size | set | backend | frames | fps | ms/frame | staging ms (host) | upload ms (device) | kernels ms (device) | note |");
    println!("|---|---|---|---:|---:|---:|---:|---:|---:|---|");
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    for r in rows {
        println!(
            "| {} | {} | {} | {} | {:.1} | {:.2} | {} | {} | {} | {} |",
            r.size,
            r.set,
            r.backend,
            r.frames,
            r.fps,
            1000.0 / r.fps,
            ms(r.staging_ms),
            ms(r.upload_ms),
            ms(r.kernel_ms),
            r.note
        );
    }
    Ok(())
}
