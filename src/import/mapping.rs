//! Host views of a frame's memory: host memory as it is, fd-backed memory
//! (memfds, Vulkan opaque fds that are memfds, linear dma-bufs) mapped
//! read-only and unmapped on drop. Dma-buf reads are bracketed by
//! `DMA_BUF_IOCTL_SYNC` so the CPU sees what the device wrote.

use super::memory::Memory;
use super::ImportError;
use crate::error::Result;
use nix::sys::mman::{mmap, munmap, MapFlags, ProtFlags};
use nix::sys::stat::{fstat, SFlag};
use std::ffi::c_void;
use std::num::NonZeroUsize;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::ptr::NonNull;

/// `struct dma_buf_sync` of `<linux/dma-buf.h>`.
#[repr(C)]
struct DmaBufSync {
    flags: u64,
}
const DMA_BUF_SYNC_READ: u64 = 1;
const DMA_BUF_SYNC_START: u64 = 0;
const DMA_BUF_SYNC_END: u64 = 1 << 2;
nix::ioctl_write_ptr!(dma_buf_ioctl_sync, b'b', 0, DmaBufSync);

/// The bytes `0..len` of one memory object, readable on the host.
pub(crate) enum HostView<'a> {
    Borrowed(&'a [u8]),
    Mapped(Mapping<'a>),
}

impl HostView<'_> {
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            HostView::Borrowed(b) => b,
            HostView::Mapped(m) => m.bytes(),
        }
    }
}

/// Views bytes `0..end` of `memory` (of the allocation, for Vulkan fds)
/// on the host; `error` names the memory in refusals.
pub(crate) fn view<'a>(
    memory: &'a Memory,
    end: u64,
    error: impl Fn() -> ImportError,
) -> Result<HostView<'a>> {
    match memory {
        // SAFETY: the producer promised (HostMemory::new) the bytes stay
        // valid and unwritten until release; the frame is alive here.
        Memory::Host(h) => Ok(HostView::Borrowed(unsafe { h.as_slice() })),
        Memory::HostFd { fd, .. } => {
            Mapping::new(fd.as_fd(), 0, end, false, error).map(HostView::Mapped)
        }
        Memory::DmaBuf { fd, .. } => {
            Mapping::new(fd.as_fd(), 0, end, true, error).map(HostView::Mapped)
        }
        Memory::VulkanFd(v) => {
            let base = super::vulkan_fd::data_offset(v.fd(), v.bytes(), &error)?;
            Mapping::new(v.fd(), base, end, false, error).map(HostView::Mapped)
        }
        other => Err(error()
            .reason(format!(
                "{} memory cannot be read on the host: it needs a GPU context \
                 (`--backend cuda|hip`)",
                other.kind()
            ))
            .into()),
    }
}

/// A read-only shared mapping of bytes `base..base + len` of an fd. It
/// maps from offset 0, which avoids page-size arithmetic and costs address
/// space only.
pub(crate) struct Mapping<'a> {
    ptr: NonNull<c_void>,
    base: usize,
    len: usize,
    /// The dma-buf whose CPU access was started (ended on drop).
    dma_buf: Option<BorrowedFd<'a>>,
}

impl<'a> Mapping<'a> {
    fn new(
        fd: BorrowedFd<'a>,
        base: u64,
        len: u64,
        dma_buf: bool,
        error: impl Fn() -> ImportError,
    ) -> Result<Self> {
        let end = base + len;
        let mapped = usize::try_from(end)
            .ok()
            .and_then(NonZeroUsize::new)
            .ok_or_else(|| error().reason(format!("cannot map {end} bytes")))?;
        // Reading past the end of a file-backed mapping raises SIGBUS: a
        // memfd must really hold the bytes the descriptor claims.
        let stat = fstat(fd.as_raw_fd())
            .map_err(|e| error().reason(format!("fstat of the fd failed: {e}")))?;
        let regular = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFREG;
        // A dma-buf is no regular file, but seeking to its end gives its
        // size (Linux 3.19 and later); other fds that cannot seek keep the
        // driver's word.
        let size = if regular {
            Some(stat.st_size as u64)
        } else {
            nix::unistd::lseek(fd.as_raw_fd(), 0, nix::unistd::Whence::SeekEnd)
                .ok()
                .map(|s| s as u64)
        };
        if let Some(size) = size.filter(|&s| s < end) {
            return Err(error()
                .reason(format!(
                    "the fd holds {size} bytes but the planes end at byte {end}"
                ))
                .into());
        }
        // SAFETY: a fresh read-only mapping at an address of the kernel's
        // choosing; it aliases nothing Rust owns.
        let ptr = unsafe {
            mmap(
                None,
                mapped,
                ProtFlags::PROT_READ,
                MapFlags::MAP_SHARED,
                fd,
                0,
            )
        }
        .map_err(|e| {
            error().reason(format!(
                "the fd cannot be mapped on the host ({e}); device memory needs a GPU \
                 context (`--backend cuda|hip`)"
            ))
        })?;
        let mut mapping = Mapping {
            ptr,
            base: base as usize,
            len: len as usize,
            dma_buf: None,
        };
        if dma_buf && sync(fd, DMA_BUF_SYNC_START).map_err(|reason| error().reason(reason))? {
            mapping.dma_buf = Some(fd);
        }
        Ok(mapping)
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `base + len` readable bytes mapped in `new`, alive until
        // drop.
        unsafe {
            std::slice::from_raw_parts(self.ptr.as_ptr().cast::<u8>().add(self.base), self.len)
        }
    }
}

impl Drop for Mapping<'_> {
    fn drop(&mut self) {
        if let Some(fd) = self.dma_buf {
            // Nothing to report to: the read is over either way.
            let _ = sync(fd, DMA_BUF_SYNC_END);
        }
        // SAFETY: the mapping made in `new`, unmapped once.
        let _ = unsafe { munmap(self.ptr, self.base + self.len) };
    }
}

/// Starts or ends CPU read access to a dma-buf. Returns false for an fd that
/// is not a dma-buf (ENOTTY: e.g. a memfd handed over as one), which has no
/// device caches to synchronise.
fn sync(fd: BorrowedFd<'_>, phase: u64) -> std::result::Result<bool, String> {
    let arg = DmaBufSync {
        flags: phase | DMA_BUF_SYNC_READ,
    };
    // SAFETY: the ioctl reads one `dma_buf_sync` from `arg`.
    match unsafe { dma_buf_ioctl_sync(fd.as_raw_fd(), &arg) } {
        Ok(_) => Ok(true),
        Err(nix::errno::Errno::ENOTTY) => Ok(false),
        Err(e) => Err(format!("DMA_BUF_IOCTL_SYNC failed: {e}")),
    }
}
