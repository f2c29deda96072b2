//! The per-pixel VIF statistic and its per-scale sums, in libvmaf's fixed
//! point: log terms in units of 1/2048, integer sums, a double combination
//! narrowed to float at the end.

use super::log2::Log2Table;

/// The model's noise variance 2.0 in Q16.
pub(super) const SIGMA_NSQ: i32 = 65536 << 1;
/// libvmaf's epsilon for the gain's denominator (Q16 of 1e-10).
pub(super) const EPS: f64 = 65536.0 * 1.0e-10;

/// Sums over one scale's pixels; `finish` turns them into numerator and
/// denominator.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ScaleSums {
    num_log: i64,
    den_log: i64,
    num_non_log: i64,
    den_non_log: i64,
}

/// Local (filtered) moments of `B` neighbouring pixels, as libvmaf's
/// horizontal pass leaves them: the means `mu` (Q16 of 16-bit-scaled
/// samples) and the second moments `E[x²]`, `E[y²]`, `E[xy]` (Q0 of the
/// squared 16-bit scale).
#[derive(Debug, Clone, Copy)]
pub struct MomentBlock<const B: usize> {
    pub mu1: [u32; B],
    pub mu2: [u32; B],
    pub xx: [u32; B],
    pub yy: [u32; B],
    pub xy: [u32; B],
}

/// `x` truncated to an integer, for `0 <= x < 2^52` (other values give
/// meaningless results): C's `(int64_t)x` there, by way of the 2^52 bias
/// so that it vectorizes.
#[inline(always)]
fn truncate_small(x: f64) -> u64 {
    const BIAS: f64 = 4503599627370496.0; // 2^52
    (x.trunc() + BIAS).to_bits().wrapping_sub(BIAS.to_bits())
}

#[inline(always)]
fn product_q32(a: u32, b: u32) -> u32 {
    ((u64::from(a) * u64::from(b) + (1 << 31)) >> 32) as u32
}

impl ScaleSums {
    /// Adds `B` pixels.
    ///
    /// Every term is computed for every pixel and the unused ones masked
    /// out, so there are no data-dependent branches and the loops
    /// vectorize; the values masked out may be meaningless but cannot trap.
    /// The wrapping subtractions and the casts reproduce libvmaf's
    /// unsigned-to-signed conversions.
    #[inline(always)]
    pub fn add_block<const B: usize>(
        &mut self,
        m: &MomentBlock<B>,
        log2: &Log2Table,
        gain_limit: f64,
    ) {
        let mut sigma1_sq = [0i32; B];
        let mut sigma2_sq = [0i32; B];
        let mut sigma12 = [0i32; B];
        for l in 0..B {
            sigma1_sq[l] = m.xx[l].wrapping_sub(product_q32(m.mu1[l], m.mu1[l])) as i32;
            sigma2_sq[l] = (m.yy[l].wrapping_sub(product_q32(m.mu2[l], m.mu2[l])) as i32).max(0);
            sigma12[l] = m.xy[l].wrapping_sub(product_q32(m.mu1[l], m.mu2[l])) as i32;
        }

        // log2(1 + sigma1_sq / 2) = log2(2 + sigma1_sq) - log2(2), and
        // log2(1 + g² sigma1_sq / (sv_sq + 2)) as a difference of logs: the
        // arguments of the three logs.
        let mut den_arg = [0u64; B];
        let mut num_arg = [0u64; B];
        let mut noise = [0u64; B];
        for l in 0..B {
            den_arg[l] = u64::from(SIGMA_NSQ.wrapping_add(sigma1_sq[l]) as u32);
            let (s1, s2, s12) = (
                f64::from(sigma1_sq[l]),
                f64::from(sigma2_sq[l]),
                f64::from(sigma12[l]),
            );
            let g = s12 / (s1 + EPS);
            // Out-of-range values saturate here where x86 gives i32::MIN;
            // both clamp to 0.
            let sv_sq = ((s2 - g * s12) as i32).max(0);
            let g = if g < gain_limit { g } else { gain_limit };
            noise[l] = u64::from(sv_sq.wrapping_add(SIGMA_NSQ) as u32);
            num_arg[l] = truncate_small(g * g * s1).wrapping_add(noise[l]);
        }
        let den_log = log2.log2(&den_arg);
        let num_log = log2.log2(&num_arg);
        let noise_log = log2.log2(&noise);

        for l in 0..B {
            // A reference flatter than the noise: the numerator is
            // 1 - sigma2_sq * const, kept as a count and a separate sum.
            let flat = sigma1_sq[l] < SIGMA_NSQ;
            let has_gain = !flat & (sigma12[l] > 0) & (sigma2_sq[l] > 0);
            let den = den_log[l] - 2048 * 17;
            let num = num_log[l] - noise_log[l];
            self.den_log += i64::from(den & -i32::from(!flat));
            self.num_log += i64::from(num & -i32::from(has_gain));
            self.num_non_log += i64::from(sigma2_sq[l] & -i32::from(flat));
            self.den_non_log += i64::from(flat);
        }
    }

    /// Adds sums taken elsewhere (by the vector code).
    pub fn add_totals(&mut self, num_log: i64, den_log: i64, num_non_log: i64, den_non_log: i64) {
        self.num_log += num_log;
        self.den_log += den_log;
        self.num_non_log += num_non_log;
        self.den_non_log += den_non_log;
    }

    /// Numerator and denominator of the scale, as libvmaf stores them
    /// (single precision).
    pub fn finish(&self) -> (f32, f32) {
        let num = self.num_log as f64 / 2048.0
            + (self.den_non_log as f64 - (self.num_non_log as f64 / 16384.0) / 65025.0);
        let den = self.den_log as f64 / 2048.0 + self.den_non_log as f64;
        (num as f32, den as f32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::fuzz::Rng;

    /// Moments of `n` pixels in runs of flat (`sigma1_sq < sigma_nsq`) and
    /// detailed ones, as pictures have them, with the edge cases: variances
    /// at and around the noise, wrapped (negative) variances, covariances
    /// of both signs, zero `sigma2_sq`.
    fn moments(n: usize, seed: u64) -> MomentBlock<1024> {
        assert!(n <= 1024);
        let mut rng = Rng(seed);
        let mut m = MomentBlock {
            mu1: [0; 1024],
            mu2: [0; 1024],
            xx: [0; 1024],
            yy: [0; 1024],
            xy: [0; 1024],
        };
        let (mut flat, mut run) = (false, 0);
        for l in 0..n {
            if run == 0 {
                (flat, run) = (rng.below(2) == 0, 1 + rng.below(40));
            }
            run -= 1;
            let mu1 = rng.next_u64() as u32;
            let mu2 = rng.next_u64() as u32;
            let nsq = SIGMA_NSQ as u32;
            let var1 = match (flat, rng.below(8)) {
                (true, 0) => nsq - 1,
                (true, 1) => (rng.next_u64() as u32) | 1 << 31,
                (true, _) => rng.below(nsq as usize) as u32,
                (false, 0) => nsq,
                (false, _) => nsq + (rng.next_u64() as u32 >> 8),
            };
            let var2 = match rng.below(6) {
                0 => 0,
                1 => (rng.next_u64() as u32) | 1 << 31,
                _ => rng.next_u64() as u32 >> 7,
            };
            let cov = (rng.next_u64() as i32) >> (7 + rng.below(20));
            m.mu1[l] = mu1;
            m.mu2[l] = mu2;
            m.xx[l] = product_q32(mu1, mu1).wrapping_add(var1);
            m.yy[l] = product_q32(mu2, mu2).wrapping_add(var2);
            m.xy[l] = product_q32(mu1, mu2).wrapping_add(cov as u32);
        }
        m
    }

    /// The reference, a pixel at a time.
    fn reference(m: &MomentBlock<1024>, n: usize, gain_limit: f64) -> ScaleSums {
        let mut sums = ScaleSums::default();
        for l in 0..n {
            let one = MomentBlock {
                mu1: [m.mu1[l]],
                mu2: [m.mu2[l]],
                xx: [m.xx[l]],
                yy: [m.yy[l]],
                xy: [m.xy[l]],
            };
            sums.add_block::<1>(&one, Log2Table::get(), gain_limit);
        }
        sums
    }

    /// The vector statistics, which queue the pixels that are not flat and
    /// take them a whole vector at a time, give the reference's sums on
    /// every mix of flat and detailed lanes, with a part vector left in the
    /// queue at the end (lengths not multiples of the lanes) or none.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn vector_statistics_match_the_reference() {
        use std::arch::x86_64::*;
        if !crate::cpu::has_avx2() {
            eprintln!("skipped: this CPU lacks AVX2");
            return;
        }
        let log2 = Log2Table::get();
        for (seed, blocks) in [(1, 1), (2, 3), (3, 64), (4, 64), (5, 63)] {
            let n = blocks * 16;
            let m = moments(n, seed);
            for gain_limit in [100.0, 1.0] {
                let want = reference(&m, n, gain_limit);
                assert_ne!(want, ScaleSums::default());
                // Every length from a whole number of vectors down by a few
                // pixels, so that the queue ends part full.
                for len in [n, n - 1, n - 5, n - 9] {
                    let want = if len == n {
                        want
                    } else {
                        reference(&m, len, gain_limit)
                    };
                    let load = |v: &[u32; 1024], l: usize| {
                        let mut lanes = [0u32; 16];
                        let end = (l + 16).min(len);
                        lanes[..end - l].copy_from_slice(&v[l..end]);
                        lanes
                    };
                    // Lanes past `len` are made flat (zero moments: sigma1_sq
                    // 0) and their counts taken off.
                    let pad = (len.div_ceil(8) * 8 - len) as i64;
                    let mut avx2 = super::super::stats_avx2::VecSums::new(log2, gain_limit);
                    for l in (0..len).step_by(8) {
                        let [a, b, c, d, e] = [&m.mu1, &m.mu2, &m.xx, &m.yy, &m.xy]
                            .map(|v| load(v, l))
                            // SAFETY: an unaligned load of 32 of the 64 bytes.
                            .map(|x| unsafe { _mm256_loadu_si256(x.as_ptr().cast()) });
                        // SAFETY: AVX2 checked above.
                        unsafe { avx2.add(a, b, c, d, e) };
                    }
                    let mut got = ScaleSums::default();
                    avx2.finish(&mut got);
                    got.den_non_log -= pad;
                    assert_eq!(got, want, "AVX2, seed {seed}, {len} pixels, {gain_limit}");
                    if !crate::cpu::has_avx512() {
                        continue;
                    }
                    let pad = (len.div_ceil(16) * 16 - len) as i64;
                    // SAFETY: AVX-512 F checked above.
                    let mut wide =
                        unsafe { super::super::stats_avx512::VecSums16::new(log2, gain_limit) };
                    for l in (0..len).step_by(16) {
                        let [a, b, c, d, e] = [&m.mu1, &m.mu2, &m.xx, &m.yy, &m.xy]
                            .map(|v| load(v, l))
                            // SAFETY: an unaligned load of the 64 bytes.
                            .map(|x| unsafe { _mm512_loadu_si512(x.as_ptr().cast()) });
                        // SAFETY: AVX-512 F checked above.
                        unsafe { wide.add(a, b, c, d, e) };
                    }
                    let mut got = ScaleSums::default();
                    // SAFETY: as above.
                    unsafe { wide.finish(&mut got) };
                    got.den_non_log -= pad;
                    assert_eq!(
                        got, want,
                        "AVX-512, seed {seed}, {len} pixels, {gain_limit}"
                    );
                }
            }
        }
    }
}
