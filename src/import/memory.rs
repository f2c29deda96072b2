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
        std::slice::from_raw_parts(self.ptr.as_ptr(), self.bytes)
    }
}

/// Memory a frame (or one of its planes) lives in.
#[derive(Debug)]
pub enum Memory {
    /// Host memory the producer keeps valid until release.
    Host(HostMemory),
    /// Device memory of the context's device: a CUDA `CUdeviceptr` or a HIP
    /// device pointer, `bytes` long.
    Device { ptr: u64, bytes: u64 },
    /// A CUDA `CUarray` or HIP `hipArray_t` the producer owns: one plane.
    Array { handle: usize },
    /// A Linux dma-buf. `modifier` says how its pixels are tiled; only
    /// linear buffers can be read.
    DmaBuf {
        fd: OwnedFd,
        bytes: u64,
        modifier: DrmModifier,
    },
    /// A Vulkan allocation exported as an opaque fd
    /// (`VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT`), `bytes` its
    /// allocation size; `dedicated` when it was a dedicated allocation.
    VulkanFd {
        fd: OwnedFd,
        bytes: u64,
        dedicated: bool,
    },
    /// Host-mappable memory behind an fd (a memfd or shared memory).
    HostFd { fd: OwnedFd, bytes: u64 },
    /// A GL texture of the GL context current on the submitting thread:
    /// one plane (e.g. R8 luma, RG8 interleaved chroma for NV12).
    GlTexture { texture: u32 },
}

impl Memory {
    /// The kind, as messages name it.
    pub fn kind(&self) -> &'static str {
        match self {
            Memory::Host(_) => "host",
            Memory::Device { .. } => "device-pointer",
            Memory::Array { .. } => "device-array",
            Memory::DmaBuf { .. } => "dma-buf",
            Memory::VulkanFd { .. } => "Vulkan opaque-fd",
            Memory::HostFd { .. } => "host fd",
            Memory::GlTexture { .. } => "GL texture",
        }
    }

    /// Its size in bytes, where the kind has one (arrays and textures carry
    /// their own geometry).
    pub fn bytes(&self) -> Option<u64> {
        match self {
            Memory::Host(h) => Some(h.len() as u64),
            Memory::Device { bytes, .. }
            | Memory::DmaBuf { bytes, .. }
            | Memory::VulkanFd { bytes, .. }
            | Memory::HostFd { bytes, .. } => Some(*bytes),
            Memory::Array { .. } | Memory::GlTexture { .. } => None,
        }
    }

    /// Whether one object of this kind holds exactly one plane (offsets and
    /// pitches do not apply).
    pub fn is_per_plane(&self) -> bool {
        matches!(self, Memory::Array { .. } | Memory::GlTexture { .. })
    }

    /// The fd behind fd-based kinds.
    pub fn fd(&self) -> Option<BorrowedFd<'_>> {
        match self {
            Memory::DmaBuf { fd, .. } | Memory::VulkanFd { fd, .. } | Memory::HostFd { fd, .. } => {
                Some(fd.as_fd())
            }
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
