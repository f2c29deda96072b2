//! Parity of the integer `motion` extractor with libvmaf 3.2.0 goldens.

use crate::common;

use common::{rel_diff, Golden, Pair, PAIRS};
use std::collections::BTreeMap;
use vmafx::feature::options::{parse_key_values, Options};
use vmafx::feature::{motion, FeatureSink, FrameInput};
use vmafx::Error;

/// Per-frame outputs of one run: frame -> name -> value.
type Run = BTreeMap<u32, BTreeMap<String, f64>>;

/// Runs `motion` with `options` over every frame of a pair.
fn run_motion(pair: &Pair, options: &str) -> Run {
    let raw = parse_key_values("motion", options).unwrap();
    let opts = Options::resolve("motion", motion::INFO.options, &raw).unwrap();
    let mut ex = (motion::INFO.create)(&opts, &pair.format()).unwrap();
    assert!(ex.temporal());
    let reference = pair.reference();
    let distorted = pair.distorted_pictures();
    let mut sink = FeatureSink::new();
    let mut run = Run::new();
    let collect = |sink: &mut FeatureSink, run: &mut Run| {
        for (i, name, v) in sink.drain() {
            let prev = run.entry(i).or_default().insert(name.clone(), v);
            assert!(
                prev.is_none(),
                "{}: {name} emitted twice for frame {i}",
                pair.name()
            );
        }
    };
    for (i, (r, d)) in reference.iter().zip(&distorted).enumerate() {
        let frame = FrameInput {
            index: i as u32,
            reference: r,
            distorted: d,
        };
        ex.extract(&frame, &mut sink).unwrap();
        collect(&mut sink, &mut run);
    }
    ex.flush(&mut sink).unwrap();
    collect(&mut sink, &mut run);
    assert_eq!(
        run.len(),
        reference.len(),
        "{}: frames with outputs",
        pair.name()
    );
    run
}

/// Compares `features` of every golden frame; returns the worst relative
/// difference per feature.
fn compare(pair: &Pair, run: &Run, golden: &Golden, features: &[&str]) -> BTreeMap<String, f64> {
    let mut worst = BTreeMap::new();
    for (pos, (frame, _)) in golden.frames.iter().enumerate() {
        let ours = run
            .get(frame)
            .unwrap_or_else(|| panic!("{}: no outputs for frame {frame}", pair.name()));
        assert_eq!(
            ours.len(),
            features.len(),
            "{}: frame {frame} outputs {ours:?}",
            pair.name()
        );
        for &f in features {
            let expected = golden
                .value(pos, f)
                .unwrap_or_else(|| panic!("{}: golden lacks {f} at frame {frame}", pair.name()));
            let got = *ours
                .get(f)
                .unwrap_or_else(|| panic!("{}: {f} missing at frame {frame}", pair.name()));
            let d = rel_diff(got, expected);
            assert!(
                d <= 1e-9,
                "{} frame {frame} {f}: got {got:.17e}, golden {expected:.17e} (rel {d:.3e})",
                pair.name()
            );
            let w = worst.entry(f.to_string()).or_insert(0.0f64);
            *w = w.max(d);
        }
    }
    worst
}

fn report(what: &str, worst: &BTreeMap<String, f64>) {
    for (f, d) in worst {
        println!("{what}: worst relative diff {f} = {d:.3e}");
    }
}

const DEFAULT_OUTPUTS: [&str; 3] = [
    "integer_motion2",
    "integer_motion3",
    "VMAF_integer_feature_motion_sad_score",
];

#[test]
fn default_outputs_match_vmaf_v0_6_1_goldens() {
    for pair in PAIRS {
        let run = run_motion(pair, "");
        let worst = compare(pair, &run, &pair.golden("vmaf_v0.6.1"), &DEFAULT_OUTPUTS);
        report(&pair.name(), &worst);
    }
}

#[test]
fn debug_outputs_match_features_goldens() {
    let features = [
        "integer_motion",
        "integer_motion2",
        "integer_motion3",
        "VMAF_integer_feature_motion_sad_score",
    ];
    for pair in PAIRS {
        let run = run_motion(pair, "debug=true");
        let worst = compare(pair, &run, &pair.golden("features"), &features);
        report(&pair.name(), &worst);
    }
}

/// The v1.0.16 models run motion with `motion_max_val=18`, the hfr ones also
/// with the five-frame window and the moving average: option-suffixed names.
#[test]
fn model_options_match_v1_0_16_goldens() {
    let cases = [
        ("motion_max_val=18.0", "_mmxv_18"),
        (
            "motion_max_val=18.0:motion_five_frame_window=true:motion_moving_average=true",
            "_mffw_mmxv_18_mma",
        ),
    ];
    for pair in PAIRS {
        let golden = pair.golden("models_v1.0.16");
        for (options, suffix) in cases {
            let names: Vec<String> = [
                "integer_motion2",
                "integer_motion3",
                "VMAF_integer_feature_motion_sad_score",
            ]
            .iter()
            .map(|n| format!("{n}{suffix}"))
            .collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let run = run_motion(pair, options);
            let worst = compare(pair, &run, &golden, &names);
            report(&pair.name(), &worst);
        }
    }
}

/// Under `--subsample 3` libvmaf reports, at the kept frames, the values of
/// the full run (the extractor still sees every frame).
#[test]
fn subsampled_run_keeps_full_run_values() {
    let pair = PAIRS
        .iter()
        .find(|p| p.folder == "a_576x324_420p8_pan" && p.distorted == "x264_crf30")
        .unwrap();
    let full = run_motion(pair, "");
    let kept: Run = full.into_iter().filter(|(i, _)| i % 3 == 0).collect();
    let golden = pair.golden("vmaf_v0.6.1.subsample3");
    assert_eq!(
        golden.frames.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
        kept.keys().copied().collect::<Vec<_>>()
    );
    compare(pair, &kept, &golden, &DEFAULT_OUTPUTS);
}

#[test]
fn force_zero_writes_zeros() {
    let pair = &PAIRS[0];
    let run = run_motion(pair, "motion_force_zero=true:debug=true");
    for (i, outputs) in &run {
        let names: Vec<&str> = outputs.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "VMAF_integer_feature_motion_sad_score_force_0",
                "integer_motion2_force_0",
                "integer_motion3_force_0",
                "integer_motion_force_0"
            ],
            "frame {i}"
        );
        assert!(
            outputs.values().all(|v| *v == 0.0),
            "frame {i}: {outputs:?}"
        );
    }
}

#[test]
fn bad_options_are_refused() {
    let bad = [
        ("motion_blend_factor=1.5", "motion_blend_factor"),
        ("motion_max_val=-1", "motion_max_val"),
        ("motion_fps_weight=abc", "motion_fps_weight"),
        ("motion_moving_average=maybe", "motion_moving_average"),
        ("motion_speed=1", "motion_speed"),
    ];
    for (text, option) in bad {
        let raw = parse_key_values("motion", text).unwrap();
        match Options::resolve("motion", motion::INFO.options, &raw) {
            Err(e @ Error::BadOption { .. }) => assert!(e.to_string().contains(option), "{e}"),
            other => panic!("{text}: expected a bad-option error, got {other:?}"),
        }
    }
}

#[test]
fn tiny_pictures_are_refused() {
    let format = vmafx::PictureFormat::new(2, 8, vmafx::ChromaSubsampling::Yuv400, 8).unwrap();
    let opts = Options::resolve("motion", motion::INFO.options, &[]).unwrap();
    let err = (motion::INFO.create)(&opts, &format)
        .err()
        .expect("2-wide picture accepted");
    assert!(err.to_string().contains("too small"), "{err}");
}
