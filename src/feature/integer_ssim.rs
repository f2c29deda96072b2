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
//! spans, then column sums of those: 18 taps per moment and pixel.

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
        let w = m.w as f64;
        let c1 = self.peak_squared * (0.01 * 0.01) * w * w;
        let c2 = self.peak_squared * (0.03 * 0.03) * w * w;
        let (mx, my) = (m.mx as f64, m.my as f64);
        let mx2 = mx * mx;
        let mxy = mx * my;
        let my2 = my * my;
        w * (2.0 * mxy + c1) * (c2 + 2.0 * (m.xy as f64 * w - mxy))
            / ((mx2 + my2 + c1) * (m.xx as f64 * w - mx2 + m.yy as f64 * w - my2 + c2))
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
#[derive(Debug, Default)]
struct RowMoments {
    width: usize,
    /// `[moment][slot * width + x]`: mx, my, xx, xy, yy.
    sums: [Vec<i64>; 5],
    /// Horizontal weight of column `x` (the same for every row).
    col_weight: Vec<i64>,
    /// Column sums of the output row being scored, per moment.
    cols: [Vec<i64>; 5],
    /// `w ssim` of each window of that row.
    terms: Vec<f64>,
}

impl RowMoments {
    fn reset(&mut self, width: usize) {
        if self.width != width || self.col_weight.len() != width {
            self.width = width;
            for s in &mut self.sums {
                s.clear();
                s.resize(TAPS.len() * width, 0);
            }
            for c in &mut self.cols {
                c.resize(width, 0);
            }
            self.terms.resize(width, 0.0);
            self.col_weight = (0..width).map(|x| inside_weight(x, width)).collect();
        }
    }

    /// Stores the row sums of reference row `s` and distorted row `d` as
    /// row `y`. Products are C's `int` (they wrap only above 12 bits, as
    /// in C); sums are 64-bit.
    fn push_row<T: Sample>(&mut self, y: usize, s: &[T], d: &[T]) {
        let w = self.width;
        let at = (y % TAPS.len()) * w;
        let [mx, my, xx, xy, yy] = self.sums.each_mut().map(|v| &mut v[at..at + w]);
        let (s, d) = (&s[..w], &d[..w]);
        let sample = |row: &[T], i: usize| row[i].into() as i32;
        // Border columns: only the taps inside the row.
        let border = (0..RADIUS.min(w)).chain(w.saturating_sub(RADIUS).max(RADIUS)..w);
        for x in border {
            let mut m = [0i64; 5];
            for (i, t) in taps_inside(x, w) {
                let (a, b) = (sample(s, i), sample(d, i));
                let (ta, tb) = (t * a, t * b);
                m[0] += ta as i64;
                m[1] += tb as i64;
                m[2] += ta.wrapping_mul(a) as i64;
                m[3] += ta.wrapping_mul(b) as i64;
                m[4] += tb.wrapping_mul(b) as i64;
            }
            [mx[x], my[x], xx[x], xy[x], yy[x]] = m;
        }
        if w <= 2 * RADIUS {
            return;
        }
        // Interior: every tap inside; tap-outer loops over the row vectorize.
        let n = w - 2 * RADIUS;
        let [mx, my, xx, xy, yy] = [mx, my, xx, xy, yy].map(|v| &mut v[RADIUS..RADIUS + n]);
        for v in [&mut *mx, &mut *my, &mut *xx, &mut *xy, &mut *yy] {
            v.fill(0);
        }
        for (k, &t) in TAPS.iter().enumerate() {
            let (s, d) = (&s[k..k + n], &d[k..k + n]);
            for x in 0..n {
                let (a, b) = (s[x].into() as i32, d[x].into() as i32);
                let (ta, tb) = (t * a, t * b);
                mx[x] += ta as i64;
                my[x] += tb as i64;
                xx[x] += ta.wrapping_mul(a) as i64;
                xy[x] += ta.wrapping_mul(b) as i64;
                yy[x] += tb.wrapping_mul(b) as i64;
            }
        }
    }

    /// Adds the terms of output row `y` of a `height`-row picture (rows
    /// `y - 4 ..= y + 4` inside the picture already pushed) to `sums`, in
    /// raster order.
    fn add_output_row(
        &mut self,
        y: usize,
        height: usize,
        out: &SsimOutputs,
        sums: &mut (f64, f64),
    ) {
        let w = self.width;
        let mut row_weight = 0i64;
        for c in &mut self.cols {
            c.fill(0);
        }
        for (r, t) in taps_inside(y, height) {
            let (at, t) = ((r % TAPS.len()) * w, t as i64);
            row_weight += t;
            for (col, moment) in self.cols.iter_mut().zip(&self.sums) {
                for (c, &v) in col.iter_mut().zip(&moment[at..at + w]) {
                    *c += t * v;
                }
            }
        }
        let [mx, my, xx, xy, yy] = self.cols.each_ref().map(|c| &c[..w]);
        for (x, term) in self.terms.iter_mut().enumerate() {
            let m = Moments {
                mx: mx[x],
                my: my[x],
                xx: xx[x],
                xy: xy[x],
                yy: yy[x],
                w: self.col_weight[x] * row_weight,
            };
            *term = out.window_term(&m);
        }
        // Raster order, as Xiph sums.
        for (term, &cw) in self.terms.iter().zip(&self.col_weight) {
            sums.0 += term;
            sums.1 += (cw * row_weight) as f64;
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
        let (w, h) = (s.width, s.height);
        self.rows.reset(w);
        let mut sums = (0.0, 0.0);
        let mut pushed = 0;
        for y in 0..h {
            // Output row y needs input rows up to y + 4.
            while pushed < h.min(y + RADIUS + 1) {
                self.rows.push_row(pushed, s.row(pushed), d.row(pushed));
                pushed += 1;
            }
            self.rows.add_output_row(y, h, &self.outputs, &mut sums);
        }
        sums
    }
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

    #[test]
    fn border_windows_keep_only_inside_taps() {
        assert_eq!(inside_weight(0, 100), 68 + 55 + 28 + 9 + 2);
        assert_eq!(inside_weight(50, 100), 256);
        assert_eq!(inside_weight(2, 3), 68 + 55 + 28);
    }
}
