//! libvmaf 3.2's public structs and enums, laid out as its headers declare
//! them (`#[repr(C)]`; enums are C `int`s). The C ABI check in CI compiles
//! libvmaf's own headers and asserts each size and field offset equals ours
//! (`tests/capi/abi.c`).

use std::ffi::{c_char, c_int, c_uint, c_void};

/// `enum VmafLogLevel`.
pub const VMAF_LOG_LEVEL_NONE: c_int = 0;
pub const VMAF_LOG_LEVEL_ERROR: c_int = 1;

/// `enum VmafOutputFormat`.
pub const VMAF_OUTPUT_FORMAT_XML: c_int = 1;
pub const VMAF_OUTPUT_FORMAT_JSON: c_int = 2;
pub const VMAF_OUTPUT_FORMAT_CSV: c_int = 3;
pub const VMAF_OUTPUT_FORMAT_SUB: c_int = 4;

/// `enum VmafPoolingMethod`.
pub const VMAF_POOL_METHOD_MIN: c_int = 1;
pub const VMAF_POOL_METHOD_MAX: c_int = 2;
pub const VMAF_POOL_METHOD_MEAN: c_int = 3;
pub const VMAF_POOL_METHOD_HARMONIC_MEAN: c_int = 4;

/// `enum VmafPixelFormat`.
pub const VMAF_PIX_FMT_YUV420P: c_int = 1;
pub const VMAF_PIX_FMT_YUV422P: c_int = 2;
pub const VMAF_PIX_FMT_YUV444P: c_int = 3;
pub const VMAF_PIX_FMT_YUV400P: c_int = 4;

/// `enum VmafModelFlags`.
pub const VMAF_MODEL_FLAG_DISABLE_CLIP: u64 = 1 << 0;
pub const VMAF_MODEL_FLAG_ENABLE_TRANSFORM: u64 = 1 << 1;
pub const VMAF_MODEL_FLAG_DISABLE_TRANSFORM: u64 = 1 << 2;

/// `enum VmafModelCollectionScoreType`.
pub const VMAF_MODEL_COLLECTION_SCORE_BOOTSTRAP: c_int = 1;

/// `VmafConfiguration`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct VmafConfiguration {
    pub log_level: c_int,
    pub n_threads: c_uint,
    pub n_subsample: c_uint,
    pub cpumask: u64,
    pub gpumask: u64,
}

/// `VmafPicture`. `ref` and `priv` point to vmafx's own picture record
/// ([`super::picture`]); clients read and fill `data`, `stride`, `w`, `h`.
#[repr(C)]
#[derive(Debug)]
pub struct VmafPicture {
    pub pix_fmt: c_int,
    pub bpc: c_uint,
    pub w: [c_uint; 3],
    pub h: [c_uint; 3],
    pub stride: [isize; 3],
    pub data: [*mut c_void; 3],
    pub r#ref: *mut c_void,
    pub r#priv: *mut c_void,
}

/// `VmafPictureConfiguration`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct VmafPictureConfiguration {
    pub pic_params: PicParams,
    pub pic_cnt: c_uint,
}

/// The `pic_params` of [`VmafPictureConfiguration`].
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct PicParams {
    pub w: c_uint,
    pub h: c_uint,
    pub bpc: c_uint,
    pub pix_fmt: c_int,
}

/// `VmafModelConfig`.
#[repr(C)]
#[derive(Debug)]
pub struct VmafModelConfig {
    pub name: *const c_char,
    pub flags: u64,
}

/// `VmafModelCollectionScore`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct VmafModelCollectionScore {
    pub r#type: c_int,
    pub bootstrap: BootstrapScore,
}

/// The `bootstrap` member of [`VmafModelCollectionScore`].
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct BootstrapScore {
    pub bagging_score: f64,
    pub stddev: f64,
    pub ci_p95_lo: f64,
    pub ci_p95_hi: f64,
}

/// `const char *vmafx_abi_layout(void)`: the size of each public struct
/// and the offset of each field as this library lays them out, one
/// `Name.field value` per line. The ABI check compiles a C program against
/// libvmaf's headers that prints the same table and compares.
#[no_mangle]
pub extern "C" fn vmafx_abi_layout() -> *const c_char {
    static TABLE: std::sync::OnceLock<std::ffi::CString> = std::sync::OnceLock::new();
    TABLE
        .get_or_init(|| std::ffi::CString::new(layout_table()).expect("no NUL"))
        .as_ptr()
}

fn layout_table() -> String {
    use std::mem::{offset_of, size_of};
    let rows: &[(&str, usize)] = &[
        ("VmafConfiguration.size", size_of::<VmafConfiguration>()),
        (
            "VmafConfiguration.log_level",
            offset_of!(VmafConfiguration, log_level),
        ),
        (
            "VmafConfiguration.n_threads",
            offset_of!(VmafConfiguration, n_threads),
        ),
        (
            "VmafConfiguration.n_subsample",
            offset_of!(VmafConfiguration, n_subsample),
        ),
        (
            "VmafConfiguration.cpumask",
            offset_of!(VmafConfiguration, cpumask),
        ),
        (
            "VmafConfiguration.gpumask",
            offset_of!(VmafConfiguration, gpumask),
        ),
        ("VmafPicture.size", size_of::<VmafPicture>()),
        ("VmafPicture.pix_fmt", offset_of!(VmafPicture, pix_fmt)),
        ("VmafPicture.bpc", offset_of!(VmafPicture, bpc)),
        ("VmafPicture.w", offset_of!(VmafPicture, w)),
        ("VmafPicture.h", offset_of!(VmafPicture, h)),
        ("VmafPicture.stride", offset_of!(VmafPicture, stride)),
        ("VmafPicture.data", offset_of!(VmafPicture, data)),
        ("VmafPicture.ref", offset_of!(VmafPicture, r#ref)),
        ("VmafPicture.priv", offset_of!(VmafPicture, r#priv)),
        (
            "VmafPictureConfiguration.size",
            size_of::<VmafPictureConfiguration>(),
        ),
        (
            "VmafPictureConfiguration.pic_params.w",
            offset_of!(VmafPictureConfiguration, pic_params) + offset_of!(PicParams, w),
        ),
        (
            "VmafPictureConfiguration.pic_params.h",
            offset_of!(VmafPictureConfiguration, pic_params) + offset_of!(PicParams, h),
        ),
        (
            "VmafPictureConfiguration.pic_params.bpc",
            offset_of!(VmafPictureConfiguration, pic_params) + offset_of!(PicParams, bpc),
        ),
        (
            "VmafPictureConfiguration.pic_params.pix_fmt",
            offset_of!(VmafPictureConfiguration, pic_params) + offset_of!(PicParams, pix_fmt),
        ),
        (
            "VmafPictureConfiguration.pic_cnt",
            offset_of!(VmafPictureConfiguration, pic_cnt),
        ),
        ("VmafModelConfig.size", size_of::<VmafModelConfig>()),
        ("VmafModelConfig.name", offset_of!(VmafModelConfig, name)),
        ("VmafModelConfig.flags", offset_of!(VmafModelConfig, flags)),
        (
            "VmafModelCollectionScore.size",
            size_of::<VmafModelCollectionScore>(),
        ),
        (
            "VmafModelCollectionScore.type",
            offset_of!(VmafModelCollectionScore, r#type),
        ),
        (
            "VmafModelCollectionScore.bootstrap.bagging_score",
            offset_of!(VmafModelCollectionScore, bootstrap)
                + offset_of!(BootstrapScore, bagging_score),
        ),
        (
            "VmafModelCollectionScore.bootstrap.stddev",
            offset_of!(VmafModelCollectionScore, bootstrap) + offset_of!(BootstrapScore, stddev),
        ),
        (
            "VmafModelCollectionScore.bootstrap.ci.p95.lo",
            offset_of!(VmafModelCollectionScore, bootstrap) + offset_of!(BootstrapScore, ci_p95_lo),
        ),
        (
            "VmafModelCollectionScore.bootstrap.ci.p95.hi",
            offset_of!(VmafModelCollectionScore, bootstrap) + offset_of!(BootstrapScore, ci_p95_hi),
        ),
    ];
    let enums: &[(&str, i64)] = &[
        ("VMAF_LOG_LEVEL_ERROR", VMAF_LOG_LEVEL_ERROR as i64),
        ("VMAF_OUTPUT_FORMAT_XML", VMAF_OUTPUT_FORMAT_XML as i64),
        ("VMAF_OUTPUT_FORMAT_JSON", VMAF_OUTPUT_FORMAT_JSON as i64),
        ("VMAF_OUTPUT_FORMAT_CSV", VMAF_OUTPUT_FORMAT_CSV as i64),
        ("VMAF_OUTPUT_FORMAT_SUB", VMAF_OUTPUT_FORMAT_SUB as i64),
        ("VMAF_POOL_METHOD_MIN", VMAF_POOL_METHOD_MIN as i64),
        ("VMAF_POOL_METHOD_MAX", VMAF_POOL_METHOD_MAX as i64),
        ("VMAF_POOL_METHOD_MEAN", VMAF_POOL_METHOD_MEAN as i64),
        (
            "VMAF_POOL_METHOD_HARMONIC_MEAN",
            VMAF_POOL_METHOD_HARMONIC_MEAN as i64,
        ),
        ("VMAF_PIX_FMT_YUV420P", VMAF_PIX_FMT_YUV420P as i64),
        ("VMAF_PIX_FMT_YUV422P", VMAF_PIX_FMT_YUV422P as i64),
        ("VMAF_PIX_FMT_YUV444P", VMAF_PIX_FMT_YUV444P as i64),
        ("VMAF_PIX_FMT_YUV400P", VMAF_PIX_FMT_YUV400P as i64),
        (
            "VMAF_MODEL_FLAG_DISABLE_CLIP",
            VMAF_MODEL_FLAG_DISABLE_CLIP as i64,
        ),
        (
            "VMAF_MODEL_FLAG_ENABLE_TRANSFORM",
            VMAF_MODEL_FLAG_ENABLE_TRANSFORM as i64,
        ),
        (
            "VMAF_MODEL_FLAG_DISABLE_TRANSFORM",
            VMAF_MODEL_FLAG_DISABLE_TRANSFORM as i64,
        ),
        (
            "VMAF_MODEL_COLLECTION_SCORE_BOOTSTRAP",
            VMAF_MODEL_COLLECTION_SCORE_BOOTSTRAP as i64,
        ),
    ];
    #[cfg(feature = "cuda")]
    let cuda_rows: &[(&str, usize)] = {
        use super::cuda::{VmafCudaConfiguration as C, VmafCudaPictureConfiguration as P};
        &[
            ("VmafCudaConfiguration.size", size_of::<C>()),
            ("VmafCudaConfiguration.cu_ctx", offset_of!(C, cu_ctx)),
            ("VmafCudaPictureConfiguration.size", size_of::<P>()),
            (
                "VmafCudaPictureConfiguration.pic_params.w",
                offset_of!(P, pic_params) + offset_of!(PicParams, w),
            ),
            (
                "VmafCudaPictureConfiguration.pic_params.pix_fmt",
                offset_of!(P, pic_params) + offset_of!(PicParams, pix_fmt),
            ),
            (
                "VmafCudaPictureConfiguration.pic_prealloc_method",
                offset_of!(P, pic_prealloc_method),
            ),
        ]
    };
    #[cfg(not(feature = "cuda"))]
    let cuda_rows: &[(&str, usize)] = &[];
    let mut out = String::new();
    for (name, v) in rows.iter().chain(cuda_rows) {
        out += &format!("{name} {v}\n");
    }
    for (name, v) in enums {
        out += &format!("{name} {v}\n");
    }
    out
}
