//! The one place where the CPU engine picks its instruction sets.
//!
//! Every extractor asks here whether to run its AVX2 or AVX-512 code
//! ([`has_avx2`], [`has_avx512`], [`has_avx512_vnni`]) or calls a kernel
//! through [`simd_dispatch`], which compiles plain Rust (written so that
//! LLVM vectorizes it) once more for each level and picks one at run time.
//! The level is detected once and can be capped for every extractor at once
//! with `VMAFX_SIMD` (`none`, `avx2`, `avx512`), which tests use to check
//! that each path gives the same bits. Only integer and exactly rounded
//! float operations are involved (Rust never contracts to FMA; the explicit
//! FMAs of integer VIF's double-precision pass work on integers below 2^53,
//! where they are exact), so every level gives identical results.

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
/// Read once, at the first call.
pub fn simd_level() -> SimdLevel {
    *LEVEL.get_or_init(|| {
        let cap = match std::env::var("VMAFX_SIMD").as_deref() {
            Ok("none") => SimdLevel::Baseline,
            Ok("avx2") => SimdLevel::Avx2,
            _ => SimdLevel::Avx512,
        };
        detect()
            .min(cap)
            .min(MASK_CAP.get().copied().unwrap_or(SimdLevel::Avx512))
    })
}

static LEVEL: OnceLock<SimdLevel> = OnceLock::new();
static MASK_CAP: OnceLock<SimdLevel> = OnceLock::new();

/// libvmaf's `--cpumask`: bits of instruction sets not to use (bit 3
/// AVX2, bit 4 AVX-512, bit 5 AVX-512 ICL; the lower bits are SSE levels,
/// which vmafx's baseline code needs no flag for). Must come before the
/// first score: the level is fixed at first use. Returns false when it came
/// too late.
#[cfg_attr(not(any(feature = "cli", feature = "capi")), allow(dead_code))] // `--cpumask`, `cfg.cpumask`
pub fn restrict_by_cpumask(mask: u64) -> bool {
    let cap = if mask & (1 << 3) != 0 {
        SimdLevel::Baseline
    } else if mask & (0b11 << 4) != 0 {
        SimdLevel::Avx2
    } else {
        SimdLevel::Avx512
    };
    MASK_CAP.set(cap).is_ok() && LEVEL.get().is_none()
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

/// The vector levels that may run here (AVX2, AVX-512; none on other
/// CPUs), for tests that check each against the portable loops; says so
/// when there are none.
#[cfg(test)]
pub(crate) fn vector_levels() -> Vec<SimdLevel> {
    let levels: Vec<SimdLevel> = [SimdLevel::Avx2, SimdLevel::Avx512]
        .into_iter()
        .filter(|&l| l <= simd_level())
        .collect();
    if levels.is_empty() {
        eprintln!("skipped: this CPU has neither AVX2 nor AVX-512");
    }
    levels
}

/// Whether AVX2 code may run (the CPU has it and `VMAFX_SIMD` allows it).
pub fn has_avx2() -> bool {
    simd_level() >= SimdLevel::Avx2
}

/// Whether code built with hardware FMA may run: the AVX2 level (every
/// AVX2 CPU has FMA) and FMA itself. `f32::mul_add` rounds once either way;
/// this only picks the fast build.
pub fn has_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static FMA: OnceLock<bool> = OnceLock::new();
        has_avx2() && *FMA.get_or_init(|| std::arch::is_x86_feature_detected!("fma"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether AVX-512 (F, BW, DQ, VL) code may run.
pub fn has_avx512() -> bool {
    simd_level() >= SimdLevel::Avx512
}

/// Whether AVX-512 VNNI code may run (the AVX-512 level and VNNI).
pub fn has_avx512_vnni() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static VNNI: OnceLock<bool> = OnceLock::new();
        has_avx512() && *VNNI.get_or_init(|| std::arch::is_x86_feature_detected!("avx512vnni"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
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
                use $crate::cpu::{simd_level, SimdLevel};
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
