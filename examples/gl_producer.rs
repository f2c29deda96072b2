//! A GL producer: an EGL device context with no window, each picture's
//! planes in R8 textures (planar 4:2:0), a `glFenceSync` after the writes as
//! the acquire fence; vmafx scores the textures on the CUDA device through
//! the driver's GL interop (one device copy per plane, no host copy) and
//! the example checks the scores against the same pictures uploaded from
//! the host.
//!
//! ```sh
//! cargo run --release --example gl_producer
//! ```
//!
//! Needs a CUDA device and an EGL driver for it (NVIDIA: libEGL plus the
//! vendor's EGL ICD; see docs/gpu-testing.md for the H200 set-up).

// The EGL/GL set-up is the one the tests use.
#[path = "../tests/producers/gl.rs"]
#[allow(dead_code)]
mod gl;

use glow::HasContext;
use vmafx::gpu::{self, DeviceSelector, GpuBackend};
use vmafx::import::pack::pack_plane;
use vmafx::import::{
    Acquire, Frame, FrameDesc, GlSync, GlTexture, Memory, PixelFormat, PlaneLayout,
};
use vmafx::io::open;
use vmafx::model::{Model, ModelSpec};
use vmafx::{ContextBuilder, HostPicture};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Result<()> {
    let gpu = match gpu::open(GpuBackend::Cuda, &DeviceSelector::default()) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("gl_producer needs a CUDA device: {e}");
            std::process::exit(1);
        }
    };
    let gl = gl::Gl::new().map_err(|e| format!("no EGL/GL context: {e}"))?;
    println!("device: {}\nGL: {}", gpu.describe(), gl.version);

    let root = std::env::var_os("VMAFX_TEST_ROOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
    let data = root.join("examples/data");
    let refs = read_all(&data.join("ref_576x324.y4m"))?;
    let dists = read_all(&data.join("dist_576x324_x264_crf30.y4m"))?;
    let format = *refs[0].format();
    let layout = PixelFormat::Planar {
        subsampling: format.subsampling,
        bit_depth: 8,
    };
    let model = || Model::load(&ModelSpec::version("vmaf_v0.6.1"));

    let mut ctx = ContextBuilder::new(format)
        .model(model()?)
        .gpu(gpu.clone())
        .build()?;
    // Textures stay alive (and unchanged) while the context may read them.
    let mut textures = Vec::new();
    for (r, d) in refs.iter().zip(&dists) {
        let mut pair = Vec::new();
        for picture in [r, d] {
            let planes = (0..3)
                .map(|i| {
                    let (w, h) = layout.plane_extent(i, format.width, format.height);
                    let texture =
                        gl.r8_texture(w as i32, h as i32, &pack_plane(picture, layout, i, w))?;
                    textures.push(texture);
                    // SAFETY: our texture of the context current on this
                    // thread, which submits; deleted only after `finish`.
                    let memory = Memory::GlTexture(unsafe { GlTexture::new(texture.0.get()) });
                    Ok((memory, PlaneLayout::new(0, w as u64)))
                })
                .collect::<std::result::Result<Vec<_>, String>>()?;
            // "Written": a fence after the texture writes, waited on this
            // thread (where the GL context is current) before the copy.
            // SAFETY: our current context.
            let fence = unsafe { gl.gl.fence_sync(glow::SYNC_GPU_COMMANDS_COMPLETE, 0)? };
            let desc = FrameDesc::per_plane(format.width, format.height, layout, planes);
            pair.push(Frame::new(
                desc,
                // SAFETY: the sync above, of this thread's current context.
                Acquire::GlSync(unsafe { GlSync::from_raw(fence.0 as usize) }),
                vec![],
            )?);
        }
        ctx.submit_frames(&pair[0], &pair[1])?;
    }
    let (counts, host_copies) = ctx.transfer_counts().expect("a GPU context");
    let scores = ctx.finish()?;

    // The same pictures from the host, for comparison.
    let mut host = ContextBuilder::new(format).model(model()?).build()?;
    for (r, d) in refs.iter().zip(&dists) {
        host.submit(r.clone(), d.clone())?;
    }
    let host = host.finish()?;
    let mut sum = 0.0;
    for ((frame, values), (_, host_values)) in scores.frames.iter().zip(&host.frames) {
        let v = values
            .iter()
            .find(|(n, _)| n == "vmaf")
            .map_or(f64::NAN, |(_, v)| *v);
        let hv = host_values
            .iter()
            .find(|(n, _)| n == "vmaf")
            .map_or(f64::NAN, |(_, v)| *v);
        sum += v;
        let same = if v.to_bits() == hv.to_bits() {
            "identical to host upload"
        } else {
            "DIFFERS from host upload"
        };
        println!("frame {frame:3}: vmaf {v:.6} ({same})");
    }
    println!(
        "{} frames from GL textures: mean vmaf {:.6}; planes copied once from their texture on the device {}, copied from the host {host_copies}",
        scores.frames.len(),
        sum / scores.frames.len() as f64,
        counts.arrays,
    );
    for t in textures {
        gl.delete_texture(t);
    }
    Ok(())
}

fn read_all(path: &std::path::Path) -> Result<Vec<HostPicture>> {
    let mut src = open(path, None)?;
    let mut out = Vec::new();
    loop {
        let mut p = HostPicture::new(src.format());
        if !src.read_into(&mut p)? {
            return Ok(out);
        }
        out.push(p);
    }
}
