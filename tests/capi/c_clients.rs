//! The C library through its C ABI, as C programs see it: built by
//! `capi/install.sh` into `$VMAFX_CAPI_PREFIX` (CI does so before the tests;
//! without it these tests skip, and fail where `VMAFX_REQUIRE_CAPI=1`).
//!
//! - `tests/capi/abi.c` compiled against vmafx's headers and, when
//!   `$VMAFX_LIBVMAF_INCLUDE` names them (required where
//!   `VMAFX_REQUIRE_LIBVMAF_HEADERS=1`), libvmaf 3.2's own: every struct
//!   size, field offset and enum value equals the library's.
//! - `tests/capi/api.c` under AddressSanitizer (a leak on any path fails):
//!   every refusal names what was wrong; a whole run writes, in every
//!   format, exactly the bytes the `vmafx` command line writes for the
//!   same pair, model and feature (lossless numbers, `fps` aside); and
//!   vmafx.h's own API refuses bad configurations and frames, releasing
//!   refused frames at once.
//! - `examples/c/host_frames.c` under AddressSanitizer: host and memfd
//!   (NV12) frames with release callbacks give the CPU engine's scores.

use crate::common;

use common::without_fps;
use std::path::{Path, PathBuf};
use std::process::Command;

fn prefix() -> Option<PathBuf> {
    common::path_from_env(
        "VMAFX_CAPI_PREFIX",
        "VMAFX_REQUIRE_CAPI",
        "capi/install.sh PREFIX builds the C library",
    )
}

/// The checkout: `$VMAFX_TEST_ROOT` for test binaries carried to another
/// machine, else the source tree.
fn root() -> PathBuf {
    std::env::var_os("VMAFX_TEST_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

/// Compiles `source` against the headers in `include` and the library in
/// `prefix`; returns the program.
fn compile(source: &str, include: &Path, prefix: &Path, out: &Path, extra: &[&str]) -> PathBuf {
    let program = out.join(Path::new(source).file_stem().unwrap());
    let status = Command::new("gcc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g"])
        .args(extra)
        .arg("-o")
        .arg(&program)
        .arg(root().join(source))
        .arg("-I")
        .arg(include)
        .arg("-L")
        .arg(prefix.join("lib"))
        .arg("-lvmaf")
        .status()
        .expect("gcc runs");
    assert!(status.success(), "gcc failed on {source}");
    program
}

fn run(program: &Path, prefix: &Path, args: &[&Path]) -> String {
    let out = Command::new(program)
        .args(args)
        .env("LD_LIBRARY_PATH", prefix.join("lib"))
        .env("VMAFX_OUTPUT_PRECISION", "max")
        .output()
        .expect("the C program runs");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{} failed:\n{stdout}\n{}",
        program.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The bundled sample pair (reference, distorted).
fn sample_pair() -> (PathBuf, PathBuf) {
    let data = root().join("examples/data");
    (
        data.join("ref_576x324.y4m"),
        data.join("dist_576x324_x264_crf30.y4m"),
    )
}

/// Compiles `source` against the installed headers and runs it on the
/// sample pair (plus `extra_args`); returns what it printed.
fn run_on_sample_pair(prefix: &Path, source: &str, flags: &[&str], extra_args: &[&Path]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let program = compile(source, &prefix.join("include"), prefix, dir.path(), flags);
    let (r, d) = sample_pair();
    let args: Vec<&Path> = [r.as_path(), d.as_path()]
        .into_iter()
        .chain(extra_args.iter().copied())
        .collect();
    let out = run(&program, prefix, &args);
    print!("{out}");
    out
}

#[test]
fn struct_layouts_and_enums_equal_libvmafs() {
    let Some(prefix) = prefix() else { return };
    let dir = tempfile::tempdir().unwrap();
    let ours = compile(
        "tests/capi/abi.c",
        &prefix.join("include"),
        &prefix,
        dir.path(),
        &[],
    );
    let out = run(&ours, &prefix, &[]);
    assert!(
        out.contains("ABI: 53 sizes, offsets and enum values equal"),
        "{out}"
    );
    match std::env::var_os("VMAFX_LIBVMAF_INCLUDE") {
        Some(theirs) => {
            let sub = dir.path().join("theirs");
            std::fs::create_dir(&sub).unwrap();
            let program = compile("tests/capi/abi.c", Path::new(&theirs), &prefix, &sub, &[]);
            let out = run(&program, &prefix, &[]);
            assert!(out.contains("ABI: 53 sizes, offsets and enum values equal"), "{out}");
            println!("libvmaf's own headers: {}", out.lines().last().unwrap());
        }
        None => vmafx::testing::skip(
            "VMAFX_REQUIRE_LIBVMAF_HEADERS",
            "VMAFX_LIBVMAF_INCLUDE not set (libvmaf 3.2's include/ folder): checked against vmafx's headers only",
        ),
    }
}

#[test]
fn a_c_client_writes_the_command_lines_bytes_and_leaks_nothing() {
    let Some(prefix) = prefix() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (r, d) = sample_pair();
    let stem = dir.path().join("c");
    let out = run_on_sample_pair(
        &prefix,
        "tests/capi/api.c",
        &["-fsanitize=address"],
        &[&stem],
    );
    assert!(out.ends_with("ok: 0 failures\n"), "{out}");
    // The CPU engine's pooled score of this pair.
    assert!(out.contains("pooled 3: vmaf 95.065082326734753 "), "{out}");

    let cli = |extra: &[&str], format: &str, path: &Path| {
        let status = Command::new(env!("CARGO_BIN_EXE_vmafx"))
            .arg("-r")
            .arg(&r)
            .arg("-d")
            .arg(&d)
            .args(extra)
            .args(["--precision", "max", "-q", &format!("--{format}"), "-o"])
            .arg(path)
            .status()
            .unwrap();
        assert!(status.success());
    };
    let run_flags = [
        "--model",
        "version=vmaf_v0.6.1",
        "--feature",
        "psnr=enable_chroma=false",
        "--threads",
        "2",
    ];
    for format in ["xml", "json", "csv", "sub"] {
        let expected = dir.path().join(format!("cli.{format}"));
        cli(&run_flags, format, &expected);
        let written = dir.path().join(format!("c.{format}"));
        assert_eq!(
            without_fps(&written),
            without_fps(&expected),
            "{format}: the C client's file differs from the command line's"
        );
    }
    let expected = dir.path().join("cli-b.json");
    let b_flags = [
        "--model",
        "version=vmaf_b_v0.6.3:name=vmaf_b",
        "--frame_cnt",
        "4",
    ];
    cli(&b_flags, "json", &expected);
    assert_eq!(
        without_fps(&dir.path().join("c-b.json")),
        without_fps(&expected),
        "bootstrap collection"
    );
}

#[test]
fn the_c_host_frames_example_scores_planar_and_memfd_nv12_frames_and_releases_each() {
    let Some(prefix) = prefix() else { return };
    let out = run_on_sample_pair(
        &prefix,
        "examples/c/host_frames.c",
        &["-fsanitize=address"],
        &[],
    );
    // The CPU engine's scores of the pair, NV12 in a memfd or planar alike.
    assert!(out.contains("frame 0: vmaf 87.267035\n"), "{out}");
    assert!(
        out.ends_with("10 frames: pooled vmaf 95.065082326734753; 20 of 20 frames released\n"),
        "{out}"
    );
}

#[test]
fn cuda_device_pictures_score_in_place_as_ffmpegs_libvmaf_cuda_filter_fills_them() {
    let Some(prefix) = prefix() else { return };
    let out = run_on_sample_pair(&prefix, "tests/capi/cuda.c", &["-ldl"], &[]);
    if let Some(reason) = out.strip_prefix("SKIP: ") {
        // The refusal itself was checked by the program (-ENOTSUP, naming CUDA).
        vmafx::testing::skip(vmafx::testing::REQUIRE_GPU, reason.trim());
        return;
    }
    // The CPU engine's pooled score of the pair (integer features: the
    // GPU's are bit for bit the same).
    assert!(
        out.ends_with("10 frames from CUDA device pictures: pooled vmaf 95.065082326734753\n"),
        "{out}"
    );
}

#[test]
fn cuda_frames_example_scores_device_frames_behind_events_and_releases_each() {
    let Some(prefix) = prefix() else { return };
    let out = run_on_sample_pair(&prefix, "examples/c/cuda_frames.c", &["-ldl"], &[]);
    if let Some(reason) = out.strip_prefix("SKIP: ") {
        // The refusal itself was checked by the program (-ENOTSUP, naming CUDA).
        vmafx::testing::skip(vmafx::testing::REQUIRE_GPU, reason.trim());
        return;
    }
    // The CPU engine's scores of the pair (integer features: the GPU's are
    // bit for bit the same), with the distorted frames as NV12.
    assert!(out.contains("frame 0: vmaf 87.267035\n"), "{out}");
    assert!(
        out.ends_with("10 frames: pooled vmaf 95.065082326734753; 20 of 20 frames released\n"),
        "{out}"
    );
}
