//! The command line: arguments (the input split at NUL bytes) parsed as the
//! `vmafx` binary parses them, and a run that parses scored on two small
//! .y4m files. Paths stay inside a scratch folder: arguments naming
//! anything else (a `/` or `..`) are not run.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use std::sync::Once;

/// A 64x48 4:2:0 8-bit .y4m of two frames.
fn y4m(seed: u8) -> Vec<u8> {
    let mut bytes = b"YUV4MPEG2 W64 H48 F25:1 Ip A1:1 C420jpeg\n".to_vec();
    for frame in 0..2u8 {
        bytes.extend_from_slice(b"FRAME\n");
        bytes.extend((0..64 * 48 * 3 / 2).map(|i| (i as u8).wrapping_mul(seed) ^ frame));
    }
    bytes
}

fuzz_target!(|data: &[u8]| {
    static SETUP: Once = Once::new();
    SETUP.call_once(|| {
        let dir = common::scratch("ref.y4m").parent().unwrap().to_path_buf();
        std::fs::write(dir.join("ref.y4m"), y4m(3)).unwrap();
        std::fs::write(dir.join("dist.y4m"), y4m(5)).unwrap();
        std::env::set_current_dir(dir).unwrap();
    });
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let args: Vec<&str> = std::iter::once("vmafx").chain(text.split('\0')).collect();
    let Ok(args) = vmafx::cli::Args::try_from_command_line(&args) else {
        return;
    };
    if text.contains('/') || text.contains("..") {
        return;
    }
    let _ = vmafx::cli::run(&args);
});
