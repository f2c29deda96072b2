//! GPU backends: CUDA (NVIDIA) and HIP (AMD) behind one backend-neutral
//! device layer.
//!
//! * `driver`: the small trait a vendor runtime implements; [`cuda`] and
//!   [`hip`] are the only files that call FFI, and load their runtime at run
//!   time (a machine without it gets [`Error::BackendUnavailable`]).
//! * [`device`]: RAII buffers, pinned buffers, streams, events, modules;
//!   [`Gpu::upload`] for tables.
//! * `args`: `args::KernelArgs`, a launch's typed arguments.
//! * `slice`: `slice::DeviceSlice`, bounds-checked views of device
//!   memory (sub-ranges, kernel arguments).
//! * [`external`]: RAII imports of a producer's frames: external memory and
//!   semaphores (Vulkan), registered host memory, GL textures.
//! * `kernels`: kernels/*.cu compiled at run time, cached on disk.
//! * `kernel_times`: device time per kernel, for tuning: a driver that
//!   wraps the device's and times each launch.
//! * `planes`: a frame's planes uploaded once into context-owned buffers.
//! * [`feature`]: GPU extractors, same names and outputs as the CPU ones.

pub(crate) mod args;
pub(crate) mod bind;
#[cfg(test)]
mod contract_tests;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod device;
pub(crate) mod driver;
#[cfg(test)]
pub(crate) mod emu;
#[cfg(test)]
mod emu_tests;
pub mod external;
pub mod feature;
#[cfg(feature = "hip")]
pub mod hip;
#[cfg(test)]
mod import_contract_tests;
pub(crate) mod kernel_times;
pub(crate) mod kernels;
pub(crate) mod lanes;
#[cfg(test)]
pub(crate) mod mock;
pub(crate) mod planes;
pub mod pool;
mod retire;
pub(crate) mod slice;

pub use device::Gpu;
/// A 2D copy a producer queues on a [`device::Stream`] (`Stream::copy_2d`).
pub use driver::{Copy2d, Memory as CopySource};
/// What [`Gpu::with_kernel_times`] measures.
pub use kernel_times::{KernelTime, KernelTimes};

use crate::error::{Error, Result};
use std::fmt;

/// Which GPU runtime to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuBackend {
    Cuda,
    Hip,
}

impl GpuBackend {
    /// The runtime's own name (`CUDA`, `HIP`), for messages.
    pub fn runtime_name(self) -> &'static str {
        match self {
            Self::Cuda => "CUDA",
            Self::Hip => "HIP",
        }
    }
}

impl fmt::Display for GpuBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Cuda => "cuda",
            Self::Hip => "hip",
        })
    }
}

/// Which device of a backend: by index, or by UUID (`GPU-xxxxxxxx-...`
/// as `nvidia-smi -L` prints it, with or without the prefix and dashes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSelector {
    Index(u32),
    Uuid(String),
}

impl Default for DeviceSelector {
    fn default() -> Self {
        Self::Index(0)
    }
}

impl DeviceSelector {
    /// Parses a number as an index, anything else as a UUID.
    pub fn parse(s: &str) -> Result<Self> {
        if let Ok(i) = s.parse() {
            return Ok(Self::Index(i));
        }
        let hex = normalize_uuid(s);
        if hex.len() == 32 && hex.chars().all(|c| c.is_ascii_hexdigit()) {
            Ok(Self::Uuid(hex))
        } else {
            Err(Error::InvalidArgument(format!(
                "device '{s}': expected an index or a UUID like GPU-01234567-89ab-cdef-0123-456789abcdef"
            )))
        }
    }

    /// Does the device with this index and (formatted) UUID match?
    pub fn matches(&self, index: u32, uuid: &str) -> bool {
        match self {
            Self::Index(i) => *i == index,
            Self::Uuid(u) => *u == normalize_uuid(uuid),
        }
    }
}

impl fmt::Display for DeviceSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Index(i) => write!(f, "index {i}"),
            Self::Uuid(u) => write!(f, "UUID {u}"),
        }
    }
}

fn normalize_uuid(s: &str) -> String {
    let s = s.trim();
    let s = s.strip_prefix("GPU-").unwrap_or(s);
    s.chars()
        .filter(|&c| c != '-')
        .collect::<String>()
        .to_ascii_lowercase()
}

/// `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, as nvidia-smi prints UUIDs.
#[cfg_attr(not(any(feature = "cuda", feature = "hip")), allow(dead_code))]
pub(crate) fn format_uuid(bytes: &[u8; 16]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// Opens a device of `backend`. Errors name what is missing: the runtime
/// library, a device, or the selected device.
pub fn open(backend: GpuBackend, selector: &DeviceSelector) -> Result<Gpu> {
    match backend {
        #[cfg(feature = "cuda")]
        GpuBackend::Cuda => Ok(Gpu::new(std::sync::Arc::new(cuda::CudaDriver::open(
            selector,
        )?))),
        #[cfg(feature = "hip")]
        GpuBackend::Hip => Ok(Gpu::new(std::sync::Arc::new(hip::HipDriver::open(
            selector,
        )?))),
        #[allow(unreachable_patterns)] // with both features on
        _ => {
            let _ = selector;
            Err(not_built(backend))
        }
    }
}

/// The first device that opens: CUDA, then HIP (`--backend auto`). When
/// neither does, both reasons.
pub fn open_any(selector: &DeviceSelector) -> std::result::Result<Gpu, Box<(Error, Error)>> {
    match open(GpuBackend::Cuda, selector) {
        Ok(g) => Ok(g),
        Err(cuda) => open(GpuBackend::Hip, selector).map_err(|hip| Box::new((cuda, hip))),
    }
}

/// The error of a backend this build left out.
#[allow(dead_code)] // with every backend built
fn not_built(backend: GpuBackend) -> Error {
    let (api, feature) = match backend {
        GpuBackend::Cuda => (crate::error::GpuApi::Cuda, "cuda"),
        GpuBackend::Hip => (crate::error::GpuApi::Hip, "hip"),
    };
    Error::BackendUnavailable {
        backend: api,
        reason: format!("this vmafx was built without the `{feature}` Cargo feature"),
    }
}

/// Opens the CUDA device of a context the producer created and keeps
/// working in that context, so the producer's device pointers and events
/// are valid for vmafx as they are.
///
/// # Safety
/// `context` must be a valid `CUcontext` that outlives the returned [`Gpu`]
/// and every context built on it; vmafx never destroys it.
#[cfg(feature = "cuda")]
pub unsafe fn open_cuda_context(context: *mut std::ffi::c_void) -> Result<Gpu> {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        let driver = cuda::CudaDriver::with_context(context as cudarc::driver::sys::CUcontext)?;
        Ok(Gpu::new(std::sync::Arc::new(driver)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_parse_indices_and_uuids() {
        assert_eq!(
            DeviceSelector::parse("1").unwrap(),
            DeviceSelector::Index(1)
        );
        let s = DeviceSelector::parse("GPU-0123ABCD-89ab-cdef-0123-456789abcdef").unwrap();
        let bytes = [
            0x01, 0x23, 0xab, 0xcd, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
            0xcd, 0xef,
        ];
        assert!(s.matches(5, &format_uuid(&bytes)));
        assert!(!s.matches(0, &format_uuid(&[0; 16])));
        assert!(DeviceSelector::parse("GPU-xyz").is_err());
    }

    #[test]
    #[cfg(all(feature = "cuda", feature = "hip"))]
    fn missing_runtime_is_a_clear_error() {
        if !cuda::driver_present() {
            let e = open(GpuBackend::Cuda, &DeviceSelector::default())
                .err()
                .unwrap();
            assert!(e.to_string().contains("libcuda"), "{e}");
        }
        if !hip::runtime_present() {
            let e = open(GpuBackend::Hip, &DeviceSelector::default())
                .err()
                .unwrap();
            assert!(e.to_string().contains("libamdhip64"), "{e}");
        }
    }
}
