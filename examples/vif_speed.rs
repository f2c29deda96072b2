//! VIF alone at 1080p, 8-bit and 10-bit, one thread: prints CPU ms/frame.
//! Run: `cargo run --release --example vif_speed [frames] [8|10]`.

use std::path::Path;
use vmafx::{ChromaSubsampling, ContextBuilder, HostPicture, PictureFormat, PlaneId};

fn load_720p_luma(name: &str) -> Vec<Vec<u8>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/b_1280x720_420p8_zoom")
        .join(name);
    let bytes = zstd::stream::decode_all(std::fs::File::open(path).unwrap()).unwrap();
    bytes
        .chunks_exact(1280 * 720 * 3 / 2)
        .map(|f| f[..1280 * 720].to_vec())
        .collect()
}

/// Nearest-neighbour 1280x720 -> 1920x1080 upscale, at `bits` bits.
fn to_1080p(luma: &[u8], bits: u8) -> HostPicture {
    let format = PictureFormat::new(1920, 1080, ChromaSubsampling::Yuv420, bits).unwrap();
    let mut p = HostPicture::new(format);
    let sample = |x: usize, y: usize| luma[(y * 2 / 3) * 1280 + x * 2 / 3];
    if bits == 8 {
        let plane = p.plane_u8_mut(PlaneId::Y);
        for y in 0..1080 {
            for x in 0..1920 {
                plane[y * 1920 + x] = sample(x, y);
            }
        }
    } else {
        let plane = p.plane_u16_mut(PlaneId::Y);
        for y in 0..1080 {
            for x in 0..1920 {
                plane[y * 1920 + x] = (u16::from(sample(x, y)) << 2) | ((x ^ y) as u16 & 3);
            }
        }
    }
    p
}

fn cpu_seconds() -> f64 {
    let mut ts = std::mem::MaybeUninit::<[i64; 2]>::uninit();
    // CLOCK_PROCESS_CPUTIME_ID = 2
    extern "C" {
        fn clock_gettime(clk: i32, ts: *mut [i64; 2]) -> i32;
    }
    unsafe {
        clock_gettime(2, ts.as_mut_ptr());
        let [s, ns] = ts.assume_init();
        s as f64 + ns as f64 * 1e-9
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let frames: usize = args.get(1).map_or(30, |a| a.parse().unwrap());
    let bits: u8 = args.get(2).map_or(8, |a| a.parse().unwrap());
    let r = load_720p_luma("ref.yuv.zst");
    let d = load_720p_luma("downup_640x360_bicubic.yuv.zst");
    let refs: Vec<_> = r.iter().map(|f| to_1080p(f, bits)).collect();
    let dists: Vec<_> = d.iter().map(|f| to_1080p(f, bits)).collect();
    let format = *refs[0].format();
    let mut ctx = ContextBuilder::new(format)
        .feature("vif", vec![])
        .build()
        .unwrap();
    let start = cpu_seconds();
    for i in 0..frames {
        let k = i % refs.len();
        ctx.submit(refs[k].clone(), dists[k].clone()).unwrap();
    }
    let out = ctx.finish().unwrap();
    let spent = cpu_seconds() - start;
    std::hint::black_box(out);
    println!(
        "{bits}-bit: {:.2} ms/frame CPU ({frames} frames)",
        spent * 1e3 / frames as f64
    );
}
