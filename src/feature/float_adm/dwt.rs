//! One level of libvmaf's float ADM wavelet (`adm_dwt2_s`): a Daubechies-2
//! (db2) analysis filter, vertical then horizontal, decimating by two.
//! Output planes are `ceil(w / 2) x ceil(h / 2)`.

use crate::feature::common::float_plane::FloatPlane;
use crate::feature::common::to_f32;

/// `dwt2_db2_coeffs_lo_s` / `_hi_s` (C `double` literals in `float` tables).
const LO: [f32; 4] = to_f32([
    0.482962913144690,
    0.836516303737469,
    0.224143868041857,
    -0.129409522550921,
]);
const HI: [f32; 4] = to_f32([
    -0.129409522550921,
    -0.224143868041857,
    0.836516303737469,
    -0.482962913144690,
]);

/// The four sub-bands of one level.
#[derive(Debug, Default)]
pub struct Bands {
    /// Low-pass both ways: the next level's input.
    pub a: FloatPlane,
    /// High-pass vertically, low-pass horizontally.
    pub h: FloatPlane,
    /// Low-pass vertically, high-pass horizontally.
    pub v: FloatPlane,
    /// High-pass both ways.
    pub d: FloatPlane,
}

impl Bands {
    /// The (h, v, d) detail bands, in libvmaf's angle order.
    pub fn details(&self) -> [&FloatPlane; 3] {
        [&self.h, &self.v, &self.d]
    }
}

/// `dwt2_src_indices_filt_s`: the four source taps of each output position
/// `i` (`2i - 1 .. 2i + 2`), mirrored into `0..n`: `-1` becomes `1`, past the
/// end `2n - k - 1` (the edge sample repeats).
pub fn tap_indices(n: usize, out: &mut Vec<[usize; 4]>) {
    out.clear();
    let n = n as isize;
    let fold = |k: isize| -> usize {
        if k < 0 {
            (-k) as usize
        } else if k >= n {
            (2 * n - k - 1) as usize
        } else {
            k as usize
        }
    };
    for i in 0..(n + 1) / 2 {
        out.push([
            fold(2 * i - 1),
            fold(2 * i),
            fold(2 * i + 1),
            fold(2 * i + 2),
        ]);
    }
}

/// `accum = 0; accum += f[0] * s0; ... accum += f[3] * s3;`
#[inline(always)]
fn taps4(f: &[f32; 4], s: [f32; 4]) -> f32 {
    let mut acc = 0.0f32;
    acc += f[0] * s[0];
    acc += f[1] * s[1];
    acc += f[2] * s[2];
    acc += f[3] * s[3];
    acc
}

/// Row buffers and tap indices reused by [`dwt2`].
#[derive(Debug, Default)]
pub struct DwtScratch {
    lo: Vec<f32>,
    hi: Vec<f32>,
    rows: Vec<[usize; 4]>,
    cols: Vec<[usize; 4]>,
}

/// `adm_dwt2_s` (or, with `lo_only`, `adm_dwt2_lo_s`, which fills only the
/// `a` band) of `src` into `dst`.
#[inline(always)]
pub fn dwt2(src: &FloatPlane, dst: &mut Bands, lo_only: bool, scratch: &mut DwtScratch) {
    let (w, h) = (src.width, src.height);
    let (ow, oh) = (w.div_ceil(2), h.div_ceil(2));
    tap_indices(h, &mut scratch.rows);
    tap_indices(w, &mut scratch.cols);
    dst.a.reshape(ow, oh);
    if !lo_only {
        dst.h.reshape(ow, oh);
        dst.v.reshape(ow, oh);
        dst.d.reshape(ow, oh);
    }
    scratch.lo.resize(w, 0.0);
    scratch.hi.resize(w, 0.0);
    // Output columns whose four taps 2j-1 .. 2j+2 need no mirroring.
    let inner = 1..(w.saturating_sub(1) / 2).max(1);
    for (i, r) in scratch.rows.iter().enumerate() {
        let s = [
            &src.row(r[0])[..w],
            &src.row(r[1])[..w],
            &src.row(r[2])[..w],
            &src.row(r[3])[..w],
        ];
        // Vertical pass over the whole row.
        let (lo, hi) = (&mut scratch.lo[..w], &mut scratch.hi[..w]);
        for j in 0..w {
            lo[j] = taps4(&LO, [s[0][j], s[1][j], s[2][j], s[3][j]]);
        }
        if !lo_only {
            for j in 0..w {
                hi[j] = taps4(&HI, [s[0][j], s[1][j], s[2][j], s[3][j]]);
            }
        }
        // Horizontal pass at every other column.
        let (lo, hi, cols) = (&scratch.lo, &scratch.hi, &scratch.cols);
        let a = dst.a.row_mut(i);
        let gather = |x: &[f32], c: &[usize; 4]| [x[c[0]], x[c[1]], x[c[2]], x[c[3]]];
        let window = |x: &[f32], j: usize| [x[2 * j - 1], x[2 * j], x[2 * j + 1], x[2 * j + 2]];
        if lo_only {
            for (j, out) in a.iter_mut().enumerate() {
                let l = if inner.contains(&j) {
                    window(lo, j)
                } else {
                    gather(lo, &cols[j])
                };
                *out = taps4(&LO, l);
            }
            continue;
        }
        let (bh, bv, bd) = (dst.h.row_mut(i), dst.v.row_mut(i), dst.d.row_mut(i));
        let mut columns = |j: usize, l: [f32; 4], t: [f32; 4]| {
            a[j] = taps4(&LO, l);
            bv[j] = taps4(&HI, l);
            bh[j] = taps4(&LO, t);
            bd[j] = taps4(&HI, t);
        };
        for j in (0..ow).filter(|j| !inner.contains(j)) {
            columns(j, gather(lo, &cols[j]), gather(hi, &cols[j]));
        }
        for j in inner.clone() {
            columns(j, window(lo, j), window(hi, j));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tap_indices_fold_like_libvmaf() {
        let mut t = Vec::new();
        tap_indices(5, &mut t);
        assert_eq!(t, vec![[1, 0, 1, 2], [1, 2, 3, 4], [3, 4, 4, 3]]);
        tap_indices(4, &mut t);
        assert_eq!(t, vec![[1, 0, 1, 2], [1, 2, 3, 3]]);
    }

    #[test]
    fn flat_picture_has_no_detail() {
        let mut p = FloatPlane::new(9, 7);
        p.samples_mut().fill(10.0);
        let mut b = Bands::default();
        dwt2(&p, &mut b, false, &mut DwtScratch::default());
        assert_eq!((b.a.width, b.a.height), (5, 4));
        let gain: f32 = LO.iter().sum();
        for v in b.a.samples() {
            assert!((v - 10.0 * gain * gain).abs() < 1e-4);
        }
        for band in b.details() {
            assert!(band.samples().iter().all(|v| v.abs() < 1e-5));
        }
    }
}
