//! A producer's frame description (size, pixel format, plane offsets and
//! pitches, one host allocation or one per plane) over host memory: made
//! into a frame and scored by a CPU context, or refused with an error.
//! Nothing may read outside the memory described.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::ptr::NonNull;
use vmafx::import::{Acquire, Frame, FrameDesc, HostMemory, Memory, PixelFormat, PlaneLayout};
use vmafx::{ChromaSubsampling, ContextBuilder};

/// The input read as little-endian fields, zeros past its end.
struct Fields<'a>(&'a [u8]);

impl Fields<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0; N];
        let n = N.min(self.0.len());
        out[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        out
    }
    fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
}

fn pixel_format(code: u8) -> PixelFormat {
    let planar = |subsampling, bit_depth| PixelFormat::Planar {
        subsampling,
        bit_depth,
    };
    match code % 16 {
        0 => planar(ChromaSubsampling::Yuv420, 8),
        1 => planar(ChromaSubsampling::Yuv422, 10),
        2 => planar(ChromaSubsampling::Yuv444, 12),
        3 => planar(ChromaSubsampling::Yuv400, 16),
        4 => planar(ChromaSubsampling::Yuv420, code / 16),
        k => PixelFormat::SEMI_PLANAR[(k as usize - 5) % PixelFormat::SEMI_PLANAR.len()],
    }
}

fuzz_target!(|data: &[u8]| {
    let mut f = Fields(data);
    let (width, height) = (u32::from(f.u16() % 1024), u32::from(f.u16() % 1024));
    let format = pixel_format(f.u8());
    let per_plane = f.u8() % 2 == 1;
    let layouts: Vec<PlaneLayout> = (0..f.u8() % 5)
        .map(|_| PlaneLayout::new(u64::from(f.u32()), u64::from(f.u16())))
        .collect();
    // Host memory the frames point into: up to 4 MiB, alive until the
    // context is done (the closure's end).
    let sizes: Vec<usize> = (0..layouts.len().max(1))
        .map(|_| (f.u32() as usize) % (4 << 20))
        .collect();
    let buffers: Vec<Vec<u8>> = sizes.iter().map(|&n| vec![0x5a; n]).collect();
    let host = |b: &Vec<u8>| {
        let ptr = NonNull::new(b.as_ptr() as *mut u8).unwrap_or(NonNull::dangling());
        // SAFETY: `buffers` outlives every frame (dropped last) and is not
        // written meanwhile.
        Memory::Host(unsafe { HostMemory::new(ptr, b.len()) })
    };
    let make = || {
        let desc = if per_plane {
            FrameDesc::per_plane(
                width,
                height,
                format,
                layouts
                    .iter()
                    .zip(&buffers)
                    .map(|(l, b)| (host(b), *l))
                    .collect(),
            )
        } else {
            FrameDesc::new(width, height, format, host(&buffers[0]), &layouts)
        };
        Frame::new(desc, Acquire::None, vec![])
    };
    let (Ok(reference), Ok(distorted)) = (make(), make()) else {
        return;
    };
    let Ok(picture_format) = reference.desc().picture_format() else {
        return;
    };
    let Ok(mut ctx) = ContextBuilder::new(picture_format)
        .feature("psnr", vec![])
        .build()
    else {
        return;
    };
    if ctx.submit_frames(&reference, &distorted).is_ok() {
        let _ = ctx.finish();
    }
});
