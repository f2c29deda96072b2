//! libvmaf's `ciede` extractor: the mean CIEDE2000 colour difference of
//! the two pictures, reported as `ciede2000 = 45 - 20 log10(mean dE00)`.
//!
//! Chroma is upsampled to the luma grid by repetition (see [`chroma`] for
//! libvmaf's 4:2:2 and odd-size defects and what we do about them), every
//! pixel is converted to CIELAB ([`lab`]) and compared ([`delta_e`]), with
//! the same `float`/`double` arithmetic as libvmaf, so scores are
//! bit-identical.
//!
//! Speed comes from skipping work whose result is known exactly: identical
//! sample triples differ by exactly 0, and a cache remembers the Lab colour
//! of recently seen triples.

pub mod chroma;
pub mod delta_e;
pub mod lab;

use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, OptionSpec, Options};
use crate::error::{Error, Result};
use crate::picture::{
    ChromaSubsampling, HostPicture, PictureFormat, PlaneId, PlaneMask, PlaneRef, PlaneSamples,
    Sample,
};
use chroma::ChromaLayout;
use delta_e::{ciede2000, Lab, LIBVMAF_WEIGHTS};
use lab::LabCache;

const NAME: &str = "ciede";
const FEATURE: &str = "ciede2000";

static OPTIONS: [OptionSpec; 1] = [
    // Not a libvmaf option: scores 4:2:2 with correctly addressed chroma
    // (ADRs/0004); the output is then named `ciede2000_fix_422_chroma`.
    OptionSpec::bool("fix_422_chroma", false).param_unaliased(),
];

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: NAME,
    options: &OPTIONS,
    provides: &[FEATURE],
    create: create as CreateFn,
};

fn create(options: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    let refuse = |reason: String| Error::Extractor {
        extractor: NAME.into(),
        reason,
    };
    if format.subsampling == ChromaSubsampling::Yuv400 {
        return Err(refuse("needs chroma planes, got a 4:0:0 picture".into()));
    }
    if ![8, 10, 12, 16].contains(&format.bit_depth) {
        return Err(refuse(format!(
            "bit depth {} unsupported (libvmaf scores 8, 10, 12 or 16)",
            format.bit_depth
        )));
    }
    let width = format.width as usize;
    Ok(Box::new(Ciede {
        format: *format,
        feature: format!("{FEATURE}{}", options.name_suffix()),
        layout: ChromaLayout::for_format(format, options.bool("fix_422_chroma")),
        colors: LabCache::new(format.bit_depth),
        rows: RowBuffers {
            chroma: [(); 4].map(|_| vec![0; width]),
            pairs: Vec::with_capacity(width),
        },
    }))
}

struct Ciede {
    format: PictureFormat,
    feature: String,
    layout: ChromaLayout,
    colors: LabCache,
    rows: RowBuffers,
}

impl Extractor for Ciede {
    fn name(&self) -> &'static str {
        NAME
    }

    fn planes(&self) -> PlaneMask {
        PlaneMask::ALL
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        for pic in [frame.reference, frame.distorted] {
            if *pic.format() != self.format {
                return Err(Error::PictureMismatch(format!(
                    "{NAME} was set up for {} pictures, got {}",
                    self.format,
                    pic.format()
                )));
            }
        }
        let sum = match (frame.reference.plane(PlaneId::Y), frame.distorted.plane(PlaneId::Y)) {
            (PlaneSamples::U8(_), PlaneSamples::U8(_)) => self.sum_delta_e(
                planes(frame.reference, HostPicture::plane_u8),
                planes(frame.distorted, HostPicture::plane_u8),
            ),
            (PlaneSamples::U16(_), PlaneSamples::U16(_)) => self.sum_delta_e(
                planes(frame.reference, HostPicture::plane_u16),
                planes(frame.distorted, HostPicture::plane_u16),
            ),
            _ => unreachable!("both pictures have the checked format"),
        };
        // libvmaf divides by its `unsigned` product w * h.
        let pixels = self.format.width.wrapping_mul(self.format.height);
        let score = 45.0 - 20.0 * (sum / pixels as f64).log10();
        sink.emit(frame.index, &self.feature, score);
        Ok(())
    }
}

fn planes<'a, T>(
    picture: &'a HostPicture,
    plane: fn(&'a HostPicture, PlaneId) -> PlaneRef<'a, T>,
) -> [PlaneRef<'a, T>; 3] {
    PlaneId::ALL.map(|id| plane(picture, id))
}

impl Ciede {
    /// Sum over all pixels of dE00, in libvmaf's order (rows, then
    /// columns, accumulated in `double`).
    fn sum_delta_e<T: Sample>(&mut self, r: [PlaneRef<'_, T>; 3], d: [PlaneRef<'_, T>; 3]) -> f64 {
        let (width, height) = (self.format.width as usize, self.format.height as usize);
        let mut sum = 0.0f64;
        for y in 0..height {
            let [ru, rv, du, dv] = &mut self.rows.chroma;
            self.layout.fill_row(&r[1], y, ru);
            self.layout.fill_row(&r[2], y, rv);
            self.layout.fill_row(&d[1], y, du);
            self.layout.fill_row(&d[2], y, dv);
            let (ry, dy) = (&r[0].row(y)[..width], &d[0].row(y)[..width]);
            // First the colours of the row, whose cache look-ups are
            // independent of each other, then the differences.
            let pairs = &mut self.rows.pairs;
            pairs.clear();
            let (mut last_ref, mut last_dist) = (u64::MAX, u64::MAX);
            let (mut ref_lab, mut dist_lab) = (Lab::default(), Lab::default());
            for x in 0..width {
                let ref_key = LabCache::key(ry[x].into(), ru[x].into(), rv[x].into());
                let dist_key = LabCache::key(dy[x].into(), du[x].into(), dv[x].into());
                // Equal samples give equal colours, whose dE00 is exactly
                // 0 and leaves the sum as it is.
                if ref_key == dist_key {
                    continue;
                }
                if ref_key != last_ref {
                    (last_ref, ref_lab) = (ref_key, self.colors.get(ref_key));
                }
                if dist_key != last_dist {
                    (last_dist, dist_lab) = (dist_key, self.colors.get(dist_key));
                }
                pairs.push((ref_lab, dist_lab));
            }
            for &(c1, c2) in pairs.iter() {
                sum += ciede2000(c1, c2, LIBVMAF_WEIGHTS) as f64;
            }
        }
        sum
    }
}

/// Per-row scratch space.
struct RowBuffers {
    /// One luma row's worth of chroma: reference u, v, distorted u, v.
    chroma: [Vec<u16>; 4],
    /// The colours of the row's pixels whose samples differ, in order.
    pairs: Vec<(Lab, Lab)>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::options::parse_key_values;

    fn options(raw: &str) -> Result<Options> {
        Options::resolve(NAME, &OPTIONS, &parse_key_values(NAME, raw)?)
    }

    #[test]
    fn gray_and_odd_depth_pictures_are_refused() {
        let o = options("").unwrap();
        let gray = PictureFormat::new(8, 8, ChromaSubsampling::Yuv400, 8).unwrap();
        let e = create(&o, &gray).err().unwrap().to_string();
        assert!(e.contains("4:0:0"), "{e}");
        let nine = PictureFormat::new(8, 8, ChromaSubsampling::Yuv420, 9).unwrap();
        let e = create(&o, &nine).err().unwrap().to_string();
        assert!(e.contains("bit depth 9"), "{e}");
    }

    #[test]
    fn the_422_fix_renames_the_output() {
        let f = PictureFormat::new(8, 8, ChromaSubsampling::Yuv422, 10).unwrap();
        let p = HostPicture::new(f);
        let mut sink = FeatureSink::new();
        let frame = FrameInput {
            index: 0,
            reference: &p,
            distorted: &p,
        };
        for (raw, name) in [("", "ciede2000"), ("fix_422_chroma=true", "ciede2000_fix_422_chroma")] {
            let mut ex = create(&options(raw).unwrap(), &f).unwrap();
            ex.extract(&frame, &mut sink).unwrap();
            let (_, got, value) = sink.drain().next().unwrap();
            assert_eq!(got, name);
            // Identical pictures: dE00 = 0, log10(0) = -inf.
            assert_eq!(value, f64::INFINITY);
        }
    }
}
