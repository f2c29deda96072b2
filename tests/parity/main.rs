//! CPU scores against libvmaf 3.2.0's (and, for the seed's extra
//! extractors, their oracles'): every extractor, every model and the whole
//! engine on the golden vectors in `tests/golden` (`docs/parity.md`).
//! One module per suite, all in one test binary (CI links it once):
//! `cargo test --test parity vif::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod adm;
mod cambi;
mod ciede_hvs;
mod extra;
mod float_a;
mod float_b;
mod model;
mod motion;
mod psnr;
mod speed;
mod ssimulacra2;
mod vif;
mod vmaf;
