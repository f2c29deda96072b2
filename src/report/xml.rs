//! The XML result file (the `vmaf` tool's default), laid out as libvmaf's
//! `vmaf_write_output_xml`.

use std::io::{self, BufWriter, Write};

use super::{format_fps, Precision, QualitySize, Report};

/// Writes `report` as the `vmaf` tool's XML file. Non-finite scores are
/// printed as C's `printf` prints them (`nan`, `inf`), as libvmaf does.
pub fn write_xml<W: Write>(
    report: &Report,
    precision: Precision,
    size: QualitySize,
    out: &mut W,
) -> io::Result<()> {
    let mut out = BufWriter::new(out);
    writeln!(out, "<VMAF version=\"{}\">", report.version)?;
    writeln!(
        out,
        "  <params qualityWidth=\"{}\" qualityHeight=\"{}\" />",
        size.width, size.height
    )?;
    writeln!(out, "  <fyi fps=\"{}\" />", format_fps(report.fps))?;

    writeln!(out, "  <frames>")?;
    for frame in &report.frames {
        write!(out, "    <frame frameNum=\"{}\" ", frame.frame_num)?;
        for (name, value) in &frame.metrics {
            write!(out, "{name}=\"{}\" ", precision.format(*value))?;
        }
        writeln!(out, "/>")?;
    }
    writeln!(out, "  </frames>")?;

    writeln!(out, "  <pooled_metrics>")?;
    for (name, pooled) in &report.pooled {
        write!(out, "    <metric name=\"{name}\" ")?;
        for (method, value) in pooled.iter().flat_map(|p| p.iter()) {
            write!(out, "{}=\"{}\" ", method.name(), precision.format(value))?;
        }
        writeln!(out, "/>")?;
    }
    writeln!(out, "  </pooled_metrics>")?;

    write!(out, "  <aggregate_metrics ")?;
    for (name, value) in &report.aggregate {
        write!(out, "{name}=\"{}\" ", precision.format(*value))?;
    }
    writeln!(out, "/>")?;
    writeln!(out, "</VMAF>")?;
    out.flush()
}
