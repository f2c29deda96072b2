//! VMAF models: loading libvmaf's JSON models (built in or from a file),
//! naming the features they read, and predicting a frame's score from those
//! features exactly as libvmaf does.
//!
//! ```text
//! let model = Model::load(&ModelSpec::parse("version=vmaf_v0.6.1")?)?;
//! let requests = model.feature_requests()?;     // what to extract
//! let prediction = model.predict(&values)?;      // values in request order
//! for (name, score) in prediction.iter() { ... } // "vmaf", ...
//! ```
//!
//! A bootstrap model (`vmaf_b_v0.6.3`) is a collection: its first member
//! gives the model's score and the others give `{name}_0001`.. plus
//! `{name}_bagging`, `_stddev`, `_ci_p95_lo` and `_ci_p95_hi`.

mod bootstrap;
mod builtin;
mod features;
mod json;
mod regressor;
mod spec;
mod svm;
mod transform;

pub use features::{alias, FeatureOverride, FeatureRequest};
pub use json::LoadFlags;
pub use regressor::ModelFeature;
pub use spec::{ModelSource, ModelSpec};

use crate::error::{Error, Result};
use json::ModelFile;
use regressor::{Finish, Regressor};

/// The version names of the built-in models.
pub fn builtin_versions() -> impl Iterator<Item = &'static str> {
    builtin::MODELS.iter().map(|(version, _)| *version)
}

/// A loaded model, ready to predict.
#[derive(Debug, Clone)]
pub struct Model {
    name: String,
    /// Version or path, for messages.
    label: String,
    kind: Kind,
    /// `name`, then for a bootstrap model the member and statistics names.
    outputs: Vec<String>,
    overrides: Vec<FeatureOverride>,
}

#[derive(Debug, Clone)]
enum Kind {
    Single(Regressor),
    Bootstrap {
        main: Regressor,
        members: Vec<Regressor>,
    },
}

/// The model the command line uses when none is named.
pub const DEFAULT_VERSION: &str = "vmaf_v0.6.1";

impl Model {
    /// The default model, `vmaf_v0.6.1`, as the `vmaf` tool picks it.
    pub fn default_model() -> Self {
        // Built in and parsed by every test run: cannot fail.
        Self::load(&ModelSpec::version(DEFAULT_VERSION)).expect("the built-in default model loads")
    }

    /// Loads the built-in model or model file that `spec` names.
    pub fn load(spec: &ModelSpec) -> Result<Self> {
        let text = match &spec.source {
            ModelSource::Version(version) => builtin::find(version)
                .ok_or_else(|| Error::UnknownModel {
                    name: version.clone(),
                    known: builtin::versions(),
                })?
                .to_string(),
            ModelSource::Path(path) => {
                std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?
            }
        };
        Self::from_json(&text, spec)
    }

    /// Builds a model from JSON text, with the name, flags and overrides of
    /// `spec` (its source is only used to name the model in errors).
    pub fn from_json(text: &str, spec: &ModelSpec) -> Result<Self> {
        let label = spec.label();
        let file = json::parse(text, spec.flags).map_err(|reason| Error::BadModel {
            name: label.clone(),
            reason,
        })?;
        let name = spec.name.clone().unwrap_or_else(|| "vmaf".to_string());
        let mut outputs = vec![name.clone()];
        let kind = match file {
            ModelFile::Single(regressor) => Kind::Single(*regressor),
            ModelFile::Collection(mut all) => {
                let members = all.split_off(1);
                let main = all.pop().expect("a collection has a first member");
                outputs.extend((1..=members.len()).map(|i| format!("{name}_{i:04}")));
                outputs.extend(bootstrap::STATISTICS.iter().map(|s| format!("{name}{s}")));
                Kind::Bootstrap { main, members }
            }
        };
        Ok(Self {
            name,
            label,
            kind,
            outputs,
            overrides: spec.overrides.clone(),
        })
    }

    /// The name the model's score is reported under.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The built-in version or the file the model came from.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Names of everything [`Model::predict`] returns, in its order: the
    /// model's score first, then (bootstrap models) the member scores and
    /// statistics, which libvmaf reports after all models' own scores.
    pub fn output_names(&self) -> &[String] {
        &self.outputs
    }

    /// The features the model reads, in its order, as the model file names
    /// them (independent of the extractor registry).
    pub fn features(&self) -> &[ModelFeature] {
        &self.main().features
    }

    /// What to extract for each of [`Model::features`], same order: the
    /// providing extractor (looked up in the registry), its options and the
    /// name its value is collected under.
    pub fn feature_requests(&self) -> Result<Vec<FeatureRequest>> {
        self.features()
            .iter()
            .map(|f| FeatureRequest::resolve(&self.label, f, &self.overrides))
            .collect()
    }

    /// Predicts one frame from its feature values, given in
    /// [`Model::features`] order.
    pub fn predict(&self, features: &[f64]) -> Result<Prediction<'_>> {
        if features.len() != self.features().len() {
            return Err(Error::InvalidArgument(format!(
                "model {}: {} feature values for {} features",
                self.label,
                features.len(),
                self.features().len()
            )));
        }
        let mut nodes = Vec::with_capacity(features.len());
        let mut values = Vec::with_capacity(self.outputs.len());
        match &self.kind {
            Kind::Single(r) => {
                values.push(r.predict(features, Finish::TransformAndClip, &mut nodes))
            }
            Kind::Bootstrap { main, members } => {
                values.push(main.predict(features, Finish::TransformAndClip, &mut nodes));
                let mut raw: Vec<f64> = members
                    .iter()
                    .map(|m| m.predict(features, Finish::Raw, &mut nodes))
                    .collect();
                values.extend(members.iter().zip(&raw).map(|(m, &r)| m.finish(r)));
                values.extend(bootstrap::statistics(&members[0], &mut raw));
            }
        }
        Ok(Prediction {
            names: &self.outputs,
            values,
        })
    }

    /// Looks up the features of frame `frame` by their collected names
    /// (`requests` from [`Model::feature_requests`]) and predicts.
    pub fn predict_frame(
        &self,
        requests: &[FeatureRequest],
        frame: u32,
        lookup: impl Fn(&str) -> Option<f64>,
    ) -> Result<Prediction<'_>> {
        let values = requests
            .iter()
            .map(|r| {
                lookup(&r.output).ok_or_else(|| Error::MissingFeature {
                    model: self.name.clone(),
                    feature: r.output.clone(),
                    frame,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        self.predict(&values)
    }

    /// Whether the model is a bootstrap collection (libvmaf's
    /// `VmafModelCollection`).
    pub fn is_collection(&self) -> bool {
        matches!(self.kind, Kind::Bootstrap { .. })
    }

    /// A collection's first member alone, under the model's name: the
    /// `VmafModel` that libvmaf's `vmaf_model_collection_load` hands out
    /// beside the collection. `None` for a single model.
    pub fn first_member(&self) -> Option<Model> {
        let Kind::Bootstrap { main, .. } = &self.kind else {
            return None;
        };
        Some(Model {
            name: self.name.clone(),
            label: self.label.clone(),
            kind: Kind::Single(main.clone()),
            outputs: vec![self.name.clone()],
            overrides: self.overrides.clone(),
        })
    }

    fn main(&self) -> &Regressor {
        match &self.kind {
            Kind::Single(r) => r,
            Kind::Bootstrap { main, .. } => main,
        }
    }
}

/// The outputs of one frame's prediction.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction<'m> {
    names: &'m [String],
    values: Vec<f64>,
}

impl<'m> Prediction<'m> {
    /// The model's score.
    pub fn score(&self) -> f64 {
        self.values[0]
    }

    /// Values in [`Model::output_names`] order.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// (name, value) pairs, the model's score first.
    pub fn iter(&self) -> impl Iterator<Item = (&'m str, f64)> + '_ {
        self.names
            .iter()
            .map(String::as_str)
            .zip(self.values.iter().copied())
    }
}
