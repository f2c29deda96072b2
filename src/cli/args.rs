//! The `vmaf` tool's command-line flags, with their value syntax, so vmafx
//! can stand in for it; plus `--backend`.

use super::number::c_unsigned;
use super::presets;
use clap::error::ErrorKind;
use clap::{ArgAction, ArgMatches, CommandFactory, FromArgMatches, Parser, ValueEnum};
use std::path::PathBuf;

/// The version `-v` prints: libvmaf's, as the `vmaf` tool prints it, so
/// scripts that check it accept vmafx (its own version is in `--help`).
pub const VMAF_VERSION: &str = "3.2.0";

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
    about = concat!(
        "vmafx ",
        env!("CARGO_PKG_VERSION"),
        ": scores video quality (VMAF and companion metrics) like Netflix's `vmaf` tool"
    ),
    disable_help_flag = true,
    disable_version_flag = true,
    // As `vmaf` (getopt): a flag given again replaces its value.
    args_override_self = true
)]
pub struct Args {
    /// Reference video (.yuv or .y4m).
    #[arg(
        short = 'r',
        long = "reference",
        value_name = "FILE",
        required = false,
        required_unless_present = "version"
    )]
    pub reference: PathBuf,

    /// Distorted video (.yuv or .y4m).
    #[arg(
        short = 'd',
        long = "distorted",
        value_name = "FILE",
        required = false,
        required_unless_present = "version"
    )]
    pub distorted: PathBuf,

    /// Width of raw .yuv input.
    #[arg(short = 'w', long = "width", value_parser = c_unsigned::<u32>)]
    pub width: Option<u32>,

    /// Height of raw .yuv input.
    #[arg(short = 'h', long = "height", value_parser = c_unsigned::<u32>)]
    pub height: Option<u32>,

    /// Pixel format of raw .yuv input: 420, 422, 444 or 400.
    #[arg(short = 'p', long = "pixel_format")]
    pub pixel_format: Option<String>,

    /// Bit depth of raw .yuv input (8 to 16).
    #[arg(short = 'b', long = "bitdepth", value_parser = c_unsigned::<u8>)]
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
    #[arg(short = 's', long = "subsample", default_value_t = 1, value_parser = c_unsigned::<u32>)]
    pub subsample: u32,

    /// Worker threads (0 or 1: the calling thread only).
    #[arg(long = "threads", default_value_t = 0, value_parser = c_unsigned::<usize>)]
    pub threads: usize,

    /// Output file (default: none; `-` or /dev/stdout for standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    // The last of the format flags wins, as in `vmaf` (each overrides the
    // others).
    /// Write XML (the default output format).
    #[arg(long = "xml", overrides_with_all = ["json", "csv", "sub"])]
    pub xml: bool,

    /// Write JSON.
    #[arg(long = "json", overrides_with_all = ["xml", "csv", "sub"])]
    pub json: bool,

    /// Write CSV.
    #[arg(long = "csv", overrides_with_all = ["xml", "json", "sub"])]
    pub csv: bool,

    /// Write MicroDVD subtitles: each frame's scores shown over that frame.
    #[arg(long = "sub", overrides_with_all = ["xml", "json", "csv"])]
    pub sub: bool,

    /// AOM common test conditions: adds their models and features
    /// (v1.0 to v7.0); repeatable.
    #[arg(long = "aom_ctc", value_name = "VERSION", action = ArgAction::Append)]
    pub aom_ctc: Vec<String>,

    /// Netflix common test conditions (v1.0): adds their models and
    /// features; repeatable.
    #[arg(long = "nflx_ctc", value_name = "VERSION", action = ArgAction::Append)]
    pub nflx_ctc: Vec<String>,

    /// Number precision: `max` (round-trip, %.17g), `legacy` (the `vmaf`
    /// tool's %.6f), or a number of decimals.
    #[arg(long = "precision", default_value = "legacy")]
    pub precision: String,

    /// Print nothing but errors.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,

    /// Score at most this many frames (0: all, as in `vmaf`).
    #[arg(long = "frame_cnt", value_parser = c_unsigned::<u64>)]
    pub frame_cnt: Option<u64>,

    /// Skip this many reference frames first.
    #[arg(long = "frame_skip_ref", default_value_t = 0, value_parser = c_unsigned::<u64>)]
    pub frame_skip_ref: u64,

    /// Skip this many distorted frames first.
    #[arg(long = "frame_skip_dist", default_value_t = 0, value_parser = c_unsigned::<u64>)]
    pub frame_skip_dist: u64,

    /// Instruction sets not to use, as `vmaf`'s bits (8: AVX2, 16/32:
    /// AVX-512); the scores do not depend on it.
    #[arg(long = "cpumask", hide = true, value_parser = c_unsigned::<u64>)]
    pub cpumask: Option<u64>,

    /// GPU operations not to use, as `vmaf`'s bits: any bit set keeps
    /// scoring off the GPU (`--backend auto` picks the CPU).
    #[arg(long = "gpumask", default_value_t = 0, value_parser = c_unsigned::<u64>)]
    pub gpumask: u64,

    /// Compute backend.
    #[arg(long = "backend", value_enum, default_value_t = Backend::Cpu)]
    pub backend: Backend,

    /// GPU to use: an index or a UUID (`GPU-...`, as `nvidia-smi -L` prints).
    #[arg(long = "gpu_device", default_value = "0")]
    pub gpu_device: String,

    /// Read input files with read(2) instead of mapping their frames (the
    /// CPU's default): for files another program may truncate while they
    /// are scored, which would kill a process that maps them (SIGBUS).
    #[arg(long = "no_mmap")]
    pub no_mmap: bool,

    /// Print help.
    #[arg(long = "help", action = ArgAction::Help)]
    pub help: Option<bool>,

    /// Print libvmaf's version, as `vmaf` does, and exit.
    #[arg(short = 'v', long = "version")]
    pub version: bool,
}

impl Args {
    /// Parses a command line (program name first): the flags, then the
    /// presets expanded in place among `--model` and `--feature`.
    pub fn try_from_command_line<I, T>(args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let matches = Self::command().try_get_matches_from(args)?;
        if matches.get_flag("version") {
            // The caller prints VMAF_VERSION (on stderr, as `vmaf` does).
            return Err(Self::command().error(ErrorKind::DisplayVersion, VMAF_VERSION));
        }
        let mut parsed = Self::from_arg_matches(&matches)?;
        parsed
            .expand_presets(&matches)
            .map_err(|msg| Self::command().error(ErrorKind::InvalidValue, msg))?;
        if parsed.frame_cnt == Some(0) {
            parsed.frame_cnt = None;
        }
        Ok(parsed)
    }

    /// Rebuilds the model and feature lists in command-line order, with
    /// every `--aom_ctc`/`--nflx_ctc` expanded where it stood (libvmaf
    /// appends as it reads its arguments).
    fn expand_presets(&mut self, matches: &ArgMatches) -> Result<(), String> {
        if self.aom_ctc.is_empty() && self.nflx_ctc.is_empty() {
            return Ok(());
        }
        let mut flags: Vec<(usize, &str, &str)> = Vec::new();
        for id in ["model", "feature", "aom_ctc", "nflx_ctc"] {
            let (Some(indices), Some(values)) =
                (matches.indices_of(id), matches.get_many::<String>(id))
            else {
                continue;
            };
            flags.extend(indices.zip(values).map(|(i, v)| (i, id, v.as_str())));
        }
        flags.sort_by_key(|f| f.0);
        let (mut models, mut features) = (Vec::new(), Vec::new());
        for (_, id, value) in flags {
            let items = match id {
                "model" => vec![presets::Item::Model(value)],
                "feature" => vec![presets::Item::Feature(value)],
                "aom_ctc" => presets::aom_ctc(value)?,
                _ => presets::nflx_ctc(value)?,
            };
            for item in items {
                presets::apply(item, &mut models, &mut features);
            }
        }
        self.model = models;
        self.feature = features;
        Ok(())
    }
}

/// Whether `--aom_ctc` asks for libvmaf's `common_bitdepth` (v6.0 on).
pub fn wants_common_bitdepth(args: &Args) -> bool {
    args.aom_ctc
        .iter()
        .any(|v| presets::AOM_CTC_VERSIONS[5..].contains(&v.as_str()))
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

    fn command_line(s: &str) -> Result<Args, clap::Error> {
        Args::try_from_command_line(std::iter::once("vmafx").chain(s.split_whitespace()))
    }

    #[test]
    fn numbers_read_as_strtoul_with_base_0() {
        let a = command_line(
            "-r a -d b -w 0x40 -h 0100 -p 420 -b 0xa --threads 0X2 --subsample 010 \
             --frame_cnt 0x10 --frame_skip_ref 0x1 --frame_skip_dist 07 --gpumask 0xff",
        )
        .unwrap();
        assert_eq!(
            (a.width, a.height, a.bitdepth),
            (Some(64), Some(64), Some(10))
        );
        assert_eq!((a.threads, a.subsample, a.frame_cnt), (2, 8, Some(16)));
        assert_eq!(
            (a.frame_skip_ref, a.frame_skip_dist, a.gpumask),
            (1, 7, 255)
        );
        let e = command_line("-r a -d b -h 0x").unwrap_err().to_string();
        assert!(
            e.contains("'--height <HEIGHT>'") && e.contains("not an unsigned integer"),
            "{e}"
        );
        // `vmaf`: a frame count of 0 is no limit.
        assert_eq!(
            command_line("-r a -d b --frame_cnt 0").unwrap().frame_cnt,
            None
        );
    }

    #[test]
    fn the_last_output_format_flag_wins() {
        let flags = |a: &Args| (a.xml, a.json, a.csv, a.sub);
        let a = command_line("-r a -d b --json --csv").unwrap();
        assert_eq!(flags(&a), (false, false, true, false));
        let a = command_line("-r a -d b --sub --xml").unwrap();
        assert_eq!(flags(&a), (true, false, false, false));
        let a = command_line("-r a -d b --csv --json --sub").unwrap();
        assert_eq!(flags(&a), (false, false, false, true));
    }

    #[test]
    fn presets_expand_where_they_stand() {
        let a = command_line(
            "-r a -d b --feature float_ssim=enable_lcs=true -m version=vmaf_b_v0.6.3:name=b \
             --aom_ctc v7.0 --feature psnr --nflx_ctc v1.0",
        )
        .unwrap();
        assert_eq!(
            a.model,
            [
                "version=vmaf_b_v0.6.3:name=b",
                "version=vmaf_v0.6.1:name=vmaf",
                "version=vmaf_v0.6.1neg:name=vmaf_neg",
                "version=vmaf_4k_v0.6.1:name=vmaf",
                "version=vmaf_4k_v0.6.1neg:name=vmaf_neg",
            ]
        );
        assert_eq!(
            a.feature,
            [
                // v7.0 replaces the first float_ssim (libvmaf's CHECKED_REPLACE)
                "float_ssim=scale=1:enable_db=true:clip_db=true",
                "psnr=reduced_hbd_peak=true:enable_apsnr=true:min_sse=0.5",
                "ciede",
                "float_ssim=enable_db=true:clip_db=true",
                "float_ms_ssim=enable_db=true:clip_db=true",
                "psnr_hvs",
                "cambi",
                "psnr",
                "psnr=enable_chroma=true:enable_apsnr=true",
                "float_ssim=enable_db=true:clip_db=true",
                "cambi",
            ]
        );
        assert!(wants_common_bitdepth(&a)); // v7.0 includes v6.0's
        assert!(!wants_common_bitdepth(
            &command_line("-r a -d b --aom_ctc v5.0").unwrap()
        ));
        let e = command_line("-r a -d b --nflx_ctc v3")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--nflx_ctc: unknown version 'v3' (known: v1.0)"),
            "{e}"
        );
    }

    #[test]
    fn version_needs_no_inputs() {
        let e = command_line("-v").unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::DisplayVersion);
        assert!(command_line("--version").is_err());
    }

    #[test]
    fn bad_flags_are_errors() {
        assert!(parse("-r a -d b --frobnicate").is_err());
        assert!(parse("-r a -d b -w wide").is_err());
        assert!(parse("-r a").is_err());
        assert!(parse("-r a -d b --backend metal").is_err());
    }
}
