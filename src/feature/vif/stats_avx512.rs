//! The per-pixel VIF statistic of `stats`, sixteen pixels at a time with
//! AVX-512: the operations of `stats_avx2` (and so of the reference,
//! `stats::ScaleSums::add_block`) on twice the lanes, so the same results.
//!
//! Flat pixels (`sigma1_sq < sigma_nsq`, a third of a typical picture)
//! only add their `sigma2_sq` and a count. The logs, the division and the
//! conversions of the others are the bulk of the cost, so those pixels'
//! moments are packed (`vpcompressd`) into a queue of registers and the
//! costly part runs on whole vectors of them: no lane of it is spent on a
//! flat pixel. Every term is an integer summed in 64 bits, so the grouping
//! does not change the sums. (`stats_avx2` queues in memory, packing with
//! a table of lane orders; here a queue in memory measured no faster than
//! the one in registers.)

#![cfg(target_arch = "x86_64")]

use super::log2::Log2Table;
use super::stats::{ScaleSums, EPS, SIGMA_NSQ};
use std::arch::x86_64::*;

/// Lanes of a vector.
const LANES: usize = 16;

/// Per-lane partial sums (eight 64-bit lanes each); `finish` adds them up.
pub struct VecSums16 {
    num_log: __m512i,
    den_log: __m512i,
    num_non_log: __m512i,
    /// Flat pixels per lane, in 32 bits: a lane counts at most one pixel
    /// per call, and a scale of the largest picture is far fewer than
    /// 2^31 calls.
    flat_count: __m512i,
    table: *const i32,
    gain_limit: __m512d,
    /// Moments (`sigma1_sq`, `sigma2_sq`, `sigma12`) of pixels that are
    /// not flat, waiting for a whole vector: the low `queued` lanes (fewer
    /// than sixteen). Kept in whole registers: a queue in memory, written
    /// at lane offsets and read whole, defeats store forwarding.
    queue: [__m512i; 3],
    queued: usize,
}

/// `(a * b + 2^31) >> 32` of unsigned 32-bit lanes.
#[inline]
#[target_feature(enable = "avx512f")]
fn product_q32(a: __m512i, b: __m512i) -> __m512i {
    let half = _mm512_set1_epi64(1 << 31);
    let even = _mm512_add_epi64(_mm512_mul_epu32(a, b), half);
    let odd = _mm512_add_epi64(
        _mm512_mul_epu32(_mm512_srli_epi64::<32>(a), _mm512_srli_epi64::<32>(b)),
        half,
    );
    _mm512_mask_blend_epi32(0xaaaa, _mm512_srli_epi64::<32>(even), odd)
}

/// The sum of the low and high eight 32-bit lanes, sign-extended to 64 bits.
#[inline]
#[target_feature(enable = "avx512f")]
fn widen_sum(v: __m512i) -> __m512i {
    _mm512_add_epi64(
        _mm512_cvtepi32_epi64(half::<0>(v)),
        _mm512_cvtepi32_epi64(half::<1>(v)),
    )
}

/// The low or high eight 32-bit lanes.
#[inline]
#[target_feature(enable = "avx512f")]
fn half<const HIGH: i32>(v: __m512i) -> __m256i {
    _mm512_extracti64x4_epi64::<HIGH>(v)
}

impl VecSums16 {
    /// # Safety
    /// The CPU must support AVX-512 F.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn new(log2: &Log2Table, gain_limit: f64) -> Self {
        Self {
            num_log: _mm512_setzero_si512(),
            den_log: _mm512_setzero_si512(),
            num_non_log: _mm512_setzero_si512(),
            flat_count: _mm512_setzero_si512(),
            table: log2.padded_entries().as_ptr().cast(),
            gain_limit: _mm512_set1_pd(gain_limit),
            queue: [_mm512_setzero_si512(); 3],
            queued: 0,
        }
    }

    /// `log2(v) * 2048` of 32-bit lanes `2^16 <= v < 2^32` (others give
    /// meaningless values, read inside the table).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn log2_u32(&self, v: __m512i) -> __m512i {
        // floor(log2(v >> 16)) from the exponent of its exact float.
        let top = _mm512_cvtepi32_ps(_mm512_srli_epi32::<16>(v));
        let exponent = _mm512_srli_epi32::<23>(_mm512_castps_si512(top));
        let shift = _mm512_sub_epi32(exponent, _mm512_set1_epi32(127 - 1));
        let low16 = _mm512_set1_epi32(0xffff);
        let mantissa = _mm512_and_si512(_mm512_srlv_epi32(v, shift), low16);
        // SAFETY: mantissas are below 2^16 and the table has 2^16 + 1
        // 16-bit entries, so every 32-bit read stays inside it.
        let entry = unsafe { _mm512_i32gather_epi32::<2>(mantissa, self.table) };
        _mm512_add_epi32(
            _mm512_and_si512(entry, low16),
            _mm512_slli_epi32::<11>(shift),
        )
    }

    /// `log2(v) * 2048` of integer-valued doubles `2^16 <= v < 2^52`, in
    /// 64-bit lanes (others give meaningless values, read inside the table).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn log2_f64(&self, v: __m512d) -> __m512i {
        let bias = _mm512_set1_pd(4503599627370496.0); // 2^52
        let shift = _mm512_sub_epi64(
            _mm512_srli_epi64::<52>(_mm512_castpd_si512(v)),
            _mm512_set1_epi64(1023 + 15),
        );
        let int = _mm512_sub_epi64(
            _mm512_castpd_si512(_mm512_add_pd(v, bias)),
            _mm512_castpd_si512(bias),
        );
        let mantissa = _mm512_and_si512(_mm512_srlv_epi64(int, shift), _mm512_set1_epi64(0xffff));
        // SAFETY: as in `log2_u32`.
        let entry = unsafe { _mm512_i64gather_epi32::<2>(mantissa, self.table) };
        let entry = _mm256_and_si256(entry, _mm256_set1_epi32(0xffff));
        _mm512_add_epi64(_mm512_cvtepi32_epi64(entry), _mm512_slli_epi64::<11>(shift))
    }

    /// Adds sixteen pixels' moments (as `stats::MomentBlock` holds them).
    ///
    /// # Safety
    /// The CPU must support AVX-512 F.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub unsafe fn add(
        &mut self,
        mu1: __m512i,
        mu2: __m512i,
        xx: __m512i,
        yy: __m512i,
        xy: __m512i,
    ) {
        let zero = _mm512_setzero_si512();
        let nsq = _mm512_set1_epi32(SIGMA_NSQ);
        let sigma1_sq = _mm512_sub_epi32(xx, product_q32(mu1, mu1));
        let sigma2_sq = _mm512_max_epi32(_mm512_sub_epi32(yy, product_q32(mu2, mu2)), zero);
        let sigma12 = _mm512_sub_epi32(xy, product_q32(mu1, mu2));

        let flat: __mmask16 = _mm512_cmpgt_epi32_mask(nsq, sigma1_sq);
        let non_log = _mm512_maskz_mov_epi32(flat, sigma2_sq);
        self.num_non_log = _mm512_add_epi64(self.num_non_log, widen_sum(non_log));
        self.flat_count =
            _mm512_mask_add_epi32(self.flat_count, flat, self.flat_count, _mm512_set1_epi32(1));
        if flat == 0xffff {
            return;
        }
        let kept = !flat;
        let (q, k) = (self.queued, kept.count_ones() as usize);
        let lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        // Lane l >= q of the queue takes packed lane l - q.
        let into = _mm512_sub_epi32(lane, _mm512_set1_epi32(q as i32));
        let above = (0xffffu32 << q) as __mmask16;
        let packed = [sigma1_sq, sigma2_sq, sigma12].map(|v| _mm512_maskz_compress_epi32(kept, v));
        for (queue, &p) in self.queue.iter_mut().zip(&packed) {
            *queue = _mm512_mask_permutexvar_epi32(*queue, above, into, p);
        }
        if q + k < LANES {
            self.queued = q + k;
            return;
        }
        let [s1, s2, s12] = self.queue;
        self.add_kept(s1, s2, s12, 0xffff);
        // The packed lanes that did not fit, from lane 16 - q on, start
        // the queue again.
        let from = _mm512_add_epi32(lane, _mm512_set1_epi32((LANES - q) as i32));
        for (queue, &p) in self.queue.iter_mut().zip(&packed) {
            *queue = _mm512_permutexvar_epi32(from, p);
        }
        self.queued = q + k - LANES;
    }

    /// The logs of the pixels of lanes `valid`, none of them flat.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn add_kept(
        &mut self,
        sigma1_sq: __m512i,
        sigma2_sq: __m512i,
        sigma12: __m512i,
        valid: __mmask16,
    ) {
        let zero = _mm512_setzero_si512();
        let nsq = _mm512_set1_epi32(SIGMA_NSQ);
        let positive =
            _mm512_cmpgt_epi32_mask(sigma12, zero) & _mm512_cmpgt_epi32_mask(sigma2_sq, zero);
        let has_gain = valid & positive;

        let den_log = self.log2_u32(_mm512_add_epi32(sigma1_sq, nsq));
        let den = _mm512_maskz_sub_epi32(valid, den_log, _mm512_set1_epi32(2048 * 17));

        // The gain and the noise left after it, in double precision, eight
        // lanes at a time.
        let eps = _mm512_set1_pd(EPS);
        let doubles = |v: __m512i| {
            (
                _mm512_cvtepi32_pd(half::<0>(v)),
                _mm512_cvtepi32_pd(half::<1>(v)),
            )
        };
        let (s1, s2, s12) = (doubles(sigma1_sq), doubles(sigma2_sq), doubles(sigma12));
        let gain = |s1, s12| _mm512_div_pd(s12, _mm512_add_pd(s1, eps));
        let g = (gain(s1.0, s12.0), gain(s1.1, s12.1));
        // Out-of-range values give i32::MIN, as in C; the clamp makes it 0.
        let sv = |s2, g, s12| _mm512_cvttpd_epi32(_mm512_sub_pd(s2, _mm512_mul_pd(g, s12)));
        let sv_sq = _mm512_max_epi32(
            _mm512_inserti64x4::<1>(
                _mm512_castsi256_si512(sv(s2.0, g.0, s12.0)),
                sv(s2.1, g.1, s12.1),
            ),
            zero,
        );
        let noise_log = self.log2_u32(_mm512_add_epi32(sv_sq, nsq));
        let noise = doubles(sv_sq);

        let num_arg = |g, s1, noise| {
            let g = _mm512_min_pd(g, self.gain_limit);
            let x = _mm512_mul_pd(_mm512_mul_pd(g, g), s1);
            let t = _mm512_roundscale_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(x);
            _mm512_add_pd(
                t,
                _mm512_add_pd(noise, _mm512_set1_pd(f64::from(SIGMA_NSQ))),
            )
        };
        let num = (
            _mm512_sub_epi64(
                self.log2_f64(num_arg(g.0, s1.0, noise.0)),
                _mm512_cvtepi32_epi64(half::<0>(noise_log)),
            ),
            _mm512_sub_epi64(
                self.log2_f64(num_arg(g.1, s1.1, noise.1)),
                _mm512_cvtepi32_epi64(half::<1>(noise_log)),
            ),
        );
        let (gain_lo, gain_hi) = (has_gain as __mmask8, (has_gain >> 8) as __mmask8);
        self.num_log = _mm512_mask_add_epi64(self.num_log, gain_lo, self.num_log, num.0);
        self.num_log = _mm512_mask_add_epi64(self.num_log, gain_hi, self.num_log, num.1);
        self.den_log = _mm512_add_epi64(self.den_log, widen_sum(den));
    }

    /// Adds sixteen pixels given as two halves of eight lanes each (`[mu1,
    /// mu2, xx, yy, xy]`).
    ///
    /// # Safety
    /// The CPU must support AVX-512 F.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub unsafe fn add16(&mut self, low: [__m256i; 5], high: [__m256i; 5]) {
        let join = |q: usize| _mm512_inserti64x4::<1>(_mm512_castsi256_si512(low[q]), high[q]);
        // SAFETY: AVX-512 F, as this function.
        unsafe { self.add(join(0), join(1), join(2), join(3), join(4)) };
    }

    /// Adds the lanes' sums into `sums`.
    ///
    /// # Safety
    /// The CPU must support AVX-512 F.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn finish(&mut self, sums: &mut ScaleSums) {
        if self.queued > 0 {
            let [s1, s2, s12] = self.queue;
            self.add_kept(s1, s2, s12, ((1u32 << self.queued) - 1) as __mmask16);
            self.queued = 0;
        }
        sums.add_totals(
            _mm512_reduce_add_epi64(self.num_log),
            _mm512_reduce_add_epi64(self.den_log),
            _mm512_reduce_add_epi64(self.num_non_log),
            _mm512_reduce_add_epi64(widen_sum(self.flat_count)),
        );
    }
}
