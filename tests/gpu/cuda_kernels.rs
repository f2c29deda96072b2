//! Every kernel in `kernels/` compiles with NVRTC (no GPU needed). CI
//! installs NVRTC from PyPI (.ci/run), so there this test must compile;
//! elsewhere, without NVRTC, it prints why it skips.

use std::path::Path;
use vmafx::gpu::cuda;
use vmafx::testing::gpu as kernels;

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
                kernels::modules().iter().any(|m| m.name == name),
                "kernels/{name} is in no GPU twin's modules (gpu::feature::GpuTwin) nor layout.cu"
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
    for module in kernels::modules() {
        let name = module.name;
        let source = kernels::source(name).unwrap();
        for arch in ARCHES {
            match cuda::compile_ptx(&source, name, arch) {
                Ok(ptx) => println!("compiled {name} for {arch}: {} bytes of PTX", ptx.len()),
                Err(e) => panic!("{name} ({arch}): {e}"),
            }
        }
    }
}

/// What the engine loads on a device NVRTC knows: machine code (an ELF
/// image), not PTX for the driver to translate in every process.
#[test]
fn kernels_compile_to_machine_code() {
    if !cuda::nvrtc_present() {
        return vmafx::testing::skip(
            "VMAFX_REQUIRE_NVRTC",
            "NVRTC not found (libnvrtc.so, LD_LIBRARY_PATH?); kernels were not compiled",
        );
    }
    let source = kernels::source("psnr.cu").unwrap();
    let cubin = cuda::compile_cubin(&source, "psnr.cu", "sm_90").unwrap();
    assert_eq!(&cubin[..4], b"\x7fELF", "a CUBIN is an ELF image");
    let err = cuda::compile_cubin("this is not C++", "bad.cu", "sm_90").unwrap_err();
    assert!(err.to_string().contains("NVRTC compile of bad.cu"), "{err}");
}
