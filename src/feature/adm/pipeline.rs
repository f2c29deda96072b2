//! The per-frame computation: the four wavelet scales of both pictures and,
//! per scale, the ADM numerator, denominator and AIM numerator.

use super::cm::{
    cube_norm, masked_sums, CoarseKernel, FineKernel, MaskScratch, ScaleKernel, RING_ROWS,
};
use super::csf::CsfConfig;
use super::decouple::{decouple_as_libvmaf, vector_decoupled, Row};
use super::den;
use super::dwt::{
    analyze_approx_pair, analyze_picture, Bands, CoarseScratch, Level, RowScratch, Taps,
};
use super::region::Region;
use crate::picture::{HostPicture, PictureFormat, PlaneId, PlaneSamples};

/// Number of wavelet scales.
pub const SCALES: usize = 4;

/// Numerator, denominator and AIM numerator of one scale, in float as
/// libvmaf keeps them.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScaleScore {
    pub num: f32,
    pub den: f32,
    pub aim: f32,
}

/// Per-frame parameters from the extractor options.
#[derive(Debug, Clone, Copy)]
pub struct ScaleParams {
    pub gain_limit: f64,
    pub noise_weight: f64,
    pub skip_aim: bool,
    pub skip_scale0: bool,
}

/// The integer sums of one scale, before the float steps: the ADM and AIM
/// numerators (masked cube sums, per orientation) and the ADM denominator
/// (reference cube sums).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ScaleSums {
    pub num: [i64; 3],
    pub aim: [i64; 3],
    pub den: [u64; 3],
}

/// Band sizes (width, height) of the four scales of a `width` x `height`
/// picture: each level halves, rounding up.
pub(crate) fn band_sizes(width: usize, height: usize) -> [(usize, usize); SCALES] {
    let mut size = (width, height);
    std::array::from_fn(|_| {
        size = (size.0.div_ceil(2), size.1.div_ceil(2));
        size
    })
}

/// The fixed-point kernels, scored regions and CSF weights of every scale,
/// and the float steps that turn a scale's integer sums into its score
/// (shared by the CPU pipeline and the GPU extractor).
pub(crate) struct Scoring {
    pub params: ScaleParams,
    pub fine: FineKernel,
    pub coarse: [CoarseKernel; SCALES - 1],
    pub weights: [[f32; 3]; SCALES],
    pub regions: [Region; SCALES],
}

impl Scoring {
    pub(crate) fn new(format: &PictureFormat, csf: &CsfConfig, params: ScaleParams) -> Self {
        let sizes = band_sizes(format.width as usize, format.height as usize);
        let (fw, fh) = sizes[0];
        Self {
            params,
            fine: FineKernel::new(csf.scale0_fixed(), fw, fh),
            coarse: std::array::from_fn(|i| {
                let s = i + 1;
                CoarseKernel::new(csf.coarse_fixed(s), s, sizes[s].0, sizes[s].1)
            }),
            weights: std::array::from_fn(|s| csf.band_weights(s)),
            regions: sizes.map(|(w, h)| Region::scored(w, h)),
        }
    }

    /// The scores of every scale from their sums (`sums[0]` is ignored with
    /// `adm_skip_scale0`).
    pub(crate) fn scores(&self, sums: &[ScaleSums; SCALES]) -> [ScaleScore; SCALES] {
        std::array::from_fn(|s| match s {
            // libvmaf's placeholder denominator avoids a division by zero.
            0 if self.params.skip_scale0 => ScaleScore {
                num: 0.0,
                den: 1e-10,
                aim: 0.0,
            },
            0 => {
                let region = &self.regions[0];
                let den = den::weigh_fine(sums[0].den, region, self.weights[0]);
                self.finish(&self.fine, &sums[0], den, region)
            }
            _ => {
                let region = &self.regions[s];
                let den = den::weigh_coarse(sums[s].den, s, region, self.weights[s]);
                self.finish(&self.coarse[s - 1], &sums[s], den, region)
            }
        })
    }

    /// Cube norms of one scale's weighted sums.
    fn finish<K: ScaleKernel>(
        &self,
        kernel: &K,
        sums: &ScaleSums,
        den: [f32; 3],
        region: &Region,
    ) -> ScaleScore {
        let noise_weight = self.params.noise_weight;
        let den = cube_norm(den, region, noise_weight);
        let num = cube_norm(kernel.to_float(sums.num), region, noise_weight);
        // The sums are computed together; with adm_skip_aim libvmaf reports an
        // AIM numerator of 0.
        let aim = if self.params.skip_aim {
            0.0
        } else {
            cube_norm(kernel.to_float(sums.aim), region, 0.0)
        };
        ScaleScore { num, den, aim }
    }
}

/// Geometry of one scale: the DWT input's taps and the output band width.
struct Scale {
    taps: Taps,
    width: usize,
}

/// Per-picture buffers of the wavelet.
struct Pyramid {
    fine: Bands<i16>,
    coarse: Bands<i32>,
    /// Approximations of two successive scales (one is read while the next
    /// is written).
    approx: [Vec<i32>; 2],
}

impl Pyramid {
    fn new(fine_w: usize, fine_h: usize, coarse_w: usize, coarse_h: usize) -> Self {
        Self {
            fine: Bands::with_capacity(fine_w, fine_h),
            coarse: Bands::with_capacity(coarse_w, coarse_h),
            approx: [vec![0; fine_w * fine_h], vec![0; fine_w * fine_h]],
        }
    }

    /// The DWT input and outputs of a coarse scale: reads one approximation
    /// buffer and writes the other.
    fn level(&mut self, reads_first: bool) -> Level<'_> {
        let [a0, a1] = &mut self.approx;
        let (src, approx) = if reads_first { (&*a0, a1) } else { (&*a1, a0) };
        Level {
            src,
            approx,
            details: &mut self.coarse,
        }
    }
}

/// Rings of decoupled rows and scratch, allocated once for the largest
/// scale.
struct Work {
    fine_restored: Bands<i16>,
    fine_additive: Bands<i16>,
    coarse_restored: Bands<i32>,
    coarse_additive: Bands<i32>,
    mask: MaskScratch,
    fine_rows: RowScratch,
    coarse_rows: CoarseScratch,
}

/// Kernels, geometry and buffers for pictures of one format.
pub struct Pipeline {
    bit_depth: u32,
    scales: Vec<Scale>,
    scoring: Scoring,
    reference: Pyramid,
    distorted: Pyramid,
    work: Work,
}

impl Pipeline {
    /// A pipeline for `format` pictures (at least 33x33, checked by the
    /// caller) with CSF weights from `csf`.
    pub fn new(format: &PictureFormat, csf: &CsfConfig, params: ScaleParams) -> Self {
        let mut scales = Vec::with_capacity(SCALES);
        let (mut w, mut h) = (format.width as usize, format.height as usize);
        let mut heights = [0; SCALES];
        for height in heights.iter_mut() {
            let taps = Taps::new(w, h);
            (w, h) = (taps.cols.len(), taps.rows.len());
            *height = h;
            scales.push(Scale { taps, width: w });
        }
        let (fw, fh) = (scales[0].width, heights[0]);
        let (cw, ch) = (scales[1].width, heights[1]);
        Self {
            bit_depth: format.bit_depth as u32,
            scoring: Scoring::new(format, csf, params),
            scales,
            reference: Pyramid::new(fw, fh, cw, ch),
            distorted: Pyramid::new(fw, fh, cw, ch),
            work: Work {
                fine_restored: Bands::with_capacity(fw, RING_ROWS),
                fine_additive: Bands::with_capacity(fw, RING_ROWS),
                coarse_restored: Bands::with_capacity(cw, RING_ROWS),
                coarse_additive: Bands::with_capacity(cw, RING_ROWS),
                mask: MaskScratch::new(fw),
                fine_rows: RowScratch::new(format.width as usize),
                coarse_rows: CoarseScratch::new(fw),
            },
        }
    }

    /// The scores of every scale for one pair of pictures of the format the
    /// pipeline was made for.
    pub fn run(
        &mut self,
        reference: &HostPicture,
        distorted: &HostPicture,
    ) -> [ScaleScore; SCALES] {
        self.analyze_luma(reference, false);
        self.analyze_luma(distorted, true);
        let mut sums = [ScaleSums::default(); SCALES];
        if !self.scoring.params.skip_scale0 {
            sums[0] = self.sums_fine();
        }
        for (s, sums) in sums.iter_mut().enumerate().skip(1) {
            *sums = self.sums_coarse(s);
        }
        self.scoring.scores(&sums)
    }

    /// Scale-0 DWT of one picture's luma plane.
    fn analyze_luma(&mut self, picture: &HostPicture, distorted: bool) {
        let pyramid = if distorted {
            &mut self.distorted
        } else {
            &mut self.reference
        };
        let details = (!self.scoring.params.skip_scale0).then_some(&mut pyramid.fine);
        let (taps, scratch) = (&self.scales[0].taps, &mut self.work.fine_rows);
        let approx = &mut pyramid.approx[0];
        match picture.plane(PlaneId::Y) {
            PlaneSamples::U8(p) => {
                analyze_picture(&p, self.bit_depth, taps, scratch, approx, details)
            }
            PlaneSamples::U16(p) => {
                analyze_picture(&p, self.bit_depth, taps, scratch, approx, details)
            }
        }
    }

    fn sums_fine(&mut self) -> ScaleSums {
        let region = &self.scoring.regions[0];
        let work = &mut self.work;
        scale_sums(
            &self.scoring.fine,
            (&self.reference.fine, &self.distorted.fine),
            region,
            self.scoring.params.gain_limit,
            (&mut work.fine_restored, &mut work.fine_additive),
            &mut work.mask,
            |reference| den::fine_sums(reference, region),
        )
    }

    /// Scale `s` (1-3): DWT of both approximations of scale `s - 1`, then
    /// the sums.
    fn sums_coarse(&mut self, s: usize) -> ScaleSums {
        // Scale s reads the approximation of scale s - 1 and writes its own
        // into the other buffer.
        let reads_first = s % 2 == 1;
        analyze_approx_pair(
            self.scales[s - 1].width,
            s,
            &self.scales[s].taps,
            &mut self.work.coarse_rows,
            self.reference.level(reads_first),
            self.distorted.level(reads_first),
        );
        let region = &self.scoring.regions[s];
        let work = &mut self.work;
        scale_sums(
            &self.scoring.coarse[s - 1],
            (&self.reference.coarse, &self.distorted.coarse),
            region,
            self.scoring.params.gain_limit,
            (&mut work.coarse_restored, &mut work.coarse_additive),
            &mut work.mask,
            |reference| den::coarse_sums(reference, s, region),
        )
    }
}

/// Decouples, then computes the integer sums of one scale (the decoupled
/// rows made into `rings` as the masking needs them).
fn scale_sums<K: ScaleKernel>(
    kernel: &K,
    (reference, distorted): (&Bands<K::C>, &Bands<K::C>),
    region: &Region,
    gain_limit: f64,
    rings: (&mut Bands<K::C>, &mut Bands<K::C>),
    mask: &mut MaskScratch,
    reference_sums: impl FnOnce(&Bands<K::C>) -> [u64; 3],
) -> ScaleSums {
    let (w, h) = (reference.width, reference.height);
    let halo = region.with_halo(w, h);
    let den = reference_sums(reference);
    // The halo starts where libvmaf's decoupling does.
    let vector_columns = vector_decoupled(w).len();
    let decouple = |row: usize, restored: [&mut [K::C]; 3], additive: [&mut [K::C]; 3]| {
        let cols = row * w + halo.left..row * w + halo.right;
        let row = Row {
            reference: reference.slices(cols.clone()),
            distorted: distorted.slices(cols),
            restored,
            additive,
        };
        decouple_as_libvmaf(row, gain_limit, vector_columns);
    };
    let sums = masked_sums(kernel, (w, h), &decouple, rings, region, mask);
    ScaleSums {
        num: sums.num,
        aim: sums.aim,
        den,
    }
}
