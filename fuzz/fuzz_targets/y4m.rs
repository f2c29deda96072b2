//! A .y4m file: opened, its format checked, a few frames read. Any input
//! must end in a value or an error (no panic, no allocation sized by a
//! corrupt header).
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use vmafx::{HostPicture, PictureFormat};

fuzz_target!(|data: &[u8]| {
    let path = common::scratch("f.y4m");
    std::fs::write(&path, data).unwrap();
    if let Ok(mut source) = vmafx::io::open(&path, None) {
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
});
