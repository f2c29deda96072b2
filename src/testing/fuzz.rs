//! Seeded mutation fuzzing on the stable toolchain (ADR 0020), shared by
//! `tests/api/fuzz_inputs.rs` and the C API's unit tests: real inputs mutated
//! by a deterministic generator, each mutant run under `catch_unwind`.
//! `VMAFX_FUZZ_ITERATIONS=N` runs more, `VMAFX_FUZZ_SEED=S` another
//! sequence; a failure prints the seed, the iteration and the input.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Mutants per target: `VMAFX_FUZZ_ITERATIONS`, else 400.
pub fn iterations() -> u64 {
    std::env::var("VMAFX_FUZZ_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400)
}

/// The sequence: `VMAFX_FUZZ_SEED`, else a fixed one.
pub fn seed() -> u64 {
    std::env::var("VMAFX_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_f00d)
}

/// xorshift64*: deterministic, no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// Numbers that break parsers: signs, zeros, limits, overflow, junk.
pub const NASTY: &[&str] = &[
    "0",
    "-1",
    "1",
    "7",
    "17",
    "65535",
    "4294967296",
    "18446744073709551616",
    "1e308",
    "nan",
    "inf",
    "-0",
    "0x10",
    "",
    " ",
    "99999999999999999999999",
    "3.5",
    "abc",
];

/// One mutation of `input`: flip, insert, delete, duplicate, truncate, or
/// replace a run of digits with a nasty number.
pub fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..=rng.below(3) {
        let at = rng.below(v.len());
        match rng.below(6) {
            0 if !v.is_empty() => v[at] ^= 1 << rng.below(8),
            1 => v.insert(at.min(v.len()), rng.next_u64() as u8),
            2 if !v.is_empty() => {
                v.remove(at);
            }
            3 => {
                let end = (at + rng.below(16)).min(v.len());
                let run = v[at.min(end)..end].to_vec();
                v.splice(at.min(v.len())..at.min(v.len()), run);
            }
            4 => v.truncate(at),
            _ => {
                // A number: replace the digits around a digit position.
                if let Some(start) = (at..v.len()).find(|&i| v[i].is_ascii_digit()) {
                    let end = (start..v.len())
                        .find(|&i| !v[i].is_ascii_digit())
                        .unwrap_or(v.len());
                    let nasty = NASTY[rng.below(NASTY.len())].as_bytes().to_vec();
                    v.splice(start..end, nasty);
                }
            }
        }
    }
    v
}

/// Runs `body` on every mutant of `seed_input`, failing with a reproducer
/// on a panic.
pub fn fuzz(target: &str, seed_input: &[u8], mut body: impl FnMut(&[u8])) {
    let mut rng = Rng(seed() ^ target.len() as u64 ^ 0x9e37_79b9_7f4a_7c15);
    for i in 0..iterations() {
        let input = mutate(&mut rng, seed_input);
        let outcome = catch_unwind(AssertUnwindSafe(|| body(&input)));
        if let Err(panic) = outcome {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            let shown = String::from_utf8_lossy(&input[..input.len().min(400)]);
            panic!(
                "{target}: panicked at iteration {i} (VMAFX_FUZZ_SEED={}): {what}\ninput ({} bytes): {shown:?}",
                seed(),
                input.len()
            );
        }
    }
}

/// One input of the y4m target: the file at `path` opened (format within
/// bounds) and a few frames read; any input ends in a value or an error.
pub fn read_y4m(path: &std::path::Path) {
    use crate::{HostPicture, PictureFormat};
    if let Ok(mut source) = crate::io::open(path, None) {
        let f = source.format();
        assert!(f.width as u64 * f.height as u64 <= PictureFormat::MAX_PIXELS);
        let mut picture = HostPicture::new(f);
        for _ in 0..4 {
            match source.read_into(&mut picture) {
                Ok(true) => {}
                Ok(false) | Err(_) => break,
            }
        }
    }
}

/// One input of the model target: a model file that loads (every field
/// validated) predicts, or refuses, any values and builds a context.
pub fn load_model(input: &[u8]) {
    use crate::model::{Model, ModelSpec};
    use crate::{ChromaSubsampling, ContextBuilder, PictureFormat};
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    if let Ok(model) = Model::from_json(text, &ModelSpec::version("fuzzed")) {
        let values: Vec<f64> = (0..model.features().len())
            .map(|i| i as f64 * 0.37 - 1.0)
            .collect();
        let _ = model.predict(&values);
        let _ = model.feature_requests();
        let format = PictureFormat::new(64, 48, ChromaSubsampling::Yuv420, 8).unwrap();
        let _ = ContextBuilder::new(format).model(model).build();
    }
}

/// What the C API's fuzzing checks of every call.
#[cfg(feature = "capi")]
pub mod capi {
    use crate::capi::error::vmafx_error_message;
    use crate::capi::types::VmafConfiguration;
    use std::ffi::{c_int, CStr, CString};

    /// Success, or a refusal that is not a panic caught at the boundary.
    pub fn answered(function: &str, rc: c_int) -> bool {
        assert!(rc <= 0, "{function} returned {rc}");
        if rc < 0 {
            // SAFETY: the library's thread-local message, valid until the
            // next failing call on this thread.
            let message = unsafe { CStr::from_ptr(vmafx_error_message()) }.to_string_lossy();
            assert!(
                !message.contains("internal error"),
                "{function} panicked inside: {message}"
            );
        }
        rc == 0
    }

    /// NUL bytes end a C string: inputs are cut there, as C would see them.
    pub fn c_string(input: &[u8]) -> CString {
        let end = input.iter().position(|&b| b == 0).unwrap_or(input.len());
        CString::new(&input[..end]).expect("no NUL before end")
    }

    /// libvmaf's default configuration, quiet.
    pub fn config() -> VmafConfiguration {
        VmafConfiguration {
            log_level: 0,
            n_threads: 0,
            n_subsample: 1,
            cpumask: 0,
            gpumask: 0,
        }
    }
}
