//! Per-pixel banding contrast ("c-values", libvmaf's `calculate_c_values`).
//!
//! For every masked pixel, CAMBI counts, in the square window around it,
//! the masked samples equal to its own value (p0) and those one to
//! `num_diffs` codes above or below (p1, p2). A visible step with many
//! samples on both sides is a band edge: the c-value is the largest
//! `weight[d] * p0 * p / (p0 + p)` over the steps `d`.
//!
//! The counts come from one histogram per column (`hist[value][column]`,
//! covering the columns of the window around it), slid down the picture a
//! row at a time: each sample entering or leaving the window adds or
//! removes one over the columns it covers. Only values that can take part
//! in a visible step are counted (the "band"); the others can never make a
//! c-value non-zero.

use super::plane::Plane;
use super::pooling::Survey;
#[cfg(target_arch = "x86_64")]
use super::slide_runs::SPARE_CELLS;
use crate::cpu::simd_dispatch;

/// Counters after the histograms (the vector code's blocks and gathers
/// read past the last row; none runs here).
#[cfg(not(target_arch = "x86_64"))]
const SPARE_CELLS: usize = 0;

/// Contrast weights for steps of 1, 2, ... codes (suprathreshold response).
pub(crate) const CONTRAST_WEIGHTS: [i32; 32] = [
    1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9,
];

/// Key of a sample that is not counted.
pub(super) const UNCOUNTED: u16 = u16::MAX;

/// Number of reciprocals in libvmaf's `reciprocal_lut` (`p0 + p` indexes it).
pub const RECIPROCAL_LUT_SIZE: usize = 4226;

/// What the c-value of a sample depends on besides the counts, fixed per
/// extractor instance.
#[derive(Debug, Clone)]
pub struct ContrastTables {
    /// Lowest counted sample value.
    band_base: u16,
    /// Number of counted values from `band_base` on (0: none).
    band_size: usize,
    /// Per counted value: bit `d` is set when a step of `d + 1` codes is
    /// visible from it and reaches above the visibility luma.
    active_steps: Vec<u32>,
    /// Per step `d`, the first and last counted value (as histogram rows)
    /// from which it is visible: `active_steps` by step rather than by
    /// value (each step's values are one interval); empty as `(0, -1)`.
    step_rows: Vec<(i32, i32)>,
    /// libvmaf's `reciprocal_lut`: the single-precision reciprocal of each
    /// count total, as its source spells it (9 significant digits of
    /// `1 / i`, rounded to `float` by the compiler); entry 0 is 0.
    reciprocal: Vec<f32>,
}

impl ContrastTables {
    /// `tvi[d]` is the largest code at which a step of `d + 1` codes stays
    /// invisible; `vlt_luma` the visibility luma (0: no limit).
    pub fn new(num_diffs: usize, tvi: &[i32], vlt_luma: u16) -> Self {
        debug_assert_eq!(tvi.len(), num_diffs);
        let nd = num_diffs as i32;
        // libvmaf works on "adjusted" values (sample + num_diffs): the
        // thresholds are stored adjusted, while the visibility luma is
        // compared with adjusted values as it is, unadjusted.
        let tvi_adjusted: Vec<i32> = tvi
            .iter()
            .map(|&t| i32::from((t as u16).wrapping_add(num_diffs as u16)))
            .collect();
        let base = (i32::from(vlt_luma) - 3 * nd + 1).max(0);
        let top = tvi_adjusted[num_diffs - 1];
        // Negative when the visibility luma lies above every visible step:
        // libvmaf's 16-bit size then wraps round, and it scores 0 (no value
        // counted) or, on some pictures, crashes; an empty band here, so 0
        // (ADR 0005).
        let band_size = (top + 1 - base).max(0) as usize;
        let active_steps = (0..band_size as i32)
            .map(|compact| {
                let value = base + compact + nd;
                (0..num_diffs).fold(0u32, |bits, d| {
                    let visible = value <= tvi_adjusted[d];
                    let above = value + d as i32 + 1 > i32::from(vlt_luma);
                    bits | (u32::from(visible && above) << d)
                })
            })
            .collect::<Vec<u32>>();
        let step_rows = (0..num_diffs)
            .map(|d| {
                let rows = || (0..band_size).filter(|&r| active_steps[r] & (1 << d) != 0);
                match (rows().next(), rows().next_back()) {
                    (Some(first), Some(last)) => {
                        debug_assert_eq!(
                            rows().count(),
                            last + 1 - first,
                            "step {d} not one interval"
                        );
                        (first as i32, last as i32)
                    }
                    _ => (0, -1),
                }
            })
            .collect();
        let reciprocal = (0..RECIPROCAL_LUT_SIZE)
            .map(|i| {
                if i == 0 {
                    0.0
                } else {
                    format!("{:.8e}", 1.0 / i as f64)
                        .parse::<f32>()
                        .unwrap_or(0.0)
                }
            })
            .collect();
        Self {
            band_base: base as u16,
            band_size,
            active_steps,
            step_rows,
            reciprocal,
        }
    }

    /// Lowest counted sample value.
    pub(crate) fn band_base(&self) -> u16 {
        self.band_base
    }

    /// Number of counted values (histogram rows).
    pub(crate) fn band_size(&self) -> usize {
        self.band_size
    }

    /// Per counted value, the bit set of visible steps.
    pub(crate) fn active_steps(&self) -> &[u32] {
        &self.active_steps
    }

    /// Per step, the first and last histogram row it is visible from
    /// (`(0, -1)` where none).
    pub(crate) fn step_rows(&self) -> &[(i32, i32)] {
        &self.step_rows
    }

    /// libvmaf's reciprocal table.
    pub(crate) fn reciprocal(&self) -> &[f32] {
        &self.reciprocal
    }

    /// The histogram row a sample is counted in, or [`UNCOUNTED`] when it
    /// is unmasked or outside the band (branch-free, so it vectorizes).
    #[inline(always)]
    fn key(&self, value: u16, mask: u16) -> u16 {
        let row = value.wrapping_sub(self.band_base);
        if (mask != 0) & (usize::from(row) < self.band_size) {
            row
        } else {
            UNCOUNTED
        }
    }
}

/// Scratch for the c-values: the sliding histograms (one row of `width`
/// counters per counted value, then spare counters for the vector slide's
/// blocks and the vector row's 32-bit gathers) and the histogram row of
/// every sample.
#[derive(Debug, Clone, Default)]
pub struct Histograms {
    counts: Vec<u16>,
    keys: Vec<u16>,
}

impl Histograms {
    /// Scratch for planes of `stride` x `rows` samples.
    pub fn new(stride: usize, rows: usize, tables: &ContrastTables) -> Self {
        Self {
            counts: vec![0; stride * tables.band_size + SPARE_CELLS],
            keys: vec![0; stride * rows],
        }
    }
}

/// One scale's pass: the sample keys and the window.
struct Pass<'a> {
    tables: &'a ContrastTables,
    /// Keys of the rows the loops read, `key_cols` per row.
    keys: &'a [u16],
    key_cols: usize,
    width: usize,
    pad: usize,
    /// The code that slides the window and makes the rows of c-values.
    simd: Simd,
}

/// Which code slides the window and makes the rows of c-values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Simd {
    Portable,
    /// `c_values_avx2` (the CPU must have AVX2).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    Avx2,
    /// `c_values_avx512` (the CPU must have AVX-512 F, BW and VL).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    Avx512,
}

impl Simd {
    /// The fastest this CPU runs.
    fn best() -> Self {
        if cfg!(target_arch = "x86_64") && crate::cpu::has_avx512() {
            Self::Avx512
        } else if cfg!(target_arch = "x86_64") && crate::cpu::has_avx2() {
            Self::Avx2
        } else {
            Self::Portable
        }
    }
}

impl Pass<'_> {
    /// Keys of `row`; `None` past the buffer (libvmaf would read outside
    /// it).
    #[inline(always)]
    fn key_row(&self, row: usize) -> Option<&[u16]> {
        self.keys
            .get(row * self.key_cols..(row + 1) * self.key_cols)
    }

    /// Adds (or removes) a run of equal samples at columns `start..=end`
    /// to histogram row `b`: column `x` gains the number of run samples
    /// within `pad` of it. Same counts as one window-wide increment per
    /// sample, in `O(run + window)` instead of `O(run * window)`.
    #[inline(always)]
    fn apply_run(&self, counts: &mut [u16], b: u16, start: usize, end: usize, add: bool) {
        let b = usize::from(b);
        let row = &mut counts[b * self.width..(b + 1) * self.width];
        let lo = start.saturating_sub(self.pad);
        let hi = (end + self.pad + 1).min(self.width);
        let span = &mut row[lo..hi];
        if start == end {
            if add {
                increment(span);
            } else {
                decrement(span);
            }
            return;
        }
        // Coverage of column x: min(x - (start - pad), (end + pad) - x, run, window) + 1
        // (the first two grow and shrink by one per column).
        let first = start as i32 - self.pad as i32;
        let last = (end + self.pad) as i32;
        let peak = ((end - start + 1).min(2 * self.pad + 1)) as i32;
        let rise = lo as i32 - first + 1;
        let fall = last - lo as i32 + 1;
        if add {
            for (i, c) in span.iter_mut().enumerate() {
                let i = i as i32;
                let cover = rise.wrapping_add(i).min(fall.wrapping_sub(i)).min(peak);
                *c = c.wrapping_add(cover as u16);
            }
        } else {
            for (i, c) in span.iter_mut().enumerate() {
                let i = i as i32;
                let cover = rise.wrapping_add(i).min(fall.wrapping_sub(i)).min(peak);
                *c = c.wrapping_sub(cover as u16);
            }
        }
    }

    /// Adds or removes every counted sample of `row`, run by run.
    fn update_row(&self, counts: &mut [u16], row: usize, add: bool) {
        let Some(keys) = self.key_row(row) else {
            return;
        };
        let n = keys.len();
        let mut x = 0;
        while x < n {
            let key = keys[x];
            let end = x + 1 + keys[x + 1..].iter().take_while(|&&k| k == key).count();
            if key != UNCOUNTED {
                self.apply_run(counts, key, x, end - 1, add);
            }
            x = end;
        }
    }

    /// Moves the window down: `leaving` goes out, `entering` comes in,
    /// run by run of equal (leaving, entering) pairs. A column where both
    /// carry the same key is unchanged.
    fn slide(&self, counts: &mut [u16], leaving: usize, entering: usize) {
        let (Some(out), Some(inc)) = (self.key_row(leaving), self.key_row(entering)) else {
            // Both rows lie in the picture whenever libvmaf slides.
            self.update_row(counts, leaving, false);
            self.update_row(counts, entering, true);
            return;
        };
        #[cfg(target_arch = "x86_64")]
        {
            let (width, pad, band_size) = (self.width, self.pad, self.tables.band_size);
            match self.simd {
                // SAFETY: `simd` names code the CPU runs (`Simd`).
                Simd::Avx512 => unsafe {
                    super::c_values_avx512::slide(counts, out, inc, width, pad, band_size);
                    return;
                },
                // SAFETY: as above.
                Simd::Avx2 => unsafe {
                    super::c_values_avx2::slide(counts, out, inc, width, pad, band_size);
                    return;
                },
                Simd::Portable => {}
            }
        }
        let n = out.len();
        let mut x = 0;
        while x < n {
            let (o, i) = (out[x], inc[x]);
            let same = out[x + 1..]
                .iter()
                .zip(&inc[x + 1..])
                .take_while(|(&a, &b)| a == o && b == i);
            let end = x + 1 + same.count();
            if o != i {
                if o != UNCOUNTED {
                    self.apply_run(counts, o, x, end - 1, false);
                }
                if i != UNCOUNTED {
                    self.apply_run(counts, i, x, end - 1, true);
                }
            }
            x = end;
        }
    }

    /// C-values of `row` from the current counts (0 where uncounted),
    /// adding the non-zero ones to `survey`.
    fn row_values(&self, counts: &[u16], row: usize, out: &mut [f32], survey: &mut Survey) {
        let tables = self.tables;
        let width = self.width;
        let Some(keys) = self.key_row(row) else {
            return;
        };
        #[cfg(target_arch = "x86_64")]
        match self.simd {
            // SAFETY: `simd` names code the CPU runs (`Simd`).
            Simd::Avx512 => unsafe {
                super::c_values_avx512::row_values(tables, counts, keys, out, survey);
                return;
            },
            // SAFETY: as above.
            Simd::Avx2 => unsafe {
                super::c_values_avx2::row_values(tables, counts, keys, out, survey);
                return;
            },
            Simd::Portable => {}
        }
        for (x, (o, &key)) in out.iter_mut().zip(&keys[..width]).enumerate() {
            if key == UNCOUNTED {
                *o = 0.0;
                continue;
            }
            let b = usize::from(key);
            // Counts are at most window² (< 2^14), so nothing here wraps.
            let count = |r: usize| u32::from(counts[r.wrapping_mul(width).wrapping_add(x)]);
            let p0 = count(b);
            let mut steps = tables.active_steps[b];
            let mut c_value = 0.0f32;
            while steps != 0 {
                let d = steps.trailing_zeros() as usize;
                steps &= steps.wrapping_sub(1);
                let above = count(b.wrapping_add(d + 1));
                let below = if b > d {
                    count(b.wrapping_sub(d + 1))
                } else {
                    0
                };
                let p = if above > below { above } else { below };
                let product = (CONTRAST_WEIGHTS[d] as u32)
                    .wrapping_mul(p0)
                    .wrapping_mul(p) as i32 as f32;
                let value = product * tables.reciprocal[p.wrapping_add(p0) as usize];
                if value > c_value {
                    c_value = value;
                }
            }
            *o = c_value;
            if c_value != 0.0 {
                survey.add(c_value);
            }
        }
    }
}

simd_dispatch! {
    /// The histogram row of each sample of a row (`UNCOUNTED` where
    /// unmasked or outside the band).
    fn key_row_of(tables: &ContrastTables, samples: &[u16], masked: &[u16], keys: &mut [u16]) => key_row_impl
}

#[inline(always)]
fn key_row_impl(tables: &ContrastTables, samples: &[u16], masked: &[u16], keys: &mut [u16]) {
    for ((k, &v), &m) in keys.iter_mut().zip(samples).zip(masked) {
        *k = tables.key(v, m);
    }
}

#[inline(always)]
fn increment(counts: &mut [u16]) {
    for c in counts {
        *c = c.wrapping_add(1);
    }
}

#[inline(always)]
fn decrement(counts: &mut [u16]) {
    for c in counts {
        *c = c.wrapping_sub(1);
    }
}

/// Computes the c-values of the `width` x `height` picture into
/// `c_values[..width * height]` (row-major, 0 where unmasked) with a
/// `window` x `window` neighbourhood, and returns their survey for the
/// pooling.
///
/// The row order follows libvmaf's three loops, including what they do
/// when the picture is not taller than the window (rows computed twice,
/// rows past the picture read from the buffer).
#[allow(clippy::too_many_arguments)]
pub fn compute(
    image: &Plane,
    mask: &Plane,
    tables: &ContrastTables,
    hist: &mut Histograms,
    window: usize,
    width: usize,
    height: usize,
    c_values: &mut [f32],
) -> Survey {
    compute_rows(
        image,
        mask,
        tables,
        hist,
        window,
        width,
        height,
        c_values,
        Simd::best(),
    )
}

/// [`compute`], with the window slid and the rows of c-values made by the
/// code `simd` names (which the CPU must run); the unit test runs each.
#[allow(clippy::too_many_arguments)]
fn compute_rows(
    image: &Plane,
    mask: &Plane,
    tables: &ContrastTables,
    hist: &mut Histograms,
    window: usize,
    width: usize,
    height: usize,
    c_values: &mut [f32],
    simd: Simd,
) -> Survey {
    let pad = window >> 1;
    let c_values = &mut c_values[..width * height];
    if tables.band_size == 0 {
        c_values.fill(0.0);
        return Survey::default();
    }
    let counts = &mut hist.counts[..width * tables.band_size + SPARE_CELLS];
    counts.fill(0);
    // libvmaf visits the first `pad` columns when the row is narrower than
    // that, reading what earlier steps left in the buffer; likewise the
    // first `pad` rows.
    let key_cols = width.max(pad).min(image.stride);
    let key_rows = height.max(pad).min(image.rows);
    let keys = &mut hist.keys[..key_cols * key_rows];
    for (y, key_row) in keys.chunks_exact_mut(key_cols).enumerate() {
        let samples = &image.row(y)[..key_cols];
        let masked = &mask.row(y)[..key_cols];
        key_row_of(tables, samples, masked, key_row);
    }
    let pass = Pass {
        tables,
        keys,
        key_cols,
        width,
        pad,
        simd,
    };
    let mut survey = Survey::default();
    let mut values_of = |counts: &[u16], row: usize, survey: &mut Survey| {
        if row < height {
            pass.row_values(
                counts,
                row,
                &mut c_values[row * width..(row + 1) * width],
                survey,
            );
        }
    };
    for row in 0..pad {
        pass.update_row(counts, row, true);
    }
    for row in 0..=pad {
        if row + pad < height {
            pass.update_row(counts, row + pad, true);
        }
        values_of(counts, row, &mut survey);
    }
    for row in pad + 1..height.saturating_sub(pad) {
        pass.slide(counts, row - pad - 1, row + pad);
        values_of(counts, row, &mut survey);
    }
    // Rows above 0 only; libvmaf would write before its buffer otherwise.
    for row in height.saturating_sub(pad)..height {
        if row > pad {
            pass.update_row(counts, row - pad - 1, false);
        }
        values_of(counts, row, &mut survey);
    }
    if height < 2 * pad + 1 {
        // Some rows were computed twice: survey the final values.
        survey = Survey::of(&c_values[..width * height]);
    }
    survey
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::cambi::luminance::{tvi_for_diff, Eotf};

    /// libvmaf's `calculate_c_values` and `c_value_pixel`, loop for loop,
    /// one window-wide histogram update per sample (the test oracle).
    fn reference(
        image: &Plane,
        mask: &Plane,
        t: &ContrastTables,
        window: usize,
        width: usize,
        height: usize,
    ) -> Vec<f32> {
        let (w, h, pad) = (width as i64, height as i64, (window >> 1) as i64);
        let stride = image.stride as i64;
        let size = t.band_size as i64;
        let mut hist = vec![0u16; width * t.band_size];
        let mut c = vec![0f32; width * height];
        let counted = |i: i64, j: i64| -> Option<i64> {
            let at = (i * stride + j) as usize;
            if mask.data[at] == 0 {
                return None;
            }
            let row = i64::from(image.data[at]) - i64::from(t.band_base);
            (0..size).contains(&row).then_some(row)
        };
        let update = |hist: &mut Vec<u16>, i: i64, j: i64, edge: bool, add: bool| {
            if let Some(row) = counted(i, j) {
                let (lo, hi) = if edge {
                    ((j - pad).max(0), (j + pad + 1).min(w))
                } else {
                    (j - pad, j + pad + 1)
                };
                for x in lo..hi {
                    let cell = &mut hist[(row * w + x) as usize];
                    *cell = if add {
                        cell.wrapping_add(1)
                    } else {
                        cell.wrapping_sub(1)
                    };
                }
            }
        };
        // One row of samples, split in libvmaf's three column loops.
        let row_update = |hist: &mut Vec<u16>, i: i64, add: bool| {
            for j in 0..pad {
                update(hist, i, j, true, add);
            }
            for j in pad..w - pad - 1 {
                update(hist, i, j, false, add);
            }
            for j in (w - pad - 1).max(pad)..w {
                update(hist, i, j, true, add);
            }
        };
        let nd = t
            .active_steps
            .iter()
            .map(|s| 32 - s.leading_zeros())
            .max()
            .unwrap_or(0) as i64;
        let row_values = |hist: &Vec<u16>, c: &mut Vec<f32>, i: i64| {
            if !(0..h).contains(&i) {
                return;
            }
            for x in 0..w {
                let at = (i * stride + x) as usize;
                if mask.data[at] == 0 {
                    continue;
                }
                let compact = i64::from(image.data[at]) - i64::from(t.band_base);
                let mut value = 0.0f32;
                if (0..size).contains(&compact) {
                    let get = |r: i64| u32::from(hist[(r * w + x) as usize]);
                    let p0 = get(compact);
                    for d in 0..nd {
                        if t.active_steps[compact as usize] & (1 << d) == 0 {
                            continue;
                        }
                        let p1 = get(compact + d + 1);
                        let p2 = if compact > d { get(compact - d - 1) } else { 0 };
                        let v = if p1 > p2 {
                            (CONTRAST_WEIGHTS[d as usize] as u32 * p0 * p1) as f32
                                * t.reciprocal[(p1 + p0) as usize]
                        } else {
                            (CONTRAST_WEIGHTS[d as usize] as u32 * p0 * p2) as f32
                                * t.reciprocal[(p2 + p0) as usize]
                        };
                        if v > value {
                            value = v;
                        }
                    }
                }
                c[(i * w + x) as usize] = value;
            }
        };
        for i in 0..pad {
            row_update(&mut hist, i, true);
        }
        for i in 0..pad + 1 {
            if i + pad < h {
                row_update(&mut hist, i + pad, true);
            }
            row_values(&hist, &mut c, i);
        }
        for i in pad + 1..h - pad {
            row_update(&mut hist, i - pad - 1, false);
            row_update(&mut hist, i + pad, true);
            row_values(&hist, &mut c, i);
        }
        for i in h - pad..h {
            if i > pad {
                row_update(&mut hist, i - pad - 1, false);
            }
            row_values(&hist, &mut c, i);
        }
        c
    }

    /// The codes this machine can run: the portable one, and the AVX2
    /// and AVX-512 ones where the CPU has them (said when it has not).
    fn row_kinds() -> Vec<Simd> {
        let mut kinds = vec![Simd::Portable];
        for (has, kind) in [
            (crate::cpu::has_avx2(), Simd::Avx2),
            (crate::cpu::has_avx512(), Simd::Avx512),
        ] {
            if cfg!(target_arch = "x86_64") && has {
                kinds.push(kind);
            } else {
                eprintln!("this CPU lacks {kind:?}: its c-value code is not checked");
            }
        }
        kinds
    }

    /// Banded ramps: runs of equal codes `run` to `run + 3` columns wide
    /// (`run` 3: a few steps apart), some noise, a mask with holes (one
    /// sample in 8, or in `8 * run` for longer runs).
    fn random_planes(
        stride: usize,
        rows: usize,
        base: u32,
        run: usize,
        seed: &mut u32,
    ) -> (Plane, Plane) {
        let mut next = || {
            *seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            *seed >> 16
        };
        let mut image = Plane::new(stride, rows);
        let mut mask = Plane::new(stride, rows);
        // A masked sample ends a run: longer runs, fewer holes.
        let holes = if run <= 3 { 8 } else { 8 * run as u32 };
        for y in 0..rows {
            for x in 0..stride {
                let ramp = base + ((x + 2 * y) / (run + y % 4)) as u32 % 12;
                let noise = next() % 16;
                image.data[y * stride + x] = (ramp + u32::from(noise == 0) * (noise % 3)) as u16;
                mask.data[y * stride + x] = u16::from(next() % holes != 0);
            }
        }
        (image, mask)
    }

    #[test]
    fn matches_libvmaf_loops_on_all_geometries() {
        let tvi: Vec<i32> = (1..=4)
            .map(|d| tvi_for_diff(Eotf::Bt1886, d, 0.019))
            .collect();
        let mut seed = 3u32;
        for (vlt, num_diffs, base) in [(0u16, 4usize, 200), (207, 4, 200), (0, 4, 0), (0, 1, 70)] {
            let tables = ContrastTables::new(num_diffs, &tvi[..num_diffs], vlt);
            // (stride, rows, width, height, window): the picture may be
            // smaller than the buffer (later scales) and than the window.
            // Long runs: each run's windows reach across several blocks.
            for &(stride, rows, width, height, window, run) in &[
                (40, 30, 40, 30, 9, 3),
                (300, 40, 300, 40, 65, 3),
                (300, 40, 277, 40, 65, 40),
                (200, 30, 200, 30, 33, 20),
                (40, 30, 33, 21, 9, 3),
                (64, 48, 64, 48, 33, 3),
                (64, 48, 12, 40, 33, 3),
                (64, 48, 40, 10, 33, 3),
                (64, 48, 7, 9, 33, 3),
                (64, 48, 1, 20, 17, 3),
                (64, 48, 20, 1, 17, 3),
                (30, 30, 5, 5, 5, 3),
            ] {
                let (image, mask) = random_planes(stride, rows, base, run, &mut seed);
                let expected = reference(&image, &mask, &tables, window, width, height);
                for simd in row_kinds() {
                    let mut hist = Histograms::new(stride, rows, &tables);
                    let mut c = vec![f32::NAN; stride * rows];
                    let survey = compute_rows(
                        &image, &mask, &tables, &mut hist, window, width, height, &mut c, simd,
                    );
                    let what = format!("{width}x{height} in {stride}x{rows}, window {window}, runs of {run}, vlt {vlt}, {num_diffs} steps, {simd:?} code");
                    for (i, (a, b)) in c[..width * height].iter().zip(&expected).enumerate() {
                        assert_eq!(a.to_bits(), b.to_bits(), "{what}: c-value {i}");
                    }
                    let direct = Survey::of(&expected);
                    assert_eq!(format!("{survey:?}"), format!("{direct:?}"), "{what}");
                }
                assert!(
                    expected.iter().any(|&v| v > 0.0),
                    "{width}x{height} in {stride}x{rows}, window {window}: no banding in the test picture"
                );
            }
        }
    }
}
