//! One libvmaf model (`VmafModel`): normalise the features, run the SVM,
//! map the prediction back, then transform and clip it.

use super::svm::Svr;
use super::transform::{Clip, Linear, Normalization, ScoreTransform};
use crate::feature::RawOptions;

/// A feature a model reads: libvmaf's name as the model file writes it
/// (`VMAF_integer_feature_adm2_score`) and the extractor options the model
/// asks for (`adm_enhn_gain_limit=1`).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelFeature {
    pub name: String,
    pub options: RawOptions,
}

/// libvmaf's `chroma_from_luma` correction of the v1.0.16 models: a SpEED
/// chroma score of exactly 0 (no chroma information) is replaced by one
/// derived from the ADM3 score, `parameter * (1 - adm3)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChromaFromLuma {
    pub parameter: f64,
    /// Index of the feature that guides (name contains `adm3`).
    pub guiding: usize,
    /// Index of the feature that is corrected (name contains `speed_chroma`).
    pub guided: usize,
}

/// Whether a prediction applies the model's transform and clip; bootstrap
/// statistics are taken on raw member predictions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Finish {
    TransformAndClip,
    Raw,
}

#[derive(Debug, Clone)]
pub struct Regressor {
    pub features: Vec<ModelFeature>,
    pub normalization: Normalization,
    /// The prediction's scale, then one per feature.
    pub score_scale: Linear,
    pub feature_scales: Vec<Linear>,
    pub svr: Svr,
    pub chroma_from_luma: Option<ChromaFromLuma>,
    /// `Some` when the transform is enabled.
    pub transform: Option<ScoreTransform>,
    /// `Some` unless the model has no clip or it was disabled.
    pub clip: Option<Clip>,
}

impl Regressor {
    /// Predicts from feature values given in `self.features` order.
    /// `nodes` is scratch space reused between calls.
    pub fn predict(&self, values: &[f64], finish: Finish, nodes: &mut Vec<f64>) -> f64 {
        nodes.clear();
        nodes.extend(
            values
                .iter()
                .zip(&self.feature_scales)
                .map(|(&v, &scale)| self.normalization.normalize(scale, v)),
        );
        if let Some(correction) = self.chroma_from_luma {
            self.correct_chroma(correction, nodes);
        }
        let raw = self.svr.predict(nodes);
        let prediction = self.normalization.denormalize(self.score_scale, raw);
        match finish {
            Finish::Raw => prediction,
            Finish::TransformAndClip => self.finish(prediction),
        }
    }

    /// Transform then clip, as after a prediction.
    pub fn finish(&self, prediction: f64) -> f64 {
        let transformed = match &self.transform {
            Some(t) => t.apply(prediction),
            None => prediction,
        };
        match self.clip {
            Some(c) => c.apply(transformed),
            None => transformed,
        }
    }

    /// libvmaf works on the normalised values: it maps both back, tests the
    /// guided one for exactly 0, and normalises the replacement again.
    fn correct_chroma(&self, c: ChromaFromLuma, nodes: &mut [f64]) {
        let norm = self.normalization;
        let guided = norm.denormalize(self.feature_scales[c.guided], nodes[c.guided]);
        if guided != 0.0 {
            return;
        }
        let guiding = norm.denormalize(self.feature_scales[c.guiding], nodes[c.guiding]);
        let corrected = (-c.parameter * guiding) + c.parameter;
        nodes[c.guided] = norm.normalize(self.feature_scales[c.guided], corrected);
    }
}
