//! The C API's entry points fuzzed as a C program would call them, with the
//! harness of `tests/api/fuzz_inputs.rs` (ADR 0020): model versions and model
//! files, feature names with option dictionaries, and pictures whose
//! fields were changed after allocation. Each call must return 0 or a
//! negative errno with a message; a panic caught at the boundary (reported
//! as an internal error) fails the test like any other.

use super::context::{vmaf_close, vmaf_init, vmaf_read_pictures, vmaf_use_feature};
use super::dict::{vmaf_feature_dictionary_free, vmaf_feature_dictionary_set};
use super::model::{vmaf_model_destroy, vmaf_model_load, vmaf_model_load_from_path};
use super::picture::{vmaf_picture_alloc, vmaf_picture_unref};
use super::types::{VmafModelConfig, VmafPicture};
use crate::testing::fuzz::capi::{answered, c_string, config};
use crate::testing::fuzz::fuzz;
use std::ffi::{c_int, CString};

#[test]
fn model_versions_and_files_are_answered() {
    let mut cfg = VmafModelConfig {
        name: std::ptr::null(),
        flags: 0,
    };
    fuzz("vmaf_model_load", b"vmaf_v0.6.1neg", |input| {
        let version = c_string(input);
        let mut model = std::ptr::null_mut();
        // SAFETY: valid pointers, a NUL-terminated string.
        let rc = unsafe { vmaf_model_load(&mut model, &mut cfg, version.as_ptr()) };
        if answered("vmaf_model_load", rc) {
            // SAFETY: the model just loaded.
            unsafe { vmaf_model_destroy(model) };
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.json");
    let c_path = CString::new(path.to_str().unwrap()).unwrap();
    let text = include_bytes!("../model/builtin/vmaf_v0.6.1.json");
    fuzz("vmaf_model_load_from_path", text, |input| {
        std::fs::write(&path, input).unwrap();
        let mut model = std::ptr::null_mut();
        // SAFETY: valid pointers, a NUL-terminated path.
        let rc = unsafe { vmaf_model_load_from_path(&mut model, &mut cfg, c_path.as_ptr()) };
        if answered("vmaf_model_load_from_path", rc) {
            // SAFETY: the model just loaded.
            unsafe { vmaf_model_destroy(model) };
        }
    });
}

#[test]
fn features_with_option_dictionaries_are_answered() {
    let seeds: &[&[u8]] = &[
        b"psnr|enable_mse=true|enable_apsnr=true|min_sse=0.5",
        b"float_ssim|enable_lcs=true|scale=2",
        b"vif|vif_enhn_gain_limit=1.0|debug=true",
        b"cambi|full_ref=true|window_size=63|topk=0.6",
    ];
    for seed in seeds {
        fuzz("vmaf_use_feature", seed, |input| {
            let mut parts = input.split(|&b| b == b'|');
            let name = c_string(parts.next().unwrap_or_default());
            let mut dict = std::ptr::null_mut();
            for pair in parts {
                let (key, value) = match pair.iter().position(|&b| b == b'=') {
                    Some(at) => (&pair[..at], &pair[at + 1..]),
                    None => (pair, &b""[..]),
                };
                let (key, value) = (c_string(key), c_string(value));
                // SAFETY: valid pointers, NUL-terminated strings.
                let rc =
                    unsafe { vmaf_feature_dictionary_set(&mut dict, key.as_ptr(), value.as_ptr()) };
                answered("vmaf_feature_dictionary_set", rc);
            }
            let mut vmaf = std::ptr::null_mut();
            // SAFETY: a valid out pointer.
            assert!(answered("vmaf_init", unsafe {
                vmaf_init(&mut vmaf, config())
            }));
            // SAFETY: a live context, a NUL-terminated name, a dictionary or NULL.
            let rc = unsafe { vmaf_use_feature(vmaf, name.as_ptr(), dict) };
            if !answered("vmaf_use_feature", rc) && !dict.is_null() {
                // Refused: the dictionary is still the caller's.
                // SAFETY: the dictionary made above.
                let rc = unsafe { vmaf_feature_dictionary_free(&mut dict) };
                answered("vmaf_feature_dictionary_free", rc);
            }
            // SAFETY: the context made above.
            assert!(answered("vmaf_close", unsafe { vmaf_close(vmaf) }));
        });
    }
}

#[test]
fn pictures_changed_after_allocation_are_answered() {
    // Bytes of the seed: pix_fmt, bpc, then width and height (16 bits
    // each) written into both pictures' fields after allocation.
    let seed = [1u8, 8, 64, 0, 48, 0];
    fuzz("vmaf_read_pictures", &seed, |input| {
        let byte = |i: usize| input.get(i).copied().unwrap_or(0);
        let word = |i: usize| u32::from(byte(i)) | u32::from(byte(i + 1)) << 8;
        let mut vmaf = std::ptr::null_mut();
        // SAFETY: a valid out pointer.
        assert!(answered("vmaf_init", unsafe {
            vmaf_init(&mut vmaf, config())
        }));
        let psnr = CString::new("psnr").unwrap();
        // SAFETY: a live context, a NUL-terminated name, no options.
        let rc = unsafe { vmaf_use_feature(vmaf, psnr.as_ptr(), std::ptr::null_mut()) };
        assert!(answered("vmaf_use_feature", rc));
        // SAFETY: plain data; all-zero is the empty picture.
        let mut pics: [VmafPicture; 2] = unsafe { std::mem::zeroed() };
        for pic in &mut pics {
            // SAFETY: a writable picture struct.
            let rc = unsafe { vmaf_picture_alloc(pic, 1, 8, 64, 48) };
            assert!(answered("vmaf_picture_alloc", rc));
            pic.pix_fmt = c_int::from(byte(0));
            pic.bpc = u32::from(byte(1));
            pic.w[0] = word(2);
            pic.h[0] = word(4);
        }
        let [r, d] = &mut pics;
        // SAFETY: a live context and two allocated pictures.
        let rc = unsafe { vmaf_read_pictures(vmaf, r, d, 0) };
        if !answered("vmaf_read_pictures", rc) {
            // Refused: both pictures are still the caller's.
            for pic in &mut pics {
                // SAFETY: the pictures allocated above, not taken.
                let rc = unsafe { vmaf_picture_unref(pic) };
                assert!(answered("vmaf_picture_unref", rc));
            }
        }
        // SAFETY: the context made above.
        assert!(answered("vmaf_close", unsafe { vmaf_close(vmaf) }));
    });
}

#[test]
#[should_panic(expected = "panicked inside")]
fn a_panic_caught_at_the_boundary_fails_the_fuzzing() {
    let rc = super::error::guard("vmaf_test", || panic!("a bug"));
    answered("vmaf_test", rc);
}
