//! The kernels of `kernels/`, compiled at run time for the open device by
//! NVRTC or hiprtc and cached on disk (ADR 0007).
//!
//! The cache key hashes the expanded source, the file name and the driver's
//! code target (architecture and runtime version), so a new driver or a
//! changed kernel compiles afresh. The cache lives in `$VMAFX_KERNEL_CACHE`,
//! else `$XDG_CACHE_HOME/vmafx/kernels`, else `~/.cache/vmafx/kernels`,
//! else (no `HOME`: services, bare containers) a folder of the temporary
//! directory that only this user may write; a cache that cannot be written
//! is skipped, never an error. Without it every run compiles every kernel.

use super::device::{Gpu, Module};
use crate::error::{Error, Result};
use std::path::PathBuf;
use std::sync::Arc;

/// Headers the kernels include, by the name they use.
const HEADERS: &[(&str, &str)] = &[
    ("common.cuh", include_str!("../../kernels/common.cuh")),
    (
        "float_common.cuh",
        include_str!("../../kernels/float_common.cuh"),
    ),
];

/// One kernel module: a file of `kernels/`, compiled on its own. Each lives
/// beside the code that launches it (`kernel_source!`); the GPU twins'
/// registry records name theirs ([`crate::gpu::feature::GpuTwin::modules`]).
#[derive(Debug)]
pub struct KernelSource {
    /// The file name (`vif.cu`): the cache's and the emulator's key.
    pub name: &'static str,
    /// The source, before its `#include`s are expanded.
    pub text: &'static str,
}

/// The [`KernelSource`] of `kernels/FILE`, built into the binary.
macro_rules! kernel_source {
    ($file:literal) => {
        $crate::gpu::kernels::KernelSource {
            name: $file,
            text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/", $file)),
        }
    };
}
pub(crate) use kernel_source;

/// Every kernel module this build launches: the layout passes' and each
/// GPU twin's (modules shared by twins once), in registry order.
pub fn modules() -> Vec<&'static KernelSource> {
    let twins = crate::feature::REGISTRY
        .iter()
        .filter_map(|info| info.gpu)
        .flat_map(|twin| twin.modules.iter().copied());
    let mut all: Vec<&'static KernelSource> = Vec::new();
    for m in std::iter::once(&super::bind::LAYOUT_KERNELS).chain(twins) {
        if !all.iter().any(|k| k.name == m.name) {
            all.push(m);
        }
    }
    all
}

/// Inlines `#include "x"` of the known headers (both runtime compilers take
/// headers too, but one plain source is simpler to hash and to cache).
pub fn expand_includes(source: &str) -> Result<String> {
    let mut out = String::with_capacity(source.len() * 2);
    for line in source.lines() {
        if let Some(rest) = line.trim().strip_prefix("#include") {
            let name = rest.trim().trim_matches('"');
            let header = HEADERS
                .iter()
                .find(|(n, _)| *n == name)
                .ok_or_else(|| Error::Internal(format!("kernels: unknown header '{name}'")))?;
            out.push_str(&expand_includes(header.1)?);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    Ok(out)
}

/// The expanded source of module `name` (a file name of [`modules`]).
pub fn source(name: &str) -> Result<String> {
    let module = modules()
        .into_iter()
        .find(|m| m.name == name)
        .ok_or_else(|| Error::Internal(format!("kernels: no kernel module '{name}'")))?;
    expand_includes(module.text)
}

/// Loads `module` on `gpu`, from the disk cache when it has it.
pub fn load(gpu: &Gpu, module: &KernelSource) -> Result<Arc<Module>> {
    let source = expand_includes(module.text)?;
    let name = module.name;
    let key = format!(
        "{:016x}",
        fnv1a(&[
            source.as_bytes(),
            name.as_bytes(),
            gpu.driver().code_target().as_bytes()
        ])
    );
    let path = gpu
        .driver()
        .caches_kernels()
        .then(cache_dir)
        .flatten()
        .map(|d| d.join(format!("{}-{key}.bin", name.trim_end_matches(".cu"))));
    if let Some(image) = path.as_ref().and_then(|p| std::fs::read(p).ok()) {
        if let Ok(m) = Module::load(gpu, &image) {
            return Ok(Arc::new(m));
        }
    }
    let image = gpu.driver().compile(&source, name)?;
    if let Some(p) = &path {
        // Best effort: write to a temporary name, then rename (atomic).
        if let Some(dir) = p.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let tmp = p.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, &image).is_ok() {
            let _ = std::fs::rename(&tmp, p);
        }
    }
    Ok(Arc::new(Module::load(gpu, &image)?))
}

fn cache_dir() -> Option<PathBuf> {
    cache_dir_from(|name| std::env::var_os(name))
}

/// [`cache_dir`] with the environment read through `env`.
fn cache_dir_from(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    if let Some(d) = env("VMAFX_KERNEL_CACHE") {
        return Some(PathBuf::from(d));
    }
    let base = env("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".cache")));
    match base {
        Some(base) => Some(base.join("vmafx").join("kernels")),
        None => private_temp_dir(),
    }
}

/// `$TMPDIR/vmafx-kernels-UID`, made mode 0700; used only while it is this
/// user's and nobody else may write it (another user could otherwise put
/// code there for us to load).
fn private_temp_dir() -> Option<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let uid = nix::unistd::getuid().as_raw();
    let dir = std::env::temp_dir().join(format!("vmafx-kernels-{uid}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    (meta.is_dir() && meta.uid() == uid && meta.mode() & 0o022 == 0).then_some(dir)
}

/// 64-bit FNV-1a: a stable hash (std's hasher may change between releases).
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100000001b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_expand() {
        let s = source("psnr.cu").unwrap();
        assert!(s.contains("block_sum_u64") && !s.contains("#include"));
        assert!(expand_includes("#include \"nope.h\"").is_err());
    }
}

#[cfg(test)]
mod cache_tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_cache_has_a_home_without_home() {
        let dir = cache_dir_from(|_| None).expect("a private temporary folder");
        assert!(dir.starts_with(std::env::temp_dir()), "{}", dir.display());
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}: others may not use it");
        let home = |n: &str| (n == "HOME").then(|| "/h".into());
        assert_eq!(
            cache_dir_from(home),
            Some(PathBuf::from("/h/.cache/vmafx/kernels"))
        );
        let own = |n: &str| (n == "VMAFX_KERNEL_CACHE").then(|| "/k".into());
        assert_eq!(cache_dir_from(own), Some(PathBuf::from("/k")));
    }
}
