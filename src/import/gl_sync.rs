//! Waiting on a producer's GL sync object (`glFenceSync`). A GLsync belongs
//! to the GL context current on the submitting thread, so it is waited
//! there (`glClientWaitSync`, flushing the producer's commands first).
//! `glClientWaitSync` is looked up once through `eglGetProcAddress` (libEGL
//! loaded at run time), which returns the dispatching entry point of
//! whatever context is current, EGL's or GLX's.

use crate::error::{Error, GpuApi, GpuCode, Result};
use std::ffi::c_void;
#[cfg(feature = "gl")]
use std::sync::OnceLock;
use std::time::Duration;

const GL_SYNC_FLUSH_COMMANDS_BIT: u32 = 0x1;
const GL_ALREADY_SIGNALED: u32 = 0x911A;
const GL_TIMEOUT_EXPIRED: u32 = 0x911B;
const GL_CONDITION_SATISFIED: u32 = 0x911C;
const GL_WAIT_FAILED: u32 = 0x911D;

type ClientWaitSync = unsafe extern "system" fn(*const c_void, u32, u64) -> u32;

#[cfg(not(feature = "gl"))]
fn client_wait_sync() -> Result<ClientWaitSync> {
    Err(Error::BackendUnavailable {
        backend: GpuApi::Gl,
        reason: "this vmafx was built without the `gl` Cargo feature, which waits on GL syncs"
            .into(),
    })
}

#[cfg(feature = "gl")]
fn client_wait_sync() -> Result<ClientWaitSync> {
    static ENTRY: OnceLock<std::result::Result<ClientWaitSync, String>> = OnceLock::new();
    ENTRY
        .get_or_init(|| {
            // SAFETY: libEGL.so.1 is an EGL implementation; khronos-egl
            // loads it RTLD_NODELETE, so the entry point outlives `egl`.
            let egl =
                unsafe { khronos_egl::DynamicInstance::<khronos_egl::EGL1_0>::load_required() }
                    .map_err(|e| format!("cannot load libEGL.so.1: {e}"))?;
            let entry = egl
                .get_proc_address("glClientWaitSync")
                .ok_or("eglGetProcAddress has no glClientWaitSync")?;
            // SAFETY: glClientWaitSync's signature (GL 3.2, GLES 3.0).
            Ok(unsafe { std::mem::transmute::<extern "system" fn(), ClientWaitSync>(entry) })
        })
        .clone()
        .map_err(|reason| Error::BackendUnavailable {
            backend: GpuApi::Gl,
            reason,
        })
}

/// Waits up to `timeout` for the GLsync `sync` of the GL context current on
/// this thread; `name` names the fence in errors.
pub(crate) fn wait(sync: usize, timeout: Duration, name: &str) -> Result<()> {
    let client_wait = client_wait_sync()?;
    let ns = timeout.as_nanos().min(u64::MAX as u128) as u64;
    // SAFETY: the producer passed a GLsync of the context current here; with
    // no context current the dispatcher's no-op answers 0.
    let status = unsafe { client_wait(sync as *const c_void, GL_SYNC_FLUSH_COMMANDS_BIT, ns) };
    match status {
        GL_ALREADY_SIGNALED | GL_CONDITION_SATISFIED => Ok(()),
        GL_TIMEOUT_EXPIRED => Err(Error::FenceTimeout {
            fence: name.to_string(),
            waited_ms: timeout.as_millis() as u64,
        }),
        other => Err(Error::gpu(
            GpuApi::Gl,
            format!("glClientWaitSync ({name})"),
            if other == GL_WAIT_FAILED {
                GpuCode::InvalidHandle
            } else {
                GpuCode::Other(other.into())
            },
            if other == GL_WAIT_FAILED {
                "GL_WAIT_FAILED: not a sync object of the GL context current on the \
                 submitting thread"
                    .into()
            } else {
                format!(
                    "returned {other:#x}: is the producer's GL context current on the \
                     submitting thread?"
                )
            },
        )),
    }
}
