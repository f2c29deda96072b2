//! Synthetic test pictures: stress patterns at any size and depth, and
//! golden pictures scaled up to benchmark sizes.

use vmafx::{HostPicture, PictureFormat, PlaneId};

pub fn xorshift(seed: u32) -> impl FnMut() -> u32 {
    let mut state = seed.wrapping_mul(0x9e37_79b9) | 1;
    move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    }
}

/// A reference with flat, gradient and noisy regions, and a distorted
/// picture that copies, inverts or adds noise to it, region by region.
pub fn stress_pair(format: &PictureFormat, seed: u32) -> (HostPicture, HostPicture) {
    let max = (1u32 << format.bit_depth) - 1;
    let (w, h) = format.plane_size(PlaneId::Y);
    let mut next = xorshift(seed);
    let mut samples = vec![(0u32, 0u32); w * h];
    for y in 0..h {
        for x in 0..w {
            let region = (x * 4 / w) + 4 * (y * 2 / h) + seed as usize;
            let base = (x as u32 * 7 + y as u32 * 3) * (max / 64 + 1) % (max + 1);
            let r = match region % 4 {
                0 => max / 3,
                1 => base,
                2 => next() % (max + 1),
                _ => {
                    if (x + y) % 2 == 0 {
                        max
                    } else {
                        0
                    }
                }
            };
            let d = match region % 3 {
                0 => r,
                1 => max - r,
                _ => (r + next() % (max / 4 + 1)).min(max),
            };
            samples[y * w + x] = (r, d);
        }
    }
    let fill = |pick: fn(&(u32, u32)) -> u32| {
        let mut p = HostPicture::new(*format);
        let stride = p.stride(PlaneId::Y);
        for y in 0..h {
            for x in 0..w {
                let v = pick(&samples[y * w + x]);
                if format.bit_depth == 8 {
                    p.plane_u8_mut(PlaneId::Y)[y * stride + x] = v as u8;
                } else {
                    p.plane_u16_mut(PlaneId::Y)[y * stride + x] = v as u16;
                }
            }
        }
        p
    };
    (fill(|s| s.0), fill(|s| s.1))
}

/// Nearest-neighbour scaling of an 8-bit picture's luma to `format` (8 or
/// 10 bits; chroma is left at zero, the luma-only extractors timed with it read nothing else).
pub fn upscale(src: &HostPicture, format: &PictureFormat) -> HostPicture {
    let mut out = HostPicture::new(*format);
    let s = src.plane_u8(PlaneId::Y);
    let (w, h) = format.plane_size(PlaneId::Y);
    let stride = out.stride(PlaneId::Y);
    for y in 0..h {
        let row = s.row(y * s.height / h);
        for x in 0..w {
            let v = row[x * s.width / w];
            if format.bit_depth == 8 {
                out.plane_u8_mut(PlaneId::Y)[y * stride + x] = v;
            } else {
                let up = u32::from(format.bit_depth - 8);
                out.plane_u16_mut(PlaneId::Y)[y * stride + x] =
                    (u16::from(v) << up) | (x as u16 & 3);
            }
        }
    }
    out
}

/// Nearest-neighbour scaling of every plane of an 8-bit picture to
/// `format` (8 or 10 bits; 10-bit samples get two varying low bits), for
/// extractors that read chroma too.
pub fn upscale_all_planes(src: &HostPicture, format: &PictureFormat) -> HostPicture {
    let mut out = HostPicture::new(*format);
    for id in PlaneId::ALL {
        let s = src.plane_u8(id);
        let (w, h) = format.plane_size(id);
        let stride = out.stride(id);
        for y in 0..h {
            let row = s.row(y * s.height / h);
            for x in 0..w {
                let v = row[x * s.width / w];
                if format.bit_depth == 8 {
                    out.plane_u8_mut(id)[y * stride + x] = v;
                } else {
                    let up = u32::from(format.bit_depth - 8);
                    out.plane_u16_mut(id)[y * stride + x] = (u16::from(v) << up) | (x as u16 & 3);
                }
            }
        }
    }
    out
}

/// The first `frames` 10-bit pictures at `format`'s wider depth: samples
/// shifted up, low bits pseudo-random (12- and 16-bit input from the 10-bit
/// golden pairs).
pub fn widen(
    pictures: &[HostPicture],
    format: &PictureFormat,
    seed: u32,
    frames: usize,
) -> Vec<HostPicture> {
    let mut next = xorshift(seed);
    let up = u32::from(format.bit_depth - 10);
    pictures
        .iter()
        .take(frames)
        .map(|src| {
            let mut out = HostPicture::new(*format);
            for plane in PlaneId::ALL {
                let s = src.plane_u16(plane);
                let stride = out.stride(plane);
                let dst = out.plane_u16_mut(plane);
                for y in 0..s.height {
                    for (x, &v) in s.row(y).iter().enumerate() {
                        let low = next() & ((1 << up) - 1);
                        dst[y * stride + x] = ((u32::from(v) << up) | low) as u16;
                    }
                }
            }
            out
        })
        .collect()
}
