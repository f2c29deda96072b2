//! Linear RGB to the positive XYB SSIMULACRA 2 compares: libjxl's
//! `LinearRGBToXYB` (`lib/jxl/enc_xyb.cc`: opsin absorbance matrix and bias
//! with fused multiply-adds, clamp at zero, `CubeRootAndAdd`, X = (L - M) / 2,
//! Y = (L + M) / 2, B = S), then `MakePositiveXYB` from
//! `tools/ssimulacra2.cc` (plain `f32`, no fused operations).

// The constants are libjxl's literals as written, rounded to f32 as there.
#![allow(clippy::excessive_precision)]

use super::fma::fma_kernel;
use super::planes::Planes3;

// libjxl's `lib/jxl/cms/opsin_params.h`, derived entries in `f32` as there.
const M02: f32 = 0.078;
const M00: f32 = 0.30;
const M01: f32 = 1.0 - M02 - M00;
const M12: f32 = 0.078;
const M10: f32 = 0.23;
const M11: f32 = 1.0 - M12 - M10;
const M20: f32 = 0.24342268924547819;
const M21: f32 = 0.20476744424496821;
const M22: f32 = 1.0 - M20 - M21;
/// The opsin absorbance matrix, row-major.
pub const OPSIN: [f32; 9] = [M00, M01, M02, M10, M11, M12, M20, M21, M22];
/// The opsin bias (the same for the three rows).
pub const BIAS: f32 = 0.0037930732552754493;

/// `(L, M, S)` of one linear RGB pixel before the cube root: the matrix and
/// bias as `MulAdd(m0, r, MulAdd(m1, g, MulAdd(m2, b, bias)))`, negative
/// values (sign bit set) to zero.
#[inline(always)]
fn opsin(r: f32, g: f32, b: f32) -> [f32; 3] {
    std::array::from_fn(|i| {
        let m = &OPSIN[3 * i..][..3];
        let v = m[0].mul_add(r, m[1].mul_add(g, m[2].mul_add(b, BIAS)));
        if v.is_sign_negative() {
            0.0
        } else {
            v
        }
    })
}

/// libjxl's `CubeRootAndAdd(x, add)` for `x >= 0`: an exponent trick for the
/// first guess, three Newton steps on 1 / cbrt(x), one last correction, then
/// `fma(r * r, x, add)`.
#[inline(always)]
pub fn cube_root_and_add(x: f32, add: f32) -> f32 {
    const EXP_BIAS: i32 = 0x5480_0000;
    const EXP_MUL: i32 = 0x002A_AAAA;
    const K1_3: f32 = 1.0 / 3.0;
    const K4_3: f32 = 4.0 / 3.0;
    let xa_3 = K1_3 * x;
    let m1 = x.to_bits() as i32;
    let m2 = if m1 == 0 {
        0
    } else {
        EXP_BIAS.wrapping_sub((m1 >> 23).wrapping_mul(EXP_MUL))
    };
    let mut r = f32::from_bits(m2 as u32);
    for _ in 0..3 {
        let r2 = r * r;
        r = (-xa_3).mul_add(r2 * r2, K4_3 * r);
    }
    let r2 = r * r;
    r = K1_3.mul_add((-x).mul_add(r2 * r2, r), r);
    let r2 = r * r;
    r2.mul_add(x, add)
}

/// `-cbrt(bias)`, the term that makes XYB of black zero (libjxl: `-cbrtf`).
pub fn neg_bias_cbrt() -> f32 {
    -BIAS.cbrt()
}

/// Linear RGB to positive XYB, `xyb` resized to `linear`'s size.
pub fn to_xyb(linear: &Planes3, xyb: &mut Planes3) {
    xyb.reshape(linear.width, linear.height);
    let [r, g, b] = &linear.planes;
    let [x, y, s] = &mut xyb.planes;
    xyb_kernel(r, g, b, neg_bias_cbrt(), x, y, s);
}

fma_kernel! {
    /// Per pixel: XYB, then `MakePositiveXYB`.
    fn xyb_kernel(
        r: &[f32],
        g: &[f32],
        b: &[f32],
        add: f32,
        x: &mut [f32],
        y: &mut [f32],
        s: &mut [f32],
    ) => xyb_body
}

#[inline(always)]
fn xyb_body(
    r: &[f32],
    g: &[f32],
    b: &[f32],
    add: f32,
    x: &mut [f32],
    y: &mut [f32],
    s: &mut [f32],
) {
    let n = r.len();
    let (g, b, x, y, s) = (&g[..n], &b[..n], &mut x[..n], &mut y[..n], &mut s[..n]);
    for i in 0..n {
        let mixed = opsin(r[i], g[i], b[i]);
        let [l, m, short] = mixed.map(|v| cube_root_and_add(v, add));
        let xv = 0.5 * (l - m);
        let yv = 0.5 * (l + m);
        // MakePositiveXYB: B uses Y before Y gets its offset.
        s[i] = (short - yv) + 0.55;
        x[i] = xv * 14.0 + 0.42;
        y[i] = yv + 0.01;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cube_root_is_within_a_few_ulp() {
        for i in 0..20000 {
            let x = i as f32 * 5e-5;
            let ours = cube_root_and_add(x, 0.0);
            let exact = (x as f64).cbrt() as f32;
            assert!((ours - exact).abs() <= 8e-7, "{x}: {ours} vs {exact}");
        }
        assert_eq!(cube_root_and_add(0.0, 0.25), 0.25);
    }

    #[test]
    fn black_and_white_land_where_libjxl_says() {
        // libjxl's comment in MakePositiveXYB: for sRGB, Y spans
        // 0.010000..0.855308.
        let mut linear = Planes3::default();
        linear.reshape(2, 1);
        for p in &mut linear.planes {
            p.copy_from_slice(&[0.0, 1.0]);
        }
        let mut xyb = Planes3::default();
        to_xyb(&linear, &mut xyb);
        assert!((xyb.planes[1][0] - 0.01).abs() < 1e-6);
        assert!((xyb.planes[1][1] - 0.855308).abs() < 2e-6);
        assert!((xyb.planes[0][0] - 0.42).abs() < 1e-6);
    }
}
