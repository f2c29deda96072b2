//! Reads libvmaf's JSON model files (`read_json_model.c`): one model under
//! `model_dict`, or a collection (bootstrap) of models under `"0"`, `"1"`, ...
//! Only `model_dict` matters; `param_dict` is training metadata libvmaf
//! ignores too. Errors are plain strings; the caller names the model.
//!
//! A model is checked whole as it is read, so a bad one never scores NaN or
//! a constant: every number finite, ranges ordered (`score_clip` min <= max,
//! knots increasing), lengths consistent (slopes and intercepts with the
//! features, support vectors with `total_sv` and the features).

use serde_json::{Map, Value};

use super::regressor::{ChromaFromLuma, ModelFeature, Regressor};
use super::svm::Svr;
use super::transform::{Clip, Knot, Linear, Normalization, ScoreTransform};
use crate::feature::options::normalize_number;
use crate::feature::RawOptions;

/// libvmaf's `model_type`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ModelType {
    Svm,
    Bootstrap,
    ResidueBootstrap,
}

/// Load-time switches of a `--model` flag.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LoadFlags {
    /// Apply the score transform even when the model does not enable it.
    pub enable_transform: bool,
    /// Ignore the model's score clip.
    pub disable_clip: bool,
}

/// What a model file holds.
#[derive(Debug)]
pub enum ModelFile {
    Single(Box<Regressor>),
    /// Member `"0"` first; all members share the type, which is a bootstrap
    /// type.
    Collection(Vec<Regressor>),
}

pub fn parse(text: &str, flags: LoadFlags) -> Result<ModelFile, String> {
    let root: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    let root = root.as_object().ok_or("top level is not a JSON object")?;
    if let Some(dict) = root.get("model_dict") {
        return Ok(ModelFile::Single(Box::new(
            parse_model_dict(dict, flags)?.0,
        )));
    }
    // A collection: members keyed "0", "1", ... in sequence.
    let mut members: Vec<Regressor> = Vec::new();
    let mut member_type = None;
    while let Some(member) = root.get(&members.len().to_string()) {
        let at = members.len();
        let dict = member
            .get("model_dict")
            .ok_or_else(|| format!("collection member \"{at}\" has no model_dict"))?;
        let (regressor, model_type) = parse_model_dict(dict, flags)
            .map_err(|e| format!("collection member \"{at}\": {e}"))?;
        if *member_type.get_or_insert(model_type) != model_type {
            return Err(format!("collection member \"{at}\" has another model_type"));
        }
        if let Some(first) = members.first() {
            if first.features != regressor.features {
                return Err(format!(
                    "collection member \"{at}\" reads other features than member \"0\""
                ));
            }
        }
        members.push(regressor);
    }
    match (members.len(), member_type) {
        (0, _) => Err("no model_dict and no collection members \"0\", \"1\", ...".into()),
        (1, _) => Err("a collection needs at least two members (\"0\" and \"1\")".into()),
        (_, Some(ModelType::Svm)) => {
            Err("collection members have model_type LIBSVMNUSVR, not a bootstrap type".into())
        }
        _ => Ok(ModelFile::Collection(members)),
    }
}

fn parse_model_dict(dict: &Value, flags: LoadFlags) -> Result<(Regressor, ModelType), String> {
    let dict = dict.as_object().ok_or("model_dict is not an object")?;

    let model_type = match str_field(dict, "model_type")? {
        Some("LIBSVMNUSVR") => ModelType::Svm,
        Some("BOOTSTRAP_LIBSVMNUSVR") => ModelType::Bootstrap,
        Some("RESIDUEBOOTSTRAP_LIBSVMNUSVR") => ModelType::ResidueBootstrap,
        Some(other) => return Err(format!("unknown model_type '{other}'")),
        None => ModelType::Svm,
    };
    let normalization = match str_field(dict, "norm_type")? {
        Some("linear_rescale") => Normalization::LinearRescale,
        Some("none") => Normalization::None,
        Some(other) => return Err(format!("unknown norm_type '{other}'")),
        None => return Err("no norm_type".into()),
    };

    let names = match dict.get("feature_names") {
        Some(Value::Array(a)) => a
            .iter()
            .map(|n| {
                n.as_str()
                    .map(str::to_string)
                    .ok_or("feature_names holds a non-string")
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err("feature_names is not an array".into()),
        None => return Err("no feature_names".into()),
    };
    if names.is_empty() {
        return Err("feature_names is empty".into());
    }
    let options = feature_options(dict.get("feature_opts_dicts"), names.len())?;
    let features: Vec<ModelFeature> = names
        .into_iter()
        .zip(options)
        .map(|(name, options)| ModelFeature { name, options })
        .collect();

    let (score_scale, feature_scales) = scales(dict, normalization, features.len())?;

    let svr = match dict.get("model") {
        Some(Value::String(text)) => Svr::parse(text, features.len())?,
        Some(_) => return Err("model is not a string".into()),
        None => return Err("no libsvm model ('model')".into()),
    };

    let transform = match dict.get("score_transform") {
        Some(t) => {
            let (enabled, t) = parse_transform(t)?;
            (enabled || flags.enable_transform).then_some(t)
        }
        None => None,
    };
    let clip = match dict.get("score_clip") {
        Some(_) if flags.disable_clip => None,
        Some(Value::Array(a)) => match (
            a.first().and_then(Value::as_f64),
            a.get(1).and_then(Value::as_f64),
        ) {
            (Some(min), Some(max)) if a.len() == 2 => {
                if !(min.is_finite() && max.is_finite() && min <= max) {
                    return Err(format!(
                        "score_clip [{min}, {max}] is not [min, max] with finite min <= max"
                    ));
                }
                Some(Clip { min, max })
            }
            _ => return Err("score_clip is not [min, max]".into()),
        },
        Some(_) => return Err("score_clip is not an array".into()),
        None => None,
    };
    let chroma_from_luma = match dict.get("chroma_correction_parameter") {
        None => None,
        Some(v) => {
            let parameter = v
                .as_f64()
                .filter(|p| p.is_finite())
                .ok_or("chroma_correction_parameter is not a finite number")?;
            // A parameter of 0 corrects nothing.
            if parameter == 0.0 {
                None
            } else {
                Some(ChromaFromLuma {
                    parameter,
                    guiding: unique_feature(&features, "adm3")?,
                    guided: unique_feature(&features, "speed_chroma")?,
                })
            }
        }
    };

    let regressor = Regressor {
        features,
        normalization,
        score_scale,
        feature_scales,
        svr,
        chroma_from_luma,
        transform,
        clip,
    };
    Ok((regressor, model_type))
}

fn str_field<'a>(dict: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, String> {
    match dict.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("{key} is not a string")),
    }
}

fn numbers(dict: &Map<String, Value>, key: &str) -> Result<Option<Vec<f64>>, String> {
    match dict.get(key) {
        None => Ok(None),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_f64()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| format!("{key} holds {v}, not a finite number"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(format!("{key} is not an array")),
    }
}

/// Slopes and intercepts: the prediction's first, then one per feature.
fn scales(
    dict: &Map<String, Value>,
    normalization: Normalization,
    n_features: usize,
) -> Result<(Linear, Vec<Linear>), String> {
    let slopes = numbers(dict, "slopes")?;
    let intercepts = numbers(dict, "intercepts")?;
    if normalization == Normalization::None && slopes.is_none() && intercepts.is_none() {
        return Ok((Linear::default(), vec![Linear::default(); n_features]));
    }
    let (slopes, intercepts) = (slopes.unwrap_or_default(), intercepts.unwrap_or_default());
    if slopes.len() != n_features + 1 || intercepts.len() != n_features + 1 {
        return Err(format!(
            "{} slopes and {} intercepts for {n_features} features (need {} each: the score's, then one per feature)",
            slopes.len(),
            intercepts.len(),
            n_features + 1
        ));
    }
    let mut all = slopes
        .into_iter()
        .zip(intercepts)
        .map(|(slope, intercept)| Linear { slope, intercept });
    let score = all.next().expect("n_features + 1 >= 1");
    // The prediction is mapped back by dividing by the score's slope.
    if normalization == Normalization::LinearRescale && score.slope == 0.0 {
        return Err(
            "slopes[0] (the score's slope) is 0: the prediction cannot be mapped back".into(),
        );
    }
    Ok((score, all.collect()))
}

/// `feature_opts_dicts`: per feature, options as libvmaf stores them
/// (numbers normalised through `%g`, booleans as `true`/`false`).
fn feature_options(value: Option<&Value>, n_features: usize) -> Result<Vec<RawOptions>, String> {
    let mut out = vec![RawOptions::new(); n_features];
    let Some(value) = value else { return Ok(out) };
    let dicts = value
        .as_array()
        .ok_or("feature_opts_dicts is not an array")?;
    if dicts.len() > n_features {
        return Err(format!(
            "{} feature_opts_dicts for {n_features} features",
            dicts.len()
        ));
    }
    for (i, dict) in dicts.iter().enumerate() {
        let dict = dict
            .as_object()
            .ok_or_else(|| format!("feature_opts_dicts[{i}] is not an object"))?;
        for (key, v) in dict {
            let text = match v {
                Value::Number(n) => normalize_number(&n.to_string()),
                Value::Bool(b) => b.to_string(),
                Value::String(s) => s.clone(),
                _ => {
                    return Err(format!(
                        "feature_opts_dicts[{i}].{key} is not a number, boolean or string"
                    ))
                }
            };
            out[i].push((key.clone(), text));
        }
    }
    Ok(out)
}

/// Returns whether the model enables the transform itself, and the transform.
fn parse_transform(value: &Value) -> Result<(bool, ScoreTransform), String> {
    let dict = value
        .as_object()
        .ok_or("score_transform is not an object")?;
    let mut enabled = false;
    let mut t = ScoreTransform::default();
    for (key, v) in dict {
        let coefficient = |v: &Value| match v {
            Value::Null => Ok(None),
            v => v
                .as_f64()
                .filter(|x| x.is_finite())
                .map(Some)
                .ok_or_else(|| format!("score_transform.{key} is not a finite number")),
        };
        let flag = |v: &Value| match v {
            Value::String(s) => Ok(s == "true"),
            _ => Err(format!("score_transform.{key} is not a string")),
        };
        match key.as_str() {
            "enabled" => {
                enabled = v
                    .as_bool()
                    .ok_or("score_transform.enabled is not a boolean")?
            }
            "p0" => t.p0 = coefficient(v)?,
            "p1" => t.p1 = coefficient(v)?,
            "p2" => t.p2 = coefficient(v)?,
            "knots" => t.knots = parse_knots(v)?,
            "out_lte_in" => t.out_lte_in = flag(v)?,
            "out_gte_in" => t.out_gte_in = flag(v)?,
            _ => {}
        }
    }
    Ok((enabled, t))
}

fn parse_knots(value: &Value) -> Result<Option<Vec<Knot>>, String> {
    let list = match value {
        Value::Null => return Ok(None),
        Value::Array(a) => a,
        _ => return Err("score_transform.knots is not an array".into()),
    };
    let knots = list
        .iter()
        .map(|k| match k.as_array().map(Vec::as_slice) {
            Some([x, y]) => Some(Knot {
                x: x.as_f64().filter(|v| v.is_finite())?,
                y: y.as_f64().filter(|v| v.is_finite())?,
            }),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
        .ok_or("score_transform.knots is not a list of [x, y] finite numbers")?;
    ScoreTransform::check_knots(&knots)?;
    Ok(Some(knots))
}

/// The one feature whose name contains `part`.
fn unique_feature(features: &[ModelFeature], part: &str) -> Result<usize, String> {
    let mut found = features
        .iter()
        .enumerate()
        .filter(|(_, f)| f.name.contains(part));
    match (found.next(), found.next()) {
        (Some((i, _)), None) => Ok(i),
        (None, _) => Err(format!(
            "chroma_correction_parameter needs a feature named '*{part}*'"
        )),
        (Some(_), Some(_)) => Err(format!(
            "chroma_correction_parameter: several features named '*{part}*'"
        )),
    }
}
