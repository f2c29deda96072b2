//! The one setting the `vmafx` binary makes in its own environment: how
//! many hardware queues CUDA gives its context. CUDA makes as many as
//! `CUDA_DEVICE_MAX_CONNECTIONS` asks (eight unless set) when it creates
//! the context, and takes them down again at the process's end: with
//! eight, 0.1-0.2 s more of each command-line run than with one. A run
//! fed from files uploads slower than one queue drains, so the binary asks
//! for one (ADR 0042); a caller's own setting is left as it is.

use super::args::Backend;
use std::ffi::OsStr;

const VARIABLE: &str = "CUDA_DEVICE_MAX_CONNECTIONS";

/// Asks CUDA for one hardware queue when the run may start CUDA and the
/// environment does not say otherwise. CUDA reads the variable once, when
/// it starts: call this before it does, and before the process starts a
/// thread (setting a variable races with any thread reading the
/// environment).
pub(super) fn ask_for_one(backend: Backend) {
    if let Some(value) = setting(backend, std::env::var_os(VARIABLE).as_deref()) {
        std::env::set_var(VARIABLE, value);
    }
}

/// The value to set, if any, for `backend` when the variable holds
/// `present`.
fn setting(backend: Backend, present: Option<&OsStr>) -> Option<&'static str> {
    match (backend, present) {
        (Backend::Cuda | Backend::Auto, None) => Some("1"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_queue_where_cuda_may_start_and_nothing_is_set() {
        assert_eq!(setting(Backend::Cuda, None), Some("1"));
        assert_eq!(setting(Backend::Auto, None), Some("1"));
    }

    #[test]
    fn no_setting_without_cuda_or_over_the_callers() {
        assert_eq!(setting(Backend::Cpu, None), None);
        assert_eq!(setting(Backend::Hip, None), None);
        assert_eq!(setting(Backend::Cuda, Some(OsStr::new("8"))), None);
        assert_eq!(setting(Backend::Auto, Some(OsStr::new(""))), None);
    }
}
