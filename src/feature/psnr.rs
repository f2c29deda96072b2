//! libvmaf's integer `psnr` extractor: per-plane PSNR (`psnr_y`, `psnr_cb`,
//! `psnr_cr`), optionally the MSE (`mse_*`) and the whole-run aggregate PSNR
//! (`apsnr_*`, from the summed squared errors of all frames).
//!
//! The aggregates are set in [`Extractor::flush`] through
//! [`FeatureSink::set_aggregate`], as libvmaf sets them on its feature
//! collector; with `enable_apsnr` the extractor is temporal so that it sees
//! every frame, also under `--subsample`.
//!
//! Chroma planes are scored at libvmaf's size, floor(W / 2) (and floor(H / 2)
//! for 4:2:0): on odd sizes the last chroma column (row) of our pictures,
//! which hold the rounded-up size, is left out.

use super::common::format_check::check_frame_format;
use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, OptionSpec, Options};
use crate::error::{Error, Result};
use crate::picture::{
    ChromaSubsampling, PictureFormat, PlaneId, PlaneMask, PlaneRef, PlaneSamples, Sample,
};

const NAME: &str = "psnr";

const PSNR_NAMES: [&str; 3] = ["psnr_y", "psnr_cb", "psnr_cr"];
const MSE_NAMES: [&str; 3] = ["mse_y", "mse_cb", "mse_cr"];
const APSNR_NAMES: [&str; 3] = ["apsnr_y", "apsnr_cb", "apsnr_cr"];

static OPTIONS: [OptionSpec; 5] = [
    OptionSpec::bool("enable_chroma", true),
    OptionSpec::bool("enable_mse", false),
    OptionSpec::bool("enable_apsnr", false),
    OptionSpec::bool("reduced_hbd_peak", false),
    OptionSpec::double("min_sse", 0.0, 0.0, f64::MAX),
];

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: NAME,
    aliases: &[],
    options: &OPTIONS,
    provides: &["psnr_y", "psnr_cb", "psnr_cr"],
    create: create as CreateFn,
    joint: None,
    gpu: Some(&crate::gpu::feature::psnr::TWIN),
};

fn create(options: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    Ok(Box::new(Psnr::create(options, format)?))
}

impl Psnr {
    /// Checks the format and resolves the options (shared with the GPU
    /// extractor, which only computes the squared errors differently).
    pub(crate) fn create(options: &Options, format: &PictureFormat) -> Result<Self> {
        if ![8, 10, 12, 16].contains(&format.bit_depth) {
            return Err(Error::Extractor {
                extractor: NAME.into(),
                reason: format!(
                    "bit depth {} unsupported (libvmaf scores 8, 10, 12 or 16)",
                    format.bit_depth
                ),
            });
        }
        Ok(Psnr::new(options, *format))
    }

    /// The planes scored, with libvmaf's (floored) size.
    pub(crate) fn scored_planes(&self) -> impl Iterator<Item = (PlaneId, usize, usize)> + '_ {
        self.planes.iter().map(|p| (p.id, p.width, p.height))
    }

    /// Emits a frame's values from its per-plane sums of squared errors.
    pub(crate) fn emit_frame(&mut self, index: u32, sses: &[u64], sink: &mut FeatureSink) {
        for (i, plane) in self.planes.iter().enumerate() {
            let sse = sses[i];
            if self.enable_apsnr {
                self.total_sse[i] += sse;
                self.total_samples[i] += u64::from(plane.area());
            }
            let mse = sse as f64 / plane.area() as f64;
            let floor_mse = if mse > 1e-16 { mse } else { 1e-16 };
            let psnr = 10.0 * (self.peak_squared as f64 / floor_mse).log10();
            let psnr = if psnr < self.psnr_max[i] {
                psnr
            } else {
                self.psnr_max[i]
            };
            sink.emit(index, PSNR_NAMES[i], psnr);
            if self.enable_mse {
                sink.emit(index, MSE_NAMES[i], mse);
            }
        }
    }
}

/// The part of a plane libvmaf scores.
#[derive(Debug, Clone, Copy)]
struct ScoredPlane {
    id: PlaneId,
    width: usize,
    height: usize,
}

impl ScoredPlane {
    /// libvmaf's plane size: chroma is the luma size shifted down (floor).
    fn of(format: &PictureFormat, id: PlaneId) -> Self {
        let (w, h) = (format.width as usize, format.height as usize);
        let (sx, sy) = if id == PlaneId::Y {
            (0, 0)
        } else {
            format.subsampling.chroma_shift()
        };
        Self {
            id,
            width: w >> sx,
            height: h >> sy,
        }
    }

    /// Samples per frame, as libvmaf's `unsigned` product `w * h`.
    fn area(&self) -> u32 {
        (self.width as u32).wrapping_mul(self.height as u32)
    }
}

pub(crate) struct Psnr {
    format: PictureFormat,
    planes: Vec<ScoredPlane>,
    enable_mse: bool,
    enable_apsnr: bool,
    /// `peak * peak` as libvmaf's 32-bit product.
    peak_squared: u32,
    psnr_max: [f64; 3],
    /// Summed squared error and sample count per plane, for `apsnr_*`.
    total_sse: [u64; 3],
    total_samples: [u64; 3],
}

impl Psnr {
    fn new(options: &Options, format: PictureFormat) -> Self {
        let bpc = format.bit_depth as u32;
        let peak: u32 = if options.bool("reduced_hbd_peak") {
            255 << (bpc - 8)
        } else {
            (1 << bpc) - 1
        };
        let peak_squared = peak.wrapping_mul(peak);
        let chroma =
            options.bool("enable_chroma") && format.subsampling != ChromaSubsampling::Yuv400;
        let planes = PlaneId::ALL[..if chroma { 3 } else { 1 }]
            .iter()
            .map(|&id| ScoredPlane::of(&format, id))
            .collect();
        let min_sse = options.double("min_sse");
        let psnr_max = std::array::from_fn(|i| {
            if min_sse != 0.0 {
                // libvmaf sizes every chroma plane here as W / 2 unless 4:4:4
                // (also for 4:0:0) and H / 2 only for 4:2:0.
                let (w, h) = (format.width, format.height);
                let sub_hor = format.subsampling != ChromaSubsampling::Yuv444;
                let sub_ver = format.subsampling == ChromaSubsampling::Yuv420;
                let pw = if i > 0 && sub_hor { w / 2 } else { w };
                let ph = if i > 0 && sub_ver { h / 2 } else { h };
                let mse = min_sse / pw.wrapping_mul(ph) as f64;
                (10.0 * (peak_squared as f64 / mse).log10()).ceil()
            } else {
                (6 * bpc + 12) as f64
            }
        });
        Self {
            format,
            planes,
            enable_mse: options.bool("enable_mse"),
            enable_apsnr: options.bool("enable_apsnr"),
            peak_squared,
            psnr_max,
            total_sse: [0; 3],
            total_samples: [0; 3],
        }
    }
}

impl Extractor for Psnr {
    fn name(&self) -> &'static str {
        NAME
    }

    fn planes(&self) -> PlaneMask {
        if self.planes.len() == 3 {
            PlaneMask::ALL
        } else {
            PlaneMask::LUMA
        }
    }

    /// Only the aggregate needs every frame on one instance.
    fn temporal(&self) -> bool {
        self.enable_apsnr
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        check_frame_format("psnr", &self.format, frame)?;
        let mut sses = [0u64; 3];
        for (sse, plane) in sses.iter_mut().zip(&self.planes) {
            *sse = match (
                frame.reference.plane(plane.id),
                frame.distorted.plane(plane.id),
            ) {
                (PlaneSamples::U8(r), PlaneSamples::U8(d)) => {
                    plane_sse(&r, &d, plane.width, plane.height)
                }
                (PlaneSamples::U16(r), PlaneSamples::U16(d)) => {
                    plane_sse(&r, &d, plane.width, plane.height)
                }
                _ => unreachable!("both pictures have the checked format"),
            };
        }
        self.emit_frame(frame.index, &sses, sink);
        Ok(())
    }

    fn flush(&mut self, sink: &mut FeatureSink) -> Result<()> {
        if !self.enable_apsnr {
            return Ok(());
        }
        let totals = self.total_sse.iter().zip(&self.total_samples);
        for ((&sse, &samples), name) in totals.zip(APSNR_NAMES).take(self.planes.len()) {
            let apsnr = 10.0
                * ((self.peak_squared as f64).log10() + (samples as f64).log10()
                    - (sse as f64).log10());
            // libvmaf's cap: ceil(10 log10(peak^2 * samples * 2)), in u64.
            let cap_arg = u64::from(self.peak_squared)
                .wrapping_mul(samples)
                .wrapping_mul(2);
            let cap = (10.0 * (cap_arg as f64).log10()).ceil();
            sink.set_aggregate(name, if apsnr < cap { apsnr } else { cap });
        }
        Ok(())
    }
}

/// Sum of squared differences over the top-left `width` x `height` samples.
fn plane_sse<T: Sample>(
    r: &PlaneRef<'_, T>,
    d: &PlaneRef<'_, T>,
    width: usize,
    height: usize,
) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::has_avx2() {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { plane_sse_avx2(r, d, width, height) };
    }
    plane_sse_portable(r, d, width, height)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn plane_sse_avx2<T: Sample>(
    r: &PlaneRef<'_, T>,
    d: &PlaneRef<'_, T>,
    width: usize,
    height: usize,
) -> u64 {
    plane_sse_portable(r, d, width, height)
}

#[inline(always)]
fn plane_sse_portable<T: Sample>(
    r: &PlaneRef<'_, T>,
    d: &PlaneRef<'_, T>,
    width: usize,
    height: usize,
) -> u64 {
    (0..height)
        .map(|y| {
            let (a, b) = (&r.row(y)[..width], &d.row(y)[..width]);
            if T::BYTES == 1 {
                // libvmaf's 8-bit path sums a row in 32 bits (wrapping).
                let row = a.iter().zip(b).fold(0u32, |acc, (&x, &y)| {
                    let e = x.into() as i32 - y.into() as i32;
                    acc.wrapping_add((e * e) as u32)
                });
                u64::from(row)
            } else {
                a.iter().zip(b).fold(0u64, |acc, (&x, &y)| {
                    let e = (x.into() as i32 - y.into() as i32).unsigned_abs();
                    acc + u64::from(e.wrapping_mul(e))
                })
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::options::parse_key_values;
    use crate::picture::HostPicture;

    fn extractor(opts: &str, format: PictureFormat) -> Box<dyn Extractor> {
        let raw = parse_key_values(NAME, opts).unwrap();
        let o = Options::resolve(NAME, &OPTIONS, &raw).unwrap();
        create(&o, &format).unwrap()
    }

    #[test]
    fn identical_frames_hit_the_cap() {
        let f = PictureFormat::new(4, 4, ChromaSubsampling::Yuv420, 10).unwrap();
        let p = HostPicture::new(f);
        let mut ex = extractor("enable_apsnr=true", f);
        assert!(ex.temporal());
        let mut sink = FeatureSink::new();
        ex.extract(
            &FrameInput {
                index: 0,
                reference: &p,
                distorted: &p,
            },
            &mut sink,
        )
        .unwrap();
        assert!(
            sink.values().iter().all(|(_, _, v)| *v == 72.0),
            "{:?}",
            sink.values()
        );
        ex.flush(&mut sink).unwrap();
        // Zero total error: log10(0) = -inf, so the cap wins.
        let cap = (10.0 * ((1023.0f64 * 1023.0) * 16.0 * 2.0).log10()).ceil();
        assert_eq!(sink.aggregates()[0], ("apsnr_y".to_string(), cap));
    }

    #[test]
    fn gray_pictures_score_luma_only() {
        let f = PictureFormat::new(5, 3, ChromaSubsampling::Yuv400, 8).unwrap();
        let ex = extractor("", f);
        assert_eq!(ex.planes(), PlaneMask::LUMA);
        assert!(!ex.temporal());
    }

    #[test]
    fn unsupported_bit_depth_is_refused() {
        let f = PictureFormat::new(4, 4, ChromaSubsampling::Yuv420, 9).unwrap();
        let o = Options::resolve(NAME, &OPTIONS, &[]).unwrap();
        assert!(create(&o, &f).is_err());
    }
}
