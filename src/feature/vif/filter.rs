//! Pieces shared by the separable filter passes of integer VIF (local
//! moments, decimation): libvmaf's rounding shifts and accumulator widths.
//!
//! Both passes run vertically first (into a row of 32-bit intermediates),
//! then horizontally, with libvmaf's rounding shifts between them. Edges
//! are mirrored without repeating the edge sample (`x[-k] = x[k]`, see
//! [`crate::feature::common::mirrored_filter`]), as libvmaf pads its rows
//! and columns. All integer arithmetic wraps as C's
//! unsigned arithmetic does; every true result fits its type, so the order
//! of the sums does not matter.

use crate::picture::{PlaneRef, Sample};

/// Columns processed together: wide enough for the compiler to fill vector
/// registers, small enough to keep accumulators in them.
pub const LANES: usize = 8;

/// `(v + 2^(shift-1)) >> shift` in the accumulator's width, as libvmaf
/// rounds (a zero shift leaves the value as it is).
#[inline(always)]
pub fn round_shift_u32(v: u32, shift: u32) -> u32 {
    if shift == 0 {
        v
    } else {
        v.wrapping_add(1 << (shift - 1)) >> shift
    }
}

#[inline(always)]
pub fn round_shift_u64(v: u64, shift: u32) -> u64 {
    if shift == 0 {
        v
    } else {
        v.wrapping_add(1 << (shift - 1)) >> shift
    }
}

/// Accumulator of the vertical second moments: 32 bits suffice for 8-bit
/// samples (libvmaf uses `uint32_t` there), 64 bits otherwise.
pub trait SquareAccumulator: Copy + Default + Send {
    /// `self + v`, wrapping as C's unsigned arithmetic.
    fn add(self, v: Self) -> Self;
    /// Rounds away `shift` bits and narrows to 32 bits (C's cast).
    fn narrow(self, shift: u32) -> u32;
}

impl SquareAccumulator for u32 {
    #[inline(always)]
    fn add(self, v: Self) -> Self {
        self.wrapping_add(v)
    }
    #[inline(always)]
    fn narrow(self, shift: u32) -> u32 {
        round_shift_u32(self, shift)
    }
}

impl SquareAccumulator for u64 {
    #[inline(always)]
    fn add(self, v: Self) -> Self {
        self.wrapping_add(v)
    }
    #[inline(always)]
    fn narrow(self, shift: u32) -> u32 {
        round_shift_u64(self, shift) as u32
    }
}

/// A sample type the moment pass reads, with the accumulator width libvmaf
/// uses for it.
pub trait VifSample: Sample {
    type SquareAcc: SquareAccumulator;
    /// `weight * a * b` in the accumulator's width (exact: it fits).
    fn weighted_product(weight: u16, a: Self, b: Self) -> Self::SquareAcc;
    /// The plane as 8-bit samples, when that is what it holds (the 8-bit
    /// code has its own vector path).
    fn as_u8(plane: PlaneRef<'_, Self>) -> Option<PlaneRef<'_, u8>>;
    /// The plane as 16-bit samples, when that is what it holds.
    fn as_u16(plane: PlaneRef<'_, Self>) -> Option<PlaneRef<'_, u16>>;
}

impl VifSample for u8 {
    type SquareAcc = u32;
    #[inline(always)]
    fn weighted_product(weight: u16, a: u8, b: u8) -> u32 {
        // a * b fits 16 bits, which lets 16-bit vector multiplies do it.
        u32::from(weight) * u32::from(u16::from(a) * u16::from(b))
    }
    fn as_u8(plane: PlaneRef<'_, u8>) -> Option<PlaneRef<'_, u8>> {
        Some(plane)
    }
    fn as_u16(_: PlaneRef<'_, u8>) -> Option<PlaneRef<'_, u16>> {
        None
    }
}

impl VifSample for u16 {
    type SquareAcc = u64;
    #[inline(always)]
    fn weighted_product(weight: u16, a: u16, b: u16) -> u64 {
        u64::from(u32::from(weight) * u32::from(a)) * u64::from(b)
    }
    fn as_u8(_: PlaneRef<'_, u16>) -> Option<PlaneRef<'_, u8>> {
        None
    }
    fn as_u16(plane: PlaneRef<'_, u16>) -> Option<PlaneRef<'_, u16>> {
        Some(plane)
    }
}

/// Rounding shifts of the vertical moment pass for samples of `bits` bits
/// (the bit depth at scale 0, 16 for the decimated scales): means come back
/// to 16 bits and second moments to 32 bits.
#[derive(Debug, Clone, Copy)]
pub struct VerticalShifts {
    pub mean: u32,
    pub square: u32,
}

impl VerticalShifts {
    pub fn for_bits(bits: u32) -> Self {
        Self {
            mean: bits,
            square: 2 * (bits - 8),
        }
    }
}

/// True when the CPU runs AVX2: the passes then run a copy of their code
/// compiled for it. Only integer code gains from this; float results cannot
/// change, as Rust never fuses or reorders float operations.
#[inline]
pub fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        crate::cpu::has_avx2()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}
