//! `ssimulacra2` speed per frame at the golden sizes: the 576x324 8-bit
//! pair `a` (x264 CRF 30, 30 frames) and the 1280x720 pair `b` (6 frames),
//! one thread, the extractor alone (no context, no file reading).
//!
//! Run: `cargo bench --bench ssimulacra2`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::path::Path;
use vmafx::feature::ssimulacra2::colour::YuvMatrix;
use vmafx::feature::ssimulacra2::Ssimulacra2;
use vmafx::{ChromaSubsampling, HostPicture, PictureFormat};

fn load(folder: &str, file: &str, format: PictureFormat) -> Vec<HostPicture> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(folder)
        .join(file);
    let bytes = zstd::stream::decode_all(std::fs::File::open(path).unwrap()).unwrap();
    bytes
        .chunks_exact(format.frame_bytes())
        .map(|frame| {
            let mut p = HostPicture::new(format);
            p.fill_from_packed(frame);
            p
        })
        .collect()
}

fn frames(c: &mut Criterion) {
    let mut g = c.benchmark_group("ssimulacra2");
    g.sample_size(10);
    let pairs = [
        ("a_576x324_420p8_pan", "x264_crf30.yuv.zst", 576, 324),
        (
            "b_1280x720_420p8_zoom",
            "downup_640x360_bicubic.yuv.zst",
            1280,
            720,
        ),
    ];
    for (folder, distorted, w, h) in pairs {
        let format = PictureFormat::new(w, h, ChromaSubsampling::Yuv420, 8).unwrap();
        let reference = load(folder, "ref.yuv.zst", format);
        let distorted = load(folder, distorted, format);
        let mut metric = Ssimulacra2::new(YuvMatrix::Bt709Limited);
        g.throughput(Throughput::Elements(reference.len() as u64));
        g.bench_function(format!("{w}x{h}"), |b| {
            b.iter(|| {
                for (r, d) in reference.iter().zip(&distorted) {
                    std::hint::black_box(metric.frame_score(r, d));
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, frames);
criterion_main!(benches);
