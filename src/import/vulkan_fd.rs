//! Where the bytes of a Vulkan opaque fd start, for host reads.
//!
//! An opaque fd is driver-private: only the exporting driver knows its
//! layout. The host-mappable ones are those of Mesa's CPU drivers
//! (lavapipe): a memfd whose allocation follows a small header,
//! `| size | offset | ... | offset | data ... |`, the file size and the
//! data offset at the start and the offset again just before the data.
//! That self-consistent header is checked here; any other fd is refused
//! (a device driver's fd needs a GPU context to import it).

use super::ImportError;
use crate::error::Result;
use nix::sys::stat::{fstat, SFlag};
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::fs::FileExt;

/// The byte offset of the allocation inside the memfd behind `fd`, checked
/// to hold `bytes` bytes from there.
pub(crate) fn data_offset(
    fd: BorrowedFd<'_>,
    bytes: u64,
    error: impl Fn() -> ImportError,
) -> Result<u64> {
    let refuse = |why: String| -> crate::error::Error {
        error()
            .reason(format!(
                "{why}: the CPU engine reads the opaque fds of Mesa's lavapipe only (a memfd \
                 with a data-offset header); import this one on a GPU context \
                 (`--backend cuda|hip`)"
            ))
            .into()
    };
    let stat = fstat(fd.as_raw_fd()).map_err(|e| refuse(format!("fstat failed ({e})")))?;
    if SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT != SFlag::S_IFREG {
        return Err(refuse(
            "the fd is not host memory and cannot be mapped on the host".into(),
        ));
    }
    let size = stat.st_size as u64;
    // A duplicate to read through (closed on return), leaving the
    // frame's fd and its file offset alone.
    let file = std::fs::File::from(
        fd.try_clone_to_owned()
            .map_err(|e| refuse(format!("cannot duplicate the fd ({e})")))?,
    );
    let word = |at: u64| -> Option<u64> {
        let mut b = [0u8; 8];
        file.read_exact_at(&mut b, at).ok()?;
        Some(u64::from_ne_bytes(b))
    };
    let header = (word(0), word(8));
    let (Some(total), Some(offset)) = header else {
        return Err(refuse(format!(
            "the fd holds {size} bytes, too few for a header"
        )));
    };
    let consistent = total == size
        && offset >= 24
        && offset % 8 == 0
        && offset < size
        && word(offset - 8) == Some(offset);
    if !consistent {
        return Err(refuse("the fd has no Mesa memory header".into()));
    }
    if offset + bytes > size {
        return Err(error()
            .reason(format!(
                "the allocation holds {} bytes after its header, the frame claims {bytes}",
                size - offset
            ))
            .into());
    }
    Ok(offset)
}
