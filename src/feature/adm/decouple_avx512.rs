//! Scale-0 decoupling with AVX-512 (ADR 0032), sixteen coefficients at a
//! time in 32-bit lanes.
//!
//! The portable loop (`decouple::decouple_fine`) computes libvmaf's
//! reciprocal `trunc(2^30 / |o|)` by a double division and every product in
//! doubles, eight lanes at a time; here the reciprocal is gathered from
//! libvmaf's own table and every step is an exact 32-bit integer operation:
//! the Q15 ratio `(R t + 2^14) >> 15`, whose product needs 46 bits, is taken
//! in two parts, `R = Rh 2^15 + Rl`, `Rh t + ((Rl t + 2^14) >> 15)`, each
//! under 2^31. Only the 1-degree test stays in doubles (it rounds a product
//! of three floats, as libvmaf does). Same bits as the portable loop.

#![cfg(target_arch = "x86_64")]

use super::decouple::cos_1deg_sq;
use super::dwt::Bands;
use super::region::Region;
use super::tables::RECIPROCAL_Q30;
use std::arch::x86_64::*;

/// Coefficients per vector.
const LANES: usize = 16;

/// How the enhancement gain limit multiplies a restored coefficient.
#[derive(Clone, Copy)]
struct Gain {
    /// Whole gain limits (libvmaf's defaults 100 and 1 among them) multiply
    /// exactly in 32 bits: |restored| <= 2^15, gain < 2^16.
    whole: Option<__m512i>,
    double: __m512d,
}

/// [`decouple::decouple_fine`](super::decouple::decouple_fine) with AVX-512.
///
/// # Safety
/// The CPU must have AVX-512 F, BW, DQ and VL.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
pub(super) unsafe fn decouple_fine(
    reference: &Bands<i16>,
    dis: &Bands<i16>,
    region: &Region,
    gain_limit: f64,
    restored: &mut Bands<i16>,
    additive: &mut Bands<i16>,
) {
    let (w, h) = (reference.width, reference.height);
    restored.set_size(w, h);
    additive.set_size(w, h);
    assert!(region.right <= w && region.bottom <= h && region.left <= region.right);
    for band in reference.all().into_iter().chain(dis.all()) {
        assert!(band.len() >= w * h);
    }
    for band in [
        &restored.h,
        &restored.v,
        &restored.d,
        &additive.h,
        &additive.v,
        &additive.d,
    ] {
        assert!(band.len() >= w * h);
    }
    let gain = Gain {
        whole: (gain_limit.fract() == 0.0 && (0.0..65536.0).contains(&gain_limit))
            .then(|| _mm512_set1_epi32(gain_limit as i32)),
        double: _mm512_set1_pd(gain_limit),
    };
    let cos_sq = _mm512_set1_pd(cos_1deg_sq());
    let n = region.right - region.left;
    let (o, t) = (
        reference.all().map(<[i16]>::as_ptr),
        dis.all().map(<[i16]>::as_ptr),
    );
    let rst = [&mut restored.h, &mut restored.v, &mut restored.d].map(|b| b.as_mut_ptr());
    let add = [&mut additive.h, &mut additive.v, &mut additive.d].map(|b| b.as_mut_ptr());
    for i in region.top..region.bottom {
        let mut at = i * w + region.left;
        let end = at + n;
        while at < end {
            let lanes: __mmask16 = if end - at >= LANES {
                0xffff
            } else {
                (1u16 << (end - at)) - 1
            };
            // SAFETY: the lanes in `lanes` lie in row i of bands with at least
            // w * h coefficients (asserted); masked-off lanes are not accessed.
            unsafe {
                let o = o.map(|p| load(p.add(at), lanes));
                let t = t.map(|p| load(p.add(at), lanes));
                let aligned = within_1deg(o, t, cos_sq);
                for theta in 0..3 {
                    let r = restore(o[theta], t[theta], aligned, gain);
                    store(rst[theta].add(at), lanes, r);
                    store(add[theta].add(at), lanes, _mm512_sub_epi32(t[theta], r));
                }
            }
            at += LANES;
        }
    }
}

/// Loads the `lanes` of 16 coefficients at `p`, widened to 32 bits.
///
/// # Safety
/// The lanes in `lanes` must be readable.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
unsafe fn load(p: *const i16, lanes: __mmask16) -> __m512i {
    // SAFETY: the caller's; masked-off lanes are not read.
    _mm512_cvtepi16_epi32(unsafe { _mm256_maskz_loadu_epi16(lanes, p) })
}

/// Stores the low 16 bits of each lane in `lanes` (`as i16`).
///
/// # Safety
/// The lanes in `lanes` must be writable.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
unsafe fn store(p: *mut i16, lanes: __mmask16, v: __m512i) {
    // SAFETY: the caller's; masked-off lanes are not written.
    unsafe { _mm512_mask_cvtepi32_storeu_epi16(p.cast(), lanes, v) }
}

/// `decouple::within_1deg` of the (h, v) vectors of `o` and `t`: the dot
/// product and squared norms are exact integers rounded once to float, the
/// comparison is in doubles. The shared 1/4096 scale of libvmaf's
/// operands is left out: scaling by a power of two changes no rounding.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
fn within_1deg(o: [__m512i; 3], t: [__m512i; 3], cos_sq: __m512d) -> __mmask16 {
    // (h, v) as the two 16-bit halves of each lane, for pairwise products.
    let pair = |h, v| _mm512_mask_blend_epi16(0xaaaa_aaaa, h, _mm512_slli_epi32::<16>(v));
    let (op, tp) = (pair(o[0], o[1]), pair(t[0], t[1]));
    let dot = _mm512_madd_epi16(op, tp);
    // A sum of two 16-bit products fits in 32 bits except +2^31 (both
    // products (-2^15)^2), which wraps to i32::MIN: the norms are read
    // unsigned, the dot product's wrapped lanes set back (its true minimum
    // is -2^31 + 2^16).
    let wrapped = _mm512_cmpeq_epi32_mask(dot, _mm512_set1_epi32(i32::MIN));
    let dot = _mm512_mask_mov_ps(
        _mm512_cvtepi32_ps(dot),
        wrapped,
        _mm512_set1_ps(2_147_483_648.0),
    );
    let o_mag = _mm512_cvtepu32_ps(_mm512_madd_epi16(op, op));
    let t_mag = _mm512_cvtepu32_ps(_mm512_madd_epi16(tp, tp));
    let non_negative = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(dot, _mm512_setzero_ps());
    let low = |x: __m512| _mm512_cvtps_pd(_mm512_castps512_ps256(x));
    let high = |x: __m512| _mm512_cvtps_pd(_mm512_extractf32x8_ps::<1>(x));
    let close = |d: __m512d, o: __m512d, t: __m512d| {
        _mm512_cmp_pd_mask::<_CMP_GE_OQ>(
            _mm512_mul_pd(d, d),
            _mm512_mul_pd(_mm512_mul_pd(cos_sq, o), t),
        )
    };
    let close_low = close(low(dot), low(o_mag), low(t_mag)) as u16;
    let close_high = close(high(dot), high(o_mag), high(t_mag)) as u16;
    non_negative & (close_low | close_high << 8)
}

/// `decouple::restore_fine` of one orientation: the restored coefficient
/// (before its `as i16`, which the store does).
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
unsafe fn restore(o: __m512i, t: __m512i, aligned: __mmask16, gain: Gain) -> __m512i {
    let zero = _mm512_setzero_si512();
    let negative = _mm512_cmplt_epi32_mask(o, zero);
    let nonzero = _mm512_cmpneq_epi32_mask(o, zero);
    // R = trunc(2^30 / |o|) from libvmaf's table (0 at o = 0, where the
    // restored coefficient is 0 whatever the ratio), and t with o's sign
    // taken out: the ratio is R t'.
    // SAFETY: |o| <= 32768, within the table.
    let recip =
        unsafe { _mm512_i32gather_epi32::<4>(_mm512_abs_epi32(o), RECIPROCAL_Q30.as_ptr().cast()) };
    let t_unsigned = _mm512_mask_sub_epi32(t, negative, zero, t);
    // (R t' + 2^14) >> 15 with R = Rh 2^15 + Rl: Rh <= 2^15, Rl < 2^15 and
    // |t'| <= 2^15 keep both products within 2^30.
    let whole = _mm512_mullo_epi32(_mm512_srli_epi32::<15>(recip), t_unsigned);
    let part = _mm512_mullo_epi32(
        _mm512_and_si512(recip, _mm512_set1_epi32(0x7fff)),
        t_unsigned,
    );
    let part = _mm512_srai_epi32::<15>(_mm512_add_epi32(part, _mm512_set1_epi32(16384)));
    let k = _mm512_min_epi32(
        _mm512_max_epi32(_mm512_add_epi32(whole, part), zero),
        _mm512_set1_epi32(32768),
    );
    // |k o| <= 2^30.
    let rst = _mm512_srai_epi32::<15>(_mm512_add_epi32(
        _mm512_mullo_epi32(k, o),
        _mm512_set1_epi32(16384),
    ));
    // The gain applies to aligned pairs with k > 0 and o != 0; there rst and
    // t have o's sign, so truncating before the clamp to t is the same as
    // after it.
    let boosted = match gain.whole {
        Some(g) => _mm512_mullo_epi32(rst, g),
        None => {
            let scaled =
                |x: __m256i| _mm512_cvttpd_epi32(_mm512_mul_pd(_mm512_cvtepi32_pd(x), gain.double));
            let low = scaled(_mm512_castsi512_si256(rst));
            let high = scaled(_mm512_extracti64x4_epi64::<1>(rst));
            _mm512_inserti64x4::<1>(_mm512_castsi256_si512(low), high)
        }
    };
    let limited = _mm512_mask_max_epi32(_mm512_min_epi32(boosted, t), negative, boosted, t);
    let applies = aligned & nonzero & _mm512_cmpgt_epi32_mask(k, zero);
    _mm512_mask_mov_epi32(rst, applies, limited)
}
