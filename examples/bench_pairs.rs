//! Writes the benchmark inputs: golden pairs scaled to benchmark sizes, as
//! raw `.yuv` and `.y4m` files, so that vmafx and libvmaf read the same
//! real frames (`docs/gpu-device-checks/bench.sh`).
//!
//! ```sh
//! target/release/examples/bench_pairs OUT_DIR [--sizes 1080,2160] [--frames 100]
//! ```
//!
//! 8-bit: `b_1280x720_420p8_zoom` (the reference and its bicubic down-up
//! scaled distortion); 10-bit: `c_576x324_420p10_zoom` (x265 main10).
//! Frames are scaled by nearest neighbour and cycled to `--frames`. Files:
//! `OUT_DIR/{ref,dist}_{W}x{H}_{8,10}bit.{yuv,y4m}`.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

struct Source {
    folder: &'static str,
    distorted: &'static str,
    width: usize,
    height: usize,
    bits: u32,
}

const SOURCES: [Source; 2] = [
    Source {
        folder: "b_1280x720_420p8_zoom",
        distorted: "downup_640x360_bicubic",
        width: 1280,
        height: 720,
        bits: 8,
    },
    Source {
        folder: "c_576x324_420p10_zoom",
        distorted: "x265_main10_crf30",
        width: 576,
        height: 324,
        bits: 10,
    },
];

/// Plane sizes of a 4:2:0 picture (chroma rounded up, as ffmpeg writes it).
fn planes(w: usize, h: usize) -> [(usize, usize); 3] {
    let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
    [(w, h), (cw, ch), (cw, ch)]
}

/// One packed frame scaled by nearest neighbour; `bps`: bytes per sample.
fn scale_frame(src: &[u8], sw: usize, sh: usize, dw: usize, dh: usize, bps: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(dw * dh * 2 * bps);
    let mut offset = 0;
    for ((pw, ph), (qw, qh)) in planes(sw, sh).into_iter().zip(planes(dw, dh)) {
        let plane = &src[offset..offset + pw * ph * bps];
        for y in 0..qh {
            let row = &plane[(y * ph / qh) * pw * bps..];
            for x in 0..qw {
                let s = (x * pw / qw) * bps;
                out.extend_from_slice(&row[s..s + bps]);
            }
        }
        offset += pw * ph * bps;
    }
    out
}

fn write_pair(
    out: &Path,
    src: &Source,
    golden: &Path,
    (w, h): (usize, usize),
    frames: usize,
) -> std::io::Result<()> {
    let bps = if src.bits > 8 { 2 } else { 1 };
    let frame_bytes: usize = planes(src.width, src.height)
        .iter()
        .map(|(pw, ph)| pw * ph * bps)
        .sum();
    for (side, file) in [("ref", "ref"), ("dist", src.distorted)] {
        let path = golden.join(src.folder).join(format!("{file}.yuv.zst"));
        let raw = zstd::stream::decode_all(File::open(&path)?)?;
        let scaled: Vec<Vec<u8>> = raw
            .chunks_exact(frame_bytes)
            .map(|f| scale_frame(f, src.width, src.height, w, h, bps))
            .collect();
        let stem = format!("{side}_{w}x{h}_{}bit", src.bits);
        let mut yuv = BufWriter::new(File::create(out.join(format!("{stem}.yuv")))?);
        let mut y4m = BufWriter::new(File::create(out.join(format!("{stem}.y4m")))?);
        let colorspace = if src.bits > 8 { "420p10" } else { "420jpeg" };
        writeln!(y4m, "YUV4MPEG2 W{w} H{h} F25:1 Ip A1:1 C{colorspace}")?;
        for i in 0..frames {
            let frame = &scaled[i % scaled.len()];
            yuv.write_all(frame)?;
            y4m.write_all(b"FRAME\n")?;
            y4m.write_all(frame)?;
        }
        yuv.flush()?;
        y4m.flush()?;
        println!("{}", out.join(format!("{stem}.{{yuv,y4m}}")).display());
    }
    Ok(())
}

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let mut out = None;
    let (mut sizes, mut frames) = (vec![1080, 2160], 100);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--sizes" => sizes = value().split(',').map(|s| s.parse().unwrap()).collect(),
            "--frames" => frames = value().parse().unwrap(),
            _ if out.is_none() => out = Some(PathBuf::from(&a)),
            _ => panic!("usage: bench_pairs OUT_DIR [--sizes 1080,2160] [--frames 100]"),
        }
    }
    let out = out.expect("usage: bench_pairs OUT_DIR [--sizes 1080,2160] [--frames 100]");
    std::fs::create_dir_all(&out)?;
    // VMAFX_TEST_ROOT: the checkout on a machine where the binary was not built.
    let root = std::env::var_os("VMAFX_TEST_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    let golden = root.join("tests/golden");
    for h in sizes {
        let w = h * 16 / 9;
        for src in &SOURCES {
            write_pair(&out, src, &golden, (w, h), frames)?;
        }
    }
    Ok(())
}
