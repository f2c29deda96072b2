//! The per-pixel VIF statistic of `stats`, eight pixels at a time with AVX2
//! intrinsics: the same operations, so the same results
//! (`stats::ScaleSums::add_block` is the reference).
//!
//! The logs' arguments are split into mantissa and shift with exact
//! conversions (a 16-bit integer to single precision, an integer below
//! 2^52 to double), the table is read with gathers, and the terms are
//! summed per lane in 64 bits.
//!
//! Flat pixels (`sigma1_sq < sigma_nsq`) only add their `sigma2_sq` and a
//! count; the others' moments are packed (`vpermd` by a table of lane
//! orders, AVX2 having no compress instruction) into a queue in memory,
//! and the costly part (logs, division, conversions) runs on whole
//! vectors of it, a few hundred pixels at a time: no lane of it is spent
//! on a flat pixel, and no branch depends on how many were packed. Every
//! term is an integer summed in 64 bits, so the grouping does not change
//! the sums (ADR 0036).

#![cfg(target_arch = "x86_64")]

use super::log2::Log2Table;
use super::stats::{ScaleSums, EPS, SIGMA_NSQ};
use std::arch::x86_64::*;

/// Per-lane partial sums; `finish` adds them up.
pub struct VecSums {
    num_log: __m256i,
    den_log: __m256i,
    num_non_log: __m256i,
    den_non_log: __m256i,
    table: *const i32,
    gain_limit: __m256d,
    /// Moments (`sigma1_sq`, `sigma2_sq`, `sigma12`) of pixels that are
    /// not flat, packed, waiting for whole vectors: the first `queued`.
    queue: [[i32; QUEUE + LANES]; 3],
    queued: usize,
}

/// Lanes of a vector.
const LANES: usize = 8;
/// Queued pixels that make the costly part run (on whole vectors).
const QUEUE: usize = 256;

/// Per 8-bit mask of kept lanes, the indices of those lanes in order, as
/// eight 4-bit fields (for `vpermd`, which packs the lanes).
const PACK: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut mask = 0;
    while mask < 256 {
        let (mut lane, mut at, mut packed) = (0, 0, 0u32);
        while lane < 8 {
            if mask & (1 << lane) != 0 {
                packed |= (lane as u32) << (4 * at);
                at += 1;
            }
            lane += 1;
        }
        table[mask] = packed;
        mask += 1;
    }
    table
};

/// `(a * b + 2^31) >> 32` of unsigned 32-bit lanes.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn product_q32(a: __m256i, b: __m256i) -> __m256i {
    let half = _mm256_set1_epi64x(1 << 31);
    let even = _mm256_add_epi64(_mm256_mul_epu32(a, b), half);
    let odd = _mm256_add_epi64(
        _mm256_mul_epu32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(b, 32)),
        half,
    );
    _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0b1010_1010)
}

/// Sign-extends the low or high four 32-bit lanes to 64 bits.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn widen<const HIGH: i32>(v: __m256i) -> __m256i {
    _mm256_cvtepi32_epi64(_mm256_extracti128_si256::<HIGH>(v))
}

impl VecSums {
    pub fn new(log2: &Log2Table, gain_limit: f64) -> Self {
        // SAFETY: plain register set-up; the callers run on AVX2 CPUs, and
        // these are SSE2/AVX instructions available wherever AVX2 is.
        unsafe {
            Self {
                num_log: _mm256_setzero_si256(),
                den_log: _mm256_setzero_si256(),
                num_non_log: _mm256_setzero_si256(),
                den_non_log: _mm256_setzero_si256(),
                table: log2.padded_entries().as_ptr().cast(),
                gain_limit: _mm256_set1_pd(gain_limit),
                queue: [[0; QUEUE + LANES]; 3],
                queued: 0,
            }
        }
    }

    /// `log2(v) * 2048` of 32-bit lanes `2^16 <= v < 2^32` (others give
    /// meaningless values, read inside the table).
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn log2_u32(&self, v: __m256i) -> __m256i {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            // floor(log2(v >> 16)) from the exponent of its exact float.
            let top = _mm256_cvtepi32_ps(_mm256_srli_epi32(v, 16));
            let exponent = _mm256_srli_epi32(_mm256_castps_si256(top), 23);
            let shift = _mm256_sub_epi32(exponent, _mm256_set1_epi32(127 - 1));
            let low16 = _mm256_set1_epi32(0xffff);
            let mantissa = _mm256_and_si256(_mm256_srlv_epi32(v, shift), low16);
            // SAFETY: mantissas are below 2^16 and the table has 2^16 + 1
            // 16-bit entries, so every 32-bit read stays inside it.
            let entry = _mm256_and_si256(_mm256_i32gather_epi32::<2>(self.table, mantissa), low16);
            _mm256_add_epi32(entry, _mm256_slli_epi32(shift, 11))
        }
    }

    /// `log2(v) * 2048` of integer-valued doubles `2^16 <= v < 2^52`, in
    /// 64-bit lanes (others give meaningless values, read inside the table).
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn log2_f64(&self, v: __m256d) -> __m256i {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            let bias = _mm256_set1_pd(4503599627370496.0); // 2^52
            let shift = _mm256_sub_epi64(
                _mm256_srli_epi64(_mm256_castpd_si256(v), 52),
                _mm256_set1_epi64x(1023 + 15),
            );
            let int = _mm256_sub_epi64(
                _mm256_castpd_si256(_mm256_add_pd(v, bias)),
                _mm256_castpd_si256(bias),
            );
            let mantissa =
                _mm256_and_si256(_mm256_srlv_epi64(int, shift), _mm256_set1_epi64x(0xffff));
            // SAFETY: as in `log2_u32`.
            let entry = _mm_and_si128(
                _mm256_i64gather_epi32::<2>(self.table, mantissa),
                _mm_set1_epi32(0xffff),
            );
            _mm256_add_epi64(_mm256_cvtepi32_epi64(entry), _mm256_slli_epi64(shift, 11))
        }
    }

    /// Adds eight pixels' moments (as `stats::MomentBlock` holds them).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub unsafe fn add(
        &mut self,
        mu1: __m256i,
        mu2: __m256i,
        xx: __m256i,
        yy: __m256i,
        xy: __m256i,
    ) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            let zero = _mm256_setzero_si256();
            let nsq = _mm256_set1_epi32(SIGMA_NSQ);
            let sigma1_sq = _mm256_sub_epi32(xx, product_q32(mu1, mu1));
            let sigma2_sq = _mm256_max_epi32(_mm256_sub_epi32(yy, product_q32(mu2, mu2)), zero);
            let sigma12 = _mm256_sub_epi32(xy, product_q32(mu1, mu2));

            let flat = _mm256_cmpgt_epi32(nsq, sigma1_sq);
            let non_log = _mm256_and_si256(sigma2_sq, flat);
            self.num_non_log = _mm256_add_epi64(
                self.num_non_log,
                _mm256_add_epi64(widen::<0>(non_log), widen::<1>(non_log)),
            );
            self.den_non_log = _mm256_sub_epi64(
                self.den_non_log,
                _mm256_add_epi64(widen::<0>(flat), widen::<1>(flat)),
            );
            let kept = !_mm256_movemask_ps(_mm256_castsi256_ps(flat)) as usize & 0xff;
            if kept == 0 {
                return;
            }
            let fields = _mm256_srlv_epi32(
                _mm256_set1_epi32(PACK[kept] as i32),
                _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28),
            );
            let order = _mm256_and_si256(fields, _mm256_set1_epi32(0xf));
            let q = self.queued;
            for (row, v) in self.queue.iter_mut().zip([sigma1_sq, sigma2_sq, sigma12]) {
                // SAFETY: q < QUEUE, and a row holds QUEUE + LANES.
                _mm256_storeu_si256(
                    row.as_mut_ptr().add(q).cast(),
                    _mm256_permutevar8x32_epi32(v, order),
                );
            }
            self.queued = q + kept.count_ones() as usize;
            if self.queued >= QUEUE {
                self.flush();
            }
        }
    }

    /// Runs the costly part on the queue's whole vectors; the rest stay.
    #[inline(never)]
    #[target_feature(enable = "avx2")]
    fn flush(&mut self) {
        let whole = self.queued / LANES * LANES;
        let all = _mm256_set1_epi32(-1);
        for at in (0..whole).step_by(LANES) {
            // SAFETY: at + LANES <= queued <= QUEUE + LANES.
            let [s1, s2, s12] = [0, 1, 2]
                .map(|r| unsafe { _mm256_loadu_si256(self.queue[r].as_ptr().add(at).cast()) });
            // SAFETY: AVX2, as this function.
            unsafe { self.add_kept(s1, s2, s12, all) };
        }
        let rest = self.queued - whole;
        for row in self.queue.iter_mut() {
            row.copy_within(whole..whole + rest, 0);
        }
        self.queued = rest;
    }

    /// The log terms of the pixels in the lanes of `valid` (all ones or
    /// zero), none of them flat.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn add_kept(
        &mut self,
        sigma1_sq: __m256i,
        sigma2_sq: __m256i,
        sigma12: __m256i,
        valid: __m256i,
    ) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            let zero = _mm256_setzero_si256();
            let nsq = _mm256_set1_epi32(SIGMA_NSQ);
            let positive = _mm256_and_si256(
                _mm256_cmpgt_epi32(sigma12, zero),
                _mm256_cmpgt_epi32(sigma2_sq, zero),
            );
            let has_gain = _mm256_and_si256(valid, positive);
            let den_log = self.log2_u32(_mm256_add_epi32(sigma1_sq, nsq));
            let den = _mm256_and_si256(
                valid,
                _mm256_sub_epi32(den_log, _mm256_set1_epi32(2048 * 17)),
            );

            // The gain and the noise left after it, in double precision.
            let halves = |v: __m256i| {
                (
                    _mm256_cvtepi32_pd(_mm256_castsi256_si128(v)),
                    _mm256_cvtepi32_pd(_mm256_extracti128_si256::<1>(v)),
                )
            };
            let (s1, s2, s12) = (halves(sigma1_sq), halves(sigma2_sq), halves(sigma12));
            let eps = _mm256_set1_pd(EPS);
            let gain = |s1, s12| _mm256_div_pd(s12, _mm256_add_pd(s1, eps));
            let g = (gain(s1.0, s12.0), gain(s1.1, s12.1));
            // Out-of-range values give i32::MIN, as in C; the clamp makes it 0.
            let sv = |s2, g, s12| _mm256_cvttpd_epi32(_mm256_sub_pd(s2, _mm256_mul_pd(g, s12)));
            let sv_sq = _mm256_max_epi32(
                _mm256_set_m128i(sv(s2.1, g.1, s12.1), sv(s2.0, g.0, s12.0)),
                zero,
            );
            let noise_log = self.log2_u32(_mm256_add_epi32(sv_sq, nsq));
            let noise = halves(sv_sq);

            let num_arg = |g, s1, noise| {
                let g = _mm256_min_pd(g, self.gain_limit);
                let x = _mm256_mul_pd(_mm256_mul_pd(g, g), s1);
                let t = _mm256_round_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(x);
                _mm256_add_pd(
                    t,
                    _mm256_add_pd(noise, _mm256_set1_pd(f64::from(SIGMA_NSQ))),
                )
            };
            let num_log = (
                self.log2_f64(num_arg(g.0, s1.0, noise.0)),
                self.log2_f64(num_arg(g.1, s1.1, noise.1)),
            );
            let num = (
                _mm256_and_si256(
                    _mm256_sub_epi64(num_log.0, widen::<0>(noise_log)),
                    widen::<0>(has_gain),
                ),
                _mm256_and_si256(
                    _mm256_sub_epi64(num_log.1, widen::<1>(noise_log)),
                    widen::<1>(has_gain),
                ),
            );
            self.num_log = _mm256_add_epi64(self.num_log, _mm256_add_epi64(num.0, num.1));
            self.den_log = _mm256_add_epi64(
                self.den_log,
                _mm256_add_epi64(widen::<0>(den), widen::<1>(den)),
            );
        }
    }

    /// Adds sixteen pixels given as two blocks of eight (`[mu1, mu2, xx,
    /// yy, xy]`).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub unsafe fn add16(&mut self, low: [__m256i; 5], high: [__m256i; 5]) {
        for [mu1, mu2, xx, yy, xy] in [low, high] {
            // SAFETY: AVX2, as this function.
            unsafe { self.add(mu1, mu2, xx, yy, xy) };
        }
    }

    /// Adds the lanes' sums into `sums`.
    pub fn finish(&mut self, sums: &mut ScaleSums) {
        // SAFETY: the sums were made on an AVX2 CPU (`add`).
        unsafe {
            self.flush();
            if self.queued > 0 {
                let [s1, s2, s12] =
                    [0, 1, 2].map(|r| _mm256_loadu_si256(self.queue[r].as_ptr().cast()));
                let lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
                let valid = _mm256_cmpgt_epi32(_mm256_set1_epi32(self.queued as i32), lane);
                self.add_kept(s1, s2, s12, valid);
                self.queued = 0;
            }
        }
        let total = |v: __m256i| {
            let mut lanes = [0i64; 4];
            // SAFETY: an unaligned store of a 256-bit value into 32 bytes.
            unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), v) };
            lanes.iter().sum::<i64>()
        };
        sums.add_totals(
            total(self.num_log),
            total(self.den_log),
            total(self.num_non_log),
            total(self.den_non_log),
        );
    }
}
