//! Run-time choice of an AVX2 + FMA build for the kernels that use
//! `f32::mul_add`.
//!
//! `mul_add` is always one fused, singly rounded operation; without the
//! `fma` target feature it becomes a call to the C library's `fmaf`, exact
//! but slow. Each kernel here has one body (`#[inline(always)]`) and two
//! builds of it; both give the same bits.

/// Whether the FMA build may run ([`crate::cpu::has_fma`]: capped by
/// `VMAFX_SIMD` and `--cpumask` like every other SIMD path).
#[inline]
pub(super) fn available() -> bool {
    crate::cpu::has_fma()
}

/// Defines `pub fn $name` that runs `$body` (an `#[inline(always)]`
/// function with the same arguments) built with AVX2 + FMA when the CPU has
/// them, else the portable build.
macro_rules! fma_kernel {
    ($(#[$doc:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) => $body:ident) => {
        $(#[$doc])*
        $vis fn $name($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,fma")]
                unsafe fn with_fma($($arg: $ty),*) {
                    $body($($arg),*)
                }
                if $crate::feature::ssimulacra2::fma::available() {
                    // SAFETY: the CPU has AVX2 and FMA, checked just above.
                    return unsafe { with_fma($($arg),*) };
                }
            }
            $body($($arg),*)
        }
    };
}
pub(super) use fma_kernel;
