//! Y'CbCr to CIELAB as libvmaf's `get_lab_color` does it: BT.709 limited
//! range to gamma-encoded R'G'B', sRGB linearisation, XYZ (D65), Lab; in
//! `double`, except that each Lab cube root is stored as a `float` (C's
//! `xyz_to_lab_map` returns `float`) and the result is three `float`s.
//!
//! The conversion costs six `pow` calls, so [`LabCache`] remembers recent
//! results: a colour depends only on its (y, u, v) samples, and pictures
//! repeat colours a lot.

use super::delta_e::Lab;

/// The inverse sRGB transfer function (libvmaf's `rgb_to_xyz_map`).
#[inline(always)]
fn linearize(c: f64) -> f64 {
    if c > 10.0 / 255.0 {
        ((c + 0.055) * (1.0 / 1.055)).powf(2.4)
    } else {
        c * (1.0 / 12.92)
    }
}

/// The CIELAB companding function (libvmaf's `xyz_to_lab_map`), rounded to
/// `float` as its return type does.
#[inline(always)]
fn lab_f(c: f64) -> f32 {
    const KAPPA: f64 = 24389.0 / 27.0;
    const EPSILON: f64 = 216.0 / 24389.0;
    if c > EPSILON {
        c.powf(1.0 / 3.0) as f32
    } else {
        ((KAPPA * c + 16.0) * (1.0 / 116.0)) as f32
    }
}

/// Converts one sample triple of `bit_depth` bits.
pub fn lab_color(y: u32, u: u32, v: u32, bit_depth: u8) -> Lab {
    let scale = (1u32 << (bit_depth - 8)) as f64;
    let y = (y as f64 - 16.0 * scale) * (1.0 / (219.0 * scale));
    let u = (u as f64 - 128.0 * scale) * (1.0 / (224.0 * scale));
    let v = (v as f64 - 128.0 * scale) * (1.0 / (224.0 * scale));

    let r = linearize(y + 1.28033 * v);
    let g = linearize(y - 0.21482 * u - 0.38059 * v);
    let b = linearize(y + 2.12798 * u);

    let x = r * 0.4124564390896921 + g * 0.357576077643909 + b * 0.18043748326639894;
    let yy = r * 0.21267285140562248 + g * 0.715152155287818 + b * 0.07217499330655958;
    let z = r * 0.019333895582329317 + g * 0.119192025881303 + b * 0.9503040785363677;

    let fx = lab_f(x * (1.0 / 0.95047)) as f64;
    let fy = lab_f(yy) as f64;
    let fz = lab_f(z * (1.0 / 1.08883)) as f64;

    Lab {
        l: (116.0 * fy - 16.0) as f32,
        a: (500.0 * (fx - fy)) as f32,
        b: (200.0 * (fy - fz)) as f32,
    }
}

/// A direct-mapped memo of [`lab_color`] for one bit depth.
pub struct LabCache {
    bit_depth: u8,
    slots: Vec<Slot>,
}

#[derive(Clone, Copy)]
struct Slot {
    /// Packed (y, u, v); [`EMPTY`] when unused.
    key: u64,
    lab: Lab,
}

/// No packed triple of samples below 2^16 reaches this key.
const EMPTY: u64 = u64::MAX;
/// 2^17 slots of 24 bytes (3 MB): pictures repeat colours across frames,
/// and more slots stopped paying off in measurements.
const SLOT_BITS: u32 = 17;

impl LabCache {
    pub fn new(bit_depth: u8) -> Self {
        let empty = Slot {
            key: EMPTY,
            lab: Lab {
                l: 0.0,
                a: 0.0,
                b: 0.0,
            },
        };
        Self {
            bit_depth,
            slots: vec![empty; 1 << SLOT_BITS],
        }
    }

    /// Packs samples (y, u, v), each below 2^16, into a cache key.
    #[inline(always)]
    pub fn key(y: u32, u: u32, v: u32) -> u64 {
        (u64::from(y) << 32) | (u64::from(u) << 16) | u64::from(v)
    }

    #[inline(always)]
    fn index(key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOT_BITS)) as usize
    }

    /// Starts loading the slot of `key`, so that a later [`Self::get`]
    /// finds it in the CPU cache.
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let slot: *const Slot = &self.slots[Self::index(key)];
            // SAFETY: prefetching is a hint; it never faults, and SSE is
            // part of every x86_64 CPU.
            #[allow(unused_unsafe)]
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(slot.cast())
            };
        }
    }

    /// The colour of the samples packed in `key`.
    #[inline(always)]
    pub fn get(&mut self, key: u64) -> Lab {
        let slot = &mut self.slots[Self::index(key)];
        if slot.key != key {
            let (y, u, v) = (
                (key >> 32) as u32,
                (key >> 16) as u32 & 0xFFFF,
                key as u32 & 0xFFFF,
            );
            *slot = Slot {
                key,
                lab: lab_color(y, u, v, self.bit_depth),
            };
        }
        slot.lab
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn video_white_and_black_are_lab_white_and_black() {
        let white = lab_color(235, 128, 128, 8);
        assert!(
            (white.l - 100.0).abs() < 1e-3 && white.a.abs() < 1e-2 && white.b.abs() < 1e-2,
            "{white:?}"
        );
        let black = lab_color(16, 128, 128, 8);
        assert!(
            black.l.abs() < 1e-4 && black.a == 0.0 && black.b == 0.0,
            "{black:?}"
        );
    }

    #[test]
    fn ten_bit_samples_scale_like_eight_bit_ones() {
        assert_eq!(
            lab_color(4 * 180, 4 * 100, 4 * 150, 10),
            lab_color(180, 100, 150, 8)
        );
    }

    #[test]
    fn cache_returns_the_computed_colour() {
        let mut cache = LabCache::new(10);
        for (y, u, v) in [
            (64, 512, 512),
            (940, 100, 900),
            (64, 512, 512),
            (0, 1023, 0),
        ] {
            assert_eq!(cache.get(LabCache::key(y, u, v)), lab_color(y, u, v, 10));
        }
    }
}
