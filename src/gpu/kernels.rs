//! The kernels of `kernels/`, compiled at run time for the open device by
//! NVRTC or hiprtc and cached on disk (ADR 0007).
//!
//! The cache key hashes the expanded source, the file name and the driver's
//! code target (architecture and driver version), so a new driver or a
//! changed kernel compiles afresh. An image that is not machine code (PTX,
//! which the driver translates) is keyed on the compiler's version too, so
//! a newer compiler that knows the device replaces it; machine code is
//! not, so a process that finds it never loads the compiler (10-20 ms of
//! CUDA's start-up for NVRTC). The cache lives in `$VMAFX_KERNEL_CACHE`,
//! else `$XDG_CACHE_HOME/vmafx/kernels`, else `~/.cache/vmafx/kernels`,
//! else (no `HOME`: services, bare containers) a folder of the temporary
//! directory that only this user may write; a cache that cannot be written
//! is skipped, never an error. Without it every run compiles every kernel.

use super::device::{Gpu, Module};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
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
    let dir = gpu.driver().caches_kernels().then(cache_dir).flatten();
    load_cached(&DeviceCompiler(gpu), module, dir.as_deref()).map(Arc::new)
}

/// What the cache needs of a device: a trait of its own, so the lookup is
/// tested without one.
trait Compiler {
    type Module;
    /// [`super::driver::Driver::code_target`].
    fn code_target(&self) -> String;
    /// [`super::driver::Driver::compiler_version`].
    fn compiler_version(&self) -> String;
    fn compile(&self, source: &str, name: &str) -> Result<Vec<u8>>;
    /// [`super::driver::Driver::is_machine_code`].
    fn is_machine_code(&self, image: &[u8]) -> bool;
    fn load(&self, image: &[u8]) -> Result<Self::Module>;
}

struct DeviceCompiler<'a>(&'a Gpu);

impl Compiler for DeviceCompiler<'_> {
    type Module = Module;
    fn code_target(&self) -> String {
        self.0.driver().code_target()
    }
    fn compiler_version(&self) -> String {
        self.0.driver().compiler_version()
    }
    fn compile(&self, source: &str, name: &str) -> Result<Vec<u8>> {
        self.0.driver().compile(source, name)
    }
    fn is_machine_code(&self, image: &[u8]) -> bool {
        self.0.driver().is_machine_code(image)
    }
    fn load(&self, image: &[u8]) -> Result<Module> {
        Module::load(self.0, image)
    }
}

/// `module` from the cache in `dir` (none: compiled every time): machine
/// code first, found without the compiler; then an image keyed on the
/// compiler's version too; else compiled and cached under the key that
/// fits what the compiler made.
fn load_cached<C: Compiler>(
    compiler: &C,
    module: &KernelSource,
    dir: Option<&Path>,
) -> Result<C::Module> {
    let source = expand_includes(module.text)?;
    let name = module.name;
    let target = compiler.code_target();
    let file = |parts: &[&[u8]]| {
        let stem = name.trim_end_matches(".cu");
        dir.map(|d| d.join(format!("{stem}-{:016x}.bin", fnv1a(parts))))
    };
    let machine_code = file(&[source.as_bytes(), name.as_bytes(), target.as_bytes()]);
    let cached = |path: &Option<PathBuf>| {
        let image = std::fs::read(path.as_ref()?).ok()?;
        compiler.load(&image).ok()
    };
    if let Some(m) = cached(&machine_code) {
        return Ok(m);
    }
    let version = compiler.compiler_version();
    let translated = file(&[
        source.as_bytes(),
        name.as_bytes(),
        target.as_bytes(),
        version.as_bytes(),
    ]);
    if let Some(m) = cached(&translated) {
        return Ok(m);
    }
    let image = compiler.compile(&source, name)?;
    let path = if compiler.is_machine_code(&image) {
        machine_code
    } else {
        translated
    };
    if let Some(p) = &path {
        store(p, &image);
    }
    compiler.load(&image)
}

/// Best effort: written to a temporary name, then renamed (atomic).
fn store(path: &Path, image: &[u8]) {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    if std::fs::write(&tmp, image).is_ok() {
        let _ = std::fs::rename(&tmp, path);
    }
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
    use std::cell::{Cell, RefCell};
    use std::os::unix::fs::PermissionsExt;

    /// A compiler that counts what the cache asks of it; its images are
    /// machine code or not as `machine` says.
    #[derive(Default)]
    struct Counting {
        compiles: Cell<usize>,
        version_asked: Cell<usize>,
        version: RefCell<String>,
        machine: Cell<bool>,
    }

    impl Compiler for Counting {
        type Module = Vec<u8>;
        fn code_target(&self) -> String {
            "sm_90-driver13000".into()
        }
        fn compiler_version(&self) -> String {
            self.version_asked.set(self.version_asked.get() + 1);
            self.version.borrow().clone()
        }
        fn compile(&self, _source: &str, name: &str) -> Result<Vec<u8>> {
            self.compiles.set(self.compiles.get() + 1);
            let kind = if self.machine.get() { "machine" } else { "ptx" };
            Ok(format!("{kind} {name} by {}", self.version.borrow()).into_bytes())
        }
        fn is_machine_code(&self, image: &[u8]) -> bool {
            image.starts_with(b"machine")
        }
        fn load(&self, image: &[u8]) -> Result<Vec<u8>> {
            Ok(image.to_vec())
        }
    }

    fn psnr() -> &'static KernelSource {
        modules().into_iter().find(|m| m.name == "psnr.cu").unwrap()
    }

    #[test]
    fn machine_code_is_found_without_the_compiler() {
        let dir = tempfile::tempdir().unwrap();
        let c = Counting::default();
        c.machine.set(true);
        *c.version.borrow_mut() = "nvrtc12.8".into();
        let first = load_cached(&c, psnr(), Some(dir.path())).unwrap();
        assert_eq!(first, b"machine psnr.cu by nvrtc12.8");
        assert_eq!((c.compiles.get(), c.version_asked.get()), (1, 1));
        // Another compiler version: the machine code still serves, and
        // the compiler is not asked.
        *c.version.borrow_mut() = "nvrtc13.0".into();
        let again = load_cached(&c, psnr(), Some(dir.path())).unwrap();
        assert_eq!(again, first);
        assert_eq!((c.compiles.get(), c.version_asked.get()), (1, 1));
    }

    #[test]
    fn a_translated_image_is_kept_per_compiler_version() {
        let dir = tempfile::tempdir().unwrap();
        let c = Counting::default();
        *c.version.borrow_mut() = "nvrtc11.8".into();
        let ptx = load_cached(&c, psnr(), Some(dir.path())).unwrap();
        assert_eq!(ptx, b"ptx psnr.cu by nvrtc11.8");
        load_cached(&c, psnr(), Some(dir.path())).unwrap();
        assert_eq!((c.compiles.get(), c.version_asked.get()), (1, 2));
        // A newer compiler that makes machine code replaces it; from then
        // on the compiler is not asked.
        *c.version.borrow_mut() = "nvrtc13.0".into();
        c.machine.set(true);
        let cubin = load_cached(&c, psnr(), Some(dir.path())).unwrap();
        assert_eq!(cubin, b"machine psnr.cu by nvrtc13.0");
        assert_eq!(load_cached(&c, psnr(), Some(dir.path())).unwrap(), cubin);
        assert_eq!((c.compiles.get(), c.version_asked.get()), (2, 3));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn without_a_cache_every_load_compiles() {
        let c = Counting::default();
        c.machine.set(true);
        load_cached(&c, psnr(), None).unwrap();
        load_cached(&c, psnr(), None).unwrap();
        assert_eq!(c.compiles.get(), 2);
    }

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
