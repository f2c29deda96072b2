//! Statistics of a bootstrap model collection for one frame, as libvmaf's
//! `vmaf_bootstrap_predict_score_at_index` computes them.

use super::regressor::Regressor;

/// Output name suffixes after the member scores, in libvmaf's order.
pub const STATISTICS: [&str; 4] = ["_bagging", "_stddev", "_ci_p95_lo", "_ci_p95_hi"];

/// Bagging score, standard deviation and 95 % interval of the members' raw
/// (untransformed, unclipped) predictions `raw`. The bagging score and the
/// interval ends are then transformed and clipped like a prediction of
/// `first` (the collection's first member); the standard deviation is
/// scaled by the slope of that mapping at the mean.
pub fn statistics(first: &Regressor, raw: &mut [f64]) -> [f64; 4] {
    let n = raw.len() as f64;
    let mean = raw.iter().fold(0.0, |sum, &s| sum + s) / n;
    // C's pow(d, 2), which compilers emit as d * d.
    let ssd = raw
        .iter()
        .fold(0.0, |sum, &s| sum + (s - mean) * (s - mean));
    let stddev = (ssd / n).sqrt();

    raw.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let lo = percentile(raw, 2.5);
    let hi = percentile(raw, 97.5);

    const DELTA: f64 = 0.01;
    let slope = (first.finish(mean + DELTA) - first.finish(mean - DELTA)) / (2.0 * DELTA);
    [
        first.finish(mean),
        stddev * slope,
        first.finish(lo),
        first.finish(hi),
    ]
}

/// Linear interpolation between the two order statistics around
/// `perc` percent of `sorted`.
fn percentile(sorted: &[f64], perc: f64) -> f64 {
    let p = perc * (sorted.len() - 1) as f64 / 100.0;
    let (l, r) = (p.floor(), p.ceil());
    let (il, ir) = (l as usize, r as usize);
    if il == ir {
        sorted[il]
    } else {
        sorted[il] * (r - p) + sorted[ir] * (p - l)
    }
}

#[cfg(test)]
mod tests {
    use super::percentile;

    #[test]
    fn percentile_interpolates() {
        let s = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(percentile(&s, 50.0), 3.0);
        assert_eq!(percentile(&s, 2.5), 1.0 * (1.0 - 0.1) + 2.0 * 0.1);
    }
}
