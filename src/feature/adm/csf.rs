//! Contrast sensitivity weights: how visible a unit of DWT coefficient is in
//! each scale and orientation, for the viewing conditions the options give.
//!
//! Each function keeps libvmaf's float/double steps (these weights are
//! converted to fixed point, so one rounding difference would move a score).

use super::tables::{
    BlendTable, BARTEN_LUM_ANCHORS, BARTEN_MTF_A, BARTEN_MTF_B, BARTEN_PARAMS, BARTEN_SA,
    BLEND_LEGACY, BLEND_MAE, WATSON_AMPLITUDES, WATSON_Y,
};
use std::f64::consts::PI;

/// `adm_csf_mode`: which contrast sensitivity function weights the bands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsfMode {
    /// Watson et al. 1997 wavelet noise visibility (the default).
    Watson97,
    /// Barten's CSF as simplified in HDR-VDP-2.
    Barten,
    /// Tabulated Barten/Watson blend (v1.0.16 models).
    BartenWatsonBlend,
    /// The blend refit with the L1 scaling fix.
    BartenWatsonBlendMae,
}

impl CsfMode {
    pub fn from_option(mode: i32) -> Option<Self> {
        match mode {
            0 => Some(Self::Watson97),
            1 => Some(Self::Barten),
            2 => Some(Self::BartenWatsonBlend),
            3 => Some(Self::BartenWatsonBlendMae),
            _ => None,
        }
    }
}

/// Luminance (cd/m^2) the Barten CSF is evaluated at.
const CSF_LUMINANCE: f64 = 100.0;

/// Viewing conditions and CSF choice, as the extractor options set them.
#[derive(Debug, Clone, Copy)]
pub struct CsfConfig {
    pub mode: CsfMode,
    pub norm_view_dist: f64,
    pub ref_display_height: i32,
    /// Barten only: scale of the horizontal/vertical weight.
    pub csf_scale: f64,
    /// Barten only: scale of the diagonal weight.
    pub csf_diag_scale: f64,
}

impl CsfConfig {
    /// True for libvmaf's default viewing (1080 lines at 3 heights, Watson),
    /// whose scale-0 weights are hard-coded in fixed point.
    fn is_default_watson(&self) -> bool {
        (self.norm_view_dist * self.ref_display_height as f64 - 3.0 * 1080.0).abs() < 1.0e-8
            && self.mode == CsfMode::Watson97
    }

    /// The blended-CSF table for these viewing conditions, if libvmaf has one.
    fn blend_table(&self) -> Option<&'static BlendTable> {
        let tables = match self.mode {
            CsfMode::BartenWatsonBlend => &BLEND_LEGACY,
            CsfMode::BartenWatsonBlendMae => &BLEND_MAE,
            _ => return None,
        };
        tables
            .iter()
            .find(|(rdh, nvd, _)| *rdh == self.ref_display_height && *nvd == self.norm_view_dist)
            .map(|(_, _, t)| t)
    }

    /// Whether every weight is defined (the blend modes only know a few
    /// display heights and distances; libvmaf would use -EINVAL as a weight).
    pub fn is_supported(&self) -> bool {
        match self.mode {
            CsfMode::Watson97 | CsfMode::Barten => true,
            _ => self.blend_table().is_some(),
        }
    }

    /// Float weights of scale `scale` (0 = finest) for the h, v and d bands.
    pub fn band_weights(&self, scale: usize) -> [f32; 3] {
        let (hv, diag) = match self.mode {
            CsfMode::Watson97 => (
                1.0f32 / self.watson_quant_step(scale, 1),
                1.0f32 / self.watson_quant_step(scale, 2),
            ),
            CsfMode::Barten => (
                self.barten(scale, self.csf_scale),
                self.barten(scale, self.csf_diag_scale),
            ),
            CsfMode::BartenWatsonBlend | CsfMode::BartenWatsonBlendMae => {
                match self.blend_table() {
                    Some(t) => (t[0][scale], t[1][scale]),
                    None => (f32::NAN, f32::NAN),
                }
            }
        };
        [hv, hv, diag]
    }

    /// Scale-0 weights in fixed point: Q21 for h and v, Q23 for d.
    pub fn scale0_fixed(&self) -> [u16; 3] {
        if self.is_default_watson() {
            return [36453, 36453, 49417];
        }
        let w = self.band_weights(0);
        let q21 = 2f64.powi(21);
        let q23 = 2f64.powi(23);
        [
            c_double_to_u16(w[0] as f64 * q21),
            c_double_to_u16(w[1] as f64 * q21),
            c_double_to_u16(w[2] as f64 * q23),
        ]
    }

    /// Weights of scales 1-3 in Q32.
    pub fn coarse_fixed(&self, scale: usize) -> [u32; 3] {
        let q32 = 2f64.powi(32);
        self.band_weights(scale)
            .map(|w| c_double_to_u32(w as f64 * q32))
    }

    /// Display resolution in pixels per degree of visual angle.
    fn pixels_per_degree(&self) -> f32 {
        (self.norm_view_dist * self.ref_display_height as f64 * PI / 180.0) as f32
    }

    /// Watson 1997 quantisation step, formula (9); lambda = scale,
    /// theta 1 = h/v, 2 = diagonal.
    fn watson_quant_step(&self, lambda: usize, theta: usize) -> f32 {
        let p = &WATSON_Y;
        let r = self.pixels_per_degree();
        let temp = (2f64.powf((lambda + 1) as f64) * p.f0 as f64 * p.g[theta] as f64 / r as f64)
            .log10() as f32;
        // k * temp * temp is a float product in libvmaf (only the power is
        // taken in double).
        let q = 2.0 * p.a as f64 * 10f64.powf((p.k * temp * temp) as f64)
            / WATSON_AMPLITUDES[lambda][theta] as f64;
        q as f32
    }

    /// Barten's CSF (HDR-VDP-2 simplification) at the nominal frequency of
    /// scale `lambda`, times `scale_factor`.
    fn barten(&self, lambda: usize, scale_factor: f64) -> f32 {
        let r = self.pixels_per_degree();
        let freq = (r as f64 / 2f64.powf((lambda + 1) as f64)) as f32;

        let anchors = BARTEN_LUM_ANCHORS;
        let lum = CSF_LUMINANCE.clamp(anchors[0] as f64, anchors[5] as f64);
        // The clamped luminance always lies between two anchors.
        let (left, right) = (0..5)
            .find(|&i| lum >= anchors[i] as f64 && lum <= anchors[i + 1] as f64)
            .map_or((0, 0), |i| (i, i + 1));
        let left_pos = (anchors[left] as f64).log10() as f32;
        let right_pos = (anchors[right] as f64).log10() as f32;
        let pos = lum.log10() as f32;
        let p = |k: usize| {
            lerp(
                left_pos,
                BARTEN_PARAMS[left][k],
                right_pos,
                BARTEN_PARAMS[right][k],
                pos,
            )
        };
        let (p0, p1, p2, p3) = (p(1), p(2), p(3), p(4));

        let a = (1.0f64 + ((p0 * freq) as f64).powf(p1 as f64)) as f32;
        let b = (1.0f64 / (1.0 - (-((freq / 7.0) as f64).powf(2.0)).exp()).powf(p2 as f64)) as f32;
        let neural = (p3 as f64 / ((a * b) as f64).powf(0.5)) as f32;
        ((neural * barten_mtf(freq) * barten_rod_cone(CSF_LUMINANCE as f32)) as f64 * scale_factor)
            as f32
    }
}

/// C's `(uint16_t)` of a double as x86-64 compilers build it: truncated to
/// a 32-bit integer (`cvttsd2si`; out of range or NaN: `INT_MIN`), then its
/// low 16 bits. Weights past the Q21/Q23 range (Barten's, at coarse
/// viewing) wrap as in libvmaf instead of saturating.
fn c_double_to_u16(x: f64) -> u16 {
    let in_range = (-2_147_483_648.0..2_147_483_648.0).contains(&x);
    (if in_range { x as i32 } else { i32::MIN }) as u16
}

/// C's `(uint32_t)` of a double on x86-64: truncated to a 64-bit integer
/// (`cvttsd2si`; out of range or NaN: `INT64_MIN`), then its low 32 bits.
fn c_double_to_u32(x: f64) -> u32 {
    let in_range = (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x);
    (if in_range { x as i64 } else { i64::MIN }) as u32
}

fn lerp(left_pos: f32, left_val: f32, right_pos: f32, right_val: f32, pos: f32) -> f32 {
    left_val + ((right_val - left_val) / (right_pos - left_pos)) * (pos - left_pos)
}

/// Optical modulation transfer function part of Barten's CSF.
fn barten_mtf(freq: f32) -> f32 {
    let mut mtf = 0.0f32;
    for i in 0..4 {
        mtf =
            (mtf as f64 + BARTEN_MTF_A[i] as f64 * ((-BARTEN_MTF_B[i] * freq) as f64).exp()) as f32;
    }
    mtf
}

/// Luminance-dependent part of Barten's CSF.
fn barten_rod_cone(lum: f32) -> f32 {
    let [s0, drop, slope, low] = BARTEN_SA;
    (s0 as f64 * (((drop / lum) as f64).powf(slope as f64) + 1.0).powf(-low as f64)) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(mode: CsfMode, nvd: f64, rdh: i32) -> CsfConfig {
        CsfConfig {
            mode,
            norm_view_dist: nvd,
            ref_display_height: rdh,
            csf_scale: 1.0,
            csf_diag_scale: 1.0,
        }
    }

    #[test]
    fn watson_default_is_close_to_hardcoded_fixed_point() {
        // libvmaf hard-codes the default scale-0 weights (from an older
        // evaluation); the formula gives nearly the same numbers.
        let c = cfg(CsfMode::Watson97, 3.0, 1080);
        let w = c.band_weights(0);
        assert!(
            ((w[0] as f64 * 2f64.powi(21)) - 36453.0).abs() < 4.0,
            "{w:?}"
        );
        assert!(
            ((w[2] as f64 * 2f64.powi(23)) - 49417.0).abs() < 4.0,
            "{w:?}"
        );
        assert_eq!(c.scale0_fixed(), [36453, 36453, 49417]);
    }

    #[test]
    fn fixed_point_weights_convert_as_c_does_on_x86() {
        assert_eq!(c_double_to_u16(36453.9), 36453);
        assert_eq!(c_double_to_u16(70000.7), (70000 - 65536) as u16);
        assert_eq!(c_double_to_u16(3e9), 0);
        assert_eq!(
            c_double_to_u32(5_000_000_000.5),
            (5_000_000_000u64 - (1 << 32)) as u32
        );
        assert_eq!(c_double_to_u32(f64::NAN), 0);
    }

    #[test]
    fn blend_tables_need_known_viewing() {
        assert!(cfg(CsfMode::BartenWatsonBlend, 3.0, 1080).is_supported());
        assert!(cfg(CsfMode::BartenWatsonBlendMae, 1.5, 2160).is_supported());
        assert!(!cfg(CsfMode::BartenWatsonBlend, 4.0, 1080).is_supported());
        let w = cfg(CsfMode::BartenWatsonBlend, 5.0, 1080).band_weights(3);
        assert_eq!(
            w,
            [
                0.047464_f64 as f32,
                0.047464_f64 as f32,
                0.027574_f64 as f32
            ]
        );
    }

    #[test]
    fn barten_is_positive_and_finite() {
        let c = cfg(CsfMode::Barten, 3.0, 1080);
        for s in 0..4 {
            let w = c.band_weights(s);
            assert!(w.iter().all(|x| x.is_finite() && *x > 0.0), "{w:?}");
        }
    }
}
