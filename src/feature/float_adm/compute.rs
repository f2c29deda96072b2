//! libvmaf's float ADM over four wavelet scales (`compute_adm` in `adm.c`):
//! the detail loss measure (DLM, `adm2`) and the additive impairment
//! measure (AIM).

use super::dwt::{dwt2, Bands, DwtScratch};
use super::masking::{cm, csf, decouple, den_scale, Masking, PNorm, Region, RowScratch, Triple};
use crate::feature::common::float_plane::FloatPlane;

/// `ADM_BORDER_FACTOR`: the share of each side left out of pooling.
pub const BORDER_FACTOR: f64 = 0.1;

/// What [`compute_adm`] needs besides the pictures.
#[derive(Debug, Clone, Copy)]
pub struct AdmParams {
    pub enhn_gain_limit: f64,
    /// CSF weights per scale, `[h, v, d]`.
    pub weights: [[f32; 3]; 4],
    pub noise_weight: f64,
    pub bypass_cm: bool,
    pub p_norm: f64,
    /// Scale left out of the AIM sums, if any.
    pub skip_aim_scale: Option<usize>,
    pub skip_scale0: bool,
}

/// The results libvmaf reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdmScores {
    /// `num / den`, or 1 when the denominator vanishes.
    pub score: f64,
    /// AIM, clipped at 1 (`None` when the denominator vanishes: libvmaf
    /// leaves it unset).
    pub aim: Option<f64>,
    pub num: f64,
    pub den: f64,
    /// Per scale `(num, den)`, as libvmaf's `float`s.
    pub scales: [(f32, f32); 4],
}

/// Planes reused from frame to frame.
#[derive(Debug, Default)]
pub struct AdmScratch {
    reference: Bands,
    distorted: Bands,
    /// Next scale's inputs (the `a` bands, swapped in).
    ref_input: FloatPlane,
    dis_input: FloatPlane,
    restored: Triple,
    additive: Triple,
    weighted: Triple,
    filtered: Triple,
    dwt: DwtScratch,
    rows: RowScratch,
}

/// The ADM of one reference/distorted pair of `f32` planes (samples already
/// offset by -128).
pub fn compute_adm(
    reference: &FloatPlane,
    distorted: &FloatPlane,
    p: &AdmParams,
    s: &mut AdmScratch,
) -> AdmScores {
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::has_avx2() {
        // SAFETY: the CPU supports AVX2.
        return unsafe { compute_adm_avx2(reference, distorted, p, s) };
    }
    compute_adm_impl(reference, distorted, p, s)
}

/// [`compute_adm_impl`] compiled for AVX2: wider vectors, the same
/// arithmetic.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn compute_adm_avx2(
    reference: &FloatPlane,
    distorted: &FloatPlane,
    p: &AdmParams,
    s: &mut AdmScratch,
) -> AdmScores {
    compute_adm_impl(reference, distorted, p, s)
}

#[inline(always)]
fn compute_adm_impl(
    reference: &FloatPlane,
    distorted: &FloatPlane,
    p: &AdmParams,
    s: &mut AdmScratch,
) -> AdmScores {
    let masking = Masking {
        border_factor: BORDER_FACTOR,
        noise_weight: p.noise_weight,
        bypass: p.bypass_cm,
        p: PNorm(p.p_norm),
    };
    let mut sums = [ScaleSums::default(); 4];

    for (scale, scale_sums) in sums.iter_mut().enumerate() {
        let (r_in, d_in) = if scale == 0 {
            (reference, distorted)
        } else {
            (&s.ref_input, &s.dis_input)
        };
        let lo_only = scale == 0 && p.skip_scale0;
        dwt2(r_in, &mut s.reference, lo_only, &mut s.dwt);
        dwt2(d_in, &mut s.distorted, lo_only, &mut s.dwt);

        *scale_sums = if lo_only {
            ScaleSums::SKIPPED
        } else {
            let weights = p.weights[scale];
            let (w, h) = (s.reference.h.width, s.reference.h.height);
            let widened = Region::widened(w, h, BORDER_FACTOR);
            decouple(
                &s.reference,
                &s.distorted,
                &mut s.restored,
                &mut s.additive,
                widened,
                p.enhn_gain_limit,
            );
            let den = den_scale(
                &s.reference,
                weights,
                Region::pooled(w, h, BORDER_FACTOR),
                p.noise_weight,
                masking.p,
                &mut s.rows,
            );
            // DLM: the restored detail, masked by the additive impairment.
            csf(
                &s.additive,
                weights,
                widened,
                &mut s.weighted,
                &mut s.filtered,
            );
            let num = cm(
                &s.restored,
                &s.weighted,
                &s.filtered,
                weights,
                masking,
                &mut s.rows,
            );
            // AIM: the additive impairment, masked by the restored detail,
            // with no noise floor.
            csf(
                &s.restored,
                weights,
                widened,
                &mut s.weighted,
                &mut s.filtered,
            );
            let aim_masking = Masking {
                noise_weight: 0.0,
                ..masking
            };
            let aim_num = cm(
                &s.additive,
                &s.weighted,
                &s.filtered,
                weights,
                aim_masking,
                &mut s.rows,
            );
            ScaleSums { num, den, aim_num }
        };

        std::mem::swap(&mut s.ref_input, &mut s.reference.a);
        std::mem::swap(&mut s.dis_input, &mut s.distorted.a);
    }
    combine_scales(reference.width, reference.height, p, &sums)
}

/// One scale's pooled values, as libvmaf's `float`s.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ScaleSums {
    /// DLM numerator (`adm_cm_s` of the restored detail).
    pub num: f32,
    /// Denominator (`adm_csf_den_scale_s`).
    pub den: f32,
    /// AIM numerator (`adm_cm_s` of the additive impairment).
    pub aim_num: f32,
}

impl ScaleSums {
    /// Scale 0 skipped: a tiny denominator avoids a division by zero.
    pub const SKIPPED: Self = Self {
        num: 0.0,
        den: 1e-10f64 as f32,
        aim_num: 0.0,
    };
}

/// The scores of a `w0 x h0` picture from its four scales' values.
pub fn combine_scales(w0: usize, h0: usize, p: &AdmParams, sums: &[ScaleSums; 4]) -> AdmScores {
    let numden_limit = 1e-10 * (w0 * h0) as f64 / (1920.0 * 1080.0);
    let (mut num, mut den) = (0.0f64, 0.0f64);
    let (mut aim_num, mut aim_den) = (0.0f64, 0.0f64);
    let mut scales = [(0.0f32, 0.0f32); 4];
    for (scale, s) in sums.iter().enumerate() {
        num += s.num as f64;
        den += s.den as f64;
        if p.skip_aim_scale != Some(scale) {
            aim_den += s.den as f64;
            aim_num += s.aim_num as f64;
        }
        scales[scale] = (s.num, s.den);
    }

    let num = if num < numden_limit { 0.0 } else { num };
    let den = if den < numden_limit { 0.0 } else { den };
    let (score, aim) = if den == 0.0 {
        (1.0, None)
    } else {
        // `MIN(aim_num / aim_den, 1.0f)`
        let a = aim_num / aim_den;
        (num / den, Some(if a < 1.0 { a } else { 1.0 }))
    };
    AdmScores {
        score,
        aim,
        num,
        den,
        scales,
    }
}

/// Smallest picture side for which every scale's wavelet and masking taps
/// stay inside the bands (each band side must be at least 2).
pub fn min_side() -> usize {
    (1usize..)
        .find(|&n| {
            let mut side = n;
            (0..4).all(|_| {
                let ok = side >= 2 && side.div_ceil(2) >= 2;
                side = side.div_ceil(2);
                ok
            })
        })
        .unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn avx2_build_gives_identical_scores() {
        let (r, d) = (
            FloatPlane::texture(101, 67, 1),
            FloatPlane::texture(101, 67, 2),
        );
        let p = AdmParams {
            enhn_gain_limit: 100.0,
            weights: super::super::csf::band_weights(
                super::super::csf::Viewing::DEFAULT,
                [-1.0; 4],
                [-1.0; 4],
            ),
            noise_weight: 0.03125,
            bypass_cm: false,
            p_norm: 3.0,
            skip_aim_scale: None,
            skip_scale0: false,
        };
        let base = compute_adm_impl(&r, &d, &p, &mut AdmScratch::default());
        assert!(base.score > 0.0 && base.score < 1.0 && base.aim.is_some());
        #[cfg(target_arch = "x86_64")]
        if crate::cpu::has_avx2() {
            // SAFETY: checked above.
            let wide = unsafe { compute_adm_avx2(&r, &d, &p, &mut AdmScratch::default()) };
            assert_eq!(base, wide);
        }
    }

    #[test]
    fn smallest_accepted_side() {
        // 17 -> 9 -> 5 -> 3 -> 2: every band at least 2 wide.
        assert_eq!(min_side(), 17);
    }
}
