//! The options of one `--model` flag, in the `vmaf` tool's syntax:
//! `version=vmaf_v0.6.1neg:name=neg:disable_clip:adm.adm_enhn_gain_limit=1.2`.

use std::path::PathBuf;

use super::features::FeatureOverride;
use super::json::LoadFlags;
use crate::error::{Error, Result};
use crate::feature::options::normalize_number;

/// Where a model comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelSource {
    /// A built-in model by version name.
    Version(String),
    /// A JSON model file.
    Path(PathBuf),
}

/// What one `--model` flag asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSpec {
    pub source: ModelSource,
    /// Output name; `vmaf` when not given, as in the `vmaf` tool.
    pub name: Option<String>,
    pub flags: LoadFlags,
    /// `extractor.option=value` overrides of the model's feature options.
    pub overrides: Vec<FeatureOverride>,
}

impl ModelSpec {
    /// A built-in model with default options.
    pub fn version(version: &str) -> Self {
        Self::from_source(ModelSource::Version(version.to_string()))
    }

    /// A model file with default options.
    pub fn path(path: impl Into<PathBuf>) -> Self {
        Self::from_source(ModelSource::Path(path.into()))
    }

    fn from_source(source: ModelSource) -> Self {
        Self {
            source,
            name: None,
            flags: LoadFlags::default(),
            overrides: Vec::new(),
        }
    }

    /// Parses `key=value:key=value`. Keys: `version`, `path`, `name`,
    /// `enable_transform` and `disable_clip` (a bare key means `=true`), and
    /// `extractor.option` to override a feature option.
    pub fn parse(text: &str) -> Result<Self> {
        let bad = |reason: String| Error::InvalidArgument(format!("--model '{text}': {reason}"));
        let mut version = None;
        let mut path = None;
        let mut name = None;
        let mut flags = LoadFlags::default();
        let mut overrides = Vec::new();
        for part in text.split(':').filter(|p| !p.is_empty()) {
            let (key, value) = match part.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (part, None),
            };
            // As the `vmaf` tool: a bare key or `=true` sets the flag; any
            // other value leaves it as it was (`=false` does not clear it).
            let switch = |value: Option<&str>| matches!(value, None | Some("true"));
            let value_of = |value: Option<&str>| {
                value
                    .filter(|v| !v.is_empty())
                    .map(str::to_string)
                    .ok_or_else(|| bad(format!("'{key}' needs a value ({key}=...)")))
            };
            match key {
                "version" => version = Some(value_of(value)?),
                "path" => path = Some(PathBuf::from(value_of(value)?)),
                // An empty name is the `vmaf` tool's too.
                "name" => {
                    name = Some(
                        value
                            .map(str::to_string)
                            .ok_or_else(|| bad("'name' needs a value (name=...)".into()))?,
                    )
                }
                "enable_transform" => flags.enable_transform |= switch(value),
                "disable_clip" => flags.disable_clip |= switch(value),
                _ => {
                    let Some((extractor, option)) = key
                        .split_once('.')
                        .filter(|(e, o)| !e.is_empty() && !o.is_empty())
                    else {
                        return Err(bad(format!(
                            "unknown key '{key}' (known: version, path, name, enable_transform, disable_clip, EXTRACTOR.OPTION)"
                        )));
                    };
                    overrides.push(FeatureOverride {
                        extractor: extractor.to_string(),
                        option: option.to_string(),
                        value: normalize_number(&value_of(value)?),
                    });
                }
            }
        }
        let source = match (version, path) {
            (Some(v), None) => ModelSource::Version(v),
            (None, Some(p)) => ModelSource::Path(p),
            (None, None) => return Err(bad("needs version= or path=".into())),
            (Some(_), Some(_)) => return Err(bad("give version= or path=, not both".into())),
        };
        Ok(Self {
            source,
            name,
            flags,
            overrides,
        })
    }

    /// The version or path, for messages.
    pub fn label(&self) -> String {
        match &self.source {
            ModelSource::Version(v) => v.clone(),
            ModelSource::Path(p) => p.display().to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_tools_keys() {
        let s =
            ModelSpec::parse("version=vmaf_v0.6.1neg:name=neg:disable_clip:enable_transform=false")
                .unwrap();
        assert_eq!(s.source, ModelSource::Version("vmaf_v0.6.1neg".into()));
        assert_eq!(s.name.as_deref(), Some("neg"));
        assert!(s.flags.disable_clip && !s.flags.enable_transform);

        let s = ModelSpec::parse("path=/m/x.json:enable_transform:adm.adm_enhn_gain_limit=1.0")
            .unwrap();
        assert_eq!(s.source, ModelSource::Path("/m/x.json".into()));
        assert!(s.flags.enable_transform);
        assert_eq!(
            s.overrides,
            vec![FeatureOverride {
                extractor: "adm".into(),
                option: "adm_enhn_gain_limit".into(),
                value: "1".into()
            }]
        );
    }

    #[test]
    fn rejects_what_it_cannot_use() {
        for bad in [
            "name=x",
            "version=a:path=b",
            "version",
            "version=a:colour=red",
        ] {
            let e = ModelSpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains(bad), "{e}");
        }
    }

    /// The `vmaf` tool's flags: set by a bare key or `=true` only, never
    /// cleared; any name, the empty one too.
    #[test]
    fn flags_and_names_as_the_tool_takes_them() {
        for (text, clip) in [
            ("version=a:disable_clip=maybe", false),
            ("version=a:disable_clip=1", false),
            ("version=a:disable_clip:disable_clip=false", true),
            ("version=a:disable_clip=true", true),
        ] {
            assert_eq!(
                ModelSpec::parse(text).unwrap().flags.disable_clip,
                clip,
                "{text}"
            );
        }
        let s = ModelSpec::parse("version=a:name=").unwrap();
        assert_eq!(s.name.as_deref(), Some(""));
    }
}
