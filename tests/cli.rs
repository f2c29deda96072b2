//! The `vmafx` binary: golden command lines give the golden files, bad
//! input gives a clear message and a non-zero exit.

mod common;

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

#[test]
fn golden_command_line_writes_the_golden_file() {
    let pair = &common::PAIRS[1];
    let dir = tempfile::tempdir().unwrap();
    let (r, d) = unpack(pair, dir.path());
    let out = dir.path().join("out.json");
    let o = vmafx(&[
        "-r",
        r.to_str().unwrap(),
        "-d",
        d.to_str().unwrap(),
        "-w",
        "576",
        "-h",
        "324",
        "-p",
        "420",
        "-b",
        "8",
        "--threads",
        "1",
        "--model",
        "version=vmaf_v0.6.1",
        "--json",
        "--precision",
        "max",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ours = std::fs::read_to_string(&out).unwrap();
    let golden = std::fs::read_to_string(pair.golden_path("vmaf_v0.6.1")).unwrap();
    assert_eq!(without_fps(&ours), without_fps(&golden));
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

#[test]
fn truncated_and_mismatched_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path().join("r.yuv");
    let d = dir.path().join("d.yuv");
    let frame = 64 * 48 * 3 / 2;
    std::fs::write(&r, vec![16u8; frame * 3]).unwrap();
    std::fs::write(&d, vec![16u8; frame * 2 + 100]).unwrap();
    let geo = ["-w", "64", "-h", "48", "-p", "420", "-b", "8", "-q"];
    let mut args = vec!["-r", r.to_str().unwrap(), "-d", d.to_str().unwrap()];
    args.extend_from_slice(&geo);
    let o = vmafx(&args);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("d.yuv") && stderr(&o).contains("frame 2"),
        "{}",
        stderr(&o)
    );

    std::fs::write(&d, vec![16u8; frame * 2]).unwrap();
    let o = vmafx(&args);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("ended after 2 frames"),
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
