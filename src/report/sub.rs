//! The subtitle result file (MicroDVD), laid out as libvmaf's
//! `vmaf_write_output_sub`: one line per frame, shown for that frame.

use std::io::{self, BufWriter, Write};

use super::{Precision, Report};

/// Writes `report` as MicroDVD subtitles: `{N}{N+1}frame: N|name: value|...`,
/// one line per frame, every field followed by `|`, so a player shows each
/// frame's scores over that frame.
pub fn write_sub<W: Write>(report: &Report, precision: Precision, out: &mut W) -> io::Result<()> {
    let mut out = BufWriter::new(out);
    for frame in &report.frames {
        let n = frame.frame_num;
        write!(out, "{{{n}}}{{{}}}frame: {n}|", n + 1)?;
        for (name, value) in &frame.metrics {
            write!(out, "{name}: {}|", precision.format(*value))?;
        }
        writeln!(out)?;
    }
    out.flush()
}
