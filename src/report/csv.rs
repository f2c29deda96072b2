//! The CSV result file, laid out as libvmaf's `vmaf_write_output_csv`.

use std::io::{self, BufWriter, Write};

use super::{Precision, Report};

/// Writes `report` as the `vmaf` tool's CSV file: a header naming every
/// feature, then one row per frame; every field, the last too, ends in a
/// comma. As in libvmaf, a row lists only the scores its frame has, so a
/// frame missing a feature shifts the columns after it. Non-finite scores are
/// printed as C's `printf` prints them.
pub fn write_csv<W: Write>(report: &Report, precision: Precision, out: &mut W) -> io::Result<()> {
    let mut out = BufWriter::new(out);
    write!(out, "Frame,")?;
    for name in report.feature_names() {
        write!(out, "{name},")?;
    }
    writeln!(out)?;
    for frame in &report.frames {
        write!(out, "{},", frame.frame_num)?;
        for (_, value) in &frame.metrics {
            write!(out, "{},", precision.format(*value))?;
        }
        writeln!(out)?;
    }
    out.flush()
}
