//! A decoder-style producer: NV12 (or P010) frames written into device
//! memory taken from a frame pool, a CUDA event as each frame's acquire
//! fence ("decoded"), a CUDA event as its release; vmafx scores the frames
//! where they are (no host copy) and the pool takes each frame back once
//! the context has read it.
//!
//! ```sh
//! cargo run --release --example decoder_producer -- [--format nv12|p010] [--model vmaf_v0.6.1|psnr] [--sync-file] [--backend cuda|hip]
//! ```
//!
//! `--backend hip` runs the same on a HIP device (events are HIP's; no
//! `--sync-file`: HIP exports no dma-buf here).
//!
//! With `--sync-file` each frame is also exported as a dma-buf
//! (`cuMemGetHandleForAddressRange`) and the dma-buf's implicit fence
//! (`DMA_BUF_IOCTL_EXPORT_SYNC_FILE`) is the acquire fence instead of the
//! event, as a V4L2 or VA-API decoder would hand it over. CUDA does not
//! attach its own work to that fence, so here the decode is finished before
//! the export; the sync_file is polled on the context's fence thread.
//!
//! The "decoder" here writes the sample pair of `examples/data` into the
//! pool frames on its own stream (from the host: it stands in for a
//! hardware decoder's output); everything after that is what a real
//! decoder integration does.

use std::os::fd::AsFd;
use std::time::Duration;
use vmafx::gpu::pool::FramePool;
use vmafx::gpu::{self, DeviceSelector, GpuBackend};
use vmafx::import::sync_file::export_sync_file;
use vmafx::import::{Acquire, Frame, PixelFormat, Release};
use vmafx::io::open;
use vmafx::model::{Model, ModelSpec};
use vmafx::{ContextBuilder, HostPicture, PictureFormat, PlaneId};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Result<()> {
    let mut layout = PixelFormat::Nv12;
    let mut model = "vmaf_v0.6.1".to_string();
    let mut sync_file = false;
    let mut backend = GpuBackend::Cuda;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--sync-file" {
            sync_file = true;
            continue;
        }
        match (a.as_str(), args.next()) {
            ("--format", Some(f)) if f == "nv12" => layout = PixelFormat::Nv12,
            ("--format", Some(f)) if f == "p010" => layout = PixelFormat::P010,
            ("--model", Some(m)) => model = m,
            ("--backend", Some(b)) if b == "cuda" => backend = GpuBackend::Cuda,
            ("--backend", Some(b)) if b == "hip" => backend = GpuBackend::Hip,
            _ => {
                eprintln!(
                    "usage: decoder_producer [--format nv12|p010] [--model VERSION|psnr] [--sync-file] [--backend cuda|hip]"
                );
                std::process::exit(2);
            }
        }
    }
    let gpu = match gpu::open(backend, &DeviceSelector::default()) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("decoder_producer needs a {backend} device: {e}");
            std::process::exit(1);
        }
    };
    println!("device: {}", gpu.describe());

    let root = std::env::var_os("VMAFX_TEST_ROOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
    let data = root.join("examples/data");
    let refs = read_all(&data.join("ref_576x324.y4m"), layout)?;
    let dists = read_all(&data.join("dist_576x324_x264_crf30.y4m"), layout)?;
    let format = *refs[0].format();

    // A small pool, as a decoder's surface pool: 6 frames for 2 streams.
    let pool = FramePool::new(&gpu, format.width, format.height, layout, 6)?;
    let decoder = gpu.stream()?;
    let mut builder = ContextBuilder::new(format).gpu(gpu.clone());
    // The score's name in the output: "psnr_y", or the model's name.
    let name = if model == "psnr" {
        builder = builder.feature("psnr", Vec::new());
        "psnr_y".to_string()
    } else {
        let m = Model::load(&ModelSpec::version(&model))?;
        let name = m.name().to_string();
        builder = builder.model(m);
        name
    };
    let mut ctx = builder.build()?;

    // Events outlive the frames that name them.
    let mut events = Vec::new();
    for (r, d) in refs.iter().zip(&dists) {
        let mut submit = Vec::new();
        for picture in [r, d] {
            // Blocks only while every pool frame is still being read.
            let slot = pool.take(Duration::from_secs(10))?;
            // The stand-in decoder: a copy from the host on its stream.
            slot.write_from_host(&decoder, picture)?;
            let decoded = gpu.event()?;
            decoded.record(&decoder)?;
            let released = gpu.event()?;
            let acquire = if sync_file {
                decoded.synchronize()?;
                let dmabuf = slot.export_dmabuf()?;
                Acquire::SyncFile(export_sync_file(dmabuf.as_fd())?)
            } else {
                Acquire::DeviceEvent(decoded.as_raw())
            };
            let frame: Frame =
                slot.into_frame(acquire, vec![Release::DeviceEvent(released.as_raw())])?;
            submit.push(frame);
            events.push((decoded, released));
        }
        // submit_frames returns at once: the library stream waits for
        // `decoded` on the device.
        ctx.submit_frames(&submit[0], &submit[1])?;
    }
    let (counts, host_copies) = ctx.transfer_counts().expect("a GPU context");
    let scores = ctx.finish()?;
    // A decoder reusing a surface waits for its release event on its own
    // stream; here every frame is back already.
    for (_, released) in &events {
        decoder.wait(released)?;
    }
    decoder.synchronize()?;

    let mut sum = 0.0;
    for (frame, values) in &scores.frames {
        let v = values
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(f64::NAN, |(_, v)| *v);
        sum += v;
        println!("frame {frame:3}: {name} {v:.6}");
    }
    println!(
        "{layout} frames{}: {} scored, mean {name} {:.6}; planes read in place {}, by a layout pass {}, copied from the host {host_copies}; pool {}/{} free",
        if sync_file { " (sync_file acquire)" } else { "" },
        scores.frames.len(),
        sum / scores.frames.len() as f64,
        counts.in_place,
        counts.passes,
        pool.free_count(),
        pool.count(),
    );
    Ok(())
}

/// Every frame of a y4m file, at the bit depth of `layout` (8-bit samples
/// shifted up for P010).
fn read_all(path: &std::path::Path, layout: PixelFormat) -> Result<Vec<HostPicture>> {
    let mut src = open(path, None)?;
    let f = src.format();
    let format = PictureFormat::new(f.width, f.height, f.subsampling, layout.bit_depth())?;
    let mut out = Vec::new();
    loop {
        let mut p = HostPicture::new(f);
        if !src.read_into(&mut p)? {
            return Ok(out);
        }
        out.push(if format == f { p } else { widen(&p, format) });
    }
}

/// An 8-bit picture as 10-bit samples (value << 2).
fn widen(p: &HostPicture, format: PictureFormat) -> HostPicture {
    let mut out = HostPicture::new(format);
    for plane in PlaneId::ALL.into_iter().take(format.plane_count()) {
        let src = p.plane_u8(plane);
        let stride = out.stride(plane);
        let dst = out.plane_u16_mut(plane);
        for y in 0..src.height {
            for (x, &v) in src.row(y).iter().enumerate() {
                dst[y * stride + x] = u16::from(v) << 2;
            }
        }
    }
    out
}
