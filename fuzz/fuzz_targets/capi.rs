//! libvmaf's C API as a C program calls it: a feature by name with an
//! option dictionary, then two pictures whose fields were changed after
//! allocation. Input: pix_fmt, bpc, width and height (16 bits each), then
//! `name|key=value|...`. Every call must return 0 or a negative errno whose
//! message is not a panic caught at the boundary.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::ffi::c_int;
use vmafx::capi::context::{vmaf_close, vmaf_init, vmaf_read_pictures, vmaf_use_feature};
use vmafx::capi::dict::{vmaf_feature_dictionary_free, vmaf_feature_dictionary_set};
use vmafx::capi::picture::{vmaf_picture_alloc, vmaf_picture_unref};
use vmafx::capi::types::VmafPicture;
use vmafx::testing::fuzz::capi::{answered, c_string, config};

fuzz_target!(|data: &[u8]| {
    let [pix_fmt, bpc, w0, w1, h0, h1, feature @ ..] = data else {
        return;
    };
    let mut vmaf = std::ptr::null_mut();
    // SAFETY: a valid out pointer.
    assert!(answered("vmaf_init", unsafe {
        vmaf_init(&mut vmaf, config())
    }));

    let mut parts = feature.split(|&b| b == b'|');
    let name = c_string(parts.next().unwrap_or_default());
    let mut dict = std::ptr::null_mut();
    for pair in parts {
        let (key, value) = match pair.iter().position(|&b| b == b'=') {
            Some(at) => (&pair[..at], &pair[at + 1..]),
            None => (pair, &b""[..]),
        };
        let (key, value) = (c_string(key), c_string(value));
        // SAFETY: valid pointers, NUL-terminated strings.
        let rc = unsafe { vmaf_feature_dictionary_set(&mut dict, key.as_ptr(), value.as_ptr()) };
        answered("vmaf_feature_dictionary_set", rc);
    }
    // SAFETY: a live context, a NUL-terminated name, a dictionary or NULL.
    let used = answered("vmaf_use_feature", unsafe {
        vmaf_use_feature(vmaf, name.as_ptr(), dict)
    });
    if !used && !dict.is_null() {
        // Refused: the dictionary is still the caller's.
        // SAFETY: the dictionary made above.
        answered("vmaf_feature_dictionary_free", unsafe {
            vmaf_feature_dictionary_free(&mut dict)
        });
    }

    // SAFETY: plain data; all-zero is the empty picture.
    let mut pics: [VmafPicture; 2] = unsafe { std::mem::zeroed() };
    let mut allocated = true;
    for pic in &mut pics {
        // SAFETY: a writable picture struct.
        allocated &= answered("vmaf_picture_alloc", unsafe {
            vmaf_picture_alloc(pic, 1, 8, 64, 48)
        });
        pic.pix_fmt = c_int::from(*pix_fmt);
        pic.bpc = u32::from(*bpc);
        pic.w[0] = u32::from(u16::from_le_bytes([*w0, *w1]));
        pic.h[0] = u32::from(u16::from_le_bytes([*h0, *h1]));
    }
    assert!(allocated);
    let [r, d] = &mut pics;
    // SAFETY: a live context and two allocated pictures.
    if answered("vmaf_read_pictures", unsafe {
        vmaf_read_pictures(vmaf, r, d, 0)
    }) {
        // Taken: flush.
        // SAFETY: a live context; NULL pictures flush.
        let rc = unsafe { vmaf_read_pictures(vmaf, std::ptr::null_mut(), std::ptr::null_mut(), 0) };
        answered("vmaf_read_pictures (flush)", rc);
    } else {
        for pic in &mut pics {
            // SAFETY: the pictures allocated above, not taken.
            answered("vmaf_picture_unref", unsafe { vmaf_picture_unref(pic) });
        }
    }
    // SAFETY: the context made above.
    assert!(answered("vmaf_close", unsafe { vmaf_close(vmaf) }));
});
