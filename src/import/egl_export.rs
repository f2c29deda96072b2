//! GL textures as dma-bufs, for GPU runtimes without GL interop (HIP): a
//! texture of the GL context current on the submitting thread is exported
//! through EGL (`EGL_MESA_image_dma_buf_export`: an EGLImage of the
//! texture, then its fd, fourcc, modifier, offset and pitch) and imported
//! as dma-buf memory (`hipImportExternalMemory`). The texture is a plane:
//! R8/R16 for a luma or planar chroma plane, RG8/RG16 (DRM GR88/GR1616) for
//! interleaved chroma; only linear layouts can be read. Its `glFenceSync`
//! (`Acquire::GlSync`) is waited on the submitting thread as for CUDA.

use super::layout::PixelFormat;
use drm_fourcc::{DrmFourcc, DrmModifier};

/// One texture exported as a single-plane dma-buf.
#[derive(Debug)]
pub(crate) struct ExportedTexture {
    pub fd: std::os::fd::OwnedFd,
    /// The dma-buf's size (from the fd).
    pub bytes: u64,
    pub fourcc: u32,
    pub modifier: u64,
    pub offset: u64,
    pub pitch: u64,
}

/// The fourcc a texture holding memory plane `plane` of `format` exports as.
pub(crate) fn expected_fourcc(format: PixelFormat, plane: usize) -> DrmFourcc {
    let wide = format.bytes_per_sample() == 2;
    match (format.is_semi_planar() && plane == 1, wide) {
        (false, false) => DrmFourcc::R8,
        (false, true) => DrmFourcc::R16,
        (true, false) => DrmFourcc::Gr88,
        (true, true) => DrmFourcc::Gr1616,
    }
}

/// Why an export of `planes` dma-buf planes cannot be a plane texture's.
fn not_one_plane(planes: i32) -> Option<String> {
    (planes != 1).then(|| {
        format!("the texture exports as {planes} dma-buf planes; a plane texture exports as one")
    })
}

/// Why an export cannot serve as memory plane `plane` of `format`, if it
/// cannot: more than one plane, another fourcc, a tiled modifier.
pub(crate) fn refusal(
    format: PixelFormat,
    plane: usize,
    fourcc: u32,
    planes: i32,
    modifier: u64,
) -> Option<String> {
    let want = expected_fourcc(format, plane);
    let name = |code: u32| {
        // Display pads short codes ("R8  ").
        DrmFourcc::try_from(code).map_or_else(
            |_| format!("fourcc {code:#010x}"),
            |f| f.to_string().trim_end().to_string(),
        )
    };
    if let Some(why) = not_one_plane(planes) {
        return Some(why);
    }
    if fourcc != want as u32 {
        return Some(format!(
            "the texture exports as {}, plane {plane} of {format} needs {} (a {} texture)",
            name(fourcc),
            name(want as u32),
            match want {
                DrmFourcc::R8 => "GL_R8",
                DrmFourcc::R16 => "GL_R16",
                DrmFourcc::Gr88 => "GL_RG8",
                _ => "GL_RG16",
            }
        ));
    }
    let modifier = DrmModifier::from(modifier);
    if modifier != DrmModifier::Linear {
        return Some(format!(
            "the texture exports with modifier {modifier:?}: only linear (untiled) dma-bufs can be read"
        ));
    }
    None
}

#[cfg(feature = "gl")]
mod egl {
    use super::ExportedTexture;
    use crate::error::{Error, GpuApi, GpuCode, Result};
    use khronos_egl as khr;
    use std::ffi::c_void;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::sync::OnceLock;

    const EXTENSION: &str = "EGL_MESA_image_dma_buf_export";
    const GL_TEXTURE_2D: khr::Enum = 0x30B1; // EGL_GL_TEXTURE_2D
    const GL_TEXTURE_LEVEL: khr::Attrib = 0x30BC; // EGL_GL_TEXTURE_LEVEL

    type QueryFn = unsafe extern "system" fn(
        khr::EGLDisplay,
        khr::EGLImage,
        *mut i32,
        *mut i32,
        *mut u64,
    ) -> khr::Boolean;
    type ExportFn = unsafe extern "system" fn(
        khr::EGLDisplay,
        khr::EGLImage,
        *mut i32,
        *mut i32,
        *mut i32,
    ) -> khr::Boolean;

    struct Entry {
        egl: khr::DynamicInstance<khr::EGL1_5>,
        query: QueryFn,
        export: ExportFn,
    }

    /// The thread's last EGL error, as `EGL_BAD_MATCH`.
    fn egl_error(egl: &khr::DynamicInstance<khr::EGL1_5>) -> String {
        egl.get_error().map_or("no EGL error recorded".into(), |e| {
            let name = format!("{e:?}"); // BadMatch -> EGL_BAD_MATCH
            let mut out = String::from("EGL");
            for c in name.chars() {
                if c.is_uppercase() {
                    out.push('_');
                }
                out.push(c.to_ascii_uppercase());
            }
            out
        })
    }

    fn refused(operation: &str, code: GpuCode, reason: impl Into<String>) -> Error {
        Error::gpu(GpuApi::Gl, operation, code, reason)
    }

    fn entry() -> Result<&'static Entry> {
        static ENTRY: OnceLock<std::result::Result<Entry, String>> = OnceLock::new();
        ENTRY
            .get_or_init(|| {
                // SAFETY: libEGL.so.1 is an EGL implementation (loaded
                // RTLD_NODELETE by khronos-egl, so entry points stay valid).
                let egl = unsafe { khr::DynamicInstance::<khr::EGL1_5>::load_required() }
                    .map_err(|e| format!("cannot load libEGL.so.1 (EGL 1.5): {e}"))?;
                let query = egl
                    .get_proc_address("eglExportDMABUFImageQueryMESA")
                    .ok_or(format!(
                        "libEGL has no eglExportDMABUFImageQueryMESA ({EXTENSION})"
                    ))?;
                let export = egl
                    .get_proc_address("eglExportDMABUFImageMESA")
                    .ok_or(format!(
                        "libEGL has no eglExportDMABUFImageMESA ({EXTENSION})"
                    ))?;
                // SAFETY: the extension's signatures.
                let (query, export) = unsafe {
                    (
                        std::mem::transmute::<extern "system" fn(), QueryFn>(query),
                        std::mem::transmute::<extern "system" fn(), ExportFn>(export),
                    )
                };
                Ok(Entry { egl, query, export })
            })
            .as_ref()
            .map_err(|reason| refused("EGL dma-buf export", GpuCode::NotSupported, reason.clone()))
    }

    /// Exports `texture` (level 0) of the GL context current on this
    /// thread as a dma-buf.
    pub(crate) fn export(texture: u32) -> Result<ExportedTexture> {
        let Entry { egl, query, export } = entry()?;
        let (Some(display), Some(context)) = (egl.get_current_display(), egl.get_current_context())
        else {
            return Err(refused(
                "EGL dma-buf export",
                GpuCode::InvalidHandle,
                "no EGL context is current on the submitting thread (a GL texture is read \
                 in the context that made it)",
            ));
        };
        let extensions = egl
            .query_string(Some(display), khr::EXTENSIONS)
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !extensions.split(' ').any(|e| e == EXTENSION) {
            return Err(refused(
                "EGL dma-buf export",
                GpuCode::NotSupported,
                format!("this EGL display does not offer {EXTENSION}"),
            ));
        }
        // SAFETY: a texture name of the current context, as a client buffer.
        let buffer = unsafe { khr::ClientBuffer::from_ptr(texture as usize as *mut c_void) };
        let image = egl
            .create_image(
                display,
                context,
                GL_TEXTURE_2D,
                buffer,
                &[GL_TEXTURE_LEVEL, 0, khr::ATTRIB_NONE],
            )
            .map_err(|e| {
                refused(
                    "eglCreateImage (GL texture)",
                    GpuCode::InvalidHandle,
                    format!("texture {texture}: {e}"),
                )
            })?;
        let exported = (|| {
            let (mut fourcc, mut planes, mut modifier) = (0i32, 0i32, 0u64);
            // SAFETY: a live image of `display`; out-pointers for one plane
            // (more are refused below before any fd is read).
            let ok = unsafe {
                query(
                    display.as_ptr(),
                    image.as_ptr(),
                    &mut fourcc,
                    &mut planes,
                    &mut modifier,
                )
            };
            if ok != khr::TRUE {
                return Err(refused(
                    "eglExportDMABUFImageQueryMESA",
                    GpuCode::NotSupported,
                    format!("texture {texture}: {}", egl_error(egl)),
                ));
            }
            if planes != 1 {
                return Ok((fourcc, planes, modifier, None));
            }
            let (mut fd, mut stride, mut offset) = (-1i32, 0i32, 0i32);
            // SAFETY: as above; one plane, so one of each out value.
            let ok = unsafe {
                export(
                    display.as_ptr(),
                    image.as_ptr(),
                    &mut fd,
                    &mut stride,
                    &mut offset,
                )
            };
            if ok != khr::TRUE || fd < 0 {
                return Err(refused(
                    "eglExportDMABUFImageMESA",
                    GpuCode::NotSupported,
                    format!("texture {texture}: {}", egl_error(egl)),
                ));
            }
            // SAFETY: a new fd the export handed to us.
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            Ok((fourcc, planes, modifier, Some((fd, stride, offset))))
        })();
        let _ = egl.destroy_image(display, image);
        let (fourcc, planes, modifier, exported) = exported?;
        let Some((fd, stride, offset)) = exported else {
            return Err(refused(
                "EGL dma-buf export",
                GpuCode::NotSupported,
                format!(
                    "texture {texture}: {}",
                    super::not_one_plane(planes).unwrap_or_default()
                ),
            ));
        };
        let bytes =
            nix::unistd::lseek(fd.as_raw_fd(), 0, nix::unistd::Whence::SeekEnd).map_err(|e| {
                refused(
                    "lseek (dma-buf size)",
                    GpuCode::Other(e as i64),
                    e.to_string(),
                )
            })?;
        Ok(ExportedTexture {
            fd,
            bytes: bytes as u64,
            fourcc: fourcc as u32,
            modifier,
            offset: offset as u64,
            pitch: stride as u64,
        })
    }
}

#[cfg(feature = "gl")]
pub(crate) use egl::export;

/// Without the `gl` feature there is no EGL to export through.
#[cfg(not(feature = "gl"))]
pub(crate) fn export(_texture: u32) -> crate::Result<ExportedTexture> {
    Err(crate::Error::BackendUnavailable {
        backend: crate::GpuApi::Gl,
        reason: "this vmafx was built without the `gl` Cargo feature, which exports GL \
                 textures through EGL"
            .into(),
    })
}

#[cfg(test)]
mod tests {
    use super::{expected_fourcc, refusal};
    use crate::import::PixelFormat;
    use crate::ChromaSubsampling;
    use drm_fourcc::{DrmFourcc, DrmModifier};

    #[test]
    fn plane_textures_export_as_one_channel_or_two() {
        let yuv420 = PixelFormat::Planar {
            subsampling: ChromaSubsampling::Yuv420,
            bit_depth: 8,
        };
        let yuv10 = PixelFormat::Planar {
            subsampling: ChromaSubsampling::Yuv422,
            bit_depth: 10,
        };
        assert_eq!(expected_fourcc(yuv420, 2), DrmFourcc::R8);
        assert_eq!(expected_fourcc(yuv10, 1), DrmFourcc::R16);
        assert_eq!(expected_fourcc(PixelFormat::Nv12, 0), DrmFourcc::R8);
        assert_eq!(expected_fourcc(PixelFormat::Nv12, 1), DrmFourcc::Gr88);
        assert_eq!(expected_fourcc(PixelFormat::P010, 0), DrmFourcc::R16);
        assert_eq!(expected_fourcc(PixelFormat::P010, 1), DrmFourcc::Gr1616);
    }

    #[test]
    fn exports_that_cannot_be_a_plane_say_why() {
        let linear = u64::from(DrmModifier::Linear);
        assert_eq!(
            refusal(PixelFormat::Nv12, 1, DrmFourcc::Gr88 as u32, 1, linear),
            None
        );
        assert_eq!(
            refusal(PixelFormat::Nv12, 1, DrmFourcc::R8 as u32, 1, linear).unwrap(),
            "the texture exports as R8, plane 1 of NV12 needs GR88 (a GL_RG8 texture)"
        );
        assert_eq!(
            refusal(PixelFormat::P010, 0, DrmFourcc::Xrgb8888 as u32, 1, linear).unwrap(),
            "the texture exports as XR24, plane 0 of P010 needs R16 (a GL_R16 texture)"
        );
        assert_eq!(
            refusal(PixelFormat::Nv12, 0, DrmFourcc::R8 as u32, 2, linear).unwrap(),
            "the texture exports as 2 dma-buf planes; a plane texture exports as one"
        );
        let tiled = u64::from(DrmModifier::I915_y_tiled);
        assert_eq!(
            refusal(PixelFormat::Nv12, 0, DrmFourcc::R8 as u32, 1, tiled).unwrap(),
            "the texture exports with modifier I915_y_tiled: only linear (untiled) dma-bufs can be read"
        );
    }
}
