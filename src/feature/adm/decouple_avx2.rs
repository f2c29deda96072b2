//! Scale-0 decoupling with AVX2, for CPUs without AVX-512: the exact
//! 32-bit-lane arithmetic of `decouple_avx512` (ADR 0032) on eight
//! coefficients a vector, with vector masks where that code has mask
//! registers. Same bits as the portable loop.

#![cfg(target_arch = "x86_64")]

use super::decouple::{cos_1deg_sq, GainLimit, Rounding, Row};
use super::tables::RECIPROCAL_Q30;
use std::arch::x86_64::*;

/// Coefficients per vector.
const LANES: usize = 8;

/// How the enhancement gain limit multiplies a restored coefficient.
#[derive(Clone, Copy)]
struct Gain {
    /// Whole gain limits (libvmaf's defaults 100 and 1 among them) multiply
    /// exactly in 32 bits: |restored| <= 2^15, gain < 2^16.
    whole: Option<__m256i>,
    double: __m256d,
    nearest: bool,
}

/// [`decouple::decouple_fine`](super::decouple::decouple_fine) with AVX2.
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn decouple_fine(row: Row<'_, i16>, gain_limit: GainLimit) {
    let n = row.len();
    let limit = gain_limit.limit;
    let gain = Gain {
        whole: (limit.fract() == 0.0 && (0.0..65536.0).contains(&limit))
            .then(|| _mm256_set1_epi32(limit as i32)),
        double: _mm256_set1_pd(limit),
        nearest: gain_limit.rounding == Rounding::Nearest,
    };
    let cos_sq = _mm256_set1_pd(cos_1deg_sq());
    let (o_bands, t_bands) = (row.reference, row.distorted);
    let (mut r_bands, mut a_bands) = (row.restored, row.additive);
    let mut j = 0;
    while j < n {
        let len = (n - j).min(LANES);
        let o = o_bands.map(|b| load(&b[j..j + len]));
        let t = t_bands.map(|b| load(&b[j..j + len]));
        let aligned = within_1deg(o, t, cos_sq);
        for (theta, (r_band, a_band)) in r_bands.iter_mut().zip(&mut a_bands).enumerate() {
            // SAFETY: AVX2, as this function.
            let r = unsafe { restore(o[theta], t[theta], aligned, gain) };
            store(&mut r_band[j..j + len], r);
            store(&mut a_band[j..j + len], _mm256_sub_epi32(t[theta], r));
        }
        j += len;
    }
}

/// Up to eight coefficients, widened to 32 bits (lanes past them 0).
#[target_feature(enable = "avx2")]
fn load(values: &[i16]) -> __m256i {
    if let Ok(whole) = <&[i16; LANES]>::try_from(values) {
        // SAFETY: eight values.
        return _mm256_cvtepi16_epi32(unsafe { _mm_loadu_si128(whole.as_ptr().cast()) });
    }
    let mut lanes = [0i16; LANES];
    lanes[..values.len()].copy_from_slice(values);
    // SAFETY: eight values.
    _mm256_cvtepi16_epi32(unsafe { _mm_loadu_si128(lanes.as_ptr().cast()) })
}

/// Stores the low 16 bits of the first `out.len()` lanes (`as i16`).
#[target_feature(enable = "avx2")]
fn store(out: &mut [i16], v: __m256i) {
    // The low halves of each 128-bit lane's four values, then both lanes'.
    let low = _mm256_setr_epi8(
        0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 4, 5, 8, 9, 12, 13, -1, -1,
        -1, -1, -1, -1, -1, -1,
    );
    let packed = _mm256_permute4x64_epi64::<0b1000>(_mm256_shuffle_epi8(v, low));
    let packed = _mm256_castsi256_si128(packed);
    if let Ok(whole) = <&mut [i16; LANES]>::try_from(&mut *out) {
        // SAFETY: eight values.
        return unsafe { _mm_storeu_si128(whole.as_mut_ptr().cast(), packed) };
    }
    let mut lanes = [0i16; LANES];
    // SAFETY: eight values.
    unsafe { _mm_storeu_si128(lanes.as_mut_ptr().cast(), packed) };
    out.copy_from_slice(&lanes[..out.len()]);
}

/// The float of a sum of two 16-bit products: every value fits 32 bits
/// but +2^31 (both products (-2^15)^2), which wraps to i32::MIN and is
/// set back (a sum's true minimum is -2^31 + 2^16).
#[target_feature(enable = "avx2")]
fn pair_sum_to_float(sum: __m256i) -> __m256 {
    let wrapped = _mm256_castsi256_ps(_mm256_cmpeq_epi32(sum, _mm256_set1_epi32(i32::MIN)));
    _mm256_blendv_ps(
        _mm256_cvtepi32_ps(sum),
        _mm256_set1_ps(2_147_483_648.0),
        wrapped,
    )
}

/// `decouple::within_1deg` of the (h, v) vectors of `o` and `t`, as
/// `decouple_avx512::within_1deg`: all bits of a lane set where aligned.
#[target_feature(enable = "avx2")]
fn within_1deg(o: [__m256i; 3], t: [__m256i; 3], cos_sq: __m256d) -> __m256i {
    // (h, v) as the two 16-bit halves of each lane, for pairwise products.
    let pair = |h, v| _mm256_blend_epi16::<0xaa>(h, _mm256_slli_epi32::<16>(v));
    let (op, tp) = (pair(o[0], o[1]), pair(t[0], t[1]));
    let dot = pair_sum_to_float(_mm256_madd_epi16(op, tp));
    let o_mag = pair_sum_to_float(_mm256_madd_epi16(op, op));
    let t_mag = pair_sum_to_float(_mm256_madd_epi16(tp, tp));
    let non_negative = _mm256_cmp_ps::<_CMP_GE_OQ>(dot, _mm256_setzero_ps());
    let low = |x: __m256| _mm256_cvtps_pd(_mm256_castps256_ps128(x));
    let high = |x: __m256| _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(x));
    let close = |d: __m256d, o: __m256d, t: __m256d| {
        let c = _mm256_cmp_pd::<_CMP_GE_OQ>(
            _mm256_mul_pd(d, d),
            _mm256_mul_pd(_mm256_mul_pd(cos_sq, o), t),
        );
        _mm256_movemask_pd(c)
    };
    let bits =
        close(low(dot), low(o_mag), low(t_mag)) | close(high(dot), high(o_mag), high(t_mag)) << 4;
    let select = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    let close = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(bits), select), select);
    _mm256_and_si256(_mm256_castps_si256(non_negative), close)
}

/// `decouple::restore_fine` of one orientation: the restored coefficient
/// (before its `as i16`, which the store does).
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
unsafe fn restore(o: __m256i, t: __m256i, aligned: __m256i, gain: Gain) -> __m256i {
    let zero = _mm256_setzero_si256();
    let negative = _mm256_cmpgt_epi32(zero, o);
    let is_zero = _mm256_cmpeq_epi32(o, zero);
    // R = trunc(2^30 / |o|) from libvmaf's table (0 at o = 0, where the
    // restored coefficient is 0 whatever the ratio), and t with o's sign
    // taken out: the ratio is R t'.
    // SAFETY: |o| <= 32768, within the table.
    let recip =
        unsafe { _mm256_i32gather_epi32::<4>(RECIPROCAL_Q30.as_ptr().cast(), _mm256_abs_epi32(o)) };
    let t_unsigned = _mm256_blendv_epi8(t, _mm256_sub_epi32(zero, t), negative);
    // (R t' + 2^14) >> 15 with R = Rh 2^15 + Rl: Rh <= 2^15, Rl < 2^15 and
    // |t'| <= 2^15 keep both products within 2^30.
    let whole = _mm256_mullo_epi32(_mm256_srli_epi32::<15>(recip), t_unsigned);
    let part = _mm256_mullo_epi32(
        _mm256_and_si256(recip, _mm256_set1_epi32(0x7fff)),
        t_unsigned,
    );
    let part = _mm256_srai_epi32::<15>(_mm256_add_epi32(part, _mm256_set1_epi32(16384)));
    let k = _mm256_min_epi32(
        _mm256_max_epi32(_mm256_add_epi32(whole, part), zero),
        _mm256_set1_epi32(32768),
    );
    // |k o| <= 2^30.
    let rst = _mm256_srai_epi32::<15>(_mm256_add_epi32(
        _mm256_mullo_epi32(k, o),
        _mm256_set1_epi32(16384),
    ));
    // The gain applies to aligned pairs with k > 0 and o != 0; there rst and
    // t have o's sign, so rounding before the clamp to t (an integer) is
    // the same as after it.
    let boosted = match gain.whole {
        Some(g) => _mm256_mullo_epi32(rst, g),
        None => {
            let scaled = |x: __m128i| {
                let product = _mm256_mul_pd(_mm256_cvtepi32_pd(x), gain.double);
                if gain.nearest {
                    _mm256_cvttpd_epi32(_mm256_round_pd::<
                        { _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC },
                    >(product))
                } else {
                    _mm256_cvttpd_epi32(product)
                }
            };
            let low = scaled(_mm256_castsi256_si128(rst));
            let high = scaled(_mm256_extracti128_si256::<1>(rst));
            _mm256_set_m128i(high, low)
        }
    };
    let limited = _mm256_blendv_epi8(
        _mm256_min_epi32(boosted, t),
        _mm256_max_epi32(boosted, t),
        negative,
    );
    let gains = _mm256_and_si256(_mm256_cmpgt_epi32(k, zero), aligned);
    let applies = _mm256_andnot_si256(is_zero, gains);
    _mm256_blendv_epi8(rst, limited, applies)
}
