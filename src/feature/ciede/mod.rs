//! libvmaf's `ciede` extractor: the mean CIEDE2000 colour difference of
//! the two pictures, reported as `ciede2000 = 45 - 20 log10(mean dE00)`.
//!
//! Chroma is upsampled to the luma grid by repetition (see [`chroma`] for
//! libvmaf's 4:2:2 and odd-size defects and what we do about them), every
//! pixel is converted to CIELAB ([`lab`]) and compared ([`delta_e`]), with
//! the same `float`/`double` arithmetic as libvmaf, so scores are
//! bit-identical (given the same C library maths functions: `pow`, `atan2`,
//! `sin`, `cos` and `exp` come from the system libm, glibc's as libvmaf's
//! on Linux).
//!
//! Speed comes from skipping work whose result is known exactly (identical
//! sample triples differ by exactly 0; a cache remembers the Lab colour of
//! seen triples) and from overlapping independent work: a row is done in
//! passes (keys, colours, differences) and differences `LANES` at a time.
//! The sum itself stays in libvmaf's pixel order.

pub mod chroma;
pub mod delta_e;
pub mod lab;
pub(crate) mod twin;

use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, OptionSpec, Options};
use crate::error::{Error, Result};
use crate::feature::common::format_check::check_frame_format;
use crate::picture::{
    ChromaSubsampling, HostPicture, PictureFormat, PlaneId, PlaneMask, PlaneRef, PlaneSamples,
    Sample,
};
use chroma::ChromaLayout;
use delta_e::{ciede2000, ciede2000_lanes, Lab, LIBVMAF_WEIGHTS};
use lab::LabCache;

/// Colour pairs whose differences are computed together.
const LANES: usize = 4;

const NAME: &str = "ciede";
const FEATURE: &str = "ciede2000";

static OPTIONS: [OptionSpec; 1] = [
    // Not a libvmaf option: scores 4:2:2 with correctly addressed chroma
    // (ADRs/0004); the output is then named `ciede2000_fix_422_chroma`.
    OptionSpec::bool("fix_422_chroma", false).param_unaliased(),
];

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: NAME,
    aliases: &[],
    options: &OPTIONS,
    provides: &[FEATURE],
    create: create as CreateFn,
    joint: None,
    gpu: Some(&crate::gpu::feature::ciede::TWIN),
};

/// Refuses the formats libvmaf's ciede does not score (the GPU extractor
/// checks with this too).
pub(crate) fn check_format(format: &PictureFormat) -> Result<()> {
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
    Ok(())
}

/// The output's name under `options`.
pub(crate) fn feature_name(options: &Options) -> String {
    format!("{FEATURE}{}", options.name_suffix())
}

/// The chroma addressing `options` ask for.
pub(crate) fn layout(options: &Options, format: &PictureFormat) -> ChromaLayout {
    ChromaLayout::for_format(format, options.bool("fix_422_chroma"))
}

/// The score of a frame whose dE00 add up to `sum`.
pub(crate) fn score_of_sum(sum: f64, format: &PictureFormat) -> f64 {
    // libvmaf divides by its `unsigned` product w * h.
    let pixels = format.width.wrapping_mul(format.height);
    45.0 - 20.0 * (sum / pixels as f64).log10()
}

fn create(options: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    check_format(format)?;
    let width = format.width as usize;
    Ok(Box::new(Ciede {
        format: *format,
        feature: feature_name(options),
        layout: layout(options, format),
        colors: LabCache::new(format.bit_depth),
        rows: RowBuffers {
            chroma: [(); 4].map(|_| vec![0; width]),
            keys: Vec::with_capacity(width),
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
        check_frame_format(NAME, &self.format, frame)?;
        let sum = match (
            frame.reference.plane(PlaneId::Y),
            frame.distorted.plane(PlaneId::Y),
        ) {
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
        sink.emit(frame.index, &self.feature, score_of_sum(sum, &self.format));
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
        #[cfg(target_arch = "x86_64")]
        if crate::cpu::has_avx2() {
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { self.sum_delta_e_avx2(r, d) };
        }
        self.sum_delta_e_portable(r, d)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn sum_delta_e_avx2<T: Sample>(
        &mut self,
        r: [PlaneRef<'_, T>; 3],
        d: [PlaneRef<'_, T>; 3],
    ) -> f64 {
        self.sum_delta_e_portable(r, d)
    }

    #[inline(always)]
    fn sum_delta_e_portable<T: Sample>(
        &mut self,
        r: [PlaneRef<'_, T>; 3],
        d: [PlaneRef<'_, T>; 3],
    ) -> f64 {
        let (width, height) = (self.format.width as usize, self.format.height as usize);
        let mut sum = 0.0f64;
        for y in 0..height {
            let rows = &mut self.rows;
            let [ru, rv, du, dv] = &mut rows.chroma;
            self.layout.fill_row(&r[1], y, ru);
            self.layout.fill_row(&r[2], y, rv);
            self.layout.fill_row(&d[1], y, du);
            self.layout.fill_row(&d[2], y, dv);
            let reference = (&r[0].row(y)[..width], &ru[..], &rv[..]);
            let distorted = (&d[0].row(y)[..width], &du[..], &dv[..]);
            differing_keys(reference, distorted, &self.colors, &mut rows.keys);
            colors_of(&rows.keys, &mut self.colors, &mut rows.pairs);
            sum = add_differences(sum, &rows.pairs);
        }
        sum
    }
}

/// The packed samples of the pixels of a row whose samples differ (equal
/// samples give equal colours, whose dE00 is exactly 0 and leaves the sum
/// as it is), starting the cache loads of their colours.
fn differing_keys<T: Sample>(
    (ry, ru, rv): (&[T], &[u16], &[u16]),
    (dy, du, dv): (&[T], &[u16], &[u16]),
    colors: &LabCache,
    keys: &mut Vec<(u64, u64)>,
) {
    keys.clear();
    for x in 0..ry.len() {
        let ref_key = LabCache::key(ry[x].into(), ru[x].into(), rv[x].into());
        let dist_key = LabCache::key(dy[x].into(), du[x].into(), dv[x].into());
        if ref_key != dist_key {
            colors.prefetch(ref_key);
            colors.prefetch(dist_key);
            keys.push((ref_key, dist_key));
        }
    }
}

/// The colours of `keys`; neighbours often share samples, so a repeat of
/// the previous key skips the cache.
fn colors_of(keys: &[(u64, u64)], colors: &mut LabCache, pairs: &mut Vec<(Lab, Lab)>) {
    pairs.clear();
    let (mut last_ref, mut last_dist) = (u64::MAX, u64::MAX);
    let (mut ref_lab, mut dist_lab) = (Lab::default(), Lab::default());
    for &(ref_key, dist_key) in keys {
        if ref_key != last_ref {
            (last_ref, ref_lab) = (ref_key, colors.get(ref_key));
        }
        if dist_key != last_dist {
            (last_dist, dist_lab) = (dist_key, colors.get(dist_key));
        }
        pairs.push((ref_lab, dist_lab));
    }
}

/// `sum` plus the dE00 of each pair, added in order in `double`.
#[inline(always)]
fn add_differences(mut sum: f64, pairs: &[(Lab, Lab)]) -> f64 {
    let mut chunks = pairs.chunks_exact(LANES);
    for chunk in &mut chunks {
        let c1 = std::array::from_fn(|i| chunk[i].0);
        let c2 = std::array::from_fn(|i| chunk[i].1);
        for d in ciede2000_lanes::<LANES>(&c1, &c2, LIBVMAF_WEIGHTS) {
            sum += d as f64;
        }
    }
    for &(c1, c2) in chunks.remainder() {
        sum += ciede2000(c1, c2, LIBVMAF_WEIGHTS) as f64;
    }
    sum
}

/// Per-row scratch space.
struct RowBuffers {
    /// One luma row's worth of chroma: reference u, v, distorted u, v.
    chroma: [Vec<u16>; 4],
    /// Packed samples of the row's pixels whose samples differ, in order.
    keys: Vec<(u64, u64)>,
    /// Their colours.
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
        for (raw, name) in [
            ("", "ciede2000"),
            ("fix_422_chroma=true", "ciede2000_fix_422_chroma"),
        ] {
            let mut ex = create(&options(raw).unwrap(), &f).unwrap();
            ex.extract(&frame, &mut sink).unwrap();
            let (_, got, value) = sink.drain().next().unwrap();
            assert_eq!(got, name);
            // Identical pictures: dE00 = 0, log10(0) = -inf.
            assert_eq!(value, f64::INFINITY);
        }
    }
}
