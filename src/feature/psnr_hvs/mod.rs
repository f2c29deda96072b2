//! libvmaf's `psnr_hvs` extractor (Xiph's PSNR-HVS-M): per-plane
//! `psnr_hvs_y`, `psnr_hvs_cb`, `psnr_hvs_cr` and their 0.8/0.1/0.1 blend
//! `psnr_hvs`, from CSF-weighted, contrast-masked DCT errors.
//!
//! Chroma planes are scored at libvmaf's size, floor(W / 2) (and
//! floor(H / 2) for 4:2:0), the top-left part of our rounded-up planes
//! (ADRs/0002), always with the 4:2:0 chroma tables, as libvmaf.

pub mod blocks;
pub mod csf;
pub mod dct;
pub(crate) mod twin;

use super::{CreateFn, Extractor, ExtractorInfo, FeatureSink, FrameInput, Options};
use crate::error::{Error, Result};
use crate::feature::common::format_check::check_frame_format;
use crate::picture::{ChromaSubsampling, PictureFormat, PlaneId, PlaneMask, PlaneSamples};
use blocks::{block_count, plane_score};
use csf::Weights;

const NAME: &str = "psnr_hvs";
const PLANE_FEATURES: [&str; 3] = ["psnr_hvs_y", "psnr_hvs_cb", "psnr_hvs_cr"];
const FEATURE: &str = "psnr_hvs";

pub static INFO: ExtractorInfo = ExtractorInfo {
    name: NAME,
    aliases: &[],
    options: &[],
    provides: &["psnr_hvs_y", "psnr_hvs_cb", "psnr_hvs_cr", "psnr_hvs"],
    create: create as CreateFn,
    joint: None,
    gpu: Some(&crate::gpu::feature::psnr_hvs::TWIN),
};

fn create(_: &Options, format: &PictureFormat) -> Result<Box<dyn Extractor>> {
    Ok(Box::new(PsnrHvs {
        format: *format,
        sizes: scored_sizes(format)?,
        weights: plane_weights(),
    }))
}

/// Each plane's scored size, or why `format` cannot be scored.
pub(crate) fn scored_sizes(format: &PictureFormat) -> Result<[(usize, usize); 3]> {
    let refuse = |reason: String| Error::Extractor {
        extractor: NAME.into(),
        reason,
    };
    if format.subsampling == ChromaSubsampling::Yuv400 {
        return Err(refuse("needs chroma planes, got a 4:0:0 picture".into()));
    }
    if format.bit_depth > 12 {
        return Err(refuse(format!(
            "bit depth {} unsupported (libvmaf scores at most 12 bits)",
            format.bit_depth
        )));
    }
    let sizes = PlaneId::ALL.map(|id| scored_size(format, id));
    if let Some((id, (w, h))) = PlaneId::ALL
        .into_iter()
        .zip(sizes)
        .find(|(_, (w, h))| block_count(*w) == 0 || block_count(*h) == 0)
    {
        // libvmaf would divide 0 by 0 and report NaN.
        return Err(refuse(format!(
            "plane {id} of a {format} picture is {w}x{h}; every plane needs at least 8x8 samples"
        )));
    }
    Ok(sizes)
}

/// The Y, Cb and Cr weights (chroma always with the 4:2:0 tables).
pub(crate) fn plane_weights() -> [Weights; 3] {
    [
        Weights::new(&csf::CSF_Y),
        Weights::new(&csf::CSF_CB420),
        Weights::new(&csf::CSF_CR420),
    ]
}

/// libvmaf's plane size: chroma is the luma size shifted down (floor).
fn scored_size(format: &PictureFormat, id: PlaneId) -> (usize, usize) {
    let (sx, sy) = if id == PlaneId::Y {
        (0, 0)
    } else {
        format.subsampling.chroma_shift()
    };
    (
        (format.width >> sx) as usize,
        (format.height >> sy) as usize,
    )
}

struct PsnrHvs {
    format: PictureFormat,
    sizes: [(usize, usize); 3],
    weights: [Weights; 3],
}

/// libvmaf's `convert_score_db` with weight 1.
fn to_db(score: f64) -> f64 {
    10.0 * -(score.log10())
}

impl Extractor for PsnrHvs {
    fn name(&self) -> &'static str {
        NAME
    }

    fn planes(&self) -> PlaneMask {
        PlaneMask::ALL
    }

    fn extract(&mut self, frame: &FrameInput<'_>, sink: &mut FeatureSink) -> Result<()> {
        check_frame_format(NAME, &self.format, frame)?;
        let depth = self.format.bit_depth;
        let mut scores = [0.0f64; 3];
        for (i, id) in PlaneId::ALL.into_iter().enumerate() {
            let (w, h) = self.sizes[i];
            let weights = &self.weights[i];
            scores[i] = match (frame.reference.plane(id), frame.distorted.plane(id)) {
                (PlaneSamples::U8(r), PlaneSamples::U8(d)) => {
                    plane_score(&r, &d, w, h, depth, weights)
                }
                (PlaneSamples::U16(r), PlaneSamples::U16(d)) => {
                    plane_score(&r, &d, w, h, depth, weights)
                }
                _ => unreachable!("both pictures have the checked format"),
            };
        }
        emit_scores(frame.index, &scores, sink);
        Ok(())
    }
}

/// Emits the plane scores (Y, Cb, Cr) in dB and their blend.
pub(crate) fn emit_scores(index: u32, scores: &[f64; 3], sink: &mut FeatureSink) {
    for (name, score) in PLANE_FEATURES.iter().zip(scores) {
        sink.emit(index, name, to_db(*score));
    }
    let blend = scores[0] * 0.8 + 0.1 * (scores[1] + scores[2]);
    sink.emit(index, FEATURE, to_db(blend));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::picture::HostPicture;

    fn create_for(w: u32, h: u32, ss: ChromaSubsampling, depth: u8) -> Result<Box<dyn Extractor>> {
        let o = Options::resolve(NAME, &[], &[]).unwrap();
        create(&o, &PictureFormat::new(w, h, ss, depth).unwrap())
    }

    #[test]
    fn unsupported_inputs_are_refused() {
        let e = create_for(64, 64, ChromaSubsampling::Yuv400, 8)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("4:0:0"), "{e}");
        let e = create_for(64, 64, ChromaSubsampling::Yuv420, 16)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("bit depth 16"), "{e}");
        // 4:2:0 chroma of a 15-wide picture is 7 wide: no 8x8 block fits.
        let e = create_for(15, 64, ChromaSubsampling::Yuv420, 8)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("plane Cb") && e.contains("7x32"), "{e}");
        assert!(create_for(16, 16, ChromaSubsampling::Yuv420, 12).is_ok());
    }

    #[test]
    fn a_single_changed_dc_gives_the_closed_form_score() {
        // One 8x8 block per plane; flat luma of 100 against 0: only the
        // DC coefficients differ (800 against 0, as `dct` tests), and the
        // DC error is never masked. Score = (800 * csf[0])^2 / 64 / 255^2.
        let f = PictureFormat::new(8, 8, ChromaSubsampling::Yuv444, 8).unwrap();
        let mut r = HostPicture::new(f);
        r.plane_u8_mut(PlaneId::Y).fill(100);
        let d = HostPicture::new(f);
        let mut ex = create(&Options::resolve(NAME, &[], &[]).unwrap(), &f).unwrap();
        let mut sink = FeatureSink::new();
        ex.extract(
            &FrameInput {
                index: 0,
                reference: &r,
                distorted: &d,
            },
            &mut sink,
        )
        .unwrap();
        let csf0 = csf::CSF_Y[0][0] as f32;
        let expected = ((800.0 * csf0) * (800.0 * csf0) / 64.0 / (255.0f32 * 255.0)) as f64;
        let got: Vec<_> = sink.drain().map(|(_, n, v)| (n, v)).collect();
        assert_eq!(got[0], ("psnr_hvs_y".to_string(), to_db(expected)));
        // Identical chroma: zero error, infinite dB.
        assert_eq!(got[1].1, f64::INFINITY);
    }
}
