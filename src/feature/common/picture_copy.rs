//! libvmaf's `picture_copy`: one plane as `f32` samples on the 8-bit scale.
//!
//! The float extractors work on 8-bit-range values whatever the input depth:
//! libvmaf divides 10/12/16-bit samples by 4/16/256 (in `float`) and then adds
//! an integer offset (`-128` for ANSNR, VIF and ADM, `0` elsewhere). Every
//! step is an `f32` operation, which we keep so results stay bit-identical.

use crate::error::{Error, Result};
use crate::picture::{HostPicture, PictureFormat, PlaneId, PlaneRef, PlaneSamples, Sample};

/// The divisor libvmaf applies to samples of `bit_depth` bits, or `None` for
/// depths its `picture_copy` does not handle (it would misread 9, 11, 13-15
/// bit pictures as 8-bit ones).
pub fn sample_divisor(bit_depth: u8) -> Option<f32> {
    match bit_depth {
        8 => Some(1.0),
        10 => Some(4.0),
        12 => Some(16.0),
        16 => Some(256.0),
        _ => None,
    }
}

/// Refuses formats libvmaf's float extractors cannot convert.
pub fn check_bit_depth(extractor: &str, format: &PictureFormat) -> Result<()> {
    match sample_divisor(format.bit_depth) {
        Some(_) => Ok(()),
        None => Err(Error::Extractor {
            extractor: extractor.to_string(),
            reason: format!(
                "{}-bit input is not supported (8, 10, 12 or 16 bits)",
                format.bit_depth
            ),
        }),
    }
}

/// Writes `plane` of `picture` into `dst` as tightly packed rows of
/// `sample / divisor + offset`, resizing `dst` to width x height.
///
/// The caller has checked the bit depth with [`check_bit_depth`]; an
/// unsupported depth falls back to the 8-bit scale.
pub fn picture_copy(picture: &HostPicture, plane: PlaneId, offset: i32, dst: &mut Vec<f32>) {
    let divisor = sample_divisor(picture.format().bit_depth).unwrap_or(1.0);
    match picture.plane(plane) {
        PlaneSamples::U8(p) => copy_plane(p, divisor, offset as f32, dst),
        PlaneSamples::U16(p) => copy_plane(p, divisor, offset as f32, dst),
    }
}

fn copy_plane<T: Sample>(plane: PlaneRef<'_, T>, divisor: f32, offset: f32, dst: &mut Vec<f32>) {
    let w = plane.width;
    dst.resize(w * plane.height, 0.0);
    for (y, out) in dst.chunks_exact_mut(w).enumerate() {
        for (o, &s) in out.iter_mut().zip(plane.row(y)) {
            // Division by 1.0 is exact, so 8-bit input takes the same path.
            *o = Into::<u32>::into(s) as f32 / divisor + offset;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::picture::ChromaSubsampling;

    #[test]
    fn ten_bit_samples_land_on_the_8_bit_scale() {
        let f = PictureFormat::new(2, 1, ChromaSubsampling::Yuv400, 10).unwrap();
        let mut p = HostPicture::new(f);
        p.plane_u16_mut(PlaneId::Y).copy_from_slice(&[1023, 2]);
        let mut out = Vec::new();
        picture_copy(&p, PlaneId::Y, -128, &mut out);
        assert_eq!(out, vec![255.75 - 128.0, 0.5 - 128.0]);
    }

    #[test]
    fn odd_depths_are_refused() {
        let f = PictureFormat::new(2, 2, ChromaSubsampling::Yuv420, 9).unwrap();
        assert!(check_bit_depth("float_psnr", &f).is_err());
    }
}
