//! libvmaf's `picture_copy`: one plane as `f32` samples on the 8-bit scale.
//!
//! The float extractors work on 8-bit-range values whatever the input depth:
//! libvmaf divides 10/12/16-bit samples by 4/16/256 (in `float`) and then adds
//! an integer offset (`-128` for ANSNR, VIF, ADM, motion and SpEED, `0`
//! elsewhere). Every step is an `f32` operation, which we keep so results
//! stay bit-identical.

use super::float_plane::FloatPlane;
use crate::cpu::simd_dispatch;
use crate::error::{Error, Result};
use crate::picture::{HostPicture, PictureFormat, PlaneId, PlaneRef, PlaneSamples, Sample};

/// `2^(bit_depth - 8)`: libvmaf's divisor at 10, 12 and 16 bits (4, 16,
/// 256), and 1 at 8 bits.
pub(crate) fn power_of_two_divisor(bit_depth: u8) -> f32 {
    (1u32 << (bit_depth.max(8) - 8)) as f32
}

/// The divisor libvmaf applies to samples of `bit_depth` bits, or `None` for
/// depths its `picture_copy` does not handle (it would misread 9, 11, 13-15
/// bit pictures as 8-bit ones).
pub fn sample_divisor(bit_depth: u8) -> Option<f32> {
    matches!(bit_depth, 8 | 10 | 12 | 16).then(|| power_of_two_divisor(bit_depth))
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
    let samples = picture.plane(plane);
    let width = samples.width();
    dst.resize(width * samples.height(), 0.0);
    copy_packed(samples, divisor, offset, width, dst);
}

/// [`picture_copy`] of the luma plane into a [`FloatPlane`], reshaped to the
/// picture's size.
///
/// float_vif, float_adm and float_motion also take the depths libvmaf's
/// `picture_copy` misreads (9, 11, 13-15 bits), on the same `2^(bits - 8)`
/// scale.
pub fn copy_luma(picture: &HostPicture, offset: i32, dst: &mut FloatPlane) {
    let luma = picture.plane(PlaneId::Y);
    let size = (luma.width(), luma.height());
    copy_plane_cropped(picture, PlaneId::Y, offset, size, dst);
}

/// [`copy_luma`] of plane `id`, its top-left `width` x `height` samples
/// (for chroma, libvmaf's floored plane size: ADR 0002).
pub fn copy_plane_cropped(
    picture: &HostPicture,
    id: PlaneId,
    offset: i32,
    (width, height): (usize, usize),
    dst: &mut FloatPlane,
) {
    let divisor = power_of_two_divisor(picture.format().bit_depth);
    dst.reshape(width, height);
    copy_packed(picture.plane(id), divisor, offset, width, dst.samples_mut());
}

/// Converts the first `width` samples of the first rows of `samples` into
/// `dst`, packed `width` apart, as many rows as `dst` holds.
fn copy_packed(
    samples: PlaneSamples<'_>,
    divisor: f32,
    offset: i32,
    width: usize,
    dst: &mut [f32],
) {
    fn rows<T: Sample>(
        p: PlaneRef<'_, T>,
        divisor: f32,
        offset: i32,
        width: usize,
        dst: &mut [f32],
    ) {
        for (y, out) in dst.chunks_exact_mut(width).enumerate() {
            convert_row(&p.row(y)[..width], divisor, offset, out);
        }
    }
    match samples {
        PlaneSamples::U8(p) => rows(p, divisor, offset, width, dst),
        PlaneSamples::U16(p) => rows(p, divisor, offset, width, dst),
    }
}

simd_dispatch! {
    /// `out[i] = src[i] / divisor + offset` in `f32`, for `out.len()` samples.
    ///
    /// Every divisor here is a power of two, so multiplying by its inverse
    /// gives the quotient exactly and vectorizes better than dividing.
    pub fn convert_row<T: Sample>(src: &[T], divisor: f32, offset: i32, out: &mut [f32]) => convert_row_impl
}

#[inline(always)]
fn convert_row_impl<T: Sample>(src: &[T], divisor: f32, offset: i32, out: &mut [f32]) {
    let (scale, offset) = (1.0 / divisor, offset as f32);
    let src = &src[..out.len()];
    for (o, &s) in out.iter_mut().zip(src) {
        *o = Into::<u32>::into(s) as f32 * scale + offset;
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
        let mut plane = FloatPlane::default();
        copy_luma(&p, -128, &mut plane);
        assert_eq!(plane.samples(), &out[..]);
    }

    #[test]
    fn odd_depths_are_refused() {
        let f = PictureFormat::new(2, 2, ChromaSubsampling::Yuv420, 9).unwrap();
        assert!(check_bit_depth("float_psnr", &f).is_err());
    }

    #[test]
    fn divisors_are_powers_of_two() {
        // `convert_row` relies on it for exact quotients.
        for bits in 8..=16 {
            let d = power_of_two_divisor(bits);
            assert_eq!(d, 2f32.powi(bits as i32 - 8));
            assert_eq!(
                sample_divisor(bits).is_some(),
                [8, 10, 12, 16].contains(&bits)
            );
        }
    }
}
