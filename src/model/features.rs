//! From a model's feature names to what the context extracts: the extractor
//! that provides each feature, its options, and the name its value is
//! collected under (libvmaf's alias plus the option suffix,
//! `integer_adm2_egl_1`).

use super::regressor::ModelFeature;
use crate::error::{Error, Result};
use crate::feature::registry::{find_provider, ExtractorInfo};
use crate::feature::{Options, RawOptions};

/// libvmaf's `alias.c`: long feature names and the short names it reports
/// them under. Names not listed are reported as they are.
const ALIASES: &[(&str, &str)] = &[
    ("VMAF_feature_adm2_score", "adm2"),
    ("VMAF_feature_adm3_score", "adm3"),
    ("VMAF_feature_aim_score", "aim"),
    ("VMAF_feature_adm_scale0_score", "adm_scale0"),
    ("VMAF_feature_adm_scale1_score", "adm_scale1"),
    ("VMAF_feature_adm_scale2_score", "adm_scale2"),
    ("VMAF_feature_adm_scale3_score", "adm_scale3"),
    ("VMAF_feature_motion_score", "motion"),
    ("VMAF_feature_motion2_score", "motion2"),
    ("VMAF_feature_motion3_score", "motion3"),
    ("VMAF_feature_vif_scale0_score", "vif_scale0"),
    ("VMAF_feature_vif_scale1_score", "vif_scale1"),
    ("VMAF_feature_vif_scale2_score", "vif_scale2"),
    ("VMAF_feature_vif_scale3_score", "vif_scale3"),
    ("VMAF_integer_feature_adm2_score", "integer_adm2"),
    ("VMAF_integer_feature_adm3_score", "integer_adm3"),
    ("VMAF_integer_feature_aim_score", "integer_aim"),
    (
        "VMAF_integer_feature_adm_scale0_score",
        "integer_adm_scale0",
    ),
    (
        "VMAF_integer_feature_adm_scale1_score",
        "integer_adm_scale1",
    ),
    (
        "VMAF_integer_feature_adm_scale2_score",
        "integer_adm_scale2",
    ),
    (
        "VMAF_integer_feature_adm_scale3_score",
        "integer_adm_scale3",
    ),
    ("VMAF_integer_feature_motion_score", "integer_motion"),
    ("VMAF_integer_feature_motion2_score", "integer_motion2"),
    ("VMAF_integer_feature_motion3_score", "integer_motion3"),
    (
        "VMAF_integer_feature_vif_scale0_score",
        "integer_vif_scale0",
    ),
    (
        "VMAF_integer_feature_vif_scale1_score",
        "integer_vif_scale1",
    ),
    (
        "VMAF_integer_feature_vif_scale2_score",
        "integer_vif_scale2",
    ),
    (
        "VMAF_integer_feature_vif_scale3_score",
        "integer_vif_scale3",
    ),
    ("Cambi_feature_cambi_score", "cambi"),
    (
        "Speed_chroma_feature_speed_chroma_u_score",
        "speed_chroma_u",
    ),
    (
        "Speed_chroma_feature_speed_chroma_v_score",
        "speed_chroma_v",
    ),
    (
        "Speed_chroma_feature_speed_chroma_uv_score",
        "speed_chroma_uv",
    ),
];

/// The name libvmaf reports a feature under (`VMAF_integer_feature_adm2_score`
/// → `integer_adm2`).
pub fn alias(name: &str) -> &str {
    ALIASES
        .iter()
        .find(|(long, _)| *long == name)
        .map_or(name, |(_, short)| short)
}

/// What the context must extract for one model feature.
#[derive(Debug, Clone)]
pub struct FeatureRequest {
    /// The extractor providing the feature.
    pub extractor: &'static ExtractorInfo,
    /// Options for that extractor, as the model (and `--model` overrides)
    /// set them.
    pub options: RawOptions,
    /// The name the feature's value is collected and reported under.
    pub output: String,
}

/// An option override of a `--model` flag: `adm.adm_enhn_gain_limit=1.2`
/// sets the option on every model feature that extractor `adm` provides.
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureOverride {
    pub extractor: String,
    pub option: String,
    pub value: String,
}

impl FeatureRequest {
    /// Finds the provider of `feature` (read by model `model`) in the
    /// registry, applies `overrides` for it and derives the collected name
    /// from the resolved options.
    pub fn resolve(
        model: &str,
        feature: &ModelFeature,
        overrides: &[FeatureOverride],
    ) -> Result<Self> {
        let short = alias(&feature.name);
        let extractor = find_provider(short)
            .or_else(|| find_provider(&feature.name))
            .ok_or_else(|| Error::BadModel {
                name: model.to_string(),
                reason: format!("no feature extractor provides feature '{}'", feature.name),
            })?;
        let mut options = feature.options.clone();
        for o in overrides.iter().filter(|o| o.extractor == extractor.name) {
            match options.iter_mut().find(|(key, _)| *key == o.option) {
                Some(entry) => entry.1 = o.value.clone(),
                None => options.push((o.option.clone(), o.value.clone())),
            }
        }
        let suffix = Options::resolve(extractor.name, extractor.options, &options)?.name_suffix();
        Ok(Self {
            extractor,
            options,
            output: format!("{short}{suffix}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_long_names_only() {
        assert_eq!(alias("VMAF_integer_feature_adm2_score"), "integer_adm2");
        assert_eq!(alias("VMAF_feature_vif_scale3_score"), "vif_scale3");
        assert_eq!(
            alias("Speed_chroma_feature_speed_chroma_uv_score"),
            "speed_chroma_uv"
        );
        assert_eq!(
            alias("VMAF_integer_feature_motion_sad_score"),
            "VMAF_integer_feature_motion_sad_score"
        );
    }
}
