//! The scoring context's contract: one extractor instance per feature name
//! (extractor and naming options, as libvmaf), the planes the set reads,
//! and errors.

use crate::common;

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

/// As libvmaf: a request whose feature name (extractor and the options
/// that name its outputs) an earlier one has is dropped, whatever its
/// other options; models' extractors come first.
#[test]
fn later_requests_of_a_feature_name_are_dropped() {
    let kv = |text: &str| vmafx::feature::options::parse_key_values("x", text).unwrap();
    let names = |ctx: vmafx::Context| {
        let mut ctx = ctx;
        let p = HostPicture::new(format());
        ctx.submit(p.clone(), p).unwrap();
        let scores = ctx.finish().unwrap();
        let mut names: Vec<String> = scores.frames[0].1.iter().map(|(n, _)| n.clone()).collect();
        names.sort();
        names
    };
    // The model's vif comes first: debug=true asked for later is dropped.
    let ctx = ContextBuilder::new(format())
        .feature("vif", kv("debug=true"))
        .model(model("version=vmaf_v0.6.1"))
        .build()
        .unwrap();
    assert_eq!(ctx.extractor_names(), ["adm", "motion", "vif"]);
    assert!(!names(ctx).iter().any(|n| n.starts_with("integer_vif_num")));
    // Between requests, the first one's options hold.
    let first_mse = ContextBuilder::new(format())
        .feature("psnr", kv("enable_mse=true"))
        .feature("psnr", vec![])
        .build()
        .unwrap();
    assert_eq!(first_mse.extractor_names(), ["psnr"]);
    assert!(names(first_mse).contains(&"mse_y".to_string()));
    let later_mse = ContextBuilder::new(format())
        .feature("psnr", vec![])
        .feature("psnr", kv("enable_mse=true"))
        .build()
        .unwrap();
    assert!(!names(later_mse).contains(&"mse_y".to_string()));
    // An option that names the outputs makes another instance.
    let ctx = ContextBuilder::new(format())
        .feature("vif", vec![])
        .feature("vif", kv("debug=true:vif_enhn_gain_limit=1.5"))
        .build()
        .unwrap();
    assert_eq!(ctx.extractor_names(), ["vif", "vif"]);
    assert!(names(ctx).contains(&"integer_vif_num_egl_1.5".to_string()));
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

/// Pictures from the context's pool (`Context::picture`) on the CPU engine,
/// inline and on worker threads: scores as fresh pictures give, pool
/// pictures scribbled on right after each submit change nothing (memory
/// comes back only once every extractor is done with it), and it is reused.
#[test]
fn pool_pictures_score_as_fresh_ones_and_are_reused() {
    use common::gpu::{assert_identical, builder, pair, score_cycled, score_cycled_from_pool};
    let features = [
        ("psnr", ""),
        ("motion", ""),
        ("vif", ""),
        ("float_ssim", ""),
    ];
    let p = pair("a_576x324_420p8_pan/x264_crf30");
    let fresh = score_cycled(p, &features, None, false);
    let (pooled, idle) = score_cycled_from_pool(p, &features, None);
    assert_identical("inline, 200 pool pictures", &fresh, &pooled);
    assert!(idle > 0, "no picture memory came back to the pool");

    // Worker threads hold pictures until their extractors are done.
    let (refs, dists) = (p.reference(), p.distorted_pictures());
    let mut ctx = builder(p.format(), &features, None)
        .threads(3)
        .build()
        .unwrap();
    for i in 0..60 {
        let k = i % refs.len();
        let (mut r, mut d) = (ctx.picture().unwrap(), ctx.picture().unwrap());
        r.copy_from(&refs[k]);
        d.copy_from(&dists[k]);
        ctx.submit(r, d).unwrap();
        let mut g = ctx.picture().unwrap();
        g.plane_bytes_mut(vmafx::PlaneId::Y).fill(i as u8);
    }
    let threaded = ctx.finish().unwrap();
    let mut inline = builder(p.format(), &features, None).build().unwrap();
    for i in 0..60 {
        let k = i % refs.len();
        inline.submit(refs[k].clone(), dists[k].clone()).unwrap();
    }
    assert_identical(
        "3 threads, 60 pool pictures",
        &inline.finish().unwrap(),
        &threaded,
    );
}

/// A pool picture is tightly packed, its copy owns its memory, and the
/// pool keeps at most what it was made to keep.
#[test]
fn picture_pool_lends_packed_pictures_and_keeps_a_bounded_number() {
    let format = PictureFormat::new(33, 17, ChromaSubsampling::Yuv420, 10).unwrap();
    let pool = vmafx::PicturePool::new(format, 2);
    let pictures: Vec<HostPicture> = (0..4).map(|_| pool.picture().unwrap()).collect();
    assert!(pictures.iter().all(HostPicture::is_packed));
    assert_eq!(pool.idle(), 0);
    let mut copy = pictures[0].clone();
    copy.plane_u16_mut(vmafx::PlaneId::Y).fill(1023);
    assert_ne!(
        pictures[0].plane_u16(vmafx::PlaneId::Y).row(0),
        copy.plane_u16(vmafx::PlaneId::Y).row(0),
        "a copy shares memory with its original"
    );
    drop(pictures);
    assert_eq!(pool.idle(), 2, "the pool keeps 2 of the 4 given back");
    let again = pool.picture().unwrap();
    assert_eq!(pool.idle(), 1);
    assert_eq!(again.format(), &format);
    assert!(!HostPicture::with_alignment(format, 64).is_packed());
}
