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

use super::decouple::{cos_1deg_sq, GainLimit, Rounding, Row};
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
    nearest: bool,
}

/// A row of one decoupling as raw pointers, after checking that every
/// slice has the row's length.
struct RowPointers<C> {
    len: usize,
    reference: [*const C; 3],
    distorted: [*const C; 3],
    restored: [*mut C; 3],
    additive: [*mut C; 3],
}

impl<C> RowPointers<C> {
    fn new(row: Row<'_, C>) -> Self {
        let len = row.len();
        Self {
            len,
            reference: row.reference.map(<[C]>::as_ptr),
            distorted: row.distorted.map(<[C]>::as_ptr),
            restored: row.restored.map(<[C]>::as_mut_ptr),
            additive: row.additive.map(<[C]>::as_mut_ptr),
        }
    }

    /// The runs of at most `lanes` coefficients that cover the row: (first
    /// index, length).
    fn blocks(&self, lanes: usize) -> impl Iterator<Item = (usize, usize)> {
        let len = self.len;
        (0..len)
            .step_by(lanes)
            .map(move |j| (j, (len - j).min(lanes)))
    }
}

/// [`decouple::decouple_fine`](super::decouple::decouple_fine) with AVX-512.
///
/// # Safety
/// The CPU must have AVX-512 F, BW, DQ and VL.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
pub(super) unsafe fn decouple_fine(row: Row<'_, i16>, gain_limit: GainLimit) {
    let bands = RowPointers::new(row);
    let limit = gain_limit.limit;
    let gain = Gain {
        whole: (limit.fract() == 0.0 && (0.0..65536.0).contains(&limit))
            .then(|| _mm512_set1_epi32(limit as i32)),
        double: _mm512_set1_pd(limit),
        nearest: gain_limit.rounding == Rounding::Nearest,
    };
    let cos_sq = _mm512_set1_pd(cos_1deg_sq());
    for (at, len) in bands.blocks(LANES) {
        let lanes = ((1u32 << len) - 1) as __mmask16;
        // SAFETY: the lanes in `lanes` lie in the row, whose slices all
        // have its length (checked by `RowPointers::new`); masked-off lanes
        // are not accessed.
        unsafe {
            let o = bands.reference.map(|p| load(p.add(at), lanes));
            let t = bands.distorted.map(|p| load(p.add(at), lanes));
            let aligned = within_1deg(o, t, cos_sq);
            for theta in 0..3 {
                let r = restore(o[theta], t[theta], aligned, gain);
                store(bands.restored[theta].add(at), lanes, r);
                store(
                    bands.additive[theta].add(at),
                    lanes,
                    _mm512_sub_epi32(t[theta], r),
                );
            }
        }
    }
}

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
    // t have o's sign, so rounding before the clamp to t (an integer) is
    // the same as after it.
    let boosted = match gain.whole {
        Some(g) => _mm512_mullo_epi32(rst, g),
        None => {
            let scaled = |x: __m256i| {
                let product = _mm512_mul_pd(_mm512_cvtepi32_pd(x), gain.double);
                if gain.nearest {
                    _mm512_cvt_roundpd_epi32::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
                        product,
                    )
                } else {
                    _mm512_cvttpd_epi32(product)
                }
            };
            let low = scaled(_mm512_castsi512_si256(rst));
            let high = scaled(_mm512_extracti64x4_epi64::<1>(rst));
            _mm512_inserti64x4::<1>(_mm512_castsi256_si512(low), high)
        }
    };
    let limited = _mm512_mask_max_epi32(_mm512_min_epi32(boosted, t), negative, boosted, t);
    let applies = aligned & nonzero & _mm512_cmpgt_epi32_mask(k, zero);
    _mm512_mask_mov_epi32(rst, applies, limited)
}

/// Coefficients per vector at scales 1-3 (64-bit lanes).
const WIDE_LANES: usize = 8;

/// [`decouple::decouple_coarse`](super::decouple::decouple_coarse) with
/// AVX-512, eight coefficients at a time in 64-bit lanes: libvmaf's int64
/// products of 32-bit values are single multiplies (`vpmuldq`), its divisor
/// shift comes from the exponent of |o| in double, the reciprocal from the
/// table and the gain in doubles, as in the portable loop.
///
/// # Safety
/// The CPU must have AVX-512 F, BW, DQ and VL.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
pub(super) unsafe fn decouple_coarse(row: Row<'_, i32>, gain_limit: GainLimit) {
    let bands = RowPointers::new(row);
    let gain = _mm512_set1_pd(gain_limit.limit);
    let nearest = gain_limit.rounding == Rounding::Nearest;
    let cos_sq = _mm512_set1_pd(cos_1deg_sq());
    for (at, len) in bands.blocks(WIDE_LANES) {
        let lanes = ((1u32 << len) - 1) as __mmask8;
        // SAFETY: as in `decouple_fine`.
        unsafe {
            let o = bands.reference.map(|p| load_wide(p.add(at), lanes));
            let t = bands.distorted.map(|p| load_wide(p.add(at), lanes));
            let aligned = within_1deg_wide(o, t, cos_sq);
            for theta in 0..3 {
                let r = restore_wide(o[theta], t[theta], aligned, gain, nearest);
                store_wide(bands.restored[theta].add(at), lanes, r);
                store_wide(
                    bands.additive[theta].add(at),
                    lanes,
                    _mm512_sub_epi64(t[theta], r),
                );
            }
        }
    }
}

/// Loads the `lanes` of 8 coefficients at `p`, widened to 64 bits.
///
/// # Safety
/// The lanes in `lanes` must be readable.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
unsafe fn load_wide(p: *const i32, lanes: __mmask8) -> __m512i {
    // SAFETY: the caller's; masked-off lanes are not read.
    _mm512_cvtepi32_epi64(unsafe { _mm256_maskz_loadu_epi32(lanes, p) })
}

/// Stores the low 32 bits of each lane in `lanes` (a wrapping `as i32`).
///
/// # Safety
/// The lanes in `lanes` must be writable.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
unsafe fn store_wide(p: *mut i32, lanes: __mmask8, v: __m512i) {
    // SAFETY: the caller's; masked-off lanes are not written.
    unsafe { _mm512_mask_cvtepi64_storeu_epi32(p.cast(), lanes, v) }
}

/// `decouple::within_1deg` at scales 1-3: libvmaf's wrapping int64 dot
/// product and squared norms, each rounded once to float.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
fn within_1deg_wide(o: [__m512i; 3], t: [__m512i; 3], cos_sq: __m512d) -> __mmask8 {
    let dot2 = |a: [__m512i; 3], b: [__m512i; 3]| {
        let sum = _mm512_add_epi64(_mm512_mul_epi32(a[0], b[0]), _mm512_mul_epi32(a[1], b[1]));
        _mm512_cvtps_pd(_mm512_cvtepi64_ps(sum))
    };
    let (dot, o_mag, t_mag) = (dot2(o, t), dot2(o, o), dot2(t, t));
    let non_negative = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(dot, _mm512_setzero_pd());
    let close = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(
        _mm512_mul_pd(dot, dot),
        _mm512_mul_pd(_mm512_mul_pd(cos_sq, o_mag), t_mag),
    );
    non_negative & close
}

/// `decouple::restore_coarse` of one orientation, in 64-bit lanes.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512dq,avx512vl")]
unsafe fn restore_wide(
    o: __m512i,
    t: __m512i,
    aligned: __mmask8,
    gain: __m512d,
    nearest: bool,
) -> __m512i {
    let zero = _mm512_setzero_si512();
    let one = _mm512_set1_epi64(1);
    let negative = _mm512_cmplt_epi64_mask(o, zero);
    let nonzero = _mm512_cmpneq_epi64_mask(o, zero);
    let abs_o = _mm512_abs_epi64(o);
    // The divisor keeps the 15 leading bits of |o| (rounded): shift =
    // floor(log2 |o|) - 14 past 2^15, the exponent of |o| as a double
    // (exact: |o| <= 2^31).
    let exponent = _mm512_cvttpd_epi64(_mm512_getexp_pd(_mm512_cvtepi64_pd(_mm512_max_epi64(
        abs_o, one,
    ))));
    let shift = _mm512_max_epi64(_mm512_sub_epi64(exponent, _mm512_set1_epi64(14)), zero);
    let half = _mm512_srli_epi64::<1>(_mm512_sllv_epi64(one, shift));
    let divisor = _mm512_srlv_epi64(_mm512_add_epi64(abs_o, half), shift);
    // SAFETY: divisor <= 32768 (|o| <= 2^31 with its 16 low bits rounded
    // off at most), within the table.
    let recip = _mm512_cvtepi32_epi64(unsafe {
        _mm512_i64gather_epi32::<4>(divisor, RECIPROCAL_Q30.as_ptr().cast())
    });
    // The signed table entry times t: R < 2^31 and t fit a signed 32-bit
    // multiply; o's sign applied to the 64-bit product (-t would overflow).
    let product = _mm512_mul_epi32(recip, t);
    let product = _mm512_mask_sub_epi64(product, negative, zero, product);
    let round = _mm512_sllv_epi64(_mm512_set1_epi64(1 << 14), shift);
    let ratio = _mm512_srav_epi64(
        _mm512_add_epi64(product, round),
        _mm512_add_epi64(shift, _mm512_set1_epi64(15)),
    );
    let k = _mm512_min_epi64(_mm512_max_epi64(ratio, zero), _mm512_set1_epi64(32768));
    // k <= 2^15 and |o| <= 2^31: one signed 32-bit multiply.
    let rst = _mm512_srai_epi64::<15>(_mm512_add_epi64(
        _mm512_mul_epi32(k, o),
        _mm512_set1_epi64(16384),
    ));
    let boosted = _mm512_mul_pd(_mm512_cvtepi64_pd(rst), gain);
    let t_f = _mm512_cvtepi64_pd(t);
    let limited = _mm512_mask_max_pd(_mm512_min_pd(boosted, t_f), negative, boosted, t_f);
    let applies = aligned & nonzero & _mm512_cmpgt_epi64_mask(k, zero);
    let limited = if nearest {
        _mm512_cvt_roundpd_epi64::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(limited)
    } else {
        _mm512_cvttpd_epi64(limited)
    };
    _mm512_mask_mov_epi64(rst, applies, limited)
}
