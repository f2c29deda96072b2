//! Building blocks shared by the extractors: libvmaf's float picture
//! conversion and mirrored separable filter, the VIF Gaussians, the IQA
//! filters and SSIM core, the PSNR constants and the motion3 blend.

pub mod float_plane;
pub mod format_check;
pub mod iqa_filter;
pub mod iqa_ssim;
pub mod mirrored_filter;
pub mod motion_blend;
pub mod picture_copy;
pub mod psnr_scale;
pub mod ssim_db;
pub mod vif_kernels;
pub mod words16;

/// Converts C's `static const float x[] = { <double literals> }`: each
/// literal is rounded to `double` first, then to `float`.
pub const fn to_f32<const N: usize>(v: [f64; N]) -> [f32; N] {
    let mut out = [0.0f32; N];
    let mut i = 0;
    while i < N {
        out[i] = v[i] as f32;
        i += 1;
    }
    out
}
