//! Kernel arguments, typed: [`KernelArgs`] takes each argument by value
//! ([`KernelArgs::arg`]) and builds the array of pointers to them that the
//! runtimes' launch calls read, so extractors never handle `*mut c_void`.
//!
//! The values live in a fixed-capacity buffer inside the builder (no
//! allocation per launch: launches run thousands of times a second). Going
//! past its capacity is a programming error (kernel signatures are fixed),
//! so it panics, as slice indexing does.

use super::driver::DevicePtr;
use super::slice::DeviceSlice;
use std::ffi::c_void;
use std::mem::{align_of, size_of, MaybeUninit};

/// Plain data a kernel may take by value: its bytes are what the kernel
/// reads.
///
/// # Safety
/// The type must have the layout of the kernel parameter it is passed as
/// (a primitive, or a `#[repr(C)]` copy of the kernel's struct), and hold
/// no host pointers or references (the device cannot follow them).
pub unsafe trait KernelArg: Copy + 'static {}

macro_rules! plain_args {
    ($($t:ty),*) => {$(
        // SAFETY: a primitive, laid out as the same C type.
        unsafe impl KernelArg for $t {}
    )*};
}
plain_args!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

// SAFETY: arrays of plain data are laid out as C arrays of it.
unsafe impl<T: KernelArg, const N: usize> KernelArg for [T; N] {}

/// What [`KernelArgs::arg`] accepts: plain data as it is, or a device
/// view as the pointer the kernel takes.
pub trait IntoKernelArg {
    type Arg: KernelArg;
    fn into_kernel_arg(self) -> Self::Arg;
}

impl<T: KernelArg> IntoKernelArg for T {
    type Arg = T;
    fn into_kernel_arg(self) -> T {
        self
    }
}

impl<T> IntoKernelArg for DeviceSlice<T> {
    type Arg = DevicePtr;
    fn into_kernel_arg(self) -> DevicePtr {
        self.ptr()
    }
}

/// The most arguments one launch takes (integer `adm` takes 38).
pub const MAX_ARGS: usize = 48;
/// The most bytes of argument values (`psnr_hvs` passes 512 bytes of
/// weights by value; CUDA allows 4 KiB in all).
pub const MAX_BYTES: usize = 1024;
/// The strictest alignment an argument may need.
const ALIGN: usize = 16;

#[repr(C, align(16))]
struct Storage([MaybeUninit<u8>; MAX_BYTES]);

/// A kernel's arguments, in order, built with [`KernelArgs::arg`]:
///
/// ```
/// use vmafx::testing::gpu::KernelArgs;
/// let mut args = KernelArgs::new();
/// args.arg(0x1000u64).arg(1920u32).arg(0.5f32);
/// assert_eq!(args.len(), 3);
/// assert_eq!(args.get::<u32>(1), 1920);
/// ```
///
/// Only plain data goes in:
///
/// ```compile_fail,E0277
/// let mut args = vmafx::testing::gpu::KernelArgs::new();
/// args.arg(&[1u8, 2, 3]);
/// ```
pub struct KernelArgs {
    storage: Storage,
    /// Where each argument starts in `storage`, and its size.
    offsets: [u16; MAX_ARGS],
    sizes: [u16; MAX_ARGS],
    count: usize,
    /// Bytes of `storage` in use.
    end: usize,
    /// Filled by [`KernelArgs::params`], pointing into `storage`.
    params: [*mut c_void; MAX_ARGS],
}

impl Default for KernelArgs {
    fn default() -> Self {
        Self::new()
    }
}

impl KernelArgs {
    pub fn new() -> Self {
        Self {
            storage: Storage([MaybeUninit::uninit(); MAX_BYTES]),
            offsets: [0; MAX_ARGS],
            sizes: [0; MAX_ARGS],
            count: 0,
            end: 0,
            params: [std::ptr::null_mut(); MAX_ARGS],
        }
    }

    /// Appends the next argument.
    ///
    /// # Panics
    /// Past `MAX_ARGS` arguments or `MAX_BYTES` bytes (this module's limits).
    pub fn arg(&mut self, value: impl IntoKernelArg) -> &mut Self {
        self.push(value.into_kernel_arg())
    }

    fn push<T: KernelArg>(&mut self, value: T) -> &mut Self {
        const { assert!(align_of::<T>() <= ALIGN) };
        let at = self.end.next_multiple_of(align_of::<T>());
        let end = at + size_of::<T>();
        assert!(
            self.count < MAX_ARGS && end <= MAX_BYTES,
            "kernel arguments past {MAX_ARGS} values or {MAX_BYTES} bytes"
        );
        // SAFETY: `at..end` lies in `storage`, and `at` is a multiple of
        // T's alignment in a buffer aligned to ALIGN >= that alignment.
        unsafe {
            let slot = self.storage.0.as_mut_ptr().add(at) as *mut T;
            slot.write(value);
        }
        self.offsets[self.count] = at as u16;
        self.sizes[self.count] = size_of::<T>() as u16;
        self.count += 1;
        self.end = end;
        self
    }

    /// Arguments so far.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Argument `index`, read back as a `T` (test drivers use it to see
    /// which buffers a launch was given).
    ///
    /// # Panics
    /// If there is no such argument or it is not the size of a `T`.
    pub fn get<T: KernelArg>(&self, index: usize) -> T {
        assert!(
            index < self.count && usize::from(self.sizes[index]) == size_of::<T>(),
            "kernel argument {index} is not a {}-byte value",
            size_of::<T>()
        );
        let at = usize::from(self.offsets[index]);
        // SAFETY: argument `index` was written at `at` as a value of this
        // size; any `KernelArg` is plain data, valid for any bytes of a
        // value of its size that was written whole.
        unsafe { (self.storage.0.as_ptr().add(at) as *const T).read_unaligned() }
    }

    /// The pointers to each argument, in order, as `cuLaunchKernel` and
    /// `hipModuleLaunchKernel` take them; valid while `self` is borrowed.
    pub fn params(&mut self) -> &mut [*mut c_void] {
        let base = self.storage.0.as_mut_ptr();
        for (param, &at) in self.params.iter_mut().zip(&self.offsets[..self.count]) {
            // SAFETY: every offset lies inside `storage`.
            *param = unsafe { base.add(usize::from(at)) } as *mut c_void;
        }
        &mut self.params[..self.count]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C)]
    #[derive(Clone, Copy, PartialEq, Debug)]
    struct Pair {
        a: f64,
        b: i32,
    }
    // SAFETY: repr(C) plain data.
    unsafe impl KernelArg for Pair {}

    #[test]
    fn values_are_aligned_and_read_back() {
        let mut args = KernelArgs::new();
        let pair = Pair { a: 2.5, b: -3 };
        args.arg(7u8)
            .arg(0xdead_beef_u64)
            .arg(pair)
            .arg([1.0f32; 3]);
        assert_eq!(args.get::<u8>(0), 7);
        assert_eq!(args.get::<u64>(1), 0xdead_beef);
        assert_eq!(args.get::<Pair>(2), pair);
        assert_eq!(args.get::<[f32; 3]>(3), [1.0; 3]);
        let params = args.params();
        assert_eq!(params.len(), 4);
        for (p, align) in params.iter().zip([1, 8, 8, 4]) {
            assert_eq!(*p as usize % align, 0);
        }
        // SAFETY: argument 1 is a u64 at that address.
        assert_eq!(unsafe { *(params[1] as *const u64) }, 0xdead_beef);
    }

    #[test]
    fn a_slice_is_passed_as_its_address() {
        let slice = DeviceSlice::<u64>::from_raw_parts(0x4000, 4);
        let mut args = KernelArgs::new();
        args.arg(slice.offset(1));
        assert_eq!(args.get::<u64>(0), 0x4008);
    }

    #[test]
    #[should_panic(expected = "kernel arguments past")]
    fn too_many_bytes_panic() {
        let mut args = KernelArgs::new();
        args.arg([0u64; 128]).arg(1u8);
    }
}
