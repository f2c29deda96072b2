//! Clips written for the readers' tests, and what they read back.

use super::*;
use crate::picture::ChromaSubsampling::*;
use std::fs::OpenOptions;
use std::path::PathBuf;

/// `n` packed frames of `format`, every sample below its limit and
/// different from frame to frame.
pub(super) fn frames(format: PictureFormat, n: usize) -> Vec<Vec<u8>> {
    let max = (1u32 << format.bit_depth) - 1;
    (0..n)
        .map(|f| {
            let samples = format.frame_bytes() / format.bytes_per_sample();
            let value = |i: usize| ((i * 7 + f * 13) as u32 % (max + 1)) as u16;
            if format.bytes_per_sample() == 1 {
                (0..samples).map(|i| value(i) as u8).collect()
            } else {
                (0..samples).flat_map(|i| value(i).to_le_bytes()).collect()
            }
        })
        .collect()
}

pub(super) fn write(path: &Path, bytes: &[u8]) -> PathBuf {
    std::fs::write(path, bytes).unwrap();
    path.to_path_buf()
}

/// A y4m file of `frames`; `pad` spaces of header make its length odd or
/// even (the offset parity of every frame's samples).
pub(super) fn y4m(dir: &Path, format: PictureFormat, frames: &[Vec<u8>], pad: usize) -> PathBuf {
    let layout = match format.subsampling {
        Yuv420 => "420",
        Yuv422 => "422",
        Yuv444 => "444",
        Yuv400 => "mono",
    };
    let colour = match format.bit_depth {
        8 => layout.to_string(),
        b => format!("{layout}p{b}"),
    };
    let mut bytes = format!(
        "YUV4MPEG2 W{} H{} F25:1 Ip C{colour}{}\n",
        format.width,
        format.height,
        " ".repeat(pad)
    )
    .into_bytes();
    for f in frames {
        bytes.extend_from_slice(b"FRAME\n");
        bytes.extend_from_slice(f);
    }
    write(&dir.join(format!("clip{pad}.y4m")), &bytes)
}

pub(super) fn yuv(dir: &Path, frames: &[Vec<u8>]) -> PathBuf {
    write(&dir.join("clip.yuv"), &frames.concat())
}

pub(super) fn open_source(path: &Path, format: PictureFormat) -> Box<dyn FrameSource> {
    let raw = (path.extension().unwrap() == "yuv").then_some(format);
    open(path, raw).unwrap()
}

/// Every plane's bytes, packed.
pub(super) fn packed(p: &HostPicture) -> Vec<u8> {
    let f = *p.format();
    let mut out = Vec::new();
    for plane in PlaneId::ALL.into_iter().take(f.plane_count()) {
        let (w, h) = f.plane_size(plane);
        let bytes = p.plane_bytes(plane);
        let row = w * f.bytes_per_sample();
        for y in 0..h {
            let at = y * p.stride(plane) * f.bytes_per_sample();
            out.extend_from_slice(&bytes[at..at + row]);
        }
    }
    out
}

/// Cuts the last frame of a three-frame clip of `format` off and 100
/// bytes of the frame before; `line`: the bytes of each frame's y4m
/// `FRAME` line (0 for raw .yuv), which goes with the last frame.
pub(super) fn cut_into_the_second_frame(path: &Path, format: PictureFormat, line: usize) {
    let len = std::fs::metadata(path).unwrap().len();
    let file = OpenOptions::new().write(true).open(path).unwrap();
    file.set_len(len - (line + format.frame_bytes()) as u64 - 100)
        .unwrap();
}

/// `read` is the error a clip cut by [`cut_into_the_second_frame`] gives
/// for its second frame: truncated, 100 bytes short.
pub(super) fn assert_second_frame_truncated(
    read: Result<Option<HostPicture>>,
    path: &Path,
    format: PictureFormat,
) {
    let bytes = format.frame_bytes();
    match read {
        Err(Error::BadInput { frame, reason, .. }) => {
            assert_eq!(frame, 1, "{}", path.display());
            assert_eq!(
                reason,
                format!("truncated: {} of {bytes} bytes", bytes - 100),
                "{}",
                path.display()
            );
        }
        other => panic!("{}: {other:?}", path.display()),
    }
}
