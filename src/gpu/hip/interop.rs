//! HIP's side of a zero-copy import: external memory (dma-buf and opaque
//! fds), external semaphores (wired, but ROCm documents them as not
//! supported on Linux), host memory registration. No GL interop: on AMD a
//! GL texture comes over as an EGL dma-buf export. FFI only.

use super::{check, error_name, stream, HipDriver};
use crate::error::{Error, GpuApi, GpuCode, Result};
use crate::gpu::driver::{
    ArrayHandle, DevicePtr, ExternalMemoryDesc, ExternalMemoryHandle, GraphicsHandle, Interop,
    SemaphoreHandle, SemaphoreKind, StreamHandle,
};
use cubecl_hip_sys as hip;
use std::ffi::c_void;
use std::os::fd::{AsRawFd, OwnedFd};

fn unsupported(operation: &str, reason: &str) -> Error {
    Error::gpu(GpuApi::Hip, operation, GpuCode::NotSupported, reason)
}

/// ROCm on Linux has no external semaphores: say what to do instead.
fn semaphore_check(result: hip::hipError_t, operation: &str) -> Result<()> {
    if result == hip::hipError_t_hipErrorNotSupported {
        return Err(unsupported(
            operation,
            &format!(
                "{}: HIP external semaphores are not supported on Linux; wait for the \
                 producer on the host (poll its sync_file fd, or its fence) before \
                 submitting the frame",
                error_name(result)
            ),
        ));
    }
    check(result, operation)
}

// SAFETY: each method calls the HIP runtime on the handles the engine passes, as the trait's per-method contracts require.
unsafe impl Interop for HipDriver {
    fn import_memory(
        &self,
        fd: OwnedFd,
        desc: &ExternalMemoryDesc,
    ) -> Result<ExternalMemoryHandle> {
        self.bind()?;
        // ROCm imports dma-bufs through the opaque-fd type, and keeps a
        // reference of its own: our fd is closed when `fd` drops, whatever
        // the outcome (as rocDecode does after its imports).
        // SAFETY: the union holds only integers and pointers.
        let mut handle: hip::hipExternalMemoryHandleDesc_st__bindgen_ty_1 =
            unsafe { std::mem::zeroed() };
        handle.fd = fd.as_raw_fd();
        let d = hip::hipExternalMemoryHandleDesc {
            type_: hip::hipExternalMemoryHandleType_enum_hipExternalMemoryHandleTypeOpaqueFd,
            handle,
            size: desc.size,
            flags: if desc.dedicated {
                hip::hipExternalMemoryDedicated
            } else {
                0
            },
            reserved: [0; 16],
        };
        let mut out = std::ptr::null_mut();
        // SAFETY: valid descriptor and out-pointer.
        check(
            // SAFETY: out-pointers to locals, valid for the call; the runtime is initialised and its context bound.
            unsafe { hip::hipImportExternalMemory(&mut out, &d) },
            &format!(
                "hipImportExternalMemory ({}, {} bytes{})",
                desc.kind,
                desc.size,
                if desc.dedicated { ", dedicated" } else { "" }
            ),
        )?;
        drop(fd);
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
            let d = hip::hipExternalMemoryBufferDesc {
                offset,
                size: bytes,
                flags: 0,
                reserved: [0; 16],
            };
            let mut ptr = std::ptr::null_mut();
            check(
                hip::hipExternalMemoryGetMappedBuffer(
                    &mut ptr,
                    m.raw() as hip::hipExternalMemory_t,
                    &d,
                ),
                &format!("hipExternalMemoryGetMappedBuffer ({bytes} bytes at {offset})"),
            )?;
            Ok(ptr as DevicePtr)
        }
    }

    unsafe fn free_external_buffer(&self, ptr: DevicePtr) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if self.bind().is_ok() {
                hip::hipFree(ptr as *mut c_void);
            }
        }
    }

    unsafe fn destroy_external_memory(&self, m: ExternalMemoryHandle) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if self.bind().is_ok() {
                hip::hipDestroyExternalMemory(m.raw() as hip::hipExternalMemory_t);
            }
        }
    }

    fn import_semaphore(&self, fd: OwnedFd, kind: SemaphoreKind) -> Result<SemaphoreHandle> {
        self.bind()?;
        let type_ = match kind {
            SemaphoreKind::Binary => {
                hip::hipExternalSemaphoreHandleType_enum_hipExternalSemaphoreHandleTypeOpaqueFd
            }
            SemaphoreKind::Timeline => {
                hip::hipExternalSemaphoreHandleType_enum_hipExternalSemaphoreHandleTypeTimelineSemaphoreFd
            }
        };
        // SAFETY: the union holds only integers and pointers.
        let mut handle: hip::hipExternalSemaphoreHandleDesc_st__bindgen_ty_1 =
            unsafe { std::mem::zeroed() };
        handle.fd = fd.as_raw_fd();
        let d = hip::hipExternalSemaphoreHandleDesc {
            type_,
            handle,
            flags: 0,
            reserved: [0; 16],
        };
        let mut out = std::ptr::null_mut();
        // SAFETY: valid descriptor and out-pointer.
        semaphore_check(
            // SAFETY: out-pointers to locals, valid for the call; the runtime is initialised and its context bound.
            unsafe { hip::hipImportExternalSemaphore(&mut out, &d) },
            &format!("hipImportExternalSemaphore ({kind}, opaque fd)"),
        )?;
        drop(fd); // as for memory: ROCm keeps no claim on our fd
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
            let mut p: hip::hipExternalSemaphoreSignalParams = std::mem::zeroed();
            p.params.fence.value = value;
            let handle = sem.raw() as hip::hipExternalSemaphore_t;
            semaphore_check(
                hip::hipSignalExternalSemaphoresAsync(&handle, &p, 1, stream(s)),
                "hipSignalExternalSemaphoresAsync",
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
            let mut p: hip::hipExternalSemaphoreWaitParams = std::mem::zeroed();
            p.params.fence.value = value;
            let handle = sem.raw() as hip::hipExternalSemaphore_t;
            semaphore_check(
                hip::hipWaitExternalSemaphoresAsync(&handle, &p, 1, stream(s)),
                "hipWaitExternalSemaphoresAsync",
            )
        }
    }

    unsafe fn destroy_semaphore(&self, sem: SemaphoreHandle) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if self.bind().is_ok() {
                hip::hipDestroyExternalSemaphore(sem.raw() as hip::hipExternalSemaphore_t);
            }
        }
    }

    unsafe fn host_register(&self, ptr: *mut u8, bytes: usize) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            check(
                hip::hipHostRegister(ptr as *mut c_void, bytes, hip::hipHostRegisterMapped),
                &format!("hipHostRegister ({bytes} bytes)"),
            )
        }
    }

    unsafe fn host_device_pointer(&self, ptr: *mut u8) -> Result<DevicePtr> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            let mut device = std::ptr::null_mut();
            check(
                hip::hipHostGetDevicePointer(&mut device, ptr as *mut c_void, 0),
                "hipHostGetDevicePointer",
            )?;
            Ok(device as DevicePtr)
        }
    }

    unsafe fn host_unregister(&self, ptr: *mut u8) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if self.bind().is_ok() {
                hip::hipHostUnregister(ptr as *mut c_void);
            }
        }
    }

    unsafe fn export_dmabuf(&self, _ptr: DevicePtr, bytes: usize) -> Result<OwnedFd> {
        Err(Error::gpu(
            GpuApi::Hip,
            format!("dma-buf export ({bytes} bytes)"),
            GpuCode::NotSupported,
            "not bound for HIP (hipMemGetHandleForAddressRange is not in the binding); \
             export from the producer's own allocator",
        ))
    }

    unsafe fn gl_register_image(&self, texture: u32, _target: u32) -> Result<GraphicsHandle> {
        Err(unsupported(
            &format!("GL texture registration (texture {texture})"),
            "vmafx has no HIP-GL interop: on AMD, export the texture as a dma-buf \
             (EGL_MESA_image_dma_buf_export) and import that (Gpu::import_memory, \
             ExternalMemoryKind::DmaBuf)",
        ))
    }

    unsafe fn graphics_map(&self, r: GraphicsHandle, s: StreamHandle) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            let mut handle = r.raw() as hip::hipGraphicsResource_t;
            check(
                hip::hipGraphicsMapResources(1, &mut handle, stream(s)),
                "hipGraphicsMapResources",
            )
        }
    }

    unsafe fn graphics_array(&self, r: GraphicsHandle) -> Result<ArrayHandle> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            let mut array = std::ptr::null_mut();
            check(
                hip::hipGraphicsSubResourceGetMappedArray(
                    &mut array,
                    r.raw() as hip::hipGraphicsResource_t,
                    0,
                    0,
                ),
                "hipGraphicsSubResourceGetMappedArray",
            )?;
            Ok(ArrayHandle::from_raw(array as usize))
        }
    }

    unsafe fn graphics_unmap(&self, r: GraphicsHandle, s: StreamHandle) -> Result<()> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.bind()?;
            let mut handle = r.raw() as hip::hipGraphicsResource_t;
            check(
                hip::hipGraphicsUnmapResources(1, &mut handle, stream(s)),
                "hipGraphicsUnmapResources",
            )
        }
    }

    unsafe fn graphics_unregister(&self, r: GraphicsHandle) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if self.bind().is_ok() {
                hip::hipGraphicsUnregisterResource(r.raw() as hip::hipGraphicsResource_t);
            }
        }
    }
}
