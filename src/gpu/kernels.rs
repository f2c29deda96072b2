//! The kernels of `kernels/`, compiled at run time for the open device by
//! NVRTC or hiprtc and cached on disk (ADR 0007).
//!
//! The cache key hashes the expanded source, the file name and the driver's
//! code target (architecture and runtime version), so a new driver or a
//! changed kernel compiles afresh. The cache lives in `$VMAFX_KERNEL_CACHE`,
//! else `$XDG_CACHE_HOME/vmafx/kernels`, else `~/.cache/vmafx/kernels`; a
//! cache that cannot be written is skipped, never an error.

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

/// Every kernel module, by file name.
pub const MODULES: &[(&str, &str)] = &[
    ("psnr.cu", include_str!("../../kernels/psnr.cu")),
    ("motion.cu", include_str!("../../kernels/motion.cu")),
    ("layout.cu", include_str!("../../kernels/layout.cu")),
    ("vif.cu", include_str!("../../kernels/vif.cu")),
    ("adm.cu", include_str!("../../kernels/adm.cu")),
    (
        "float_motion.cu",
        include_str!("../../kernels/float_motion.cu"),
    ),
    ("float_vif.cu", include_str!("../../kernels/float_vif.cu")),
    ("float_psnr.cu", include_str!("../../kernels/float_psnr.cu")),
    (
        "float_moment.cu",
        include_str!("../../kernels/float_moment.cu"),
    ),
    ("float_adm.cu", include_str!("../../kernels/float_adm.cu")),
    ("float_ssim.cu", include_str!("../../kernels/float_ssim.cu")),
    ("ciede.cu", include_str!("../../kernels/ciede.cu")),
    ("psnr_hvs.cu", include_str!("../../kernels/psnr_hvs.cu")),
    ("speed.cu", include_str!("../../kernels/speed.cu")),
    ("cambi.cu", include_str!("../../kernels/cambi.cu")),
    (
        "integer_ssim.cu",
        include_str!("../../kernels/integer_ssim.cu"),
    ),
];

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

/// The expanded source of a module of [`MODULES`].
pub fn source(name: &str) -> Result<String> {
    let (_, src) = MODULES
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| Error::Internal(format!("kernels: no kernel module '{name}'")))?;
    expand_includes(src)
}

/// Loads module `name` on `gpu`, from the disk cache when it has it.
pub fn load(gpu: &Gpu, name: &str) -> Result<Arc<Module>> {
    let source = source(name)?;
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
    if let Some(d) = std::env::var_os("VMAFX_KERNEL_CACHE") {
        return Some(PathBuf::from(d));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("vmafx").join("kernels"))
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
