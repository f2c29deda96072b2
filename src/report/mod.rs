//! The `vmaf` tool's result files (XML, JSON, CSV, subtitles), written byte for byte in
//! the layout of libvmaf's `output.c`.
//!
//! A [`Report`] holds what one run writes: per-frame scores, their pooled
//! values and the aggregate metrics. Frame selection (`--subsample`) is the
//! caller's business: the frames given to [`Report::from_frames`] are the
//! frames written and pooled, as libvmaf pools exactly the frames it writes.

mod csv;
mod json;
mod sub;
mod xml;

use std::collections::HashMap;
use std::io::{self, Write};

use crate::error::{Error, Result};
use crate::numfmt::{format_f, format_g};
use crate::pool::Pooler;
pub use crate::pool::{PoolMethod, PooledMetric};

pub use self::csv::write_csv;
pub use self::json::write_json;
pub use self::sub::write_sub;
pub use self::xml::write_xml;

/// The scores of one frame, in output order.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameMetrics {
    pub frame_num: u32,
    pub metrics: Vec<(String, f64)>,
}

/// Everything one run writes to its result file.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// libvmaf's version string, e.g. "3.2.0".
    pub version: String,
    /// Processing speed in frames per second (informational).
    pub fps: f64,
    pub frames: Vec<FrameMetrics>,
    /// Every feature, in the order libvmaf's feature collector holds them
    /// (the order of first appearance), with its pooled values; `None` when
    /// the feature is missing from some frame, where libvmaf's pooling fails
    /// and it writes the feature with no pooled values.
    pub pooled: Vec<(String, Option<PooledMetric>)>,
    /// Whole-sequence metrics such as psnr's aPSNR.
    pub aggregate: Vec<(String, f64)>,
}

impl Report {
    /// Builds a report from the written frames (in frame order) and pools
    /// every feature over them.
    pub fn from_frames(
        version: impl Into<String>,
        fps: f64,
        frames: Vec<FrameMetrics>,
        aggregate: Vec<(String, f64)>,
    ) -> Report {
        let pooled = pool_features(&frames);
        Report {
            version: version.into(),
            fps,
            frames,
            pooled,
            aggregate,
        }
    }

    /// Feature names in output order (the CSV header's columns).
    pub fn feature_names(&self) -> impl Iterator<Item = &str> {
        self.pooled.iter().map(|(name, _)| name.as_str())
    }
}

/// Pools each feature over all frames. A feature's position is that of its
/// first appearance, as libvmaf's collector appends new names at its end.
fn pool_features(frames: &[FrameMetrics]) -> Vec<(String, Option<PooledMetric>)> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut names: Vec<&str> = Vec::new();
    let mut poolers: Vec<Pooler> = Vec::new();
    for frame in frames {
        for (name, value) in &frame.metrics {
            let i = *index.entry(name.as_str()).or_insert_with(|| {
                names.push(name.as_str());
                poolers.push(Pooler::new());
                names.len() - 1
            });
            poolers[i].push(*value);
        }
    }
    // libvmaf pools over every frame of the run and fails for a feature
    // missing from any of them.
    let n_frames = frames.len();
    names
        .into_iter()
        .zip(poolers)
        .map(|(name, pooler)| {
            let complete = pooler.count() as usize == n_frames;
            (name.to_owned(), pooler.finish().filter(|_| complete))
        })
        .collect()
}

/// How scores are printed.
///
/// The golden files were written by a `vmaf` tool with a local patch adding
/// `--precision max|full|legacy|N`. Its documented meanings: `max` prints
/// `%.17g` (lossless), `legacy` the upstream format. For the others, which
/// are not documented, this crate chooses: `full` is an alias of `max`, and
/// `N` prints `%.{N}g` (N significant digits, 1 to 17), so `max` is `17`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    /// `%.17g`: every double reads back exactly.
    Max,
    /// Upstream libvmaf: `%.6f`, or `%.16f` for a nonzero value with more
    /// than 6 zeros right after the decimal point (|x| < 1e-7), which `%.6f`
    /// would print as zero.
    #[default]
    Legacy,
    /// `%.{N}g`: N significant digits.
    Digits(u8),
}

impl Precision {
    /// Parses a `--precision` argument: `max`, `full`, `legacy` or a digit
    /// count from 1 to 17.
    pub fn parse(text: &str) -> Result<Precision> {
        match text {
            "max" | "full" => Ok(Precision::Max),
            "legacy" => Ok(Precision::Legacy),
            _ => match text.parse::<u8>() {
                Ok(n @ 1..=17) => Ok(Precision::Digits(n)),
                _ => Err(Error::InvalidArgument(format!(
                    "precision '{text}': expected max, full, legacy or a digit count from 1 to 17"
                ))),
            },
        }
    }

    /// Formats a score as C's `printf` would with this precision, including
    /// C's spelling of NaN and infinities (the XML and CSV writers print
    /// them; the JSON writer prints `null` instead).
    pub fn format(self, value: f64) -> String {
        if !value.is_finite() {
            return c_non_finite(value).to_owned();
        }
        match self {
            Precision::Max => format_g(value, 17),
            Precision::Digits(n) => format_g(value, usize::from(n)),
            Precision::Legacy => {
                // The largest double below 1e-7 (the literal rounds down), so
                // `<=` selects exactly the values with 7 or more leading zeros.
                if value != 0.0 && value.abs() <= 1e-7 {
                    format_f(value, 16)
                } else {
                    format_f(value, 6)
                }
            }
        }
    }
}

/// glibc's `printf` spelling of a non-finite double.
fn c_non_finite(value: f64) -> &'static str {
    match (value.is_nan(), value.is_sign_negative()) {
        (true, false) => "nan",
        (true, true) => "-nan",
        (false, false) => "inf",
        (false, true) => "-inf",
    }
}

/// The `fps` field: `%.2f`, as C prints it.
fn format_fps(fps: f64) -> String {
    if fps.is_finite() {
        format_f(fps, 2)
    } else {
        c_non_finite(fps).to_owned()
    }
}

/// The picture size the XML `<params>` element reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QualitySize {
    pub width: u32,
    pub height: u32,
}

/// The result file formats of the `vmaf` tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// The `vmaf` tool's default.
    #[default]
    Xml,
    Json,
    Csv,
    /// MicroDVD subtitles: each frame's scores shown over that frame.
    Sub,
}

/// Writes `report` in `format`. `size` is only used by XML.
pub fn write_report<W: Write>(
    report: &Report,
    format: OutputFormat,
    precision: Precision,
    size: QualitySize,
    out: &mut W,
) -> io::Result<()> {
    match format {
        OutputFormat::Xml => write_xml(report, precision, size, out),
        OutputFormat::Json => write_json(report, precision, out),
        OutputFormat::Csv => write_csv(report, precision, out),
        OutputFormat::Sub => write_sub(report, precision, out),
    }
}

#[cfg(test)]
#[allow(clippy::excessive_precision)] // literals as C prints them
mod tests {
    use super::*;

    fn frame(n: u32, metrics: &[(&str, f64)]) -> FrameMetrics {
        FrameMetrics {
            frame_num: n,
            metrics: metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        }
    }

    #[test]
    fn features_in_first_appearance_order() {
        let frames = vec![
            frame(0, &[("a", 1.0), ("c", 2.0)]),
            frame(1, &[("a", 3.0), ("c", 4.0), ("b", 5.0)]),
        ];
        let r = Report::from_frames("3.2.0", 1.0, frames, vec![]);
        assert_eq!(r.feature_names().collect::<Vec<_>>(), ["a", "c", "b"]);
        assert_eq!(r.pooled[0].1.unwrap().mean, 2.0);
        assert_eq!(r.pooled[1].1.unwrap().max, 4.0);
        // "b" is missing from frame 0: libvmaf's pooling fails for it.
        assert_eq!(r.pooled[2].1, None);
    }

    #[test]
    fn legacy_precision() {
        let p = Precision::Legacy;
        assert_eq!(p.format(87.267035450261787), "87.267035");
        assert_eq!(p.format(0.0), "0.000000");
        assert_eq!(p.format(-0.0), "-0.000000");
        assert_eq!(p.format(1e-6), "0.000001");
        assert_eq!(p.format(1.5e-7), "0.000000");
        assert_eq!(p.format(1e-7), "0.0000001000000000");
        assert_eq!(p.format(-3.25e-9), "-0.0000000032500000");
        assert_eq!(p.format(f64::NAN), "nan");
        assert_eq!(p.format(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn parse_precision() {
        assert_eq!(Precision::parse("max").unwrap(), Precision::Max);
        assert_eq!(Precision::parse("full").unwrap(), Precision::Max);
        assert_eq!(Precision::parse("legacy").unwrap(), Precision::Legacy);
        assert_eq!(Precision::parse("9").unwrap(), Precision::Digits(9));
        assert!(Precision::parse("0").is_err());
        assert!(Precision::parse("18").is_err());
        assert!(Precision::parse("high").is_err());
        assert_eq!(Precision::Digits(4).format(87.267035), "87.27");
        assert_eq!(Precision::Max.format(0.1), "0.10000000000000001");
    }
}
