//! Where a host picture's samples live: its own allocation, a buffer lent
//! by a [`PicturePool`] and given back when the picture is dropped, or a
//! frame of a file mapped in place (read-only until written).
//!
//! A pool is how a producer that makes a picture per frame avoids making
//! one: the buffers are reused, so no frame pays for allocating and
//! faulting in tens of megabytes. A GPU context's pool lends page-locked
//! (pinned) buffers, which the upload reads directly (no staging copy).

use super::huge::HugeRegion;
use super::mapped::MappedBytes;
use super::{HostPicture, PictureFormat};
use crate::error::Result;
use std::sync::{Arc, Mutex, Weak};

/// Memory a pool lends. Implementations own plain host memory.
pub(crate) trait PictureBuffer: Send + Sync {
    fn bytes(&self) -> &[u8];
    fn bytes_mut(&mut self) -> &mut [u8];
    /// Page-locked for device copies: an upload may read it directly.
    fn pinned(&self) -> bool;
}

/// A picture's own memory: heap words (aligned for 16-bit samples and for
/// the wide loads of the CPU kernels), or, for a large buffer
/// ([`HugeRegion::for_large`]), a mapping advised as huge pages (fewer
/// faults and TLB misses).
pub(crate) enum HeapBuffer {
    Words(Vec<u64>),
    Huge(HugeRegion),
}

impl HeapBuffer {
    pub(crate) fn zeroed(bytes: usize) -> Self {
        match HugeRegion::for_large(bytes) {
            Some(region) => Self::Huge(region),
            None => Self::Words(vec![0; bytes.div_ceil(8)]),
        }
    }

    /// Memory of its own holding a copy of `bytes`.
    pub(crate) fn copy_of(bytes: &[u8]) -> Self {
        let mut own = Self::zeroed(bytes.len());
        own.bytes_mut()[..bytes.len()].copy_from_slice(bytes);
        own
    }
}

impl PictureBuffer for HeapBuffer {
    fn bytes(&self) -> &[u8] {
        match self {
            Self::Words(w) => bytemuck::cast_slice(w),
            Self::Huge(r) => r.bytes(),
        }
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        match self {
            Self::Words(w) => bytemuck::cast_slice_mut(w),
            Self::Huge(r) => r.bytes_mut(),
        }
    }
    fn pinned(&self) -> bool {
        false
    }
}

/// A picture's memory.
pub(super) enum Memory {
    Own(HeapBuffer),
    Lent(Lent),
    /// Read in place; a write first copies it into `Own` memory.
    Mapped(Box<MappedBytes>),
}

impl Memory {
    pub(super) fn bytes(&self) -> &[u8] {
        match self {
            Memory::Own(b) => b.bytes(),
            Memory::Lent(l) => l.buffer().bytes(),
            Memory::Mapped(m) => m.bytes(),
        }
    }
    pub(super) fn bytes_mut(&mut self) -> &mut [u8] {
        if let Memory::Mapped(m) = self {
            *self = Memory::Own(HeapBuffer::copy_of(m.bytes()));
        }
        match self {
            Memory::Own(b) => b.bytes_mut(),
            Memory::Lent(l) => l.buffer_mut().bytes_mut(),
            Memory::Mapped(_) => unreachable!("copied into memory of its own above"),
        }
    }
    pub(super) fn pinned(&self) -> bool {
        match self {
            Memory::Own(_) | Memory::Mapped(_) => false,
            Memory::Lent(l) => l.buffer().pinned(),
        }
    }
}

/// A buffer on loan from a pool: back to the pool when dropped (freed if
/// the pool is gone or already holds as many as it keeps).
pub(super) struct Lent {
    buffer: Option<Box<dyn PictureBuffer>>,
    home: Weak<Shared>,
}

impl Lent {
    fn buffer(&self) -> &dyn PictureBuffer {
        self.buffer
            .as_deref()
            .expect("a lent buffer is present until dropped")
    }
    fn buffer_mut(&mut self) -> &mut dyn PictureBuffer {
        self.buffer
            .as_deref_mut()
            .expect("a lent buffer is present until dropped")
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        if let (Some(buffer), Some(home)) = (self.buffer.take(), self.home.upgrade()) {
            let mut free = home.free.lock().unwrap_or_else(|e| e.into_inner());
            if free.len() < home.keep {
                free.push(buffer);
            }
        }
    }
}

type MakeBuffer = dyn Fn(usize) -> Result<Box<dyn PictureBuffer>> + Send + Sync;

struct Shared {
    format: PictureFormat,
    free: Mutex<Vec<Box<dyn PictureBuffer>>>,
    /// Buffers kept for reuse at most; more are freed when given back.
    keep: usize,
    make: Box<MakeBuffer>,
}

/// Pictures of one format whose memory is reused: get one per frame with
/// [`PicturePool::picture`], fill it, submit it; once the context no longer
/// reads it, its memory comes back here for a later picture. Cloning the
/// pool shares it (for reader threads).
///
/// A lent picture's samples are whatever its last user left: fill every
/// plane. Its rows are tightly packed (stride = width), so a packed frame
/// of a `.yuv` file is its memory plane by plane.
#[derive(Clone)]
pub struct PicturePool {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for PicturePool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PicturePool")
            .field("format", &self.shared.format)
            .field("keep", &self.shared.keep)
            .finish_non_exhaustive()
    }
}

impl PicturePool {
    /// A pool of heap pictures.
    pub fn new(format: PictureFormat, keep: usize) -> Self {
        Self::with_buffers(format, keep, |bytes| {
            Ok(Box::new(HeapBuffer::zeroed(bytes)))
        })
    }

    /// A pool whose buffers come from `make` (pinned memory of a GPU).
    pub(crate) fn with_buffers(
        format: PictureFormat,
        keep: usize,
        make: impl Fn(usize) -> Result<Box<dyn PictureBuffer>> + Send + Sync + 'static,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                format,
                free: Mutex::new(Vec::new()),
                keep,
                make: Box::new(make),
            }),
        }
    }

    pub fn format(&self) -> &PictureFormat {
        &self.shared.format
    }

    /// A picture to fill: reused memory when some was given back, new
    /// memory otherwise (this never waits).
    pub fn picture(&self) -> Result<HostPicture> {
        let format = self.shared.format;
        let layout = super::Layout::packed(&format);
        let reused = self
            .shared
            .free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        let buffer = match reused {
            Some(b) => b,
            None => (self.shared.make)(layout.bytes)?,
        };
        let memory = Memory::Lent(Lent {
            buffer: Some(buffer),
            home: Arc::downgrade(&self.shared),
        });
        Ok(HostPicture::from_parts(format, layout, memory))
    }

    /// Buffers waiting for reuse (for tests and benchmarks).
    pub fn idle(&self) -> usize {
        self.shared
            .free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len()
    }
}
