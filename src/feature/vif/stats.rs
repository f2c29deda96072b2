//! The per-pixel VIF statistic and its per-scale sums, in libvmaf's fixed
//! point: log terms in units of 1/2048, integer sums, a double combination
//! narrowed to float at the end.

use super::tables::log2_fixed;

/// The model's noise variance 2.0 in Q16.
const SIGMA_NSQ: i32 = 65536 << 1;
/// libvmaf's epsilon for the gain's denominator (Q16 of 1e-10).
const EPS: f64 = 65536.0 * 1.0e-10;

/// Sums over one scale's pixels; `finish` turns them into numerator and
/// denominator.
#[derive(Debug, Default, Clone, Copy)]
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

#[inline(always)]
fn product_q32(a: u32, b: u32) -> u32 {
    ((u64::from(a) * u64::from(b) + (1 << 31)) >> 32) as u32
}

impl ScaleSums {
    /// Adds `B` pixels.
    ///
    /// Every term is computed for every pixel and the unused ones masked
    /// out, so there are no data-dependent branches and the loop
    /// vectorizes; the values masked out may be meaningless but cannot trap.
    /// The wrapping subtractions and the casts reproduce libvmaf's
    /// unsigned-to-signed conversions.
    #[inline(always)]
    pub fn add_block<const B: usize>(
        &mut self,
        m: &MomentBlock<B>,
        log2: &[u16; 65536],
        gain_limit: f64,
    ) {
        for l in 0..B {
            let sigma1_sq = m.xx[l].wrapping_sub(product_q32(m.mu1[l], m.mu1[l])) as i32;
            let sigma2_sq = (m.yy[l].wrapping_sub(product_q32(m.mu2[l], m.mu2[l])) as i32).max(0);
            let sigma12 = m.xy[l].wrapping_sub(product_q32(m.mu1[l], m.mu2[l])) as i32;

            // A reference flatter than the noise: the numerator is
            // 1 - sigma2_sq * const, kept as a count and a separate sum.
            let flat = sigma1_sq < SIGMA_NSQ;
            let has_gain = !flat & (sigma12 > 0) & (sigma2_sq > 0);

            // log2(1 + sigma1_sq / 2) = log2(2 + sigma1_sq) - log2(2) in Q16.
            let den = log2_fixed(log2, u64::from(SIGMA_NSQ.wrapping_add(sigma1_sq) as u32))
                - 2048 * 17;

            // log2(1 + g² sigma1_sq / (sv_sq + 2)) as a difference of logs.
            let g = f64::from(sigma12) / (f64::from(sigma1_sq) + EPS);
            // Out-of-range values saturate here where x86 gives i32::MIN;
            // both clamp to 0.
            let sv_sq = ((f64::from(sigma2_sq) - g * f64::from(sigma12)) as i32).max(0);
            let g = if g < gain_limit { g } else { gain_limit };
            let noise = sv_sq.wrapping_add(SIGMA_NSQ) as u32;
            let signal_and_noise =
                ((g * g * f64::from(sigma1_sq)) as i64).wrapping_add(i64::from(noise));
            let num =
                log2_fixed(log2, signal_and_noise as u64) - log2_fixed(log2, u64::from(noise));

            self.den_log += i64::from(if flat { 0 } else { den });
            self.num_log += i64::from(if has_gain { num } else { 0 });
            self.num_non_log += i64::from(if flat { sigma2_sq } else { 0 });
            self.den_non_log += i64::from(flat);
        }
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
