//! A headless GL context for the import tests: EGL on Mesa's surfaceless
//! platform (llvmpipe in CI), desktop GL 4.5 core, current on the thread
//! that made it, with glow bound to it. The surfaceless display is one per
//! process, so one `Gl` lives at a time (tests of a binary take turns).

use khronos_egl as egl;
use std::sync::{Mutex, MutexGuard};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const PLATFORM_SURFACELESS_MESA: egl::Enum = 0x31DD;

pub struct Gl {
    egl: egl::DynamicInstance<egl::EGL1_5>,
    display: egl::Display,
    context: egl::Context,
    pub gl: glow::Context,
    pub renderer: String,
    _turn: MutexGuard<'static, ()>,
}

impl Gl {
    /// A GL context current on this thread, or why there is none.
    pub fn new() -> Result<Gl, String> {
        let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: libEGL.so.1 is an EGL implementation.
        let egl = unsafe { egl::DynamicInstance::<egl::EGL1_5>::load_required() }
            .map_err(|e| format!("cannot load libEGL.so.1 (EGL 1.5): {e}"))?;
        // SAFETY: the surfaceless platform takes no native display.
        let display = unsafe {
            egl.get_platform_display(
                PLATFORM_SURFACELESS_MESA,
                egl::DEFAULT_DISPLAY,
                &[egl::ATTRIB_NONE],
            )
        }
        .map_err(|e| format!("eglGetPlatformDisplay(surfaceless): {e}"))?;
        egl.initialize(display)
            .map_err(|e| format!("eglInitialize: {e}"))?;
        let made = (|| {
            egl.bind_api(egl::OPENGL_API)
                .map_err(|e| format!("eglBindAPI: {e}"))?;
            let config = egl
                .choose_first_config(
                    display,
                    // Surfaceless displays have no window configs (the
                    // default surface type).
                    &[
                        egl::RENDERABLE_TYPE,
                        egl::OPENGL_BIT,
                        egl::SURFACE_TYPE,
                        egl::PBUFFER_BIT,
                        egl::NONE,
                    ],
                )
                .map_err(|e| format!("eglChooseConfig: {e}"))?
                .ok_or("no EGL config renders desktop GL")?;
            let context = egl
                .create_context(
                    display,
                    config,
                    None,
                    &[
                        egl::CONTEXT_MAJOR_VERSION,
                        4,
                        egl::CONTEXT_MINOR_VERSION,
                        5,
                        egl::CONTEXT_OPENGL_PROFILE_MASK,
                        egl::CONTEXT_OPENGL_CORE_PROFILE_BIT,
                        egl::NONE,
                    ],
                )
                .map_err(|e| format!("eglCreateContext (GL 4.5 core): {e}"))?;
            egl.make_current(display, None, None, Some(context))
                .map_err(|e| format!("eglMakeCurrent (surfaceless): {e}"))?;
            Ok::<_, String>(context)
        })();
        let context = match made {
            Ok(c) => c,
            Err(e) => {
                let _ = egl.terminate(display);
                return Err(e);
            }
        };
        // SAFETY: entry points of the context current on this thread.
        let gl = unsafe {
            glow::Context::from_loader_function(|name| {
                egl.get_proc_address(name)
                    .map_or(std::ptr::null(), |f| f as *const std::ffi::c_void)
            })
        };
        let renderer = unsafe { glow::HasContext::get_parameter_string(&gl, glow::RENDERER) };
        Ok(Gl {
            egl,
            display,
            context,
            gl,
            renderer,
            _turn: turn,
        })
    }
}

impl Drop for Gl {
    fn drop(&mut self) {
        let _ = self.egl.make_current(self.display, None, None, None);
        let _ = self.egl.destroy_context(self.display, self.context);
        let _ = self.egl.terminate(self.display);
    }
}
