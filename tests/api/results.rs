//! Results a caller reads: by feature name, pooled as libvmaf pools, and
//! per frame while the run goes on (callback, `take_finished`, `score_at`,
//! `pooled_so_far`), identical to what `finish` returns.

use crate::common;

use common::{Pair, PAIRS};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use vmafx::feature::options::parse_key_values;
use vmafx::{ContextBuilder, Error, FeatureScores};

type Frames = Vec<(u32, Vec<(String, f64)>)>;

/// The golden pair with temporal extractors of every lag: motion (five-frame
/// window too), float_motion, speed_temporal.
fn pair() -> &'static Pair {
    PAIRS.iter().find(|p| p.distorted == "x264_crf30").unwrap()
}

fn builder(pair: &Pair, threads: usize, subsample: u32) -> ContextBuilder {
    let mut b = ContextBuilder::new(pair.format())
        .default_model()
        .threads(threads)
        .subsample(subsample);
    for (name, opts) in [
        ("motion", "motion_five_frame_window=true"),
        ("float_motion", ""),
        ("speed_temporal", ""),
        ("psnr", "enable_apsnr=true"),
    ] {
        b = b.feature(name, parse_key_values(name, opts).unwrap());
    }
    b
}

/// Scores the pair, collecting frames three ways as they finish, and the
/// completed-frame count after each submit.
fn run(pair: &Pair, threads: usize, subsample: u32) -> (Frames, Frames, Vec<u32>, FeatureScores) {
    let (refs, dists) = (pair.reference(), pair.distorted_pictures());
    let mut ctx = builder(pair, threads, subsample).build().unwrap();
    let called: Arc<Mutex<Frames>> = Arc::default();
    let sink = called.clone();
    ctx.on_frame(move |i, values| sink.lock().unwrap().push((i, values.to_vec())));
    let mut taken = Frames::new();
    let mut complete = Vec::new();
    for (r, d) in refs.into_iter().zip(dists) {
        ctx.submit(r, d).unwrap();
        taken.extend(ctx.take_finished().unwrap());
        complete.push(ctx.frames_complete());
    }
    let scores = ctx.finish().unwrap();
    let called = std::mem::take(&mut *called.lock().unwrap());
    (called, taken, complete, scores)
}

fn by_name(values: &[(String, f64)]) -> BTreeMap<&str, u64> {
    values
        .iter()
        .map(|(n, v)| (n.as_str(), v.to_bits()))
        .collect()
}

#[test]
fn frames_stream_out_as_they_finish_with_the_final_values() {
    let pair = pair();
    for (threads, subsample) in [(1, 1), (1, 3), (2, 1), (2, 3)] {
        let what = format!("threads {threads}, subsample {subsample}");
        let (called, taken, complete, scores) = run(pair, threads, subsample);
        // Every scored frame exactly once, in order, with finish's bits.
        let indices = |f: &Frames| f.iter().map(|(i, _)| *i).collect::<Vec<_>>();
        let wanted: Vec<u32> = scores.frames.iter().map(|(i, _)| *i).collect();
        assert_eq!(indices(&called), wanted, "{what}: callback frames");
        for (got, (i, want)) in called.iter().zip(&scores.frames) {
            assert_eq!(by_name(&got.1), by_name(want), "{what}: frame {i}");
        }
        // take_finished saw what the callback saw, up to the last submit.
        assert_eq!(taken, called[..taken.len()], "{what}: take_finished");
        if threads == 1 {
            // Inline, frame k is complete once frame k + 2 is processed
            // (temporal look-ahead), long before finish.
            let n = complete.len() as u32;
            assert_eq!(*complete.last().unwrap(), n - 2, "{what}: {complete:?}");
            assert!(
                taken.len() as u32 >= (n - 2) / subsample,
                "{what}: {} taken",
                taken.len()
            );
        }
    }
}

#[test]
fn score_at_answers_complete_frames_and_names_the_others() {
    let pair = pair();
    let (refs, dists) = (pair.reference(), pair.distorted_pictures());
    let mut ctx = builder(pair, 1, 1).build().unwrap();
    for (r, d) in refs.iter().zip(&dists).take(5) {
        ctx.submit_borrowed(r, d).unwrap();
    }
    let early = ctx.score_at(1).unwrap();
    let e = ctx.score_at(4).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    assert!(e.to_string().contains("frame 4 is not complete yet"), "{e}");
    let so_far = ctx.pooled_so_far("vmaf").unwrap().unwrap();
    for (r, d) in refs.iter().zip(&dists).skip(5) {
        ctx.submit_borrowed(r, d).unwrap();
    }
    let scores = ctx.finish().unwrap();
    let vmaf = |values: &[(String, f64)]| values.iter().find(|(n, _)| n == "vmaf").unwrap().1;
    assert_eq!(
        vmaf(&early).to_bits(),
        scores.get(1, "vmaf").unwrap().to_bits()
    );
    // The pool of the first complete frames is the pool of their scores.
    let first: Vec<f64> = scores
        .values("vmaf")
        .iter()
        .take(3)
        .map(|(_, v)| *v)
        .collect();
    assert_eq!(so_far.max, first.iter().cloned().fold(f64::MIN, f64::max));
}

#[test]
fn scores_read_by_name_and_pool_as_libvmaf() {
    let pair = pair();
    let (_, _, _, scores) = run(pair, 1, 1);
    let golden = pair.golden("vmaf_v0.6.1");
    let pooled = scores.pooled("vmaf").unwrap();
    let want = &golden.pooled["vmaf"];
    assert_eq!(pooled.mean.to_bits(), want["mean"].to_bits());
    assert_eq!(pooled.min.to_bits(), want["min"].to_bits());
    assert_eq!(pooled.max.to_bits(), want["max"].to_bits());
    assert_eq!(
        pooled.harmonic_mean.to_bits(),
        want["harmonic_mean"].to_bits()
    );
    for (i, (n, metrics)) in golden.frames.iter().enumerate() {
        assert_eq!(
            scores.get(*n, "integer_adm2").unwrap().to_bits(),
            metrics["integer_adm2"].to_bits(),
            "frame {i}"
        );
    }
    assert_eq!(scores.values("vmaf").len(), golden.frames.len());
    assert!(scores.pooled("no_such_feature").is_none());
    assert!(scores.names().contains(&"vmaf"));
    assert!(scores.aggregate("apsnr_y").is_some());
}
