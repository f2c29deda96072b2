//! Model parity: libvmaf's own per-frame feature values from the golden runs
//! go into our models, and what comes out must be libvmaf's per-frame model
//! outputs (scores, bootstrap members and statistics), frame for frame.

use crate::common;

use common::{rel_diff, Golden, PAIRS};
use vmafx::model::{alias, FeatureRequest, Model, ModelFeature, ModelSpec};
use vmafx::Error;

/// The model arithmetic is libvmaf's, operation for operation: results are
/// bit-identical.
const TOLERANCE: f64 = 0.0;

/// The option suffix libvmaf gives each option set the built-in models use,
/// copied from the golden files' feature names. Keyed by the model's options
/// as `key=value` joined with `:` in name order (values as libvmaf stores
/// them). Only used where the extractor registry cannot name a feature yet.
fn golden_suffix(options: &[(String, String)]) -> String {
    let mut sorted: Vec<String> = options.iter().map(|(k, v)| format!("{k}={v}")).collect();
    sorted.sort();
    let key = sorted.join(":");
    const ADM: &str = "adm_csf_mode=2:adm_dlm_weight=0.7:adm_enhn_gain_limit=1:adm_min_val=0.5:adm_noise_weight=0.02";
    const ADM_SUFFIX: &str = "_csf_2_dlmw_0.7_egl_1_min_0.5_nw_0.02";
    const SPEED: &str = "speed_max_val=45:speed_nn_floor=0.1";
    const SPEED_TAIL: &str = "speed_sigma_nn=0.19:speed_weight_var_mode=5";
    let suffix = match key.as_str() {
        "" => "".to_string(),
        "adm_enhn_gain_limit=1" | "vif_enhn_gain_limit=1" => "_egl_1".into(),
        "cambi_high_res_speedup=1080:cambi_max_val=17:cambi_vis_lum_threshold=0.06" => {
            "_hrs_1080_cmxv_17_vlt_0.06".into()
        }
        "motion_max_val=18" => "_mmxv_18".into(),
        "motion_five_frame_window=true:motion_max_val=18:motion_moving_average=true" => {
            "_mffw_mmxv_18_mma".into()
        }
        k if k == format!("speed_kernelscale=1:{SPEED}:{SPEED_TAIL}")
            || k == format!("{SPEED}:{SPEED_TAIL}") =>
        {
            "_mxv_45_nnf_0.1_snn_0.19_wvm_5".into()
        }
        k if k
            == format!(
                "{SPEED}:speed_prescale=0.5:speed_prescale_method=bilinear:{SPEED_TAIL}"
            ) =>
        {
            "_mxv_45_nnf_0.1_ps_0.5_psm_bilinear_snn_0.19_wvm_5".into()
        }
        k if k
            == format!(
                "{SPEED}:speed_prescale=0.6:speed_prescale_method=bilinear:{SPEED_TAIL}"
            ) =>
        {
            "_mxv_45_nnf_0.1_ps_0.6_psm_bilinear_snn_0.19_wvm_5".into()
        }
        k if k == format!("{ADM}:adm_norm_view_dist=3:adm_ref_display_height=1080") => {
            ADM_SUFFIX.into()
        }
        k if k == format!("{ADM}:adm_norm_view_dist=3:adm_ref_display_height=2160") => {
            format!("{ADM_SUFFIX}_rdh_2160")
        }
        k if k == format!("{ADM}:adm_norm_view_dist=5:adm_ref_display_height=1080") => {
            format!("{ADM_SUFFIX}_nvd_5")
        }
        k if k == format!("{ADM}:adm_norm_view_dist=1.5:adm_ref_display_height=2160") => {
            format!("{ADM_SUFFIX}_nvd_1.5_rdh_2160")
        }
        other => panic!("no golden suffix known for options '{other}'"),
    };
    suffix
}

fn golden_name(feature: &ModelFeature) -> String {
    format!(
        "{}{}",
        alias(&feature.name),
        golden_suffix(&feature.options)
    )
}

/// The collected names of the model's features. Through the extractor
/// registry when it can name them (then they must be the golden names too);
/// with the golden suffix table while the registry's extractors do not yet
/// declare what they provide.
fn feature_names(model: &Model) -> Vec<String> {
    let expected: Vec<String> = model.features().iter().map(golden_name).collect();
    match model.feature_requests() {
        Ok(requests) => {
            let names: Vec<String> = requests.into_iter().map(|r| r.output).collect();
            assert_eq!(
                names,
                expected,
                "{}: registry names differ from the golden names",
                model.name()
            );
            names
        }
        Err(_) => expected,
    }
}

fn load(version: &str, name: Option<&str>) -> Model {
    let spec = match name {
        Some(n) => format!("version={version}:name={n}"),
        None => format!("version={version}"),
    };
    Model::load(&ModelSpec::parse(&spec).unwrap()).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

/// Predicts every frame of `golden` with `model` and compares every output.
/// Returns (outputs compared, worst relative difference).
fn compare_frames(model: &Model, golden: &Golden, what: &str) -> (usize, f64) {
    let names = feature_names(model);
    let mut compared = 0;
    let mut worst = 0.0f64;
    for (i, (frame, metrics)) in golden.frames.iter().enumerate() {
        let values: Vec<f64> = names
            .iter()
            .map(|n| {
                golden
                    .value(i, n)
                    .unwrap_or_else(|| panic!("{what}: frame {frame}: no golden '{n}'"))
            })
            .collect();
        let prediction = model.predict(&values).unwrap();
        for (name, value) in prediction.iter() {
            let expected = *metrics
                .get(name)
                .unwrap_or_else(|| panic!("{what}: frame {frame}: golden has no '{name}'"));
            let d = rel_diff(value, expected);
            assert!(
                d <= TOLERANCE,
                "{what}: frame {frame}: {name}: got {value:.17e}, golden {expected:.17e} (relative diff {d:.3e})"
            );
            worst = worst.max(d);
            compared += 1;
        }
    }
    (compared, worst)
}

fn report(what: &str, compared: usize, worst: f64) {
    eprintln!("{what}: {compared} outputs compared, worst relative diff {worst:.3e}");
}

#[test]
fn vmaf_v0_6_1_matches_every_golden_frame() {
    let model = load("vmaf_v0.6.1", None);
    assert_eq!(model.name(), "vmaf");
    let (mut n, mut worst) = (0, 0.0f64);
    for pair in PAIRS {
        let (c, w) = compare_frames(&model, &pair.golden("vmaf_v0.6.1"), &pair.name());
        n += c;
        worst = worst.max(w);
    }
    let sub = &PAIRS[1];
    let (c, w) = compare_frames(&model, &sub.golden("vmaf_v0.6.1.subsample3"), "subsample3");
    report("vmaf_v0.6.1", n + c, worst.max(w));
}

#[test]
fn vmaf_float_v0_6_1_matches_every_golden_frame() {
    let model = load("vmaf_float_v0.6.1", None);
    let (mut n, mut worst) = (0, 0.0f64);
    for pair in PAIRS {
        let (c, w) = compare_frames(&model, &pair.golden("vmaf_float_v0.6.1"), &pair.name());
        n += c;
        worst = worst.max(w);
    }
    report("vmaf_float_v0.6.1", n, worst);
}

#[test]
fn v0_6_models_and_bootstrap_outputs_match_every_golden_frame() {
    const MODELS: [&str; 6] = [
        "vmaf_v0.6.1neg",
        "vmaf_b_v0.6.3",
        "vmaf_4k_v0.6.1neg",
        "vmaf_float_v0.6.1neg",
        "vmaf_float_b_v0.6.3",
        "vmaf_float_4k_v0.6.1",
    ];
    for version in MODELS {
        let model = load(version, Some(version));
        let (mut n, mut worst) = (0, 0.0f64);
        for pair in PAIRS {
            let golden = pair.golden("models_v0.6");
            // Every output libvmaf wrote for this model is one we produce.
            let ours: Vec<&str> = model.output_names().iter().map(String::as_str).collect();
            for name in golden.frames[0].1.keys() {
                let is_ours = name
                    .strip_prefix(version)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('_'));
                if is_ours {
                    assert!(
                        ours.contains(&name.as_str()),
                        "{version}: no output '{name}'"
                    );
                }
            }
            let (c, w) = compare_frames(&model, &golden, &format!("{} {version}", pair.name()));
            n += c;
            worst = worst.max(w);
        }
        report(version, n, worst);
    }
    assert_eq!(
        load("vmaf_b_v0.6.3", Some("b")).output_names().len(),
        1 + 20 + 4
    );
}

#[test]
fn v1_0_16_models_match_every_golden_frame() {
    let mut corrected_frames = 0;
    for version in common::V1_0_16_MODELS {
        let model = load(version, Some(version));
        let (mut n, mut worst) = (0, 0.0f64);
        for pair in PAIRS {
            let golden = pair.golden("models_v1.0.16");
            // Models libvmaf could not run on the smallest pair are absent.
            if !golden.frames[0].1.contains_key(version) {
                continue;
            }
            let speed = feature_names(&model)[1].clone();
            corrected_frames += (0..golden.frames.len())
                .filter(|&i| golden.value(i, &speed) == Some(0.0))
                .count();
            let (c, w) = compare_frames(&model, &golden, &format!("{} {version}", pair.name()));
            n += c;
            worst = worst.max(w);
        }
        report(version, n, worst);
    }
    // The chroma-from-luma correction (SpEED chroma exactly 0) was exercised.
    assert!(corrected_frames > 0);
}

#[test]
fn disable_clip_and_clip_limits_follow_the_model() {
    // hfr_5d0h clips at 100: libvmaf reports exactly 100 on the first pair.
    let version = "vmaf_v1.0.16_hfr_5d0h";
    let golden = PAIRS[0].golden("models_v1.0.16");
    let clipped = load(version, Some(version));
    let unclipped =
        Model::load(&ModelSpec::parse(&format!("version={version}:disable_clip")).unwrap())
            .unwrap();
    let names = feature_names(&clipped);
    let i = (0..golden.frames.len())
        .find(|&i| golden.value(i, version) == Some(100.0))
        .expect("a frame clipped at 100");
    let values: Vec<f64> = names.iter().map(|n| golden.value(i, n).unwrap()).collect();
    assert_eq!(clipped.predict(&values).unwrap().score(), 100.0);
    assert!(unclipped.predict(&values).unwrap().score() > 100.0);
}

#[test]
fn unknown_version_names_it() {
    let e = Model::load(&ModelSpec::version("vmaf_v9")).unwrap_err();
    assert!(matches!(e, Error::UnknownModel { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("vmaf_v9") && msg.contains("vmaf_v0.6.1"),
        "{msg}"
    );
}

#[test]
fn model_files_load_and_bad_ones_name_the_path() {
    let dir = tempfile::tempdir().unwrap();

    // A built-in model copied to a file loads and predicts the same.
    let good = dir.path().join("copy.json");
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/model/builtin/vmaf_v0.6.1neg.json"),
    )
    .unwrap();
    std::fs::write(&good, &text).unwrap();
    let from_file = Model::load(&ModelSpec::path(&good)).unwrap();
    let builtin = load("vmaf_v0.6.1neg", None);
    let values = [0.95, 8.5, 0.5, 0.88, 0.93, 0.96];
    assert_eq!(
        from_file.predict(&values).unwrap(),
        builtin.predict(&values).unwrap()
    );

    let malformed = dir.path().join("malformed.json");
    std::fs::write(&malformed, "{\"model_dict\": {\"model_type\": ").unwrap();
    let e = Model::load(&ModelSpec::path(&malformed)).unwrap_err();
    assert!(matches!(e, Error::BadModel { .. }), "{e:?}");
    assert!(e.to_string().contains("malformed.json"), "{e}");

    let inconsistent = dir.path().join("inconsistent.json");
    std::fs::write(
        &inconsistent,
        text.replace("\"slopes\": [", "\"slopes\": [1.0, "),
    )
    .unwrap();
    let e = Model::load(&ModelSpec::path(&inconsistent))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("inconsistent.json") && e.contains("slopes"),
        "{e}"
    );

    let missing = dir.path().join("missing.json");
    let e = Model::load(&ModelSpec::path(&missing)).unwrap_err();
    assert!(
        matches!(e, Error::Io { .. }) && e.to_string().contains("missing.json"),
        "{e}"
    );
}

#[test]
fn missing_feature_names_feature_model_and_frame() {
    let model = load("vmaf_v0.6.1", None);
    let adm = vmafx::feature::find("adm").unwrap();
    let requests: Vec<FeatureRequest> = model
        .features()
        .iter()
        .map(|f| FeatureRequest {
            extractor: adm,
            options: f.options.clone(),
            output: golden_name(f),
        })
        .collect();
    let e = model
        .predict_frame(&requests, 7, |name| {
            (name != "integer_motion2").then_some(0.5)
        })
        .unwrap_err();
    assert!(matches!(e, Error::MissingFeature { frame: 7, .. }), "{e:?}");
    assert!(
        e.to_string().contains("integer_motion2") && e.to_string().contains("vmaf"),
        "{e}"
    );
    // With every feature present the lookup path predicts like `predict`.
    let p = model.predict_frame(&requests, 7, |_| Some(0.5)).unwrap();
    assert_eq!(p, model.predict(&[0.5; 6]).unwrap());
    assert!(model.predict(&[0.5; 5]).is_err());
}

/// The built-in `vmaf_v0.6.1` model's JSON with `edit` applied to its
/// `model_dict`, loaded under the label `edited.json`.
fn load_edited(
    edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>),
) -> Result<Model, Error> {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/model/builtin/vmaf_v0.6.1.json"),
    )
    .unwrap();
    let mut root: serde_json::Value = serde_json::from_str(&text).unwrap();
    edit(root["model_dict"].as_object_mut().unwrap());
    Model::from_json(&root.to_string(), &ModelSpec::path("edited.json"))
}

/// Replaces `from` by `to` in the libsvm text of the model.
fn edit_svm(
    from: &'static str,
    to: &'static str,
) -> impl FnOnce(&mut serde_json::Map<String, serde_json::Value>) {
    move |dict| {
        let svm = dict["model"].as_str().unwrap();
        assert!(svm.contains(from), "{from}");
        dict["model"] = svm.replacen(from, to, 1).into();
    }
}

#[test]
fn model_counts_are_bounded_by_the_data() {
    // Counts are checked against what follows them, never used to size
    // memory up front (these aborted the process).
    for (from, to, want) in [
        (
            "total_sv 211",
            "total_sv 99999999999",
            "total_sv is 99999999999 but 211",
        ),
        (
            "6:0.73495824",
            "99999999999:0.73495824",
            "past the model's 6 features",
        ),
        (
            "6:0.73495824",
            "7:0.73495824",
            "past the model's 6 features",
        ),
    ] {
        let e = load_edited(edit_svm(from, to)).unwrap_err();
        assert!(matches!(e, Error::BadModel { .. }), "{e:?}");
        let e = e.to_string();
        assert!(e.contains("edited.json") && e.contains(want), "{to}: {e}");
    }
}

#[test]
fn model_numbers_must_be_finite_and_ranges_ordered() {
    use serde_json::json;
    type Edit = Box<dyn FnOnce(&mut serde_json::Map<String, serde_json::Value>)>;
    let set = |key: &'static str, v: serde_json::Value| -> Edit {
        Box::new(move |d| {
            d.insert(key.into(), v);
        })
    };
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(edit_svm("gamma 0.04", "gamma NaN")),
            "bad gamma 'NaN'",
        ),
        (
            Box::new(edit_svm("gamma 0.04", "gamma -0.04")),
            "gamma -0.04",
        ),
        (Box::new(edit_svm("gamma 0.04", "gamma 0")), "gamma 0"),
        (
            Box::new(edit_svm("rho -1.33133", "rho inf")),
            "bad rho 'inf'",
        ),
        (
            Box::new(edit_svm("\n-4 1:", "\nnan 1:")),
            "bad coefficient 'nan'",
        ),
        (
            Box::new(edit_svm("2:0.34681232", "2:-inf")),
            "bad node '2:-inf'",
        ),
        (
            set("score_clip", json!([100.0, 0.0])),
            "score_clip [100, 0]",
        ),
        (set("score_clip", json!([0.0, 100.0, 5.0])), "score_clip"),
        (
            Box::new(|d| d["slopes"][0] = json!(0.0)),
            "slopes[0] (the score's slope) is 0",
        ),
        (
            Box::new(|d| d["slopes"][3] = json!("x")),
            "slopes holds \"x\", not a finite number",
        ),
        (
            Box::new(|d| d["score_transform"]["p1"] = json!("1")),
            "score_transform.p1",
        ),
        (
            set("chroma_correction_parameter", json!(null)),
            "chroma_correction_parameter",
        ),
    ];
    for (edit, want) in cases {
        let e = load_edited(edit).unwrap_err();
        assert!(matches!(e, Error::BadModel { .. }), "{e:?}");
        let e = e.to_string();
        assert!(
            e.contains("edited.json") && e.contains(want),
            "want '{want}': {e}"
        );
    }
    // The unedited model loads.
    load_edited(|_| {}).unwrap();
}
