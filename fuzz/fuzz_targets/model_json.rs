//! A model file: loaded (every field validated), and a model that loads
//! predicts any values and builds a context.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| vmafx::testing::fuzz::load_model(data));
