//! Daala's 8-point integer lifting DCT (`od_bin_fdct8`) and its separable
//! 8x8 form, generic over one value or a batch of lanes so the extractor
//! can transform several blocks at once with the same integer steps.

/// The integer operations the lifting steps use, on `i32` with C's
/// wrap-around behaviour.
pub trait DctInt: Copy {
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    /// `(self * k + round) >> shift`.
    fn mul_round_shr(self, k: i32, round: i32, shift: u32) -> Self;
    /// `OD_DCT_RSHIFT(self, 1)`: halving that rounds towards zero.
    fn half(self) -> Self;
}

impl DctInt for i32 {
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self.wrapping_add(o)
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        self.wrapping_sub(o)
    }
    #[inline(always)]
    fn mul_round_shr(self, k: i32, round: i32, shift: u32) -> Self {
        self.wrapping_mul(k).wrapping_add(round) >> shift
    }
    #[inline(always)]
    fn half(self) -> Self {
        (((self as u32) >> 31) as i32).wrapping_add(self) >> 1
    }
}

impl<const L: usize> DctInt for [i32; L] {
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        std::array::from_fn(|l| self[l].add(o[l]))
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        std::array::from_fn(|l| self[l].sub(o[l]))
    }
    #[inline(always)]
    fn mul_round_shr(self, k: i32, round: i32, shift: u32) -> Self {
        std::array::from_fn(|l| self[l].mul_round_shr(k, round, shift))
    }
    #[inline(always)]
    fn half(self) -> Self {
        std::array::from_fn(|l| self[l].half())
    }
}

/// One 8-point forward transform; constants and step order are Daala's.
#[inline(always)]
pub fn fdct8<V: DctInt>(x: [V; 8]) -> [V; 8] {
    // Initial permutation.
    let (mut t0, mut t4, mut t2, mut t6) = (x[0], x[1], x[2], x[3]);
    let (mut t7, mut t3, mut t5, mut t1) = (x[4], x[5], x[6], x[7]);
    // +1/-1 butterflies.
    t1 = t0.sub(t1);
    let t1h = t1.half();
    t0 = t0.sub(t1h);
    t4 = t4.add(t5);
    let t4h = t4.half();
    t5 = t5.sub(t4h);
    t3 = t2.sub(t3);
    t2 = t2.sub(t3.half());
    t6 = t6.add(t7);
    let t6h = t6.half();
    t7 = t6h.sub(t7);
    // Embedded 4-point type-II DCT.
    t0 = t0.add(t6h);
    t6 = t0.sub(t6);
    t2 = t4h.sub(t2);
    t4 = t2.sub(t4);
    // Embedded 2-point type-II DCT.
    t0 = t0.sub(t4.mul_round_shr(13573, 16384, 15));
    t4 = t4.add(t0.mul_round_shr(11585, 8192, 14));
    t0 = t0.sub(t4.mul_round_shr(13573, 16384, 15));
    // Embedded 2-point type-IV DST.
    t6 = t6.sub(t2.mul_round_shr(21895, 16384, 15));
    t2 = t2.add(t6.mul_round_shr(15137, 8192, 14));
    t6 = t6.sub(t2.mul_round_shr(21895, 16384, 15));
    // Embedded 4-point type-IV DST.
    t3 = t3.add(t5.mul_round_shr(19195, 16384, 15));
    t5 = t5.add(t3.mul_round_shr(11585, 8192, 14));
    t3 = t3.sub(t5.mul_round_shr(7489, 4096, 13));
    t7 = t5.half().sub(t7);
    t5 = t5.sub(t7);
    t3 = t1h.sub(t3);
    t1 = t1.sub(t3);
    t7 = t7.add(t1.mul_round_shr(3227, 16384, 15));
    t1 = t1.sub(t7.mul_round_shr(6393, 16384, 15));
    t7 = t7.add(t1.mul_round_shr(3227, 16384, 15));
    t5 = t5.add(t3.mul_round_shr(2485, 4096, 13));
    t3 = t3.sub(t5.mul_round_shr(18205, 16384, 15));
    t5 = t5.add(t3.mul_round_shr(2485, 4096, 13));
    [t0, t1, t2, t3, t4, t5, t6, t7]
}

/// The 8x8 transform of a row-major block, in place: columns first, then
/// the columns of that (as `od_bin_fdct8x8`); `block[8 * v + h]` ends up
/// holding vertical frequency `v`, horizontal frequency `h`.
#[inline(always)]
pub fn fdct8x8<V: DctInt>(block: &mut [V; 64]) {
    let mut z = [block[0]; 64];
    for col in 0..8 {
        let out = fdct8(std::array::from_fn(|k| block[8 * k + col]));
        z[8 * col..8 * col + 8].copy_from_slice(&out);
    }
    for col in 0..8 {
        let out = fdct8(std::array::from_fn(|k| z[8 * k + col]));
        block[8 * col..8 * col + 8].copy_from_slice(&out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_block_has_only_a_dc_coefficient() {
        let mut b = [100i32; 64];
        fdct8x8(&mut b);
        // The transform is orthonormal up to rounding: DC = 8 * mean.
        assert_eq!(b[0], 800);
        assert!(b[1..].iter().all(|&c| c == 0), "{b:?}");
    }

    #[test]
    fn lanes_transform_like_single_values() {
        let single: [i32; 64] = std::array::from_fn(|i| ((i * 37 + 11) % 1024) as i32 - 300);
        let mut expected = single;
        fdct8x8(&mut expected);
        let mut lanes: [[i32; 4]; 64] =
            std::array::from_fn(|i| [single[i], 0, single[i], -single[i]]);
        fdct8x8(&mut lanes);
        for i in 0..64 {
            assert_eq!(lanes[i][0], expected[i]);
            assert_eq!(lanes[i][2], expected[i]);
            assert_eq!(lanes[i][1], 0);
        }
    }
}
