//! The implicit fence of a dma-buf as a sync_file
//! (`DMA_BUF_IOCTL_EXPORT_SYNC_FILE`, Linux 6.0): what a producer whose
//! buffers carry implicit fences (V4L2, VA-API, KMS) hands over as
//! [`super::Acquire::SyncFile`].

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// `struct dma_buf_export_sync_file` of `<linux/dma-buf.h>`.
#[repr(C)]
struct ExportSyncFile {
    flags: u32,
    fd: i32,
}

/// `DMA_BUF_SYNC_READ`: the fence of the writes a reader must wait for.
const SYNC_READ: u32 = 1;

nix::ioctl_readwrite!(export_sync_file_ioctl, b'b', 2, ExportSyncFile);

/// A sync_file that signals once the dma-buf's pending writes are done
/// (already signalled when there are none).
pub fn export_sync_file(dmabuf: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    let mut arg = ExportSyncFile {
        flags: SYNC_READ,
        fd: -1,
    };
    // SAFETY: the ioctl fills `arg.fd` with a new fd on success.
    unsafe { export_sync_file_ioctl(dmabuf.as_raw_fd(), &mut arg) }
        .map_err(|e| io::Error::from_raw_os_error(e as i32))?;
    // SAFETY: a new fd, ours.
    Ok(unsafe { OwnedFd::from_raw_fd(arg.fd) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn a_non_dmabuf_is_refused_by_the_kernel() {
        let memfd = nix::sys::memfd::memfd_create(
            c"not-a-dmabuf",
            nix::sys::memfd::MemFdCreateFlag::MFD_CLOEXEC,
        )
        .unwrap();
        let err = export_sync_file(memfd.as_fd()).unwrap_err();
        // ENOTTY: the memfd does not know the dma-buf ioctl.
        assert_eq!(err.raw_os_error(), Some(nix::libc::ENOTTY), "{err}");
    }
}
