//! A CPU-emulated device for tests: the real `kernels/*.cu`, compiled by
//! g++ against `kernels/emu/` (a CUDA shim and a fiber scheduler), run by
//! the real engine through this [`Driver`]. Device memory is host memory,
//! and every stream operation runs at once, in call order (a valid CUDA
//! schedule: the device merely seems infinitely fast). `emu_tests.rs`
//! checks every GPU extractor against the CPU engine: bit for bit where
//! the device is, within the device's tolerance for the float family.
//!
//! A module image is its expanded source; loading it builds a shared
//! library once per source (and runtime) hash, kept in
//! `target/emu-kernels/` next to the test binary.

use super::args::KernelArgs;
use super::driver::{
    ArrayHandle, Copy2d, DevicePtr, Driver, EventHandle, ExternalMemoryDesc, ExternalMemoryHandle,
    FunctionHandle, GraphicsHandle, HostFn, Interop, LaunchDims, Memory, MemoryInfo, ModuleHandle,
    SemaphoreHandle, SemaphoreKind, StreamHandle,
};
use super::Gpu;
use crate::error::{Error, GpuApi, GpuCode, Result};
use std::alloc::Layout;
use std::collections::HashMap;
use std::ffi::{c_char, c_void, CString};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

const EMU_H: &str = include_str!("../../kernels/emu/emu.h");
const RUNTIME: &str = include_str!("../../kernels/emu/runtime.cpp");
const FLAGS: &[&str] = &[
    "-std=gnu++17",
    "-O2",
    "-fPIC",
    "-shared",
    "-fvisibility=hidden",
    // The kernels read words through other types, as CUDA allows.
    "-fno-strict-aliasing",
    // Each double operation rounded, as the kernels' _rn intrinsics ask.
    "-ffp-contract=off",
    "-w",
];
/// CUDA's allocation alignment.
const ALIGN: usize = 256;

type KernelFn = unsafe extern "C" fn(*mut *mut c_void);
type LookupFn = unsafe extern "C" fn(*const c_char) -> Option<KernelFn>;
type LaunchFn =
    unsafe extern "C" fn(KernelFn, *const u32, u32, *mut *mut c_void, *mut c_char, usize) -> i32;

/// The C++ compiler: `$CXX`, else g++.
fn compiler() -> String {
    std::env::var("CXX").unwrap_or_else(|_| "g++".into())
}

/// Why the emulator cannot run here (no C++ compiler), or None.
pub fn unavailable() -> Option<String> {
    let cxx = compiler();
    match Command::new(&cxx).arg("--version").output() {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!("{cxx} --version failed: {}", o.status)),
        Err(e) => Some(format!(
            "no C++ compiler to emulate the kernels ({cxx}: {e})"
        )),
    }
}

fn error(operation: &str, reason: impl Into<String>) -> Error {
    Error::gpu(GpuApi::Emulated, operation, GpuCode::Other(-1), reason)
}

/// A loaded kernel library.
struct Library {
    lookup: LookupFn,
    launch: LaunchFn,
    _lib: libloading::Library,
}

/// The emulated device.
pub struct EmuDriver {
    /// `-D` macros for every module (e.g. `VIF_EMU_MMA`).
    defines: Vec<String>,
    /// Source edits (module, text, replacement): deliberate bugs, to see
    /// that the tests catch them.
    patches: Vec<Patch>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    next_handle: usize,
    allocations: HashMap<usize, Layout>,
    modules: HashMap<usize, Arc<Library>>,
    functions: HashMap<usize, (Arc<Library>, KernelFn)>,
}

/// In module `.0`, text `.1` replaced by `.2` (which must be there).
pub type Patch = (&'static str, &'static str, &'static str);

impl EmuDriver {
    /// A [`Gpu`] on a new emulated device whose kernels are built with
    /// these macros defined and these patches applied.
    pub fn gpu(defines: &[&str], patches: &[Patch]) -> Gpu {
        Gpu::new(Arc::new(Self {
            defines: defines.iter().map(|d| d.to_string()).collect(),
            patches: patches.to_vec(),
            state: Mutex::default(),
        }))
    }

    fn patched(&self, name: &str, source: &str) -> Result<String> {
        let mut source = source.to_string();
        for (module, from, to) in self.patches.iter().filter(|p| p.0 == name) {
            if !source.contains(from) {
                return Err(error(
                    "module_load",
                    format!("{module}: no '{from}' to patch"),
                ));
            }
            source = source.replace(from, to);
        }
        Ok(source)
    }

    /// A fresh raw handle value, of whichever kind the caller wraps it in.
    fn handle(&self) -> usize {
        let mut s = self.state.lock().unwrap();
        s.next_handle += 1;
        s.next_handle
    }

    fn host_alloc(&self, bytes: usize) -> Result<*mut u8> {
        let layout = Layout::from_size_align(bytes.max(1), ALIGN)
            .map_err(|e| error("alloc", e.to_string()))?;
        // SAFETY: the size is not zero.
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            return Err(error("alloc", format!("{bytes} bytes")));
        }
        // Not zero: device memory starts as garbage, and a kernel that
        // reads it before it is written should not pass by luck.
        // SAFETY: just allocated.
        unsafe { std::ptr::write_bytes(ptr, 0xcd, layout.size()) };
        self.state
            .lock()
            .unwrap()
            .allocations
            .insert(ptr as usize, layout);
        Ok(ptr)
    }

    fn host_free(&self, ptr: usize) {
        if let Some(layout) = self.state.lock().unwrap().allocations.remove(&ptr) {
            // SAFETY: allocated by host_alloc with this layout.
            unsafe { std::alloc::dealloc(ptr as *mut u8, layout) };
        }
    }
}

impl Drop for EmuDriver {
    fn drop(&mut self) {
        for (ptr, layout) in self.state.get_mut().unwrap().allocations.drain() {
            // SAFETY: allocated by host_alloc with this layout.
            unsafe { std::alloc::dealloc(ptr as *mut u8, layout) };
        }
    }
}

// SAFETY: "device" pointers are host allocations of this driver; every
// operation completes before its call returns.
unsafe impl Driver for EmuDriver {
    /// HIP where the kernels are built as for AMD (`EMU_WAVE64`,
    /// `EMU_HIP`): the engine then makes HIP's choices (block sizes, twins).
    fn backend(&self) -> crate::gpu::GpuBackend {
        let amd = self
            .defines
            .iter()
            .any(|d| d == "EMU_WAVE64" || d == "EMU_HIP");
        if amd {
            crate::gpu::GpuBackend::Hip
        } else {
            crate::gpu::GpuBackend::Cuda
        }
    }
    fn describe(&self) -> String {
        "emulated device (kernels built by g++)".into()
    }
    fn uuid(&self) -> [u8; 16] {
        [0xe3; 16]
    }
    fn memory_info(&self) -> Result<MemoryInfo> {
        Ok(MemoryInfo {
            free: 8 << 30,
            total: 8 << 30,
        })
    }
    fn code_target(&self) -> String {
        format!("emu {}", self.defines.join(" "))
    }
    fn caches_kernels(&self) -> bool {
        false
    }

    fn alloc(&self, bytes: usize) -> Result<DevicePtr> {
        Ok(self.host_alloc(bytes)? as DevicePtr)
    }
    unsafe fn free(&self, ptr: DevicePtr) {
        self.host_free(ptr as usize);
    }
    fn alloc_pinned(&self, bytes: usize) -> Result<*mut u8> {
        self.host_alloc(bytes)
    }
    unsafe fn free_pinned(&self, ptr: *mut u8) {
        self.host_free(ptr as usize);
    }

    fn stream_create(&self) -> Result<StreamHandle> {
        Ok(StreamHandle::from_raw(self.handle()))
    }
    unsafe fn stream_destroy(&self, _stream: StreamHandle) {}
    unsafe fn stream_synchronize(&self, _stream: StreamHandle) -> Result<()> {
        Ok(())
    }

    fn event_create(&self) -> Result<EventHandle> {
        Ok(EventHandle::from_raw(self.handle()))
    }
    unsafe fn event_destroy(&self, _event: EventHandle) {}
    unsafe fn event_record(&self, _event: EventHandle, _stream: StreamHandle) -> Result<()> {
        Ok(())
    }
    fn legacy_stream(&self) -> StreamHandle {
        StreamHandle::from_raw(0)
    }
    unsafe fn stream_wait_event(&self, _stream: StreamHandle, _event: EventHandle) -> Result<()> {
        Ok(())
    }
    unsafe fn event_query(&self, _event: EventHandle) -> Result<bool> {
        Ok(true)
    }
    unsafe fn event_synchronize(&self, _event: EventHandle) -> Result<()> {
        Ok(())
    }
    unsafe fn launch_host_func(&self, _stream: StreamHandle, func: HostFn) -> Result<()> {
        func(); // the emulated device's work is done when queued
        Ok(())
    }
    fn timed_event_create(&self) -> Result<EventHandle> {
        Ok(EventHandle::from_raw(self.handle()))
    }
    unsafe fn event_elapsed_ms(&self, _start: EventHandle, _end: EventHandle) -> Result<f32> {
        Ok(0.0)
    }

    unsafe fn copy_2d(&self, copy: &Copy2d, _stream: StreamHandle) -> Result<()> {
        // SAFETY: the caller upholds the Driver method's contract (pointers the emulated device handed out).
        unsafe {
            let src = match copy.src {
                Memory::Host(p) => p,
                Memory::Device(d) => d as *const u8,
                Memory::Array(_) => return Err(error("copy_2d", "arrays are not emulated")),
            };
            for row in 0..copy.height {
                std::ptr::copy(
                    src.add(row * copy.src_pitch),
                    (copy.dst as *mut u8).add(row * copy.dst_pitch),
                    copy.width_bytes,
                );
            }
            Ok(())
        }
    }
    unsafe fn copy_to_host(
        &self,
        dst: *mut u8,
        src: DevicePtr,
        bytes: usize,
        _stream: StreamHandle,
    ) -> Result<()> {
        // SAFETY: the caller upholds the Driver method's contract (pointers the emulated device handed out).
        unsafe {
            std::ptr::copy(src as *const u8, dst, bytes);
            Ok(())
        }
    }
    unsafe fn memset_u32(
        &self,
        dst: DevicePtr,
        value: u32,
        count: usize,
        _stream: StreamHandle,
    ) -> Result<()> {
        // SAFETY: the caller upholds the Driver method's contract (pointers the emulated device handed out).
        unsafe {
            std::slice::from_raw_parts_mut(dst as *mut u32, count).fill(value);
            Ok(())
        }
    }

    fn compile(&self, source: &str, name: &str) -> Result<Vec<u8>> {
        // The name rides along for the library's file name.
        Ok(format!("{name}\n{source}").into_bytes())
    }
    fn module_load(&self, image: &[u8]) -> Result<ModuleHandle> {
        let text = std::str::from_utf8(image).map_err(|e| error("module_load", e.to_string()))?;
        let (name, source) = text
            .split_once('\n')
            .ok_or_else(|| error("module_load", "not an emulator image"))?;
        let source = self.patched(name, source)?;
        let lib = build::library(name, &source, &self.defines)?;
        let h = self.handle();
        self.state.lock().unwrap().modules.insert(h, lib);
        Ok(ModuleHandle::from_raw(h))
    }
    unsafe fn module_unload(&self, module: ModuleHandle) {
        self.state.lock().unwrap().modules.remove(&module.raw());
    }
    unsafe fn function(&self, module: ModuleHandle, name: &str) -> Result<FunctionHandle> {
        // SAFETY: the caller upholds the Driver method's contract (pointers the emulated device handed out).
        unsafe {
            let lib = self.state.lock().unwrap().modules[&module.raw()].clone();
            let c = CString::new(name).map_err(|e| error("function", e.to_string()))?;
            let kernel = (lib.lookup)(c.as_ptr())
                .ok_or_else(|| error("function", format!("no kernel '{name}'")))?;
            let h = self.handle();
            self.state
                .lock()
                .unwrap()
                .functions
                .insert(h, (lib, kernel));
            Ok(FunctionHandle::from_raw(h))
        }
    }
    unsafe fn launch(
        &self,
        function: FunctionHandle,
        dims: &LaunchDims,
        _stream: StreamHandle,
        args: &mut KernelArgs,
    ) -> Result<()> {
        // SAFETY: the caller upholds the Driver method's contract (pointers the emulated device handed out).
        unsafe {
            let (lib, kernel) = self.state.lock().unwrap().functions[&function.raw()].clone();
            let (g, b) = (dims.grid, dims.block);
            let d = [g.0, g.1, g.2, b.0, b.1, b.2];
            let mut message = [0 as c_char; 512];
            let rc = (lib.launch)(
                kernel,
                d.as_ptr(),
                dims.shared_bytes,
                args.params().as_mut_ptr(),
                message.as_mut_ptr(),
                message.len(),
            );
            if rc != 0 {
                let m = std::ffi::CStr::from_ptr(message.as_ptr());
                return Err(error("launch", m.to_string_lossy()));
            }
            Ok(())
        }
    }
}

fn not_emulated<T>(operation: &str) -> Result<T> {
    Err(error(operation, "not emulated"))
}

// SAFETY: nothing is imported; every call fails or does nothing.
unsafe impl Interop for EmuDriver {
    fn import_memory(
        &self,
        _fd: OwnedFd,
        _desc: &ExternalMemoryDesc,
    ) -> Result<ExternalMemoryHandle> {
        not_emulated("import_memory")
    }
    unsafe fn map_external_buffer(
        &self,
        _m: ExternalMemoryHandle,
        _offset: u64,
        _bytes: u64,
    ) -> Result<DevicePtr> {
        not_emulated("map_external_buffer")
    }
    unsafe fn free_external_buffer(&self, _ptr: DevicePtr) {}
    unsafe fn destroy_external_memory(&self, _memory: ExternalMemoryHandle) {}
    fn import_semaphore(&self, _fd: OwnedFd, _kind: SemaphoreKind) -> Result<SemaphoreHandle> {
        not_emulated("import_semaphore")
    }
    unsafe fn signal_semaphore(
        &self,
        _s: SemaphoreHandle,
        _value: u64,
        _stream: StreamHandle,
    ) -> Result<()> {
        not_emulated("signal_semaphore")
    }
    unsafe fn wait_semaphore(
        &self,
        _s: SemaphoreHandle,
        _value: u64,
        _stream: StreamHandle,
    ) -> Result<()> {
        not_emulated("wait_semaphore")
    }
    unsafe fn destroy_semaphore(&self, _semaphore: SemaphoreHandle) {}
    unsafe fn host_register(&self, _ptr: *mut u8, _bytes: usize) -> Result<()> {
        not_emulated("host_register")
    }
    unsafe fn host_device_pointer(&self, _ptr: *mut u8) -> Result<DevicePtr> {
        not_emulated("host_device_pointer")
    }
    unsafe fn host_unregister(&self, _ptr: *mut u8) {}
    unsafe fn export_dmabuf(&self, _ptr: DevicePtr, _bytes: usize) -> Result<OwnedFd> {
        not_emulated("export_dmabuf")
    }
    unsafe fn gl_register_image(&self, _texture: u32, _target: u32) -> Result<GraphicsHandle> {
        not_emulated("gl_register_image")
    }
    unsafe fn graphics_map(&self, _resource: GraphicsHandle, _stream: StreamHandle) -> Result<()> {
        not_emulated("graphics_map")
    }
    unsafe fn graphics_array(&self, _resource: GraphicsHandle) -> Result<ArrayHandle> {
        not_emulated("graphics_array")
    }
    unsafe fn graphics_unmap(
        &self,
        _resource: GraphicsHandle,
        _stream: StreamHandle,
    ) -> Result<()> {
        not_emulated("graphics_unmap")
    }
    unsafe fn graphics_unregister(&self, _resource: GraphicsHandle) {}
}

/// Building and caching the kernel libraries.
mod build {
    use super::*;

    /// Libraries loaded in this process, by hash: built once even when
    /// tests ask for the same one at the same time.
    type Slot = Arc<OnceLock<std::result::Result<Arc<Library>, String>>>;
    static LOADED: OnceLock<Mutex<HashMap<u64, Slot>>> = OnceLock::new();

    pub fn library(name: &str, source: &str, defines: &[String]) -> Result<Arc<Library>> {
        let source = rewrite_dynamic_shared(source);
        let defines = defines.join(" ");
        let key = fnv1a(&[
            source.as_bytes(),
            EMU_H.as_bytes(),
            RUNTIME.as_bytes(),
            FLAGS.join(" ").as_bytes(),
            compiler().as_bytes(),
            defines.as_bytes(),
        ]);
        let slot = LOADED
            .get_or_init(Mutex::default)
            .lock()
            .unwrap()
            .entry(key)
            .or_default()
            .clone();
        slot.get_or_init(|| {
            let stem = format!("{}-{key:016x}", name.trim_end_matches(".cu"));
            let path = cache_dir().join(format!("lib{stem}.so"));
            if !path.exists() {
                compile(&stem, &source, &defines, &path).map_err(|e| e.to_string())?;
            }
            open(&path)
        })
        .clone()
        .map_err(|e| error("module_load", format!("{name}: {e}")))
    }

    /// 64-bit FNV-1a (as the kernel cache's key; std's hasher may change).
    fn fnv1a(parts: &[&[u8]]) -> u64 {
        let mut h: u64 = 0xcbf29ce484222325;
        for part in parts {
            for &b in part.iter().chain(&[0xff]) {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x100000001b3);
            }
        }
        h
    }

    /// `target/emu-kernels` beside the test binary's `target/<profile>/deps`
    /// (or `$VMAFX_EMU_CACHE`, else the temporary directory).
    fn cache_dir() -> PathBuf {
        if let Some(d) = std::env::var_os("VMAFX_EMU_CACHE") {
            return PathBuf::from(d);
        }
        let target = std::env::current_exe()
            .ok()
            .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.to_path_buf()));
        match target {
            Some(t) if t.join("CACHEDIR.TAG").exists() => t.join("emu-kernels"),
            _ => std::env::temp_dir().join("vmafx-emu-kernels"),
        }
    }

    /// `extern __shared__ T name[];` (dynamic shared memory, the same
    /// buffer for every block) as a static array of the largest size.
    fn rewrite_dynamic_shared(source: &str) -> String {
        source
            .lines()
            .map(|line| match line.trim().strip_prefix("extern __shared__") {
                Some(rest) if rest.trim_end().ends_with("[];") => {
                    let decl = rest.trim_end().trim_end_matches("[];");
                    format!("EMU_DYNAMIC_SHARED {decl}[EMU_DYNAMIC_SHARED_BYTES];")
                }
                _ => line.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn gxx(args: &[&str], dir: &Path, defines: &str) -> Result<Vec<u8>> {
        let cxx = compiler();
        let mut cmd = Command::new(&cxx);
        cmd.args(args).current_dir(dir);
        for d in defines.split_whitespace() {
            cmd.arg(format!("-D{d}"));
        }
        let out = cmd
            .output()
            .map_err(|e| error("module_load", format!("{cxx}: {e}")))?;
        if !out.status.success() {
            let log = String::from_utf8_lossy(&out.stderr);
            let tail: String = log.lines().take(40).collect::<Vec<_>>().join("\n");
            return Err(error("module_load", format!("{cxx} failed:\n{tail}")));
        }
        Ok(out.stdout)
    }

    fn compile(stem: &str, source: &str, defines: &str, path: &Path) -> Result<()> {
        let io = |e: std::io::Error| error("module_load", e.to_string());
        let dir = path
            .parent()
            .unwrap()
            .join(format!("build-{stem}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(io)?;
        std::fs::write(dir.join("emu.h"), EMU_H).map_err(io)?;
        std::fs::write(dir.join("runtime.cpp"), RUNTIME).map_err(io)?;
        std::fs::write(dir.join("kernel.cu"), source).map_err(io)?;
        // The kernels as the preprocessor leaves them (macros that define
        // kernels expanded; `__global__` kept, undefined here).
        let pre = gxx(&["-E", "-P", "-x", "c++", "kernel.cu"], &dir, defines)?;
        let names = kernel_names(&String::from_utf8_lossy(&pre));
        let mut unit = format!("#include \"emu.h\"\n#line 1 \"{stem}.cu\"\n{source}\n");
        unit.push_str("const emu::Entry emu::entries[] = {\n");
        for n in &names {
            unit.push_str(&format!("EMU_KERNEL({n})\n"));
        }
        unit.push_str("{nullptr, nullptr}};\n");
        std::fs::write(dir.join("unit.cpp"), unit).map_err(io)?;
        let tmp = format!("lib{stem}.so.tmp");
        let mut args = FLAGS.to_vec();
        args.extend(["unit.cpp", "runtime.cpp", "-o", &tmp]);
        gxx(&args, &dir, defines)?;
        // Atomic: another process may build the same library.
        std::fs::rename(dir.join(&tmp), path).map_err(io)?;
        let _ = std::fs::remove_dir_all(&dir);
        Ok(())
    }

    /// The names of `__global__` functions: `__global__ void
    /// [__launch_bounds__(...)] name(`.
    pub(super) fn kernel_names(pre: &str) -> Vec<String> {
        let mut names = Vec::new();
        for (at, _) in pre.match_indices("__global__") {
            let mut rest = pre[at + "__global__".len()..].trim_start();
            rest = rest.strip_prefix("void").unwrap_or(rest).trim_start();
            if let Some(r) = rest.strip_prefix("__launch_bounds__") {
                rest = r.split_once(')').map_or("", |(_, r)| r).trim_start();
            }
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && rest[name.len()..].trim_start().starts_with('(') {
                names.push(name);
            }
        }
        names
    }

    fn open(path: &Path) -> std::result::Result<Arc<Library>, String> {
        // SAFETY: our own library; its initialisers only set up statics.
        unsafe {
            let lib = libloading::Library::new(path).map_err(|e| e.to_string())?;
            let lookup = *lib
                .get::<LookupFn>(b"emu_kernel\0")
                .map_err(|e| e.to_string())?;
            let launch = *lib
                .get::<LaunchFn>(b"emu_launch\0")
                .map_err(|e| e.to_string())?;
            Ok(Arc::new(Library {
                lookup,
                launch,
                _lib: lib,
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::build::kernel_names;

    #[test]
    fn kernel_names_are_found_behind_launch_bounds() {
        let pre = "extern \"C\" __global__ void __launch_bounds__(256, 3) adm_a(int x) {}\n\
                   extern \"C\" __global__ void psnr_b(const int *p) {}\n\
                   #define X __global__\n";
        assert_eq!(kernel_names(pre), ["adm_a", "psnr_b"]);
    }
}
