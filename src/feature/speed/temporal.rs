//! `speed_temporal`: SpEED on the difference of consecutive luma frames
//! (previous minus current) of reference and distorted. Frame 0 scores 0.
//! Unlike `speed_chroma`, libvmaf does not cap it at `speed_max_val`
//! (the option is accepted and only names the feature).

use super::config::{self, SpeedConfig};
use super::core::{PlanePair, SpeedCore};
use super::geometry::{Geometry, MIN_SCALED_SIDE};
use crate::error::{Error, Result};
use crate::feature::common::format_check::check_frame_format;
use crate::feature::common::picture_copy::check_bit_depth;
use crate::feature::{
    CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, OptionSpec, Options,
};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

const NAME: &str = "speed_temporal";
const OUTPUT: &str = "speed_temporal";

static OPTIONS: [OptionSpec; 7] = [
    config::KERNELSCALE,
    config::PRESCALE,
    config::PRESCALE_METHOD,
    config::SIGMA_NN,
    config::NN_FLOOR,
    config::MAX_VAL,
    OptionSpec::bool("speed_use_ref_diff", false).param("urd"),
];

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: NAME,
    aliases: &[],
    options: &OPTIONS,
    provides: &[OUTPUT],
    create: create as CreateFn,
    joint: None,
    gpu: Some(&crate::gpu::feature::speed::TEMPORAL_TWIN),
};

fn create(options: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    let setup = TemporalSetup::new(options, format)?;
    let core = SpeedCore::new(setup.config, setup.geometry);
    Ok(Box::new(SpeedTemporal {
        name: setup.name,
        format: *format,
        use_ref_diff: setup.use_ref_diff,
        has_previous: false,
        previous: core.plane_pair(),
        current: core.plane_pair(),
        core,
    }))
}

/// What the CPU and GPU extractors share: the checked options, the sizes
/// SpEED works at and the output name.
pub(crate) struct TemporalSetup {
    pub config: SpeedConfig,
    pub geometry: Geometry,
    /// The distorted difference is previous distorted minus current
    /// reference (`speed_use_ref_diff`).
    pub use_ref_diff: bool,
    /// `speed_temporal` with the option suffix.
    pub name: String,
}

impl TemporalSetup {
    pub(crate) fn new(options: &Options, format: &PictureFormat) -> Result<Self> {
        check_bit_depth(NAME, format)?;
        let config = SpeedConfig::from_options(NAME, options, 0)?;
        let (width, height) = (format.width as usize, format.height as usize);
        let geometry =
            Geometry::new(width, height, config.prescale).ok_or_else(|| Error::Extractor {
                extractor: NAME.into(),
                reason: format!(
                    "picture {width}x{height} too small: prescaled by {} to {}x{}, it must be at \
                     least {MIN_SCALED_SIDE}x{MIN_SCALED_SIDE} (libvmaf: \"SpEED: image too \
                     small\")",
                    config.prescale,
                    (width as f64 * config.prescale + 0.5) as i32,
                    (height as f64 * config.prescale + 0.5) as i32,
                ),
            })?;
        if geometry.scaled.height > height {
            // libvmaf keeps each frame in a buffer of `height` rows but
            // prescales it in place to the taller picture: a heap overflow
            // that changes the scores of later frames, then aborts the run
            // (ADR 0005: refused, not reproduced). speed_chroma's buffers
            // are sized for the prescaled picture, so it takes any prescale.
            return Err(Error::Extractor {
                extractor: NAME.into(),
                reason: format!(
                    "option 'speed_prescale': {} enlarges the {width}x{height} picture to {}x{}, \
                     which libvmaf's speed_temporal writes past its frame buffers (their \
                     scores are undefined and the run aborts); use a prescale of 1 or less",
                    config.prescale, geometry.scaled.width, geometry.scaled.height,
                ),
            });
        }
        Ok(Self {
            config,
            geometry,
            use_ref_diff: options.bool("speed_use_ref_diff"),
            name: format!("{OUTPUT}{}", options.name_suffix()),
        })
    }
}

struct SpeedTemporal {
    /// `speed_temporal` with the option suffix.
    name: String,
    format: PictureFormat,
    use_ref_diff: bool,
    /// Whether `previous` holds a frame yet.
    has_previous: bool,
    /// Luma planes of the last frame and of this one.
    previous: PlanePair,
    current: PlanePair,
    core: SpeedCore,
}

impl Extractor for SpeedTemporal {
    fn name(&self) -> &'static str {
        NAME
    }

    fn planes(&self) -> PlaneMask {
        PlaneMask::LUMA
    }

    fn temporal(&self) -> bool {
        true
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        check_frame_format(NAME, &self.format, frame)?;
        let (width, rows, stride) = (
            self.format.width as usize,
            self.core.rows(),
            self.core.stride(),
        );
        self.core.load(frame, PlaneId::Y, width, &mut self.current);
        let cur = &self.current;

        let score = if !self.has_previous {
            0.0
        } else {
            // The previous frames become the differences, in place.
            let prev = &mut self.previous;
            let dis_base = if self.use_ref_diff {
                &cur.reference
            } else {
                &cur.distorted
            };
            subtract(&mut prev.reference, &cur.reference, width, rows, stride);
            subtract(&mut prev.distorted, dis_base, width, rows, stride);
            f64::from(self.core.score(prev).score)
        };
        sink.emit(frame.index, &self.name, score);
        std::mem::swap(&mut self.previous, &mut self.current);
        self.has_previous = true;
        Ok(())
    }
}

/// `a -= b` over the leftmost `width` samples of `rows`.
fn subtract(a: &mut [f32], b: &[f32], width: usize, rows: &[usize], stride: usize) {
    for &y in rows {
        let (ra, rb) = (&mut a[y * stride..][..width], &b[y * stride..][..width]);
        for (x, &y) in ra.iter_mut().zip(rb) {
            *x -= y;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::options::parse_key_values;
    use crate::picture::{ChromaSubsampling, HostPicture};

    fn create_with(opts: &str, format: PictureFormat) -> Result<Box<dyn Extractor>> {
        let raw = parse_key_values(NAME, opts)?;
        create(&Options::resolve(NAME, &OPTIONS, &raw)?, &format)
    }

    #[test]
    fn still_frames_score_zero_and_first_frame_is_zero() {
        let f = PictureFormat::new(96, 96, ChromaSubsampling::Yuv400, 8).unwrap();
        let mut ex = create_with("", f).unwrap();
        assert!(ex.temporal());
        assert_eq!(ex.planes(), PlaneMask::LUMA);
        let mut p = HostPicture::new(f);
        for (i, s) in p.plane_u8_mut(PlaneId::Y).iter_mut().enumerate() {
            *s = (i * 31 % 251) as u8;
        }
        let mut sink = FeatureSink::new();
        for index in 0..3 {
            let frame = FrameInput {
                index,
                reference: &p,
                distorted: &p,
            };
            ex.extract(&frame, &mut sink).unwrap();
        }
        let values: Vec<f64> = sink.values().iter().map(|v| v.2).collect();
        assert_eq!(values, vec![0.0, 0.0, 0.0]);
    }

    /// libvmaf overflows its frame buffers when the prescale makes the
    /// picture taller; a prescale that rounds back to the height is safe.
    #[test]
    fn enlarging_prescales_are_refused() {
        let f = PictureFormat::new(576, 324, ChromaSubsampling::Yuv420, 8).unwrap();
        for prescale in ["1.5", "4"] {
            let e = create_with(&format!("speed_prescale={prescale}"), f)
                .err()
                .unwrap();
            assert!(matches!(e, Error::Extractor { .. }), "{e:?}");
            let e = e.to_string();
            assert!(
                e.contains("speed_temporal")
                    && e.contains("speed_prescale")
                    && e.contains("576x324"),
                "{e}"
            );
        }
        // 324 * 1.001 + 0.5 rounds down to 324 rows: libvmaf stays inside.
        assert!(create_with("speed_prescale=1.001", f).is_ok());
        assert!(create_with("speed_prescale=0.75", f).is_ok());
    }

    #[test]
    fn too_small_pictures_are_refused() {
        let f = PictureFormat::new(321, 179, ChromaSubsampling::Yuv420, 8).unwrap();
        let e = create_with("speed_prescale=0.4", f)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("speed_temporal")
                && e.contains("321x179")
                && e.contains("128x72")
                && e.contains("80x80"),
            "{e}"
        );
    }
}
