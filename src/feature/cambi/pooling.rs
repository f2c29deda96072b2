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

/// Sum, count of non-zero entries and smallest non-zero entry of
/// non-negative `values`, with independent accumulators (the caller only
/// uses the sum when no addition can round).
fn survey(values: &[f32]) -> (f64, usize, f32) {
    const LANES: usize = 8;
    let mut sums = [0.0f64; LANES];
    let mut nonzero = [0usize; LANES];
    let mut smallest = [f32::INFINITY; LANES];
    let chunks = values.chunks_exact(LANES);
    let rest = chunks.remainder();
    let mut add = |lane: usize, v: f32| {
        sums[lane] += f64::from(v);
        nonzero[lane] += usize::from(v != 0.0);
        let candidate = if v != 0.0 { v } else { f32::INFINITY };
        smallest[lane] = smallest[lane].min(candidate);
    };
    for chunk in chunks {
        for (lane, &v) in chunk.iter().enumerate() {
            add(lane, v);
        }
    }
    for (lane, &v) in rest.iter().enumerate() {
        add(lane, v);
    }
    (
        sums.iter().sum(),
        nonzero.iter().sum(),
        smallest.iter().copied().fold(f32::INFINITY, f32::min),
    )
}

/// Mean of the `topk` fraction (at least one) of the largest `values`
/// (non-negative); reorders `values`.
///
/// libvmaf sums the top k in the order its quick select leaves them. When
/// every partial sum of the values is exact in double precision (all are
/// multiples of the smallest one's ulp and their total stays below 2^53
/// of those), any order gives that same sum, and the top k can be found
/// faster; otherwise libvmaf's order is followed.
pub fn top_k_mean(values: &mut [f32], topk: f64) -> f64 {
    let n = values.len();
    // libvmaf: clip((int)(topk * n), 1, n).
    let k = ((topk * n as i32 as f64) as i32).clamp(1, n as i32) as usize;
    let (total, nonzero, smallest) = survey(values);
    let exact = nonzero == 0 || total < 2f64.powi(53) * ulp(smallest);
    let sum = if exact && nonzero <= k {
        // The top k are all non-zero values plus zeros.
        total
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
        let mean = top_k_mean(&mut v, 0.3);
        assert_eq!(mean, (9.0 + 8.0 + 7.0) / 3.0);
        let mut sorted = v[..3].to_vec();
        sorted.sort_by(f32::total_cmp);
        assert_eq!(sorted, vec![7.0, 8.0, 9.0]);
        // At least one element, and all of them at topk 1.
        assert_eq!(top_k_mean(&mut [1.0, 2.0], 0.0001), 2.0);
        assert_eq!(top_k_mean(&mut [1.0, 2.0], 1.0), 1.5);
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
                    if r < 400 + round * 2 { 0.0 } else { (r % 97) as f32 / (1 + r % 13) as f32 }
                })
                .collect();
            for topk in [0.0001, 0.1, 0.6, 1.0] {
                let mut reference = values.clone();
                let k = ((topk * n as f64) as usize).clamp(1, n);
                quick_select(&mut reference, k);
                let expected = reference[..k].iter().fold(0.0, |a, &v| a + f64::from(v)) / k as f64;
                assert_eq!(top_k_mean(&mut values.clone(), topk), expected, "n {n} topk {topk}");
            }
        }
    }

    #[test]
    fn ties_and_zeros() {
        let mut v = vec![0.0; 100];
        v[17] = 4.0;
        v[42] = 4.0;
        assert_eq!(top_k_mean(&mut v, 0.02), 4.0);
        assert_eq!(top_k_mean(&mut v, 0.04), 2.0);
    }
}
