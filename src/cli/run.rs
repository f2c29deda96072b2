//! One `vmafx` run: open both inputs, build the extractor set from the
//! models and `--feature` flags, score every frame, predict, pool, write.

use super::args::{self, Args, Backend};
use super::backend_names;
use super::output::ResultFile;
use super::progress::Progress;
use super::read_ahead::{self, ReadAhead};
use crate::error::{Error, Result};
use crate::feature::options::parse_feature_spec;
use crate::gpu::{self, DeviceSelector, Gpu, GpuBackend};
use crate::io::{partial_tail_error, FrameSource, Input, PartialTail};
use crate::model::{Model, ModelSpec};
use crate::picture::{ChromaSubsampling, HostPicture, PictureFormat};
use crate::report::{FrameMetrics, OutputFormat, Precision, QualitySize, Report};
use crate::{ContextBuilder, FeatureScores};
use std::path::Path;

/// The version written into result files: libvmaf's, whose output this
/// reproduces, so tools that parse `vmaf` results accept ours.
pub const REPORT_VERSION: &str = "3.2.0";

const DEFAULT_MODEL: &str = "version=vmaf_v0.6.1";

/// Runs the command line; returns the process exit code's cause on failure.
pub fn run(args: &Args) -> Result<()> {
    run_with(args, Teardown::Full)
}

/// [`run`] in a process that is the run's own and exits as soon as it
/// returns (the `vmafx` binary): CUDA is asked for one hardware queue
/// before it starts (ADR 0042: its context is made and taken down faster),
/// and the GPU context and the pinned pictures of its pool are left to the
/// process's exit, which frees them anyway, instead of being freed one by
/// one first (ADR 0041: on the H200 the context's release alone took 56-78
/// ms). Call it before the process starts a thread.
pub fn run_then_exit(args: &Args) -> Result<()> {
    super::device_queues::ask_for_one(args.backend);
    run_with(args, Teardown::LeftToExit)
}

/// Whether a run frees the device's resources before it returns.
#[derive(Clone, Copy, PartialEq)]
enum Teardown {
    Full,
    LeftToExit,
}

fn run_with(args: &Args, teardown: Teardown) -> Result<()> {
    if let Some(mask) = args.cpumask {
        // Before anything is scored: the instruction sets are fixed then.
        crate::cpu::restrict_by_cpumask(mask);
    }
    let precision = Precision::parse(&args.precision)?;
    let raw = raw_format(args)?;
    let output = args.output.as_deref().map(ResultFile::open).transpose()?;
    let gpu = select_backend(args)?;
    // Before any input is opened: a bad feature name fails at once.
    let backend = gpu.as_ref().map(Gpu::backend);
    let features = args
        .feature
        .iter()
        .map(|spec| {
            let (name, options) = parse_feature_spec(spec)?;
            Ok((backend_names::resolve(&name, backend)?.to_string(), options))
        })
        .collect::<Result<Vec<_>>>()?;
    let (mut reference, mut distorted) = open_inputs(args, raw)?;
    if reference.format() != distorted.format() {
        // `--aom_ctc v6.0`+ lets libvmaf 3.2's tool take bit depths that
        // differ, but it then reads the shallower file with the deeper
        // one's sample size: no meaningful scores to reproduce.
        let note = if args::wants_common_bitdepth(args)
            && reference.format().bit_depth != distorted.format().bit_depth
        {
            " (--aom_ctc v6.0 and later: scoring inputs of different bit depths \
             is not supported)"
        } else {
            ""
        };
        return Err(Error::PictureMismatch(format!(
            "reference {} is {}, distorted {} is {}{note}",
            args.reference.display(),
            reference.format(),
            args.distorted.display(),
            distorted.format()
        )));
    }
    let format = reference.format();
    warn_color_ranges(reference.as_ref(), distorted.as_ref());

    let models = load_models(args)?;
    let names: Vec<String> = if args.no_prediction {
        Vec::new()
    } else {
        models.iter().map(|m| m.name().to_string()).collect()
    };
    let mut builder = ContextBuilder::new(format)
        .threads(args.threads)
        // `vmaf` takes 0 as 1 (it skips frames only for a subsample above 1).
        .subsample(args.subsample.max(1));
    let on_gpu = gpu.is_some();
    let left_to_exit = gpu.clone().filter(|_| teardown == Teardown::LeftToExit);
    if let Some(gpu) = gpu {
        builder = builder.gpu(gpu);
    }
    for model in models {
        if args.no_prediction {
            // As the `vmaf` tool: a model's features are extracted (first,
            // as a model's are), its score is not predicted.
            for request in model.feature_requests()? {
                builder = builder.feature(request.extractor.name, request.options);
            }
        } else {
            builder = builder.model(model);
        }
    }
    for (name, options) in features {
        builder = builder.feature(&name, options);
    }
    let mut context = builder.build()?;

    skip(reference.as_mut(), args.frame_skip_ref)?;
    skip(distorted.as_mut(), args.frame_skip_dist)?;
    let progress = Progress::new(args.quiet, expected_frames(&args.reference, &format, args));
    let pool = context.picture_pool();
    // Handles never dropped keep the device context and the pool's
    // pictures alive to the process's end.
    let _left_to_exit = left_to_exit.map(|gpu| std::mem::ManuallyDrop::new((gpu, pool.clone())));
    let depth = if on_gpu {
        read_ahead::GPU_DEPTH
    } else {
        read_ahead::CPU_DEPTH
    };
    // Mapped frames are not page-locked: a GPU's upload wants the pool's.
    let map = !on_gpu && !args.no_mmap;
    if map {
        super::sigbus::explain_sigbus();
    }
    let mut reference = ReadAhead::start(reference, pool.clone(), depth, map);
    let mut distorted = ReadAhead::start(distorted, pool.clone(), depth, map);
    let mut count: u64 = 0;
    while args.frame_cnt.is_none_or(|n| count < n) {
        // Both are read, reference first. Where one has ended, the other's
        // frame is not scored, so its read error (a partial last frame) is
        // not the run's, as in the `vmaf` tool.
        let (r, d) = (reference.next(), distorted.next());
        match (matches!(r, Ok(None)), matches!(d, Ok(None))) {
            (true, true) => break,
            (true, false) => {
                warn_lengths(
                    args,
                    ("reference", reference),
                    ("distorted", distorted),
                    count,
                );
                break;
            }
            (false, true) => {
                warn_lengths(
                    args,
                    ("distorted", distorted),
                    ("reference", reference),
                    count,
                );
                break;
            }
            (false, false) => {}
        }
        let (Some(r), Some(d)) = (r?, d?) else {
            unreachable!("neither input has ended")
        };
        context.submit(r, d)?;
        count += 1;
        progress.tick();
    }
    if count == 0 {
        return Err(Error::InvalidArgument(format!(
            "{}: no frames to score",
            args.reference.display()
        )));
    }
    let scores = context.finish()?;
    progress.finish();
    let report = build_report(scores, count);

    if let Some(output) = output {
        let size = QualitySize {
            width: format.width,
            height: format.height,
        };
        output.write(&report, output_format(args), precision, size)?;
    }
    if !args.quiet {
        print_summary(&report, &names);
    }
    Ok(())
}

/// Opens the GPU `--backend` asks for (`None`: score on the CPU). `auto`
/// tries CUDA, then HIP, and says once why it falls back to the CPU.
fn select_backend(args: &Args) -> Result<Option<Gpu>> {
    let selector = DeviceSelector::parse(&args.gpu_device)?;
    if args.gpumask != 0 {
        // libvmaf: any bit of `gpumask` keeps every extractor off CUDA.
        let mask = args.gpumask;
        match args.backend {
            Backend::Cpu => return Ok(None),
            Backend::Auto => {
                if !args.quiet {
                    eprintln!("vmafx: --gpumask {mask:#x}: scoring on the CPU");
                }
                return Ok(None);
            }
            Backend::Cuda | Backend::Hip => {
                return Err(Error::InvalidArgument(format!(
                    "--gpumask {mask:#x} turns the GPU off, but --backend {} asks for it \
                     (use --gpumask 0, or --backend cpu or auto)",
                    if args.backend == Backend::Cuda {
                        "cuda"
                    } else {
                        "hip"
                    }
                )))
            }
        }
    }
    let gpu = match args.backend {
        Backend::Cpu => return Ok(None),
        Backend::Cuda => gpu::open(GpuBackend::Cuda, &selector)?,
        Backend::Hip => gpu::open(GpuBackend::Hip, &selector)?,
        Backend::Auto => match gpu::open_any(&selector) {
            Ok(g) => g,
            Err(both) => {
                let (cuda, hip) = *both;
                if !args.quiet {
                    eprintln!("vmafx: --backend auto: no GPU ({cuda}; {hip}); scoring on the CPU");
                }
                return Ok(None);
            }
        },
    };
    if !args.quiet {
        eprintln!("vmafx: scoring on {}", gpu.describe());
    }
    Ok(Some(gpu))
}

/// Opens both inputs before reading either, reference first (as the `vmaf`
/// tool does): two FIFOs fed by one writer then meet that writer's opens.
fn open_inputs(
    args: &Args,
    raw: Option<PictureFormat>,
) -> Result<(Box<dyn FrameSource>, Box<dyn FrameSource>)> {
    if args.reference.as_os_str() == "-" && args.distorted.as_os_str() == "-" {
        return Err(Error::InvalidArgument(
            "the reference and the distorted cannot both be standard input ('-')".into(),
        ));
    }
    let reference = Input::open(&args.reference)?;
    let distorted = Input::open(&args.distorted)?;
    let tail = PartialTail::ErrorWhenRead;
    let (reference, distorted) = (
        reference.into_source_with(raw, tail)?,
        distorted.into_source_with(raw, tail)?,
    );
    refuse_partial_frames_read(args, reference.as_ref(), distorted.as_ref())?;
    Ok((reference, distorted))
}

/// A raw file whose size is not a whole number of frames (a truncated
/// file, or the wrong geometry) is refused before scoring when its partial
/// frame will be read beside a frame of the other input: the `vmaf` tool
/// fails there, after scoring the frames before it. Where the other input
/// ends first (or `--frame_cnt` stops sooner) both tools score the frames
/// both have; where the other's length is unknown (a `.y4m`, a pipe), the
/// partial frame is refused when read.
fn refuse_partial_frames_read(
    args: &Args,
    reference: &dyn FrameSource,
    distorted: &dyn FrameSource,
) -> Result<()> {
    let inputs = [
        (
            reference,
            args.frame_skip_ref,
            distorted,
            args.frame_skip_dist,
        ),
        (
            distorted,
            args.frame_skip_dist,
            reference,
            args.frame_skip_ref,
        ),
    ];
    for (input, skip, other, other_skip) in inputs {
        let Some((whole, true)) = input.frames_in_file() else {
            continue;
        };
        // The partial frame is read while skipping, or as scored frame i.
        let read_beside_a_frame = match whole.checked_sub(skip) {
            None => true,
            Some(i) => {
                args.frame_cnt.is_none_or(|n| n > i)
                    && other
                        .frames_in_file()
                        .is_some_and(|(whole, partial)| whole + u64::from(partial) > other_skip + i)
            }
        };
        if let (true, Some(len)) = (read_beside_a_frame, input.raw_file_len()) {
            return Err(partial_tail_error(input.path(), len, input.format()));
        }
    }
    Ok(())
}

/// The geometry flags, when given; all four are needed for raw input.
fn raw_format(args: &Args) -> Result<Option<PictureFormat>> {
    match (args.width, args.height, &args.pixel_format, args.bitdepth) {
        (None, None, None, None) => Ok(None),
        (Some(w), Some(h), Some(p), Some(b)) => Ok(Some(PictureFormat::new(
            w,
            h,
            ChromaSubsampling::parse(p)?,
            b,
        )?)),
        _ => Err(Error::InvalidArgument(
            "--width, --height, --pixel_format and --bitdepth go together".into(),
        )),
    }
}

/// The `--model` flags' models; without any, the default model, unless
/// `--no_prediction` (whose models give their features only).
fn load_models(args: &Args) -> Result<Vec<Model>> {
    let specs: Vec<&str> = if args.model.is_empty() {
        if args.no_prediction {
            return Ok(Vec::new());
        }
        vec![DEFAULT_MODEL]
    } else {
        args.model.iter().map(String::as_str).collect()
    };
    specs
        .into_iter()
        .map(|s| Model::load(&ModelSpec::parse(s)?))
        .collect()
}

fn skip(source: &mut dyn FrameSource, n: u64) -> Result<()> {
    let mut scratch = HostPicture::new(source.format());
    for _ in 0..n {
        if !source.read_into(&mut scratch)? {
            return Err(Error::BadInput {
                path: source.path().into(),
                frame: source.position(),
                reason: format!("ended while skipping {n} frames"),
            });
        }
    }
    Ok(())
}

/// Scores compare samples as they are: inputs that declare different
/// colour ranges (one full, one limited) are probably not comparable.
fn warn_color_ranges(reference: &dyn FrameSource, distorted: &dyn FrameSource) {
    if let (Some(r), Some(d)) = (reference.color_range(), distorted.color_range()) {
        if r != d {
            eprintln!(
                "vmafx: warning: reference {} declares colour range {r}, distorted {} {d}: \
                 the samples are compared as they are, without conversion",
                reference.path().display(),
                distorted.path().display()
            );
        }
    }
}

/// Inputs of different lengths are scored over the frames both have, as
/// the `vmaf` tool does; the warning names both lengths. A longer regular
/// file is read to its end to count its frames; a longer pipe may never end,
/// so it is only said to have more. Printed even with `-q`, like the tool's.
fn warn_lengths(
    args: &Args,
    (short_role, short): (&str, ReadAhead),
    (long_role, long): (&str, ReadAhead),
    scored: u64,
) {
    let (short_path, long_path) = (short.path().to_path_buf(), long.path().to_path_buf());
    // Frame counts include the frames skipped, as the readers' positions do.
    let skipped_of = |role: &str| {
        if role == "reference" {
            args.frame_skip_ref
        } else {
            args.frame_skip_dist
        }
    };
    // The longer input's frame count: a regular file is read to its end
    // (its position then counts every frame); a pipe has at least one more.
    let long_length = match long.stop() {
        Some(mut source) => {
            let mut scratch = HostPicture::new(source.format());
            let (before, after) = loop {
                match source.read_into(&mut scratch) {
                    Ok(true) => {}
                    Ok(false) => break ("", ""),
                    // A partial last frame: the whole ones are counted.
                    Err(_) if source.frames_in_file().is_some_and(|(_, partial)| partial) => {
                        break ("", " whole frames and a partial one")
                    }
                    Err(_) => break ("at least ", ""),
                }
            };
            format!("{before}{}{after}", source.position())
        }
        None => format!("at least {}", skipped_of(long_role) + scored + 1),
    };
    let skipped = if args.frame_skip_ref + args.frame_skip_dist > 0 {
        format!(
            " after skipping {} reference and {} distorted frames",
            args.frame_skip_ref, args.frame_skip_dist
        )
    } else {
        String::new()
    };
    eprintln!(
        "vmafx: warning: {short_role} {} has {} frames, {long_role} {} has {long_length}: \
         scoring the {scored} frames both have{skipped}",
        short_path.display(),
        skipped_of(short_role) + scored,
        long_path.display(),
    );
}

/// Frames a raw file holds (for the progress bar), when it is a plain file.
fn expected_frames(path: &Path, format: &PictureFormat, args: &Args) -> Option<u64> {
    let is_y4m = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("y4m"));
    let len = std::fs::metadata(path).ok().filter(|m| m.is_file())?.len();
    let per_frame = format.frame_bytes() as u64 + if is_y4m { 6 } else { 0 };
    let n = (len / per_frame).saturating_sub(args.frame_skip_ref);
    Some(args.frame_cnt.map_or(n, |c| c.min(n)))
}

/// Pools the scored frames into the result file's contents.
///
/// `fps` is defined as the `vmaf` tool's: frames read divided by the
/// process CPU time (C `clock()`) from the first feature value collected to
/// the last. Set-up, waiting for input and prediction are not counted, and
/// with several threads their CPU times add up.
fn build_report(scores: FeatureScores, frames_read: u64) -> Report {
    let frames = scores
        .frames
        .into_iter()
        .map(|(frame_num, metrics)| FrameMetrics { frame_num, metrics })
        .collect();
    // 0 seconds gives inf (written as the tool writes it), not a guess.
    let fps = frames_read as f64 / scores.extraction_cpu_seconds;
    Report::from_frames(REPORT_VERSION, fps, frames, scores.aggregate)
}

/// At most one flag is set: each overrides the others (the last wins).
fn output_format(args: &Args) -> OutputFormat {
    if args.json {
        OutputFormat::Json
    } else if args.csv {
        OutputFormat::Csv
    } else if args.sub {
        OutputFormat::Sub
    } else {
        OutputFormat::Xml
    }
}

/// The pooled mean of each model, as the `vmaf` tool prints it.
fn print_summary(report: &Report, model_names: &[String]) {
    for name in model_names {
        if let Some((_, Some(p))) = report.pooled.iter().find(|(n, _)| n == name) {
            eprintln!("{name}: {:.6}", p.mean);
        }
    }
}
