//! The `vmaf` tool's command-line flags, with their value syntax, so vmafx
//! can stand in for it; plus `--backend`.

use clap::{ArgAction, Parser, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// The best available: a GPU when present, else the CPU.
    Auto,
    Cpu,
    Cuda,
    Hip,
}

#[derive(Debug, Parser)]
#[command(
    name = "vmafx",
    version,
    about = "Scores video quality (VMAF and companion metrics) like Netflix's `vmaf` tool",
    disable_help_flag = true,
    disable_version_flag = true
)]
pub struct Args {
    /// Reference video (.yuv or .y4m).
    #[arg(short = 'r', long = "reference", value_name = "FILE")]
    pub reference: PathBuf,

    /// Distorted video (.yuv or .y4m).
    #[arg(short = 'd', long = "distorted", value_name = "FILE")]
    pub distorted: PathBuf,

    /// Width of raw .yuv input.
    #[arg(short = 'w', long = "width")]
    pub width: Option<u32>,

    /// Height of raw .yuv input.
    #[arg(short = 'h', long = "height")]
    pub height: Option<u32>,

    /// Pixel format of raw .yuv input: 420, 422, 444 or 400.
    #[arg(short = 'p', long = "pixel_format")]
    pub pixel_format: Option<String>,

    /// Bit depth of raw .yuv input (8 to 16).
    #[arg(short = 'b', long = "bitdepth")]
    pub bitdepth: Option<u8>,

    /// Model: `version=NAME` or `path=FILE`, with `name=`, `enable_transform`,
    /// `disable_clip`, ...; repeatable. Default: version=vmaf_v0.6.1.
    #[arg(short = 'm', long = "model", action = ArgAction::Append)]
    pub model: Vec<String>,

    /// Extra feature extractor, `NAME[=key=value:key=value]`; repeatable.
    #[arg(long = "feature", action = ArgAction::Append)]
    pub feature: Vec<String>,

    /// Extract features only, no model prediction.
    #[arg(short = 'n', long = "no_prediction")]
    pub no_prediction: bool,

    /// Score every Nth frame.
    #[arg(short = 's', long = "subsample", default_value_t = 1)]
    pub subsample: u32,

    /// Worker threads (0 or 1: the calling thread only).
    #[arg(long = "threads", default_value_t = 0)]
    pub threads: usize,

    /// Output file (default: none; `-` or /dev/stdout for standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Write XML (the default output format).
    #[arg(long = "xml")]
    pub xml: bool,

    /// Write JSON.
    #[arg(long = "json")]
    pub json: bool,

    /// Write CSV.
    #[arg(long = "csv")]
    pub csv: bool,

    /// Number precision: `max` (round-trip, %.17g), `legacy` (the `vmaf`
    /// tool's %.6f), or a number of decimals.
    #[arg(long = "precision", default_value = "legacy")]
    pub precision: String,

    /// Print nothing but errors.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,

    /// Score at most this many frames.
    #[arg(long = "frame_cnt")]
    pub frame_cnt: Option<u64>,

    /// Skip this many reference frames first.
    #[arg(long = "frame_skip_ref", default_value_t = 0)]
    pub frame_skip_ref: u64,

    /// Skip this many distorted frames first.
    #[arg(long = "frame_skip_dist", default_value_t = 0)]
    pub frame_skip_dist: u64,

    /// Instruction sets not to use, as `vmaf`'s bits (8: AVX2, 16/32:
    /// AVX-512); the scores do not depend on it.
    #[arg(long = "cpumask", hide = true)]
    pub cpumask: Option<u64>,

    /// Compute backend.
    #[arg(long = "backend", value_enum, default_value_t = Backend::Cpu)]
    pub backend: Backend,

    /// GPU to use: an index or a UUID (`GPU-...`, as `nvidia-smi -L` prints).
    #[arg(long = "gpu_device", default_value = "0")]
    pub gpu_device: String,

    /// Print help.
    #[arg(long = "help", action = ArgAction::Help)]
    pub help: Option<bool>,

    /// Print the version.
    #[arg(short = 'v', long = "version", action = ArgAction::Version)]
    pub version: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once("vmafx").chain(s.split_whitespace()))
    }

    #[test]
    fn golden_command_lines_parse() {
        let a = parse(
            "-r ref.yuv -d dis.yuv -w 576 -h 324 -p 420 -b 8 --threads 1 \
             --model version=vmaf_v0.6.1neg:name=vmaf_v0.6.1neg --model version=vmaf_b_v0.6.3:name=b \
             --feature psnr=enable_mse=true:enable_apsnr=true --feature float_ssim=enable_lcs=true \
             --json --precision max -q -o out.json --subsample 3",
        )
        .unwrap();
        assert_eq!(
            (a.width, a.height, a.bitdepth),
            (Some(576), Some(324), Some(8))
        );
        assert_eq!(a.model.len(), 2);
        assert_eq!(a.feature[0], "psnr=enable_mse=true:enable_apsnr=true");
        assert!(a.json && a.quiet && !a.xml);
        assert_eq!(a.subsample, 3);
        assert_eq!(a.precision, "max");
        let a = parse(
            "--reference r.y4m --distorted d.y4m --no_prediction --feature psnr --backend cpu",
        )
        .unwrap();
        assert!(a.no_prediction);
    }

    #[test]
    fn bad_flags_are_errors() {
        assert!(parse("-r a -d b --frobnicate").is_err());
        assert!(parse("-r a -d b -w wide").is_err());
        assert!(parse("-r a").is_err());
        assert!(parse("-r a -d b --backend metal").is_err());
    }
}
