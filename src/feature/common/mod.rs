//! Building blocks shared by the float extractors: libvmaf's float picture
//! conversion, the IQA filters and SSIM core, and the PSNR constants.

pub mod iqa_filter;
pub mod iqa_ssim;
pub mod picture_copy;
pub mod psnr_scale;
pub mod ssim_db;
