//! libvmaf's integer ADM (additive distortion measure) extractor, `adm`.
//!
//! Per scale (4 levels of a db2 wavelet, luma only): the distorted detail
//! bands are decoupled against the reference into a restored part and an
//! additive impairment ([`decouple`]); the restored part, weighted by the
//! contrast sensitivity function ([`csf`]) and masked by the impairment
//! ([`cm`]), over the CSF-weighted reference energy ([`den`]) gives ADM
//! (`integer_adm2`); the impairment masked by the restored part gives AIM.
//! All integer steps and their float/double conversions follow libvmaf's C
//! code, so the scores are bit-identical.

mod cm;
mod csf;
mod decouple;
mod den;
mod dwt;
mod region;
mod simd;
mod tables;

use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, OptionSpec, Options};
use crate::error::{Error, Result};
use crate::picture::{PictureFormat, PlaneId, PlaneMask, PlaneSamples};
use cm::{cube_norm, masked_sums, CoarseKernel, FineKernel, MaskScratch, ScaleKernel};
use csf::{CsfConfig, CsfMode};
use decouple::Coef;
use dwt::{analyze_approx_pair, analyze_picture, Bands, CoarseScratch, Level, RowScratch, Taps};
use region::Region;

/// Options, declared in name order: libvmaf appends the suffixes of
/// non-default feature parameters in that order
/// (`integer_adm2_csf_2_dlmw_0.7_egl_1_min_0.5_nw_0.02_nvd_5`).
static OPTIONS: [OptionSpec; 12] = [
    OptionSpec::double("adm_csf_diag_scale", 1.0, 0.0, 50.0).param("scfd"),
    OptionSpec::int("adm_csf_mode", 0, 0, 3).param("csf"),
    OptionSpec::double("adm_csf_scale", 1.0, 0.0, 50.0).param("scf"),
    OptionSpec::double("adm_dlm_weight", 0.5, 0.0, 1.0).param("dlmw"),
    OptionSpec::double("adm_enhn_gain_limit", 100.0, 1.0, 100.0).param("egl"),
    OptionSpec::double("adm_min_val", 0.0, 0.0, 1.0).param("min"),
    OptionSpec::double("adm_noise_weight", 0.03125, 0.0, 1500.0).param("nw"),
    OptionSpec::double("adm_norm_view_dist", 3.0, 0.75, 24.0).param("nvd"),
    OptionSpec::int("adm_ref_display_height", 1080, 1, 4320).param("rdh"),
    OptionSpec::bool("adm_skip_aim", false),
    OptionSpec::bool("adm_skip_scale0", false).param("ssz"),
    OptionSpec::bool("debug", false),
];

static PROVIDES: [&str; 18] = [
    "integer_adm2",
    "integer_aim",
    "integer_adm3",
    "integer_adm_scale0",
    "integer_adm_scale1",
    "integer_adm_scale2",
    "integer_adm_scale3",
    "integer_adm",
    "integer_adm_num",
    "integer_adm_den",
    "integer_adm_num_scale0",
    "integer_adm_den_scale0",
    "integer_adm_num_scale1",
    "integer_adm_den_scale1",
    "integer_adm_num_scale2",
    "integer_adm_den_scale2",
    "integer_adm_num_scale3",
    "integer_adm_den_scale3",
];

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: "adm",
    options: &OPTIONS,
    provides: &PROVIDES,
    create: create as CreateFn,
};

/// Number of wavelet scales.
const SCALES: usize = 4;

/// Smallest width and height: the coarsest DWT needs an input of at least
/// 5 coefficients (ceil(33 / 8)), below which libvmaf reads outside its
/// buffers.
const MIN_SIZE: u32 = 33;

/// Lower bound of libvmaf's 16-bit pipeline: 1080 lines viewed from 3
/// heights (finer angular resolutions overflow its scale-0 weights).
const MIN_VIEW_RESOLUTION: f64 = 3.0 * 1080.0;

fn create(options: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    Ok(Box::new(Adm::new(options, format)?))
}

/// Option values used per frame.
#[derive(Debug, Clone, Copy)]
struct Settings {
    gain_limit: f64,
    noise_weight: f64,
    dlm_weight: f64,
    min_val: f64,
    skip_aim: bool,
    skip_scale0: bool,
    debug: bool,
}

/// Output names with the option suffix applied.
struct Names {
    adm2: String,
    aim: String,
    adm3: String,
    scale: [String; SCALES],
    adm: String,
    num: String,
    den: String,
    num_scale: [String; SCALES],
    den_scale: [String; SCALES],
}

impl Names {
    fn new(suffix: &str) -> Self {
        let n = |base: &str| format!("{base}{suffix}");
        Self {
            adm2: n("integer_adm2"),
            aim: n("integer_aim"),
            adm3: n("integer_adm3"),
            scale: std::array::from_fn(|s| n(&format!("integer_adm_scale{s}"))),
            adm: n("integer_adm"),
            num: n("integer_adm_num"),
            den: n("integer_adm_den"),
            num_scale: std::array::from_fn(|s| n(&format!("integer_adm_num_scale{s}"))),
            den_scale: std::array::from_fn(|s| n(&format!("integer_adm_den_scale{s}"))),
        }
    }
}

/// Geometry of one scale: the DWT input's taps, the output band size and
/// the scored region.
struct Scale {
    taps: Taps,
    width: usize,
    height: usize,
    region: Region,
}

/// Per-picture buffers of the wavelet.
struct Pyramid {
    fine: Bands<i16>,
    coarse: Bands<i32>,
    /// Approximation of the last two scales (one is read while the next is
    /// written).
    approx: [Vec<i32>; 2],
}

impl Pyramid {
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

    fn new(fine_w: usize, fine_h: usize, coarse_w: usize, coarse_h: usize) -> Self {
        Self {
            fine: Bands::with_capacity(fine_w, fine_h),
            coarse: Bands::with_capacity(coarse_w, coarse_h),
            approx: [vec![0; fine_w * fine_h], vec![0; fine_w * fine_h]],
        }
    }
}

/// Decoupled bands and masking scratch, per coefficient width.
struct Work {
    fine_restored: Bands<i16>,
    fine_additive: Bands<i16>,
    coarse_restored: Bands<i32>,
    coarse_additive: Bands<i32>,
    mask: MaskScratch,
    rows16: RowScratch<i16>,
    coarse_rows: CoarseScratch,
}

/// Numerator, denominator and AIM numerator of one scale, in float as
/// libvmaf keeps them.
#[derive(Debug, Clone, Copy, Default)]
struct ScaleScore {
    num: f32,
    den: f32,
    aim: f32,
}

struct Adm {
    format: PictureFormat,
    settings: Settings,
    names: Names,
    scales: Vec<Scale>,
    fine: FineKernel,
    fine_weights: [f32; 3],
    coarse: Vec<CoarseKernel>,
    coarse_weights: Vec<[f32; 3]>,
    reference: Pyramid,
    distorted: Pyramid,
    work: Work,
}

impl Adm {
    fn new(options: &Options, format: &PictureFormat) -> Result<Self> {
        let bad = |option: &str, reason: String| Error::BadOption {
            owner: "adm".into(),
            option: option.into(),
            reason,
        };
        let mode = options.int("adm_csf_mode");
        let csf = CsfConfig {
            mode: CsfMode::from_option(mode)
                .ok_or_else(|| bad("adm_csf_mode", format!("{mode} is not a CSF mode (0-3)")))?,
            norm_view_dist: options.double("adm_norm_view_dist"),
            ref_display_height: options.int("adm_ref_display_height"),
            csf_scale: options.double("adm_csf_scale"),
            csf_diag_scale: options.double("adm_csf_diag_scale"),
        };
        let view = csf.norm_view_dist * csf.ref_display_height as f64;
        if view < MIN_VIEW_RESOLUTION {
            return Err(bad(
                "adm_norm_view_dist",
                format!(
                    "adm_norm_view_dist * adm_ref_display_height = {view} is below {MIN_VIEW_RESOLUTION} \
                     (libvmaf's integer ADM cannot represent coarser viewing)"
                ),
            ));
        }
        if !csf.is_supported() {
            return Err(bad(
                "adm_csf_mode",
                format!(
                    "CSF mode {mode} has no table for adm_ref_display_height={} with adm_norm_view_dist={}",
                    csf.ref_display_height, csf.norm_view_dist
                ),
            ));
        }
        if format.width < MIN_SIZE || format.height < MIN_SIZE {
            return Err(Error::Extractor {
                extractor: "adm".into(),
                reason: format!(
                    "picture {}x{} is too small (at least {MIN_SIZE}x{MIN_SIZE})",
                    format.width, format.height
                ),
            });
        }

        let settings = Settings {
            gain_limit: options.double("adm_enhn_gain_limit"),
            noise_weight: options.double("adm_noise_weight"),
            dlm_weight: options.double("adm_dlm_weight"),
            min_val: options.double("adm_min_val"),
            skip_aim: options.bool("adm_skip_aim"),
            skip_scale0: options.bool("adm_skip_scale0"),
            debug: options.bool("debug"),
        };

        let mut scales = Vec::with_capacity(SCALES);
        let (mut w, mut h) = (format.width as usize, format.height as usize);
        for _ in 0..SCALES {
            let taps = Taps::new(w, h);
            (w, h) = (taps.cols.len(), taps.rows.len());
            scales.push(Scale {
                taps,
                width: w,
                height: h,
                region: Region::scored(w, h),
            });
        }
        let (fw, fh) = (scales[0].width, scales[0].height);
        let (cw, ch) = (scales[1].width, scales[1].height);
        let coarse = (1..SCALES)
            .map(|s| CoarseKernel::new(csf.coarse_fixed(s), s, scales[s].width, scales[s].height))
            .collect();

        Ok(Self {
            format: *format,
            settings,
            names: Names::new(&options.name_suffix()),
            fine: FineKernel::new(csf.scale0_fixed(), fw, fh),
            fine_weights: csf.band_weights(0),
            coarse,
            coarse_weights: (1..SCALES).map(|s| csf.band_weights(s)).collect(),
            scales,
            reference: Pyramid::new(fw, fh, cw, ch),
            distorted: Pyramid::new(fw, fh, cw, ch),
            work: Work {
                fine_restored: Bands::with_capacity(fw, fh),
                fine_additive: Bands::with_capacity(fw, fh),
                coarse_restored: Bands::with_capacity(cw, ch),
                coarse_additive: Bands::with_capacity(cw, ch),
                mask: MaskScratch::new(fw * fh, fw),
                rows16: RowScratch::new(format.width as usize),
                coarse_rows: CoarseScratch::new(fw),
            },
        })
    }

    /// Scale 0 of one picture: DWT of the luma plane.
    fn analyze_luma(&mut self, frame: &FrameInput<'_>, distorted: bool) -> Result<()> {
        let picture = if distorted {
            frame.distorted
        } else {
            frame.reference
        };
        if picture.format() != &self.format {
            return Err(Error::PictureMismatch(format!(
                "adm was created for {} pictures, got {}",
                self.format,
                picture.format()
            )));
        }
        let pyramid = if distorted {
            &mut self.distorted
        } else {
            &mut self.reference
        };
        let details = (!self.settings.skip_scale0).then_some(&mut pyramid.fine);
        let taps = &self.scales[0].taps;
        let bit_depth = self.format.bit_depth as u32;
        let scratch = &mut self.work.rows16;
        match picture.plane(PlaneId::Y) {
            PlaneSamples::U8(p) => analyze_picture(
                &p,
                bit_depth,
                taps,
                scratch,
                &mut pyramid.approx[0],
                details,
            ),
            PlaneSamples::U16(p) => analyze_picture(
                &p,
                bit_depth,
                taps,
                scratch,
                &mut pyramid.approx[0],
                details,
            ),
        }
        Ok(())
    }

    fn score_fine(&mut self) -> ScaleScore {
        let scale = &self.scales[0];
        let work = &mut self.work;
        let (r, d) = (&self.reference.fine, &self.distorted.fine);
        score_scale(
            &self.fine,
            r,
            d,
            &scale.region,
            self.settings,
            &mut work.fine_restored,
            &mut work.fine_additive,
            &mut work.mask,
            |reference| den::reference_energy_fine(reference, &scale.region, self.fine_weights),
        )
    }

    /// Scale `s` (1-3): DWT of both previous approximations, then scores.
    fn score_coarse(&mut self, s: usize) -> ScaleScore {
        let input_width = self.scales[s - 1].width;
        // Scale s reads the approximation of scale s - 1 and writes its own
        // into the other buffer.
        let reads_first = s % 2 == 1;
        analyze_approx_pair(
            input_width,
            s,
            &self.scales[s].taps,
            &mut self.work.coarse_rows,
            self.reference.level(reads_first),
            self.distorted.level(reads_first),
        );
        let scale = &self.scales[s];
        let work = &mut self.work;
        let weights = self.coarse_weights[s - 1];
        score_scale(
            &self.coarse[s - 1],
            &self.reference.coarse,
            &self.distorted.coarse,
            &scale.region,
            self.settings,
            &mut work.coarse_restored,
            &mut work.coarse_additive,
            &mut work.mask,
            |reference| den::reference_energy_coarse(reference, s, &scale.region, weights),
        )
    }
}

/// Decouples, then computes ADM numerator, denominator and AIM numerator of
/// one scale.
#[allow(clippy::too_many_arguments)]
fn score_scale<K: ScaleKernel>(
    kernel: &K,
    reference: &Bands<K::C>,
    distorted: &Bands<K::C>,
    region: &Region,
    settings: Settings,
    restored: &mut Bands<K::C>,
    additive: &mut Bands<K::C>,
    mask: &mut MaskScratch,
    reference_energy: impl FnOnce(&Bands<K::C>) -> [f32; 3],
) -> ScaleScore {
    let halo = region.with_halo(reference.width, reference.height);
    K::C::decouple(
        reference,
        distorted,
        &halo,
        settings.gain_limit,
        restored,
        additive,
    );
    let den = cube_norm(reference_energy(reference), region, settings.noise_weight);
    let sums = masked_sums(kernel, restored, additive, region, mask);
    let num = cube_norm(kernel.to_float(sums.num), region, settings.noise_weight);
    // libvmaf skips the AIM masking pass when asked; the sums are computed
    // together here, so only the result is dropped.
    let aim = if settings.skip_aim {
        0.0
    } else {
        cube_norm(kernel.to_float(sums.aim), region, 0.0)
    };
    ScaleScore { num, den, aim }
}

impl Extractor for Adm {
    fn name(&self) -> &'static str {
        "adm"
    }

    fn planes(&self) -> PlaneMask {
        PlaneMask::LUMA
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        self.analyze_luma(frame, false)?;
        self.analyze_luma(frame, true)?;
        let mut scores = [ScaleScore::default(); SCALES];
        scores[0] = if self.settings.skip_scale0 {
            // libvmaf's placeholder denominator avoids a division by zero.
            ScaleScore {
                num: 0.0,
                den: 1e-10,
                aim: 0.0,
            }
        } else {
            self.score_fine()
        };
        for (s, score) in scores.iter_mut().enumerate().skip(1) {
            *score = self.score_coarse(s);
        }
        self.emit(frame.index, &scores, sink);
        Ok(())
    }
}

impl Adm {
    fn emit(&self, index: u32, scores: &[ScaleScore; SCALES], sink: &mut FeatureSink) {
        let (mut num, mut den, mut aim_num) = (0f64, 0f64, 0f64);
        for s in scores {
            num += s.num as f64;
            den += s.den as f64;
            aim_num += s.aim as f64;
        }
        // Sums below this (relative to a 1080p picture) count as zero.
        let limit =
            1e-10 * (self.format.width as f64 * self.format.height as f64) / (1920.0 * 1080.0);
        if num < limit {
            num = 0.0;
        }
        if den < limit {
            den = 0.0;
        }
        // libvmaf leaves AIM unset when the denominator is zero; 0 here.
        let (adm, aim) = if den == 0.0 {
            (1.0, 0.0)
        } else {
            (num / den, aim_num / den)
        };
        let st = &self.settings;
        let blended = adm * st.dlm_weight + (1.0 - aim) * (1.0 - st.dlm_weight);
        let adm3 = if blended > st.min_val {
            blended
        } else {
            st.min_val
        };

        let n = &self.names;
        sink.emit(index, &n.adm2, adm);
        sink.emit(index, &n.aim, aim);
        sink.emit(index, &n.adm3, adm3);
        for (s, score) in scores.iter().enumerate() {
            sink.emit(index, &n.scale[s], score.num as f64 / score.den as f64);
        }
        if !st.debug {
            return;
        }
        sink.emit(index, &n.adm, adm);
        sink.emit(index, &n.num, num);
        sink.emit(index, &n.den, den);
        for (s, score) in scores.iter().enumerate() {
            sink.emit(index, &n.num_scale[s], score.num as f64);
            sink.emit(index, &n.den_scale[s], score.den as f64);
        }
    }
}
