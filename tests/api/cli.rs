//! The `vmafx` binary: golden command lines give the golden files, bad
//! input gives a clear message and a non-zero exit.

use crate::common;
mod complete;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn vmafx(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vmafx"))
        .args(args)
        .output()
        .expect("run vmafx")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Decompresses a golden pair into `dir` as plain .yuv files.
fn unpack(pair: &common::Pair, dir: &Path) -> (PathBuf, PathBuf) {
    let r = dir.join("ref.yuv");
    let d = dir.join("dist.yuv");
    std::fs::write(&r, common::decompress(&pair.reference_path())).unwrap();
    std::fs::write(&d, common::decompress(&pair.distorted_path())).unwrap();
    (r, d)
}

/// The golden JSON without its `fps` line (run speed).
fn without_fps(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("\"fps\""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `-r`, `-d` and the geometry of the unpacked sample-sized golden pair.
fn raw_pair_args<'a>(r: &'a Path, d: &'a Path) -> Vec<&'a str> {
    let mut args = vec!["-r", r.to_str().unwrap(), "-d", d.to_str().unwrap()];
    args.extend(SAMPLE_GEOMETRY);
    args
}

/// Golden pairs at 8 and 10 bits (4:2:0, 4:2:2), their frames mapped in
/// place (the CPU's default) and read with `--no_mmap`.
#[test]
fn golden_command_line_writes_the_golden_file() {
    let dir = tempfile::tempdir().unwrap();
    let pairs: Vec<_> = common::PAIRS
        .iter()
        .filter(|p| ["x264_crf30", "x265_main10_crf30", "x264_422p10_crf30"].contains(&p.distorted))
        .collect();
    assert_eq!(pairs.len(), 3);
    for pair in pairs {
        let (r, d) = unpack(pair, dir.path());
        let format = pair.format();
        let geometry = [
            format!("{}", format.width),
            format!("{}", format.height),
            format.subsampling.to_string().replace(':', ""),
            format!("{}", format.bit_depth),
        ];
        let golden = std::fs::read_to_string(pair.golden_path("vmaf_v0.6.1")).unwrap();
        for read in [None, Some("--no_mmap")] {
            let mut flags = vec!["-w", &geometry[0], "-h", &geometry[1], "-p", &geometry[2]];
            flags.extend([
                "-b",
                &geometry[3],
                "--threads",
                "1",
                "--model",
                "version=vmaf_v0.6.1",
            ]);
            flags.extend(read);
            let (r, d) = (r.to_str().unwrap(), d.to_str().unwrap());
            let ours = scores_json(dir.path(), r, d, &flags, None);
            assert_eq!(ours, without_fps(&golden), "{} {read:?}", pair.folder);
        }
    }
}

/// The metric names of every frame, then of `pooled_metrics`, in the
/// file's order (serde_json's maps sort their keys).
fn key_order(json: &str) -> Vec<Vec<String>> {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    struct Keys;
    impl<'de> Visitor<'de> for Keys {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<String>, A::Error> {
            let mut keys = Vec::new();
            while let Some((k, IgnoredAny)) = map.next_entry::<String, IgnoredAny>()? {
                keys.push(k);
            }
            Ok(keys)
        }
    }
    let value: serde_json::Value = serde_json::from_str(json).unwrap();
    // Each object's keys, read from the file's text where it starts (the
    // deserializer stops at the object's end).
    let mut lists = Vec::new();
    let mut rest = json;
    while let Some(at) = rest.find("\"metrics\": {") {
        let obj = &rest[at + "\"metrics\": ".len()..];
        let mut de = serde_json::Deserializer::from_str(obj);
        lists.push(de.deserialize_map(Keys).unwrap());
        rest = &obj[1..];
    }
    let at = json.find("\"pooled_metrics\": {").expect("pooled_metrics");
    let obj = &json[at + "\"pooled_metrics\": ".len()..];
    lists.push(
        serde_json::Deserializer::from_str(obj)
            .deserialize_map(Keys)
            .unwrap(),
    );
    assert_eq!(lists.len(), value["frames"].as_array().unwrap().len() + 1);
    lists
}

/// libvmaf with a worker pool (`--threads 1`) runs its temporal extractors
/// (float_motion here) on the calling thread ahead of the pool, so their
/// features lead the lists; without one (`--threads 0`) the model's order
/// holds. The golden float-model run is libvmaf's `--threads 1`.
#[test]
fn feature_order_follows_libvmafs_threading() {
    let pair = &common::PAIRS[1];
    let dir = tempfile::tempdir().unwrap();
    let (r, d) = unpack(pair, dir.path());
    let run = |threads: &str| {
        let out = dir.path().join(format!("threads{threads}.json"));
        let o = vmafx(
            &[
                &raw_pair_args(&r, &d)[..],
                &["--threads", threads],
                &[
                    "--model",
                    "version=vmaf_float_v0.6.1",
                    "--json",
                    "-q",
                    "-o",
                    out.to_str().unwrap(),
                ],
            ]
            .concat(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        key_order(&std::fs::read_to_string(&out).unwrap())
    };
    let golden =
        key_order(&std::fs::read_to_string(pair.golden_path("vmaf_float_v0.6.1")).unwrap());
    assert_eq!(golden[0][..3], ["motion2", "motion", "motion3"]);
    assert_eq!(run("1"), golden);
    let unpooled = run("0");
    assert_eq!(unpooled[0][..2], ["adm2", "aim"], "{:?}", unpooled[0]);
}

#[test]
fn readme_sample_prints_the_pooled_score() {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sample.json");
    let o = vmafx(&[
        "-r",
        &format!("{root}/examples/data/ref_576x324.y4m"),
        "-d",
        &format!("{root}/examples/data/dist_576x324_x264_crf30.y4m"),
        "--json",
        "--precision",
        "max",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The sample is the first 10 frames of pair a/x264_crf30: frames 0..8
    // score as in the full golden run (frame 9's motion2 has no next frame
    // here, so it differs from the 30-frame run).
    let ours = common::Golden::load(&out);
    let golden = common::PAIRS[1].golden("vmaf_v0.6.1");
    assert_eq!(ours.frames.len(), 10);
    for i in 0..9 {
        assert_eq!(ours.value(i, "vmaf"), golden.value(i, "vmaf"), "frame {i}");
    }
    let mean = ours.pooled["vmaf"]["mean"];
    assert_eq!(stderr(&o).trim(), format!("vmaf: {mean:.6}"));
}

#[test]
fn unknown_flag_is_refused() {
    let o = vmafx(&["-r", "a.yuv", "-d", "b.yuv", "--frobnicate"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--frobnicate"), "{}", stderr(&o));
}

#[test]
fn bad_values_name_what_was_wrong() {
    let root = env!("CARGO_MANIFEST_DIR");
    let r = format!("{root}/examples/data/ref_576x324.y4m");
    let d = format!("{root}/examples/data/dist_576x324_x264_crf30.y4m");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--model", "version=vmaf_v9"],
            "unknown model version 'vmaf_v9'",
        ),
        (
            &["--feature", "nosuch"],
            "unknown feature extractor 'nosuch'",
        ),
        (&["--feature", "psnr=enable_mse=maybe"], "enable_mse"),
        (
            &[
                "--no_prediction",
                "--feature",
                "motion=motion_fps_weight=-3",
            ],
            "motion_fps_weight",
        ),
        (&["--precision", "many"], "precision 'many'"),
        (&["--backend", "cuda"], "backend cuda unavailable"),
        (&["-w", "576"], "go together"),
    ];
    for (extra, want) in cases {
        let mut args = vec!["-r", r.as_str(), "-d", d.as_str(), "-q"];
        args.extend_from_slice(extra);
        let o = vmafx(&args);
        assert!(!o.status.success(), "{extra:?} should fail");
        assert!(stderr(&o).contains(want), "{extra:?}: {}", stderr(&o));
    }
}

/// Bytes of a 64x48 4:2:0 8-bit frame, and the flags that say so.
const SMALL_FRAME: usize = 64 * 48 * 3 / 2;
const SMALL_GEOMETRY: [&str; 9] = ["-w", "64", "-h", "48", "-p", "420", "-b", "8", "-q"];

/// Raw files `r.yuv` and `d.yuv` of `reference` and `distorted` bytes in
/// `dir`, and an output path there.
fn raw_pair(dir: &Path, reference: usize, distorted: usize) -> [String; 3] {
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let (r, d) = (path("r.yuv"), path("d.yuv"));
    std::fs::write(&r, vec![16u8; reference]).unwrap();
    std::fs::write(&d, vec![16u8; distorted]).unwrap();
    [r, d, path("out.json")]
}

#[test]
fn truncated_and_mismatched_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let [r, d, _] = raw_pair(dir.path(), SMALL_FRAME * 3, SMALL_FRAME * 2 + 100);
    let mut args = vec!["-r", r.as_str(), "-d", d.as_str()];
    args.extend_from_slice(&SMALL_GEOMETRY);
    let o = vmafx(&args);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("d.yuv") && stderr(&o).contains("frame 2"),
        "{}",
        stderr(&o)
    );
}

/// As the `vmaf` tool: a partial last frame is an error only where it
/// would be scored; past the other input's end (or `--frame_cnt`), the
/// frames both have are scored.
#[test]
fn a_partial_last_frame_past_the_frames_scored_is_no_error() {
    let dir = tempfile::tempdir().unwrap();
    let [r, d, out] = raw_pair(dir.path(), SMALL_FRAME * 2, SMALL_FRAME * 2 + 100);
    let (r, d, out) = (r.as_str(), d.as_str(), out.as_str());
    for (reference, distorted) in [(r, d), (d, r)] {
        let mut args = vec!["-r", reference, "-d", distorted, "--json", "-o", out];
        args.extend_from_slice(&SMALL_GEOMETRY);
        let o = vmafx(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("{d} has 2 whole frames and a partial one")),
            "{}",
            stderr(&o)
        );
        assert_eq!(common::Golden::load(Path::new(out)).frames.len(), 2);
    }
    // A longer reference: the partial frame would be scored, refused at
    // once; with --frame_cnt 2 it is not read.
    std::fs::write(r, vec![16u8; SMALL_FRAME * 3]).unwrap();
    let mut args = vec!["-r", r, "-d", d, "--json", "-o", out];
    args.extend_from_slice(&SMALL_GEOMETRY);
    let o = vmafx(&args);
    assert!(!o.status.success());
    let refusal = format!(
        "file size {} is not a whole number of",
        SMALL_FRAME * 2 + 100
    );
    assert!(stderr(&o).contains(&refusal), "{}", stderr(&o));
    args.extend_from_slice(&["--frame_cnt", "2"]);
    let o = vmafx(&args);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn inputs_of_different_lengths_score_the_frames_both_have() {
    // As the vmaf tool: a warning naming both lengths, the common frames
    // scored, exit 0.
    let dir = tempfile::tempdir().unwrap();
    let [r, d, out] = raw_pair(dir.path(), SMALL_FRAME * 3, SMALL_FRAME * 2);
    let (r, d, out) = (r.as_str(), d.as_str(), out.as_str());
    let mut args = vec!["-r", r, "-d", d, "--json", "-o", out];
    args.extend_from_slice(&SMALL_GEOMETRY);
    let o = vmafx(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "warning: distorted {d} has 2 frames, reference {r} has 3: scoring the 2 frames both have"
        )),
        "{}",
        stderr(&o)
    );
    assert_eq!(common::Golden::load(Path::new(out)).frames.len(), 2);

    // --frame_skip_ref alone: the reference runs out first.
    let (r, d) = sample_pair();
    let (r, d) = (r.to_str().unwrap(), d.to_str().unwrap());
    let o = vmafx(&[
        "-r",
        r,
        "-d",
        d,
        "-q",
        "--json",
        "-o",
        out,
        "--frame_skip_ref",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "reference {r} has 10 frames, distorted {d} has 10: scoring the 9 frames both have \
             after skipping 1 reference and 0 distorted frames"
        )),
        "{}",
        stderr(&o)
    );
    assert_eq!(common::Golden::load(Path::new(out)).frames.len(), 9);
}

/// The sample pair's paths.
fn sample_pair() -> (PathBuf, PathBuf) {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data");
    (
        data.join("ref_576x324.y4m"),
        data.join("dist_576x324_x264_crf30.y4m"),
    )
}

/// A y4m file split into its header line and its frames (each with its
/// FRAME line), as a writer feeds them.
fn y4m_parts(bytes: &[u8], frame_bytes: usize) -> (Vec<u8>, Vec<Vec<u8>>) {
    let header_end = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    let frames = bytes[header_end..]
        .chunks(b"FRAME\n".len() + frame_bytes)
        .map(|c| c.to_vec())
        .collect();
    (bytes[..header_end].to_vec(), frames)
}

const SAMPLE_FRAME: usize = 576 * 324 * 3 / 2;
const SAMPLE_GEOMETRY: [&str; 8] = ["-w", "576", "-h", "324", "-p", "420", "-b", "8"];

/// Runs vmafx with `stdin` fed by a thread, killed (and the test failed)
/// after `limit`: a blocked open or read must not hang the suite.
fn vmafx_within(args: &[&str], stdin: Option<Vec<u8>>, limit: std::time::Duration) -> Output {
    use std::io::{Read, Write};
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_vmafx"))
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run vmafx");
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // Errors are the reader's business (it may stop early).
        std::thread::spawn(move || pipe.write_all(&bytes));
    }
    let drain = |r: Option<Box<dyn Read + Send>>| {
        let mut r = r.unwrap();
        std::thread::spawn(move || {
            let mut v = Vec::new();
            r.read_to_end(&mut v).ok();
            v
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit {
            child.kill().ok();
            child.wait().ok();
            panic!("vmafx {args:?} still running after {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

const LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Scores `reference` against `distorted` (extra flags after), returns the
/// JSON without its fps line.
fn scores_json(
    dir: &Path,
    reference: &str,
    distorted: &str,
    extra: &[&str],
    stdin: Option<Vec<u8>>,
) -> String {
    let out = dir.join(format!("out{}.json", next_tag()));
    let mut args = vec![
        "-r",
        reference,
        "-d",
        distorted,
        "--json",
        "--precision",
        "max",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = vmafx_within(&args, stdin, LIMIT);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_file(&out).unwrap();
    without_fps(&text)
}

/// A number that differs between calls, for output names.
fn next_tag() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

#[test]
fn standard_input_scores_as_the_file() {
    let (r, d) = sample_pair();
    let (r, d) = (r.to_str().unwrap(), d.to_str().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let y4m_bytes = std::fs::read(r).unwrap();
    let from_files = scores_json(dir.path(), r, d, &[], None);
    for stdin_name in ["-", "/dev/stdin"] {
        let got = scores_json(dir.path(), stdin_name, d, &[], Some(y4m_bytes.clone()));
        assert_eq!(got, from_files, "y4m on {stdin_name}");
    }

    // Raw: the same frames without the y4m framing.
    let (_, frames) = y4m_parts(&y4m_bytes, SAMPLE_FRAME);
    let raw: Vec<u8> = frames.iter().flat_map(|f| f[6..].to_vec()).collect();
    let (_, dframes) = y4m_parts(&std::fs::read(d).unwrap(), SAMPLE_FRAME);
    let draw: Vec<u8> = dframes.iter().flat_map(|f| f[6..].to_vec()).collect();
    let (rf, df) = (dir.path().join("r.yuv"), dir.path().join("d.yuv"));
    std::fs::write(&rf, &raw).unwrap();
    std::fs::write(&df, &draw).unwrap();
    let (rf, df) = (rf.to_str().unwrap(), df.to_str().unwrap());
    let raw_files = scores_json(dir.path(), rf, df, &SAMPLE_GEOMETRY, None);
    assert_eq!(raw_files, from_files, "raw and y4m files");
    for stdin_name in ["-", "/dev/stdin"] {
        let got = scores_json(
            dir.path(),
            stdin_name,
            df,
            &SAMPLE_GEOMETRY,
            Some(raw.clone()),
        );
        assert_eq!(got, from_files, "raw on {stdin_name}");
    }

    // Only one input can be standard input.
    let o = vmafx(&["-r", "-", "-d", "-", "-q"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("standard input"), "{}", stderr(&o));
}

/// Two FIFOs fed by one writer that opens the reference's first, then the
/// distorted's, and writes them frame by frame in turn.
fn feed_fifos(paths: [PathBuf; 2], parts: [(Vec<u8>, Vec<Vec<u8>>); 2]) {
    use std::io::Write;
    std::thread::spawn(move || -> std::io::Result<()> {
        let mut r = std::fs::OpenOptions::new().write(true).open(&paths[0])?;
        let mut d = std::fs::OpenOptions::new().write(true).open(&paths[1])?;
        r.write_all(&parts[0].0)?;
        d.write_all(&parts[1].0)?;
        for (a, b) in parts[0].1.iter().zip(&parts[1].1) {
            r.write_all(a)?;
            d.write_all(b)?;
        }
        Ok(())
    });
}

fn mkfifo(path: &Path) {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU).unwrap();
}

#[test]
fn fifos_and_process_substitution_score_as_the_files() {
    let (r, d) = sample_pair();
    let (r, d) = (r.to_str().unwrap(), d.to_str().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let from_files = scores_json(dir.path(), r, d, &[], None);
    let y4m = [std::fs::read(r).unwrap(), std::fs::read(d).unwrap()];

    // y4m through FIFOs with any name.
    let fifos = [dir.path().join("r.fifo"), dir.path().join("d.fifo")];
    fifos.iter().for_each(|f| mkfifo(f));
    feed_fifos(
        fifos.clone(),
        [
            y4m_parts(&y4m[0], SAMPLE_FRAME),
            y4m_parts(&y4m[1], SAMPLE_FRAME),
        ],
    );
    let (fr, fd) = (fifos[0].to_str().unwrap(), fifos[1].to_str().unwrap());
    assert_eq!(
        scores_json(dir.path(), fr, fd, &[], None),
        from_files,
        "y4m FIFOs"
    );

    // Raw through FIFOs named like files.
    let fifos = [dir.path().join("f.yuv"), dir.path().join("g.yuv")];
    fifos.iter().for_each(|f| mkfifo(f));
    let raw = |bytes: &[u8]| {
        let (_, frames) = y4m_parts(bytes, SAMPLE_FRAME);
        (Vec::new(), frames.iter().map(|f| f[6..].to_vec()).collect())
    };
    feed_fifos(fifos.clone(), [raw(&y4m[0]), raw(&y4m[1])]);
    let (fr, fd) = (fifos[0].to_str().unwrap(), fifos[1].to_str().unwrap());
    let got = scores_json(dir.path(), fr, fd, &SAMPLE_GEOMETRY, None);
    assert_eq!(got, from_files, "raw FIFOs");

    // Process substitution (pipes named /dev/fd/N), when bash is here.
    if Command::new("bash").arg("-c").arg("true").status().is_err() {
        eprintln!("no bash: process substitution not tested");
        return;
    }
    let out = dir.path().join("subst.json");
    let o = Command::new("bash")
        .arg("-c")
        .arg(r#""$0" -r <(cat "$1") -d <(cat "$2") --json --precision max -q -o "$3""#)
        .args([env!("CARGO_BIN_EXE_vmafx"), r, d, out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let got = without_fps(&std::fs::read_to_string(&out).unwrap());
    assert_eq!(got, from_files, "process substitution");
}

#[test]
fn absurd_sizes_fail_cleanly() {
    // A y4m header on standard input (no file size to check against) and
    // raw geometry flags: a message and exit status 1, not an abort.
    let header = b"YUV4MPEG2 W99999999 H99999999 F30:1 C420jpeg\nFRAME\n".to_vec();
    let (_, d) = sample_pair();
    let o = vmafx_within(
        &["-r", "-", "-d", d.to_str().unwrap(), "-q"],
        Some(header),
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("16384x16384"), "{}", stderr(&o));

    let geo = [
        "-w", "99999999", "-h", "99999999", "-p", "420", "-b", "8", "-q",
    ];
    let mut args = vec!["-r", "/dev/stdin", "-d", d.to_str().unwrap()];
    args.extend_from_slice(&geo);
    let o = vmafx_within(&args, Some(vec![0u8; 64]), LIMIT);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("99999999x99999999"), "{}", stderr(&o));
}

#[test]
fn too_many_threads_name_the_maximum() {
    let (r, d) = sample_pair();
    for n in ["100000", "18446744073709551615"] {
        let args = [
            "-r",
            r.to_str().unwrap(),
            "-d",
            d.to_str().unwrap(),
            "-q",
            "--threads",
            n,
        ];
        let o = vmafx_within(&args, None, LIMIT);
        assert_eq!(o.status.code(), Some(1), "--threads {n}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("threads {n}: at most 1024")),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn models_with_one_name_are_refused() {
    let (r, d) = sample_pair();
    let (r, d) = (r.to_str().unwrap(), d.to_str().unwrap());
    for (a, b, name) in [
        ("version=vmaf_v0.6.1", "version=vmaf_v0.6.1neg", "vmaf"),
        (
            "version=vmaf_v0.6.1:name=x",
            "version=vmaf_v0.6.1neg:name=x",
            "x",
        ),
        ("version=vmaf_v0.6.1", "version=vmaf_v0.6.1", "vmaf"),
        // A bootstrap model's member outputs collide too.
        (
            "version=vmaf_v0.6.1:name=b_0001",
            "version=vmaf_b_v0.6.3:name=b",
            "b_0001",
        ),
    ] {
        let args = ["-r", r, "-d", d, "-q", "-m", a, "-m", b, "--frame_cnt", "1"];
        let o = vmafx_within(&args, None, LIMIT);
        assert_eq!(o.status.code(), Some(1), "{a} {b}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains(&format!("both report '{name}'")), "{a} {b}: {e}");
        assert!(e.contains("name="), "{e}");
    }
}

#[test]
fn unwritable_output_fails_before_reading() {
    // The reference is a FIFO nobody writes: opening or reading it would
    // wait, so only a check made before any input is touched can finish.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("never.y4m");
    mkfifo(&fifo);
    let (_, d) = sample_pair();
    let args = [
        "-r",
        fifo.to_str().unwrap(),
        "-d",
        d.to_str().unwrap(),
        "-q",
        "--json",
        "-o",
        "/nonexistent/dir/x.json",
    ];
    let o = vmafx_within(&args, None, std::time::Duration::from_secs(20));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("/nonexistent/dir/x.json") && stderr(&o).contains("No such file"),
        "{}",
        stderr(&o)
    );

    // A run that fails later leaves no empty result file behind, and an
    // existing one as it was.
    let (r, d) = sample_pair();
    let (r, d) = (r.to_str().unwrap(), d.to_str().unwrap());
    let fresh = dir.path().join("fresh.json");
    let old = dir.path().join("old.json");
    std::fs::write(&old, "previous").unwrap();
    for out in [&fresh, &old] {
        let o = vmafx(&[
            "-r",
            r,
            "-d",
            d,
            "-q",
            "-m",
            "version=vmaf_v9",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(stderr(&o).contains("vmaf_v9"), "{}", stderr(&o));
    }
    assert!(!fresh.exists());
    assert_eq!(std::fs::read_to_string(&old).unwrap(), "previous");
}

#[test]
fn fps_counts_extraction_cpu_time_only() {
    // As the vmaf tool: frames over the process CPU time from the first
    // feature value to the last. A reference that arrives slowly through a
    // FIFO (0.4 s before each frame) makes the run take over 2 s, none of
    // it CPU time, so the fps stays that of the extraction alone.
    let (r, d) = sample_pair();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("slow.y4m");
    mkfifo(&fifo);
    let (header, frames) = y4m_parts(&std::fs::read(&r).unwrap(), SAMPLE_FRAME);
    let writer_path = fifo.clone();
    std::thread::spawn(move || -> std::io::Result<()> {
        use std::io::Write;
        let mut w = std::fs::OpenOptions::new().write(true).open(&writer_path)?;
        w.write_all(&header)?;
        for f in &frames[..6] {
            std::thread::sleep(std::time::Duration::from_millis(400));
            w.write_all(f)?;
        }
        Ok(())
    });
    let out = dir.path().join("out.json");
    let args = [
        "-r",
        fifo.to_str().unwrap(),
        "-d",
        d.to_str().unwrap(),
        "--frame_cnt",
        "6",
        "--threads",
        "1",
        "-q",
        "--json",
        "-o",
        out.to_str().unwrap(),
    ];
    let start = std::time::Instant::now();
    let o = vmafx_within(&args, None, LIMIT);
    let wall = start.elapsed().as_secs_f64();
    assert!(o.status.success(), "{}", stderr(&o));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let fps = json["fps"].as_f64().unwrap();
    assert_eq!(json["frames"].as_array().unwrap().len(), 6);
    // Wall-clock fps would be at most 6 / 2.4 s = 2.5; six 576x324 frames
    // take well under 0.6 s of CPU.
    assert!(wall > 2.4, "{wall}");
    assert!(
        fps > 10.0,
        "fps {fps} counts waiting (run took {wall:.2} s)"
    );
}

#[test]
fn different_colour_ranges_are_warned_about() {
    let (r, d) = sample_pair();
    let dir = tempfile::tempdir().unwrap();
    let with_range = |src: &Path, name: &str, range: &str| {
        let bytes = std::fs::read(src).unwrap();
        let nl = bytes.iter().position(|&b| b == b'\n').unwrap();
        let mut out = bytes[..nl].to_vec();
        out.extend_from_slice(format!(" XCOLORRANGE={range}").as_bytes());
        out.extend_from_slice(&bytes[nl..]);
        let p = dir.path().join(name);
        std::fs::write(&p, out).unwrap();
        p
    };
    let rf = with_range(&r, "r.y4m", "FULL");
    let dl = with_range(&d, "d.y4m", "LIMITED");
    let df = with_range(&d, "d_full.y4m", "FULL");
    let run = |d: &Path| {
        vmafx(&[
            "-r",
            rf.to_str().unwrap(),
            "-d",
            d.to_str().unwrap(),
            "-q",
            "--frame_cnt",
            "1",
        ])
    };
    let o = run(&dl);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("declares colour range FULL, distorted")
            && stderr(&o).contains("d.y4m LIMITED"),
        "{}",
        stderr(&o)
    );
    let o = run(&df);
    assert!(
        o.status.success() && stderr(&o).is_empty(),
        "{}",
        stderr(&o)
    );
}

/// The seed's extra extractors by their command-line names: each value
/// equals its golden (`ssim` and `motion_v2` bit for bit, as
/// `integer_ms_ssim`).
#[test]
fn extra_extractors_by_name_write_golden_values() {
    let pair = &common::PAIRS[7];
    let dir = tempfile::tempdir().unwrap();
    let (r, d) = unpack(pair, dir.path());
    let run = |features: &[&str], name: &str| -> serde_json::Value {
        let out = dir.path().join(name);
        let mut args = vec![
            "-r",
            r.to_str().unwrap(),
            "-d",
            d.to_str().unwrap(),
            "-w",
            "321",
            "-h",
            "179",
            "-p",
            "420",
            "-b",
            "8",
            "--no_prediction",
            "--json",
            "--precision",
            "max",
            "-q",
            "-o",
            out.to_str().unwrap(),
        ];
        for f in features {
            args.extend(["--feature", f]);
        }
        let o = vmafx(&args);
        assert!(o.status.success(), "{features:?}: {}", stderr(&o));
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
    };
    let check = |ours: &serde_json::Value, golden_run: &str, feature: &str| {
        let golden = pair.golden(golden_run);
        let frames = ours["frames"].as_array().unwrap();
        assert_eq!(frames.len(), golden.frames.len());
        for (i, f) in frames.iter().enumerate() {
            let v = f["metrics"][feature].as_f64().unwrap();
            assert_eq!(v, golden.value(i, feature).unwrap(), "frame {i} {feature}");
        }
    };
    let ours = run(
        &[
            "integer_ssim",
            "motion_v2",
            "integer_ms_ssim=enable_lcs=true",
        ],
        "a.json",
    );
    check(&ours, "integer_ssim", "ssim");
    check(&ours, "motion_v2", "VMAF_integer_feature_motion3_v2_score");
    check(&ours, "integer_ms_ssim", "float_ms_ssim_s_scale2");
    let ours = run(&["ssim=enable_db=true:clip_db=true"], "b.json");
    check(&ours, "integer_ssim.db", "ssim");
    // Unknown names list the new ones.
    let (r, d) = (r.to_str().unwrap(), d.to_str().unwrap());
    let geometry = ["-w", "321", "-h", "179", "-p", "420", "-b", "8", "-q"];
    let mut args = vec!["-r", r, "-d", d, "--feature", "integer_ssimm"];
    args.extend(geometry);
    let o = vmafx(&args);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("integer_ssim"), "{}", stderr(&o));
}

/// Every instruction-set level gives the same bits: `VMAFX_SIMD` and
/// `--cpumask` cap every extractor at once (crate::cpu), and each capped
/// run writes the default run's JSON, on a feature set that touches every
/// SIMD path (integer and float ADM/VIF, motion, psnr, ciede, psnr_hvs,
/// ssim, ms_ssim, ssimulacra2).
#[test]
fn every_simd_level_writes_the_same_file() {
    let (r, d) = sample_pair();
    let dir = tempfile::tempdir().unwrap();
    let run = |tag: &str, env: Option<&str>, extra: &[&str]| {
        let out = dir.path().join(format!("{tag}.json"));
        let mut args = vec![
            "-r",
            r.to_str().unwrap(),
            "-d",
            d.to_str().unwrap(),
            "--json",
            "--precision",
            "max",
            "-q",
            "-o",
            out.to_str().unwrap(),
        ];
        for f in [
            "float_vif",
            "float_adm",
            "float_ssim",
            "float_ms_ssim",
            "psnr",
            "ciede",
            "psnr_hvs",
            "ssimulacra2",
            "integer_ssim",
        ] {
            args.extend(["--feature", f]);
        }
        args.extend(extra);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_vmafx"));
        cmd.args(&args).env_remove("VMAFX_SIMD");
        if let Some(level) = env {
            cmd.env("VMAFX_SIMD", level);
        }
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{tag}: {}", stderr(&o));
        without_fps(&std::fs::read_to_string(&out).unwrap())
    };
    let widest = run("default", None, &[]);
    assert!(widest.contains("\"ssimulacra2\""), "{widest}");
    for (tag, env, extra) in [
        ("none", Some("none"), &[][..]),
        ("avx2", Some("avx2"), &[][..]),
        ("cpumask", None, &["--cpumask", "63"][..]),
    ] {
        assert_eq!(
            run(tag, env, extra),
            widest,
            "{tag}: differs from the widest level"
        );
    }
}

/// A distorted file truncated while its frames are mapped (the reference,
/// on standard input, holds the run after its first frame, the distorted
/// reader's next frames mapped ahead): the process dies of SIGBUS, as a
/// mapped read of lost pages must, but says why and names `--no_mmap`
/// first.
#[cfg(target_os = "linux")]
#[test]
fn an_input_truncated_while_mapped_is_explained() {
    use std::io::Write;
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let (r, d) = sample_pair();
    let y4m = std::fs::read(&r).unwrap();
    let (_, frames) = y4m_parts(&y4m, SAMPLE_FRAME);
    let raw: Vec<u8> = frames.iter().flat_map(|f| f[6..].to_vec()).collect();
    let dist = std::fs::read(&d).unwrap();
    let (_, dframes) = y4m_parts(&dist, SAMPLE_FRAME);
    let dir = tempfile::tempdir().unwrap();
    let df = dir.path().join("d.yuv");
    std::fs::write(
        &df,
        dframes
            .iter()
            .flat_map(|f| f[6..].to_vec())
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let mut args = vec![
        "-r",
        "-",
        "-d",
        df.to_str().unwrap(),
        "-q",
        "--threads",
        "1",
    ];
    args.extend(SAMPLE_GEOMETRY);
    let mut child = Command::new(env!("CARGO_BIN_EXE_vmafx"))
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let frame = SAMPLE_FRAME;
    stdin.write_all(&raw[..frame]).unwrap();
    // Wait until the distorted file's frames are mapped, then for the
    // reader to map all it reads ahead (it blocks after that).
    let maps = format!("/proc/{}/maps", child.id());
    let start = std::time::Instant::now();
    while !std::fs::read_to_string(&maps)
        .unwrap_or_default()
        .contains(df.to_str().unwrap())
    {
        assert!(start.elapsed().as_secs() < 30, "the frame was never mapped");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_secs(2));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&df)
        .unwrap()
        .set_len(0)
        .unwrap();
    // The run may die before it reads all of this.
    let _ = stdin.write_all(&raw[frame..]);
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.signal(),
        Some(nix::libc::SIGBUS),
        "{:?}",
        out.status
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("truncated while its frames were mapped") && err.contains("--no_mmap"),
        "{err}"
    );
}
