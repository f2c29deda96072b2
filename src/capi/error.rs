//! How C calls fail: a negative errno (libvmaf's convention), a message kept
//! per thread for `vmafx_error_message`, and no Rust panic crossing into C.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::Error;

/// The errno values libvmaf returns (Linux numbers).
pub const EINVAL: c_int = 22;
pub const ENOMEM: c_int = 12;
pub const EIO: c_int = 5;
pub const ENOTSUP: c_int = 95;
pub const EAGAIN: c_int = 11;

/// A failed C call: the errno to return (positive) and what was wrong.
#[derive(Debug)]
pub struct CError {
    pub errno: c_int,
    pub message: String,
}

pub type CResult<T = ()> = std::result::Result<T, CError>;

/// An invalid argument, with what was wrong.
pub fn invalid(message: impl Into<String>) -> CError {
    CError {
        errno: EINVAL,
        message: message.into(),
    }
}

impl From<Error> for CError {
    fn from(e: Error) -> Self {
        let errno = match &e {
            Error::Gpu {
                code: crate::error::GpuCode::OutOfMemory,
                ..
            } => ENOMEM,
            Error::Gpu { .. } => EIO,
            // libvmaf answers a file it cannot open with -EINVAL.
            Error::BackendUnavailable { .. } => ENOTSUP,
            _ => EINVAL,
        };
        CError {
            errno,
            message: e.to_string(),
        }
    }
}

thread_local! {
    static LAST: RefCell<CString> = RefCell::new(CString::default());
}

/// The log level of the process (libvmaf's is global too): errors are
/// printed to stderr when it is at least `VMAF_LOG_LEVEL_ERROR`.
static LOG_LEVEL: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(1);

pub fn set_log_level(level: c_int) {
    LOG_LEVEL.store(level, std::sync::atomic::Ordering::Relaxed);
}

fn record(function: &str, message: &str) {
    let text = format!("{function}: {message}");
    if LOG_LEVEL.load(std::sync::atomic::Ordering::Relaxed) >= 1 {
        eprintln!("libvmaf (vmafx): {text}");
    }
    let text = CString::new(text.replace('\0', " ")).unwrap_or_default();
    LAST.with(|m| *m.borrow_mut() = text);
}

/// Runs the body of C entry point `function`: 0 on success, `-errno` on
/// failure (the message recorded), `-EINVAL` if it panicked.
pub fn guard(function: &str, body: impl FnOnce() -> CResult) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            record(function, &e.message);
            -e.errno
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            record(
                function,
                &format!("internal error (a bug in vmafx): {what}"),
            );
            -EINVAL
        }
    }
}

/// `const char *vmafx_error_message(void)`: what the last failed call on
/// this thread said ("" if none failed yet). Valid until the next failing
/// call on this thread.
#[no_mangle]
pub extern "C" fn vmafx_error_message() -> *const c_char {
    LAST.with(|m| m.borrow().as_ptr())
}

/// Reads a C string argument: `None` for a null pointer, an error for
/// text that is not UTF-8.
///
/// # Safety
/// `ptr` is null or points to a NUL-terminated string that lives for `'a`.
pub unsafe fn c_str<'a>(ptr: *const c_char, what: &str) -> CResult<Option<&'a str>> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: non-null and NUL-terminated by the caller's promise.
    let s = unsafe { std::ffi::CStr::from_ptr(ptr) };
    s.to_str()
        .map(Some)
        .map_err(|_| invalid(format!("{what} is not UTF-8 text")))
}

/// As [`c_str`], refusing a null pointer.
///
/// # Safety
/// As [`c_str`].
pub unsafe fn required_str<'a>(ptr: *const c_char, what: &str) -> CResult<&'a str> {
    // SAFETY: forwarded promise.
    unsafe { c_str(ptr, what) }?.ok_or_else(|| invalid(format!("{what} is NULL")))
}
