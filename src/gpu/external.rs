//! A producer's frames, imported with no copy through the host: external
//! memory and semaphores (Vulkan exports), registered host memory, GL
//! textures. Each handle is a Rust value whose `Drop` releases it, in the
//! order the runtimes need (a mapping before its memory, an unmap before
//! the unregister), so error paths cannot leak.
//!
//! File descriptors are [`OwnedFd`]s, consumed by the import whatever its
//! outcome (ADR 0008): the runtime keeps the fd, or it is closed. A caller
//! that wants to keep its fd passes `fd.try_clone()?` (a `dup`).

use super::device::{Gpu, Stream};
use super::driver::{
    ArrayHandle, DevicePtr, ExternalMemoryHandle, GraphicsHandle, SemaphoreHandle,
};
/// How a producer describes what it hands over (`Gpu::import_memory`,
/// `Gpu::import_semaphore`).
pub use super::driver::{ExternalMemoryDesc, ExternalMemoryKind, SemaphoreKind};
use crate::error::{Error, Result};
use std::marker::PhantomData;
use std::os::fd::OwnedFd;
use std::sync::Arc;

/// `GL_TEXTURE_2D`, the usual target for [`Gpu::register_gl_texture`].
pub const GL_TEXTURE_2D: u32 = 0x0DE1;

impl Gpu {
    /// Imports an allocation a producer exported as an fd (Vulkan
    /// `vkGetMemoryFdKHR`, a dma-buf) and maps all of it for the device.
    /// `fd` is consumed, also on failure.
    /// Errors name the backend, the call, the handle type, and the
    /// runtime's answer; a runtime that cannot import a handle type says
    /// which path works instead.
    pub fn import_memory(
        &self,
        fd: OwnedFd,
        desc: ExternalMemoryDesc,
    ) -> Result<Arc<ExternalMemory>> {
        if desc.size == 0 {
            return Err(Error::InvalidArgument(format!(
                "importing a {}: the allocation size is 0",
                desc.kind
            )));
        }
        let mut memory = ExternalMemory {
            handle: self.driver().import_memory(fd, &desc)?,
            gpu: self.clone(),
            desc,
            base: None,
        };
        // One mapping of the whole allocation; frames are offsets into it.
        // SAFETY: our live import; offset 0 and its own size are in range.
        // On failure `memory` drops and destroys the import.
        memory.base = Some(unsafe {
            self.driver()
                .map_external_buffer(memory.handle, 0, desc.size)?
        });
        Ok(Arc::new(memory))
    }

    /// Exports `bytes` of device memory at `ptr` (page-aligned, e.g. a
    /// buffer's start) as a Linux dma-buf fd. CUDA only.
    ///
    /// # Safety
    /// `ptr..ptr + bytes` must be memory of this device, alive while the
    /// dma-buf is used.
    pub unsafe fn export_dmabuf(&self, ptr: DevicePtr, bytes: usize) -> Result<OwnedFd> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe { self.driver().export_dmabuf(ptr, bytes) }
    }

    /// Imports a semaphore a producer exported as an opaque fd (Vulkan
    /// `vkGetSemaphoreFdKHR`). `fd` is consumed, also on failure.
    pub fn import_semaphore(&self, fd: OwnedFd, kind: SemaphoreKind) -> Result<ExternalSemaphore> {
        Ok(ExternalSemaphore {
            handle: self.driver().import_semaphore(fd, kind)?,
            gpu: self.clone(),
            kind,
        })
    }

    /// Page-locks a producer's host frame for as long as the registration
    /// lives, so [`super::driver::Memory::Host`] copies from it run
    /// asynchronously with no staging copy.
    pub fn register_host<'a>(&self, memory: &'a [u8]) -> Result<HostRegistration<'a>> {
        if memory.is_empty() {
            return Err(Error::InvalidArgument(
                "registering host memory: the slice is empty".into(),
            ));
        }
        let ptr = memory.as_ptr() as *mut u8;
        // SAFETY: `memory` is borrowed for the registration's lifetime;
        // registering only pins and maps it, the device reads it.
        unsafe { self.driver().host_register(ptr, memory.len())? };
        Ok(HostRegistration {
            gpu: self.clone(),
            ptr,
            bytes: memory.len(),
            _memory: PhantomData,
        })
    }

    /// Registers a GL texture (read-only) of the GL context current on
    /// this thread, e.g. `target` [`GL_TEXTURE_2D`]. CUDA only: on HIP the
    /// error names the EGL dma-buf path instead.
    ///
    /// # Safety
    /// `texture` must stay alive (not deleted or re-specified) until the
    /// returned resource drops.
    pub unsafe fn register_gl_texture(
        &self,
        texture: u32,
        target: u32,
    ) -> Result<GraphicsResource> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            Ok(GraphicsResource {
                handle: self.driver().gl_register_image(texture, target)?,
                gpu: self.clone(),
            })
        }
    }
}

/// An imported allocation, mapped whole; unmapped and destroyed once it
/// and its buffers drop.
///
/// The runtime may refuse a mapping that does not start at offset 0 (on
/// the H200 every non-zero offset into a dedicated Vulkan allocation was
/// refused, 4 KiB, 64 KiB and 2 MiB aligned alike: CUDA_ERROR_INVALID_VALUE),
/// and the importer cannot query what it would accept: so the whole
/// allocation is mapped once, from offset 0, and buffers are byte offsets
/// into that mapping (ADR 0008).
pub struct ExternalMemory {
    gpu: Gpu,
    handle: ExternalMemoryHandle,
    desc: ExternalMemoryDesc,
    /// The whole allocation's device address (None only while importing).
    base: Option<DevicePtr>,
}

// SAFETY: runtime handles may be used from any thread.
unsafe impl Send for ExternalMemory {}
// SAFETY: ExternalMemory's handles may be used from any thread (the runtime serialises calls on one object); it has no interior mutability of its own.
unsafe impl Sync for ExternalMemory {}

impl ExternalMemory {
    pub fn desc(&self) -> &ExternalMemoryDesc {
        &self.desc
    }

    /// The device address of the allocation's first byte.
    pub fn ptr(&self) -> DevicePtr {
        self.base.expect("mapped at import")
    }

    /// Device memory for `bytes` bytes at any byte `offset` of the
    /// allocation (a frame of a producer's pool, say). The buffer keeps the
    /// import alive; it costs no runtime call.
    pub fn map_buffer(self: &Arc<Self>, offset: u64, bytes: u64) -> Result<MappedBuffer> {
        let fits = offset
            .checked_add(bytes)
            .is_some_and(|end| end <= self.desc.size);
        if bytes == 0 || !fits {
            return Err(Error::InvalidArgument(format!(
                "mapping {bytes} bytes at offset {offset} of an imported {}-byte {}",
                self.desc.size, self.desc.kind
            )));
        }
        Ok(MappedBuffer {
            _memory: self.clone(),
            ptr: self.ptr() + offset,
            bytes,
        })
    }
}

impl Drop for ExternalMemory {
    fn drop(&mut self) {
        // SAFETY: ours; every MappedBuffer holds an Arc, so none is left.
        // The mapping goes before the memory it maps.
        unsafe {
            if let Some(base) = self.base {
                self.gpu.driver().free_external_buffer(base);
            }
            self.gpu.driver().destroy_external_memory(self.handle)
        }
    }
}

/// Device memory inside an [`ExternalMemory`]; keeps the import alive.
pub struct MappedBuffer {
    /// Held only to keep the import (and its mapping) alive.
    _memory: Arc<ExternalMemory>,
    ptr: DevicePtr,
    bytes: u64,
}

impl MappedBuffer {
    pub fn ptr(&self) -> DevicePtr {
        self.ptr
    }
    pub fn len(&self) -> u64 {
        self.bytes
    }
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }
}

/// An imported semaphore: streams wait on it and signal it on the device.
/// Destroyed on drop, so drop it only once the streams that used it have
/// run their waits and signals.
pub struct ExternalSemaphore {
    gpu: Gpu,
    handle: SemaphoreHandle,
    kind: SemaphoreKind,
}

// SAFETY: runtime handles may be used from any thread.
unsafe impl Send for ExternalSemaphore {}
// SAFETY: ExternalSemaphore's handles may be used from any thread (the runtime serialises calls on one object); it has no interior mutability of its own.
unsafe impl Sync for ExternalSemaphore {}

impl ExternalSemaphore {
    pub fn kind(&self) -> SemaphoreKind {
        self.kind
    }
}

impl Drop for ExternalSemaphore {
    fn drop(&mut self) {
        // SAFETY: ours.
        unsafe { self.gpu.driver().destroy_semaphore(self.handle) }
    }
}

impl Stream {
    /// Makes later work on this stream wait (on the device, never the
    /// host) until the semaphore is signalled; a timeline semaphore until
    /// it reaches `value` (ignored for binary ones).
    pub fn wait_semaphore(&self, semaphore: &ExternalSemaphore, value: u64) -> Result<()> {
        // SAFETY: both alive, same device.
        unsafe {
            self.gpu()
                .driver()
                .wait_semaphore(semaphore.handle, value, self.handle())
        }
    }

    /// Signals the semaphore (timeline: sets it to `value`) once the work
    /// queued so far on this stream has completed.
    pub fn signal_semaphore(&self, semaphore: &ExternalSemaphore, value: u64) -> Result<()> {
        // SAFETY: both alive, same device.
        unsafe {
            self.gpu()
                .driver()
                .signal_semaphore(semaphore.handle, value, self.handle())
        }
    }
}

/// Host memory page-locked for the device while this lives (it borrows the
/// memory, so the memory outlives the registration).
pub struct HostRegistration<'a> {
    gpu: Gpu,
    ptr: *mut u8,
    bytes: usize,
    _memory: PhantomData<&'a [u8]>,
}

// SAFETY: a shared borrow of plain bytes.
unsafe impl Send for HostRegistration<'_> {}

impl HostRegistration<'_> {
    /// The host address, for [`super::driver::Memory::Host`] copies.
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr
    }
    pub fn len(&self) -> usize {
        self.bytes
    }
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }
    /// The device's address of the same memory: kernels and copies read
    /// the host frame through it over the bus.
    pub fn device_ptr(&self) -> Result<DevicePtr> {
        // SAFETY: registered by us and still registered.
        unsafe { self.gpu.driver().host_device_pointer(self.ptr) }
    }
}

impl Drop for HostRegistration<'_> {
    fn drop(&mut self) {
        // SAFETY: registered by this driver; users finish their streams first.
        unsafe { self.gpu.driver().host_unregister(self.ptr) }
    }
}

/// A registered GL texture; unregistered on drop. Map it on a stream to
/// read it.
pub struct GraphicsResource {
    gpu: Gpu,
    handle: GraphicsHandle,
}

// SAFETY: runtime handles may be used from any thread.
unsafe impl Send for GraphicsResource {}

impl GraphicsResource {
    /// Maps the texture for `stream`'s work (ordered after GL's work on it,
    /// which the GL side finishes or fences first). The mapping borrows the
    /// resource, so it is unmapped before the resource can be unregistered.
    pub fn map<'a>(&'a mut self, stream: &'a Stream) -> Result<MappedGraphics<'a>> {
        // SAFETY: both alive, same device.
        unsafe {
            self.gpu
                .driver()
                .graphics_map(self.handle, stream.handle())?
        };
        Ok(MappedGraphics {
            resource: self,
            stream,
            mapped: true,
        })
    }
}

impl Drop for GraphicsResource {
    fn drop(&mut self) {
        // SAFETY: ours, and not mapped (a mapping borrows us).
        unsafe { self.gpu.driver().graphics_unregister(self.handle) }
    }
}

/// A mapped GL texture; unmapped on drop (or by [`MappedGraphics::unmap`],
/// which reports errors).
pub struct MappedGraphics<'a> {
    resource: &'a GraphicsResource,
    stream: &'a Stream,
    mapped: bool,
}

impl MappedGraphics<'_> {
    /// The texture's array (layer 0, level 0), a
    /// [`super::driver::Memory::Array`] copy source while mapped.
    pub fn array(&self) -> Result<ArrayHandle> {
        // SAFETY: mapped.
        unsafe {
            self.resource
                .gpu
                .driver()
                .graphics_array(self.resource.handle)
        }
    }

    /// Gives the texture back to GL after the stream's work queued so far.
    pub fn unmap(mut self) -> Result<()> {
        self.mapped = false;
        // SAFETY: mapped on this stream.
        unsafe {
            self.resource
                .gpu
                .driver()
                .graphics_unmap(self.resource.handle, self.stream.handle())
        }
    }
}

impl Drop for MappedGraphics<'_> {
    fn drop(&mut self) {
        if self.mapped {
            // SAFETY: mapped on this stream.
            let _ = unsafe {
                self.resource
                    .gpu
                    .driver()
                    .graphics_unmap(self.resource.handle, self.stream.handle())
            };
        }
    }
}
