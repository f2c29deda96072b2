//! GPU throughput beside the CPU engine: frames per second and ms per frame
//! at 1080p and 2160p, 8 and 10 bit, host-fed and device-fed, per model.
//!
//! ```sh
//! cargo build --release --example gpu_bench
//! target/release/examples/gpu_bench [--frames 500] [--cpu-frames 30] [--threads 16] \
//!     [--sizes 1080,2160 (also 360, 720, 1440)] [--depths 8,10] [--models vmaf_v0.6.1] \
//!     [--extractors vif,cambi/full_ref=true,...] \
//!     [--feeds cpu,host,reused,planar,semi,copied,kernels]
//! ```
//!
//! Input: the first 8 frames of `examples/data/{ref,dist}_576x324*.y4m`
//! scaled up (nearest neighbour; 10-bit: samples shifted up by 2) and
//! cycled. Rows, each one `Context` run as an application would drive it:
//!
//! * `cpu`: the CPU engine with `--threads` worker threads.
//! * `host-fed`: the GPU engine fed host pictures: per submit a picture
//!   from the context (`Context::picture`) that the frame is copied into,
//!   as a decoder would write it; upload included. `host-fed reused`: two
//!   pictures lent for every frame
//!   (`submit_borrowed`), as libvmaf's "reused pictures" figure.
//! * `device planar`: frames already in device memory (pool frames, planar,
//!   aligned): bound in place, nothing copied.
//! * `device NV12`/`P010`: decoder layouts in device memory, split (and
//!   shifted) on the device by one pass.
//! * `device copied`: planar frames at unaligned addresses, copied on the
//!   device (`allow_device_copy`).
//! * `kernels`: device time per frame of the model's GPU extractors alone
//!   (with the options the model sets),
//!   between timed events, planes already on the device.
//!
//! A model whose extractors are not all on the GPU gets host-fed rows only
//! (the host extractors run beside the GPU ones), and says so.
//!
//! `--extractors` adds a second table: each listed GPU extractor alone
//! (`name` or `name/options`, options as `a=1:b=2`), device time per frame
//! between timed events, one frame at a time, planes already on the
//! device; and a third: the same per kernel (a second run, every launch
//! between timed events, `Gpu::with_kernel_times`). `--models ""` leaves
//! the model table out.

use std::time::{Duration, Instant};
use vmafx::feature::{self, FeatureSink, Options};
use vmafx::gpu::pool::FramePool;
use vmafx::gpu::{self, DeviceSelector, Gpu, GpuBackend};
use vmafx::gpu::{Copy2d, CopySource, KernelTime, KernelTimes};
use vmafx::import::pack::pack_plane;
use vmafx::import::DevicePtr;
use vmafx::import::{Acquire, Frame, FrameDesc, Memory, PixelFormat, PlaneLayout};
use vmafx::io::open;
use vmafx::model::{Model, ModelSpec};
use vmafx::testing::gpu::{PairPlanes, SharedPlanes};
use vmafx::{ChromaSubsampling, ContextBuilder, HostPicture, PictureFormat, PlaneId};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

struct Args {
    frames: usize,
    cpu_frames: usize,
    threads: usize,
    sizes: Vec<(u32, u32)>,
    depths: Vec<u8>,
    models: Vec<String>,
    /// (name, options) of extractors timed alone.
    extractors: Vec<(String, String)>,
    /// Model rows to run (`cpu`, `host`, `reused`, `planar`, `semi`,
    /// `copied`, `kernels`); all by default.
    feeds: Vec<String>,
}

impl Args {
    fn runs(&self, feed: &str) -> bool {
        self.feeds.is_empty() || self.feeds.iter().any(|f| f == feed)
    }
}

fn parse_args() -> Args {
    let mut args = Args {
        frames: 500,
        cpu_frames: 30,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        sizes: vec![(1920, 1080), (3840, 2160)],
        depths: vec![8, 10],
        models: vec!["vmaf_v0.6.1".into()],
        extractors: Vec::new(),
        feeds: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let value = it.next().unwrap_or_else(|| usage(&a));
        let list = || value.split(',').map(str::to_string).collect::<Vec<_>>();
        match a.as_str() {
            "--frames" => args.frames = value.parse().unwrap_or_else(|_| usage(&a)),
            "--cpu-frames" => args.cpu_frames = value.parse().unwrap_or_else(|_| usage(&a)),
            "--threads" => args.threads = value.parse().unwrap_or_else(|_| usage(&a)),
            "--depths" => {
                args.depths = list()
                    .iter()
                    .map(|d| d.parse().unwrap_or_else(|_| usage(&a)))
                    .collect()
            }
            "--feeds" => args.feeds = list(),
            "--models" => args.models = list().into_iter().filter(|m| !m.is_empty()).collect(),
            "--extractors" => {
                args.extractors = list()
                    .into_iter()
                    .map(|e| match e.split_once('/') {
                        Some((name, options)) => (name.to_string(), options.to_string()),
                        None => (e, String::new()),
                    })
                    .collect()
            }
            "--sizes" => {
                args.sizes = list()
                    .iter()
                    .map(|h| match h.as_str() {
                        // 360: kernels so short that the host's queueing shows.
                        "360" => (640, 360),
                        "720" => (1280, 720),
                        "1080" => (1920, 1080),
                        "1440" => (2560, 1440),
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
    eprintln!(
        "gpu_bench: bad argument {arg}; usage: gpu_bench [--frames N] [--cpu-frames N] \
         [--threads N] [--sizes 720,1080,2160] [--depths 8,10] [--models a,b] \
         [--extractors name,name/a=1:b=2] [--feeds planar,kernels]"
    );
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

/// Nearest-neighbour scaling of an 8-bit picture to `format` (10-bit:
/// samples shifted up by 2).
fn scale(src: &HostPicture, format: PictureFormat) -> HostPicture {
    let mut dst = HostPicture::new(format);
    for plane in PlaneId::ALL {
        let s = src.plane_u8(plane);
        let (sw, sh) = (s.width, s.height);
        let (dw, dh) = format.plane_size(plane);
        let stride = dst.stride(plane);
        let sample = |x: usize, y: usize| s.row(y * sh / dh)[x * sw / dw];
        if format.bit_depth == 8 {
            let out = dst.plane_u8_mut(plane);
            for y in 0..dh {
                for x in 0..dw {
                    out[y * stride + x] = sample(x, y);
                }
            }
        } else {
            let out = dst.plane_u16_mut(plane);
            for y in 0..dh {
                for x in 0..dw {
                    out[y * stride + x] = u16::from(sample(x, y)) << (format.bit_depth - 8);
                }
            }
        }
    }
    dst
}

struct Row {
    size: String,
    depth: u8,
    model: String,
    feed: String,
    frames: usize,
    fps: f64,
    note: String,
}

fn builder(
    format: PictureFormat,
    model: &str,
    gpu: Option<&Gpu>,
    threads: usize,
) -> Result<ContextBuilder> {
    let mut b = ContextBuilder::new(format)
        .threads(threads)
        .model(Model::load(&ModelSpec::version(model))?);
    if let Some(g) = gpu {
        b = b.gpu(g.clone());
    }
    Ok(b)
}

/// Wall-clock frames per second of a context fed host pictures: per
/// submit a picture from the context (`Context::picture`, reused memory,
/// pinned on a GPU) with the frame copied into it, or (`reuse`) two
/// pictures lent for every frame (`submit_borrowed`).
fn host_fed(
    frames: &[(HostPicture, HostPicture)],
    n: usize,
    model: &str,
    gpu: Option<&Gpu>,
    threads: usize,
    reuse: bool,
) -> Result<f64> {
    let format = *frames[0].0.format();
    // One frame first: kernels load, buffers are allocated; not timed.
    let mut warm = builder(format, model, gpu, threads)?.build()?;
    warm.submit(frames[0].0.clone(), frames[0].1.clone())?;
    warm.finish()?;
    let mut ctx = builder(format, model, gpu, threads)?.build()?;
    let start = Instant::now();
    for i in 0..n {
        let (r, d) = &frames[i % frames.len()];
        if reuse {
            ctx.submit_borrowed(r, d)?;
        } else {
            let (mut rp, mut dp) = (ctx.picture()?, ctx.picture()?);
            rp.copy_from(r);
            dp.copy_from(d);
            ctx.submit(rp, dp)?;
        }
    }
    ctx.finish()?;
    Ok(n as f64 / start.elapsed().as_secs_f64())
}

/// Writes `picture` into device memory at `base`, planes `layouts` apart,
/// in `layout`, from the host (the bench's stand-in decoder).
fn write(
    gpu: &Gpu,
    base: u64,
    layouts: &[PlaneLayout],
    layout: PixelFormat,
    picture: &HostPicture,
) -> Result<()> {
    let stream = gpu.stream()?;
    let f = picture.format();
    for (i, l) in layouts.iter().enumerate() {
        let (row_bytes, rows) = layout.plane_extent(i, f.width, f.height);
        let bytes = pack_plane(picture, layout, i, l.pitch as usize);
        let copy = Copy2d {
            src: CopySource::Host(bytes.as_ptr()),
            src_pitch: l.pitch as usize,
            dst: base + l.offset,
            dst_pitch: l.pitch as usize,
            width_bytes: row_bytes,
            height: rows,
        };
        // SAFETY: the destination holds the plane; `bytes` outlives the copy.
        unsafe { stream.copy_2d(&copy)? };
        stream.synchronize()?;
    }
    Ok(())
}

/// The frames in device memory: pool frames (aligned), or, with
/// `unaligned`, planar planes packed at odd offsets and pitches.
fn device_frames(
    gpu: &Gpu,
    frames: &[(HostPicture, HostPicture)],
    layout: PixelFormat,
    unaligned: bool,
    keep: &mut Vec<vmafx::gpu::device::DeviceBuffer>,
) -> Result<Vec<(Frame, Frame)>> {
    let format = *frames[0].0.format();
    let pool = FramePool::new(gpu, format.width, format.height, layout, 2 * frames.len())?;
    let mut one = |p: &HostPicture| -> Result<Frame> {
        if !unaligned {
            let slot = pool.take(Duration::ZERO)?;
            slot.write_from_host(&gpu.stream()?, p)?;
            return Ok(slot.into_frame(Acquire::None, vec![])?);
        }
        let bps = layout.bytes_per_sample() as u64;
        let mut layouts = Vec::new();
        let mut offset = 2 * bps;
        for i in 0..layout.memory_planes() {
            let (row_bytes, rows) = layout.plane_extent(i, format.width, format.height);
            let pitch = row_bytes as u64 + 2 * bps;
            layouts.push(PlaneLayout::new(offset, pitch));
            offset += pitch * rows as u64;
        }
        let buffer = gpu.buffer(offset as usize)?;
        write(gpu, buffer.ptr(), &layouts, layout, p)?;
        let memory = Memory::Device(unsafe { DevicePtr::new(buffer.ptr(), buffer.len() as u64) });
        keep.push(buffer);
        Ok(Frame::new(
            FrameDesc::new(format.width, format.height, layout, memory, &layouts),
            Acquire::None,
            vec![],
        )?)
    };
    frames.iter().map(|(r, d)| Ok((one(r)?, one(d)?))).collect()
}

/// Wall-clock frames per second of a GPU context fed device frames (the
/// same few frames submitted again and again).
fn device_fed(
    gpu: &Gpu,
    frames: &[(HostPicture, HostPicture)],
    n: usize,
    model: &str,
    layout: PixelFormat,
    unaligned: bool,
) -> Result<(f64, f64)> {
    let format = *frames[0].0.format();
    let mut keep = Vec::new();
    let on_device = device_frames(gpu, frames, layout, unaligned, &mut keep)?;
    let run = |n: usize| -> Result<(f64, f64)> {
        let mut ctx = builder(format, model, Some(gpu), 1)?
            .allow_device_copy(unaligned)
            .build()?;
        let (start, cpu_start) = (Instant::now(), process_cpu_seconds());
        for i in 0..n {
            let (r, d) = &on_device[i % on_device.len()];
            ctx.submit_frames(r, d)?;
        }
        ctx.finish()?;
        let wall = start.elapsed().as_secs_f64();
        Ok((n as f64 / wall, (process_cpu_seconds() - cpu_start) / wall))
    };
    run(2)?;
    run(n)
}

/// User + system CPU seconds of this process so far (from /proc/self/stat,
/// in clock ticks of 1/100 s; 0 where there is no /proc): beside the wall
/// time it tells whether the submitting host, not the device, sets the pace.
fn process_cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which may hold spaces): state is the
    // first, utime and stime the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// Mean device milliseconds per frame of extractors (name, options) alone,
/// planes already uploaded; `None` if one has no GPU version.
fn kernels_ms(
    gpu: &Gpu,
    frames: &[(HostPicture, HostPicture)],
    n: usize,
    extractors_options: &[(&str, &str)],
) -> Result<Option<f64>> {
    Ok(kernels_timed(gpu, frames, n, extractors_options, None)?.map(|(ms, _)| ms))
}

/// Mean device milliseconds per frame of each kernel of extractors (name,
/// options) alone: every launch between timed events
/// ([`Gpu::with_kernel_times`]), one frame at a time.
fn kernel_breakdown(
    gpu: &Gpu,
    frames: &[(HostPicture, HostPicture)],
    n: usize,
    extractors_options: &[(&str, &str)],
) -> Result<Vec<KernelTime>> {
    let (timed, times) = gpu.with_kernel_times();
    let per_kernel = kernels_timed(&timed, frames, n, extractors_options, Some(&times))?;
    Ok(per_kernel.map_or(Vec::new(), |(_, k)| k))
}

/// [`kernels_ms`], and with `times` (of `gpu`) each kernel's mean time.
fn kernels_timed(
    gpu: &Gpu,
    frames: &[(HostPicture, HostPicture)],
    n: usize,
    extractors_options: &[(&str, &str)],
    times: Option<&KernelTimes>,
) -> Result<Option<(f64, Vec<KernelTime>)>> {
    let format = *frames[0].0.format();
    let mut extractors = Vec::new();
    let mut needs = PairPlanes::NONE;
    for &(name, options) in extractors_options {
        let info = feature::find(name)?;
        let pairs = vmafx::feature::options::parse_key_values(name, options)?;
        let options = Options::resolve(name, info.options, &pairs)?;
        let Some(x) = gpu::feature::create(name, &options, &format, gpu) else {
            return Ok(None);
        };
        let x = x?;
        needs = needs.union(x.planes());
        extractors.push(x);
    }
    let stream = gpu.stream()?;
    let mut planes = SharedPlanes::new(gpu, format, needs)?;
    let (t0, t1) = (gpu.timed_event()?, gpu.timed_event()?);
    let mut sink = FeatureSink::new();
    let mut total = 0.0;
    for i in 0..n + 1 {
        let (r, d) = &frames[i % frames.len()];
        planes.stage(gpu, r, d)?;
        let frame = planes.enqueue_copies(&stream)?;
        t0.record(&stream)?;
        for x in &mut extractors {
            x.enqueue(i as u32, &frame, &stream)?;
        }
        t1.record(&stream)?;
        for x in &mut extractors {
            x.complete(&mut sink)?;
        }
        t1.synchronize()?;
        if i > 0 {
            total += f64::from(t1.elapsed_ms_since(&t0)?);
        } else if let Some(t) = times {
            // The first frame (module loads, first touches) is left out.
            t.take()?;
        }
        sink.drain().for_each(drop);
    }
    let mut per_kernel = match times {
        Some(t) => t.take()?,
        None => Vec::new(),
    };
    for k in &mut per_kernel {
        k.ms /= n as f64;
    }
    Ok(Some((total / n as f64, per_kernel)))
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
    let mut timed = Vec::new();
    let mut per_kernel = Vec::new();
    for &(w, h) in &args.sizes {
        for &depth in &args.depths {
            let format = PictureFormat::new(w, h, ChromaSubsampling::Yuv420, depth)?;
            let frames: Vec<_> = refs
                .iter()
                .zip(&dists)
                .map(|(r, d)| (scale(r, format), scale(d, format)))
                .collect();
            let size = format!("{w}x{h}");
            if let Some(g) = &gpu {
                let n = args.frames.min(200);
                for (name, options) in &args.extractors {
                    match kernels_ms(g, &frames, n, &[(name, options)])? {
                        Some(ms) => {
                            eprintln!("{size} {depth}-bit {name} {options}: {ms:.4} ms/frame");
                            timed.push((size.clone(), depth, name.clone(), options.clone(), n, ms));
                            for k in kernel_breakdown(g, &frames, n, &[(name, options)])? {
                                per_kernel.push((size.clone(), depth, name.clone(), n, k));
                            }
                        }
                        None => eprintln!("{name}: no GPU version for these options"),
                    }
                }
            }
            for model in &args.models {
                let mut row = |feed: &str, frames: usize, fps: f64, note: String| {
                    eprintln!("{size} {depth}-bit {model} {feed}: {fps:.1} fps");
                    rows.push(Row {
                        size: size.clone(),
                        depth,
                        model: model.clone(),
                        feed: feed.into(),
                        frames,
                        fps,
                        note,
                    });
                };
                if args.runs("cpu") {
                    let cpu = host_fed(&frames, args.cpu_frames, model, None, args.threads, false)?;
                    row(
                        "cpu",
                        args.cpu_frames,
                        cpu,
                        format!("{} threads", args.threads),
                    );
                }
                let Some(g) = &gpu else { continue };
                let names = builder(format, model, None, 1)?.build()?.extractor_names();
                let on_gpu: Vec<_> = gpu::feature::available().collect();
                let all_on_gpu = names.iter().all(|n| on_gpu.contains(n));
                let host_n = if all_on_gpu {
                    args.frames
                } else {
                    args.cpu_frames
                };
                if args.runs("host") {
                    let fps = host_fed(&frames, host_n, model, Some(g), args.threads, false)?;
                    row(
                        "cuda host-fed",
                        host_n,
                        fps,
                        if all_on_gpu {
                            "every extractor on the GPU".into()
                        } else {
                            let host: Vec<_> =
                                names.iter().filter(|n| !on_gpu.contains(n)).collect();
                            format!("{host:?} on the host ({} threads)", args.threads)
                        },
                    );
                }
                if !all_on_gpu {
                    continue;
                }
                if args.runs("reused") {
                    let fps = host_fed(&frames, args.frames, model, Some(g), args.threads, true)?;
                    row(
                        "cuda host-fed reused",
                        args.frames,
                        fps,
                        "pictures lent (submit_borrowed)".into(),
                    );
                }
                let planar = PixelFormat::Planar {
                    subsampling: ChromaSubsampling::Yuv420,
                    bit_depth: depth,
                };
                let semi = if depth == 8 {
                    PixelFormat::Nv12
                } else {
                    PixelFormat::P010
                };
                // (--feeds name, row, layout, unaligned, note)
                let device_rows = [
                    (
                        "planar",
                        "cuda device planar".to_string(),
                        planar,
                        false,
                        "bound in place",
                    ),
                    (
                        "semi",
                        format!("cuda device {semi}"),
                        semi,
                        false,
                        "one layout pass",
                    ),
                    (
                        "copied",
                        "cuda device copied".to_string(),
                        planar,
                        true,
                        "unaligned planar, copied on the device",
                    ),
                ];
                for (feed, label, layout, unaligned, note) in device_rows {
                    if args.runs(feed) {
                        let (fps, load) =
                            device_fed(g, &frames, args.frames, model, layout, unaligned)?;
                        row(
                            &label,
                            args.frames,
                            fps,
                            format!("{note}; host CPU {:.0} %", load * 100.0),
                        );
                    }
                }
                if !args.runs("kernels") {
                    continue;
                }
                // The model's extractors with the options it sets (cambi's
                // in vmaf_v1.0.16_3d0h, say), each once.
                let mut requests: Vec<(&str, String)> = Vec::new();
                for r in Model::load(&ModelSpec::version(model))?.feature_requests()? {
                    let options: Vec<String> =
                        r.options.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    let request = (r.extractor.name, options.join(":"));
                    if !requests.contains(&request) {
                        requests.push(request);
                    }
                }
                let requests: Vec<(&str, &str)> =
                    requests.iter().map(|(n, o)| (*n, o.as_str())).collect();
                if let Some(ms) = kernels_ms(g, &frames, args.frames.min(200), &requests)? {
                    row(
                        "cuda kernels only",
                        args.frames.min(200),
                        1000.0 / ms,
                        "device time between events, one frame at a time".into(),
                    );
                }
            }
        }
    }
    if !timed.is_empty() {
        println!("| size | bits | extractor | options | frames | kernels ms/frame | fps |");
        println!("|---|---:|---|---|---:|---:|---:|");
        for (size, depth, name, options, n, ms) in &timed {
            println!(
                "| {size} | {depth} | {name} | {options} | {n} | {ms:.4} | {:.0} |",
                1000.0 / ms
            );
        }
        println!();
    }
    if !per_kernel.is_empty() {
        println!("| size | bits | extractor | kernel | launches/frame | ms/frame |");
        println!("|---|---:|---|---|---:|---:|");
        for (size, depth, name, n, k) in &per_kernel {
            println!(
                "| {size} | {depth} | {name} | {} | {} | {:.4} |",
                k.name,
                k.launches as f64 / *n as f64,
                k.ms
            );
        }
        println!();
    }
    if rows.is_empty() {
        return Ok(());
    }
    println!("| size | bits | model | feed | frames | fps | ms/frame | note |");
    println!("|---|---:|---|---|---:|---:|---:|---|");
    for r in rows {
        println!(
            "| {} | {} | {} | {} | {} | {:.1} | {:.3} | {} |",
            r.size,
            r.depth,
            r.model,
            r.feed,
            r.frames,
            r.fps,
            1000.0 / r.fps,
            r.note
        );
    }
    Ok(())
}
