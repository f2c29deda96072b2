//! `speed_chroma`: SpEED on the Cb and Cr planes (`speed_chroma_u`,
//! `speed_chroma_v`) and their combination (`speed_chroma_uv`), each capped
//! at `speed_max_val`.
//!
//! Chroma planes are scored at libvmaf's size, floor(W / 2) (and
//! floor(H / 2) for 4:2:0): on odd sizes the last column (row) of our
//! rounded-up chroma planes is left out (ADR 0002).

use super::config::{self, SpeedConfig};
use super::core::{PlanePair, SpeedCore, SpeedScore};
use super::geometry::{Geometry, MIN_SCALED_SIDE};
use crate::error::{Error, Result};
use crate::feature::common::format_check::check_frame_format;
use crate::feature::common::picture_copy::check_bit_depth;
use crate::feature::{
    CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, OptionSpec, Options,
};
use crate::picture::{ChromaSubsampling, PictureFormat, PlaneId, PlaneMask};

const NAME: &str = "speed_chroma";
const OUTPUTS: [&str; 3] = ["speed_chroma_u", "speed_chroma_v", "speed_chroma_uv"];

static OPTIONS: [OptionSpec; 7] = [
    config::KERNELSCALE,
    config::PRESCALE,
    config::PRESCALE_METHOD,
    config::SIGMA_NN,
    config::NN_FLOOR,
    config::MAX_VAL,
    OptionSpec::int("speed_weight_var_mode", 0, 0, 6).param("wvm"),
];

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: NAME,
    aliases: &[],
    options: &OPTIONS,
    provides: &OUTPUTS,
    create: create as CreateFn,
    joint: None,
    gpu: Some(&crate::gpu::feature::speed::CHROMA_TWIN),
};

fn create(options: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    let setup = ChromaSetup::new(options, format)?;
    let core = SpeedCore::new(setup.config, setup.geometry);
    Ok(Box::new(SpeedChroma {
        format: *format,
        width: setup.width,
        planes: core.plane_pair(),
        core,
        outputs: setup.outputs,
    }))
}

/// What the CPU and GPU extractors share: the checked options, the sizes
/// SpEED works at and the outputs.
pub(crate) struct ChromaSetup {
    pub config: SpeedConfig,
    pub geometry: Geometry,
    /// libvmaf's (floored) chroma plane width: the columns scored.
    pub width: usize,
    pub outputs: ChromaOutputs,
}

impl ChromaSetup {
    pub(crate) fn new(options: &Options, format: &PictureFormat) -> Result<Self> {
        check_bit_depth(NAME, format)?;
        let config =
            SpeedConfig::from_options(NAME, options, options.int("speed_weight_var_mode"))?;
        let (width, height) = chroma_size(format)?;
        let geometry =
            Geometry::new(width, height, config.prescale).ok_or_else(|| Error::Extractor {
                extractor: NAME.into(),
                reason: format!(
                    "picture {}x{} too small: its {width}x{height} chroma planes, prescaled by {} \
                     to {}x{}, must be at least {MIN_SCALED_SIDE}x{MIN_SCALED_SIDE} (libvmaf: \
                     \"SpEED: image too small\")",
                    format.width,
                    format.height,
                    config.prescale,
                    (width as f64 * config.prescale + 0.5) as i32,
                    (height as f64 * config.prescale + 0.5) as i32,
                ),
            })?;
        let suffix = options.name_suffix();
        Ok(Self {
            config,
            geometry,
            width,
            outputs: ChromaOutputs {
                names: OUTPUTS.map(|o| format!("{o}{suffix}")),
                max_val: options.double(config::MAX_VAL.name),
            },
        })
    }
}

/// The three outputs, from the scores of the two planes.
pub(crate) struct ChromaOutputs {
    /// Output names with the option suffix (`speed_chroma_uv_mxv_45_...`).
    names: [String; 3],
    max_val: f64,
}

impl ChromaOutputs {
    /// Emits frame `index`'s values from the Cb and Cr scores.
    pub(crate) fn emit(&self, index: u32, u: SpeedScore, v: SpeedScore, sink: &mut FeatureSink) {
        // A flat (singular) channel takes the other channel's score.
        let uv = match (u.singular, v.singular) {
            (true, false) => v.score,
            (false, true) => u.score,
            _ => ((f64::from(u.score) + f64::from(v.score)) / 2.0) as f32,
        };
        for (name, score) in self.names.iter().zip([u.score, v.score, uv]) {
            // libvmaf's MIN(score, max_val), compared in double.
            let score = f64::from(score);
            let capped = if score < self.max_val {
                score
            } else {
                self.max_val
            };
            sink.emit(index, name, capped);
        }
    }
}

/// libvmaf's chroma plane size: the luma size shifted down (floor).
fn chroma_size(format: &PictureFormat) -> Result<(usize, usize)> {
    if format.subsampling == ChromaSubsampling::Yuv400 {
        return Err(Error::Extractor {
            extractor: NAME.into(),
            reason: "4:0:0 (luma-only) input has no chroma to score".into(),
        });
    }
    let (sx, sy) = format.subsampling.chroma_shift();
    Ok((
        (format.width >> sx) as usize,
        (format.height >> sy) as usize,
    ))
}

struct SpeedChroma {
    format: PictureFormat,
    width: usize,
    planes: PlanePair,
    core: SpeedCore,
    outputs: ChromaOutputs,
}

impl SpeedChroma {
    fn score_plane(&mut self, frame: &FrameInput<'_>, plane: PlaneId) -> SpeedScore {
        self.core.load(frame, plane, self.width, &mut self.planes);
        self.core.score(&self.planes)
    }
}

impl Extractor for SpeedChroma {
    fn name(&self) -> &'static str {
        NAME
    }

    fn planes(&self) -> PlaneMask {
        PlaneMask::CHROMA
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        check_frame_format(NAME, &self.format, frame)?;
        let u = self.score_plane(frame, PlaneId::Cb);
        let v = self.score_plane(frame, PlaneId::Cr);
        self.outputs.emit(frame.index, u, v, sink);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::options::parse_key_values;

    fn create_with(opts: &str, format: PictureFormat) -> Result<Box<dyn Extractor>> {
        let raw = parse_key_values(NAME, opts)?;
        create(&Options::resolve(NAME, &OPTIONS, &raw)?, &format)
    }

    #[test]
    fn chroma_sizes_are_floored() {
        let f = PictureFormat::new(321, 179, ChromaSubsampling::Yuv420, 8).unwrap();
        assert_eq!(chroma_size(&f).unwrap(), (160, 89));
        let f = PictureFormat::new(321, 179, ChromaSubsampling::Yuv422, 8).unwrap();
        assert_eq!(chroma_size(&f).unwrap(), (160, 179));
    }

    #[test]
    fn reads_only_chroma_and_refuses_gray() {
        let f = PictureFormat::new(352, 288, ChromaSubsampling::Yuv444, 8).unwrap();
        let ex = create_with("", f).unwrap();
        assert_eq!(ex.planes(), PlaneMask::CHROMA);
        assert!(!ex.temporal());
        let f = PictureFormat::new(352, 288, ChromaSubsampling::Yuv400, 8).unwrap();
        let e = create_with("", f).err().unwrap().to_string();
        assert!(e.contains("speed_chroma") && e.contains("4:0:0"), "{e}");
    }

    #[test]
    fn bad_options_are_refused() {
        let f = PictureFormat::new(352, 288, ChromaSubsampling::Yuv420, 8).unwrap();
        let e = create_with("speed_kernelscale=1.2", f)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("speed_kernelscale") && e.contains("not a supported kernel scale"),
            "{e}"
        );
        let e = create_with("speed_prescale_method=area", f)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("speed_prescale_method") && e.contains("nearest, bilinear"),
            "{e}"
        );
        let e = create_with("speed_weight_var_mode=7", f)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("speed_weight_var_mode") && e.contains("outside"),
            "{e}"
        );
        let e = create_with("speed_sigma_nn=0", f)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("speed_sigma_nn"), "{e}");
        assert!(create_with("speed_kernelscale=0.5:speed_prescale_method=lanczos4", f).is_ok());
    }
}
