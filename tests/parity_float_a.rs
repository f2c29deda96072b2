//! Parity of the float extractors float_psnr, float_moment, float_ansnr,
//! float_ssim and float_ms_ssim with libvmaf 3.2.0: every pair, every frame,
//! every output against the `features` goldens (run with
//! `float_ssim=enable_lcs=true` and `float_ms_ssim=enable_lcs=true`).

mod common;

use std::collections::BTreeMap;
use vmafx::feature::{self, options::parse_key_values, FeatureSink, FrameInput, Options};
use vmafx::{Error, PictureFormat};

/// Per-frame tolerance: the values are bit-identical to libvmaf's. (This
/// relies on serde_json's `float_roundtrip` feature, which makes the golden
/// `%.17g` numbers parse exactly; without it they can be off by one ulp.)
const TOLERANCE: f64 = 0.0;

/// (extractor, options as in the golden command, outputs to compare).
const RUNS: &[(&str, &str, &[&str])] = &[
    ("float_psnr", "", &["float_psnr"]),
    (
        "float_moment",
        "",
        &[
            "float_moment_ref1st",
            "float_moment_dis1st",
            "float_moment_ref2nd",
            "float_moment_dis2nd",
        ],
    ),
    ("float_ansnr", "", &["float_ansnr", "float_anpsnr"]),
    (
        "float_ssim",
        "enable_lcs=true",
        &["float_ssim", "float_ssim_l", "float_ssim_c", "float_ssim_s"],
    ),
    (
        "float_ms_ssim",
        "enable_lcs=true",
        &[
            "float_ms_ssim",
            "float_ms_ssim_l_scale0",
            "float_ms_ssim_l_scale1",
            "float_ms_ssim_l_scale2",
            "float_ms_ssim_l_scale3",
            "float_ms_ssim_l_scale4",
            "float_ms_ssim_c_scale0",
            "float_ms_ssim_c_scale1",
            "float_ms_ssim_c_scale2",
            "float_ms_ssim_c_scale3",
            "float_ms_ssim_c_scale4",
            "float_ms_ssim_s_scale0",
            "float_ms_ssim_s_scale1",
            "float_ms_ssim_s_scale2",
            "float_ms_ssim_s_scale3",
            "float_ms_ssim_s_scale4",
        ],
    ),
];

fn create(
    name: &str,
    opts: &str,
    format: &PictureFormat,
) -> vmafx::Result<Box<dyn feature::Extractor>> {
    let info = feature::find(name)?;
    let raw = parse_key_values(name, opts)?;
    let options = Options::resolve(name, info.options, &raw)?;
    (info.create)(&options, format)
}

/// Runs one extractor over a pair and returns its values by frame.
fn run(pair: &common::Pair, name: &str, opts: &str) -> Vec<BTreeMap<String, f64>> {
    let refs = pair.reference();
    let dists = pair.distorted_pictures();
    assert_eq!(
        refs.len(),
        dists.len(),
        "{}: frame counts differ",
        pair.name()
    );
    let mut extractor = create(name, opts, &pair.format()).unwrap();
    let mut frames = vec![BTreeMap::new(); refs.len()];
    let mut sink = FeatureSink::new();
    for (i, (r, d)) in refs.iter().zip(&dists).enumerate() {
        let input = FrameInput {
            index: i as u32,
            reference: r,
            distorted: d,
        };
        extractor.extract(&input, &mut sink).unwrap();
    }
    extractor.flush(&mut sink).unwrap();
    for (index, feature, value) in sink.drain() {
        frames[index as usize].insert(feature, value);
    }
    frames
}

#[test]
fn float_extractors_match_libvmaf_on_every_pair() {
    let mut worst: BTreeMap<&str, (f64, String)> = BTreeMap::new();
    for pair in common::PAIRS {
        let golden = pair.golden("features");
        for &(name, opts, outputs) in RUNS {
            let ours = run(pair, name, opts);
            assert_eq!(
                ours.len(),
                golden.frames.len(),
                "{} {name}: frame count",
                pair.name()
            );
            for (i, values) in ours.iter().enumerate() {
                assert_eq!(
                    values.len(),
                    outputs.len(),
                    "{} {name} frame {i}: {values:?}",
                    pair.name()
                );
                for &feature in outputs {
                    let expected = golden
                        .value(i, feature)
                        .unwrap_or_else(|| panic!("{}: golden lacks {feature}", pair.name()));
                    let actual = *values.get(feature).unwrap_or_else(|| {
                        panic!("{} frame {i}: {name} did not emit {feature}", pair.name())
                    });
                    let what = format!("{} frame {i} {feature}", pair.name());
                    let d = common::rel_diff(actual, expected);
                    let entry = worst.entry(feature).or_insert((0.0, String::new()));
                    if d > entry.0 || entry.1.is_empty() {
                        *entry = (d, what.clone());
                    }
                    common::assert_close(&what, actual, expected, TOLERANCE);
                }
            }
        }
    }
    for (feature, (d, at)) in &worst {
        println!("worst relative diff {feature:<24} {d:.3e} ({at})");
    }
}

fn expect_bad_option(name: &str, opts: &str, option: &str) {
    let format = common::PAIRS[0].format();
    match create(name, opts, &format) {
        Err(e @ Error::BadOption { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(name) && msg.contains(option), "{msg}");
        }
        Err(e) => panic!("{name}:{opts}: expected a bad-option error, got {e}"),
        Ok(_) => panic!("{name}:{opts}: accepted"),
    }
}

#[test]
fn bad_options_are_refused_with_their_name() {
    for name in ["float_psnr", "float_moment", "float_ansnr"] {
        expect_bad_option(name, "enable_lcs=true", "enable_lcs");
    }
    for name in ["float_ssim", "float_ms_ssim"] {
        expect_bad_option(name, "enable_lcs=maybe", "enable_lcs");
        expect_bad_option(name, "enable_db=2", "enable_db");
        expect_bad_option(name, "scale=2", "scale");
    }
}

#[test]
fn db_output_converts_and_clips() {
    let pair = &common::PAIRS[0];
    let linear = run(pair, "float_ssim", "")[0]["float_ssim"];
    let db = run(pair, "float_ssim", "enable_db=true")[0]["float_ssim"];
    assert_eq!(db, -10.0 * (1.0 - linear).log10());
    // Identical pictures give SSIM 1 = infinite dB; clip_db caps it at
    // ceil(10 log10(255^2 / (0.5 / (w h)))).
    let refs = pair.reference();
    let mut ext = create(
        "float_ms_ssim",
        "enable_db=true:clip_db=true",
        &pair.format(),
    )
    .unwrap();
    let mut sink = FeatureSink::new();
    ext.extract(
        &FrameInput {
            index: 0,
            reference: &refs[0],
            distorted: &refs[0],
        },
        &mut sink,
    )
    .unwrap();
    let cap = (10.0 * (255.0f64 * 255.0 / (0.5 / (576.0 * 324.0))).log10()).ceil();
    assert_eq!(sink.values()[0].2, cap);
}

#[test]
fn unsupported_inputs_are_refused() {
    use vmafx::ChromaSubsampling::Yuv420;
    let small = PictureFormat::new(175, 200, Yuv420, 8).unwrap();
    assert!(matches!(
        create("float_ms_ssim", "", &small),
        Err(Error::Extractor { .. })
    ));
    assert!(create("float_ssim", "", &small).is_ok());
    let tiny = PictureFormat::new(10, 10, Yuv420, 8).unwrap();
    assert!(matches!(
        create("float_ssim", "", &tiny),
        Err(Error::Extractor { .. })
    ));
    let nine_bit = PictureFormat::new(320, 240, Yuv420, 9).unwrap();
    for (name, _, _) in RUNS {
        assert!(
            matches!(create(name, "", &nine_bit), Err(Error::Extractor { .. })),
            "{name}"
        );
    }
}

#[test]
fn threaded_context_gives_the_same_values() {
    let pair = common::PAIRS.last().unwrap();
    let golden = pair.golden("features");
    let mut builder = vmafx::ContextBuilder::new(pair.format()).threads(2);
    for &(name, opts, _) in RUNS {
        builder = builder.feature(name, parse_key_values(name, opts).unwrap());
    }
    let mut context = builder.build().unwrap();
    for (r, d) in pair.reference().into_iter().zip(pair.distorted_pictures()) {
        context.submit(r, d).unwrap();
    }
    let scores = context.finish().unwrap();
    assert_eq!(scores.frames.len(), golden.frames.len());
    let outputs: usize = RUNS.iter().map(|r| r.2.len()).sum();
    for (i, (index, values)) in scores.frames.iter().enumerate() {
        assert_eq!(*index as usize, i);
        assert_eq!(values.len(), outputs, "frame {i}: {values:?}");
        for (feature, value) in values {
            let what = format!("{} frame {i} {feature} (threaded)", pair.name());
            common::assert_close(&what, *value, golden.value(i, feature).unwrap(), TOLERANCE);
        }
    }
}
