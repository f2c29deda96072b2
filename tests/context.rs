//! The scoring context's contract: one extractor instance per distinct
//! (extractor, options), the planes the set reads, and errors.

mod common;

use vmafx::model::{Model, ModelSpec};
use vmafx::{ChromaSubsampling, ContextBuilder, Error, HostPicture, PictureFormat, PlaneMask};

fn model(spec: &str) -> Model {
    Model::load(&ModelSpec::parse(spec).unwrap()).unwrap()
}

fn format() -> PictureFormat {
    PictureFormat::new(64, 48, ChromaSubsampling::Yuv420, 8).unwrap()
}

#[test]
fn models_sharing_features_compute_them_once() {
    let ctx = ContextBuilder::new(format())
        .model(model("version=vmaf_v0.6.1"))
        .model(model("version=vmaf_b_v0.6.3:name=b"))
        .model(model("version=vmaf_4k_v0.6.1:name=k"))
        .feature("motion", vec![])
        .build()
        .unwrap();
    assert_eq!(ctx.extractor_names(), ["adm", "motion", "vif"]);

    // The neg model sets other options: those are other instances.
    let ctx = ContextBuilder::new(format())
        .model(model("version=vmaf_v0.6.1"))
        .model(model("version=vmaf_v0.6.1neg:name=neg"))
        .build()
        .unwrap();
    assert_eq!(
        ctx.extractor_names(),
        ["adm", "motion", "vif", "adm", "vif"]
    );
}

#[test]
fn luma_only_models_read_no_chroma() {
    let ctx = ContextBuilder::new(format())
        .model(model("version=vmaf_v0.6.1"))
        .build()
        .unwrap();
    assert_eq!(ctx.planes_needed(), PlaneMask::LUMA);
    let ctx = ContextBuilder::new(format())
        .model(model("version=vmaf_v0.6.1"))
        .feature("psnr", vec![])
        .threads(2)
        .build()
        .unwrap();
    assert_eq!(ctx.planes_needed(), PlaneMask::ALL);
}

#[test]
fn pictures_of_another_format_are_refused() {
    for threads in [1, 2] {
        let mut ctx = ContextBuilder::new(format())
            .feature("psnr", vec![])
            .threads(threads)
            .build()
            .unwrap();
        let other = PictureFormat::new(64, 48, ChromaSubsampling::Yuv444, 8).unwrap();
        let e = ctx
            .submit(HostPicture::new(format()), HostPicture::new(other))
            .unwrap_err();
        assert!(matches!(e, Error::PictureMismatch(_)), "{e}");
        assert!(
            e.to_string().contains("distorted") && e.to_string().contains("4:4:4"),
            "{e}"
        );
    }
}

#[test]
fn bad_requests_are_refused_at_build() {
    let e = ContextBuilder::new(format())
        .feature("nosuch", vec![])
        .build()
        .err()
        .unwrap();
    assert!(matches!(e, Error::UnknownFeature { .. }), "{e}");
    let e = ContextBuilder::new(format())
        .feature("vif", vec![("vif_enhn_gain_limit".into(), "0.5".into())])
        .build()
        .err()
        .unwrap();
    assert!(e.to_string().contains("vif_enhn_gain_limit"), "{e}");
    let e = ContextBuilder::new(format())
        .subsample(0)
        .build()
        .err()
        .unwrap();
    assert!(e.to_string().contains("subsample"), "{e}");
    // Too small for ADM's four scales: the extractor says so, at build.
    let tiny = PictureFormat::new(8, 8, ChromaSubsampling::Yuv420, 8).unwrap();
    let e = ContextBuilder::new(tiny)
        .model(model("version=vmaf_v0.6.1"))
        .build()
        .err()
        .unwrap();
    assert!(
        e.to_string().contains("8x8") || e.to_string().contains("small"),
        "{e}"
    );
}

#[test]
fn no_frames_gives_no_scores() {
    let ctx = ContextBuilder::new(format())
        .model(model("version=vmaf_v0.6.1"))
        .threads(2)
        .build()
        .unwrap();
    let s = ctx.finish().unwrap();
    assert!(s.frames.is_empty());
}

/// `submit_borrowed` lets a caller refill two pictures for every frame:
/// the scores are those of `submit` with fresh pictures, on the inline and
/// the threaded engine.
#[test]
fn borrowed_pictures_can_be_refilled_for_every_frame() {
    let pair = common::PAIRS
        .iter()
        .find(|p| p.name().contains("crf30"))
        .unwrap();
    let (refs, dists) = (pair.reference(), pair.distorted_pictures());
    for threads in [1, 3] {
        let build = || {
            ContextBuilder::new(pair.format())
                .model(model("version=vmaf_v0.6.1"))
                .threads(threads)
                .build()
                .unwrap()
        };
        let mut owned = build();
        for (r, d) in refs.iter().zip(&dists) {
            owned.submit(r.clone(), d.clone()).unwrap();
        }
        let mut borrowed = build();
        let (mut r, mut d) = (
            HostPicture::new(pair.format()),
            HostPicture::new(pair.format()),
        );
        for (rs, ds) in refs.iter().zip(&dists) {
            r.clone_from(rs);
            d.clone_from(ds);
            borrowed.submit_borrowed(&r, &d).unwrap();
        }
        let (a, b) = (owned.finish().unwrap(), borrowed.finish().unwrap());
        assert_eq!(a.frames, b.frames, "{threads} thread(s)");
        assert_eq!(a.frames.len(), refs.len());
    }
}
