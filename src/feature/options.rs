//! Extractor options: declared per extractor (name, alias, type, default,
//! range), parsed from libvmaf's `key=value:key=value` syntax, and turned
//! into the feature-name suffixes libvmaf appends for non-default values
//! (`integer_adm2_egl_1`).

use super::c_text;
use crate::error::{Error, Result};
use crate::numfmt::format_g;
use std::borrow::Cow;

#[derive(Debug, Clone, PartialEq)]
pub enum OptionValue {
    Bool(bool),
    Int(i32),
    Double(f64),
    /// Text (libvmaf's `VMAF_OPT_TYPE_STRING`); declared defaults borrow a
    /// `'static` string so option tables stay `static`.
    Str(Cow<'static, str>),
}

/// One option an extractor accepts.
#[derive(Debug, Clone)]
pub struct OptionSpec {
    pub name: &'static str,
    /// Short key used in feature names (libvmaf's `alias`).
    pub alias: Option<&'static str>,
    pub default: OptionValue,
    pub min: f64,
    pub max: f64,
    /// A non-default value changes the feature's meaning, so its outputs get
    /// a `_{alias}_{value}` suffix (libvmaf's `VMAF_OPT_FLAG_FEATURE_PARAM`).
    pub feature_param: bool,
    /// The values a string option accepts (empty: any text).
    pub choices: &'static [&'static str],
}

impl OptionSpec {
    pub const fn bool(name: &'static str, default: bool) -> Self {
        Self {
            name,
            alias: None,
            default: OptionValue::Bool(default),
            min: 0.0,
            max: 1.0,
            feature_param: false,
            choices: &[],
        }
    }
    pub const fn int(name: &'static str, default: i32, min: i32, max: i32) -> Self {
        Self {
            name,
            alias: None,
            default: OptionValue::Int(default),
            min: min as f64,
            max: max as f64,
            feature_param: false,
            choices: &[],
        }
    }
    pub const fn double(name: &'static str, default: f64, min: f64, max: f64) -> Self {
        Self {
            name,
            alias: None,
            default: OptionValue::Double(default),
            min,
            max,
            feature_param: false,
            choices: &[],
        }
    }
    /// A string option; a non-empty `choices` lists the accepted values.
    pub const fn string(
        name: &'static str,
        default: &'static str,
        choices: &'static [&'static str],
    ) -> Self {
        Self {
            name,
            alias: None,
            default: OptionValue::Str(Cow::Borrowed(default)),
            min: 0.0,
            max: 0.0,
            feature_param: false,
            choices,
        }
    }
    /// Marks the option as a feature parameter with this name alias.
    pub const fn param(mut self, alias: &'static str) -> Self {
        self.alias = Some(alias);
        self.feature_param = true;
        self
    }
    /// Marks the option as a feature parameter named by its full name.
    pub const fn param_unaliased(mut self) -> Self {
        self.feature_param = true;
        self
    }
}

/// Raw `key=value` pairs as the user or a model wrote them, in order.
pub type RawOptions = Vec<(String, String)>;

/// Splits libvmaf's `name=key=value:key=value` feature syntax into the name
/// and its options (`psnr=enable_mse=true:enable_apsnr=true`).
pub fn parse_feature_spec(spec: &str) -> Result<(String, RawOptions)> {
    let (name, rest) = match spec.split_once('=') {
        Some((n, r)) => (n, r),
        None => (spec, ""),
    };
    if name.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "feature '{spec}': empty extractor name"
        )));
    }
    Ok((name.to_string(), parse_key_values(name, rest)?))
}

/// Parses `key=value:key=value` (an empty string gives no options).
pub fn parse_key_values(owner: &str, s: &str) -> Result<RawOptions> {
    let mut out = Vec::new();
    for part in s.split(':').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').ok_or_else(|| Error::BadOption {
            owner: owner.to_string(),
            option: part.to_string(),
            reason: "expected key=value".into(),
        })?;
        out.push((k.to_string(), v.to_string()));
    }
    Ok(out)
}

/// Resolved option values of one extractor instance.
#[derive(Debug, Clone)]
pub struct Options {
    owner: String,
    specs: &'static [OptionSpec],
    values: Vec<OptionValue>,
}

impl Options {
    /// Applies `raw` over the defaults of `specs`; unknown keys and values of
    /// the wrong type or out of range are errors naming the option.
    pub fn resolve(
        owner: &str,
        specs: &'static [OptionSpec],
        raw: &[(String, String)],
    ) -> Result<Self> {
        let mut values: Vec<OptionValue> = specs.iter().map(|s| s.default.clone()).collect();
        for (key, text) in raw {
            let i = specs
                .iter()
                .position(|s| s.name == key)
                .ok_or_else(|| Error::BadOption {
                    owner: owner.to_string(),
                    option: key.clone(),
                    reason: format!(
                        "unknown option (known: {})",
                        specs.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
                    ),
                })?;
            values[i] = parse_value(owner, &specs[i], text)?;
        }
        Ok(Self {
            owner: owner.to_string(),
            specs,
            values,
        })
    }

    fn index(&self, name: &str) -> usize {
        self.specs
            .iter()
            .position(|s| s.name == name)
            .unwrap_or_else(|| panic!("{}: option '{name}' not declared", self.owner))
    }

    pub fn get(&self, name: &str) -> OptionValue {
        self.values[self.index(name)].clone()
    }

    pub fn bool(&self, name: &str) -> bool {
        match self.get(name) {
            OptionValue::Bool(b) => b,
            v => panic!("{}: option '{name}' is {v:?}, not bool", self.owner),
        }
    }

    pub fn int(&self, name: &str) -> i32 {
        match self.get(name) {
            OptionValue::Int(i) => i,
            v => panic!("{}: option '{name}' is {v:?}, not int", self.owner),
        }
    }

    pub fn double(&self, name: &str) -> f64 {
        match self.get(name) {
            OptionValue::Double(d) => d,
            v => panic!("{}: option '{name}' is {v:?}, not double", self.owner),
        }
    }

    pub fn string(&self, name: &str) -> &str {
        match &self.values[self.index(name)] {
            OptionValue::Str(s) => s,
            v => panic!("{}: option '{name}' is {v:?}, not string", self.owner),
        }
    }

    /// The suffix libvmaf appends to output names: `_{alias}_{value}` for each
    /// feature parameter whose value differs from its default, sorted by
    /// option *name* (libvmaf sorts its option dictionary alphabetically:
    /// `integer_motion3_mffw_mmxv_18_mma`), `%g` for doubles, `%d` for ints,
    /// the text itself for strings (`speed_chroma_u_psm_bilinear`) and a bare
    /// `_{alias}` for bools.
    pub fn name_suffix(&self) -> String {
        let mut changed: Vec<(&OptionSpec, &OptionValue)> = self
            .specs
            .iter()
            .zip(&self.values)
            .filter(|(spec, value)| spec.feature_param && **value != spec.default)
            .collect();
        changed.sort_by_key(|(spec, _)| spec.name);
        let mut s = String::new();
        for (spec, value) in changed {
            let key = spec.alias.unwrap_or(spec.name);
            match value {
                OptionValue::Bool(_) => s.push_str(&format!("_{key}")),
                OptionValue::Int(i) => s.push_str(&format!("_{key}_{i}")),
                OptionValue::Double(d) => s.push_str(&format!("_{key}_{}", format_g(*d, 6))),
                OptionValue::Str(text) => s.push_str(&format!("_{key}_{text}")),
            }
        }
        s
    }
}

/// libvmaf stores numeric option values as `%g` of the value read as a C
/// `float` (`vmaf_feature_dictionary_set` and model files:
/// `VMAF_DICT_NORMALIZE_NUMERICAL_VALUES`), and the extractor then parses
/// that text: `1.0` becomes `1`, `0.06` stays `0.06`, `2639.545` is used
/// (and named) as `2639.54`. Non-numbers are kept as written.
pub fn normalize_number(text: &str) -> String {
    c_text::normalize(text)
}

/// Reads an option's text as libvmaf 3.2.0 does (`c_text`): booleans are
/// `true` or `false`; numbers are read with `atoi`/`atof` from their stored
/// `%g`, a zero only from text that starts with `0`. Not as libvmaf: a
/// NaN is refused (libvmaf takes it, and every score it touches is NaN).
fn parse_value(owner: &str, spec: &OptionSpec, text: &str) -> Result<OptionValue> {
    let normalized = normalize_number(text);
    let text = normalized.as_str();
    let bad = |reason: String| Error::BadOption {
        owner: owner.to_string(),
        option: spec.name.to_string(),
        reason,
    };
    let v = match spec.default {
        OptionValue::Bool(_) => match text {
            "true" => OptionValue::Bool(true),
            "false" => OptionValue::Bool(false),
            _ => return Err(bad(format!("'{text}' is not a boolean (true or false)"))),
        },
        OptionValue::Int(_) => {
            let i = c_text::atoi(text);
            if i == 0 && !c_text::zero_is_a_number(text) {
                return Err(bad(format!("'{text}' is not an integer")));
            }
            if (i as f64) < spec.min || (i as f64) > spec.max {
                return Err(bad(format!("{i} is outside [{}, {}]", spec.min, spec.max)));
            }
            OptionValue::Int(i)
        }
        OptionValue::Double(_) => {
            let d = c_text::atof(text);
            if (d == 0.0 && !c_text::zero_is_a_number(text)) || d.is_nan() {
                return Err(bad(format!("'{text}' is not a number")));
            }
            if d < spec.min || d > spec.max {
                return Err(bad(format!(
                    "{text} is outside [{}, {}]",
                    spec.min, spec.max
                )));
            }
            OptionValue::Double(d)
        }
        OptionValue::Str(_) => {
            if !spec.choices.is_empty() && !spec.choices.contains(&text) {
                return Err(bad(format!(
                    "'{text}' is not one of: {}",
                    spec.choices.join(", ")
                )));
            }
            OptionValue::Str(Cow::Owned(text.to_string()))
        }
    };
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_normalize_through_float_g() {
        assert_eq!(normalize_number("1.0"), "1");
        assert_eq!(normalize_number("0.06"), "0.06");
        assert_eq!(normalize_number("1080"), "1080");
        assert_eq!(normalize_number("0.123456789"), "0.123457");
        assert_eq!(normalize_number("bilinear"), "bilinear");
        // As a float 2639.545 is 2639.54492..., which %g rounds down.
        assert_eq!(normalize_number("2639.545"), "2639.54");
    }

    #[test]
    fn option_values_are_used_as_libvmaf_normalizes_them() {
        let raw = vec![("adm_enhn_gain_limit".to_string(), "1.23456789".to_string())];
        let o = Options::resolve("adm", &SPECS, &raw).unwrap();
        assert_eq!(o.double("adm_enhn_gain_limit"), 1.23457);
        assert_eq!(o.name_suffix(), "_egl_1.23457");
        // Within float precision of the default: the default.
        let raw = vec![("adm_enhn_gain_limit".to_string(), "100.000001".to_string())];
        let o = Options::resolve("adm", &SPECS, &raw).unwrap();
        assert_eq!(o.name_suffix(), "");
        let raw = vec![("adm_ref_display_height".to_string(), "2160.0".to_string())];
        let o = Options::resolve("adm", &SPECS, &raw).unwrap();
        assert_eq!(o.int("adm_ref_display_height"), 2160);
    }

    static SPECS: [OptionSpec; 3] = [
        OptionSpec::bool("debug", false),
        OptionSpec::double("adm_enhn_gain_limit", 100.0, 1.0, 100.0).param("egl"),
        OptionSpec::int("adm_ref_display_height", 1080, 1, 4320).param("rdh"),
    ];

    /// Values read as libvmaf's `atoi`/`atof` read their stored `%g`.
    #[test]
    fn values_are_read_as_libvmaf_reads_them() {
        let resolve = |key: &str, text: &str| {
            Options::resolve("adm", &SPECS, &[(key.to_string(), text.to_string())])
        };
        let height =
            |text| resolve("adm_ref_display_height", text).map(|o| o.int("adm_ref_display_height"));
        assert_eq!(height("720.7").unwrap(), 720);
        assert_eq!(height("0x2d0").unwrap(), 720);
        assert_eq!(height("7.2e2").unwrap(), 720);
        assert_eq!(height("720abc").unwrap(), 720);
        // 1e6 is stored as "1e+06", which atoi reads as 1.
        assert_eq!(height("1000000").unwrap(), 1);
        let gain =
            |text| resolve("adm_enhn_gain_limit", text).map(|o| o.double("adm_enhn_gain_limit"));
        assert_eq!(gain("1.5abc").unwrap(), 1.5);
        assert_eq!(gain("+2").unwrap(), 2.0);
        let debug = |text| resolve("debug", text).map(|o| o.bool("debug"));
        assert!(debug("true").unwrap());
        assert!(!debug("false").unwrap());
        // Refused as libvmaf refuses them, naming the option.
        for (key, text) in [
            ("debug", "1"),
            ("debug", "TRUE"),
            ("adm_ref_display_height", "-0"),
            ("adm_ref_display_height", "abc"),
            ("adm_ref_display_height", ""),
            ("adm_enhn_gain_limit", "nan"),
            ("adm_enhn_gain_limit", "inf"),
        ] {
            match resolve(key, text) {
                Err(Error::BadOption { option, .. }) => assert_eq!(option, key, "{text:?}"),
                other => panic!("{key}={text:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn suffix_names_non_default_params() {
        let raw = parse_key_values("adm", "adm_enhn_gain_limit=1.0:debug=true").unwrap();
        let o = Options::resolve("adm", &SPECS, &raw).unwrap();
        assert_eq!(o.name_suffix(), "_egl_1");
        assert!(o.bool("debug"));
        let o = Options::resolve("adm", &SPECS, &[]).unwrap();
        assert_eq!(o.name_suffix(), "");
    }

    #[test]
    fn suffix_sorts_by_option_name_and_bools_are_bare() {
        // As libvmaf 3.2.0 names the vmaf_v1.0.16_hfr models' motion features.
        static MOTION: [OptionSpec; 3] = [
            OptionSpec::double("motion_max_val", 10000.0, 0.0, 10000.0).param("mmxv"),
            OptionSpec::bool("motion_five_frame_window", false).param("mffw"),
            OptionSpec::bool("motion_moving_average", false).param("mma"),
        ];
        let raw = parse_key_values(
            "motion",
            "motion_moving_average=true:motion_max_val=18.0:motion_five_frame_window=true",
        )
        .unwrap();
        let o = Options::resolve("motion", &MOTION, &raw).unwrap();
        assert_eq!(o.name_suffix(), "_mffw_mmxv_18_mma");
    }

    #[test]
    fn bad_values_name_the_option() {
        let raw = parse_key_values("adm", "adm_enhn_gain_limit=0.5").unwrap();
        let e = Options::resolve("adm", &SPECS, &raw)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("adm_enhn_gain_limit") && e.contains("outside"),
            "{e}"
        );
        let raw = parse_key_values("adm", "nope=1").unwrap();
        let e = Options::resolve("adm", &SPECS, &raw)
            .unwrap_err()
            .to_string();
        assert!(e.contains("nope") && e.contains("unknown option"), "{e}");
        let raw = parse_key_values("adm", "debug=maybe").unwrap();
        assert!(Options::resolve("adm", &SPECS, &raw).is_err());
        assert!(parse_key_values("adm", "debug").is_err());
    }

    #[test]
    fn string_options_parse_and_name_features() {
        // As the vmaf_v1.0.16_3d0h_2160 model configures speed_chroma.
        static SPEED: [OptionSpec; 3] = [
            OptionSpec::double("speed_prescale", 1.0, 0.1, 4.0).param("ps"),
            OptionSpec::string("speed_prescale_method", "nearest", &["nearest", "bilinear"])
                .param("psm"),
            OptionSpec::string("label", "", &[]),
        ];
        let o = Options::resolve("speed_chroma", &SPEED, &[]).unwrap();
        assert_eq!(o.string("speed_prescale_method"), "nearest");
        assert_eq!(o.name_suffix(), "");
        let raw = parse_key_values(
            "speed_chroma",
            "speed_prescale_method=bilinear:speed_prescale=0.5:label=any text",
        )
        .unwrap();
        let o = Options::resolve("speed_chroma", &SPEED, &raw).unwrap();
        assert_eq!(o.string("speed_prescale_method"), "bilinear");
        assert_eq!(o.string("label"), "any text");
        assert_eq!(o.name_suffix(), "_ps_0.5_psm_bilinear");
        // The default spelled out is no change, so no suffix (libvmaf strcmp).
        let raw = parse_key_values("speed_chroma", "speed_prescale_method=nearest").unwrap();
        let o = Options::resolve("speed_chroma", &SPEED, &raw).unwrap();
        assert_eq!(o.name_suffix(), "");
    }

    #[test]
    fn string_options_outside_their_choices_are_refused() {
        static SPEED: [OptionSpec; 1] = [OptionSpec::string(
            "speed_prescale_method",
            "nearest",
            &["nearest", "bilinear"],
        )];
        let raw = parse_key_values("speed_chroma", "speed_prescale_method=cubic").unwrap();
        let e = Options::resolve("speed_chroma", &SPEED, &raw)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("speed_prescale_method")
                && e.contains("'cubic' is not one of: nearest, bilinear"),
            "{e}"
        );
    }

    #[test]
    fn feature_spec_splits_name() {
        let (n, o) = parse_feature_spec("psnr=enable_mse=true:enable_apsnr=true").unwrap();
        assert_eq!(n, "psnr");
        assert_eq!(
            o,
            vec![
                ("enable_mse".into(), "true".into()),
                ("enable_apsnr".into(), "true".into())
            ]
        );
        let (n, o) = parse_feature_spec("ciede").unwrap();
        assert_eq!((n.as_str(), o.len()), ("ciede", 0));
    }
}
