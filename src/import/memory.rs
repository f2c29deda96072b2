//! The memory a producer's frame may live in. Each kind is a value that owns
//! what it must release (file descriptors are `OwnedFd`s: dropping a frame
//! or a refused descriptor closes them), and borrows what the producer keeps
//! (pointers, arrays, textures: valid until the frame's release).

use drm_fourcc::DrmModifier;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::ptr::NonNull;

/// Host memory wrapped without a copy.
#[derive(Debug, Clone, Copy)]
pub struct HostMemory {
    ptr: NonNull<u8>,
    bytes: usize,
}

// SAFETY: the producer promises (in `new`) that the memory stays valid and
// unwritten until release; the library only reads it.
unsafe impl Send for HostMemory {}
// SAFETY: HostMemory's handles may be used from any thread (the runtime serialises calls on one object); it has no interior mutability of its own.
unsafe impl Sync for HostMemory {}

impl HostMemory {
    /// # Safety
    /// `ptr` must point at `bytes` readable bytes that stay valid and are not
    /// written until the frame's release signals fire.
    pub unsafe fn new(ptr: NonNull<u8>, bytes: usize) -> Self {
        Self { ptr, bytes }
    }

    pub fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }

    pub fn len(&self) -> usize {
        self.bytes
    }

    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// The memory as a slice.
    ///
    /// # Safety
    /// As [`HostMemory::new`]: valid and unwritten while the slice lives.
    pub(crate) unsafe fn as_slice(&self) -> &[u8] {
        // SAFETY: `new`'s caller promised `bytes` readable bytes at `ptr`, unwritten while the frame lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.bytes) }
    }
}

/// A device allocation of the context's device: a CUDA `CUdeviceptr` or a
/// HIP device pointer and its length. Made only by the unsafe
/// [`DevicePtr::new`] (or by vmafx's own pools), so safe code cannot hand
/// the engine an address it does not own:
///
/// ```compile_fail
/// let p = vmafx::import::DevicePtr { ptr: 0x1000, bytes: 64 };
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DevicePtr {
    ptr: u64,
    bytes: u64,
}

impl DevicePtr {
    /// # Safety
    /// `ptr` is a device address of the device the frame is submitted to
    /// (under CUDA, valid in the context vmafx uses: the primary one, or the
    /// producer's own context lent through `gpu::open_cuda_context`), with
    /// `bytes` bytes readable from it. The memory stays allocated and is not
    /// written until the frame's release signals fire (or, for a producer's
    /// own reads, until its acquire fence and vmafx's reads are ordered).
    pub const unsafe fn new(ptr: u64, bytes: u64) -> Self {
        Self { ptr, bytes }
    }

    pub fn ptr(&self) -> u64 {
        self.ptr
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// A CUDA `CUarray` or HIP `hipArray_t` the producer owns: one plane.
///
/// ```compile_fail
/// let a = vmafx::import::DeviceArray { handle: 1 };
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceArray {
    handle: usize,
}

impl DeviceArray {
    /// # Safety
    /// `handle` is a live array of the device (and CUDA context) the frame
    /// is submitted to, at least as large as the plane it holds; it is not
    /// destroyed or written until the frame's release signals fire.
    pub const unsafe fn from_raw(handle: usize) -> Self {
        Self { handle }
    }

    pub fn as_raw(&self) -> usize {
        self.handle
    }

    /// The array as the device layer takes it.
    pub(crate) fn handle(&self) -> crate::gpu::driver::ArrayHandle {
        crate::gpu::driver::ArrayHandle::from_raw(self.handle)
    }
}

/// A GL texture name of the GL context current on the submitting thread.
///
/// ```compile_fail
/// let t = vmafx::import::GlTexture { name: 1 };
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GlTexture {
    name: u32,
}

impl GlTexture {
    /// # Safety
    /// `name` is a 2D texture of the GL context that is current on the
    /// thread that submits the frame, with the plane's size and a format
    /// the plane can be read as (R8/R16 for a plane, RG8/RG16 for
    /// interleaved chroma); it is not deleted or redefined until the frame's
    /// release signals fire.
    pub const unsafe fn new(name: u32) -> Self {
        Self { name }
    }

    pub fn name(&self) -> u32 {
        self.name
    }
}

/// A Vulkan allocation exported as an opaque fd
/// (`VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT`).
///
/// ```compile_fail
/// # let fd: std::os::fd::OwnedFd = todo!();
/// let m = vmafx::import::VulkanMemoryFd { fd, bytes: 64, dedicated: false };
/// ```
#[derive(Debug)]
pub struct VulkanMemoryFd {
    fd: OwnedFd,
    bytes: u64,
    dedicated: bool,
}

impl VulkanMemoryFd {
    /// # Safety
    /// `fd` was exported (`vkGetMemoryFdKHR`) from a Vulkan allocation of
    /// exactly `bytes` bytes (its `allocationSize`), made as a dedicated
    /// allocation exactly when `dedicated` is true, on the same physical
    /// device as the context's GPU. The allocation's contents are not
    /// written until the frame's release signals fire. (The GPU driver
    /// maps what these values say: wrong ones let device reads leave the
    /// allocation.)
    pub unsafe fn new(fd: OwnedFd, bytes: u64, dedicated: bool) -> Self {
        Self {
            fd,
            bytes,
            dedicated,
        }
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn dedicated(&self) -> bool {
        self.dedicated
    }
}

/// Memory a frame (or one of its planes) lives in. Kinds that name memory
/// by a raw address or handle carry a type that only an `unsafe`
/// constructor makes ([`HostMemory`], [`DevicePtr`], [`DeviceArray`],
/// [`GlTexture`], [`VulkanMemoryFd`]); fd kinds own their fd, and their
/// size is checked against the fd before it is mapped.
#[derive(Debug)]
pub enum Memory {
    /// Host memory the producer keeps valid until release.
    Host(HostMemory),
    /// Device memory of the context's device.
    Device(DevicePtr),
    /// A device array: one plane.
    Array(DeviceArray),
    /// A Linux dma-buf. `modifier` says how its pixels are tiled; only
    /// linear buffers can be read.
    DmaBuf {
        fd: OwnedFd,
        bytes: u64,
        modifier: DrmModifier,
    },
    /// A Vulkan allocation exported as an opaque fd.
    VulkanFd(VulkanMemoryFd),
    /// Host-mappable memory behind an fd (a memfd or shared memory).
    HostFd { fd: OwnedFd, bytes: u64 },
    /// A GL texture: one plane (e.g. R8 luma, RG8 interleaved chroma for
    /// NV12).
    GlTexture(GlTexture),
}

impl Memory {
    /// The kind, as messages name it.
    pub fn kind(&self) -> &'static str {
        match self {
            Memory::Host(_) => "host",
            Memory::Device(_) => "device-pointer",
            Memory::Array(_) => "device-array",
            Memory::DmaBuf { .. } => "dma-buf",
            Memory::VulkanFd(_) => "Vulkan opaque-fd",
            Memory::HostFd { .. } => "host fd",
            Memory::GlTexture(_) => "GL texture",
        }
    }

    /// Its size in bytes, where the kind has one (arrays and textures carry
    /// their own geometry).
    pub fn bytes(&self) -> Option<u64> {
        match self {
            Memory::Host(h) => Some(h.len() as u64),
            Memory::Device(d) => Some(d.bytes()),
            Memory::VulkanFd(v) => Some(v.bytes()),
            Memory::DmaBuf { bytes, .. } | Memory::HostFd { bytes, .. } => Some(*bytes),
            Memory::Array(_) | Memory::GlTexture(_) => None,
        }
    }

    /// Whether one object of this kind holds exactly one plane (offsets and
    /// pitches do not apply).
    pub fn is_per_plane(&self) -> bool {
        matches!(self, Memory::Array(_) | Memory::GlTexture(_))
    }

    /// The fd behind fd-based kinds.
    pub fn fd(&self) -> Option<BorrowedFd<'_>> {
        match self {
            Memory::DmaBuf { fd, .. } | Memory::HostFd { fd, .. } => Some(fd.as_fd()),
            Memory::VulkanFd(v) => Some(v.fd()),
            _ => None,
        }
    }

    /// The DRM modifier, for dma-bufs.
    pub fn modifier(&self) -> Option<DrmModifier> {
        match self {
            Memory::DmaBuf { modifier, .. } => Some(*modifier),
            _ => None,
        }
    }

    /// A dma-buf from a borrowed fd: the fd is duplicated, so the producer
    /// keeps (and closes) its own.
    pub fn dma_buf(fd: BorrowedFd<'_>, bytes: u64, modifier: DrmModifier) -> std::io::Result<Self> {
        Ok(Memory::DmaBuf {
            fd: fd.try_clone_to_owned()?,
            bytes,
            modifier,
        })
    }
}
