//! Turns the per-scale sums into libvmaf's `adm` features and emits them
//! under their (suffixed) names.

use super::pipeline::{ScaleScore, SCALES};
use crate::feature::FeatureSink;

/// How the scales combine into ADM2, AIM and ADM3.
#[derive(Debug, Clone, Copy)]
pub struct Pooling {
    /// Weight of ADM2 against 1 - AIM in ADM3.
    pub dlm_weight: f64,
    /// Lower bound of ADM3.
    pub min_val: f64,
    /// Also emit the numerators and denominators.
    pub debug: bool,
    /// Luma pixels, which scale the "zero" threshold of the sums.
    pub pixels: f64,
}

/// Output names with the option suffix applied.
pub struct Names {
    adm2: String,
    aim: String,
    adm3: String,
    scale: [String; SCALES],
    adm: String,
    num: String,
    den: String,
    num_scale: [String; SCALES],
    den_scale: [String; SCALES],
}

impl Names {
    pub fn new(suffix: &str) -> Self {
        let n = |base: &str| format!("{base}{suffix}");
        Self {
            adm2: n("integer_adm2"),
            aim: n("integer_aim"),
            adm3: n("integer_adm3"),
            scale: std::array::from_fn(|s| n(&format!("integer_adm_scale{s}"))),
            adm: n("integer_adm"),
            num: n("integer_adm_num"),
            den: n("integer_adm_den"),
            num_scale: std::array::from_fn(|s| n(&format!("integer_adm_num_scale{s}"))),
            den_scale: std::array::from_fn(|s| n(&format!("integer_adm_den_scale{s}"))),
        }
    }
}

/// Emits the features of frame `index`, in libvmaf's order.
pub fn emit(
    index: u32,
    scores: &[ScaleScore; SCALES],
    pooling: &Pooling,
    names: &Names,
    sink: &mut FeatureSink,
) {
    let (mut num, mut den, mut aim_num) = (0f64, 0f64, 0f64);
    for s in scores {
        num += s.num as f64;
        den += s.den as f64;
        aim_num += s.aim as f64;
    }
    // Sums below this (relative to a 1080p picture) count as zero.
    let limit = 1e-10 * pooling.pixels / (1920.0 * 1080.0);
    if num < limit {
        num = 0.0;
    }
    if den < limit {
        den = 0.0;
    }
    // libvmaf leaves AIM unset when the denominator is zero; 0 here.
    let (adm, aim) = if den == 0.0 {
        (1.0, 0.0)
    } else {
        (num / den, aim_num / den)
    };
    let blended = adm * pooling.dlm_weight + (1.0 - aim) * (1.0 - pooling.dlm_weight);
    // libvmaf's MAX(): a NaN blend gives the minimum.
    let adm3 = if blended > pooling.min_val {
        blended
    } else {
        pooling.min_val
    };

    sink.emit(index, &names.adm2, adm);
    sink.emit(index, &names.aim, aim);
    sink.emit(index, &names.adm3, adm3);
    for (name, score) in names.scale.iter().zip(scores) {
        sink.emit(index, name, score.num as f64 / score.den as f64);
    }
    if !pooling.debug {
        return;
    }
    sink.emit(index, &names.adm, adm);
    sink.emit(index, &names.num, num);
    sink.emit(index, &names.den, den);
    for (s, score) in scores.iter().enumerate() {
        sink.emit(index, &names.num_scale[s], score.num as f64);
        sink.emit(index, &names.den_scale[s], score.den as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pooling() -> Pooling {
        Pooling {
            dlm_weight: 0.5,
            min_val: 0.0,
            debug: true,
            pixels: 1920.0 * 1080.0,
        }
    }

    #[test]
    fn zero_denominator_scores_one() {
        let mut sink = FeatureSink::new();
        emit(
            3,
            &[ScaleScore::default(); SCALES],
            &pooling(),
            &Names::new("_x_1"),
            &mut sink,
        );
        let get = |n: &str| {
            sink.values()
                .iter()
                .find(|(_, name, _)| name == n)
                .map(|v| v.2)
        };
        assert_eq!(get("integer_adm2_x_1"), Some(1.0));
        assert_eq!(get("integer_aim_x_1"), Some(0.0));
        assert_eq!(get("integer_adm3_x_1"), Some(1.0));
        assert_eq!(sink.values().len(), 18);
        assert!(sink.values().iter().all(|v| v.0 == 3));
    }

    #[test]
    fn adm3_blends_and_clips() {
        let s = ScaleScore {
            num: 0.5,
            den: 1.0,
            aim: 0.25,
        };
        let mut sink = FeatureSink::new();
        let p = Pooling {
            dlm_weight: 0.7,
            min_val: 0.9,
            debug: false,
            ..pooling()
        };
        emit(0, &[s; SCALES], &p, &Names::new(""), &mut sink);
        let get = |n: &str| {
            sink.values()
                .iter()
                .find(|(_, name, _)| name == n)
                .map(|v| v.2)
        };
        assert_eq!(get("integer_adm2"), Some(0.5));
        // 0.5 * 0.7 + 0.75 * 0.3 = 0.575 < 0.9
        assert_eq!(get("integer_adm3"), Some(0.9));
        assert_eq!(sink.values().len(), 7);
    }
}
