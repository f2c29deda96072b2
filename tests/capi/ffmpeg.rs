//! FFmpeg 7.1, unmodified, on vmafx: its `libvmaf` filter linked against
//! the C library (`capi/build-ffmpeg.sh` builds it; `$VMAFX_FFMPEG` names
//! the binary, else these tests skip, and fail where
//! `VMAFX_REQUIRE_FFMPEG=1`). Every golden pair scored through FFmpeg gives
//! libvmaf 3.2's per-frame and pooled scores bit for bit (lossless logs via
//! `VMAFX_OUTPUT_PRECISION=max`); several models, features with options,
//! threads and subsampling too; every log format is the command line's.

use crate::common;

use common::{float_adm_tol, is_float_adm_output, without_fps, Golden, Pair, PAIRS};
use std::path::{Path, PathBuf};
use std::process::Command;
use vmafx::ChromaSubsampling;

fn ffmpeg() -> Option<PathBuf> {
    common::path_from_env(
        "VMAFX_FFMPEG",
        "VMAFX_REQUIRE_FFMPEG",
        "capi/build-ffmpeg.sh builds FFmpeg against vmafx",
    )
}

/// FFmpeg's name of a pair's pixel format.
fn pix_fmt(pair: &Pair) -> String {
    let base = match pair.subsampling {
        ChromaSubsampling::Yuv420 => "yuv420p",
        ChromaSubsampling::Yuv422 => "yuv422p",
        ChromaSubsampling::Yuv444 => "yuv444p",
        ChromaSubsampling::Yuv400 => "gray",
    };
    match pair.bit_depth {
        8 => base.to_string(),
        b => format!("{base}{b}le"),
    }
}

/// The pair's two raw files, unpacked into `dir`.
fn unpack(pair: &Pair, dir: &Path) -> (PathBuf, PathBuf) {
    let r = dir.join("ref.yuv");
    let d = dir.join("dist.yuv");
    std::fs::write(&r, common::decompress(&pair.reference_path())).unwrap();
    std::fs::write(&d, common::decompress(&pair.distorted_path())).unwrap();
    (r, d)
}

/// Runs FFmpeg's libvmaf filter on the pair with `options` (the filter's
/// own syntax) and returns what it printed on stderr.
fn score(ffmpeg: &Path, pair: &Pair, files: &(PathBuf, PathBuf), options: &str) -> String {
    let size = format!("{}x{}", pair.width, pair.height);
    let fmt = pix_fmt(pair);
    let input = |path: &Path| -> Vec<String> {
        ["-f", "rawvideo", "-pix_fmt", &fmt, "-s", &size, "-i"]
            .iter()
            .map(|s| s.to_string())
            .chain([path.display().to_string()])
            .collect()
    };
    // The filter's first input is the distorted video, the second the reference.
    let out = Command::new(ffmpeg)
        .args(["-hide_banner", "-nostdin", "-loglevel", "info"])
        .args(input(&files.1))
        .args(input(&files.0))
        .args([
            "-lavfi",
            &format!("[0:v][1:v]libvmaf={options}"),
            "-f",
            "null",
            "-",
        ])
        .env("VMAFX_OUTPUT_PRECISION", "max")
        .output()
        .expect("ffmpeg runs");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        out.status.success(),
        "ffmpeg failed on {}:\n{stderr}",
        pair.name()
    );
    stderr
}

/// Every golden frame's and pooled value equals the log's (float ADM's
/// outputs within its bound on a CPU of another vendor than the goldens').
fn assert_matches_golden(log: &Path, golden: &Golden, what: &str) -> usize {
    let ours = Golden::load(log);
    assert_eq!(ours.frames.len(), golden.frames.len(), "{what}: frames");
    let tol = |name: &str| {
        if is_float_adm_output(name) {
            float_adm_tol(0.0)
        } else {
            0.0
        }
    };
    let mut compared = 0;
    for ((n, expected), (m, got)) in golden.frames.iter().zip(&ours.frames) {
        assert_eq!(n, m, "{what}: frame numbers");
        for (name, &e) in expected {
            let g = *got
                .get(name)
                .unwrap_or_else(|| panic!("{what}: frame {n} lacks {name}"));
            common::assert_close(&format!("{what}: frame {n} {name}"), g, e, tol(name));
            compared += 1;
        }
    }
    for (name, methods) in &golden.pooled {
        for (method, &e) in methods {
            let g = ours.pooled[name][method];
            common::assert_close(&format!("{what}: pooled {name} {method}"), g, e, tol(name));
        }
    }
    compared
}

#[test]
fn every_golden_pair_scores_libvmafs_vmaf_through_ffmpeg() {
    let Some(ffmpeg) = ffmpeg() else { return };
    for pair in PAIRS {
        let dir = tempfile::tempdir().unwrap();
        let files = unpack(pair, dir.path());
        let log = dir.path().join("vmaf.json");
        let stderr = score(
            &ffmpeg,
            pair,
            &files,
            &format!("log_fmt=json:log_path={}", log.display()),
        );
        let golden = pair.golden("vmaf_v0.6.1");
        let n = assert_matches_golden(&log, &golden, &pair.name());
        // The filter prints the pooled mean as "%f".
        let mean = golden.pooled["vmaf"]["mean"];
        assert!(
            stderr.contains(&format!("VMAF score: {mean:.6}")),
            "{}: FFmpeg printed no 'VMAF score: {mean:.6}':\n{stderr}",
            pair.name()
        );
        println!(
            "{}: {n} values identical, VMAF score {mean:.6}",
            pair.name()
        );
    }
}

fn pair(folder: &str, distorted: &str) -> &'static Pair {
    PAIRS
        .iter()
        .find(|p| p.folder == folder && p.distorted == distorted)
        .unwrap()
}

/// The golden run's `--feature` flags in the filter's syntax
/// (`name=psnr\:enable_mse=true|name=ciede`), quoted for the filter graph.
fn feature_option(run: &str, pair: &Pair) -> String {
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(common::golden_dir().join("manifest.json")).unwrap(),
    )
    .unwrap();
    let goldens = manifest["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["folder"] == pair.folder)
        .and_then(|v| {
            v["distorted"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["name"] == pair.distorted)
        })
        .map(|d| d["goldens"].as_array().unwrap().clone())
        .unwrap();
    let flags: Vec<&str> = goldens.iter().find(|g| g["run"] == run).unwrap()["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    let features: Vec<String> = flags
        .windows(2)
        .filter(|w| w[0] == "--feature")
        .map(|w| {
            let mut parts = w[1].splitn(2, '=');
            let name = parts.next().unwrap();
            match parts.next() {
                Some(opts) => format!("name={name}\\:{}", opts.replace(':', "\\:")),
                None => format!("name={name}"),
            }
        })
        .collect();
    format!("'{}'", features.join("|"))
}

/// The outputs only `debug=true` adds to adm, vif and motion.
fn dropped_behind_the_model(name: &str) -> bool {
    ["integer_adm", "integer_vif", "integer_motion"].contains(&name)
        || [
            "integer_adm_num",
            "integer_adm_den",
            "integer_vif_num",
            "integer_vif_den",
        ]
        .iter()
        .any(|p| name.starts_with(p))
}

#[test]
fn features_with_options_and_several_models_through_ffmpeg() {
    let Some(ffmpeg) = ffmpeg() else { return };
    // 8-bit 4:2:0, and 10-bit 4:2:2 (chroma features read both).
    for pair in [
        pair("a_576x324_420p8_pan", "x264_crf30"),
        pair("d_352x288_422p10_pan", "x264_422p10_crf30"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let files = unpack(pair, dir.path());
        let log = dir.path().join("features.json");
        score(
            &ffmpeg,
            pair,
            &files,
            &format!(
                "log_fmt=json:log_path={}:feature={}",
                log.display(),
                feature_option("features", pair)
            ),
        );
        // The filter registers its default model (vmaf_v0.6.1) before the
        // features, so libvmaf keeps the model's adm, vif and motion and
        // drops the `debug=true` requests of the same feature names: their
        // debug outputs are absent, the rest are the golden run's.
        let golden = pair.golden("features");
        let ours = Golden::load(&log);
        for name in golden.frames[0]
            .1
            .keys()
            .filter(|n| dropped_behind_the_model(n))
        {
            assert!(
                !ours.frames[0].1.contains_key(name),
                "{}: {name}",
                pair.name()
            );
        }
        let mut expected = golden.clone();
        for (_, metrics) in &mut expected.frames {
            metrics.retain(|name, _| !dropped_behind_the_model(name));
        }
        expected
            .pooled
            .retain(|name, _| !dropped_behind_the_model(name));
        let n = assert_matches_golden(&log, &expected, &pair.name());
        println!("{} features: {n} values identical", pair.name());

        // Models with names, as the models_v0.6 golden ran them (FFmpeg
        // loads models with vmaf_model_load: no bootstrap collections).
        let models = ["vmaf_v0.6.1neg", "vmaf_4k_v0.6.1neg"];
        let option = models
            .iter()
            .map(|m| format!("version={m}\\:name={m}"))
            .collect::<Vec<_>>()
            .join("|");
        let log = dir.path().join("models.json");
        score(
            &ffmpeg,
            pair,
            &files,
            &format!("log_fmt=json:log_path={}:model='{option}'", log.display()),
        );
        let ours = Golden::load(&log);
        let golden = pair.golden("models_v0.6");
        for (i, (n, values)) in golden.frames.iter().enumerate() {
            for m in models {
                assert_eq!(
                    ours.frames[i].1[m],
                    values[m],
                    "{} frame {n} {m}",
                    pair.name()
                );
            }
        }
        println!("{} models {models:?}: identical", pair.name());
    }
}

#[test]
fn threads_subsampling_and_every_log_format_as_the_command_line() {
    let Some(ffmpeg) = ffmpeg() else { return };
    let pair = pair("a_576x324_420p8_pan", "x264_crf30"); // has a subsample-3 golden
    let dir = tempfile::tempdir().unwrap();
    let files = unpack(pair, dir.path());

    let log = dir.path().join("sub3.json");
    score(
        &ffmpeg,
        pair,
        &files,
        &format!(
            "log_fmt=json:log_path={}:n_subsample=3:n_threads=2",
            log.display()
        ),
    );
    let n = assert_matches_golden(&log, &pair.golden("vmaf_v0.6.1.subsample3"), "subsample 3");
    println!("n_subsample=3, n_threads=2: {n} values identical");

    for format in ["xml", "csv", "sub", "json"] {
        let log = dir.path().join(format!("ffmpeg.{format}"));
        let stderr = score(
            &ffmpeg,
            pair,
            &files,
            &format!(
                "log_fmt={format}:log_path={}:pool=harmonic_mean:feature=name=psnr",
                log.display()
            ),
        );
        let expected = dir.path().join(format!("cli.{format}"));
        let status = Command::new(env!("CARGO_BIN_EXE_vmafx"))
            .arg("-r")
            .arg(&files.0)
            .arg("-d")
            .arg(&files.1)
            .args(["-w", "576", "-h", "324", "-p", "420", "-b", "8"])
            .args(["--feature", "psnr", "--precision", "max", "-q"])
            .arg(format!("--{format}"))
            .arg("-o")
            .arg(&expected)
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(without_fps(&log), without_fps(&expected), "{format} log");
        if format == "json" {
            let hmean = Golden::load(&log).pooled["vmaf"]["harmonic_mean"];
            assert!(
                stderr.contains(&format!("VMAF score: {hmean:.6}")),
                "{stderr}"
            );
        }
        println!("log_fmt={format}: the command line's bytes");
    }
}
