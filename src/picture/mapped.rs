//! A frame of a regular file mapped in place: the picture's samples are the
//! page cache's pages, with no copy into picture memory and no picture
//! memory to fault in (ADR 0038).
//!
//! The mapping is private and read-only; its page table entries are made
//! when it is mapped (`MAP_POPULATE`, on the reader's thread), so the
//! extractors that read it take no page faults. A picture that is written
//! to first copies its samples into memory of its own (`Memory::bytes_mut`).
//!
//! The one hazard of a file mapping: if another program truncates the file
//! while a frame of it is mapped, reading the frame's lost pages kills the
//! process (`SIGBUS`). The reader checks the file's size before each
//! mapping; the command line explains such a `SIGBUS` (`cli::sigbus`),
//! and its `--no_mmap` reads with `read(2)` instead.

use std::fs::File;
use std::num::NonZeroUsize;
use std::os::fd::AsFd;
use std::ptr::NonNull;

/// `len` bytes of a file from some offset, mapped read-only; unmapped on
/// drop.
pub(crate) struct MappedBytes {
    /// The mapping's start (a page boundary at or before the bytes).
    base: NonNull<u8>,
    mapped: usize,
    /// Where the bytes start in the mapping.
    head: usize,
    len: usize,
}

// SAFETY: a private read-only mapping owned by this value; nothing writes
// it, so shared access from any thread is sound.
unsafe impl Send for MappedBytes {}
// SAFETY: as above.
unsafe impl Sync for MappedBytes {}

impl MappedBytes {
    /// Maps bytes `offset..offset + len` of `file`, which must hold them
    /// (the caller checks the file's size: pages past its end would fault).
    pub(crate) fn map(file: &File, offset: u64, len: usize) -> std::io::Result<Self> {
        use nix::sys::mman::{mmap, MapFlags, ProtFlags};
        let page = page_size();
        let head = (offset % page as u64) as usize;
        let too_big = || std::io::Error::from(std::io::ErrorKind::InvalidInput);
        let mapped =
            NonZeroUsize::new(head.checked_add(len).ok_or_else(too_big)?).ok_or_else(too_big)?;
        let start = i64::try_from(offset - head as u64).map_err(|_| too_big())?;
        // SAFETY: a fresh private read-only mapping: no Rust object aliases
        // it, and it is only read.
        let base = unsafe {
            mmap(
                None,
                mapped,
                ProtFlags::PROT_READ,
                MapFlags::MAP_PRIVATE | populate(),
                file.as_fd(),
                start,
            )
        }?;
        Ok(Self {
            base: base.cast(),
            mapped: mapped.get(),
            head,
            len,
        })
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: `len` bytes from `head` lie inside the readable mapping,
        // which lives as long as `self`; the file held them when it was
        // mapped (see the module's note on truncation).
        unsafe { std::slice::from_raw_parts(self.base.as_ptr().add(self.head), self.len) }
    }
}

impl Drop for MappedBytes {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by `map` and nothing borrows it any
        // more (`bytes` borrows `self`).
        let _ = unsafe { nix::sys::mman::munmap(self.base.cast(), self.mapped) };
    }
}

fn page_size() -> usize {
    use nix::unistd::{sysconf, SysconfVar};
    static PAGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *PAGE.get_or_init(|| {
        sysconf(SysconfVar::PAGE_SIZE)
            .ok()
            .flatten()
            .and_then(|p| usize::try_from(p).ok())
            .unwrap_or(4096)
    })
}

/// Page table entries made at once, where the system has the flag.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn populate() -> nix::sys::mman::MapFlags {
    nix::sys::mman::MapFlags::MAP_POPULATE
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn populate() -> nix::sys::mman::MapFlags {
    nix::sys::mman::MapFlags::empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn maps_the_bytes_asked_for_at_any_offset() {
        let mut file = tempfile::tempfile().unwrap();
        let data: Vec<u8> = (0..3 * 4096 + 100).map(|i| (i * 7 % 251) as u8).collect();
        file.write_all(&data).unwrap();
        for (offset, len) in [
            (0, data.len()),
            (1, 10),
            (4095, 4097),
            (4096, 100),
            (5000, 7388),
        ] {
            let m = MappedBytes::map(&file, offset as u64, len).unwrap();
            assert_eq!(m.bytes(), &data[offset..offset + len], "{offset}+{len}");
        }
    }

    #[test]
    fn an_empty_range_is_refused() {
        let file = tempfile::tempfile().unwrap();
        let e = MappedBytes::map(&file, 0, 0).err().expect("refused");
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    }
}
