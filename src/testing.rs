//! Test support shared by the crate's unit tests and its integration tests:
//! how a test that cannot run on this machine says so.
//!
//! `cargo test` hides what a passing test prints, so a test that returns
//! early for want of a GPU would read as `ok`. [`skip`] therefore does
//! three things: it fails the test when the variable that requires the
//! missing thing is `1` (`VMAFX_REQUIRE_GPU=1` on a GPU machine), it prints
//! the reason (seen with `--nocapture`), and it appends one line (binary,
//! test, reason) to the skip log, which `.ci/run` prints as a summary after
//! the run. Not part of the library's API.

pub mod fuzz;

/// A GL texture of the context current on this thread exported as a
/// dma-buf, as the GPU engine does on runtimes without GL interop (HIP):
/// the fd, its size, offset, pitch, fourcc and modifier, and why it cannot
/// be memory plane `plane` of `format` if it cannot.
pub fn export_gl_texture(
    texture: u32,
    format: crate::import::PixelFormat,
    plane: usize,
) -> crate::Result<(std::os::fd::OwnedFd, [u64; 5], Option<String>)> {
    let e = crate::import::egl_export::export(texture)?;
    let refusal = crate::import::egl_export::refusal(format, plane, e.fourcc, 1, e.modifier);
    Ok((
        e.fd,
        [e.bytes, e.offset, e.pitch, u64::from(e.fourcc), e.modifier],
        refusal,
    ))
}

/// The GPU layer's internals that tests and benchmarks drive directly (the
/// kernel sources, the shared planes); `pub(crate)` in the library.
pub mod gpu {
    pub use crate::gpu::args::KernelArgs;
    pub use crate::gpu::driver::{Driver, EventHandle, StreamHandle};
    pub use crate::gpu::kernels::{modules, source, KernelSource};
    pub use crate::gpu::planes::{FramePlanes, PairPlanes, SharedPlanes};
}

use std::fmt::Display;
use std::io::Write;
use std::path::PathBuf;

/// The variable that turns a GPU test's skip into a failure.
pub const REQUIRE_GPU: &str = "VMAFX_REQUIRE_GPU";

/// Records that the calling test cannot run here because of `reason`, or
/// panics when `require_var` is set to `1`. The caller returns right after.
pub fn skip(require_var: &str, reason: impl Display) {
    skip_logged_to(log_path(), require_var, &reason)
}

fn skip_logged_to(log: Option<PathBuf>, require_var: &str, reason: &dyn Display) {
    let test = std::thread::current()
        .name()
        .unwrap_or("(unnamed test)")
        .to_owned();
    if required(require_var) {
        panic!("{require_var}=1, but {test} cannot run: {reason}");
    }
    eprintln!("skipped: {reason} (set {require_var}=1 to fail instead)");
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|s| strip_hash(&s).to_owned())
        .unwrap_or_default();
    if let Some(path) = log {
        // One short line per write with O_APPEND: lines from parallel tests
        // do not interleave.
        let line = format!("{binary}\t{test}\t{reason}\n");
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(line.as_bytes()));
    }
}

/// Whether `var` is set to `1`.
pub fn required(var: &str) -> bool {
    std::env::var_os(var).is_some_and(|v| v == "1")
}

/// `$VMAFX_SKIP_LOG`, else `vmafx-test-skips.log` in the target profile
/// folder above the test binary (`target/debug/deps/x` -> `target/debug`).
fn log_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("VMAFX_SKIP_LOG") {
        return Some(p.into());
    }
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let dir = if dir.file_name()? == "deps" {
        dir.parent()?
    } else {
        dir
    };
    Some(dir.join("vmafx-test-skips.log"))
}

/// `gpu_import-0123abcd` -> `gpu_import` (cargo's hash suffix).
fn strip_hash(stem: &str) -> &str {
    match stem.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            name
        }
        _ => stem,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_hashes_are_stripped_from_binary_names() {
        assert_eq!(strip_hash("gpu_import-0123456789abcdef"), "gpu_import");
        assert_eq!(strip_hash("vmafx-0123"), "vmafx-0123");
        assert_eq!(strip_hash("cli"), "cli");
    }

    #[test]
    fn a_required_skip_fails_and_an_optional_one_is_logged() {
        let var = "VMAFX_TESTING_SELF_CHECK";
        let log = std::env::temp_dir().join(format!("vmafx-skip-log-{}", std::process::id()));
        std::env::remove_var(var);
        skip_logged_to(Some(log.clone()), var, &"no such device");
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(
            text.ends_with("a_required_skip_fails_and_an_optional_one_is_logged\tno such device\n"),
            "{text}"
        );
        std::env::set_var(var, "1");
        let failed = std::panic::catch_unwind(|| skip_logged_to(None, var, &"no such device"));
        std::env::remove_var(var);
        let _ = std::fs::remove_file(&log);
        assert!(failed.is_err(), "{var}=1 must turn the skip into a failure");
    }
}
