//! HIP's error codes and names. HIP numbered its errors after CUDA's, so a
//! CUDA driver result whose number HIP defines passes through unchanged
//! (`CUDA_ERROR_NOT_READY` 600 is `hipErrorNotReady` 600); any other
//! becomes `hipErrorUnknown`, with the CUDA name printed to stderr.

use crate::{cu, hip};
use std::ffi::{c_char, CStr};

/// The HIP errors a CUDA driver result can map to, with HIP's names
/// (ROCm 6's `hipError_t`; the runtime-API-only codes CUDA's driver never
/// returns are left out).
pub const NAMES: &[(hip::hipError_t, &CStr)] = &[
    (hip::hipError_t_hipSuccess, c"hipSuccess"),
    (
        hip::hipError_t_hipErrorInvalidValue,
        c"hipErrorInvalidValue",
    ),
    (hip::hipError_t_hipErrorOutOfMemory, c"hipErrorOutOfMemory"),
    (
        hip::hipError_t_hipErrorNotInitialized,
        c"hipErrorNotInitialized",
    ),
    (
        hip::hipError_t_hipErrorDeinitialized,
        c"hipErrorDeinitialized",
    ),
    (
        hip::hipError_t_hipErrorProfilerDisabled,
        c"hipErrorProfilerDisabled",
    ),
    (
        hip::hipError_t_hipErrorInsufficientDriver,
        c"hipErrorInsufficientDriver",
    ),
    (hip::hipError_t_hipErrorNoDevice, c"hipErrorNoDevice"),
    (
        hip::hipError_t_hipErrorInvalidDevice,
        c"hipErrorInvalidDevice",
    ),
    (
        hip::hipError_t_hipErrorInvalidImage,
        c"hipErrorInvalidImage",
    ),
    (
        hip::hipError_t_hipErrorInvalidContext,
        c"hipErrorInvalidContext",
    ),
    (
        hip::hipError_t_hipErrorContextAlreadyCurrent,
        c"hipErrorContextAlreadyCurrent",
    ),
    (hip::hipError_t_hipErrorMapFailed, c"hipErrorMapFailed"),
    (hip::hipError_t_hipErrorUnmapFailed, c"hipErrorUnmapFailed"),
    (
        hip::hipError_t_hipErrorArrayIsMapped,
        c"hipErrorArrayIsMapped",
    ),
    (
        hip::hipError_t_hipErrorAlreadyMapped,
        c"hipErrorAlreadyMapped",
    ),
    (
        hip::hipError_t_hipErrorNoBinaryForGpu,
        c"hipErrorNoBinaryForGpu",
    ),
    (
        hip::hipError_t_hipErrorAlreadyAcquired,
        c"hipErrorAlreadyAcquired",
    ),
    (hip::hipError_t_hipErrorNotMapped, c"hipErrorNotMapped"),
    (
        hip::hipError_t_hipErrorNotMappedAsArray,
        c"hipErrorNotMappedAsArray",
    ),
    (
        hip::hipError_t_hipErrorNotMappedAsPointer,
        c"hipErrorNotMappedAsPointer",
    ),
    (
        hip::hipError_t_hipErrorECCNotCorrectable,
        c"hipErrorECCNotCorrectable",
    ),
    (
        hip::hipError_t_hipErrorUnsupportedLimit,
        c"hipErrorUnsupportedLimit",
    ),
    (
        hip::hipError_t_hipErrorContextAlreadyInUse,
        c"hipErrorContextAlreadyInUse",
    ),
    (
        hip::hipError_t_hipErrorPeerAccessUnsupported,
        c"hipErrorPeerAccessUnsupported",
    ),
    (
        hip::hipError_t_hipErrorInvalidKernelFile,
        c"hipErrorInvalidKernelFile",
    ),
    (
        hip::hipError_t_hipErrorInvalidGraphicsContext,
        c"hipErrorInvalidGraphicsContext",
    ),
    (
        hip::hipError_t_hipErrorInvalidSource,
        c"hipErrorInvalidSource",
    ),
    (
        hip::hipError_t_hipErrorFileNotFound,
        c"hipErrorFileNotFound",
    ),
    (
        hip::hipError_t_hipErrorSharedObjectSymbolNotFound,
        c"hipErrorSharedObjectSymbolNotFound",
    ),
    (
        hip::hipError_t_hipErrorSharedObjectInitFailed,
        c"hipErrorSharedObjectInitFailed",
    ),
    (
        hip::hipError_t_hipErrorOperatingSystem,
        c"hipErrorOperatingSystem",
    ),
    (
        hip::hipError_t_hipErrorInvalidHandle,
        c"hipErrorInvalidHandle",
    ),
    (
        hip::hipError_t_hipErrorIllegalState,
        c"hipErrorIllegalState",
    ),
    (hip::hipError_t_hipErrorNotFound, c"hipErrorNotFound"),
    (hip::hipError_t_hipErrorNotReady, c"hipErrorNotReady"),
    (
        hip::hipError_t_hipErrorIllegalAddress,
        c"hipErrorIllegalAddress",
    ),
    (
        hip::hipError_t_hipErrorLaunchOutOfResources,
        c"hipErrorLaunchOutOfResources",
    ),
    (
        hip::hipError_t_hipErrorLaunchTimeOut,
        c"hipErrorLaunchTimeOut",
    ),
    (
        hip::hipError_t_hipErrorPeerAccessAlreadyEnabled,
        c"hipErrorPeerAccessAlreadyEnabled",
    ),
    (
        hip::hipError_t_hipErrorPeerAccessNotEnabled,
        c"hipErrorPeerAccessNotEnabled",
    ),
    (
        hip::hipError_t_hipErrorSetOnActiveProcess,
        c"hipErrorSetOnActiveProcess",
    ),
    (
        hip::hipError_t_hipErrorContextIsDestroyed,
        c"hipErrorContextIsDestroyed",
    ),
    (hip::hipError_t_hipErrorAssert, c"hipErrorAssert"),
    (
        hip::hipError_t_hipErrorHostMemoryAlreadyRegistered,
        c"hipErrorHostMemoryAlreadyRegistered",
    ),
    (
        hip::hipError_t_hipErrorHostMemoryNotRegistered,
        c"hipErrorHostMemoryNotRegistered",
    ),
    (
        hip::hipError_t_hipErrorLaunchFailure,
        c"hipErrorLaunchFailure",
    ),
    (
        hip::hipError_t_hipErrorCooperativeLaunchTooLarge,
        c"hipErrorCooperativeLaunchTooLarge",
    ),
    (
        hip::hipError_t_hipErrorNotSupported,
        c"hipErrorNotSupported",
    ),
    (
        hip::hipError_t_hipErrorStreamCaptureUnsupported,
        c"hipErrorStreamCaptureUnsupported",
    ),
    (
        hip::hipError_t_hipErrorStreamCaptureInvalidated,
        c"hipErrorStreamCaptureInvalidated",
    ),
    (
        hip::hipError_t_hipErrorStreamCaptureMerge,
        c"hipErrorStreamCaptureMerge",
    ),
    (
        hip::hipError_t_hipErrorStreamCaptureUnmatched,
        c"hipErrorStreamCaptureUnmatched",
    ),
    (
        hip::hipError_t_hipErrorStreamCaptureUnjoined,
        c"hipErrorStreamCaptureUnjoined",
    ),
    (
        hip::hipError_t_hipErrorStreamCaptureIsolation,
        c"hipErrorStreamCaptureIsolation",
    ),
    (
        hip::hipError_t_hipErrorStreamCaptureImplicit,
        c"hipErrorStreamCaptureImplicit",
    ),
    (
        hip::hipError_t_hipErrorCapturedEvent,
        c"hipErrorCapturedEvent",
    ),
    (
        hip::hipError_t_hipErrorStreamCaptureWrongThread,
        c"hipErrorStreamCaptureWrongThread",
    ),
    (hip::hipError_t_hipErrorUnknown, c"hipErrorUnknown"),
];

/// HIP's name of `code` (`hipErrorUnknown` for a code HIP does not define).
pub fn name(code: hip::hipError_t) -> &'static CStr {
    NAMES
        .iter()
        .find(|(c, _)| *c == code)
        .map_or(c"hipErrorUnknown", |(_, n)| n)
}

/// The HIP error of a CUDA driver result.
pub fn from_cuda(result: cu::CUresult) -> hip::hipError_t {
    let code = result as u32;
    if NAMES.iter().any(|(c, _)| *c == code) {
        return code;
    }
    let mut cuda_name: *const c_char = std::ptr::null();
    // SAFETY: cuGetErrorName writes a pointer to a static string.
    let text = unsafe {
        if cu::cuGetErrorName(result, &mut cuda_name) == cu::CUresult::CUDA_SUCCESS
            && !cuda_name.is_null()
        {
            CStr::from_ptr(cuda_name).to_string_lossy().into_owned()
        } else {
            format!("CUDA error {code}")
        }
    };
    eprintln!("hip-over-cuda: {text} ({code}) has no HIP counterpart: answering hipErrorUnknown");
    hip::hipError_t_hipErrorUnknown
}

/// `Ok` for `CUDA_SUCCESS`, else the HIP error.
pub fn check(result: cu::CUresult) -> Result<(), hip::hipError_t> {
    if result == cu::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(from_cuda(result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where both define a number it means the same: spot checks of the
    /// codes vmafx's HIP driver tells apart or names in its messages.
    #[test]
    fn cuda_results_keep_their_hip_numbers() {
        use cu::CUresult as R;
        for (cuda, hip_code) in [
            (R::CUDA_SUCCESS, hip::hipError_t_hipSuccess),
            (
                R::CUDA_ERROR_INVALID_VALUE,
                hip::hipError_t_hipErrorInvalidValue,
            ),
            (
                R::CUDA_ERROR_OUT_OF_MEMORY,
                hip::hipError_t_hipErrorOutOfMemory,
            ),
            (
                R::CUDA_ERROR_NOT_INITIALIZED,
                hip::hipError_t_hipErrorNotInitialized,
            ),
            (R::CUDA_ERROR_NO_DEVICE, hip::hipError_t_hipErrorNoDevice),
            (
                R::CUDA_ERROR_INVALID_DEVICE,
                hip::hipError_t_hipErrorInvalidDevice,
            ),
            (
                R::CUDA_ERROR_INVALID_IMAGE,
                hip::hipError_t_hipErrorInvalidImage,
            ),
            (
                R::CUDA_ERROR_INVALID_CONTEXT,
                hip::hipError_t_hipErrorInvalidContext,
            ),
            (
                R::CUDA_ERROR_OPERATING_SYSTEM,
                hip::hipError_t_hipErrorOperatingSystem,
            ),
            (
                R::CUDA_ERROR_INVALID_HANDLE,
                hip::hipError_t_hipErrorInvalidHandle,
            ),
            (R::CUDA_ERROR_NOT_FOUND, hip::hipError_t_hipErrorNotFound),
            (R::CUDA_ERROR_NOT_READY, hip::hipError_t_hipErrorNotReady),
            (
                R::CUDA_ERROR_ILLEGAL_ADDRESS,
                hip::hipError_t_hipErrorIllegalAddress,
            ),
            (
                R::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                hip::hipError_t_hipErrorLaunchOutOfResources,
            ),
            (
                R::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                hip::hipError_t_hipErrorHostMemoryAlreadyRegistered,
            ),
            (
                R::CUDA_ERROR_LAUNCH_FAILED,
                hip::hipError_t_hipErrorLaunchFailure,
            ),
            (
                R::CUDA_ERROR_NOT_SUPPORTED,
                hip::hipError_t_hipErrorNotSupported,
            ),
            (R::CUDA_ERROR_UNKNOWN, hip::hipError_t_hipErrorUnknown),
        ] {
            assert_eq!(cuda as u32, hip_code, "{cuda:?}");
            assert!(NAMES.iter().any(|(c, _)| *c == hip_code), "{cuda:?}");
        }
    }

    #[test]
    fn names_are_hips_and_unique() {
        assert_eq!(name(hip::hipError_t_hipErrorNotReady), c"hipErrorNotReady");
        assert_eq!(name(801), c"hipErrorNotSupported");
        assert_eq!(name(12345), c"hipErrorUnknown");
        for (i, (code, n)) in NAMES.iter().enumerate() {
            assert!(n.to_str().unwrap().starts_with("hip"), "{n:?}");
            assert!(
                NAMES[i + 1..].iter().all(|(c, _)| c != code),
                "{code} listed twice"
            );
        }
    }
}
