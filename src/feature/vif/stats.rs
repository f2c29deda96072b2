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
