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

/// Mean of the `topk` fraction (at least one) of the largest `values`;
/// reorders `values`.
pub fn top_k_mean(values: &mut [f32], topk: f64) -> f64 {
    let n = values.len();
    // libvmaf: clip((int)(topk * n), 1, n).
    let k = ((topk * n as i32 as f64) as i32).clamp(1, n as i32) as usize;
    quick_select(values, k);
    let sum = values[..k].iter().fold(0.0, |acc, &v| acc + f64::from(v));
    sum / k as f64
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

    #[test]
    fn ties_and_zeros() {
        let mut v = vec![0.0; 100];
        v[17] = 4.0;
        v[42] = 4.0;
        assert_eq!(top_k_mean(&mut v, 0.02), 4.0);
        assert_eq!(top_k_mean(&mut v, 0.04), 2.0);
    }
}
