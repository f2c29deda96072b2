//! The library's error type. Every message names the thing that was wrong.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong. New kinds may be added, so a `match` needs a `_` arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A caller-supplied value is out of range or malformed.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// An I/O error while reading or writing a named file.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A video file ended early or holds data that does not fit its format.
    #[error("{path}: frame {frame}: {reason}")]
    BadInput {
        path: PathBuf,
        frame: u64,
        reason: String,
    },

    /// A file header (y4m) could not be understood.
    #[error("{path}: bad header: {reason}")]
    BadHeader { path: PathBuf, reason: String },

    /// No feature extractor has this name.
    #[error("unknown feature extractor '{name}' (known: {known})")]
    UnknownFeature { name: String, known: String },

    /// An extractor or model option is unknown or has a bad value.
    #[error("{owner}: option '{option}': {reason}")]
    BadOption {
        owner: String,
        option: String,
        reason: String,
    },

    /// No built-in model has this version name.
    #[error("unknown model version '{name}' (built in: {known})")]
    UnknownModel { name: String, known: String },

    /// A model file could not be parsed or is inconsistent.
    #[error("model {name}: {reason}")]
    BadModel { name: String, reason: String },

    /// The reference and distorted pictures do not match, or a picture does
    /// not suit an extractor.
    #[error("picture mismatch: {0}")]
    PictureMismatch(String),

    /// A feature that a model needs was not produced for a frame.
    #[error("frame {frame}: feature '{feature}' missing for model {model}")]
    MissingFeature {
        model: String,
        feature: String,
        frame: u32,
    },

    /// An extractor cannot run on this input.
    #[error("{extractor}: {reason}")]
    Extractor { extractor: String, reason: String },

    /// A backend is not available on this machine.
    #[error("backend {} unavailable: {reason}", backend.short_name())]
    BackendUnavailable { backend: GpuApi, reason: String },

    /// A producer's frame cannot be imported: the message names the memory
    /// kind, pixel format, plane and modifier, and why.
    #[error(
        "{}",
        crate::import::describe_import(memory, format, plane, modifier, reason)
    )]
    Import {
        memory: String,
        format: String,
        plane: Option<usize>,
        modifier: Option<String>,
        reason: String,
    },

    /// A fence was not signalled in time.
    #[error("{fence} not signalled within {waited_ms} ms")]
    FenceTimeout { fence: String, waited_ms: u64 },

    /// A GPU or graphics runtime call, or a kernel compile, failed.
    #[error("{api}: {operation} failed: {reason}")]
    Gpu {
        /// The runtime that answered.
        api: GpuApi,
        /// The call or step, e.g. `cuMemAlloc` or `import_memory`.
        operation: String,
        /// The answer, as a caller can act on it.
        code: GpuCode,
        /// The answer in words (the runtime's name and number).
        reason: String,
    },

    /// vmafx broke one of its own rules (a bug: please report it). Never a
    /// fault of the input or the device.
    #[error("internal error (a vmafx bug): {0}")]
    Internal(String),
}

/// The runtime a [`Error::Gpu`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GpuApi {
    /// The CUDA driver API or NVRTC.
    Cuda,
    /// The HIP runtime or hiprtc.
    Hip,
    /// A producer's Vulkan device.
    Vulkan,
    /// The GL context current on the submitting thread.
    Gl,
    /// The test drivers (mock, emulated device).
    #[doc(hidden)]
    Mock,
    #[doc(hidden)]
    Emulated,
}

impl GpuApi {
    /// The name as the command line spells backends (`--backend cuda`).
    pub fn short_name(&self) -> &'static str {
        match self {
            GpuApi::Cuda => "cuda",
            GpuApi::Hip => "hip",
            GpuApi::Vulkan => "vulkan",
            GpuApi::Gl => "gl",
            GpuApi::Mock => "mock",
            GpuApi::Emulated => "emu",
        }
    }
}

impl std::fmt::Display for GpuApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            GpuApi::Cuda => "CUDA",
            GpuApi::Hip => "HIP",
            GpuApi::Vulkan => "Vulkan",
            GpuApi::Gl => "GL",
            GpuApi::Mock => "mock",
            GpuApi::Emulated => "emu",
        })
    }
}

/// What a failed GPU call means for the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GpuCode {
    /// Device (or pinned host) memory ran out: fewer frames in flight or a
    /// smaller picture may fit.
    OutOfMemory,
    /// The device, driver or handle type does not support the operation
    /// (e.g. a dma-buf import on a driver without it).
    NotSupported,
    /// A handle (event, memory, context) is not valid in this context.
    InvalidHandle,
    /// The device faulted or went away; the context cannot be used again.
    DeviceLost,
    /// The runtime compiler (NVRTC, hiprtc) refused a kernel: the message
    /// holds its log.
    KernelCompile,
    /// Any other answer, with the runtime's own code.
    Other(i64),
}

impl GpuCode {
    /// The meaning of a CUDA driver (`CUresult`) or HIP (`hipError_t`)
    /// code: HIP uses CUDA's numbers for these.
    pub fn from_cuda_or_hip(code: i64) -> Self {
        match code {
            2 => GpuCode::OutOfMemory,
            801 => GpuCode::NotSupported,
            // invalid context, invalid handle, context destroyed
            201 | 400 | 709 => GpuCode::InvalidHandle,
            // device unavailable, uncorrectable ECC, illegal address, hardware
            // stack, illegal instruction, misaligned or invalid address space,
            // invalid PC, launch failed: the context is unusable after these
            46 | 214 | 700 | 714..=719 => GpuCode::DeviceLost,
            other => GpuCode::Other(other),
        }
    }

    /// The meaning of a Vulkan `VkResult`.
    pub fn from_vulkan(code: i32) -> Self {
        match code {
            -1 | -2 => GpuCode::OutOfMemory,
            -4 => GpuCode::DeviceLost,
            -7 | -8 | -11 => GpuCode::NotSupported,
            other => GpuCode::Other(other.into()),
        }
    }
}

impl Error {
    /// A GPU error without a runtime code (a step of ours that the runtime
    /// could not do, e.g. a missing entry point).
    pub(crate) fn gpu(
        api: GpuApi,
        operation: impl Into<String>,
        code: GpuCode,
        reason: impl Into<String>,
    ) -> Self {
        Error::Gpu {
            api,
            operation: operation.into(),
            code,
            reason: reason.into(),
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_codes_map_to_what_a_caller_can_act_on() {
        assert_eq!(GpuCode::from_cuda_or_hip(2), GpuCode::OutOfMemory);
        assert_eq!(GpuCode::from_cuda_or_hip(801), GpuCode::NotSupported);
        assert_eq!(GpuCode::from_cuda_or_hip(400), GpuCode::InvalidHandle);
        assert_eq!(GpuCode::from_cuda_or_hip(700), GpuCode::DeviceLost);
        assert_eq!(GpuCode::from_cuda_or_hip(719), GpuCode::DeviceLost);
        assert_eq!(GpuCode::from_cuda_or_hip(1), GpuCode::Other(1));
        assert_eq!(GpuCode::from_vulkan(-2), GpuCode::OutOfMemory);
        assert_eq!(GpuCode::from_vulkan(-4), GpuCode::DeviceLost);
        assert_eq!(GpuCode::from_vulkan(-3), GpuCode::Other(-3));
    }

    #[test]
    fn gpu_errors_read_as_before() {
        let e = Error::gpu(
            GpuApi::Cuda,
            "cuMemAlloc",
            GpuCode::OutOfMemory,
            "CUDA_ERROR_OUT_OF_MEMORY (2)",
        );
        assert_eq!(
            e.to_string(),
            "CUDA: cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2)"
        );
    }
}
