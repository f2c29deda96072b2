//! The JSON result file, laid out as libvmaf's `vmaf_write_output_json`.

use std::io::{self, BufWriter, Write};

use super::{format_fps, Precision, Report};

/// Writes `report` as the `vmaf` tool's JSON file.
///
/// Non-finite scores are written as `null` (JSON has no NaN). Two quirks of
/// libvmaf are kept for byte compatibility, both still valid JSON: a `null`
/// per-frame score is not followed by a line break, and names are written
/// without escaping (feature names are plain identifiers).
/// One deliberate difference: frames are separated by position, where
/// libvmaf tests `frameNum > 0`; the two agree whenever frame 0 comes first,
/// as in every `vmaf` run, and this way the output stays valid otherwise.
pub fn write_json<W: Write>(report: &Report, precision: Precision, out: &mut W) -> io::Result<()> {
    let mut out = BufWriter::new(out);
    let number = |value: f64| {
        if value.is_finite() {
            precision.format(value)
        } else {
            "null".to_owned()
        }
    };

    writeln!(out, "{{")?;
    writeln!(out, "  \"version\": \"{}\",", report.version)?;
    let fps = if report.fps.is_finite() {
        format_fps(report.fps)
    } else {
        "null".to_owned()
    };
    writeln!(out, "  \"fps\": {fps},")?;

    write!(out, "  \"frames\": [")?;
    for (position, frame) in report.frames.iter().enumerate() {
        write!(out, "{}", if position > 0 { ",\n" } else { "\n" })?;
        writeln!(out, "    {{")?;
        writeln!(out, "      \"frameNum\": {},", frame.frame_num)?;
        writeln!(out, "      \"metrics\": {{")?;
        let last = frame.metrics.len().saturating_sub(1);
        for (i, (name, value)) in frame.metrics.iter().enumerate() {
            let comma = if i < last { "," } else { "" };
            if value.is_finite() {
                writeln!(
                    out,
                    "        \"{name}\": {}{comma}",
                    precision.format(*value)
                )?;
            } else {
                write!(out, "        \"{name}\": null{comma}")?;
            }
        }
        writeln!(out, "      }}")?;
        write!(out, "    }}")?;
    }
    write!(out, "\n  ],\n")?;

    write!(out, "  \"pooled_metrics\": {{")?;
    for (i, (name, pooled)) in report.pooled.iter().enumerate() {
        write!(out, "{}", if i > 0 { ",\n" } else { "\n" })?;
        write!(out, "    \"{name}\": {{")?;
        for (j, (method, value)) in pooled.iter().flat_map(|p| p.iter()).enumerate() {
            write!(out, "{}", if j > 0 { ",\n" } else { "\n" })?;
            write!(out, "      \"{}\": {}", method.name(), number(value))?;
        }
        write!(out, "\n    }}")?;
    }
    write!(out, "\n  }},\n")?;

    write!(out, "  \"aggregate_metrics\": {{")?;
    let last = report.aggregate.len().saturating_sub(1);
    for (i, (name, value)) in report.aggregate.iter().enumerate() {
        write!(out, "\n    \"{name}\": {}", number(*value))?;
        write!(out, "{}", if i < last { "," } else { "" })?;
    }
    write!(out, "\n  }}\n")?;
    writeln!(out, "}}")?;
    out.flush()
}
