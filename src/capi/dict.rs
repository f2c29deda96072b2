//! `VmafFeatureDictionary`: the key/value options a client gives a feature
//! extractor (`vmaf_use_feature`) or a model's features
//! (`vmaf_model_feature_overload`).

use std::ffi::{c_char, c_int};

use super::error::{guard, invalid, required_str};
use crate::feature::RawOptions;

/// The options, in the order set; setting a key again replaces its value.
#[derive(Debug, Default)]
pub struct VmafFeatureDictionary {
    pub entries: RawOptions,
}

/// Takes the dictionary out of `*dict` (ownership passes to the callee, as
/// in libvmaf), leaving NULL; no options for a NULL dictionary.
///
/// # Safety
/// `dict` is NULL or came from `vmaf_feature_dictionary_set` and was not
/// freed.
pub unsafe fn take(dict: *mut VmafFeatureDictionary) -> RawOptions {
    if dict.is_null() {
        return RawOptions::new();
    }
    // SAFETY: made by Box::into_raw in vmaf_feature_dictionary_set.
    unsafe { Box::from_raw(dict) }.entries
}

/// `int vmaf_feature_dictionary_set(VmafFeatureDictionary **dict,
/// const char *key, const char *val)`: creates `*dict` when NULL.
///
/// # Safety
/// `dict` points to a dictionary pointer (NULL or from this function);
/// `key` and `val` are NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn vmaf_feature_dictionary_set(
    dict: *mut *mut VmafFeatureDictionary,
    key: *const c_char,
    val: *const c_char,
) -> c_int {
    guard("vmaf_feature_dictionary_set", || {
        if dict.is_null() {
            return Err(invalid("dict is NULL"));
        }
        // SAFETY: the caller's promise on key and val.
        let (key, val) = unsafe { (required_str(key, "key")?, required_str(val, "val")?) };
        if key.is_empty() {
            return Err(invalid("key is empty"));
        }
        // SAFETY: dict is non-null and points to a dictionary pointer.
        let slot = unsafe { &mut *dict };
        if slot.is_null() {
            *slot = Box::into_raw(Box::default());
        }
        // SAFETY: *slot came from Box::into_raw above or an earlier call.
        let d = unsafe { &mut **slot };
        match d.entries.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = val.to_string(),
            None => d.entries.push((key.to_string(), val.to_string())),
        }
        Ok(())
    })
}

/// `int vmaf_feature_dictionary_free(VmafFeatureDictionary **dict)`:
/// frees `*dict` and sets it to NULL.
///
/// # Safety
/// `dict` points to a dictionary pointer (NULL or from
/// `vmaf_feature_dictionary_set`) not freed yet.
#[no_mangle]
pub unsafe extern "C" fn vmaf_feature_dictionary_free(
    dict: *mut *mut VmafFeatureDictionary,
) -> c_int {
    guard("vmaf_feature_dictionary_free", || {
        if dict.is_null() {
            return Err(invalid("dict is NULL"));
        }
        // SAFETY: dict points to a dictionary pointer, per the caller.
        let slot = unsafe { &mut *dict };
        if slot.is_null() {
            return Err(invalid("*dict is NULL (already freed?)"));
        }
        // SAFETY: made by vmaf_feature_dictionary_set, not freed yet.
        drop(unsafe { take(*slot) });
        *slot = std::ptr::null_mut();
        Ok(())
    })
}
