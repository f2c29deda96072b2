//! Typed views of device memory: [`DeviceSlice<T>`] is an address and a
//! length in `T`s, carved from a [`super::device::DeviceBuffer`] with
//! [`DeviceBuffer::slice`](super::device::DeviceBuffer::slice) and narrowed
//! with [`DeviceSlice::slice`] / [`DeviceSlice::offset`], so extractors
//! address sub-ranges (sums per scale, rings, pyramids) without pointer
//! arithmetic.
//!
//! Every view is bounds-checked when it is made. A range outside its
//! parent is a bug in the extractor, never a property of the input, so it
//! panics as slice indexing does. A view does not keep its buffer alive:
//! like the buffer's address, it is valid while the buffer lives, and the
//! launches and copies that use it promise as much (they are `unsafe`).

use super::driver::DevicePtr;
use std::fmt;
use std::marker::PhantomData;
use std::mem::{align_of, size_of};
use std::ops::{Bound, RangeBounds};

/// `len` values of `T` in device memory from `ptr`.
pub struct DeviceSlice<T> {
    ptr: DevicePtr,
    len: usize,
    _values: PhantomData<fn() -> T>,
}

// Not derived: those would ask `T` for the same traits.
impl<T> Clone for DeviceSlice<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DeviceSlice<T> {}
impl<T> PartialEq for DeviceSlice<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.ptr, self.len) == (other.ptr, other.len)
    }
}
impl<T> Eq for DeviceSlice<T> {}
impl<T> fmt::Debug for DeviceSlice<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "DeviceSlice<{}>({:#x}, {})",
            std::any::type_name::<T>(),
            self.ptr,
            self.len
        )
    }
}

impl<T> DeviceSlice<T> {
    /// The view of `len` values at `ptr` (aligned for `T`).
    ///
    /// # Panics
    /// If `ptr` is not aligned for `T`.
    pub fn from_raw_parts(ptr: DevicePtr, len: usize) -> Self {
        assert!(
            ptr.is_multiple_of(align_of::<T>() as u64),
            "device address {ptr:#x} is not aligned for {}",
            std::any::type_name::<T>()
        );
        Self {
            ptr,
            len,
            _values: PhantomData,
        }
    }

    /// The first value's address.
    pub fn ptr(self) -> DevicePtr {
        self.ptr
    }

    /// Values in the view.
    pub fn len(self) -> usize {
        self.len
    }

    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// Bytes in the view.
    pub fn bytes(self) -> usize {
        self.len * size_of::<T>()
    }

    /// The values `range` of this view.
    ///
    /// # Panics
    /// If `range` is not inside `0..len`.
    pub fn slice(self, range: impl RangeBounds<usize>) -> Self {
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s + 1,
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e + 1,
            Bound::Excluded(&e) => e,
            Bound::Unbounded => self.len,
        };
        assert!(
            start <= end && end <= self.len,
            "device range {start}..{end} is outside a view of {} values",
            self.len
        );
        Self {
            ptr: self.ptr + (start * size_of::<T>()) as u64,
            len: end - start,
            _values: PhantomData,
        }
    }

    /// The values from `n` on (`slice(n..)`).
    pub fn offset(self, n: usize) -> Self {
        self.slice(n..)
    }

    /// The same bytes as values of `U` (as many as fit).
    ///
    /// # Panics
    /// If the address is not aligned for `U`.
    pub fn cast<U>(self) -> DeviceSlice<U> {
        DeviceSlice::from_raw_parts(self.ptr, self.bytes() / size_of::<U>().max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_narrow_within_bounds() {
        let whole = DeviceSlice::<u64>::from_raw_parts(0x1000, 16);
        let scale = whole.slice(4..8);
        assert_eq!((scale.ptr(), scale.len()), (0x1020, 4));
        assert_eq!(scale.offset(1).ptr(), 0x1028);
        assert_eq!(whole.slice(..=1).len(), 2);
        assert_eq!(whole.slice(16..).len(), 0);
        let words = whole.slice(2..3).cast::<u32>();
        assert_eq!((words.ptr(), words.len()), (0x1010, 2));
    }

    #[test]
    #[should_panic(expected = "outside a view of 16 values")]
    fn a_range_past_the_end_panics() {
        DeviceSlice::<u64>::from_raw_parts(0x1000, 16).slice(8..17);
    }

    #[test]
    #[should_panic(expected = "not aligned")]
    fn a_misaligned_cast_panics() {
        DeviceSlice::<u8>::from_raw_parts(0x1001, 16).cast::<u32>();
    }
}
