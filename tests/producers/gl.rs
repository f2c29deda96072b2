//! A GL producer: an EGL device-platform display (no window system), a
//! desktop GL context made current with no surface, and R8 textures filled
//! with glTexSubImage2D. libEGL is loaded at run time (khronos-egl).

use glow::HasContext;
use khronos_egl as egl;
use std::ffi::c_void;

const PLATFORM_DEVICE_EXT: egl::Enum = 0x313F;

type QueryDevices =
    unsafe extern "system" fn(egl::Int, *mut *mut c_void, *mut egl::Int) -> egl::Boolean;

pub struct Gl {
    egl: egl::DynamicInstance<egl::EGL1_5>,
    display: egl::Display,
    context: egl::Context,
    pub gl: glow::Context,
    /// GL_VERSION and GL_RENDERER.
    pub version: String,
}

impl Gl {
    /// A context on the first EGL device that gives one (GL 4.6 core where
    /// offered, else whatever version the device has), current on this
    /// thread.
    pub fn new() -> Result<Self, String> {
        // SAFETY: EGL calls with valid arguments; the library stays loaded
        // as long as `egl`.
        unsafe {
            let egl = egl::DynamicInstance::<egl::EGL1_5>::load_required()
                .map_err(|e| format!("no EGL library: {e}"))?;
            let query: QueryDevices = std::mem::transmute(
                egl.get_proc_address("eglQueryDevicesEXT")
                    .ok_or("no eglQueryDevicesEXT (EGL_EXT_device_enumeration)")?,
            );
            let mut devices = [std::ptr::null_mut(); 16];
            let mut count = 0;
            if query(16, devices.as_mut_ptr(), &mut count) == egl::FALSE || count == 0 {
                return Err("eglQueryDevicesEXT found no device".into());
            }
            let mut failures = Vec::new();
            for &device in &devices[..count as usize] {
                match Self::on_device(&egl, device) {
                    Ok((display, context)) => {
                        let gl = glow::Context::from_loader_function(|name| {
                            egl.get_proc_address(name)
                                .map_or(std::ptr::null(), |f| f as *const c_void)
                        });
                        let version = format!(
                            "{} on {}",
                            gl.get_parameter_string(glow::VERSION),
                            gl.get_parameter_string(glow::RENDERER)
                        );
                        return Ok(Self {
                            egl,
                            display,
                            context,
                            gl,
                            version,
                        });
                    }
                    Err(e) => failures.push(e),
                }
            }
            Err(format!("no EGL device gave a GL context: {failures:?}"))
        }
    }

    unsafe fn on_device(
        egl: &egl::DynamicInstance<egl::EGL1_5>,
        device: *mut c_void,
    ) -> Result<(egl::Display, egl::Context), String> {
        let display = egl
            .get_platform_display(PLATFORM_DEVICE_EXT, device, &[egl::ATTRIB_NONE])
            .map_err(|e| format!("eglGetPlatformDisplay: {e}"))?;
        egl.initialize(display)
            .map_err(|e| format!("eglInitialize: {e}"))?;
        egl.bind_api(egl::OPENGL_API)
            .map_err(|e| format!("eglBindAPI: {e}"))?;
        let config = egl
            .choose_first_config(
                display,
                &[
                    egl::SURFACE_TYPE,
                    egl::PBUFFER_BIT,
                    egl::RENDERABLE_TYPE,
                    egl::OPENGL_BIT,
                    egl::NONE,
                ],
            )
            .map_err(|e| format!("eglChooseConfig: {e}"))?
            .ok_or("no GL config")?;
        let core_46 = [
            egl::CONTEXT_MAJOR_VERSION,
            4,
            egl::CONTEXT_MINOR_VERSION,
            6,
            egl::CONTEXT_OPENGL_PROFILE_MASK,
            egl::CONTEXT_OPENGL_CORE_PROFILE_BIT,
            egl::NONE,
        ];
        let context = egl
            .create_context(display, config, None, &core_46)
            .or_else(|_| egl.create_context(display, config, None, &[egl::NONE]))
            .map_err(|e| format!("eglCreateContext: {e}"))?;
        egl.make_current(display, None, None, Some(context))
            .map_err(|e| format!("eglMakeCurrent (surfaceless): {e}"))?;
        Ok((display, context))
    }

    /// An immutable R8 texture of `width` x `height` holding `data` (rows
    /// packed), written and finished before this returns.
    pub fn r8_texture(
        &self,
        width: i32,
        height: i32,
        data: &[u8],
    ) -> Result<glow::Texture, String> {
        let gl = &self.gl;
        // SAFETY: our current context; `data` holds width * height bytes.
        unsafe {
            let texture = gl.create_texture()?;
            gl.bind_texture(glow::TEXTURE_2D, Some(texture));
            gl.tex_storage_2d(glow::TEXTURE_2D, 1, glow::R8, width, height);
            gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
            gl.tex_sub_image_2d(
                glow::TEXTURE_2D,
                0,
                0,
                0,
                width,
                height,
                glow::RED,
                glow::UNSIGNED_BYTE,
                glow::PixelUnpackData::Slice(Some(data)),
            );
            gl.bind_texture(glow::TEXTURE_2D, None);
            gl.finish();
            match gl.get_error() {
                glow::NO_ERROR => Ok(texture),
                e => Err(format!("GL error {e:#x} filling the texture")),
            }
        }
    }

    pub fn delete_texture(&self, texture: glow::Texture) {
        // SAFETY: our texture, unregistered from CUDA first.
        unsafe { self.gl.delete_texture(texture) }
    }
}

impl Drop for Gl {
    fn drop(&mut self) {
        let _ = self.egl.make_current(self.display, None, None, None);
        let _ = self.egl.destroy_context(self.display, self.context);
        let _ = self.egl.terminate(self.display);
    }
}
