//! The C library (libvmaf's C ABI over vmafx, `capi/install.sh`) as its
//! clients see it: C programs compiled against it (`c_clients`, sources in
//! this folder), and FFmpeg 7.1's libvmaf filter linked against it
//! (`ffmpeg`). Each test skips, saying why, where the library or FFmpeg has
//! not been built (`VMAFX_REQUIRE_CAPI=1`, `VMAFX_REQUIRE_FFMPEG=1` fail
//! instead); `.ci/run` builds both first.
//!
//! One module per suite, all in one test binary (CI links it once):
//! `cargo test --test capi ffmpeg::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod c_clients;
mod ffmpeg;
