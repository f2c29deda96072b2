//! Every kernel in `kernels/` compiles with NVRTC (no GPU needed). CI
//! installs NVRTC from PyPI (.ci/run), so there this test must compile;
//! elsewhere, without NVRTC, it prints why it skips.

use std::path::Path;
use vmafx::gpu::{cuda, kernels};

/// Architectures to check: the oldest CUDA 13 supports and a recent one.
const ARCHES: &[&str] = &["compute_75", "compute_90"];

#[test]
fn every_kernel_file_is_built_in() {
    let root = std::env::var_os("VMAFX_TEST_ROOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf());
    let dir = root.join("kernels");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".cu") {
            assert!(
                kernels::MODULES.iter().any(|(n, _)| *n == name),
                "kernels/{name} is not listed in gpu::kernels::MODULES"
            );
        }
    }
}

#[test]
fn every_kernel_compiles_with_nvrtc() {
    if !cuda::nvrtc_present() {
        return vmafx::testing::skip(
            "VMAFX_REQUIRE_NVRTC",
            "NVRTC not found (libnvrtc.so, LD_LIBRARY_PATH?); kernels were not compiled",
        );
    }
    for (name, _) in kernels::MODULES {
        let source = kernels::source(name).unwrap();
        for arch in ARCHES {
            match cuda::compile_ptx(&source, name, arch) {
                Ok(ptx) => println!("compiled {name} for {arch}: {} bytes of PTX", ptx.len()),
                Err(e) => panic!("{name} ({arch}): {e}"),
            }
        }
    }
}
