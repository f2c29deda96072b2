//! The per-scale Gaussian filters of libvmaf's integer VIF.

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
}
