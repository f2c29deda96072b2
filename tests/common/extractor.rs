//! Running one extractor the way the parity tests do, and comparing what it
//! emits with a golden file.

use super::{assert_close, rel_diff, Golden, Pair};
use std::collections::BTreeMap;
use vmafx::feature::{
    self, options::parse_key_values, Extractor, FeatureSink, FrameInput, Options,
};
use vmafx::{Error, HostPicture, PictureFormat};

/// What an extractor emitted for one frame: name -> value.
pub type FrameValues = BTreeMap<String, f64>;

/// Creates extractor `name` with libvmaf-style `key=value:...` options (as
/// after `--feature name=`) for pictures of `format`.
pub fn create_extractor(
    name: &str,
    options: &str,
    format: &PictureFormat,
) -> vmafx::Result<Box<dyn Extractor>> {
    let info = feature::find(name)?;
    let raw = parse_key_values(name, options)?;
    let options = Options::resolve(name, info.options, &raw)?;
    (info.create)(&options, format)
}

/// Runs `extractor` over whole sequences, flush included: per frame, what
/// it emitted. A name emitted twice for one frame is a failure.
pub fn run_extractor(
    extractor: &mut dyn Extractor,
    reference: &[HostPicture],
    distorted: &[HostPicture],
) -> Vec<FrameValues> {
    let name = extractor.name();
    let mut sink = FeatureSink::new();
    extract_each(extractor, reference, distorted, &mut sink, |_, _| {});
    extractor.flush(&mut sink).unwrap();
    let mut frames = vec![FrameValues::new(); reference.len()];
    for (i, feature, value) in sink.drain() {
        insert_once(&mut frames[i as usize], name, i, feature, value);
    }
    frames
}

/// Runs a non-temporal `extractor` frame by frame, without flush: per
/// frame, what it emitted while extracting that frame, all of it for that
/// frame. A name emitted twice for one frame is a failure.
pub fn run_frame_by_frame(
    extractor: &mut dyn Extractor,
    reference: &[HostPicture],
    distorted: &[HostPicture],
) -> Vec<FrameValues> {
    let name = extractor.name();
    let mut frames = Vec::with_capacity(reference.len());
    let mut sink = FeatureSink::new();
    extract_each(extractor, reference, distorted, &mut sink, |i, sink| {
        let mut values = FrameValues::new();
        for (index, feature, value) in sink.drain() {
            assert_eq!(index, i, "{name}: {feature} emitted for another frame");
            insert_once(&mut values, name, index, feature, value);
        }
        frames.push(values);
    });
    frames
}

/// Extracts every frame pair, in order, into `sink`; `after(index, sink)`
/// runs after each.
fn extract_each(
    extractor: &mut dyn Extractor,
    reference: &[HostPicture],
    distorted: &[HostPicture],
    sink: &mut FeatureSink,
    mut after: impl FnMut(u32, &mut FeatureSink),
) {
    let name = extractor.name();
    assert_eq!(
        reference.len(),
        distorted.len(),
        "{name}: frame counts differ"
    );
    for (i, (r, d)) in reference.iter().zip(distorted).enumerate() {
        let frame = FrameInput {
            index: i as u32,
            reference: r,
            distorted: d,
        };
        extractor.extract(&frame, sink).unwrap();
        after(frame.index, sink);
    }
}

fn insert_once(values: &mut FrameValues, name: &str, index: u32, feature: String, value: f64) {
    let old = values.insert(feature.clone(), value);
    assert!(
        old.is_none(),
        "{name}: {feature} emitted twice for frame {index}"
    );
}

/// [`run_extractor`] of a new `name` extractor with `options` over every
/// frame of `pair`.
pub fn run_on_pair(pair: &Pair, name: &str, options: &str) -> Vec<FrameValues> {
    let (reference, distorted) = (pair.reference(), pair.distorted_pictures());
    let mut extractor = create_extractor(name, options, &pair.format()).unwrap();
    run_extractor(extractor.as_mut(), &reference, &distorted)
}

/// Asserts creating `name` with `options` fails with a bad-option error
/// whose text names the extractor and `option`.
pub fn expect_bad_option(name: &str, options: &str, option: &str) {
    let format = super::PAIRS[0].format();
    match create_extractor(name, options, &format) {
        Err(e @ Error::BadOption { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(name) && msg.contains(option), "{msg}");
        }
        Err(e) => panic!("{name}:{options}: expected a bad-option error, got {e}"),
        Ok(_) => panic!("{name}:{options}: accepted"),
    }
}

/// The worst relative difference per feature name, and where it occurred.
#[derive(Default)]
pub struct Worst(BTreeMap<String, (f64, String)>);

impl Worst {
    /// Records difference `d` of `feature` at `at` if it is the worst yet.
    pub fn note(&mut self, feature: &str, d: f64, at: String) {
        let entry = self
            .0
            .entry(feature.to_string())
            .or_insert((0.0, String::new()));
        if d > entry.0 || entry.1.is_empty() {
            *entry = (d, at);
        }
    }

    /// Compares every frame of `ours` with `golden`: each frame must hold
    /// exactly the `outputs` (named `{output}{suffix}`, as the extractor and
    /// libvmaf name them), each within relative `tolerance` of the golden.
    pub fn compare(
        &mut self,
        pair: &Pair,
        golden: &Golden,
        ours: &[FrameValues],
        outputs: &[&str],
        suffix: &str,
        tolerance: f64,
    ) {
        assert_eq!(
            ours.len(),
            golden.frames.len(),
            "{}: frame count",
            pair.name()
        );
        for (i, values) in ours.iter().enumerate() {
            assert_eq!(
                values.len(),
                outputs.len(),
                "{} frame {i}: {values:?}",
                pair.name()
            );
            for &output in outputs {
                let name = format!("{output}{suffix}");
                let expected = golden
                    .value(i, &name)
                    .unwrap_or_else(|| panic!("{}: golden lacks {name}", pair.name()));
                let actual = *values.get(&name).unwrap_or_else(|| {
                    panic!("{} frame {i}: we emit no {name}: {values:?}", pair.name())
                });
                let what = format!("{} frame {i} {name}", pair.name());
                self.note(&name, rel_diff(actual, expected), what.clone());
                assert_close(&what, actual, expected, tolerance);
            }
        }
    }

    /// Asserts every feature's worst difference is within `tolerance`, or
    /// zero for the features in `exact`.
    pub fn assert_within(&self, tolerance: f64, exact: &[&str]) {
        self.assert_within_or(tolerance, exact, 0.0)
    }

    /// As [`Self::assert_within`], with `exact_limit` instead of zero for
    /// the features in `exact` (float ADM on a CPU whose `rcpss` is not the
    /// goldens').
    pub fn assert_within_or(&self, tolerance: f64, exact: &[&str], exact_limit: f64) {
        for (feature, (d, at)) in &self.0 {
            let limit = if exact.contains(&feature.as_str()) {
                exact_limit
            } else {
                tolerance
            };
            assert!(
                *d <= limit,
                "{feature}: relative diff {d:.3e} > {limit:.0e} at {at}"
            );
        }
    }

    /// Prints the table (shown with `cargo test -- --nocapture`).
    pub fn print(&self, title: &str) {
        let width = self.0.keys().map(String::len).max().unwrap_or(0);
        println!("worst relative difference per feature ({title}):");
        for (feature, (d, at)) in &self.0 {
            println!("  {feature:<width$} {d:.3e}  ({at})");
        }
    }
}

/// Scores `pair` through a two-thread context running `features` (name,
/// `key=value:...` options) and asserts every value equals the `features`
/// golden within `tolerance`, `outputs` values per frame.
pub fn assert_threaded_run_matches(
    pair: &Pair,
    features: &[(&str, &str)],
    outputs: usize,
    tolerance: f64,
) {
    let golden = pair.golden("features");
    let mut builder = vmafx::ContextBuilder::new(pair.format()).threads(2);
    for &(name, options) in features {
        builder = builder.feature(name, parse_key_values(name, options).unwrap());
    }
    let mut context = builder.build().unwrap();
    for (r, d) in pair.reference().into_iter().zip(pair.distorted_pictures()) {
        context.submit(r, d).unwrap();
    }
    let scores = context.finish().unwrap();
    assert_eq!(scores.frames.len(), golden.frames.len());
    for (i, (index, values)) in scores.frames.iter().enumerate() {
        assert_eq!(*index as usize, i);
        assert_eq!(values.len(), outputs, "frame {i}: {values:?}");
        for (feature, value) in values {
            let what = format!("{} frame {i} {feature} (threaded)", pair.name());
            assert_close(&what, *value, golden.value(i, feature).unwrap(), tolerance);
        }
    }
}
