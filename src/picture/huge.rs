//! Zeroed host memory for large pictures, mapped on 2 MiB boundaries and
//! advised to the kernel as transparent huge pages (all but the tail past
//! the last whole huge page).
//!
//! A 1080p picture is 3-6 MB: in 4 KiB pages its first touch costs about a
//! thousand page faults, and the extractors' row walks miss the TLB across
//! its pages. Where the system leaves huge pages to the program's advice
//! (`transparent_hugepage/enabled` = `madvise`, a common default), a
//! mapping aligned to 2 MiB and advised `MADV_HUGEPAGE` faults in 2 MiB
//! at a time. The advice is only a hint: where the kernel declines it, the
//! memory is ordinary zeroed pages and nothing else changes.

use std::num::NonZeroUsize;
use std::ptr::NonNull;

/// The huge page size advised for.
const HUGE: usize = 2 << 20;

/// Buffers at least this large are mapped on their own; smaller ones stay
/// on the heap (less than a huge page has nothing to gain).
pub(crate) const MIN_BYTES: usize = HUGE;

/// An anonymous mapping of whole 2 MiB-aligned huge pages, zeroed by the
/// kernel, unmapped on drop.
pub(crate) struct HugeRegion {
    start: NonNull<u8>,
    /// Bytes asked for (the mapping is rounded up to whole huge pages).
    len: usize,
    mapped: usize,
}

// SAFETY: the region is owned memory with no thread affinity; shared
// references only read it, and writes need `&mut`.
unsafe impl Send for HugeRegion {}
// SAFETY: as above.
unsafe impl Sync for HugeRegion {}

impl HugeRegion {
    /// A zeroed region for a buffer of `len` bytes where that is worth a
    /// mapping of its own ([`MIN_BYTES`] or more); `None` below that or
    /// where the system refuses the mapping (the caller then allocates
    /// otherwise).
    pub(crate) fn for_large(len: usize) -> Option<Self> {
        (len >= MIN_BYTES).then(|| Self::zeroed(len)).flatten()
    }

    /// A zeroed region of `len` bytes, or `None` where the system refuses
    /// the mapping (the caller then uses the heap).
    pub(super) fn zeroed(len: usize) -> Option<Self> {
        use nix::sys::mman::{mmap_anonymous, munmap, MapFlags, ProtFlags};
        let mapped = len.checked_next_multiple_of(HUGE)?;
        // One huge page of slack to find a 2 MiB boundary in; the slack
        // either side is given back at once.
        let reserve = NonZeroUsize::new(mapped.checked_add(HUGE)?)?;
        // SAFETY: a fresh private anonymous mapping aliases nothing.
        let base = unsafe {
            mmap_anonymous(
                None,
                reserve,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_PRIVATE,
            )
        }
        .ok()?
        .cast::<u8>();
        let head = base.as_ptr().align_offset(HUGE);
        let tail = reserve.get() - head - mapped;
        // SAFETY: head and tail are inside the mapping just made and not
        // part of the region kept; failing to unmap them only wastes
        // address space.
        unsafe {
            if head > 0 {
                let _ = munmap(base.cast(), head);
            }
            if tail > 0 {
                let _ = munmap(base.add(head + mapped).cast(), tail);
            }
        }
        // SAFETY: head < HUGE <= the mapping's length.
        let start = unsafe { base.add(head) };
        // Only the whole huge pages inside `len`: a huge page is cleared
        // whole on its first touch, so the part of the last one past
        // `len` (up to 2 MiB of a 6 MB picture) would be cleared for
        // nothing. The tail stays in small pages, faulted as used.
        advise_huge(start, len / HUGE * HUGE);
        Some(Self { start, len, mapped })
    }

    /// The region's first byte (for registering it with a device).
    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.start.as_ptr()
    }

    pub(super) fn bytes(&self) -> &[u8] {
        // SAFETY: `len` bytes from `start` are mapped, readable and
        // initialized (zeroed by the kernel) for the region's lifetime.
        unsafe { std::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }

    pub(super) fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as `bytes`, and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.start.as_ptr(), self.len) }
    }
}

impl Drop for HugeRegion {
    fn drop(&mut self) {
        // SAFETY: the region was mapped by `zeroed` and nothing borrows it
        // any more.
        let _ = unsafe { nix::sys::mman::munmap(self.start.cast(), self.mapped) };
    }
}

/// Asks for huge pages; a kernel without them, or one configured never to
/// use them, refuses, which changes nothing but speed.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn advise_huge(start: NonNull<u8>, len: usize) {
    use nix::sys::mman::{madvise, MmapAdvise};
    // SAFETY: advice on a mapping this module owns; it does not change the
    // memory's contents.
    let _ = unsafe { madvise(start.cast(), len, MmapAdvise::MADV_HUGEPAGE) };
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn advise_huge(_: NonNull<u8>, _: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_region_is_zeroed_aligned_and_writable_to_its_last_byte() {
        let len = 3 * HUGE + 12345;
        let mut r = HugeRegion::zeroed(len).expect("an anonymous mapping");
        assert_eq!(r.bytes().len(), len);
        assert_eq!(r.start.as_ptr() as usize % HUGE, 0);
        assert!(r.bytes().iter().all(|&b| b == 0));
        r.bytes_mut()[len - 1] = 7;
        r.bytes_mut()[0] = 9;
        assert_eq!((r.bytes()[0], r.bytes()[len - 1]), (9, 7));
    }

    #[test]
    fn a_size_that_overflows_the_rounding_is_refused_not_wrapped() {
        assert!(HugeRegion::zeroed(usize::MAX - 10).is_none());
    }
}
