//! Parity of the integer `psnr` extractor with libvmaf 3.2.0 goldens (run
//! as `--feature psnr=enable_mse=true:enable_apsnr=true`).

use crate::common;

use common::{rel_diff, Pair, PAIRS};
use std::collections::BTreeMap;
use vmafx::feature::options::{parse_key_values, Options};
use vmafx::feature::{psnr, FeatureSink, FrameInput};
use vmafx::{Error, PlaneId};

struct Outputs {
    frames: BTreeMap<u32, BTreeMap<String, f64>>,
    aggregates: BTreeMap<String, f64>,
}

fn run_psnr(pair: &Pair, options: &str) -> Outputs {
    let raw = parse_key_values("psnr", options).unwrap();
    let opts = Options::resolve("psnr", psnr::INFO.options, &raw).unwrap();
    let mut ex = (psnr::INFO.create)(&opts, &pair.format()).unwrap();
    let mut sink = FeatureSink::new();
    for (i, (r, d)) in pair
        .reference()
        .iter()
        .zip(&pair.distorted_pictures())
        .enumerate()
    {
        ex.extract(
            &FrameInput {
                index: i as u32,
                reference: r,
                distorted: d,
            },
            &mut sink,
        )
        .unwrap();
    }
    ex.flush(&mut sink).unwrap();
    let mut frames: BTreeMap<u32, BTreeMap<String, f64>> = BTreeMap::new();
    for (i, name, v) in sink.drain() {
        assert!(
            frames
                .entry(i)
                .or_default()
                .insert(name.clone(), v)
                .is_none(),
            "{name} twice at {i}"
        );
    }
    let aggregates = sink.drain_aggregates().collect();
    Outputs { frames, aggregates }
}

const FEATURES: [&str; 6] = ["psnr_y", "psnr_cb", "psnr_cr", "mse_y", "mse_cb", "mse_cr"];
const APSNR: [&str; 3] = ["apsnr_y", "apsnr_cb", "apsnr_cr"];

#[test]
fn psnr_mse_and_apsnr_match_features_goldens() {
    for pair in PAIRS {
        let out = run_psnr(pair, "enable_mse=true:enable_apsnr=true");
        let golden = pair.golden("features");
        assert_eq!(out.frames.len(), golden.frames.len(), "{}", pair.name());
        let mut worst: BTreeMap<&str, f64> = BTreeMap::new();
        for (pos, (frame, _)) in golden.frames.iter().enumerate() {
            let ours = &out.frames[frame];
            assert_eq!(
                ours.len(),
                FEATURES.len(),
                "{} frame {frame}: {ours:?}",
                pair.name()
            );
            for f in FEATURES {
                let expected = golden.value(pos, f).unwrap();
                let got = ours[f];
                let d = rel_diff(got, expected);
                assert!(
                    d <= 1e-9,
                    "{} frame {frame} {f}: got {got:.17e}, golden {expected:.17e}",
                    pair.name()
                );
                let w = worst.entry(f).or_default();
                *w = w.max(d);
            }
        }
        assert_eq!(out.aggregates.len(), APSNR.len(), "{}", pair.name());
        for f in APSNR {
            let (got, expected) = (out.aggregates[f], golden.aggregate[f]);
            let d = rel_diff(got, expected);
            assert!(
                d <= 1e-9,
                "{} {f}: got {got:.17e}, golden {expected:.17e}",
                pair.name()
            );
            worst.insert(f, d);
        }
        for (f, d) in worst {
            println!("{}: worst relative diff {f} = {d:.3e}", pair.name());
        }
    }
}

/// libvmaf scores odd-size 4:2:0 chroma at floor(W/2) x floor(H/2): the
/// goldens were computed from `*.chroma_floor.yuv` copies holding exactly
/// those samples, which are the top-left part of our rounded-up planes.
#[test]
fn odd_size_chroma_is_the_floor_size_top_left() {
    let pair = PAIRS
        .iter()
        .find(|p| p.width % 2 == 1)
        .expect("an odd-size pair");
    let (w, h) = (pair.width as usize, pair.height as usize);
    let (cw, ch) = (w / 2, h / 2);
    let floor_frame = w * h + 2 * cw * ch;
    let floor_bytes = common::decompress(
        &common::golden_dir()
            .join(pair.folder)
            .join("ref.chroma_floor.yuv.zst"),
    );
    let pictures = pair.reference();
    assert_eq!(floor_bytes.len(), floor_frame * pictures.len());
    for (pic, bytes) in pictures.iter().zip(floor_bytes.chunks_exact(floor_frame)) {
        for (k, id) in [PlaneId::Cb, PlaneId::Cr].into_iter().enumerate() {
            let plane = pic.plane_u8(id);
            assert_eq!((plane.width, plane.height), (w.div_ceil(2), h.div_ceil(2)));
            let floor_plane = &bytes[w * h + k * cw * ch..][..cw * ch];
            for y in 0..ch {
                assert_eq!(
                    &plane.row(y)[..cw],
                    &floor_plane[y * cw..][..cw],
                    "{id} row {y}"
                );
            }
        }
    }
    // And the scores use exactly that area: the MSE times floor(W/2) *
    // floor(H/2) is a whole number of squared code values.
    let out = run_psnr(pair, "enable_mse=true");
    for f in &out.frames {
        let sse = f.1["mse_cb"] * (cw * ch) as f64;
        assert_eq!(sse, sse.round(), "frame {}", f.0);
    }
}

#[test]
fn chroma_can_be_disabled() {
    let out = run_psnr(&PAIRS[0], "enable_chroma=false:enable_apsnr=true");
    for (i, f) in &out.frames {
        assert_eq!(f.keys().collect::<Vec<_>>(), ["psnr_y"], "frame {i}");
    }
    assert_eq!(out.aggregates.keys().collect::<Vec<_>>(), ["apsnr_y"]);
}

#[test]
fn bad_options_are_refused() {
    for (text, option) in [
        ("enable_mse=yes", "enable_mse"),
        ("min_sse=-1", "min_sse"),
        ("psnr_max=50", "psnr_max"),
    ] {
        let raw = parse_key_values("psnr", text).unwrap();
        match Options::resolve("psnr", psnr::INFO.options, &raw) {
            Err(e @ Error::BadOption { .. }) => assert!(e.to_string().contains(option), "{e}"),
            other => panic!("{text}: expected a bad-option error, got {other:?}"),
        }
    }
}
