//! Temporal pooling of per-frame scores: min, max, mean and harmonic mean,
//! computed exactly as libvmaf's `vmaf_feature_score_pooled` does so pooled
//! values agree bit for bit.
//!
//! libvmaf accumulates in frame order in plain `double`s (no compensated
//! summation), and its "harmonic mean" is shifted by one so that scores of
//! 0 stay finite: `n / sum(1 / (x + 1)) - 1`.

/// The pooling methods libvmaf reports, in its output order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PoolMethod {
    Min,
    Max,
    Mean,
    HarmonicMean,
}

impl PoolMethod {
    /// Every method, in the order libvmaf writes them.
    pub const ALL: [PoolMethod; 4] = [
        PoolMethod::Min,
        PoolMethod::Max,
        PoolMethod::Mean,
        PoolMethod::HarmonicMean,
    ];

    /// The key libvmaf's outputs use for this method.
    pub fn name(self) -> &'static str {
        match self {
            PoolMethod::Min => "min",
            PoolMethod::Max => "max",
            PoolMethod::Mean => "mean",
            PoolMethod::HarmonicMean => "harmonic_mean",
        }
    }
}

/// The pooled values of one feature over the frames of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PooledMetric {
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub harmonic_mean: f64,
}

impl PooledMetric {
    /// The value of one pooling method.
    pub fn get(&self, method: PoolMethod) -> f64 {
        match method {
            PoolMethod::Min => self.min,
            PoolMethod::Max => self.max,
            PoolMethod::Mean => self.mean,
            PoolMethod::HarmonicMean => self.harmonic_mean,
        }
    }

    /// `(method, value)` pairs in libvmaf's output order.
    pub fn iter(&self) -> impl Iterator<Item = (PoolMethod, f64)> + '_ {
        PoolMethod::ALL.into_iter().map(|m| (m, self.get(m)))
    }
}

/// Streaming accumulator: push scores in frame order, then `finish`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pooler {
    count: u32,
    min: f64,
    max: f64,
    sum: f64,
    inverse_sum: f64,
}

impl Pooler {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the next frame's score.
    pub fn push(&mut self, score: f64) {
        // libvmaf takes the first score as is, then replaces it only on a
        // strict comparison: a NaN first score therefore sticks, later NaNs
        // are skipped. Written the same way to keep that behaviour.
        if self.count == 0 || score < self.min {
            self.min = score;
        }
        if self.count == 0 || score > self.max {
            self.max = score;
        }
        self.sum += score;
        self.inverse_sum += 1.0 / (score + 1.0);
        self.count += 1;
    }

    /// Number of scores pushed so far.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The pooled values, or `None` when no score was pushed (libvmaf then
    /// reports no pooled values either).
    pub fn finish(&self) -> Option<PooledMetric> {
        if self.count == 0 {
            return None;
        }
        // libvmaf divides by the frame count converted from `unsigned`.
        let n = f64::from(self.count);
        Some(PooledMetric {
            min: self.min,
            max: self.max,
            mean: self.sum / n,
            harmonic_mean: n / self.inverse_sum - 1.0,
        })
    }
}

/// Pools `scores`, given in frame order.
pub fn pool(scores: impl IntoIterator<Item = f64>) -> Option<PooledMetric> {
    let mut pooler = Pooler::new();
    scores.into_iter().for_each(|s| pooler.push(s));
    pooler.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_has_no_pooled_values() {
        assert_eq!(pool([]), None);
    }

    #[test]
    fn shifted_harmonic_mean() {
        let p = pool([0.0, 1.0, 3.0]).unwrap();
        assert_eq!(p.min, 0.0);
        assert_eq!(p.max, 3.0);
        assert_eq!(p.mean, 4.0 / 3.0);
        // 3 / (1 + 1/2 + 1/4) - 1
        assert_eq!(p.harmonic_mean, 3.0 / 1.75 - 1.0);
    }

    #[test]
    fn nan_first_sticks_later_nan_skipped() {
        let p = pool([f64::NAN, 1.0]).unwrap();
        assert!(p.min.is_nan() && p.max.is_nan() && p.mean.is_nan());
        let p = pool([2.0, f64::NAN, 1.0]).unwrap();
        assert_eq!((p.min, p.max), (1.0, 2.0));
        assert!(p.mean.is_nan());
    }
}
