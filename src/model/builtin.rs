//! The models compiled into libvmaf, embedded by version name.

/// (version, JSON text) of every built-in model.
pub const MODELS: &[(&str, &str)] = &[
    ("vmaf_v0.6.1", include_str!("builtin/vmaf_v0.6.1.json")),
    (
        "vmaf_v0.6.1neg",
        include_str!("builtin/vmaf_v0.6.1neg.json"),
    ),
    ("vmaf_b_v0.6.3", include_str!("builtin/vmaf_b_v0.6.3.json")),
    (
        "vmaf_4k_v0.6.1",
        include_str!("builtin/vmaf_4k_v0.6.1.json"),
    ),
    (
        "vmaf_4k_v0.6.1neg",
        include_str!("builtin/vmaf_4k_v0.6.1neg.json"),
    ),
    (
        "vmaf_float_v0.6.1",
        include_str!("builtin/vmaf_float_v0.6.1.json"),
    ),
    (
        "vmaf_float_v0.6.1neg",
        include_str!("builtin/vmaf_float_v0.6.1neg.json"),
    ),
    (
        "vmaf_float_b_v0.6.3",
        include_str!("builtin/vmaf_float_b_v0.6.3.json"),
    ),
    (
        "vmaf_float_4k_v0.6.1",
        include_str!("builtin/vmaf_float_4k_v0.6.1.json"),
    ),
    (
        "vmaf_v1.0.16_3d0h",
        include_str!("builtin/vmaf_v1.0.16_3d0h.json"),
    ),
    (
        "vmaf_v1.0.16_3d0h_2160",
        include_str!("builtin/vmaf_v1.0.16_3d0h_2160.json"),
    ),
    (
        "vmaf_v1.0.16_5d0h",
        include_str!("builtin/vmaf_v1.0.16_5d0h.json"),
    ),
    (
        "vmaf_v1.0.16_1d5h_2160",
        include_str!("builtin/vmaf_v1.0.16_1d5h_2160.json"),
    ),
    (
        "vmaf_v1.0.16_hfr_3d0h",
        include_str!("builtin/vmaf_v1.0.16_hfr_3d0h.json"),
    ),
    (
        "vmaf_v1.0.16_hfr_3d0h_2160",
        include_str!("builtin/vmaf_v1.0.16_hfr_3d0h_2160.json"),
    ),
    (
        "vmaf_v1.0.16_hfr_5d0h",
        include_str!("builtin/vmaf_v1.0.16_hfr_5d0h.json"),
    ),
    (
        "vmaf_v1.0.16_hfr_1d5h_2160",
        include_str!("builtin/vmaf_v1.0.16_hfr_1d5h_2160.json"),
    ),
];

/// The JSON text of built-in model `version`.
pub fn find(version: &str) -> Option<&'static str> {
    MODELS
        .iter()
        .find(|(v, _)| *v == version)
        .map(|(_, json)| *json)
}

/// Every built-in version, comma-separated (for error messages).
pub fn versions() -> String {
    MODELS
        .iter()
        .map(|(v, _)| *v)
        .collect::<Vec<_>>()
        .join(", ")
}
