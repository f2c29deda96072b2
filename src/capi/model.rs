//! `VmafModel` and `VmafModelCollection`: models loaded by version or path
//! with libvmaf's configuration (name, flags), feature overloads, and the
//! bootstrap collections (`vmaf_b_v0.6.3`).

use std::ffi::{c_char, c_int};

use super::dict::{take, VmafFeatureDictionary};
use super::error::{c_str, guard, invalid, required_str, CResult};
use super::handles;
use super::types::{
    VmafModelConfig, VMAF_MODEL_FLAG_DISABLE_CLIP, VMAF_MODEL_FLAG_ENABLE_TRANSFORM,
};
use crate::model::{FeatureOverride, Model, ModelSource, ModelSpec};

/// A loaded model as C holds it: what it was loaded from (to reload it
/// with overloaded feature options) and the model itself.
#[derive(Debug)]
pub struct VmafModel {
    spec: ModelSpec,
    /// Loaded from a collection: the first member stands for the model.
    member_of_collection: bool,
    pub(crate) model: Model,
}

/// A bootstrap collection: one [`Model`] whose outputs are the first
/// member's score, each member's and the statistics.
#[derive(Debug)]
pub struct VmafModelCollection {
    spec: ModelSpec,
    pub(crate) model: Model,
}

impl VmafModel {
    fn load(spec: ModelSpec) -> CResult<Self> {
        let model = Model::load(&spec)?;
        if model.is_collection() {
            return Err(invalid(format!(
                "model {} is a bootstrap collection: load it with vmaf_model_collection_load",
                model.label()
            )));
        }
        Ok(Self {
            spec,
            member_of_collection: false,
            model,
        })
    }

    fn reload(&mut self) -> CResult {
        let model = Model::load(&self.spec)?;
        self.model = match self.member_of_collection {
            true => model
                .first_member()
                .ok_or_else(|| invalid("not a collection"))?,
            false => model,
        };
        Ok(())
    }
}

/// The spec of a C model configuration and source.
///
/// # Safety
/// `cfg` is NULL or points to a `VmafModelConfig` whose `name` is NULL or
/// a NUL-terminated string.
unsafe fn spec_of(cfg: *const VmafModelConfig, source: ModelSource) -> CResult<ModelSpec> {
    let mut spec = match source {
        ModelSource::Version(v) => ModelSpec::version(&v),
        ModelSource::Path(p) => ModelSpec::path(p),
    };
    if !cfg.is_null() {
        // SAFETY: non-null, points to a config per the caller.
        let cfg = unsafe { &*cfg };
        // SAFETY: name is NULL or NUL-terminated per the caller.
        spec.name = unsafe { c_str(cfg.name, "cfg->name") }?.map(str::to_string);
        spec.flags.disable_clip = cfg.flags & VMAF_MODEL_FLAG_DISABLE_CLIP != 0;
        spec.flags.enable_transform = cfg.flags & VMAF_MODEL_FLAG_ENABLE_TRANSFORM != 0;
        // VMAF_MODEL_FLAG_DISABLE_TRANSFORM: libvmaf's loader ignores it too.
    }
    Ok(spec)
}

/// Stores a new handle in `*out`.
///
/// # Safety
/// `out` is non-null and writable.
unsafe fn hand_out<T: 'static>(out: *mut *mut T, value: T) {
    // SAFETY: the caller's promise.
    unsafe { *out = handles::hand_out(value) };
}

fn source(text: &str, by_path: bool) -> ModelSource {
    match by_path {
        true => ModelSource::Path(text.into()),
        false => ModelSource::Version(text.to_string()),
    }
}

/// # Safety
/// As `vmaf_model_load`.
unsafe fn load_model(
    function: &str,
    model: *mut *mut VmafModel,
    cfg: *const VmafModelConfig,
    text: *const c_char,
    by_path: bool,
) -> c_int {
    guard(function, || {
        if model.is_null() {
            return Err(invalid("model is NULL"));
        }
        let what = if by_path { "path" } else { "version" };
        // SAFETY: the caller's promise on text and cfg.
        let spec = unsafe { spec_of(cfg, source(required_str(text, what)?, by_path)) }?;
        let loaded = VmafModel::load(spec)?;
        // SAFETY: model is non-null and writable.
        unsafe { hand_out(model, loaded) };
        Ok(())
    })
}

/// `int vmaf_model_load(VmafModel **model, VmafModelConfig *cfg, const char *version)`.
///
/// # Safety
/// `model` is writable; `cfg` is NULL or a valid config; `version` is a
/// NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn vmaf_model_load(
    model: *mut *mut VmafModel,
    cfg: *mut VmafModelConfig,
    version: *const c_char,
) -> c_int {
    // SAFETY: forwarded promise.
    unsafe { load_model("vmaf_model_load", model, cfg, version, false) }
}

/// `int vmaf_model_load_from_path(VmafModel **model, VmafModelConfig *cfg, const char *path)`.
///
/// # Safety
/// As [`vmaf_model_load`], `path` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn vmaf_model_load_from_path(
    model: *mut *mut VmafModel,
    cfg: *mut VmafModelConfig,
    path: *const c_char,
) -> c_int {
    // SAFETY: forwarded promise.
    unsafe { load_model("vmaf_model_load_from_path", model, cfg, path, true) }
}

/// The overrides a dictionary of extractor `feature_name`'s options makes.
fn overrides(feature_name: &str, options: Vec<(String, String)>) -> Vec<FeatureOverride> {
    options
        .into_iter()
        .map(|(option, value)| FeatureOverride {
            extractor: feature_name.to_string(),
            option,
            value,
        })
        .collect()
}

/// `int vmaf_model_feature_overload(VmafModel *model, const char *feature_name,
/// VmafFeatureDictionary *opts_dict)`: sets options of the model's features
/// that extractor `feature_name` provides. Takes ownership of `opts_dict`.
///
/// # Safety
/// `model` is NULL or from `vmaf_model_load*`; `feature_name` is a
/// NUL-terminated string; `opts_dict` is NULL or a live dictionary.
#[no_mangle]
pub unsafe extern "C" fn vmaf_model_feature_overload(
    model: *mut VmafModel,
    feature_name: *const c_char,
    opts_dict: *mut VmafFeatureDictionary,
) -> c_int {
    // SAFETY: opts_dict is NULL or live; ownership passes here.
    let options = unsafe { take(opts_dict) };
    guard("vmaf_model_feature_overload", || {
        // SAFETY: the caller's promise; destroyed or unknown handles are refused.
        let model = unsafe { handles::get(model, "model") }?;
        // SAFETY: the caller's promise.
        let name = unsafe { required_str(feature_name, "feature_name") }?;
        let before = model.spec.overrides.len();
        model.spec.overrides.extend(overrides(name, options));
        if let Err(e) = model.reload() {
            model.spec.overrides.truncate(before);
            return Err(e);
        }
        Ok(())
    })
}

/// `void vmaf_model_destroy(VmafModel *model)`.
///
/// # Safety
/// `model` is NULL or from `vmaf_model_load*` and not destroyed yet.
#[no_mangle]
pub unsafe extern "C" fn vmaf_model_destroy(model: *mut VmafModel) {
    if !model.is_null() {
        guard("vmaf_model_destroy", || {
            // SAFETY: the caller's promise; an unknown handle is reported, not freed.
            unsafe { handles::take_back(model, "model") }.map(drop)
        });
    }
}

/// # Safety
/// As `vmaf_model_collection_load`.
unsafe fn load_collection(
    function: &str,
    model: *mut *mut VmafModel,
    collection: *mut *mut VmafModelCollection,
    cfg: *const VmafModelConfig,
    text: *const c_char,
    by_path: bool,
) -> c_int {
    guard(function, || {
        if model.is_null() || collection.is_null() {
            return Err(invalid("model or model_collection is NULL"));
        }
        let what = if by_path { "path" } else { "version" };
        // SAFETY: the caller's promise on text and cfg.
        let spec = unsafe { spec_of(cfg, source(required_str(text, what)?, by_path)) }?;
        let whole = Model::load(&spec)?;
        let first = whole.first_member().ok_or_else(|| {
            invalid(format!(
                "model {} is not a bootstrap collection: load it with vmaf_model_load",
                whole.label()
            ))
        })?;
        let member = VmafModel {
            spec: spec.clone(),
            member_of_collection: true,
            model: first,
        };
        // SAFETY: both are non-null and writable.
        unsafe {
            hand_out(model, member);
            hand_out(collection, VmafModelCollection { spec, model: whole });
        }
        Ok(())
    })
}

/// `int vmaf_model_collection_load(VmafModel **model,
/// VmafModelCollection **model_collection, VmafModelConfig *cfg,
/// const char *version)`.
///
/// # Safety
/// `model` and `model_collection` are writable; `cfg` is NULL or valid;
/// `version` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn vmaf_model_collection_load(
    model: *mut *mut VmafModel,
    model_collection: *mut *mut VmafModelCollection,
    cfg: *mut VmafModelConfig,
    version: *const c_char,
) -> c_int {
    // SAFETY: forwarded promise.
    unsafe {
        load_collection(
            "vmaf_model_collection_load",
            model,
            model_collection,
            cfg,
            version,
            false,
        )
    }
}

/// `int vmaf_model_collection_load_from_path(...)`, as
/// [`vmaf_model_collection_load`] from a file.
///
/// # Safety
/// As [`vmaf_model_collection_load`].
#[no_mangle]
pub unsafe extern "C" fn vmaf_model_collection_load_from_path(
    model: *mut *mut VmafModel,
    model_collection: *mut *mut VmafModelCollection,
    cfg: *mut VmafModelConfig,
    path: *const c_char,
) -> c_int {
    // SAFETY: forwarded promise.
    unsafe {
        load_collection(
            "vmaf_model_collection_load_from_path",
            model,
            model_collection,
            cfg,
            path,
            true,
        )
    }
}

/// `int vmaf_model_collection_feature_overload(VmafModel *model,
/// VmafModelCollection **model_collection, const char *feature_name,
/// VmafFeatureDictionary *opts_dict)`: as [`vmaf_model_feature_overload`]
/// for every member (and `model`, when given). Takes ownership of
/// `opts_dict`.
///
/// # Safety
/// `model` is NULL or live; `model_collection` points to a live
/// collection pointer; the strings and dictionary as for
/// [`vmaf_model_feature_overload`].
#[no_mangle]
pub unsafe extern "C" fn vmaf_model_collection_feature_overload(
    model: *mut VmafModel,
    model_collection: *mut *mut VmafModelCollection,
    feature_name: *const c_char,
    opts_dict: *mut VmafFeatureDictionary,
) -> c_int {
    // SAFETY: opts_dict is NULL or live; ownership passes here.
    let options = unsafe { take(opts_dict) };
    guard("vmaf_model_collection_feature_overload", || {
        // SAFETY: NULL or a pointer to a collection pointer, per the caller.
        let handle = unsafe { model_collection.as_ref() }
            .ok_or_else(|| invalid("model_collection is NULL"))?;
        // SAFETY: the caller's promise; destroyed or unknown handles are refused.
        let collection = unsafe { handles::get(*handle, "*model_collection") }?;
        // SAFETY: the caller's promise.
        let name = unsafe { required_str(feature_name, "feature_name") }?;
        let added = overrides(name, options);
        let mut spec = collection.spec.clone();
        spec.overrides.extend(added.iter().cloned());
        let whole = Model::load(&spec)?;
        if !model.is_null() {
            // SAFETY: the caller's promise; destroyed or unknown handles are refused.
            let model = unsafe { handles::get(model, "model") }?;
            let before = model.spec.overrides.len();
            model.spec.overrides.extend(added);
            if let Err(e) = model.reload() {
                model.spec.overrides.truncate(before);
                return Err(e);
            }
        }
        collection.spec = spec;
        collection.model = whole;
        Ok(())
    })
}

/// `void vmaf_model_collection_destroy(VmafModelCollection *model_collection)`.
///
/// # Safety
/// `model_collection` is NULL or from `vmaf_model_collection_load*` and not
/// destroyed yet.
#[no_mangle]
pub unsafe extern "C" fn vmaf_model_collection_destroy(model_collection: *mut VmafModelCollection) {
    if !model_collection.is_null() {
        guard("vmaf_model_collection_destroy", || {
            // SAFETY: the caller's promise; an unknown handle is reported, not freed.
            unsafe { handles::take_back(model_collection, "model_collection") }.map(drop)
        });
    }
}
