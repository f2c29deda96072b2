//! End-to-end parity: the scoring context with libvmaf's models on every
//! golden pair, compared with the `vmaf` tool's own outputs.

use crate::common;

use common::{assert_close, Pair, PAIRS};
use vmafx::model::{Model, ModelSpec};
use vmafx::{ContextBuilder, FeatureScores};

/// Runs `models` (and `features`) over a pair, scoring every frame.
fn score(
    pair: &Pair,
    models: &[&str],
    features: &[&str],
    threads: usize,
    subsample: u32,
) -> FeatureScores {
    let mut b = ContextBuilder::new(pair.format())
        .threads(threads)
        .subsample(subsample);
    for m in models {
        b = b.model(Model::load(&ModelSpec::parse(m).unwrap()).unwrap());
    }
    for f in features {
        let (name, opts) = vmafx::feature::options::parse_feature_spec(f).unwrap();
        b = b.feature(&name, opts);
    }
    let mut ctx = b.build().unwrap();
    for (r, d) in pair.reference().into_iter().zip(pair.distorted_pictures()) {
        ctx.submit(r, d).unwrap();
    }
    ctx.finish().unwrap()
}

/// Every golden value of `run` must be produced: integer features to 1e-9
/// relative, model scores to 1e-6 (bit-identical in practice).
fn compare(pair: &Pair, run: &str, scores: &FeatureScores) {
    let golden = pair.golden(run);
    assert_eq!(
        scores.frames.len(),
        golden.frames.len(),
        "{} {run}: frame count",
        pair.name()
    );
    for ((index, values), (golden_index, metrics)) in scores.frames.iter().zip(&golden.frames) {
        assert_eq!(index, golden_index);
        for (name, expected) in metrics {
            let actual = values
                .iter()
                .find(|(n, _)| n == name)
                .unwrap_or_else(|| {
                    panic!("{} {run} frame {index}: '{name}' not produced", pair.name())
                })
                .1;
            let tol = if name.starts_with("vmaf") {
                1e-6
            } else if common::is_float_adm_output(name) {
                common::float_adm_tol(1e-9)
            } else {
                1e-9
            };
            assert_close(
                &format!("{} {run} frame {index} {name}", pair.name()),
                actual,
                *expected,
                tol,
            );
        }
    }
}

#[test]
fn default_model_on_every_pair() {
    for pair in PAIRS {
        compare(
            pair,
            "vmaf_v0.6.1",
            &score(pair, &["version=vmaf_v0.6.1"], &[], 1, 1),
        );
    }
}

#[test]
fn integer_features_with_debug_outputs() {
    for pair in PAIRS {
        let s = score(
            pair,
            &[],
            &["adm=debug=true", "vif=debug=true", "motion=debug=true"],
            1,
            1,
        );
        let golden = pair.golden("features");
        for ((index, values), (_, metrics)) in s.frames.iter().zip(&golden.frames) {
            for (name, expected) in metrics
                .iter()
                .filter(|(n, _)| n.starts_with("integer_") || n.starts_with("VMAF_integer"))
            {
                let actual = values
                    .iter()
                    .find(|(n, _)| n == name)
                    .unwrap_or_else(|| panic!("{name} missing"))
                    .1;
                assert_close(
                    &format!("{} frame {index} {name}", pair.name()),
                    actual,
                    *expected,
                    1e-9,
                );
            }
        }
    }
}

#[test]
fn threads_give_identical_numbers() {
    let pair = &PAIRS[1];
    let one = score(
        pair,
        &["version=vmaf_v0.6.1"],
        &["psnr=enable_apsnr=true"],
        1,
        1,
    );
    let three = score(
        pair,
        &["version=vmaf_v0.6.1"],
        &["psnr=enable_apsnr=true"],
        3,
        1,
    );
    assert_eq!(one.frames.len(), three.frames.len());
    for (a, b) in one.frames.iter().zip(&three.frames) {
        assert_eq!(a.0, b.0);
        assert_eq!(a.1.len(), b.1.len());
        for (x, y) in a.1.iter().zip(&b.1) {
            assert_eq!(x.0, y.0, "same order");
            assert_eq!(x.1.to_bits(), y.1.to_bits(), "frame {} {}", a.0, x.0);
        }
    }
    assert_eq!(one.aggregate, three.aggregate);
    assert_eq!(one.aggregate.len(), 3, "apsnr_y/cb/cr");
    compare(pair, "vmaf_v0.6.1", &three);
}

#[test]
fn subsample_three() {
    let pair = &PAIRS[1]; // the pair the subsample golden was made for
    for threads in [1, 2] {
        compare(
            pair,
            "vmaf_v0.6.1.subsample3",
            &score(pair, &["version=vmaf_v0.6.1"], &[], threads, 3),
        );
    }
}

#[test]
fn neg_and_4k_models() {
    let models = [
        "version=vmaf_v0.6.1neg:name=vmaf_v0.6.1neg",
        "version=vmaf_4k_v0.6.1neg:name=vmaf_4k_v0.6.1neg",
    ];
    for pair in PAIRS {
        let s = score(pair, &models, &[], 2, 1);
        let golden = pair.golden("models_v0.6");
        for ((index, values), (_, metrics)) in s.frames.iter().zip(&golden.frames) {
            for name in ["vmaf_v0.6.1neg", "vmaf_4k_v0.6.1neg"] {
                let actual = values.iter().find(|(n, _)| n == name).unwrap().1;
                assert_close(
                    &format!("{} frame {index} {name}", pair.name()),
                    actual,
                    metrics[name],
                    1e-6,
                );
            }
            // The golden run also held models reading default-option
            // features; the neg models read the `_egl_1` ones and motion.
            let neg_features = metrics.iter().filter(|(n, _)| {
                n.starts_with("integer_") && (n.ends_with("_egl_1") || n.contains("motion"))
            });
            let mut compared = 0;
            for (name, expected) in neg_features {
                let actual = values
                    .iter()
                    .find(|(n, _)| n == name)
                    .unwrap_or_else(|| panic!("{name} missing"))
                    .1;
                assert_close(
                    &format!("{} frame {index} {name}", pair.name()),
                    actual,
                    *expected,
                    1e-9,
                );
                compared += 1;
            }
            assert_eq!(compared, 13, "7 adm + 4 vif + motion2/3");
        }
        // Pooled as the vmaf tool pools.
        let pooled = vmafx::pool::pool(
            s.frames
                .iter()
                .map(|(_, v)| v.iter().find(|(n, _)| n == "vmaf_v0.6.1neg").unwrap().1),
        )
        .unwrap();
        let want = &golden.pooled["vmaf_v0.6.1neg"];
        assert_close(
            &format!("{} pooled mean", pair.name()),
            pooled.mean,
            want["mean"],
            1e-9,
        );
        assert_close(
            &format!("{} pooled harmonic", pair.name()),
            pooled.harmonic_mean,
            want["harmonic_mean"],
            1e-9,
        );
    }
}

#[test]
fn four_k_model_matches_prediction_from_golden_features() {
    // No golden holds vmaf_4k_v0.6.1 itself (only its neg variant). It reads
    // the same features as vmaf_v0.6.1, whose values the golden holds: the
    // pipeline's score must equal the model fed with those golden values.
    let pair = &PAIRS[6];
    let model = Model::load(&ModelSpec::parse("version=vmaf_4k_v0.6.1:name=k4").unwrap()).unwrap();
    let requests = model.feature_requests().unwrap();
    let s = score(pair, &["version=vmaf_4k_v0.6.1:name=k4"], &[], 1, 1);
    let golden = pair.golden("vmaf_v0.6.1");
    for ((index, values), (_, metrics)) in s.frames.iter().zip(&golden.frames) {
        let expected = model
            .predict_frame(&requests, *index, |n| metrics.get(n).copied())
            .unwrap()
            .score();
        let actual = values.iter().find(|(n, _)| n == "k4").unwrap().1;
        assert_close(&format!("frame {index} k4"), actual, expected, 1e-9);
    }
}

#[test]
fn float_model_on_every_pair() {
    for pair in PAIRS {
        compare(
            pair,
            "vmaf_float_v0.6.1",
            &score(pair, &["version=vmaf_float_v0.6.1"], &[], 2, 1),
        );
    }
}

#[test]
fn six_v06_models_in_one_run_including_bootstrap() {
    // The golden run's exact --model flags: every output it holds (features,
    // six model scores, bootstrap members and statistics) must be produced.
    let models = [
        "version=vmaf_v0.6.1neg:name=vmaf_v0.6.1neg",
        "version=vmaf_b_v0.6.3:name=vmaf_b_v0.6.3",
        "version=vmaf_4k_v0.6.1neg:name=vmaf_4k_v0.6.1neg",
        "version=vmaf_float_v0.6.1neg:name=vmaf_float_v0.6.1neg",
        "version=vmaf_float_b_v0.6.3:name=vmaf_float_b_v0.6.3",
        "version=vmaf_float_4k_v0.6.1:name=vmaf_float_4k_v0.6.1",
    ];
    for pair in PAIRS {
        let s = score(pair, &models, &[], 2, 1);
        compare(pair, "models_v0.6", &s);
        // Same names in the same order as the vmaf tool wrote them.
        let golden = pair.golden("models_v0.6");
        let golden_names: Vec<&String> = golden.frames[1].1.keys().collect();
        let mut ours: Vec<&String> = s.frames[1].1.iter().map(|(n, _)| n).collect();
        ours.sort();
        assert_eq!(ours, golden_names, "{}", pair.name());
    }
}

/// The v1.0.16 models whose SpEED step prescales the picture: libvmaf
/// crashes on the 321x179 pair ("image too small").
const V1_PRESCALED: [&str; 4] = [
    "vmaf_v1.0.16_3d0h_2160",
    "vmaf_v1.0.16_5d0h",
    "vmaf_v1.0.16_hfr_3d0h_2160",
    "vmaf_v1.0.16_hfr_5d0h",
];

#[test]
fn v1_models_in_one_run() {
    for pair in PAIRS {
        let small = pair.width < 352;
        let models: Vec<String> = common::V1_0_16_MODELS
            .iter()
            .filter(|m| !(small && V1_PRESCALED.contains(m)))
            .map(|m| format!("version={m}:name={m}"))
            .collect();
        let specs: Vec<&str> = models.iter().map(String::as_str).collect();
        // compare() holds model scores to 1e-6 per frame (the issue asks
        // 1e-4); they are bit-identical in practice.
        compare(pair, "models_v1.0.16", &score(pair, &specs, &[], 2, 1));
    }
}

#[test]
fn v1_model_on_too_small_picture_is_a_clear_error() {
    let pair = PAIRS.iter().find(|p| p.width == 321).unwrap();
    for m in V1_PRESCALED {
        let model = Model::load(&ModelSpec::parse(&format!("version={m}")).unwrap()).unwrap();
        let e = ContextBuilder::new(pair.format())
            .model(model)
            .build()
            .err()
            .expect("refused");
        let text = e.to_string();
        assert!(
            text.contains("speed_chroma") && text.contains("321x179"),
            "{m}: {text}"
        );
    }
}

#[test]
fn every_feature_in_one_run() {
    // The golden `features` run's exact --feature flags, in one context on
    // two threads: every per-frame value and the aPSNR aggregates.
    let features = [
        "psnr=enable_mse=true:enable_apsnr=true",
        "float_psnr",
        "float_ansnr",
        "float_ssim=enable_lcs=true",
        "float_ms_ssim=enable_lcs=true",
        "ciede",
        "psnr_hvs",
        "cambi=full_ref=true",
        "float_moment",
        "float_vif=debug=true",
        "float_adm=debug=true",
        "float_motion",
        "adm=debug=true",
        "vif=debug=true",
        "motion=debug=true",
        "speed_chroma",
        "speed_temporal",
    ];
    for pair in PAIRS {
        // No ciede golden at odd sizes (libvmaf reads past the plane there).
        let features: Vec<&str> = features
            .iter()
            .copied()
            .filter(|f| pair.width % 2 == 0 || *f != "ciede")
            .collect();
        let s = score(pair, &[], &features, 2, 1);
        compare(pair, "features", &s);
        let golden = pair.golden("features");
        assert_eq!(s.aggregate.len(), golden.aggregate.len());
        for (name, v) in &s.aggregate {
            assert_eq!(*v, golden.aggregate[name], "{} {name}", pair.name());
        }
    }
}
