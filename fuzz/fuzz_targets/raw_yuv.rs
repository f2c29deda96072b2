//! A raw .yuv file of a format the input's first bytes choose (size,
//! subsampling, bit depth, any of them invalid), read frame by frame.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use vmafx::{ChromaSubsampling, HostPicture, PictureFormat};

fuzz_target!(|data: &[u8]| {
    let [w0, w1, h0, h1, sub, bits, body @ ..] = data else {
        return;
    };
    let width = u32::from(u16::from_le_bytes([*w0, *w1]));
    let height = u32::from(u16::from_le_bytes([*h0, *h1]));
    let subsampling = match sub % 4 {
        0 => ChromaSubsampling::Yuv420,
        1 => ChromaSubsampling::Yuv422,
        2 => ChromaSubsampling::Yuv444,
        _ => ChromaSubsampling::Yuv400,
    };
    let Ok(format) = PictureFormat::new(width, height, subsampling, *bits) else {
        return;
    };
    let path = common::scratch("f.yuv");
    std::fs::write(&path, body).unwrap();
    if let Ok(mut source) = vmafx::io::open(&path, Some(format)) {
        // The reader takes only whole frames: with data, a frame is no
        // larger than the input, so the picture is too.
        if body.is_empty() {
            return;
        }
        let mut picture = HostPicture::new(source.format());
        for _ in 0..4 {
            match source.read_into(&mut picture) {
                Ok(true) => {}
                Ok(false) | Err(_) => break,
            }
        }
    }
});
