//! Runs the hot kernels compiled for AVX-512 or AVX2 when the CPU has them.
//!
//! The kernels are plain Rust written so that LLVM vectorizes them; extra
//! copies compiled with wider instruction sets (chosen at run time) give
//! wider vectors and 64-bit integer operations without leaving the baseline
//! target. Only integer and exactly rounded float operations are involved
//! (Rust never contracts to FMA), so every copy gives identical results.

use std::sync::OnceLock;

/// Instruction sets the kernels are compiled for, in increasing order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SimdLevel {
    Baseline,
    Avx2,
    Avx512,
}

/// The widest level the CPU supports, capped by the `VMAFX_SIMD`
/// environment variable (`none`, `avx2`, `avx512`) for testing the others.
pub fn simd_level() -> SimdLevel {
    static LEVEL: OnceLock<SimdLevel> = OnceLock::new();
    *LEVEL.get_or_init(|| {
        let cap = match std::env::var("VMAFX_SIMD").as_deref() {
            Ok("none") => SimdLevel::Baseline,
            Ok("avx2") => SimdLevel::Avx2,
            _ => SimdLevel::Avx512,
        };
        detect().min(cap)
    })
}

#[cfg(target_arch = "x86_64")]
fn detect() -> SimdLevel {
    use std::arch::is_x86_feature_detected as has;
    if has!("avx512f") && has!("avx512bw") && has!("avx512dq") && has!("avx512vl") && has!("avx2") {
        SimdLevel::Avx512
    } else if has!("avx2") {
        SimdLevel::Avx2
    } else {
        SimdLevel::Baseline
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> SimdLevel {
    SimdLevel::Baseline
}

/// Defines `$name`, which calls `$imp` (an `#[inline(always)]` function)
/// compiled for the widest instruction set available.
macro_rules! simd_dispatch {
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident $(<$($g:ident: $bound:path),*>)? ($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?
        => $imp:ident
    ) => {
        $(#[$meta])*
        $vis fn $name $(<$($g: $bound),*>)? ($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                use $crate::feature::adm::simd::{simd_level, SimdLevel};
                #[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
                fn avx512 $(<$($g: $bound),*>)? ($($arg: $ty),*) $(-> $ret)? {
                    $imp($($arg),*)
                }
                #[target_feature(enable = "avx2")]
                fn avx2 $(<$($g: $bound),*>)? ($($arg: $ty),*) $(-> $ret)? {
                    $imp($($arg),*)
                }
                match simd_level() {
                    // SAFETY: `level` checked that the CPU has these features.
                    SimdLevel::Avx512 => return unsafe { avx512($($arg),*) },
                    // SAFETY: as above.
                    SimdLevel::Avx2 => return unsafe { avx2($($arg),*) },
                    SimdLevel::Baseline => {}
                }
            }
            $imp($($arg),*)
        }
    };
}

pub(crate) use simd_dispatch;
