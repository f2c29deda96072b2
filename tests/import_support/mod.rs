//! Helpers for the import tests: golden frames packed into the layouts
//! producers write (planar, semi-planar, padded rows, offset planes), host
//! memory and memfds holding them, scoring, and open-fd counts.
#![allow(dead_code)]

pub mod egl;
pub mod vulkan;

use crate::common::{Pair, PAIRS};
use std::os::fd::OwnedFd;
use std::ptr::NonNull;
use vmafx::import::{HostMemory, Memory, PixelFormat, PlaneLayout};
use vmafx::model::{Model, ModelSpec};
use vmafx::picture::PlaneSamples;
use vmafx::{ContextBuilder, FeatureScores, HostPicture, PictureFormat, PlaneId};

/// The golden pair in `folder`.
pub fn golden(folder: &str) -> &'static Pair {
    PAIRS
        .iter()
        .find(|p| p.folder == folder)
        .unwrap_or_else(|| panic!("no golden pair in {folder}"))
}

/// The first `n` reference/distorted picture pairs of a golden pair.
pub fn golden_frames(pair: &Pair, n: usize) -> Vec<(HostPicture, HostPicture)> {
    pair.reference()
        .into_iter()
        .zip(pair.distorted_pictures())
        .take(n)
        .collect()
}

/// A picture at another bit depth: samples shifted up or down (how the
/// 16-bit and the missing 8/10-bit layouts are derived from the goldens).
pub fn rescale(p: &HostPicture, bit_depth: u8) -> HostPicture {
    let f = *p.format();
    let to = PictureFormat::new(f.width, f.height, f.subsampling, bit_depth).unwrap();
    let mut out = HostPicture::new(to);
    for id in PlaneId::ALL.into_iter().take(f.plane_count()) {
        let samples: Vec<u32> = samples(p, id);
        let shifted = samples.iter().map(|&v| {
            if bit_depth >= f.bit_depth {
                v << (bit_depth - f.bit_depth)
            } else {
                v >> (f.bit_depth - bit_depth)
            }
        });
        if bit_depth > 8 {
            for (d, v) in out.plane_u16_mut(id).iter_mut().zip(shifted) {
                *d = v as u16;
            }
        } else {
            for (d, v) in out.plane_u8_mut(id).iter_mut().zip(shifted) {
                *d = v as u8;
            }
        }
    }
    out
}

/// A plane's samples, row by row (tightly packed pictures only).
fn samples(p: &HostPicture, id: PlaneId) -> Vec<u32> {
    match p.plane(id) {
        PlaneSamples::U8(q) => (0..q.height)
            .flat_map(|y| q.row(y).iter().map(|&v| v as u32))
            .collect(),
        PlaneSamples::U16(q) => (0..q.height)
            .flat_map(|y| q.row(y).iter().map(|&v| v as u32))
            .collect(),
    }
}

/// A frame as a producer lays it out: the bytes and each memory plane's
/// offset and pitch.
pub struct Packed {
    pub bytes: Vec<u8>,
    pub planes: Vec<PlaneLayout>,
}

/// Lays `p` out as `format` from byte `offset` on: rows padded to a
/// multiple of 64 bytes plus 64 (padding filled with 0xA5, which a reader
/// must skip), samples above 8 bits as little-endian words shifted to the
/// format's position, Cb and Cr interleaved for semi-planar formats.
pub fn pack(p: &HostPicture, format: PixelFormat, offset: usize) -> Packed {
    let f = *p.format();
    assert_eq!(
        format.picture_format(f.width, f.height).unwrap(),
        f,
        "{format}"
    );
    let shift = format.sample_shift();
    let wide = format.bytes_per_sample() == 2;
    let put = |out: &mut Vec<u8>, v: u32| {
        if wide {
            out.extend(((v << shift) as u16).to_le_bytes());
        } else {
            out.push(v as u8);
        }
    };
    let mut bytes = vec![0x5Au8; offset];
    let mut planes = Vec::new();
    for plane in 0..format.memory_planes() {
        let (row_bytes, rows) = format.plane_extent(plane, f.width, f.height);
        let pitch = row_bytes.div_ceil(64) * 64 + 64;
        planes.push(PlaneLayout::new(bytes.len() as u64, pitch as u64));
        let rows_of = |id: PlaneId| -> Vec<Vec<u32>> {
            let (w, _) = f.plane_size(id);
            samples(p, id).chunks(w).map(|r| r.to_vec()).collect()
        };
        let source: Vec<Vec<u32>> = if format.is_semi_planar() && plane == 1 {
            rows_of(PlaneId::Cb)
                .into_iter()
                .zip(rows_of(PlaneId::Cr))
                .map(|(b, r)| b.into_iter().zip(r).flat_map(|(b, r)| [b, r]).collect())
                .collect()
        } else {
            rows_of(PlaneId::ALL[plane])
        };
        assert_eq!(source.len(), rows);
        for row in source {
            let start = bytes.len();
            for v in row {
                put(&mut bytes, v);
            }
            assert_eq!(bytes.len() - start, row_bytes);
            bytes.resize(start + pitch, 0xA5);
        }
    }
    Packed { bytes, planes }
}

/// Host memory over `bytes`, which the caller keeps alive and unwritten
/// until the frame is released.
pub fn host_memory(bytes: &[u8]) -> Memory {
    // SAFETY: the tests keep `bytes` alive and unwritten until release.
    Memory::Host(unsafe { HostMemory::new(NonNull::from(bytes).cast(), bytes.len()) })
}

/// A memfd holding `bytes`.
pub fn memfd(bytes: &[u8]) -> OwnedFd {
    use std::io::Write;
    let fd = nix::sys::memfd::memfd_create(
        c"vmafx-test-frame",
        nix::sys::memfd::MemFdCreateFlag::MFD_CLOEXEC,
    )
    .unwrap();
    let mut file = std::fs::File::from(fd);
    file.write_all(bytes).unwrap();
    file.into()
}

pub fn model(spec: &str) -> Model {
    Model::load(&ModelSpec::parse(spec).unwrap()).unwrap()
}

/// vmaf_v0.6.1 and psnr (all three planes) on `threads` threads.
pub fn context(format: PictureFormat, threads: usize) -> ContextBuilder {
    ContextBuilder::new(format)
        .model(model("version=vmaf_v0.6.1"))
        .feature("psnr", vec![])
        .threads(threads)
}

/// The scores of `pairs` submitted as host pictures.
pub fn score_pictures(pairs: &[(HostPicture, HostPicture)], threads: usize) -> FeatureScores {
    let mut ctx = context(*pairs[0].0.format(), threads).build().unwrap();
    for (r, d) in pairs {
        ctx.submit(r.clone(), d.clone()).unwrap();
    }
    ctx.finish().unwrap()
}

/// Asserts two runs produced the same names and bit-identical values.
pub fn assert_identical(what: &str, got: &FeatureScores, want: &FeatureScores) {
    assert_eq!(got.frames.len(), want.frames.len(), "{what}: frame count");
    assert!(!want.frames.is_empty(), "{what}: no frames scored");
    for ((gi, g), (wi, w)) in got.frames.iter().zip(&want.frames) {
        assert_eq!(gi, wi, "{what}: frame order");
        assert_eq!(g.len(), w.len(), "{what}: frame {wi}: value count");
        for ((gn, gv), (wn, wv)) in g.iter().zip(w) {
            assert_eq!(gn, wn, "{what}: frame {wi}: names");
            assert_eq!(
                gv.to_bits(),
                wv.to_bits(),
                "{what}: frame {wi} {wn}: {gv} vs {wv}"
            );
        }
    }
    assert_eq!(
        got.aggregate.len(),
        want.aggregate.len(),
        "{what}: aggregates"
    );
    for ((gn, gv), (wn, wv)) in got.aggregate.iter().zip(&want.aggregate) {
        assert_eq!(gn, wn, "{what}: aggregate names");
        assert_eq!(
            gv.to_bits(),
            wv.to_bits(),
            "{what}: aggregate {wn}: {gv} vs {wv}"
        );
    }
}

/// Entries of /proc/self/fd.
pub fn fd_count() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Whether a test needing `what` runs: true when available; when missing,
/// fails if `require_var` is `1` (CI), else records why it skips.
pub fn available(what: &str, require_var: &str, probe: Result<(), String>) -> bool {
    match probe {
        Ok(()) => true,
        Err(reason) => {
            vmafx::testing::skip(require_var, format_args!("{what} unavailable ({reason})"));
            false
        }
    }
}
