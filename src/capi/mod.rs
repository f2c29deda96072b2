//! libvmaf's C ABI (`libvmaf.h`, `picture.h`, `model.h`, `feature.h` of
//! libvmaf 3.2), so every libvmaf client (FFmpeg first) links vmafx instead
//! of libvmaf without a change to its source; plus `vmafx_error_message`,
//! the message of the last failed call on the calling thread.
//!
//! Built only with the `capi` feature: the exported `vmaf_*` symbols would
//! otherwise clash with a real libvmaf linked into the same Rust program.
//! `capi/install.sh` builds the shared and static library, the headers
//! (`include/`) and the pkg-config file; `docs/c-api.md` says how to use them.
//!
//! Every entry point checks its arguments, returns 0 or a negative errno as
//! libvmaf does, never lets a panic cross into C, and records a message
//! naming what was wrong ([`error`](crate::capi::error)). Layouts are `#[repr(C)]` types
//! ([`types`](crate::capi::types)); the header declares the same, and CI compiles a C program
//! against libvmaf's own headers that asserts every size and offset.

pub mod context;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod dict;

pub mod error;
pub mod handles;
pub mod model;
pub mod picture;
pub mod types;
pub mod vmafx;

#[cfg(test)]
mod fuzz_tests;

/// The version libvmaf clients see (`vmaf_version`, the JSON `version`):
/// the libvmaf release whose ABI and scores vmafx reproduces.
pub const LIBVMAF_VERSION: &std::ffi::CStr = c"3.2.0";

/// `const char *vmaf_version(void)`.
#[no_mangle]
pub extern "C" fn vmaf_version() -> *const std::ffi::c_char {
    LIBVMAF_VERSION.as_ptr()
}
