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
