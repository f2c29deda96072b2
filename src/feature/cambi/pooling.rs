//! From c-values to a score: the mean of the top-k c-values of each scale
//! (libvmaf's `spatial_pooling`), then a weighted sum over the scales.

/// Weights of scales 0 (full resolution) to 4.
pub const SCALE_WEIGHTS: [f64; 5] = [16.0, 8.0, 4.0, 2.0, 1.0];

/// libvmaf's `quick_select`: partitions `values` so that its first `k`
/// entries are the `k` largest. The summation order of the pooled mean
/// depends on where the partitioning leaves them, so this follows
/// libvmaf's Hoare scheme step by step.
fn quick_select(values: &mut [f32], k: usize) {
    let n = values.len();
    if n == k {
        return;
    }
    let k = k as isize;
    let mut left: isize = 0;
    let mut right: isize = n as isize - 1;
    while left < right {
        let pivot = values[k as usize];
        let mut i = left;
        let mut j = right;
        loop {
            while values[i as usize] > pivot {
                i += 1;
            }
            while values[j as usize] < pivot {
                j -= 1;
            }
            if i <= j {
                values.swap(i as usize, j as usize);
                i += 1;
                j -= 1;
            }
            if i > j {
                break;
            }
        }
        if j < k {
            left = i;
        }
        if k < i {
            right = j;
        }
    }
}

/// What the pooling needs to know of a scale's c-values (non-negative):
/// their sum, how many are non-zero and the smallest non-zero one.
#[derive(Debug, Clone, Copy)]
pub struct Survey {
    total: f64,
    nonzero: usize,
    smallest: f32,
}

impl Default for Survey {
    fn default() -> Self {
        Self {
            total: 0.0,
            nonzero: 0,
            smallest: f32::INFINITY,
        }
    }
}

impl Survey {
    /// Records a non-zero value.
    #[inline(always)]
    pub fn add(&mut self, value: f32) {
        self.total += f64::from(value);
        self.nonzero += 1;
        if value < self.smallest {
            self.smallest = value;
        }
    }

    /// Surveys `values` (independent accumulators; the sum is only used
    /// when no addition can round).
    pub fn of(values: &[f32]) -> Self {
        const LANES: usize = 8;
        let mut lanes = [Self::default(); LANES];
        let chunks = values.chunks_exact(LANES);
        let rest = chunks.remainder();
        for chunk in chunks {
            for (lane, &v) in lanes.iter_mut().zip(chunk) {
                if v != 0.0 {
                    lane.add(v);
                }
            }
        }
        for (lane, &v) in lanes.iter_mut().zip(rest) {
            if v != 0.0 {
                lane.add(v);
            }
        }
        lanes
            .iter()
            .fold(Self::default(), |acc, &lane| acc.join(lane))
    }

    /// A survey of `nonzero` values (none: `Self::default()`) summing to
    /// `total`, the smallest `smallest`.
    pub fn new(total: f64, nonzero: usize, smallest: f32) -> Self {
        Self {
            total,
            nonzero,
            smallest,
        }
    }

    /// The survey of both surveys' values. The total is only used when
    /// every order of adding the values gives the same sum
    /// (`sums_exactly`, which no order can change), so surveys may be
    /// made in any order and joined.
    pub fn join(self, other: Self) -> Self {
        Self {
            total: self.total + other.total,
            nonzero: self.nonzero + other.nonzero,
            smallest: if other.smallest < self.smallest {
                other.smallest
            } else {
                self.smallest
            },
        }
    }

    /// Whether every partial sum of the values is exact in double
    /// precision: all are multiples of the smallest one's ulp, and their
    /// total stays below 2^53 of those.
    fn sums_exactly(&self) -> bool {
        self.nonzero == 0 || self.total < 2f64.powi(53) * ulp(self.smallest)
    }
}

/// Mean of the `topk` fraction (at least one) of the largest `values`
/// (non-negative, surveyed by `survey`); reorders `values`.
///
/// libvmaf sums the top k in the order its quick select leaves them. When
/// every partial sum of the values is exact in double precision (all are
/// multiples of the smallest one's ulp and their total stays below 2^53
/// of those), any order gives that same sum, and the top k can be found
/// faster; otherwise libvmaf's order is followed.
pub fn top_k_mean(values: &mut [f32], topk: f64, survey: &Survey) -> f64 {
    let n = values.len();
    let k = top_k_count(n, topk);
    let exact = survey.sums_exactly();
    let sum = if exact && survey.nonzero <= k {
        // The top k are all non-zero values plus zeros.
        survey.total
    } else if exact {
        let (top, kth, _) = values.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
        let top = top.iter().fold(0.0, |acc, &v| acc + f64::from(v));
        top + f64::from(*kth)
    } else {
        quick_select(values, k);
        values[..k].iter().fold(0.0, |acc, &v| acc + f64::from(v))
    };
    sum / k as f64
}

/// How many of `n` values the pooling averages: libvmaf's
/// `clip((int)(topk * n), 1, n)`.
pub fn top_k_count(n: usize, topk: f64) -> usize {
    ((topk * n as i32 as f64) as i32).clamp(1, n as i32) as usize
}

/// Distance from a positive normal `f32` to the next one down in
/// magnitude, as a double (the grid its multiples lie on).
fn ulp(v: f32) -> f64 {
    let exponent = ((v.to_bits() >> 23) & 0xff) as i32;
    2f64.powi(exponent.max(1) - 127 - 23)
}

/// The weighted sum of the per-scale scores over the window area.
pub fn combine_scales(scores: &[f64; 5], window: usize) -> f64 {
    let odd = 2 * (window >> 1) + 1;
    let pixels_in_window = (odd * odd) as u16;
    let weighted = scores
        .iter()
        .zip(SCALE_WEIGHTS)
        .fold(0.0, |acc, (s, w)| acc + s * w);
    weighted / f64::from(pixels_in_window)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_k_holds_the_largest() {
        let mut v = vec![3.0, 9.0, 1.0, 7.0, 5.0, 0.0, 8.0, 2.0, 6.0, 4.0];
        let survey = Survey::of(&v);
        let mean = top_k_mean(&mut v, 0.3, &survey);
        assert_eq!(mean, (9.0 + 8.0 + 7.0) / 3.0);
        let mut sorted = v[..3].to_vec();
        sorted.sort_by(f32::total_cmp);
        assert_eq!(sorted, vec![7.0, 8.0, 9.0]);
        // At least one element, and all of them at topk 1.
        assert_eq!(
            top_k_mean(&mut [1.0, 2.0], 0.0001, &Survey::of(&[1.0, 2.0])),
            2.0
        );
        assert_eq!(
            top_k_mean(&mut [1.0, 2.0], 1.0, &Survey::of(&[1.0, 2.0])),
            1.5
        );
    }

    /// The fast paths against libvmaf's quick select and summation order.
    #[test]
    fn fast_paths_agree_with_quick_select() {
        let mut seed = 1u32;
        for round in 0..200 {
            let n = 1 + (round as usize * 37) % 500;
            let values: Vec<f32> = (0..n)
                .map(|_| {
                    seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    let r = (seed >> 8) % 1000;
                    // Mostly zeros or small ratios like real c-values.
                    if r < 400 + round * 2 {
                        0.0
                    } else {
                        (r % 97) as f32 / (1 + r % 13) as f32
                    }
                })
                .collect();
            for topk in [0.0001, 0.1, 0.6, 1.0] {
                let mut reference = values.clone();
                let k = ((topk * n as f64) as usize).clamp(1, n);
                quick_select(&mut reference, k);
                let expected = reference[..k].iter().fold(0.0, |a, &v| a + f64::from(v)) / k as f64;
                assert_eq!(
                    top_k_mean(&mut values.clone(), topk, &Survey::of(&values)),
                    expected,
                    "n {n} topk {topk}"
                );
            }
        }
    }

    #[test]
    fn ties_and_zeros() {
        let mut v = vec![0.0; 100];
        v[17] = 4.0;
        v[42] = 4.0;
        assert_eq!(top_k_mean(&mut v.clone(), 0.02, &Survey::of(&v)), 4.0);
        assert_eq!(top_k_mean(&mut v.clone(), 0.04, &Survey::of(&v)), 2.0);
    }
}
