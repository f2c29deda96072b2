//! CPU speed at 1080p: the whole default model (one thread and all
//! threads) and each extractor alone, on one thread.
//!
//! Input: the golden 1280x720 pair (ladybird zoom, bicubic down/up scaled),
//! upscaled to 1920x1080 with bilinear interpolation: real picture content at
//! the size libvmaf's reference numbers were measured at.
//!
//! Run: `cargo bench --bench vmaf_cpu` (`-- vmaf_v0.6.1` for the model only).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::path::Path;
use vmafx::model::{Model, ModelSpec};
use vmafx::{ChromaSubsampling, ContextBuilder, HostPicture, PictureFormat, PlaneId};

/// Frames of the golden 720p pair (upscaled); the model group cycles them
/// `MODEL_LOOPS` times so thread start-up and context set-up are amortised,
/// as libvmaf's reference numbers loop their clips.
const FRAMES: usize = 6;
const MODEL_LOOPS: usize = 4;

fn load_720p(name: &str) -> Vec<Vec<u8>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/b_1280x720_420p8_zoom")
        .join(name);
    let bytes = zstd::stream::decode_all(std::fs::File::open(path).unwrap()).unwrap();
    bytes
        .chunks_exact(1280 * 720 * 3 / 2)
        .map(|f| f.to_vec())
        .collect()
}

/// Bilinear resize of one 8-bit plane.
fn resize(src: &[u8], sw: usize, sh: usize, dw: usize, dh: usize) -> Vec<u8> {
    let mut out = vec![0u8; dw * dh];
    for y in 0..dh {
        let fy = (y as f64 + 0.5) * sh as f64 / dh as f64 - 0.5;
        let y0 = fy.floor().clamp(0.0, (sh - 1) as f64) as usize;
        let y1 = (y0 + 1).min(sh - 1);
        let wy = (fy - y0 as f64).clamp(0.0, 1.0);
        for x in 0..dw {
            let fx = (x as f64 + 0.5) * sw as f64 / dw as f64 - 0.5;
            let x0 = fx.floor().clamp(0.0, (sw - 1) as f64) as usize;
            let x1 = (x0 + 1).min(sw - 1);
            let wx = (fx - x0 as f64).clamp(0.0, 1.0);
            let p = |xx: usize, yy: usize| src[yy * sw + xx] as f64;
            let v = (p(x0, y0) * (1.0 - wx) + p(x1, y0) * wx) * (1.0 - wy)
                + (p(x0, y1) * (1.0 - wx) + p(x1, y1) * wx) * wy;
            out[y * dw + x] = v.round() as u8;
        }
    }
    out
}

fn to_1080p(frames: Vec<Vec<u8>>) -> Vec<HostPicture> {
    let format = PictureFormat::new(1920, 1080, ChromaSubsampling::Yuv420, 8).unwrap();
    frames
        .iter()
        .map(|f| {
            let (y, rest) = f.split_at(1280 * 720);
            let (u, v) = rest.split_at(640 * 360);
            let mut p = HostPicture::new(format);
            p.plane_u8_mut(PlaneId::Y)
                .copy_from_slice(&resize(y, 1280, 720, 1920, 1080));
            p.plane_u8_mut(PlaneId::Cb)
                .copy_from_slice(&resize(u, 640, 360, 960, 540));
            p.plane_u8_mut(PlaneId::Cr)
                .copy_from_slice(&resize(v, 640, 360, 960, 540));
            p
        })
        .collect()
}

struct Input {
    reference: Vec<HostPicture>,
    distorted: Vec<HostPicture>,
}

impl Input {
    fn load() -> Self {
        Self {
            reference: to_1080p(load_720p("ref.yuv.zst")),
            distorted: to_1080p(load_720p("downup_640x360_bicubic.yuv.zst")),
        }
    }

    /// Scores all frames, `loops` times over, with a fresh context.
    fn score(&self, builder: ContextBuilder, loops: usize) {
        let mut ctx = builder.build().unwrap();
        for _ in 0..loops {
            for (r, d) in self.reference.iter().zip(&self.distorted) {
                ctx.submit(r.clone(), d.clone()).unwrap();
            }
        }
        std::hint::black_box(ctx.finish().unwrap());
    }
}

fn format() -> PictureFormat {
    PictureFormat::new(1920, 1080, ChromaSubsampling::Yuv420, 8).unwrap()
}

fn vmaf_model(c: &mut Criterion) {
    let input = Input::load();
    let mut g = c.benchmark_group("vmaf_v0.6.1_1080p");
    g.sample_size(10);
    g.throughput(Throughput::Elements((FRAMES * MODEL_LOOPS) as u64));
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    for t in [1, threads] {
        g.bench_with_input(BenchmarkId::new("threads", t), &t, |b, &t| {
            b.iter(|| {
                let model = Model::load(&ModelSpec::version("vmaf_v0.6.1")).unwrap();
                input.score(
                    ContextBuilder::new(format()).model(model).threads(t),
                    MODEL_LOOPS,
                )
            })
        });
    }
    g.finish();
}

fn extractors(c: &mut Criterion) {
    let input = Input::load();
    let mut g = c.benchmark_group("extractor_1080p");
    g.sample_size(10);
    g.throughput(Throughput::Elements(FRAMES as u64));
    for info in vmafx::feature::REGISTRY {
        g.bench_function(info.name, |b| {
            b.iter(|| input.score(ContextBuilder::new(format()).feature(info.name, vec![]), 1))
        });
    }
    g.finish();
}

criterion_group!(benches, vmaf_model, extractors);
criterion_main!(benches);
