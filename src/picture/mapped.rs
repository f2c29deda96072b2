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

use crossbeam_channel::{unbounded, Receiver, Sender};
use std::fs::File;
use std::num::NonZeroUsize;
use std::os::fd::AsFd;
use std::ptr::NonNull;

/// `len` bytes of a file from some offset, mapped read-only; unmapped on
/// drop, or handed to the [`Retired`] it was mapped with.
pub(crate) struct MappedBytes {
    /// The mapping's start (a page boundary at or before the bytes).
    base: NonNull<u8>,
    mapped: usize,
    /// Where the bytes start in the mapping.
    head: usize,
    len: usize,
    retire: Option<Sender<Mapping>>,
}

/// A mapping's start and length, to unmap.
struct Mapping(usize, usize);

impl Mapping {
    fn unmap(self) {
        if let Some(base) = NonNull::new(self.0 as *mut std::ffi::c_void) {
            // SAFETY: a mapping made by `MappedBytes::map` whose owner is
            // gone: nothing borrows it.
            let _ = unsafe { nix::sys::mman::munmap(base, self.1) };
        }
    }
}

/// Mappings whose pictures are gone, unmapped by the thread that maps the
/// frames (between frames) rather than by the threads that scored them:
/// unmapping a frame clears its page table entries, about 1 % of a
/// scoring thread's time. Pictures dropped after this is gone unmap
/// themselves.
pub(crate) struct Retired {
    tx: Sender<Mapping>,
    rx: Receiver<Mapping>,
}

impl Retired {
    pub(crate) fn new() -> Self {
        let (tx, rx) = unbounded();
        Self { tx, rx }
    }

    /// Unmaps every mapping retired so far.
    pub(crate) fn unmap(&self) {
        for mapping in self.rx.try_iter() {
            mapping.unmap();
        }
    }
}

impl Drop for Retired {
    fn drop(&mut self) {
        self.unmap();
    }
}

// SAFETY: a private read-only mapping owned by this value; nothing writes
// it, so shared access from any thread is sound.
unsafe impl Send for MappedBytes {}
// SAFETY: as above.
unsafe impl Sync for MappedBytes {}

impl MappedBytes {
    /// Maps bytes `offset..offset + len` of `file`, which must hold them
    /// (the caller checks the file's size: pages past its end would fault);
    /// dropped, the mapping goes to `retired`, where given.
    pub(crate) fn map(
        file: &File,
        offset: u64,
        len: usize,
        retired: Option<&Retired>,
    ) -> std::io::Result<Self> {
        use nix::sys::mman::{mmap, MapFlags, ProtFlags};
        #[cfg(test)]
        if refusal::on() {
            return Err(nix::errno::Errno::ENODEV.into());
        }
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
            retire: retired.map(|r| r.tx.clone()),
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
        // Nothing borrows the mapping any more (`bytes` borrows `self`).
        let mapping = Mapping(self.base.as_ptr() as usize, self.mapped);
        match self.retire.take() {
            // The retirement gone: unmap here.
            Some(tx) => {
                if let Err(e) = tx.send(mapping) {
                    e.into_inner().unmap();
                }
            }
            None => mapping.unmap(),
        }
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

/// Mappings refused on one test thread, as a file system without `mmap`
/// refuses them: no file system at hand does, and the readers' way back to
/// `read(2)` needs a test.
#[cfg(test)]
pub(crate) mod refusal {
    use std::cell::Cell;

    thread_local! {
        static REFUSED: Cell<bool> = const { Cell::new(false) };
    }

    /// Refuses this thread's mappings until the guard is dropped.
    pub(crate) fn refuse_maps() -> Guard {
        REFUSED.with(|r| r.set(true));
        Guard
    }

    pub(super) fn on() -> bool {
        REFUSED.with(Cell::get)
    }

    pub(crate) struct Guard;

    impl Drop for Guard {
        fn drop(&mut self) {
            REFUSED.with(|r| r.set(false));
        }
    }
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
            let m = MappedBytes::map(&file, offset as u64, len, None).unwrap();
            assert_eq!(m.bytes(), &data[offset..offset + len], "{offset}+{len}");
        }
    }

    #[test]
    fn an_empty_range_is_refused() {
        let file = tempfile::tempfile().unwrap();
        let e = MappedBytes::map(&file, 0, 0, None).err().expect("refused");
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    }

    /// Dropped mappings given a retirement stay mapped until it unmaps
    /// them (or is dropped); without one, they go at once.
    #[cfg(target_os = "linux")]
    #[test]
    fn retired_mappings_go_when_unmapped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("frames.bin");
        std::fs::write(&path, vec![7u8; 3 * 4096]).unwrap();
        let file = File::open(&path).unwrap();
        let name = path.to_str().unwrap();
        let mapped = || {
            std::fs::read_to_string("/proc/self/maps")
                .unwrap()
                .matches(name)
                .count()
        };
        drop(MappedBytes::map(&file, 0, 4096, None).unwrap());
        assert_eq!(mapped(), 0);
        let retired = Retired::new();
        let m = MappedBytes::map(&file, 4096, 100, Some(&retired)).unwrap();
        assert_eq!(m.bytes(), &[7u8; 100][..]);
        drop(m);
        assert_eq!(mapped(), 1);
        retired.unmap();
        assert_eq!(mapped(), 0);
        let m = MappedBytes::map(&file, 8192, 100, Some(&retired)).unwrap();
        drop(retired);
        assert_eq!(mapped(), 1, "the live picture's mapping stays");
        drop(m);
        assert_eq!(mapped(), 0, "and goes with it");
    }
}
