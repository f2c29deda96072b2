//! The check every extractor makes before it reads a frame.

use crate::error::{Error, Result};
use crate::feature::FrameInput;
use crate::picture::{HostPicture, PictureFormat};

/// Checks the picture geometry matches what the extractor was created for.
pub fn check_format(extractor: &str, expected: &PictureFormat, got: &HostPicture) -> Result<()> {
    if got.format() != expected {
        return Err(Error::PictureMismatch(format!(
            "{extractor}: created for {expected}, got a {} picture",
            got.format()
        )));
    }
    Ok(())
}

/// [`check_format`] of both pictures of `frame`.
pub fn check_frame_format(
    extractor: &str,
    expected: &PictureFormat,
    frame: &FrameInput<'_>,
) -> Result<()> {
    check_format(extractor, expected, frame.reference)?;
    check_format(extractor, expected, frame.distorted)
}
