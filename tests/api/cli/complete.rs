//! The `vmaf` tool's flags and extractor options that vmafx took on last:
//! `--sub`, `--gpumask`, the CTC presets, C-style numbers, the last format
//! flag winning, `-v`, backend-suffixed feature names, and libvmaf 3.2's
//! `vif_skip_scale0`, `vif_prescale_method` and float_ssim's `scale`.

use super::{sample_pair, scores_json, stderr, unpack, vmafx, without_fps};
use std::path::Path;

/// Runs the sample pair with `extra` flags; `-o` goes to `out` in `dir`.
/// Returns the file's bytes.
fn run_to(dir: &Path, out: &str, extra: &[&str]) -> Vec<u8> {
    let (r, d) = sample_pair();
    let path = dir.join(out);
    let mut args = vec!["-r", r.to_str().unwrap(), "-d", d.to_str().unwrap(), "-q"];
    args.extend_from_slice(extra);
    args.extend(["-o", path.to_str().unwrap()]);
    let o = vmafx(&args);
    assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
    std::fs::read(&path).unwrap()
}

/// Per-frame metrics of a `--json --precision max` run of the sample pair.
fn frames(extra: &[&str]) -> Vec<serde_json::Map<String, serde_json::Value>> {
    let dir = tempfile::tempdir().unwrap();
    let (r, d) = sample_pair();
    let text = scores_json(
        dir.path(),
        r.to_str().unwrap(),
        d.to_str().unwrap(),
        extra,
        None,
    );
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["metrics"].as_object().unwrap().clone())
        .collect()
}

fn value(frame: &serde_json::Map<String, serde_json::Value>, name: &str) -> f64 {
    frame[name]
        .as_f64()
        .unwrap_or_else(|| panic!("{name} missing"))
}

#[test]
fn sub_writes_microdvd_lines_and_the_last_format_flag_wins() {
    let dir = tempfile::tempdir().unwrap();
    let psnr = ["-n", "--feature", "psnr", "--frame_cnt", "2"];
    let sub = run_to(
        dir.path(),
        "a.sub",
        &[&psnr[..], &["--json", "--sub"]].concat(),
    );
    assert_eq!(
        String::from_utf8(sub).unwrap(),
        "{0}{1}frame: 0|psnr_y: 33.686244|psnr_cb: 39.896354|psnr_cr: 38.572511|\n\
         {1}{2}frame: 1|psnr_y: 32.306052|psnr_cb: 39.726939|psnr_cr: 38.205841|\n"
    );
    // As in `vmaf`: `--json --csv` writes CSV, `--csv --json` JSON.
    let csv = run_to(dir.path(), "b.csv", &[&psnr[..], &["--csv"]].concat());
    let json_csv = run_to(
        dir.path(),
        "c.csv",
        &[&psnr[..], &["--json", "--csv"]].concat(),
    );
    assert_eq!(json_csv, csv);
    assert!(csv.starts_with(b"Frame,psnr_y,psnr_cb,psnr_cr,\n"));
    let csv_json = run_to(
        dir.path(),
        "d.json",
        &[&psnr[..], &["--csv", "--json"]].concat(),
    );
    assert!(csv_json.starts_with(b"{\n  \"version\": \"3.2.0\""));
    let xml = run_to(
        dir.path(),
        "e.xml",
        &[&psnr[..], &["--sub", "--xml"]].concat(),
    );
    assert!(xml.starts_with(b"<VMAF version=\"3.2.0\">\n"));
}

#[test]
fn numbers_may_be_hexadecimal_or_octal_as_in_vmaf() {
    let pair = &crate::common::PAIRS[0];
    let dir = tempfile::tempdir().unwrap();
    let (r, d) = unpack(pair, dir.path());
    let (r, d) = (r.to_str().unwrap(), d.to_str().unwrap());
    let decimal = [
        "-w",
        "576",
        "-h",
        "324",
        "-p",
        "420",
        "-b",
        "8",
        "--frame_cnt",
        "3",
    ];
    let c_style = [
        "-w",
        "0x240",
        "-h",
        "0504",
        "-p",
        "420",
        "-b",
        "0X8",
        "--frame_cnt",
        "0x3",
    ];
    let a = scores_json(dir.path(), r, d, &decimal, None);
    let b = scores_json(dir.path(), r, d, &c_style, None);
    assert_eq!(a, b);
    assert!(a.contains("\"frameNum\": 2,") && !a.contains("\"frameNum\": 3,"));
    let o = vmafx(&[
        "-r", r, "-d", d, "-w", "0x24g", "-h", "324", "-p", "420", "-b", "8",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("invalid value '0x24g' for '--width <WIDTH>'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn version_prints_libvmafs_on_stderr() {
    for flag in ["-v", "--version"] {
        let o = vmafx(&[flag]);
        assert!(o.status.success());
        assert_eq!(o.stderr, b"3.2.0\n");
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn gpumask_keeps_the_run_off_the_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let (r, d) = sample_pair();
    let (r, d) = (r.to_str().unwrap(), d.to_str().unwrap());
    for backend in ["cuda", "hip"] {
        let o = vmafx(&["-r", r, "-d", d, "--backend", backend, "--gpumask", "0x1"]);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(
            stderr(&o),
            format!(
                "vmafx: invalid argument: --gpumask 0x1 turns the GPU off, but --backend \
                 {backend} asks for it (use --gpumask 0, or --backend cpu or auto)\n"
            )
        );
    }
    let args = [
        "-n",
        "--feature",
        "psnr",
        "--frame_cnt",
        "2",
        "--json",
        "--precision",
        "max",
    ];
    let cpu = run_to(dir.path(), "cpu.json", &args);
    let auto = run_to(
        dir.path(),
        "auto.json",
        &[&args[..], &["--backend", "auto", "--gpumask", "4"]].concat(),
    );
    let text = |b: &[u8]| without_fps(std::str::from_utf8(b).unwrap());
    assert_eq!(text(&auto), text(&cpu));
}

#[test]
fn backend_suffixed_features_need_their_backend() {
    let dir = tempfile::tempdir().unwrap();
    let (r, d) = sample_pair();
    let out = dir.path().join("never.json");
    for (name, flag) in [
        ("float_psnr_cuda", "cuda"),
        ("psnr_hip", "hip"),
        ("vif_cuda", "cuda"),
    ] {
        let o = vmafx(&[
            "-r",
            r.to_str().unwrap(),
            "-d",
            d.to_str().unwrap(),
            "--feature",
            name,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(
            stderr(&o),
            format!(
                "vmafx: invalid argument: feature '{name}' needs --backend {flag} \
                 (this run scores on the CPU)\n"
            )
        );
        assert!(!out.exists());
    }
}

/// A preset writes what its models and features, given by hand, write.
#[test]
fn ctc_presets_add_libvmafs_models_and_features() {
    let common = ["--frame_cnt", "2"];
    let by_hand = |models: &[&str], features: &[&str]| {
        let mut args: Vec<&str> = common.to_vec();
        for m in models {
            args.extend(["--model", m]);
        }
        for f in features {
            args.extend(["--feature", f]);
        }
        frames(&args)
    };
    let aom_v1 = [
        "psnr=reduced_hbd_peak=true:enable_apsnr=true:min_sse=0.5",
        "ciede",
        "float_ssim=enable_db=true:clip_db=true",
        "float_ms_ssim=enable_db=true:clip_db=true",
        "psnr_hvs",
    ];
    let aom_models = [
        "version=vmaf_v0.6.1:name=vmaf",
        "version=vmaf_v0.6.1neg:name=vmaf_neg",
    ];
    let preset = frames(&[&common[..], &["--aom_ctc", "v1.0"]].concat());
    assert_eq!(preset, by_hand(&aom_models, &aom_v1));
    for name in [
        "vmaf",
        "vmaf_neg",
        "psnr_y",
        "ciede2000",
        "float_ssim",
        "psnr_hvs",
    ] {
        assert!(preset[1].contains_key(name), "{name}");
    }
    let preset = frames(&[&common[..], &["--aom_ctc", "v7.0"]].concat());
    let mut v7: Vec<&str> = aom_v1.to_vec();
    v7[2] = "float_ssim=scale=1:enable_db=true:clip_db=true";
    v7.push("cambi");
    assert_eq!(preset, by_hand(&aom_models, &v7));
    let preset = frames(&[&common[..], &["--nflx_ctc", "v1.0"]].concat());
    let nflx = by_hand(
        &[
            "version=vmaf_4k_v0.6.1:name=vmaf",
            "version=vmaf_4k_v0.6.1neg:name=vmaf_neg",
        ],
        &[
            "psnr=enable_chroma=true:enable_apsnr=true",
            "float_ssim=enable_db=true:clip_db=true",
            "cambi",
        ],
    );
    assert_eq!(preset, nflx);

    let (r, d) = sample_pair();
    let o = vmafx(&[
        "-r",
        r.to_str().unwrap(),
        "-d",
        d.to_str().unwrap(),
        "--aom_ctc",
        "v8.0",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(
        "--aom_ctc: unknown version 'v8.0' (known: v1.0, v2.0, v3.0, v4.0, v5.0, v6.0, v7.0)"
    ));
}

/// libvmaf skips scale 0 and writes 0 for it (debug sums 0 and -1); the
/// other scales are those of a full run, bit for bit, and the totals
/// leave scale 0 out.
#[test]
fn vif_skip_scale0_writes_libvmafs_values() {
    for (extractor, prefix) in [("vif", "integer_vif"), ("float_vif", "vif")] {
        let full = frames(&[
            "-n",
            "--frame_cnt",
            "2",
            "--feature",
            &format!("{extractor}=debug=true"),
        ]);
        let skip = frames(&[
            "-n",
            "--frame_cnt",
            "2",
            "--feature",
            &format!("{extractor}=debug=true:vif_skip_scale0=true"),
        ]);
        for (f, s) in full.iter().zip(&skip) {
            let at = |m: &serde_json::Map<_, _>, n: &str, suffix: &str| {
                value(m, &format!("{prefix}{n}{suffix}"))
            };
            assert_eq!(at(s, "_scale0", "_ssclz"), 0.0);
            assert_eq!(at(s, "_num_scale0", "_ssclz"), 0.0);
            assert_eq!(at(s, "_den_scale0", "_ssclz"), -1.0);
            let (mut num, mut den) = (0.0, 0.0);
            for k in 1..4 {
                for n in [
                    format!("_scale{k}"),
                    format!("_num_scale{k}"),
                    format!("_den_scale{k}"),
                ] {
                    assert_eq!(at(s, &n, "_ssclz"), at(f, &n, ""), "{extractor} {n}");
                }
                num += at(f, &format!("_num_scale{k}"), "");
                den += at(f, &format!("_den_scale{k}"), "");
            }
            assert_eq!(at(s, "_num", "_ssclz"), num);
            assert_eq!(at(s, "_den", "_ssclz"), den);
            assert_eq!(at(s, "", "_ssclz"), num / den);
        }
    }
}

#[test]
fn float_vif_prescale_method_resamples_and_names_the_feature() {
    let run = |options: &str| {
        frames(&[
            "-n",
            "--frame_cnt",
            "1",
            "--feature",
            &format!("float_vif={options}"),
        ])
    };
    // At the input size every method copies the picture.
    let plain = run("debug=false");
    let bicubic = run("vif_prescale_method=bicubic");
    for k in 0..4 {
        assert_eq!(
            value(&bicubic[0], &format!("vif_scale{k}_pm_bicubic")),
            value(&plain[0], &format!("vif_scale{k}"))
        );
    }
    let names = ["nearest", "bilinear", "bicubic", "lanczos4"];
    let scores: Vec<f64> = names
        .iter()
        .map(|m| {
            let f = run(&format!("vif_prescale=0.5:vif_prescale_method={m}"));
            let suffix = if *m == "nearest" {
                String::new()
            } else {
                format!("_pm_{m}")
            };
            value(&f[0], &format!("vif_scale0_ps_0.5{suffix}"))
        })
        .collect();
    for i in 0..4 {
        for j in i + 1..4 {
            assert_ne!(scores[i], scores[j], "{} and {}", names[i], names[j]);
        }
    }
    let (r, d) = sample_pair();
    let o = vmafx(&[
        "-r",
        r.to_str().unwrap(),
        "-d",
        d.to_str().unwrap(),
        "--feature",
        "float_vif=vif_prescale_method=cubic",
    ]);
    assert_eq!(
        stderr(&o),
        "vmafx: float_vif: option 'vif_prescale_method': 'cubic' is not one of: \
         nearest, bilinear, bicubic, lanczos4\n"
    );
}

#[test]
fn float_ssim_scale_sets_the_decimation() {
    // 1280x720: the automatic factor is round(720 / 256) = 3.
    let pair = &crate::common::PAIRS[3];
    let dir = tempfile::tempdir().unwrap();
    let (r, d) = unpack(pair, dir.path());
    let (r, d) = (r.to_str().unwrap(), d.to_str().unwrap());
    let run = |options: &str| {
        let feature = format!("float_ssim{options}");
        let args = [
            "-w",
            "1280",
            "-h",
            "720",
            "-p",
            "420",
            "-b",
            "8",
            "-n",
            "--frame_cnt",
            "2",
            "--feature",
            &feature,
        ];
        scores_json(dir.path(), r, d, &args, None)
    };
    let auto = run("");
    assert_eq!(run("=scale=3"), auto);
    assert_eq!(run("=scale=0"), auto);
    assert_ne!(run("=scale=1"), auto);
    assert_ne!(run("=scale=2"), auto);
    let o = vmafx(&[
        "-r",
        r,
        "-d",
        d,
        "-w",
        "1280",
        "-h",
        "720",
        "-p",
        "420",
        "-b",
        "8",
        "--feature",
        "float_ssim=scale=11",
    ]);
    assert_eq!(
        stderr(&o),
        "vmafx: float_ssim: option 'scale': 11 is outside [0, 10]\n"
    );
}

/// As the `vmaf` tool: `--no_prediction` with `--model` extracts the
/// model's features (named as the model names them) and scores nothing;
/// without `--model` there is no default model.
#[test]
fn no_prediction_extracts_the_models_features() {
    let with_model = frames(&["-n", "-m", "version=vmaf_v0.6.1neg", "--frame_cnt", "2"]);
    let names: Vec<&String> = with_model[0].keys().collect();
    for name in [
        "integer_adm2_egl_1",
        "integer_vif_scale0_egl_1",
        "integer_motion2",
    ] {
        assert!(
            with_model[0].contains_key(name),
            "{name} missing: {names:?}"
        );
    }
    assert!(!with_model[0].contains_key("vmaf"), "{names:?}");
    let scored = frames(&["-m", "version=vmaf_v0.6.1neg", "--frame_cnt", "2"]);
    assert_eq!(
        value(&with_model[1], "integer_adm2_egl_1"),
        value(&scored[1], "integer_adm2_egl_1")
    );
    let without = frames(&["-n", "--feature", "psnr", "--frame_cnt", "2"]);
    assert!(
        without[0].keys().all(|k| k.starts_with("psnr")),
        "{:?}",
        without[0]
    );
}

/// As `vmaf` (getopt): a flag given again takes its last value, and
/// `--subsample 0` scores every frame, as 1 does.
#[test]
fn repeated_flags_take_the_last_value_and_subsample_0_is_1() {
    let every = frames(&["-n", "--feature", "psnr", "--frame_cnt", "3"]);
    let repeated = frames(&[
        "-n",
        "--feature",
        "psnr",
        "--frame_cnt",
        "9",
        "--frame_cnt",
        "3",
        "--threads",
        "2",
        "--threads",
        "1",
    ]);
    assert_eq!(repeated, every);
    let zero = frames(&[
        "-n",
        "--feature",
        "psnr",
        "--frame_cnt",
        "3",
        "--subsample",
        "0",
    ]);
    assert_eq!(zero, every);
}
