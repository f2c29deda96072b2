//! The seed's extra extractors against their golden runs
//! (`tests/golden/README.md`, "Golden runs for the seed's four extra
//! extractors"): `ssim` / `integer_ssim` and `motion_v2` bit for bit,
//! `integer_ms_ssim` within 1e-6, on every frame of every golden pair; and
//! their refusals (bad options, too-small pictures) by error kind.

use crate::common;

use common::extractor::{create_extractor, expect_bad_option, run_on_pair, FrameValues, Worst};
use common::{Pair, PAIRS};
use vmafx::feature::options::parse_key_values;
use vmafx::feature::FeatureSink;
use vmafx::{ChromaSubsampling, ContextBuilder, Error, HostPicture, PictureFormat, PlaneId};

/// Runs `name` with `options` on every pair and compares `outputs` with the
/// golden `run` within `tolerance` (0: bit for bit).
fn check_all_pairs(name: &str, options: &str, run: &str, outputs: &[&str], tolerance: f64) {
    let mut worst = Worst::default();
    for pair in PAIRS {
        let ours = run_on_pair(pair, name, options);
        worst.compare(pair, &pair.golden(run), &ours, outputs, "", tolerance);
    }
    worst.print(&format!("{name}={options} vs {run}"));
    worst.assert_within(tolerance, &[]);
}

#[test]
fn integer_ssim_matches_goldens_bit_for_bit() {
    // Both names give the same extractor (oracle A ran it as `ssim`).
    check_all_pairs("integer_ssim", "", "integer_ssim", &["ssim"], 0.0);
    check_all_pairs(
        "ssim",
        "enable_db=true:clip_db=true",
        "integer_ssim.db",
        &["ssim"],
        0.0,
    );
}

const MOTION_V2: [&str; 3] = [
    "VMAF_integer_feature_motion_v2_sad_score",
    "VMAF_integer_feature_motion2_v2_score",
    "VMAF_integer_feature_motion3_v2_score",
];

#[test]
fn motion_v2_matches_goldens_bit_for_bit() {
    check_all_pairs("motion_v2", "", "motion_v2", &MOTION_V2, 0.0);
    let mma: Vec<String> = MOTION_V2.iter().map(|n| format!("{n}_mma")).collect();
    let mma: Vec<&str> = mma.iter().map(String::as_str).collect();
    check_all_pairs(
        "motion_v2",
        "motion_moving_average=true",
        "motion_v2.mma",
        &mma,
        0.0,
    );
}

/// `float_ms_ssim` and its 15 per-scale terms.
fn ms_ssim_outputs() -> Vec<String> {
    let mut names = vec!["float_ms_ssim".to_string()];
    for term in ["l", "c", "s"] {
        names.extend((0..5).map(|i| format!("float_ms_ssim_{term}_scale{i}")));
    }
    names
}

/// The task allows 1e-6, but that could not tell VMAFx's decimation from
/// libvmaf's (their scores differ by at most 6.3e-7 on the goldens), so
/// this asserts what we reach: bit for bit.
#[test]
fn integer_ms_ssim_matches_goldens() {
    let names = ms_ssim_outputs();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    check_all_pairs(
        "integer_ms_ssim",
        "enable_lcs=true",
        "integer_ms_ssim",
        &names,
        0.0,
    );
    check_all_pairs(
        "integer_ms_ssim",
        "enable_db=true:clip_db=true",
        "integer_ms_ssim.db",
        &["float_ms_ssim"],
        0.0,
    );
    // libvmaf's float_ms_ssim, whose halving differs, does not pass it.
    let pair = &PAIRS[0];
    let golden = pair.golden("integer_ms_ssim");
    let libvmaf = run_on_pair(pair, "float_ms_ssim", "");
    let differ = (0..libvmaf.len())
        .filter(|&i| libvmaf[i]["float_ms_ssim"] != golden.value(i, "float_ms_ssim").unwrap())
        .count();
    assert!(differ > libvmaf.len() / 2, "{differ} frames differ");
}

/// The pair of the golden set with 4:4:4 chroma (352x288: chroma big
/// enough for five scales).
fn pair_444() -> &'static Pair {
    PAIRS
        .iter()
        .find(|p| p.subsampling == ChromaSubsampling::Yuv444)
        .unwrap()
}

/// One plane of `picture` as the luma of a 4:0:0 picture.
fn plane_as_luma(picture: &HostPicture, plane: PlaneId) -> HostPicture {
    let f = picture.format();
    let (w, h) = f.plane_size(plane);
    let mut bytes = Vec::new();
    match picture.plane(plane) {
        vmafx::picture::PlaneSamples::U8(p) => (0..h).for_each(|y| bytes.extend(p.row(y))),
        vmafx::picture::PlaneSamples::U16(p) => (0..h).for_each(|y| {
            bytes.extend(p.row(y).iter().flat_map(|v| v.to_le_bytes()));
        }),
    }
    let format =
        PictureFormat::new(w as u32, h as u32, ChromaSubsampling::Yuv400, f.bit_depth).unwrap();
    let mut out = HostPicture::new(format);
    out.fill_from_packed(&bytes);
    out
}

/// With `enable_chroma`, `_cb` and `_cr` are the MS-SSIM of the chroma
/// planes, scored exactly as a luma plane; luma outputs are unchanged.
#[test]
fn integer_ms_ssim_chroma_scores_each_plane() {
    let pair = pair_444();
    let (reference, distorted) = (pair.reference(), pair.distorted_pictures());
    let n = 3;
    let mut with_chroma =
        create_extractor("integer_ms_ssim", "enable_chroma=true", &pair.format()).unwrap();
    let golden = pair.golden("integer_ms_ssim");
    for i in 0..n {
        let mut sink = FeatureSink::new();
        let frame = vmafx::feature::FrameInput {
            index: i as u32,
            reference: &reference[i],
            distorted: &distorted[i],
        };
        with_chroma.extract(&frame, &mut sink).unwrap();
        let values: FrameValues = sink.drain().map(|(_, k, v)| (k, v)).collect();
        assert_eq!(values.len(), 3, "{values:?}");
        let luma = golden.value(i, "float_ms_ssim").unwrap();
        common::assert_close("luma", values["float_ms_ssim"], luma, 1e-6);
        for (plane, name) in [
            (PlaneId::Cb, "float_ms_ssim_cb"),
            (PlaneId::Cr, "float_ms_ssim_cr"),
        ] {
            let r = plane_as_luma(&reference[i], plane);
            let d = plane_as_luma(&distorted[i], plane);
            let mut alone = create_extractor("integer_ms_ssim", "", r.format()).unwrap();
            let mut sink = FeatureSink::new();
            let frame = vmafx::feature::FrameInput {
                index: i as u32,
                reference: &r,
                distorted: &d,
            };
            alone.extract(&frame, &mut sink).unwrap();
            let expected = sink.values()[0].2;
            assert_eq!(values[name], expected, "frame {i} {name}");
            assert!(
                values[name] > 0.5 && values[name] < 1.0,
                "{name} {}",
                values[name]
            );
        }
    }
}

#[test]
fn bad_options_are_refused_by_name() {
    expect_bad_option("integer_ssim", "enable_db=maybe", "enable_db");
    expect_bad_option("ssim", "enable_lcs=true", "enable_lcs");
    expect_bad_option("motion_v2", "motion_max_val=18", "motion_max_val");
    expect_bad_option(
        "motion_v2",
        "motion_moving_average=2",
        "motion_moving_average",
    );
    expect_bad_option("integer_ms_ssim", "enable_chroma=yes", "enable_chroma");
    expect_bad_option("integer_ms_ssim", "nope=1", "nope");
}

/// Creation fails with an extractor error whose text holds every one of
/// `words`.
fn expect_refusal(name: &str, options: &str, format: PictureFormat, words: &[&str]) {
    match create_extractor(name, options, &format) {
        Err(e @ Error::Extractor { .. }) => {
            let msg = e.to_string();
            assert!(
                words.iter().all(|w| msg.contains(w)),
                "{name} {format}: {msg}"
            );
        }
        Err(e) => panic!("{name} {format}: expected an extractor error, got {e}"),
        Ok(_) => panic!("{name} {format}: accepted"),
    }
}

#[test]
fn too_small_pictures_are_refused_at_creation() {
    let fmt = |w, h, s| PictureFormat::new(w, h, s, 8).unwrap();
    use ChromaSubsampling::*;
    // VMAFx refuses below 176x176 (libvmaf would fail only later).
    expect_refusal(
        "integer_ms_ssim",
        "",
        fmt(175, 300, Yuv420),
        &["175x300", "176x176"],
    );
    expect_refusal("integer_ms_ssim", "", fmt(300, 175, Yuv420), &["300x175"]);
    assert!(create_extractor("integer_ms_ssim", "", &fmt(176, 176, Yuv420)).is_ok());
    // The e pair (321x179) is scored: 179 >= 176.
    assert!(create_extractor("integer_ms_ssim", "", &PAIRS[7].format()).is_ok());
    // Chroma planes must be 176x176 too: 352x288 4:2:0 has 176x144 chroma.
    expect_refusal(
        "integer_ms_ssim",
        "enable_chroma=true",
        fmt(352, 288, Yuv420),
        &["Cb", "176x144", "352x288"],
    );
    assert!(create_extractor(
        "integer_ms_ssim",
        "enable_chroma=true",
        &fmt(352, 352, Yuv420)
    )
    .is_ok());
    // 4:0:0 has no chroma: luma only.
    assert!(create_extractor(
        "integer_ms_ssim",
        "enable_chroma=true",
        &fmt(200, 200, Yuv400)
    )
    .is_ok());
    // motion_v2's blur needs 3x3, as motion's.
    expect_refusal("motion_v2", "", fmt(2, 8, Yuv444), &["motion_v2", "2x8"]);
    // Integer SSIM takes any size (its window is cut at the border).
    assert!(create_extractor("integer_ssim", "", &fmt(1, 1, Yuv444)).is_ok());
}

#[test]
fn aliases_find_one_extractor() {
    let ssim = vmafx::feature::find("integer_ssim").unwrap();
    assert_eq!(ssim.name, "ssim");
    assert!(std::ptr::eq(ssim, vmafx::feature::find("ssim").unwrap()));
    let e = vmafx::feature::find("integer_ssimm")
        .unwrap_err()
        .to_string();
    assert!(e.contains("integer_ssim") && e.contains("motion_v2"), "{e}");
    // Asked for under both names with the same options, computed once.
    let format = PAIRS[0].format();
    let ctx = ContextBuilder::new(format)
        .feature("integer_ssim", vec![])
        .feature("ssim", parse_key_values("ssim", "enable_db=false").unwrap())
        .build()
        .unwrap();
    assert_eq!(ctx.extractor_names(), ["ssim"]);
}

/// Tiny pictures exercise the border paths of integer SSIM: every window
/// is cut, and identical pictures score 1 (to rounding: Xiph's numerator
/// and denominator group the same terms differently).
#[test]
fn integer_ssim_small_and_identical_pictures() {
    for (w, h) in [(1, 1), (3, 2), (9, 9), (10, 17)] {
        let format = PictureFormat::new(w, h, ChromaSubsampling::Yuv444, 10).unwrap();
        let mut a = HostPicture::new(format);
        let bytes: Vec<u8> = (0..format.frame_bytes())
            .map(|i| {
                if i % 2 == 0 {
                    (i * 37 % 251) as u8
                } else {
                    (i % 3) as u8
                }
            })
            .collect();
        a.fill_from_packed(&bytes);
        let mut x = create_extractor("integer_ssim", "", &format).unwrap();
        let mut sink = FeatureSink::new();
        let frame = vmafx::feature::FrameInput {
            index: 0,
            reference: &a,
            distorted: &a,
        };
        x.extract(&frame, &mut sink).unwrap();
        common::assert_close(&format!("{w}x{h}"), sink.values()[0].2, 1.0, 1e-14);
    }
}

/// Runs a one-thread context with `features` over every frame of `pair`:
/// per frame, name -> value.
fn run_context(pair: &Pair, features: &[(&str, &str)]) -> (Vec<&'static str>, Vec<FrameValues>) {
    run_context_threads(pair, features, 1)
}

fn run_context_threads(
    pair: &Pair,
    features: &[(&str, &str)],
    threads: usize,
) -> (Vec<&'static str>, Vec<FrameValues>) {
    let mut builder = ContextBuilder::new(pair.format()).threads(threads);
    for &(name, options) in features {
        builder = builder.feature(name, parse_key_values(name, options).unwrap());
    }
    let mut ctx = builder.build().unwrap();
    let names = ctx.extractor_names();
    for (r, d) in pair.reference().into_iter().zip(pair.distorted_pictures()) {
        ctx.submit(r, d).unwrap();
    }
    let frames = ctx.finish().unwrap().frames;
    (
        names,
        frames
            .into_iter()
            .map(|(_, v)| v.into_iter().collect())
            .collect(),
    )
}

const MOTION: [&str; 3] = [
    "VMAF_integer_feature_motion_sad_score",
    "integer_motion2",
    "integer_motion3",
];

/// `motion` and `motion_v2` together: one instance writes both name sets
/// (its SAD once per frame), each equal to its golden.
#[test]
fn motion_and_motion_v2_share_one_instance() {
    let pair = &PAIRS[4];
    let info = vmafx::feature::find("motion").unwrap();
    let joint = info.joint.unwrap();
    assert!(std::ptr::eq(
        joint,
        vmafx::feature::find("motion_v2").unwrap().joint.unwrap()
    ));
    let v2 = vmafx::feature::find("motion_v2").unwrap();
    let resolve = |info: &vmafx::feature::ExtractorInfo, o: &str| {
        vmafx::feature::Options::resolve(
            info.name,
            info.options,
            &parse_key_values(info.name, o).unwrap(),
        )
        .unwrap()
    };
    let (mo, vo) = (resolve(info, ""), resolve(v2, "motion_moving_average=true"));
    let mut one = (joint.create)(&[(info, &mo), (v2, &vo)], &pair.format())
        .expect("motion and motion_v2 share")
        .unwrap();
    let ours = common::extractor::run_extractor(
        one.as_mut(),
        &pair.reference(),
        &pair.distorted_pictures(),
    );
    let mut worst = Worst::default();
    let mma: Vec<String> = MOTION_V2.iter().map(|n| format!("{n}_mma")).collect();
    let mut both: Vec<&str> = MOTION.to_vec();
    both.extend(mma.iter().map(String::as_str));
    // Compare each set with its golden (the other set's names are extra).
    let only = |names: &[&str]| -> Vec<FrameValues> {
        ours.iter()
            .map(|v| {
                v.iter()
                    .filter(|(k, _)| names.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), *v))
                    .collect()
            })
            .collect()
    };
    assert!(ours.iter().all(|v| v.len() == 6));
    worst.compare(
        pair,
        &pair.golden("vmaf_v0.6.1"),
        &only(&MOTION),
        &MOTION,
        "",
        0.0,
    );
    let mma: Vec<&str> = mma.iter().map(String::as_str).collect();
    worst.compare(
        pair,
        &pair.golden("motion_v2.mma"),
        &only(&mma),
        &mma,
        "",
        0.0,
    );
    worst.assert_within(0.0, &[]);
    // A five-frame window looks two frames back: no shared SAD.
    let five = resolve(info, "motion_five_frame_window=true");
    assert!((joint.create)(&[(v2, &vo), (info, &five)], &pair.format()).is_none());

    // The context joins them (motion follows motion_v2's slot) ...
    let (names, frames) = run_context(pair, &[("motion_v2", ""), ("psnr", ""), ("motion", "")]);
    assert_eq!(names, ["motion_v2", "motion", "psnr"]);
    let golden = pair.golden("motion_v2");
    for (i, values) in frames.iter().enumerate() {
        for name in MOTION_V2 {
            assert_eq!(
                values[name],
                golden.value(i, name).unwrap(),
                "frame {i} {name}"
            );
        }
        for name in MOTION {
            let g = pair.golden("vmaf_v0.6.1").value(i, name).unwrap();
            assert_eq!(values[name], g, "frame {i} {name}");
        }
    }
    // ... but not when their SADs differ.
    let (names, _) = run_context(
        pair,
        &[
            ("motion_v2", ""),
            ("psnr", ""),
            ("motion", "motion_five_frame_window=true"),
        ],
    );
    assert_eq!(names, ["motion_v2", "psnr", "motion"]);
}

/// On worker threads (frames of `ssim` and `integer_ms_ssim` in parallel,
/// the joint motion instance in order) every value is still its golden's.
#[test]
fn threaded_context_gives_the_golden_bits() {
    let pair = &PAIRS[7];
    let features = [
        ("integer_ssim", ""),
        ("motion_v2", ""),
        ("integer_ms_ssim", ""),
        ("motion", ""),
    ];
    let (names, frames) = run_context_threads(pair, &features, 2);
    assert_eq!(names, ["ssim", "motion_v2", "motion", "integer_ms_ssim"]);
    let goldens = [
        ("integer_ssim", vec!["ssim"]),
        ("motion_v2", MOTION_V2.to_vec()),
        ("integer_ms_ssim", vec!["float_ms_ssim"]),
        ("vmaf_v0.6.1", MOTION.to_vec()),
    ];
    for (run, outputs) in goldens {
        let golden = pair.golden(run);
        assert_eq!(golden.frames.len(), frames.len());
        for (i, values) in frames.iter().enumerate() {
            for name in outputs.iter().copied() {
                assert_eq!(
                    values[name],
                    golden.value(i, name).unwrap(),
                    "frame {i} {name}"
                );
            }
        }
    }
}
