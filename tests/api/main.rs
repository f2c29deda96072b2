//! The library's and the command line's surface, beside the scores
//! (`tests/parity`): the `vmafx` binary (`cli`), file input (`io`), result
//! files (`report`), the scoring context's contract (`context`) and its
//! results while a run goes on (`results`), and mutation fuzzing of every
//! parser of outside input (`fuzz_inputs`). The C ABI: `tests/capi`.
//!
//! One module per suite, all in one test binary (CI links it once):
//! `cargo test --test api cli::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod context;
mod fuzz_inputs;
mod io;
mod report;
mod results;
