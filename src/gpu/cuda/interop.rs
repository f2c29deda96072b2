//! CUDA's side of a zero-copy import: external memory and semaphores
//! (Vulkan exports), host memory registration, CUDA-GL interop. FFI only.

use super::{check, error_name, stream, CudaDriver};
use crate::error::{Error, GpuApi, GpuCode, Result};
use crate::gpu::driver::{
    ArrayHandle, DevicePtr, ExternalMemoryDesc, ExternalMemoryHandle, ExternalMemoryKind,
    GraphicsHandle, Interop, SemaphoreHandle, SemaphoreKind, StreamHandle,
};
use cudarc::driver::sys as cu;
use std::ffi::c_void;
use std::os::fd::{AsRawFd, IntoRawFd, OwnedFd};
use std::sync::OnceLock;

/// What works on NVIDIA when a dma-buf import is refused (measured on an
/// H200 with driver 580: CUDA 13 knows the handle type but answers
/// CUDA_ERROR_NOT_SUPPORTED).
const DMABUF_ALTERNATIVES: &str = "this CUDA driver does not import dma-buf fds; \
     export the frame from Vulkan as an opaque fd (VK_KHR_external_memory_fd), \
     register a GL texture (Gpu::register_gl_texture), or hand over a host frame \
     (Gpu::register_host) or device memory";

/// A failed `cuImportExternalMemory`: the call, the handle type, the
/// driver's answer, and for a refused handle type the paths that work.
fn import_error(desc: &ExternalMemoryDesc, answer: String, code: GpuCode) -> Error {
    let operation = format!(
        "cuImportExternalMemory ({}, {} bytes{})",
        desc.kind,
        desc.size,
        if desc.dedicated { ", dedicated" } else { "" }
    );
    let reason = if desc.kind == ExternalMemoryKind::DmaBuf && code == GpuCode::NotSupported {
        format!("{answer}: {DMABUF_ALTERNATIVES}")
    } else {
        answer
    };
    Error::gpu(GpuApi::Cuda, operation, code, reason)
}

fn memory(h: ExternalMemoryHandle) -> cu::CUexternalMemory {
    h.raw() as cu::CUexternalMemory
}
fn semaphore(h: SemaphoreHandle) -> cu::CUexternalSemaphore {
    h.raw() as cu::CUexternalSemaphore
}
fn resource(h: GraphicsHandle) -> cu::CUgraphicsResource {
    h.raw() as cu::CUgraphicsResource
}

/// `cuGraphicsGLRegisterImage(CUgraphicsResource*, GLuint, GLenum, unsigned)`.
type GlRegisterImage =
    unsafe extern "C" fn(*mut cu::CUgraphicsResource, u32, u32, u32) -> cu::CUresult;

/// cudarc binds no cudaGL.h function: look the one we need up in the libcuda
/// cudarc already loaded (ADR 0008). `None` when this libcuda lacks it.
fn gl_register_image_fn() -> Option<GlRegisterImage> {
    static FN: OnceLock<Option<GlRegisterImage>> = OnceLock::new();
    *FN.get_or_init(|| {
        // SAFETY: a CudaDriver exists, so libcuda is loaded; the symbol has
        // this signature in every CUDA version since 3.0.
        unsafe {
            cu::culib()
                .get::<GlRegisterImage>(b"cuGraphicsGLRegisterImage\0")
                .ok()
                .map(|s| *s)
        }
    })
}

// SAFETY: each method calls the CUDA driver API on the handles the engine passes, as the trait's per-method contracts require.
unsafe impl Interop for CudaDriver {
    fn import_memory(
        &self,
        fd: OwnedFd,
        desc: &ExternalMemoryDesc,
    ) -> Result<ExternalMemoryHandle> {
        self.bind()?;
        let type_ = match desc.kind {
            ExternalMemoryKind::OpaqueFd => {
                cu::CUexternalMemoryHandleType::CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD
            }
            ExternalMemoryKind::DmaBuf => {
                cu::CUexternalMemoryHandleType::CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD
            }
        };
        // Built field by field: the handle-type enum has no zero value.
        // SAFETY: the union holds only integers and pointers.
        let mut handle: cu::CUDA_EXTERNAL_MEMORY_HANDLE_DESC_st__bindgen_ty_1 =
            unsafe { std::mem::zeroed() };
        handle.fd = fd.as_raw_fd();
        let d = cu::CUDA_EXTERNAL_MEMORY_HANDLE_DESC {
            type_,
            handle,
            size: desc.size,
            flags: if desc.dedicated {
                cu::CUDA_EXTERNAL_MEMORY_DEDICATED
            } else {
                0
            },
            reserved: [0; 16],
        };
        let mut out = std::ptr::null_mut();
        // SAFETY: valid descriptor and out-pointer.
        let result = unsafe { cu::cuImportExternalMemory(&mut out, &d) };
        if result != cu::CUresult::CUDA_SUCCESS {
            // `fd` drops here: CUDA took nothing, the fd is closed.
            return Err(import_error(
                desc,
                error_name(result),
                GpuCode::from_cuda_or_hip(result as i64),
            ));
        }
        // CUDA owns the fd now and closes it when the memory is destroyed.
        let _ = fd.into_raw_fd();
        Ok(ExternalMemoryHandle::from_raw(out as usize))
    }

    unsafe fn map_external_buffer(
        &self,
        m: ExternalMemoryHandle,
        offset: u64,
        bytes: u64,
    ) -> Result<DevicePtr> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            let mut d: cu::CUDA_EXTERNAL_MEMORY_BUFFER_DESC = std::mem::zeroed();
            d.offset = offset;
            d.size = bytes;
            let mut ptr = 0;
            check(
                cu::cuExternalMemoryGetMappedBuffer(&mut ptr, memory(m), &d),
                &format!("cuExternalMemoryGetMappedBuffer ({bytes} bytes at {offset})"),
            )?;
            Ok(ptr)
        }
    }

    unsafe fn free_external_buffer(&self, ptr: DevicePtr) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if self.bind().is_ok() {
                cu::cuMemFree_v2(ptr);
            }
        }
    }

    unsafe fn destroy_external_memory(&self, m: ExternalMemoryHandle) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if self.bind().is_ok() {
                cu::cuDestroyExternalMemory(memory(m));
            }
        }
    }

    fn import_semaphore(&self, fd: OwnedFd, kind: SemaphoreKind) -> Result<SemaphoreHandle> {
        self.bind()?;
        let type_ = match kind {
            SemaphoreKind::Binary => {
                cu::CUexternalSemaphoreHandleType::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD
            }
            SemaphoreKind::Timeline => {
                cu::CUexternalSemaphoreHandleType::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD
            }
        };
        // SAFETY: the union holds only integers and pointers.
        let mut handle: cu::CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC_st__bindgen_ty_1 =
            unsafe { std::mem::zeroed() };
        handle.fd = fd.as_raw_fd();
        let d = cu::CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC {
            type_,
            handle,
            flags: 0,
            reserved: [0; 16],
        };
        let mut out = std::ptr::null_mut();
        // SAFETY: valid descriptor and out-pointer.
        check(
            // SAFETY: out-pointers to locals, valid for the call; the runtime is initialised and its context bound.
            unsafe { cu::cuImportExternalSemaphore(&mut out, &d) },
            &format!("cuImportExternalSemaphore ({kind}, opaque fd)"),
        )?; // on failure `fd` drops: closed
        let _ = fd.into_raw_fd(); // on success CUDA owns it
        Ok(SemaphoreHandle::from_raw(out as usize))
    }

    unsafe fn signal_semaphore(
        &self,
        sem: SemaphoreHandle,
        value: u64,
        s: StreamHandle,
    ) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            let mut p: cu::CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS = std::mem::zeroed();
            p.params.fence.value = value; // ignored by binary semaphores
            let handle = semaphore(sem);
            check(
                cu::cuSignalExternalSemaphoresAsync(&handle, &p, 1, stream(s)),
                "cuSignalExternalSemaphoresAsync",
            )
        }
    }

    unsafe fn wait_semaphore(
        &self,
        sem: SemaphoreHandle,
        value: u64,
        s: StreamHandle,
    ) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            let mut p: cu::CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS = std::mem::zeroed();
            p.params.fence.value = value;
            let handle = semaphore(sem);
            check(
                cu::cuWaitExternalSemaphoresAsync(&handle, &p, 1, stream(s)),
                "cuWaitExternalSemaphoresAsync",
            )
        }
    }

    unsafe fn destroy_semaphore(&self, sem: SemaphoreHandle) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if self.bind().is_ok() {
                cu::cuDestroyExternalSemaphore(semaphore(sem));
            }
        }
    }

    unsafe fn host_register(&self, ptr: *mut u8, bytes: usize) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            check(
                cu::cuMemHostRegister_v2(
                    ptr as *mut c_void,
                    bytes,
                    cu::CU_MEMHOSTREGISTER_DEVICEMAP | cu::CU_MEMHOSTREGISTER_PORTABLE,
                ),
                &format!("cuMemHostRegister ({bytes} bytes)"),
            )
        }
    }

    unsafe fn host_device_pointer(&self, ptr: *mut u8) -> Result<DevicePtr> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            let mut device = 0;
            check(
                cu::cuMemHostGetDevicePointer_v2(&mut device, ptr as *mut c_void, 0),
                "cuMemHostGetDevicePointer",
            )?;
            Ok(device)
        }
    }

    unsafe fn host_unregister(&self, ptr: *mut u8) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if self.bind().is_ok() {
                cu::cuMemHostUnregister(ptr as *mut c_void);
            }
        }
    }

    unsafe fn export_dmabuf(&self, ptr: DevicePtr, bytes: usize) -> Result<OwnedFd> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            let mut fd: i32 = -1;
            check(
                cu::cuMemGetHandleForAddressRange(
                    &mut fd as *mut i32 as *mut c_void,
                    ptr,
                    bytes,
                    cu::CUmemRangeHandleType::CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
                    0,
                ),
                &format!("cuMemGetHandleForAddressRange (dma-buf, {bytes} bytes)"),
            )?;
            // SAFETY: a new fd, ours.
            Ok(std::os::fd::FromRawFd::from_raw_fd(fd))
        }
    }

    unsafe fn gl_register_image(&self, texture: u32, target: u32) -> Result<GraphicsHandle> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            let operation =
                format!("cuGraphicsGLRegisterImage (texture {texture}, target {target:#x})");
            let register = gl_register_image_fn().ok_or_else(|| {
                Error::gpu(
                    GpuApi::Cuda,
                    operation.clone(),
                    GpuCode::NotSupported,
                    "this libcuda exports no cuGraphicsGLRegisterImage",
                )
            })?;
            let mut out = std::ptr::null_mut();
            let flags = cu::CUgraphicsRegisterFlags::CU_GRAPHICS_REGISTER_FLAGS_READ_ONLY as u32;
            check(register(&mut out, texture, target, flags), &operation)?;
            Ok(GraphicsHandle::from_raw(out as usize))
        }
    }

    unsafe fn graphics_map(&self, r: GraphicsHandle, s: StreamHandle) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            let mut handle = resource(r);
            check(
                cu::cuGraphicsMapResources(1, &mut handle, stream(s)),
                "cuGraphicsMapResources",
            )
        }
    }

    unsafe fn graphics_array(&self, r: GraphicsHandle) -> Result<ArrayHandle> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            let mut array = std::ptr::null_mut();
            check(
                cu::cuGraphicsSubResourceGetMappedArray(&mut array, resource(r), 0, 0),
                "cuGraphicsSubResourceGetMappedArray",
            )?;
            Ok(ArrayHandle::from_raw(array as usize))
        }
    }

    unsafe fn graphics_unmap(&self, r: GraphicsHandle, s: StreamHandle) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            let mut handle = resource(r);
            check(
                cu::cuGraphicsUnmapResources(1, &mut handle, stream(s)),
                "cuGraphicsUnmapResources",
            )
        }
    }

    unsafe fn graphics_unregister(&self, r: GraphicsHandle) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if self.bind().is_ok() {
                cu::cuGraphicsUnregisterResource(resource(r));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_dmabuf_import_names_the_answer_and_what_works_instead() {
        let desc = ExternalMemoryDesc {
            kind: ExternalMemoryKind::DmaBuf,
            size: 2 << 20,
            dedicated: false,
        };
        let text = import_error(
            &desc,
            "CUDA_ERROR_NOT_SUPPORTED (801)".into(),
            GpuCode::NotSupported,
        )
        .to_string();
        for part in [
            "CUDA: cuImportExternalMemory (dma-buf fd, 2097152 bytes) failed",
            "CUDA_ERROR_NOT_SUPPORTED (801)",
            "opaque fd",
            "GL texture",
            "host frame",
        ] {
            assert!(text.contains(part), "{part:?} missing from: {text}");
        }
        // Other failures carry the answer alone.
        let desc = ExternalMemoryDesc {
            kind: ExternalMemoryKind::OpaqueFd,
            dedicated: true,
            ..desc
        };
        let text = import_error(
            &desc,
            "CUDA_ERROR_INVALID_VALUE (1)".into(),
            GpuCode::Other(1),
        )
        .to_string();
        assert_eq!(
            text,
            "CUDA: cuImportExternalMemory (opaque fd, 2097152 bytes, dedicated) failed: \
             CUDA_ERROR_INVALID_VALUE (1)"
        );
    }
}
