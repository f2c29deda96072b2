//! The GPU engine against the CPU engine: every GPU extractor and model on
//! the golden pairs and synthetic pictures, bit for bit (integer features)
//! or within the tolerances of `docs/gpu-testing.md` (float features); and
//! every kernel compiled for NVIDIA (NVRTC) and AMD (hipcc) targets, which
//! needs no GPU. Without a GPU each device test records why it skipped
//! (`VMAFX_REQUIRE_GPU=1` fails instead); the kernel builds skip without
//! NVRTC or hipcc (`VMAFX_REQUIRE_NVRTC=1`, `VMAFX_REQUIRE_HIPCC=1`).
//!
//! One module per suite, all in one test binary (CI links it once):
//! `cargo test --test gpu vif::` runs one of them (a filter matches
//! anywhere in a name: `adm::` also runs `float_adm::`).
//! `docs/gpu-device-checks/suites.sh` runs them by module on a GPU machine.
//! Frames imported from device memory and producers: `tests/import`,
//! `tests/import_serial`.

#[path = "../common/mod.rs"]
mod common;

mod adm;
mod amd_kernels;
mod cambi;
mod ciede;
mod cuda_kernels;
mod engine;
mod float;
mod float_adm;
mod float_ssim;
mod integer_ms_ssim;
mod models;
mod psnr_hvs;
mod speed;
mod ssim;
mod ssimulacra2;
mod vif;
