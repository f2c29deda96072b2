//! `ssim` (alias `integer_ssim`): the fixed-point SSIM of the luma plane
//! that libvmaf takes from Xiph (`integer_ssim.c`, shipped but not built by
//! libvmaf 3.2.0; VMAFx builds it), any bit depth.
//!
//! Window: the separable 9-tap integer Gaussian [`TAPS`] (sigma 1.5, sum
//! 256), cut at the picture border: only taps inside the picture count and
//! their weight product `w` is kept. Per pixel the weighted moments are
//! exact 64-bit integers ([`Moments`]); the SSIM of a window is then taken
//! in double ([`SsimOutputs::window_term`]) and the frame score is
//! `sum(w ssim) / sum(w)` in raster order ([`SsimOutputs::emit`]). A GPU
//! twin can compute the moments and sums its own way and reuse those two.
//!
//! The moments are row sums (horizontal taps) kept for the 9 rows a window
//! spans, then column sums of those: 18 taps per moment and pixel, summed
//! in `f64`, where these integers are exact and vectorize.

use super::common::ssim_db::ScoreScale;
use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, OptionSpec, Options};
use crate::error::{Error, Result};
use crate::picture::{PictureFormat, PlaneId, PlaneMask, PlaneRef, PlaneSamples, Sample};

const NAME: &str = "ssim";
const FEATURE: &str = "ssim";

/// The Gaussian taps Xiph's `gaussian_filter_init(1.5, 5)` builds: the
/// outer taps rounded from `256 / (sqrt(2 pi) 1.5) exp(-k^2 / 4.5)`, the
/// centre the remainder to 256.
pub const TAPS: [i32; 9] = [2, 9, 28, 55, 68, 55, 28, 9, 2];
const RADIUS: usize = TAPS.len() / 2;

static OPTIONS: [OptionSpec; 2] = [
    // Write the score as -10 log10(1 - score) (VMAFx).
    OptionSpec::bool("enable_db", false),
    // Cap dB scores at what a half-LSB error over the picture would give.
    OptionSpec::bool("clip_db", false),
];

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: NAME,
    aliases: &["integer_ssim"],
    options: &OPTIONS,
    provides: &[FEATURE],
    create: create as CreateFn,
    joint: None,
    gpu: Some(&crate::gpu::feature::integer_ssim::TWIN),
};

fn create(options: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    Ok(Box::new(IntegerSsim {
        outputs: SsimOutputs::create(options, format)?,
        format: *format,
        rows: RowMoments::default(),
    }))
}

/// The weighted sums of one window: `sum w s`, `sum w d`, `sum w s^2`,
/// `sum w s d`, `sum w d^2` and `sum w`, reference `s`, distorted `d`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Moments {
    pub mx: i64,
    pub my: i64,
    pub xx: i64,
    pub xy: i64,
    pub yy: i64,
    pub w: i64,
}

/// The set-up and the arithmetic after the moments, shared with any other
/// engine: constants from the bit depth, the per-window term, the score.
#[derive(Debug, Clone, Copy)]
pub struct SsimOutputs {
    /// `(2^b - 1)^2` as C's `int` product (wraps at 16 bits, as there).
    peak_squared: f64,
    score_scale: ScoreScale,
}

impl SsimOutputs {
    pub fn create(options: &Options, format: &PictureFormat) -> Result<Self> {
        if !(8..=16).contains(&format.bit_depth) {
            return Err(Error::Extractor {
                extractor: NAME.into(),
                reason: format!("bit depth {} is not 8 to 16", format.bit_depth),
            });
        }
        let peak = (1i32 << format.bit_depth) - 1;
        Ok(Self {
            peak_squared: peak.wrapping_mul(peak) as f64,
            score_scale: ScoreScale::from_options(options, format),
        })
    }

    /// `w * ssim` of one window, Xiph's expression evaluated in its order:
    /// `c1 = (0.01 peak)^2 w^2`, `c2 = (0.03 peak)^2 w^2` and
    /// `w (2 mx my + c1) (2 (sxy w - mx my) + c2) /
    /// ((mx^2 + my^2 + c1) (sxx w - mx^2 + syy w - my^2 + c2))`.
    #[inline(always)]
    pub fn window_term(&self, m: &Moments) -> f64 {
        let [mx, my, xx, xy, yy, w] = [m.mx, m.my, m.xx, m.xy, m.yy, m.w].map(|v| v as f64);
        self.term(mx, my, xx, xy, yy, w)
    }

    /// [`SsimOutputs::window_term`] of moments already in double (each an
    /// exact integer, as C converts them).
    #[inline(always)]
    fn term(&self, mx: f64, my: f64, xx: f64, xy: f64, yy: f64, w: f64) -> f64 {
        let (c1_base, c2_base) = self.c_bases();
        let c1 = c1_base * w * w;
        let c2 = c2_base * w * w;
        let mx2 = mx * mx;
        let mxy = mx * my;
        let my2 = my * my;
        w * (2.0 * mxy + c1) * (c2 + 2.0 * (xy * w - mxy))
            / ((mx2 + my2 + c1) * (xx * w - mx2 + yy * w - my2 + c2))
    }

    /// `peak^2 0.01^2` and `peak^2 0.03^2`, the first products of `c1` and
    /// `c2` (a GPU twin takes the rest of the term in the same order).
    #[inline(always)]
    pub(crate) fn c_bases(&self) -> (f64, f64) {
        (
            self.peak_squared * (0.01 * 0.01),
            self.peak_squared * (0.03 * 0.03),
        )
    }

    /// Writes the frame score from `sum(w ssim)` and `sum(w)` over all
    /// windows.
    pub fn emit(&self, index: u32, term_sum: f64, weight_sum: f64, sink: &mut FeatureSink) {
        sink.emit(
            index,
            FEATURE,
            self.score_scale.apply(term_sum / weight_sum),
        );
    }
}

/// `sum(w)` over every window of a `width` x `height` plane. The CPU adds
/// `col_weight * row_weight` in raster order; all are integers below 2^53,
/// so that sum is exact and equals this product.
pub(crate) fn weight_sum(width: usize, height: usize) -> f64 {
    let cols: i64 = (0..width).map(|x| inside_weight(x, width)).sum();
    let rows: i64 = (0..height).map(|y| inside_weight(y, height)).sum();
    (cols * rows) as f64
}

/// Sum of the taps of a window centred at `i` that fall inside `0..len`.
fn inside_weight(i: usize, len: usize) -> i64 {
    taps_inside(i, len).map(|(_, t)| t as i64).sum()
}

/// `(sample index, tap)` for the taps of a window centred at `i` that fall
/// inside `0..len`.
fn taps_inside(i: usize, len: usize) -> impl Iterator<Item = (usize, i32)> {
    TAPS.iter().enumerate().filter_map(move |(k, &t)| {
        let at = (i + k).checked_sub(RADIUS)?;
        (at < len).then_some((at, t))
    })
}

/// Row sums (horizontal taps) of the five moments for the last 9 rows,
/// slot `y % 9` holding row `y`, and the column sums of one output row.
///
/// Sums are kept in `f64`: every product and partial sum is an integer
/// below 2^53 (at most 256 * 256 * 2^32 with C's wrapping `int` products),
/// so they are exact, equal to C's `int64_t` sums, and vectorize where
/// 64-bit integer multiplies do not.
#[derive(Debug, Default)]
struct RowMoments {
    width: usize,
    /// `[moment][slot * width + x]`: mx, my, xx, xy, yy.
    sums: [Vec<f64>; 5],
    /// Horizontal weight of column `x` (the same for every row).
    col_weight: Vec<f64>,
    /// Column sums of the output row being scored, per moment.
    cols: [Vec<f64>; 5],
    /// `w ssim` of each window of that row.
    terms: Vec<f64>,
    /// Per sample of the row being pushed: `s`, `d`, `s s`, `s d`, `d d`
    /// (C's wrapping `int` products).
    products: [Vec<i32>; 5],
}

/// The five products of one tap: C's `int` arithmetic (`window * s * s`
/// wraps above 12 bits, as there), widened exactly.
#[inline(always)]
fn tap_products(t: i32, a: i32, b: i32) -> [f64; 5] {
    let (ta, tb) = (t * a, t * b);
    [
        ta,
        tb,
        ta.wrapping_mul(a),
        ta.wrapping_mul(b),
        tb.wrapping_mul(b),
    ]
    .map(|v| v as f64)
}

impl RowMoments {
    fn reset(&mut self, width: usize) {
        if self.width != width || self.col_weight.len() != width {
            self.width = width;
            for s in &mut self.sums {
                s.clear();
                s.resize(TAPS.len() * width, 0.0);
            }
            for c in &mut self.cols {
                c.resize(width, 0.0);
            }
            self.terms.resize(width, 0.0);
            for p in &mut self.products {
                p.resize(width, 0);
            }
            self.col_weight = (0..width).map(|x| inside_weight(x, width) as f64).collect();
        }
    }

    /// Stores the row sums of reference row `s` and distorted row `d` as
    /// row `y`.
    #[inline(always)]
    fn push_row<T: Sample>(&mut self, y: usize, s: &[T], d: &[T]) {
        let w = self.width;
        let at = (y % TAPS.len()) * w;
        let [mx, my, xx, xy, yy] = self.sums.each_mut().map(|v| &mut v[at..at + w]);
        let (s, d) = (&s[..w], &d[..w]);
        let sample = |row: &[T], i: usize| row[i].into() as i32;
        // Border columns: only the taps inside the row.
        let border = (0..RADIUS.min(w)).chain(w.saturating_sub(RADIUS).max(RADIUS)..w);
        for x in border {
            let mut m = [0.0; 5];
            for (i, t) in taps_inside(x, w) {
                let p = tap_products(t, sample(s, i), sample(d, i));
                m.iter_mut().zip(p).for_each(|(m, p)| *m += p);
            }
            [mx[x], my[x], xx[x], xy[x], yy[x]] = m;
        }
        if w <= 2 * RADIUS {
            return;
        }
        // Interior: all 9 taps. `t * a * a` wraps as `t * (a * a)` does
        // (both modulo 2^32), so each product is taken once per sample.
        let [ps, pd, pss, psd, pdd] = self.products.each_mut().map(|p| &mut p[..w]);
        for x in 0..w {
            let (a, b) = (s[x].into() as i32, d[x].into() as i32);
            [ps[x], pd[x]] = [a, b];
            [pss[x], psd[x], pdd[x]] = [a.wrapping_mul(a), a.wrapping_mul(b), b.wrapping_mul(b)];
        }
        let n = w - 2 * RADIUS;
        for (sums, p) in [mx, my, xx, xy, yy].into_iter().zip(&self.products) {
            let p = &p[..w];
            for (x, out) in sums[RADIUS..RADIUS + n].iter_mut().enumerate() {
                let taps: [f64; 9] = std::array::from_fn(|k| TAPS[k].wrapping_mul(p[x + k]) as f64);
                *out = taps.iter().sum();
            }
        }
    }

    /// Adds the terms of output row `y` of a `height`-row picture (rows
    /// `y - 4 ..= y + 4` inside the picture already pushed) to `sums`, in
    /// raster order.
    #[inline(always)]
    fn add_output_row(
        &mut self,
        y: usize,
        height: usize,
        out: &SsimOutputs,
        sums: &mut (f64, f64),
    ) {
        let w = self.width;
        let mut row_weight = 0.0;
        if y >= RADIUS && y + RADIUS < height {
            // All 9 rows: one pass per moment (sums of exact integers, so
            // any order gives C's).
            row_weight = 256.0;
            let at: [usize; 9] = std::array::from_fn(|k| ((y + k - RADIUS) % TAPS.len()) * w);
            for (col, moment) in self.cols.iter_mut().zip(&self.sums) {
                let rows: [&[f64]; 9] = at.map(|a| &moment[a..a + w]);
                for (x, c) in col[..w].iter_mut().enumerate() {
                    let taps: [f64; 9] = std::array::from_fn(|k| TAPS[k] as f64 * rows[k][x]);
                    *c = taps.iter().sum();
                }
            }
        } else {
            for c in &mut self.cols {
                c.fill(0.0);
            }
            for (r, t) in taps_inside(y, height) {
                let (at, t) = ((r % TAPS.len()) * w, t as f64);
                row_weight += t;
                for (col, moment) in self.cols.iter_mut().zip(&self.sums) {
                    for (c, &v) in col.iter_mut().zip(&moment[at..at + w]) {
                        *c += t * v;
                    }
                }
            }
        }
        let [mx, my, xx, xy, yy] = self.cols.each_ref().map(|c| &c[..w]);
        let weight = &self.col_weight[..w];
        for (x, term) in self.terms[..w].iter_mut().enumerate() {
            let wt = weight[x] * row_weight;
            *term = out.term(mx[x], my[x], xx[x], xy[x], yy[x], wt);
        }
        // Raster order, as Xiph sums.
        for (term, &cw) in self.terms.iter().zip(weight) {
            sums.0 += term;
            sums.1 += cw * row_weight;
        }
    }
}

struct IntegerSsim {
    outputs: SsimOutputs,
    format: PictureFormat,
    rows: RowMoments,
}

impl IntegerSsim {
    /// `(sum(w ssim), sum(w))` over every pixel of two luma planes.
    fn sums<T: Sample>(&mut self, s: &PlaneRef<'_, T>, d: &PlaneRef<'_, T>) -> (f64, f64) {
        #[cfg(target_arch = "x86_64")]
        if crate::cpu::has_avx2() {
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { sums_avx2(&mut self.rows, &self.outputs, s, d) };
        }
        sums_portable(&mut self.rows, &self.outputs, s, d)
    }
}

/// The same code compiled for AVX2 (4 double lanes; no FMA, so every
/// product is rounded apart as in C).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sums_avx2<T: Sample>(
    rows: &mut RowMoments,
    out: &SsimOutputs,
    s: &PlaneRef<'_, T>,
    d: &PlaneRef<'_, T>,
) -> (f64, f64) {
    sums_portable(rows, out, s, d)
}

#[inline(always)]
fn sums_portable<T: Sample>(
    rows: &mut RowMoments,
    out: &SsimOutputs,
    s: &PlaneRef<'_, T>,
    d: &PlaneRef<'_, T>,
) -> (f64, f64) {
    let (w, h) = (s.width, s.height);
    rows.reset(w);
    let mut sums = (0.0, 0.0);
    let mut pushed = 0;
    for y in 0..h {
        // Output row y needs input rows up to y + 4.
        while pushed < h.min(y + RADIUS + 1) {
            rows.push_row(pushed, s.row(pushed), d.row(pushed));
            pushed += 1;
        }
        rows.add_output_row(y, h, out, &mut sums);
    }
    sums
}

impl Extractor for IntegerSsim {
    fn name(&self) -> &'static str {
        NAME
    }

    fn planes(&self) -> PlaneMask {
        PlaneMask::LUMA
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        if *frame.reference.format() != self.format || *frame.distorted.format() != self.format {
            return Err(Error::PictureMismatch(format!(
                "{NAME} was set up for {} pictures",
                self.format
            )));
        }
        let (term, weight) = match (
            frame.reference.plane(PlaneId::Y),
            frame.distorted.plane(PlaneId::Y),
        ) {
            (PlaneSamples::U8(s), PlaneSamples::U8(d)) => self.sums(&s, &d),
            (PlaneSamples::U16(s), PlaneSamples::U16(d)) => self.sums(&s, &d),
            _ => {
                return Err(Error::PictureMismatch(format!(
                    "{NAME}: reference and distorted luma differ in sample width"
                )))
            }
        };
        self.outputs.emit(frame.index, term, weight, sink);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taps_are_xiphs_gaussian() {
        // gaussian_filter_init(1.5, 5): outer taps rounded, centre the rest.
        let scale = 1.0 / ((2.0 * std::f64::consts::PI).sqrt() * 1.5);
        for k in 1..=4usize {
            let t = (256.0 * scale * (-0.5 / (1.5 * 1.5) * (k * k) as f64).exp() + 0.5) as i32;
            assert_eq!(TAPS[4 + k], t);
            assert_eq!(TAPS[4 - k], t);
        }
        assert_eq!(TAPS.iter().sum::<i32>(), 256);
    }

    /// Xiph's loops written plainly: per pixel, `int` products summed
    /// into `int64_t` row moments, then `int64_t` column sums.
    fn plain_ssim(s: &[u16], d: &[u16], w: usize, h: usize, bits: u8) -> f64 {
        let format = PictureFormat::new(
            w as u32,
            h as u32,
            crate::picture::ChromaSubsampling::Yuv444,
            bits,
        )
        .unwrap();
        let out =
            SsimOutputs::create(&Options::resolve(NAME, &OPTIONS, &[]).unwrap(), &format).unwrap();
        let row = |y: usize, x: usize| {
            let mut m = [0i64; 6];
            for (i, t) in taps_inside(x, w) {
                let (a, b) = (s[y * w + i] as i32, d[y * w + i] as i32);
                let p = [
                    t * a,
                    t * b,
                    (t * a).wrapping_mul(a),
                    (t * a).wrapping_mul(b),
                    (t * b).wrapping_mul(b),
                    t,
                ];
                m.iter_mut().zip(p).for_each(|(m, p)| *m += p as i64);
            }
            m
        };
        let (mut sum, mut weight) = (0.0, 0.0);
        for y in 0..h {
            for x in 0..w {
                let mut m = [0i64; 6];
                for (r, t) in taps_inside(y, h) {
                    m.iter_mut()
                        .zip(row(r, x))
                        .for_each(|(m, v)| *m += t as i64 * v);
                }
                let [mx, my, xx, xy, yy, w] = m;
                let m = Moments {
                    mx,
                    my,
                    xx,
                    xy,
                    yy,
                    w,
                };
                sum += out.window_term(&m);
                weight += m.w as f64;
            }
        }
        sum / weight
    }

    #[test]
    fn row_and_column_sums_equal_xiphs_loops_at_every_depth() {
        let mut seed = 7u64;
        let mut next = |max: u32| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            ((seed >> 33) as u32 % (max + 1)) as u16
        };
        for bits in [8u8, 10, 12, 16] {
            let peak = (1u32 << bits) - 1;
            for (w, h) in [(23, 17), (9, 9), (5, 12)] {
                let s: Vec<u16> = (0..w * h).map(|_| next(peak)).collect();
                // A distorted copy: near the reference, and some far.
                let d: Vec<u16> = s
                    .iter()
                    .map(|&v| {
                        if next(3) == 0 {
                            next(peak)
                        } else {
                            v / 2 + v / 3
                        }
                    })
                    .collect();
                let format = PictureFormat::new(
                    w as u32,
                    h as u32,
                    crate::picture::ChromaSubsampling::Yuv444,
                    bits,
                )
                .unwrap();
                let mut x = IntegerSsim {
                    outputs: SsimOutputs::create(
                        &Options::resolve(NAME, &OPTIONS, &[]).unwrap(),
                        &format,
                    )
                    .unwrap(),
                    format,
                    rows: RowMoments::default(),
                };
                let plane = |data| PlaneRef {
                    data,
                    width: w,
                    height: h,
                    stride: w,
                };
                let (sum, weight) = x.sums(&plane(&s[..]), &plane(&d[..]));
                let expected = plain_ssim(&s, &d, w, h, bits);
                assert_eq!(sum / weight, expected, "{bits} bits {w}x{h}");
            }
        }
    }

    #[test]
    fn weight_sum_is_the_raster_order_sum() {
        for (w, h) in [(1, 1), (5, 12), (321, 179), (1920, 1080)] {
            let mut raster = 0.0;
            for y in 0..h {
                for x in 0..w {
                    raster += inside_weight(x, w) as f64 * inside_weight(y, h) as f64;
                }
            }
            assert_eq!(weight_sum(w, h), raster, "{w}x{h}");
        }
    }

    #[test]
    fn border_windows_keep_only_inside_taps() {
        assert_eq!(inside_weight(0, 100), 68 + 55 + 28 + 9 + 2);
        assert_eq!(inside_weight(50, 100), 256);
        assert_eq!(inside_weight(2, 3), 68 + 55 + 28);
    }
}
