//! The library's feeds timed as `../shared/anchor/cudabench.c` times
//! libvmaf's, so the two run side by side on the same frames
//! (`docs/gpu-device-checks/peers.py`).
//!
//! ```sh
//! lib_bench MODE W H REF.yuv DIST.yuv N WARMUP
//! ```
//!
//! REF/DIST: raw 8-bit 4:2:0; every frame is read into memory first and
//! the frames are cycled. WARMUP frames are submitted first (same context,
//! not timed), then N timed frames, then `finish` and the pooled mean: all
//! inside the timed window. `vmaf_v0.6.1` on the first CUDA device.
//!
//! MODE, what the caller does per frame:
//! * `host`: takes a picture from the context (`Context::picture`: pinned
//!   memory, reused once the upload has read it), copies the frame into it
//!   and submits it. libvmaf's `host` and `host_pool` rows do the same
//!   through `vmaf_picture_alloc` and its preallocated pictures.
//! * `own`: allocates its own picture (`HostPicture::new`), copies the
//!   frame into it and submits it (the memory is the caller's: new pages
//!   every frame).
//! * `device`: submits frames already in device memory (written once),
//!   read in place.
//!
//! Prints `RESULT mode=... fps=... vmaf_mean=... faults_per_frame=...`
//! (minor page faults of the process in the timed window, per frame).

use std::time::{Duration, Instant};
use vmafx::gpu::pool::FramePool;
use vmafx::gpu::{self, DeviceSelector, GpuBackend};
use vmafx::import::{Acquire, Frame, PixelFormat};
use vmafx::model::{Model, ModelSpec};
use vmafx::{ChromaSubsampling, Context, ContextBuilder, HostPicture, PictureFormat};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn frames_of(path: &str, format: &PictureFormat) -> Result<Vec<Vec<u8>>> {
    let bytes = std::fs::read(path)?;
    Ok(bytes
        .chunks_exact(format.frame_bytes())
        .map(<[u8]>::to_vec)
        .collect())
}

fn main() -> Result<()> {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 8 {
        return Err("usage: lib_bench host|own|device W H REF.yuv DIST.yuv N WARMUP".into());
    }
    let (mode, w, h) = (a[1].as_str(), a[2].parse()?, a[3].parse()?);
    let (n, warm): (usize, usize) = (a[6].parse()?, a[7].parse()?);
    let format = PictureFormat::new(w, h, ChromaSubsampling::Yuv420, 8)?;
    let refs = frames_of(&a[4], &format)?;
    let dists = frames_of(&a[5], &format)?;
    let count = refs.len().min(dists.len());
    let gpu = gpu::open(GpuBackend::Cuda, &DeviceSelector::default())?;
    let mut ctx = ContextBuilder::new(format)
        .gpu(gpu.clone())
        .model(Model::load(&ModelSpec::version("vmaf_v0.6.1"))?)
        .build()?;

    let picture = |ctx: &Context, bytes: &[u8]| -> Result<HostPicture> {
        let mut p = if mode == "own" {
            HostPicture::new(format)
        } else {
            ctx.picture()?
        };
        p.fill_from_packed(bytes);
        Ok(p)
    };
    let device: Vec<(Frame, Frame)> = if mode == "device" {
        let pool = FramePool::new(
            &gpu,
            w,
            h,
            PixelFormat::Planar {
                subsampling: ChromaSubsampling::Yuv420,
                bit_depth: 8,
            },
            2 * count,
        )?;
        let stream = gpu.stream()?;
        let one = |bytes: &[u8]| -> Result<Frame> {
            let mut p = HostPicture::new(format);
            p.fill_from_packed(bytes);
            let slot = pool.take(Duration::ZERO)?;
            slot.write_from_host(&stream, &p)?;
            Ok(slot.into_frame(Acquire::None, vec![])?)
        };
        (0..count)
            .map(|i| Ok((one(&refs[i])?, one(&dists[i])?)))
            .collect::<Result<_>>()?
    } else if ["host", "own"].contains(&mode) {
        Vec::new()
    } else {
        return Err(format!("unknown mode {mode} (host, own, device)").into());
    };

    let submit = |ctx: &mut Context, i: usize| -> Result<()> {
        let k = i % count;
        if mode == "device" {
            ctx.submit_frames(&device[k].0, &device[k].1)?;
        } else {
            let (r, d) = (picture(ctx, &refs[k])?, picture(ctx, &dists[k])?);
            ctx.submit(r, d)?;
        }
        Ok(())
    };
    for i in 0..warm {
        submit(&mut ctx, i)?;
    }
    let (start, faults) = (Instant::now(), minor_faults());
    for i in warm..warm + n {
        submit(&mut ctx, i)?;
    }
    let scores = ctx.finish()?;
    let mean = scores.pooled("vmaf").ok_or("no vmaf score")?.mean;
    let timed = start.elapsed().as_secs_f64();
    let faults = (minor_faults() - faults) as f64 / n as f64;
    println!(
        "RESULT mode={mode} res={w}x{h} N={n} warmup={warm} fps={:.2} timed_s={timed:.4} \
         vmaf_mean={mean:.4} faults_per_frame={faults:.2}",
        n as f64 / timed
    );
    Ok(())
}

/// Minor page faults of this process so far (`/proc/self/stat` field 10;
/// 0 where there is no /proc).
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name, which is in parentheses.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    rest.split_whitespace()
        .nth(7)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}
