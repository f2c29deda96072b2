//! Constants of libvmaf's integer VIF: the per-scale Gaussian filters and
//! the fixed-point log2 table.

use std::sync::OnceLock;

/// Per-scale 1-D Gaussian filters in Q16 (each sums to 65536), scale 0 first.
pub const FILTERS: [&[u16]; 4] = [
    &[
        489, 935, 1640, 2640, 3896, 5274, 6547, 7455, 7784, 7455, 6547, 5274, 3896, 2640, 1640,
        935, 489,
    ],
    &[1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244],
    &[3571, 16004, 26386, 16004, 3571],
    &[10904, 43728, 10904],
];

/// The widest filter's half width: the most a pass reads past an edge.
pub const MAX_HALF: usize = FILTERS[0].len() / 2;

/// `log2(i) * 2048`, rounded, for 16-bit mantissas `i` in 32767..=65535
/// (other entries unused). libvmaf builds it as `round(log2f(i) * 2048)`:
/// the product is taken in single precision, so it is kept here too. The
/// single-precision log2 is taken as the correctly rounded double result
/// narrowed to float, which equals glibc's `log2f` on every entry and does
/// not depend on the platform's libm.
pub fn log2_table() -> &'static [u16; 65536] {
    static TABLE: OnceLock<Box<[u16; 65536]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Box::new([0u16; 65536]);
        for (i, v) in t.iter_mut().enumerate().skip(32767) {
            let log2 = (i as f64).log2() as f32;
            *v = f64::from(log2 * 2048.0).round() as u16;
        }
        t
    })
}

/// `log2(v) * 2048` for `v >= 2^16` from its top 16 bits: libvmaf's
/// `log2_32`/`log2_64` (the discarded low bits are truncated, not rounded).
#[inline(always)]
pub fn log2_fixed(table: &[u16; 65536], v: u64) -> i32 {
    let k = 48 - v.leading_zeros() as i32;
    // v < 2^16 never happens for VIF's arguments (all exceed 2^17); shifting
    // left keeps the lookup in range rather than panicking.
    let mantissa = if k >= 0 { v >> k } else { v << -k };
    i32::from(table[mantissa as usize & 0xffff]) + 2048 * k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_have_unit_gain() {
        for f in FILTERS {
            assert_eq!(f.iter().map(|&c| u32::from(c)).sum::<u32>(), 65536);
            assert_eq!(f.len() % 2, 1);
        }
    }

    #[test]
    fn log2_matches_float_log2() {
        let t = log2_table();
        assert_eq!(t[32768], 15 * 2048);
        assert_eq!(log2_fixed(t, 1 << 20), 20 * 2048);
        // 3 * 2^17 = 49152 * 2^3; log2(49152) * 2048 = 31918.003 -> 31918.
        assert_eq!(log2_fixed(t, 3 << 17), 31918 + 2048 * 3);
    }
}
