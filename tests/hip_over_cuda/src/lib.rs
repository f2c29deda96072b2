//! HIP over CUDA: the part of the HIP runtime (`libamdhip64.so`) and of
//! hiprtc (`libhiprtc.so`) that vmafx's HIP driver (`src/gpu/hip`) loads,
//! with ROCm 6's names, signatures, struct layouts and enum values,
//! implemented on the CUDA driver API and NVRTC (through cudarc, loaded at
//! run time). One library serves as both: install it as
//! `$ROCM_PATH/lib/libamdhip64.so` and `$ROCM_PATH/lib/libhiprtc.so`.
//!
//! A test runtime, never shipped (ADR 0025): on an NVIDIA GPU it runs our
//! HIP host code and its ordering on a real device. It cannot show AMD
//! hardware behaviour (docs/gpu-testing.md says what is and is not proven).
//!
//! What it presents: each CUDA device as a HIP device with CUDA's UUID (so
//! Vulkan finds the same device), `gcnArchName` "gfx1030" (an RDNA2 wave32
//! target: the kernels' HIP paths with 32 lanes, as NVIDIA's warps are),
//! AMD's 64 KiB of shared memory per block (a launch asking for more fails
//! as it would on AMD), and a runtime version of 6.4. hiprtc compiles the
//! HIP source with NVRTC after a small translation (`rtc`). Calls with no
//! CUDA counterpart that vmafx uses answer `hipErrorNotSupported`.
//!
//! Handles are CUDA's, passed through: a `hipStream_t` is a `CUstream`, a
//! `hipEvent_t` a `CUevent`, device pointers are `CUdeviceptr`s, and the
//! device's context is CUDA's primary context, made current on each thread
//! as `hipSetDevice` (or first use, device 0) selects it.

// The exported names are HIP's.
#![allow(non_snake_case)]
// Every export is an `unsafe extern "C"` function with HIP's contract (the
// ROCm documentation of the same name); they are called from C, not Rust.
#![allow(clippy::missing_safety_doc)]

pub mod errors;
pub mod rtc;
pub mod runtime;

pub use cubecl_hip_sys as hip;
pub use cudarc::driver::sys as cu;

/// What `hipRuntimeGetVersion` answers: HIP 6.4.0, as HIP encodes it
/// (major * 10^7 + minor * 10^5 + patch). vmafx needs 6.2 or newer; the
/// layouts implemented are ROCm 6's (`hipDeviceProp_tR0600`).
pub const RUNTIME_VERSION: i32 = 60_400_000;

/// The AMD target every device reports: RDNA2, 32-lane waves.
pub const ARCH: &str = "gfx1030";

/// Shared memory per block, as on AMD GPUs (LDS per workgroup).
pub const SHARED_PER_BLOCK: usize = 64 * 1024;

/// Appended to the CUDA device's name, so every log says what ran.
pub const NAME_SUFFIX: &str = " (HIP over CUDA)";

/// Runs `f`, turning a panic (cudarc panics when a CUDA symbol is missing)
/// into `panicked`: no unwinding crosses the C boundary.
pub(crate) fn guarded<T>(success: T, panicked: T, f: impl FnOnce() -> Result<(), T>) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(())) => success,
        Ok(Err(e)) => e,
        Err(_) => {
            eprintln!("hip-over-cuda: a call panicked (see above); answering an error");
            panicked
        }
    }
}

#[cfg(test)]
mod tests {
    /// Identifiers following `prefix` in `text`.
    fn names_after<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
        text.match_indices(prefix)
            .map(|(i, _)| {
                let rest = &text[i + prefix.len()..];
                let end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                &rest[..end]
            })
            .collect()
    }

    /// Every HIP runtime and hiprtc function vmafx's HIP driver calls
    /// (`hip::hipX(` in src/gpu/hip) is exported here: a call added there
    /// fails this test, not a device run.
    #[test]
    fn every_function_vmafx_calls_is_exported() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let mut called = std::collections::BTreeSet::new();
        let mut texts = Vec::new();
        for f in ["src/gpu/hip/mod.rs", "src/gpu/hip/interop.rs"] {
            texts.push(std::fs::read_to_string(format!("{root}/{f}")).unwrap());
        }
        for t in &texts {
            for n in names_after(t, "hip::") {
                if n.starts_with("hip") && t.contains(&format!("hip::{n}(")) {
                    called.insert(n.to_string());
                }
            }
        }
        assert!(
            called.len() > 40,
            "found only {called:?}: did src/gpu/hip move?"
        );
        let own = [include_str!("runtime.rs"), include_str!("rtc.rs")].concat();
        let exported: std::collections::BTreeSet<&str> =
            names_after(&own, "#[no_mangle]\npub unsafe extern \"C\" fn ")
                .into_iter()
                .collect();
        let missing: Vec<_> = called
            .iter()
            .filter(|n| !exported.contains(n.as_str()))
            .collect();
        assert!(
            missing.is_empty(),
            "called by src/gpu/hip, not exported: {missing:?}"
        );
        println!(
            "{} functions called, {} exported",
            called.len(),
            exported.len()
        );
    }
}
