//! Pooling and result-file parity with the `vmaf` tool.
//!
//! The golden JSON files are real `vmaf --json --precision max` outputs, so
//! pooling must reproduce their pooled values bit for bit and the JSON writer
//! their text byte for byte. No XML or CSV golden exists: those writers are
//! checked against hand-written text that follows libvmaf's `output.c`
//! (`vmaf_write_output_xml` / `vmaf_write_output_csv`) line by line, and for
//! lossless numbers on the golden data.
#![allow(clippy::excessive_precision)] // literals as C prints them

use crate::common;

use std::path::PathBuf;

use vmafx::report::{
    write_csv, write_json, write_xml, FrameMetrics, PooledMetric, Precision, QualitySize, Report,
};

// ---------------------------------------------------------------------------
// A small order-preserving JSON reader: key order matters here, and numbers
// must be parsed exactly (Rust's `str::parse::<f64>` is correctly rounded).

#[derive(Debug, Clone)]
enum Json {
    Null,
    Number(f64),
    Text(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    fn parse(text: &str) -> Json {
        let mut p = Parser {
            s: text.as_bytes(),
            i: 0,
        };
        let v = p.value();
        p.skip_ws();
        assert_eq!(p.i, p.s.len(), "trailing data after JSON value");
        v
    }
    fn object(&self) -> &[(String, Json)] {
        match self {
            Json::Object(o) => o,
            other => panic!("expected object, got {other:?}"),
        }
    }
    fn array(&self) -> &[Json] {
        match self {
            Json::Array(a) => a,
            other => panic!("expected array, got {other:?}"),
        }
    }
    fn number(&self) -> f64 {
        match self {
            Json::Number(n) => *n,
            other => panic!("expected number, got {other:?}"),
        }
    }
    fn text(&self) -> &str {
        match self {
            Json::Text(t) => t,
            other => panic!("expected string, got {other:?}"),
        }
    }
    fn get(&self, key: &str) -> &Json {
        let o = self.object();
        &o.iter()
            .find(|(k, _)| k == key)
            .unwrap_or_else(|| panic!("no key {key}"))
            .1
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: u8) {
        assert!(self.eat(c), "expected '{}' at byte {}", c as char, self.i);
    }
    fn string(&mut self) -> String {
        self.expect(b'"');
        let start = self.i;
        while self.s[self.i] != b'"' {
            assert_ne!(
                self.s[self.i], b'\\',
                "escapes are not expected in these files"
            );
            self.i += 1;
        }
        self.i += 1;
        String::from_utf8(self.s[start..self.i - 1].to_vec()).unwrap()
    }
    fn value(&mut self) -> Json {
        self.skip_ws();
        match self.s[self.i] {
            b'{' => {
                self.i += 1;
                let mut members = Vec::new();
                if !self.eat(b'}') {
                    loop {
                        let key = self.string();
                        self.expect(b':');
                        members.push((key, self.value()));
                        if !self.eat(b',') {
                            break;
                        }
                    }
                    self.expect(b'}');
                }
                Json::Object(members)
            }
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                if !self.eat(b']') {
                    loop {
                        items.push(self.value());
                        if !self.eat(b',') {
                            break;
                        }
                    }
                    self.expect(b']');
                }
                Json::Array(items)
            }
            b'"' => Json::Text(self.string()),
            b'n' => {
                assert_eq!(&self.s[self.i..self.i + 4], b"null");
                self.i += 4;
                Json::Null
            }
            _ => {
                let start = self.i;
                while self.i < self.s.len()
                    && matches!(
                        self.s[self.i],
                        b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
                    )
                {
                    self.i += 1;
                }
                let t = std::str::from_utf8(&self.s[start..self.i]).unwrap();
                Json::Number(t.parse().unwrap_or_else(|_| panic!("bad number {t}")))
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Golden files.

struct GoldenFile {
    name: String,
    text: String,
    json: Json,
}

fn golden_files() -> Vec<GoldenFile> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(common::golden_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .flat_map(|dir| std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    assert!(
        paths.len() >= 41,
        "golden JSON files missing: found {}",
        paths.len()
    );
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let json = Json::parse(&text);
            let name = p
                .strip_prefix(common::golden_dir())
                .unwrap()
                .display()
                .to_string();
            GoldenFile { name, text, json }
        })
        .collect()
}

/// The golden file's frames, in file order with their metric order.
fn golden_frames(json: &Json) -> Vec<FrameMetrics> {
    json.get("frames")
        .array()
        .iter()
        .map(|f| FrameMetrics {
            frame_num: f.get("frameNum").number() as u32,
            metrics: f
                .get("metrics")
                .object()
                .iter()
                .map(|(k, v)| (k.clone(), v.number()))
                .collect(),
        })
        .collect()
}

fn golden_aggregate(json: &Json) -> Vec<(String, f64)> {
    json.get("aggregate_metrics")
        .object()
        .iter()
        .map(|(k, v)| (k.clone(), v.number()))
        .collect()
}

fn golden_report(json: &Json) -> Report {
    Report::from_frames(
        json.get("version").text(),
        json.get("fps").number(),
        golden_frames(json),
        golden_aggregate(json),
    )
}

// ---------------------------------------------------------------------------
// (1) Pooling is bit-exact.

#[test]
fn pooling_matches_every_golden_bit_for_bit() {
    let mut checked = 0;
    for g in golden_files() {
        let report = golden_report(&g.json);
        let golden = g.json.get("pooled_metrics").object();
        let ours: Vec<&str> = report.feature_names().collect();
        let theirs: Vec<&str> = golden.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(ours, theirs, "{}: pooled feature order", g.name);
        for ((name, pooled), (_, expected)) in report.pooled.iter().zip(golden) {
            let pooled = pooled.unwrap_or_else(|| panic!("{}: {name} not pooled", g.name));
            let methods: Vec<&str> = expected.object().iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(
                methods,
                ["min", "max", "mean", "harmonic_mean"],
                "{}: {name}",
                g.name
            );
            for (method, value) in pooled.iter() {
                let want = expected.get(method.name()).number();
                assert_eq!(
                    value.to_bits(),
                    want.to_bits(),
                    "{}: {name} {}: got {value:.17e}, golden {want:.17e}",
                    g.name,
                    method.name()
                );
                checked += 1;
            }
        }
    }
    println!("{checked} pooled values bit-identical");
}

#[test]
fn subsampled_golden_pools_only_written_frames() {
    // `--subsample 3` on 30 frames writes and pools frames 0, 3, ..., 27.
    let g = golden_files()
        .into_iter()
        .find(|g| g.name.ends_with("subsample3.json"))
        .unwrap();
    let frames = golden_frames(&g.json);
    let nums: Vec<u32> = frames.iter().map(|f| f.frame_num).collect();
    assert_eq!(nums, (0..30).step_by(3).collect::<Vec<u32>>());
    let report = Report::from_frames("3.2.0", 0.0, frames, vec![]);
    let vmaf = report
        .pooled
        .iter()
        .find(|(n, _)| n == "vmaf")
        .unwrap()
        .1
        .unwrap();
    let golden = g
        .json
        .get("pooled_metrics")
        .get("vmaf")
        .get("mean")
        .number();
    assert_eq!(vmaf.mean.to_bits(), golden.to_bits());
}

// ---------------------------------------------------------------------------
// (2) The JSON writer reproduces the golden files.

fn json_text(report: &Report, precision: Precision) -> String {
    let mut out = Vec::new();
    write_json(report, precision, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn json_max_precision_is_byte_identical_to_goldens() {
    for g in golden_files() {
        // The golden's fps ("%.2f") goes back in as read, so even the fps
        // line must come out the same.
        let text = json_text(&golden_report(&g.json), Precision::Max);
        if text != g.text {
            let line = text.lines().zip(g.text.lines()).position(|(a, b)| a != b);
            let show = |t: &str| line.and_then(|l| t.lines().nth(l)).unwrap_or("").to_owned();
            panic!(
                "{}: JSON differs at line {:?}: ours {:?}, golden {:?} (lengths {} vs {})",
                g.name,
                line.map(|l| l + 1),
                show(&text),
                show(&g.text),
                text.len(),
                g.text.len()
            );
        }
    }
}

#[test]
fn json_legacy_precision_rounds_to_six_decimals() {
    let g = golden_files()
        .into_iter()
        .find(|g| g.name.ends_with("x264_crf30.features.json"))
        .unwrap();
    let report = golden_report(&g.json);
    let parsed = Json::parse(&json_text(&report, Precision::Legacy));
    let frames = golden_frames(&parsed);
    for (ours, golden) in frames.iter().zip(&report.frames) {
        for ((name, a), (_, b)) in ours.metrics.iter().zip(&golden.metrics) {
            // %.6f is correctly rounded: within half a unit of the 6th decimal
            // (values that small get %.16f and are closer still), plus the
            // error of reading the printed decimal back.
            assert!(
                (a - b).abs() <= 0.5e-6 + b.abs() * 1e-15,
                "{name}: {a} vs {b}"
            );
        }
    }
    assert!(json_text(&report, Precision::Legacy).contains("\"integer_adm2\": 0.9"));
}

// ---------------------------------------------------------------------------
// (3) XML and CSV: hand-made report, expected text written from output.c.

fn small_report() -> Report {
    let frame = |n: u32, a: f64, b: f64| FrameMetrics {
        frame_num: n,
        metrics: vec![("integer_adm2".to_owned(), a), ("vmaf".to_owned(), b)],
    };
    let mut r = Report::from_frames(
        "3.2.0",
        123.456,
        vec![frame(0, 0.5, 87.267035450261787), frame(1, 0.25, 100.0)],
        vec![("apsnr_y".to_owned(), 41.5)],
    );
    // Pooled values are fixed here so the expected text does not depend on
    // the pooling code (tested above against the goldens).
    r.pooled = vec![
        (
            "integer_adm2".to_owned(),
            Some(PooledMetric {
                min: 0.25,
                max: 0.5,
                mean: 0.375,
                harmonic_mean: 0.3125,
            }),
        ),
        (
            "vmaf".to_owned(),
            Some(PooledMetric {
                min: 87.267035450261787,
                max: 100.0,
                mean: 1e-8,
                harmonic_mean: f64::NAN,
            }),
        ),
    ];
    r
}

const SIZE: QualitySize = QualitySize {
    width: 576,
    height: 324,
};

#[test]
fn xml_layout_matches_output_c() {
    let mut out = Vec::new();
    write_xml(&small_report(), Precision::Legacy, SIZE, &mut out).unwrap();
    let expected = r#"<VMAF version="3.2.0">
  <params qualityWidth="576" qualityHeight="324" />
  <fyi fps="123.46" />
  <frames>
    <frame frameNum="0" integer_adm2="0.500000" vmaf="87.267035" />
    <frame frameNum="1" integer_adm2="0.250000" vmaf="100.000000" />
  </frames>
  <pooled_metrics>
    <metric name="integer_adm2" min="0.250000" max="0.500000" mean="0.375000" harmonic_mean="0.312500" />
    <metric name="vmaf" min="87.267035" max="100.000000" mean="0.0000000100000000" harmonic_mean="nan" />
  </pooled_metrics>
  <aggregate_metrics apsnr_y="41.500000" />
</VMAF>
"#;
    assert_eq!(String::from_utf8(out).unwrap(), expected);

    let mut out = Vec::new();
    write_xml(&small_report(), Precision::Max, SIZE, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains(r#"<frame frameNum="0" integer_adm2="0.5" vmaf="87.267035450261787" />"#),
        "{text}"
    );
    assert!(
        text.contains(r#"mean="1e-08" harmonic_mean="nan" />"#),
        "{text}"
    );
}

#[test]
fn csv_layout_matches_output_c() {
    let mut out = Vec::new();
    write_csv(&small_report(), Precision::Legacy, &mut out).unwrap();
    let expected = "Frame,integer_adm2,vmaf,\n0,0.500000,87.267035,\n1,0.250000,100.000000,\n";
    assert_eq!(String::from_utf8(out).unwrap(), expected);

    let mut out = Vec::new();
    write_csv(&small_report(), Precision::Max, &mut out).unwrap();
    let expected = "Frame,integer_adm2,vmaf,\n0,0.5,87.267035450261787,\n1,0.25,100,\n";
    assert_eq!(String::from_utf8(out).unwrap(), expected);
}

#[test]
fn json_layout_of_nulls_and_empty_sections() {
    let mut r = small_report();
    r.frames[1].metrics[0].1 = f64::NAN;
    r.fps = f64::INFINITY;
    r.pooled[0].1 = None;
    let expected = r#"{
  "version": "3.2.0",
  "fps": null,
  "frames": [
    {
      "frameNum": 0,
      "metrics": {
        "integer_adm2": 0.500000,
        "vmaf": 87.267035
      }
    },
    {
      "frameNum": 1,
      "metrics": {
        "integer_adm2": null,        "vmaf": 100.000000
      }
    }
  ],
  "pooled_metrics": {
    "integer_adm2": {
    },
    "vmaf": {
      "min": 87.267035,
      "max": 100.000000,
      "mean": 0.0000000100000000,
      "harmonic_mean": null
    }
  },
  "aggregate_metrics": {
    "apsnr_y": 41.500000
  }
}
"#;
    let text = json_text(&r, Precision::Legacy);
    assert_eq!(text, expected);
    Json::parse(&text); // still valid JSON

    let empty = Report::from_frames("3.2.0", 0.0, vec![], vec![]);
    let expected = "{\n  \"version\": \"3.2.0\",\n  \"fps\": 0.00,\n  \"frames\": [\n  ],\n  \"pooled_metrics\": {\n  },\n  \"aggregate_metrics\": {\n  }\n}\n";
    assert_eq!(json_text(&empty, Precision::Max), expected);
}

#[test]
fn xml_and_csv_numbers_round_trip_at_max_precision() {
    let g = golden_files()
        .into_iter()
        .find(|g| g.name.ends_with("x264_crf30.features.json"))
        .unwrap();
    let report = golden_report(&g.json);

    let mut csv = Vec::new();
    write_csv(&report, Precision::Max, &mut csv).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[0], "Frame");
    assert_eq!(
        header[1..header.len() - 1],
        report.feature_names().collect::<Vec<_>>()[..]
    );
    for (line, frame) in lines.zip(&report.frames) {
        let fields: Vec<&str> = line.strip_suffix(',').unwrap().split(',').collect();
        assert_eq!(fields[0].parse::<u32>().unwrap(), frame.frame_num);
        for (field, (name, value)) in fields[1..].iter().zip(&frame.metrics) {
            assert_eq!(
                field.parse::<f64>().unwrap().to_bits(),
                value.to_bits(),
                "csv {name}"
            );
        }
    }

    let mut xml = Vec::new();
    write_xml(&report, Precision::Max, SIZE, &mut xml).unwrap();
    let xml = String::from_utf8(xml).unwrap();
    let frame_lines: Vec<&str> = xml
        .lines()
        .filter(|l| l.starts_with("    <frame "))
        .collect();
    assert_eq!(frame_lines.len(), report.frames.len());
    for (line, frame) in frame_lines.iter().zip(&report.frames) {
        let attrs = xml_attributes(line);
        assert_eq!(
            attrs[0],
            ("frameNum".to_owned(), frame.frame_num.to_string())
        );
        assert_eq!(attrs.len() - 1, frame.metrics.len());
        for ((k, v), (name, value)) in attrs[1..].iter().zip(&frame.metrics) {
            assert_eq!(k, name);
            assert_eq!(
                v.parse::<f64>().unwrap().to_bits(),
                value.to_bits(),
                "xml {name}"
            );
        }
    }
    let metric_lines: Vec<&str> = xml
        .lines()
        .filter(|l| l.starts_with("    <metric "))
        .collect();
    for (line, (name, pooled)) in metric_lines.iter().zip(&report.pooled) {
        let attrs = xml_attributes(line);
        assert_eq!(&attrs[0].1, name);
        for ((k, v), (method, value)) in attrs[1..].iter().zip(pooled.unwrap().iter()) {
            assert_eq!(k, method.name());
            assert_eq!(
                v.parse::<f64>().unwrap().to_bits(),
                value.to_bits(),
                "xml pooled {name}"
            );
        }
    }
}

/// `name="value"` pairs of one XML element line.
fn xml_attributes(line: &str) -> Vec<(String, String)> {
    line.split('"')
        .collect::<Vec<_>>()
        .chunks(2)
        .filter(|c| c.len() == 2)
        .map(|c| {
            let key = c[0]
                .trim()
                .trim_start_matches('<')
                .split_whitespace()
                .last()
                .unwrap();
            (key.trim_end_matches('=').to_owned(), c[1].to_owned())
        })
        .collect()
}
