//! A .y4m file: opened, its format checked, a few frames read. Any input
//! must end in a value or an error (no panic, no allocation sized by a
//! corrupt header).
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = common::scratch("f.y4m");
    std::fs::write(&path, data).unwrap();
    vmafx::testing::fuzz::read_y4m(&path);
});
