//! The peak value and the PSNR cap libvmaf's float PSNR-type extractors use
//! per bit depth (samples are on the 8-bit scale, so the peak is 255 plus
//! the fraction the extra bits add).

use super::picture_copy::check_bit_depth;
use crate::error::Result;
use crate::picture::PictureFormat;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PsnrScale {
    pub peak: f64,
    /// Score reported for (near) identical pictures, and the upper clip.
    pub psnr_max: f64,
}

impl PsnrScale {
    pub fn for_format(extractor: &str, format: &PictureFormat) -> Result<Self> {
        check_bit_depth(extractor, format)?;
        let (peak, psnr_max) = match format.bit_depth {
            8 => (255.0, 60.0),
            10 => (255.75, 72.0),
            12 => (255.9375, 84.0),
            _ => (255.99609375, 108.0),
        };
        Ok(Self { peak, psnr_max })
    }
}
