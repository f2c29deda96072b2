//! A clear last word when a mapped input is cut short (ADR 0038): if
//! another program truncates an input file while its frames are mapped,
//! reading the lost pages raises `SIGBUS`, which kills the process. The
//! handler says why on standard error and how to avoid it, then lets the
//! signal take its default course (the faulting read runs again and the
//! reset disposition ends the process, so its status still says SIGBUS).

/// What the handler writes: a fixed string (only `write(2)` is safe in a
/// signal handler, so it cannot name the file).
const MESSAGE: &[u8] = b"vmafx: an input file was truncated while its frames were mapped \
(SIGBUS); score files that another program may change with --no_mmap\n";

/// Installs the handler (once; later calls do nothing).
pub fn explain_sigbus() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(install);
}

#[cfg(unix)]
fn install() {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    extern "C" fn on_sigbus(_: nix::libc::c_int) {
        // SAFETY: descriptor 2 is standard error for the process's life;
        // write(2) is async-signal-safe.
        let stderr = unsafe { std::os::fd::BorrowedFd::borrow_raw(2) };
        let _ = nix::unistd::write(stderr, MESSAGE);
    }
    let action = SigAction::new(
        SigHandler::Handler(on_sigbus),
        SaFlags::SA_RESETHAND,
        SigSet::empty(),
    );
    // SAFETY: the handler only calls write(2); replacing the default
    // disposition of SIGBUS (which nothing else in the process sets) is
    // sound. Failing to install it leaves the default, which is fine.
    let _ = unsafe { sigaction(Signal::SIGBUS, &action) };
}

#[cfg(not(unix))]
fn install() {}
