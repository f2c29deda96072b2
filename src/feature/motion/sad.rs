//! The motion SAD: the sum of absolute values of the blurred difference of
//! two luma planes.
//!
//! libvmaf 3.2.0 blurs the *difference* `prev - cur` (vertical 5-tap pass,
//! rounded, then horizontal pass, rounded) instead of differencing two
//! blurred planes; the roundings make the two orders disagree, so the
//! order here is the libvmaf one.

use crate::cpu::{simd_dispatch, simd_level, SimdLevel};
use crate::feature::common::mirrored_filter::mirror;
use crate::picture::{PlaneRef, Sample};

/// The 5-tap Gaussian-like kernel; its taps sum to 65536.
pub(super) const FILTER: [i32; 5] = [3571, 16004, 26386, 16004, 3571];
pub(super) const RADIUS: usize = 2;

/// Per-row scratch of the SAD: the vertical pass of one row, each value
/// `y` split as `256 * hi + lo` (`0 <= lo < 256`; see `horizontal_tap`),
/// in 32-bit lanes for the portable pass and 16-bit ones for the AVX-512
/// and AVX2 passes.
#[derive(Debug, Clone, Default)]
pub struct SadScratch {
    hi: Vec<i32>,
    lo: Vec<i32>,
    narrow_hi: Vec<i16>,
    narrow_lo: Vec<i16>,
}

impl SadScratch {
    pub fn new(width: usize) -> Self {
        Self {
            hi: vec![0; width],
            lo: vec![0; width],
            narrow_hi: vec![0; width],
            narrow_lo: vec![0; width],
        }
    }
}

/// Sum over all pixels of `|blur(prev - cur)|`, as libvmaf's
/// `motion_score_pipeline_{8,16}`. Both planes must have the same size, at
/// least 3x3, and `scratch` at least their width. Samples of up to 12 bits
/// take the AVX-512 or AVX2 pass where the CPU has it (`sad_avx512`,
/// `sad_avx2`), others (and samples above their bit depth) the portable
/// one.
pub fn blurred_difference_sad<T: Sample>(
    prev: &PlaneRef<'_, T>,
    cur: &PlaneRef<'_, T>,
    bit_depth: u32,
    scratch: &mut SadScratch,
) -> u64 {
    blurred_difference_sad_with(simd_level(), prev, cur, bit_depth, scratch)
}

/// [`blurred_difference_sad`] with the vector passes of `level` at most
/// (and of the CPU's level at most): the unit tests run each on one
/// machine.
fn blurred_difference_sad_with<T: Sample>(
    level: SimdLevel,
    prev: &PlaneRef<'_, T>,
    cur: &PlaneRef<'_, T>,
    bit_depth: u32,
    scratch: &mut SadScratch,
) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use super::{sad_avx2, sad_avx512};
        let (hi, lo) = (&mut scratch.narrow_hi, &mut scratch.narrow_lo);
        let w = cur.width;
        let vector = match level.min(simd_level()) {
            SimdLevel::Avx512
                if bit_depth <= sad_avx512::MAX_BITS && w >= sad_avx512::MIN_WIDTH =>
            {
                // SAFETY: the CPU has AVX-512 (its level).
                unsafe { sad_avx512::blurred_difference_sad(prev, cur, bit_depth, hi, lo) }
            }
            SimdLevel::Avx512 | SimdLevel::Avx2
                if bit_depth <= sad_avx2::MAX_BITS && w >= sad_avx2::MIN_WIDTH =>
            {
                // SAFETY: the CPU has AVX2 (its level).
                unsafe { sad_avx2::blurred_difference_sad(prev, cur, bit_depth, hi, lo) }
            }
            _ => None,
        };
        if let Some(sad) = vector {
            return sad;
        }
    }
    let _ = level;
    blurred_difference_sad_portable(prev, cur, bit_depth, scratch)
}

simd_dispatch! {
    /// The portable passes of [`blurred_difference_sad`]. (The row loops
    /// vectorize with 32-bit multiplies, which the baseline x86-64 target
    /// lacks.)
    fn blurred_difference_sad_portable<T: Sample>(
        prev: &PlaneRef<'_, T>,
        cur: &PlaneRef<'_, T>,
        bit_depth: u32,
        scratch: &mut SadScratch,
    ) -> u64 => sad_portable
}

#[inline(always)]
fn sad_portable<T: Sample>(
    prev: &PlaneRef<'_, T>,
    cur: &PlaneRef<'_, T>,
    bit_depth: u32,
    scratch: &mut SadScratch,
) -> u64 {
    let (w, h) = (cur.width, cur.height);
    assert!(
        w >= 3 && h >= 3 && prev.width == w && prev.height == h,
        "motion SAD: bad plane sizes"
    );
    let hi = &mut scratch.hi[..w];
    let lo = &mut scratch.lo[..w];
    let mut sad = 0u64;
    for i in 0..h {
        let taps: [usize; 5] =
            std::array::from_fn(|k| mirror(i as isize + k as isize - RADIUS as isize, h));
        let p: [&[T]; 5] = taps.map(|r| prev.row(r));
        let c: [&[T]; 5] = taps.map(|r| cur.row(r));
        // Rows whose vertical pass is all zero add nothing (libvmaf skips
        // them too; this is only a shortcut).
        if vertical_pass(&p, &c, bit_depth, hi, lo) {
            sad += u64::from(horizontal_abs_sum(hi, lo));
        }
    }
    sad
}

/// `y[j] = (sum_k FILTER[k] * (p[k][j] - c[k][j]) + round) >> bit_depth`,
/// an arithmetic (flooring) shift, stored split into `hi`/`lo`. The kernel
/// is symmetric, so mirrored taps are added before multiplying (exact in
/// integers). Returns whether any `y` is nonzero.
#[inline(always)]
fn vertical_pass<T: Sample>(
    p: &[&[T]; 5],
    c: &[&[T]; 5],
    bit_depth: u32,
    hi: &mut [i32],
    lo: &mut [i32],
) -> bool {
    let w = hi.len();
    let lo = &mut lo[..w];
    let [p0, p1, p2, p3, p4] = p.map(|s| &s[..w]);
    let [c0, c1, c2, c3, c4] = c.map(|s| &s[..w]);
    let d = |a: &[T], b: &[T], j: usize| a[j].into() as i32 - b[j].into() as i32;
    let mut any = 0i32;
    if bit_depth <= 15 {
        // |sum| <= 2^16 * (2^15 - 1): fits i32, which vectorizes better.
        let round = 1i32 << (bit_depth - 1);
        for j in 0..w {
            let outer = d(p0, c0, j) + d(p4, c4, j);
            let inner = d(p1, c1, j) + d(p3, c3, j);
            let acc = FILTER[0] * outer + FILTER[1] * inner + FILTER[2] * d(p2, c2, j);
            let y = (acc + round) >> bit_depth;
            any |= y;
            hi[j] = y >> 8;
            lo[j] = y & 0xff;
        }
    } else {
        let round = 1i64 << (bit_depth - 1);
        for j in 0..w {
            let outer = (d(p0, c0, j) + d(p4, c4, j)) as i64;
            let inner = (d(p1, c1, j) + d(p3, c3, j)) as i64;
            let acc = FILTER[0] as i64 * outer
                + FILTER[1] as i64 * inner
                + FILTER[2] as i64 * d(p2, c2, j) as i64;
            let y = ((acc + round) >> bit_depth) as i32;
            any |= y;
            hi[j] = y >> 8;
            lo[j] = y & 0xff;
        }
    }
    any != 0
}

/// One output pixel of the horizontal pass, libvmaf's
/// `(int32_t)((sum_k FILTER[k] * y[k] + 2^15) >> 16)` with a 64-bit sum.
///
/// `|y| < 2^16`, so that sum needs 33 bits; with `y = 256 * hi + lo`
/// (`0 <= lo < 256`) both partial sums `A = sum f*hi` and `B = sum f*lo` stay
/// below 2^25 and `(A + ((B + 2^15) >> 8)) >> 8` is the same floor, in i32.
#[inline(always)]
pub(super) fn horizontal_tap(hi: [i32; 5], lo: [i32; 5]) -> i32 {
    let a = FILTER[0] * (hi[0] + hi[4]) + FILTER[1] * (hi[1] + hi[3]) + FILTER[2] * hi[2];
    let b = FILTER[0] * (lo[0] + lo[4]) + FILTER[1] * (lo[1] + lo[3]) + FILTER[2] * lo[2];
    (a + ((b + (1 << 15)) >> 8)) >> 8
}

/// Sum of `|horizontal pass|` over one row. The sum is 32-bit and wraps, as
/// libvmaf's per-row `uint32_t` accumulator.
#[inline(always)]
fn horizontal_abs_sum(hi: &[i32], lo: &[i32]) -> u32 {
    let w = hi.len();
    let lo = &lo[..w];
    let edge = |j: usize| {
        let at: [usize; 5] =
            std::array::from_fn(|k| mirror(j as isize + k as isize - RADIUS as isize, w));
        horizontal_tap(at.map(|x| hi[x]), at.map(|x| lo[x])).unsigned_abs()
    };
    let mut sum = 0u32;
    for j in 0..RADIUS {
        sum = sum.wrapping_add(edge(j));
    }
    if w > 2 * RADIUS {
        let n = w - 2 * RADIUS;
        let h: [&[i32]; 5] = std::array::from_fn(|k| &hi[k..k + n]);
        let l: [&[i32]; 5] = std::array::from_fn(|k| &lo[k..k + n]);
        for j in 0..n {
            let v = horizontal_tap(h.map(|s| s[j]), l.map(|s| s[j]));
            sum = sum.wrapping_add(v.unsigned_abs());
        }
    }
    for j in (w - RADIUS).max(RADIUS)..w {
        sum = sum.wrapping_add(edge(j));
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plane<T: Copy>(data: &[T], w: usize, h: usize) -> PlaneRef<'_, T> {
        PlaneRef {
            data,
            width: w,
            height: h,
            stride: w,
        }
    }

    #[test]
    fn split_tap_equals_64_bit_formula() {
        let split = |y: [i32; 5]| horizontal_tap(y.map(|v| v >> 8), y.map(|v| v & 0xff));
        let reference = |y: [i32; 5]| {
            let acc: i64 = y
                .iter()
                .zip(FILTER)
                .map(|(&v, f)| f as i64 * v as i64)
                .sum();
            ((acc + (1 << 15)) >> 16) as i32
        };
        let extremes = [
            -65535, -65280, -65279, -256, -255, -129, -1, 0, 1, 127, 255, 256, 65279, 65280, 65535,
        ];
        let mut seed = 12345u64;
        for n in 0..200_000 {
            let y: [i32; 5] = std::array::from_fn(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                if n % 3 == 0 {
                    extremes[(seed >> 33) as usize % extremes.len()]
                } else {
                    ((seed >> 33) % 131071) as i32 - 65535
                }
            });
            assert_eq!(split(y), reference(y), "{y:?}");
        }
    }

    /// The vector passes (AVX-512, AVX2: those the CPU has) against the
    /// portable one at 8, 10 and 12 bits: random samples, only extremes (0
    /// and the largest, where the sums reach their bounds) and nearly equal
    /// planes (rows that are all zero after the vertical pass), on widths
    /// with and without a partial last vector, rows padded past their
    /// width.
    #[test]
    fn vector_passes_match_portable() {
        let levels = crate::cpu::vector_levels();
        if levels.is_empty() {
            return;
        }
        fn check<T: Sample + TryFrom<u32>>(
            level: SimdLevel,
            bits: u32,
            rng: &mut crate::testing::fuzz::Rng,
        ) {
            let top = (1u32 << bits) - 1;
            let sample = |v: u32| T::try_from(v).ok().expect("a sample of `bits` bits");
            for (w, h) in [
                (20, 9),
                (21, 12),
                (35, 9),
                (64, 3),
                (67, 5),
                (100, 9),
                (1920, 6),
                (97, 4),
            ] {
                let stride = w + 5;
                for mode in 0..3 {
                    let mut a = vec![T::default(); stride * h];
                    let mut b = a.clone();
                    for (x, y) in a.iter_mut().zip(b.iter_mut()) {
                        let (r, s) = (rng.next_u64() as u32, (rng.next_u64() >> 32) as u32);
                        let (u, v) = match mode {
                            0 => (r % (top + 1), s % (top + 1)),
                            1 => ((r & 1) * top, (s & 1) * top),
                            _ => (r % (top + 1), (r % (top + 1)) ^ u32::from(s % 64 == 0)),
                        };
                        (*x, *y) = (sample(u), sample(v));
                    }
                    let (pa, pb) = [&a, &b]
                        .map(|d| PlaneRef {
                            data: &d[..],
                            width: w,
                            height: h,
                            stride,
                        })
                        .into();
                    let want =
                        blurred_difference_sad_portable(&pa, &pb, bits, &mut SadScratch::new(w));
                    let got =
                        blurred_difference_sad_with(level, &pa, &pb, bits, &mut SadScratch::new(w));
                    let case = format!("{level:?} {bits}-bit {w}x{h} mode {mode}");
                    assert!(want > 0, "{case}: a zero SAD checks little");
                    assert_eq!(got, want, "{case}");
                }
            }
        }
        let mut rng = crate::testing::fuzz::Rng(77);
        for &level in &levels {
            check::<u8>(level, 8, &mut rng);
            check::<u16>(level, 10, &mut rng);
            check::<u16>(level, 12, &mut rng);
        }
        // A sample above the bit depth (16-bit lanes would wrap): the
        // portable pass's result, each vector pass refusing it.
        let (w, h) = (64, 4);
        let mut a = vec![512u16; w * h];
        a[w + 3] = 65535;
        let b = vec![0u16; w * h];
        let (pa, pb) = [&a, &b].map(|d| plane(d, w, h)).into();
        let want = blurred_difference_sad_portable(&pa, &pb, 10, &mut SadScratch::new(w));
        for &level in &levels {
            assert_eq!(
                blurred_difference_sad_with(level, &pa, &pb, 10, &mut SadScratch::new(w)),
                want,
                "{level:?}"
            );
        }
        // SAFETY: the CPU has AVX2 (checked above).
        let avx2 = unsafe {
            super::super::sad_avx2::blurred_difference_sad(&pa, &pb, 10, &mut [0; 64], &mut [0; 64])
        };
        assert_eq!(avx2, None);
        if crate::cpu::has_avx512() {
            // SAFETY: the CPU has AVX-512 (checked).
            let wide = unsafe {
                super::super::sad_avx512::blurred_difference_sad(
                    &pa,
                    &pb,
                    10,
                    &mut [0; 64],
                    &mut [0; 64],
                )
            };
            assert_eq!(wide, None);
        }
    }

    #[test]
    fn identical_planes_have_zero_sad() {
        let data: Vec<u8> = (0..35).map(|v| (v * 7) as u8).collect();
        let p = plane(&data, 7, 5);
        let mut row = SadScratch::new(7);
        assert_eq!(blurred_difference_sad(&p, &p, 8, &mut row), 0);
    }

    #[test]
    fn flat_step_sad_is_exact() {
        // A uniform difference of d passes both blurs unchanged (taps sum to
        // 2^16): |d| * 2^16 >> 8 per pixel at 8 bits.
        let a = vec![100u8; 4 * 3];
        let b = vec![90u8; 4 * 3];
        let mut row = SadScratch::new(4);
        let sad = blurred_difference_sad(&plane(&a, 4, 3), &plane(&b, 4, 3), 8, &mut row);
        assert_eq!(sad, 12 * (10 << 8));
        let a = vec![1000u16; 3 * 3];
        let b = vec![0u16; 3 * 3];
        let mut row = SadScratch::new(3);
        let sad = blurred_difference_sad(&plane(&a, 3, 3), &plane(&b, 3, 3), 10, &mut row);
        assert_eq!(sad, 9 * ((1000u64 << 16) >> 10));
        let a = vec![65535u16; 3 * 3];
        let sad = blurred_difference_sad(&plane(&a, 3, 3), &plane(&b, 3, 3), 16, &mut row);
        assert_eq!(sad, 9 * 65535);
    }
}
