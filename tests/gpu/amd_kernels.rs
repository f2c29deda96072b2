//! Every kernel module compiled for AMD GPUs with the same source the HIP
//! backend gives hiprtc at run time: one wave64 target (CDNA, gfx90a) and
//! one wave32 target (RDNA, gfx1030), warnings as errors. A construct that
//! assumes 32-wide warps, a CUDA-only intrinsic, or static shared memory
//! above AMD's 64 KiB fails here, on a machine with no AMD GPU.
//!
//! Needs `hipcc` (Debian 12: `apt-get install hipcc rocm-device-libs
//! libamdhip64-dev`); without it the test records a skip, which
//! `VMAFX_REQUIRE_HIPCC=1` (set by `.ci/run`) turns into a failure.

use std::path::Path;
use std::process::Command;
use vmafx::testing::gpu::{modules, source};
use vmafx::testing::skip;

/// (target, what it stands for)
const TARGETS: [(&str, &str); 2] = [
    ("gfx90a", "CDNA, 64-wide waves"),
    ("gfx1030", "RDNA, 32-wide waves"),
];

/// hipcc as hiprtc compiles: HIP source, C++17, for one target, device code
/// only. hiprtc provides the HIP runtime's declarations by itself; offline
/// they come from `hip/hip_runtime.h`.
fn compile(hipcc: &Path, src: &Path, target: &str, out: &Path) -> Result<(), String> {
    let output = Command::new(hipcc)
        .args(["-x", "hip", "-std=c++17", "--cuda-device-only", "-c"])
        .arg(format!("--offload-arch={target}"))
        .args([
            "-Wall",
            "-Wextra",
            "-Werror",
            "-include",
            "hip/hip_runtime.h",
        ])
        .arg("-o")
        .arg(out)
        .arg(src)
        .output()
        .map_err(|e| format!("running {}: {e}", hipcc.display()))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

fn find_hipcc() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .chain([std::path::PathBuf::from("/opt/rocm/bin")])
        .map(|d| d.join("hipcc"))
        .find(|p| p.is_file())
}

#[test]
fn every_kernel_compiles_for_wave64_and_wave32_amd_targets() {
    let Some(hipcc) = find_hipcc() else {
        skip(
            "VMAFX_REQUIRE_HIPCC",
            "no hipcc (the AMD kernel compiler) on PATH",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let modules = modules();
    let jobs: Vec<(&str, &str)> = modules
        .iter()
        .flat_map(|m| TARGETS.iter().map(move |(t, _)| (m.name, *t)))
        .collect();
    // Two compilers at a time: each is single-threaded and takes seconds.
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(4);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&(name, target)) = jobs.get(i) else {
                    break;
                };
                let stem = name.trim_end_matches(".cu");
                let src = dir.path().join(format!("{stem}-{target}.hip"));
                std::fs::write(&src, source(name).unwrap()).unwrap();
                let out = dir.path().join(format!("{stem}-{target}.o"));
                match compile(&hipcc, &src, target, &out) {
                    Ok(()) => assert!(
                        out.metadata().is_ok_and(|m| m.len() > 0),
                        "{name} {target}: no object"
                    ),
                    Err(log) => failures
                        .lock()
                        .unwrap()
                        .push(format!("{name} for {target}:\n{log}")),
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} compiles failed:\n{}",
        failures.len(),
        jobs.len(),
        failures.join("\n")
    );
    println!(
        "{} kernel modules compiled for {}",
        modules.len(),
        TARGETS
            .map(|(t, what)| format!("{t} ({what})"))
            .join(" and ")
    );
}
