//! `ssimulacra2` against libjxl's `tools/ssimulacra2` (golden runs `J`,
//! see `tests/golden/README.md`): every frame of every golden pair within
//! 0.01, pooled values too; the `yuv_matrix` option; refusals; the `vmafx`
//! binary.

use crate::common;

use common::extractor::{create_extractor, expect_bad_option, run_extractor, run_on_pair};
use common::{Golden, Pair, PAIRS};
use vmafx::feature::ssimulacra2::colour::{self, YuvMatrix};
use vmafx::feature::ssimulacra2::planes::Planes3;
use vmafx::feature::ssimulacra2::{scale_sizes, Ssimulacra2, MAX_SCALES};
use vmafx::pool::Pooler;
use vmafx::{ChromaSubsampling, Error, HostPicture, PictureFormat, PlaneId};

/// The bound the issue sets: |ours - libjxl| on every frame.
const TOLERANCE: f64 = 0.01;
const FEATURE: &str = "ssimulacra2";

/// The worst absolute difference seen, and where.
#[derive(Default)]
struct Worst {
    diff: f64,
    at: String,
    frames: usize,
    identical: usize,
}

impl Worst {
    fn note(&mut self, ours: f64, golden: f64, at: impl FnOnce() -> String) {
        let d = (ours - golden).abs();
        assert!(
            d <= TOLERANCE,
            "{}: ours {ours:.17}, libjxl {golden:.17} (diff {d:.3e} > {TOLERANCE})",
            at()
        );
        if d == 0.0 {
            self.identical += 1;
        }
        if d > self.diff || self.at.is_empty() {
            self.diff = d;
            self.at = at();
        }
    }
}

/// Asserts `ours` (per frame) and its pooled values against the golden.
fn compare(pair: &Pair, golden: &Golden, ours: &[f64], worst: &mut Worst, pooled: &mut Worst) {
    assert_eq!(ours.len(), golden.frames.len(), "{}: frames", pair.name());
    let mut pooler = Pooler::new();
    for (i, &value) in ours.iter().enumerate() {
        let expected = golden.value(i, FEATURE).expect("golden ssimulacra2");
        worst.note(value, expected, || format!("{} frame {i}", pair.name()));
        worst.frames += 1;
        pooler.push(value);
    }
    let ours = pooler.finish().expect("frames");
    let expected = &golden.pooled[FEATURE];
    for (method, value) in ours.iter() {
        let name = method.name();
        pooled.note(value, expected[name], || {
            format!("{} pooled {name}", pair.name())
        });
    }
}

fn scores(values: &[common::extractor::FrameValues]) -> Vec<f64> {
    values
        .iter()
        .map(|v| {
            assert_eq!(v.len(), 1, "{v:?}");
            v[FEATURE]
        })
        .collect()
}

#[test]
fn every_golden_frame_is_within_0_01_of_libjxl() {
    let (mut worst, mut pooled) = (Worst::default(), Worst::default());
    for pair in PAIRS {
        let golden = pair.golden(FEATURE);
        let ours = scores(&run_on_pair(pair, FEATURE, ""));
        compare(pair, &golden, &ours, &mut worst, &mut pooled);
    }
    assert_eq!(worst.frames, 132, "every golden frame");
    println!(
        "ssimulacra2 vs libjxl, {} frames ({} bit-identical): worst |diff| {:.3e} at {}; \
         pooled: worst {:.3e} at {}",
        worst.frames, worst.identical, worst.diff, worst.at, pooled.diff, pooled.at
    );
}

#[test]
fn a_threaded_context_gives_the_extractors_values() {
    let pair = &PAIRS[7]; // odd size 321x179, standard ceil-size chroma
    let single = scores(&run_on_pair(pair, FEATURE, ""));
    let mut context = vmafx::ContextBuilder::new(pair.format())
        .threads(2)
        .feature(FEATURE, vec![])
        .build()
        .unwrap();
    for (r, d) in pair.reference().into_iter().zip(pair.distorted_pictures()) {
        context.submit(r, d).unwrap();
    }
    let result = context.finish().unwrap();
    let threaded: Vec<f64> = result
        .frames
        .iter()
        .map(|(_, values)| values.iter().find(|(n, _)| n == FEATURE).unwrap().1)
        .collect();
    assert_eq!(threaded, single);
}

#[test]
fn yuv_matrix_numbers_name_the_documented_matrices() {
    // One 4:4:4 8-bit pixel, converted by every matrix, against the
    // textbook inverse in f64.
    let format = PictureFormat::new(8, 8, ChromaSubsampling::Yuv444, 8).unwrap();
    let mut picture = HostPicture::new(format);
    let (yv, cb, cr) = (100u8, 150u8, 90u8);
    for (plane, value) in PlaneId::ALL.into_iter().zip([yv, cb, cr]) {
        picture.plane_u8_mut(plane).fill(value);
    }
    let cases = [
        (0, 0.2126, 0.0722, true),
        (1, 0.299, 0.114, true),
        (2, 0.2126, 0.0722, false),
        (3, 0.299, 0.114, false),
    ];
    for (option, kr, kb, limited) in cases {
        let matrix = YuvMatrix::from_option(option).unwrap();
        let mut rgb = Planes3::default();
        colour::to_srgb(&picture, matrix, &mut rgb);
        let kg = 1.0 - kr - kb;
        let (y, u, v) = (yv as f64 / 255.0, cb as f64 / 255.0, cr as f64 / 255.0);
        let (yn, un, vn) = if limited {
            let c = 255.0 / 224.0;
            (
                (y - 16.0 / 255.0) * 255.0 / 219.0,
                (u - 0.5) * c,
                (v - 0.5) * c,
            )
        } else {
            (y, u - 0.5, v - 0.5)
        };
        let expected = [
            yn + 2.0 * (1.0 - kr) * vn,
            yn - 2.0 * kb * (1.0 - kb) / kg * un - 2.0 * kr * (1.0 - kr) / kg * vn,
            yn + 2.0 * (1.0 - kb) * un,
        ];
        for (c, e) in expected.iter().enumerate() {
            let got = rgb.planes[c][0] as f64;
            assert!(
                (got - e).abs() < 1e-6,
                "matrix {option} channel {c}: {got} vs {e}"
            );
        }
    }
    assert_eq!(YuvMatrix::from_option(4), None);
}

#[test]
fn yuv_matrix_option_reaches_the_score() {
    let pair = &PAIRS[6]; // 4:4:4 8-bit
    let (r, d) = (pair.reference(), pair.distorted_pictures());
    let run = |options: &str| {
        let mut x = create_extractor(FEATURE, options, &pair.format()).unwrap();
        scores(&run_extractor(x.as_mut(), &r[..2], &d[..2]))
    };
    let default = run("");
    assert_eq!(run("yuv_matrix=0"), default);
    for option in 1..=3 {
        let other = run(&format!("yuv_matrix={option}"));
        assert_ne!(other, default, "yuv_matrix={option}");
        // Another matrix is still the same picture seen slightly differently.
        for (a, b) in other.iter().zip(&default) {
            assert!((a - b).abs() < 10.0, "yuv_matrix={option}: {a} vs {b}");
        }
    }
}

#[test]
fn bad_options_are_refused_naming_the_option() {
    expect_bad_option(FEATURE, "yuv_matrix=4", "yuv_matrix");
    expect_bad_option(FEATURE, "yuv_matrix=-1", "yuv_matrix");
    expect_bad_option(FEATURE, "yuv_matrix=bt709", "yuv_matrix");
    expect_bad_option(FEATURE, "matrix=1", "matrix");
}

fn extractor_error(format: PictureFormat) -> String {
    match create_extractor(FEATURE, "", &format) {
        Err(e @ Error::Extractor { .. }) => e.to_string(),
        Err(e) => panic!("{format}: expected an extractor error, got {e}"),
        Ok(_) => panic!("{format}: accepted"),
    }
}

#[test]
fn pictures_it_cannot_score_are_refused() {
    let small = PictureFormat::new(7, 64, ChromaSubsampling::Yuv420, 8).unwrap();
    let msg = extractor_error(small);
    assert!(msg.contains(FEATURE) && msg.contains("7x64"), "{msg}");
    let gray = PictureFormat::new(64, 64, ChromaSubsampling::Yuv400, 8).unwrap();
    let msg = extractor_error(gray);
    assert!(msg.contains(FEATURE) && msg.contains("4:0:0"), "{msg}");
}

/// A picture of `format` with every plane a smooth pattern plus `seed`
/// noise (deterministic).
fn pattern(format: PictureFormat, seed: u32) -> HostPicture {
    let mut next = common::synthetic::xorshift(seed);
    let max = (1u32 << format.bit_depth) - 1;
    let mut p = HostPicture::new(format);
    for plane in PlaneId::ALL {
        let (w, h) = format.plane_size(plane);
        let stride = p.stride(plane);
        for y in 0..h {
            for x in 0..w {
                let smooth = (x * 5 + y * 3 + plane.index() * 40) as u32 % 200 + 20;
                let v = (smooth * max / 255 + next() % (max / 32 + 1)).min(max);
                let i = y * stride + x;
                if format.bit_depth == 8 {
                    p.plane_u8_mut(plane)[i] = v as u8;
                } else {
                    p.plane_u16_mut(plane)[i] = v as u16;
                }
            }
        }
    }
    p
}

#[test]
fn scales_stop_where_libjxl_stops() {
    // A scale is computed while the previous one is at least 8x8.
    for (w, h, scales) in [
        (8, 8, 2),
        (15, 64, 3),
        (16, 16, 3),
        (64, 64, 5),
        (321, 179, 6),
    ] {
        let format = PictureFormat::new(w, h, ChromaSubsampling::Yuv420, 8).unwrap();
        let (r, d) = (pattern(format, 1), pattern(format, 2));
        let mut metric = Ssimulacra2::new(YuvMatrix::Bt709Limited);
        assert_eq!(metric.frame_norms(&r, &d).len(), scales, "{w}x{h}");
        // The sizes the GPU twin plans its pyramid with.
        assert_eq!(scale_sizes(w as usize, h as usize).len(), scales, "{w}x{h}");
        assert!(scales <= MAX_SCALES);
        assert_eq!(metric.frame_score(&r, &r), 100.0, "{w}x{h}: identical");
        let s = metric.frame_score(&r, &d);
        assert!(s.is_finite() && s < 100.0, "{w}x{h}: {s}");
    }
}

#[test]
fn every_depth_and_layout_is_read_on_one_scale() {
    // 16-bit samples v * 257 are the 8-bit samples v on the same scale
    // (v / 255): the R'G'B' pictures agree to float rounding (the reciprocal
    // of 65535 instead of 255), 4:2:2 and 4:2:0 at odd sizes reading
    // ceil-size chroma. The score agrees less closely: the SSIM map's
    // variances (blur(a a) - blur(a)^2, in f32) amplify last-bit input
    // differences about 10^4 times, as in libjxl.
    for subsampling in [
        ChromaSubsampling::Yuv420,
        ChromaSubsampling::Yuv422,
        ChromaSubsampling::Yuv444,
    ] {
        let f8 = PictureFormat::new(67, 45, subsampling, 8).unwrap();
        let f16 = PictureFormat::new(67, 45, subsampling, 16).unwrap();
        let widen = |p: &HostPicture| {
            let mut out = HostPicture::new(f16);
            for plane in PlaneId::ALL {
                let src = p.plane_u8(plane);
                let stride = out.stride(plane);
                for y in 0..src.height {
                    for (x, &v) in src.row(y).iter().enumerate() {
                        out.plane_u16_mut(plane)[y * stride + x] = v as u16 * 257;
                    }
                }
            }
            out
        };
        let (r, d) = (pattern(f8, 3), pattern(f8, 4));
        let (mut rgb8, mut rgb16) = (Planes3::default(), Planes3::default());
        colour::to_srgb(&r, YuvMatrix::Bt709Limited, &mut rgb8);
        colour::to_srgb(&widen(&r), YuvMatrix::Bt709Limited, &mut rgb16);
        for c in 0..3 {
            for (a, b) in rgb8.planes[c].iter().zip(&rgb16.planes[c]) {
                assert!((a - b).abs() <= 2.5e-7, "{subsampling}: {a} vs {b}");
            }
        }
        let mut metric = Ssimulacra2::new(YuvMatrix::Bt709Limited);
        let s8 = metric.frame_score(&r, &d);
        let s16 = metric.frame_score(&widen(&r), &widen(&d));
        assert!((s8 - s16).abs() < 0.05, "{subsampling}: {s8} vs {s16}");
        assert!(s8 < 100.0);
    }
}

#[test]
fn vmafx_binary_scores_the_odd_size_pair() {
    let pair = &PAIRS[7];
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path().join("ref.yuv");
    let d = dir.path().join("dist.yuv");
    std::fs::write(&r, common::decompress(&pair.reference_path())).unwrap();
    std::fs::write(&d, common::decompress(&pair.distorted_path())).unwrap();
    let out = dir.path().join("out.json");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_vmafx"))
        .args(["-r", r.to_str().unwrap(), "-d", d.to_str().unwrap()])
        .args(["-w", "321", "-h", "179", "-p", "420", "-b", "8"])
        .args(["--threads", "1", "--no_prediction", "--feature", FEATURE])
        .args(["--json", "--precision", "max", "-q", "-o"])
        .arg(&out)
        .output()
        .expect("run vmafx");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ours = Golden::load(&out);
    let golden = pair.golden(FEATURE);
    let values: Vec<f64> = (0..ours.frames.len())
        .map(|i| {
            assert_eq!(ours.frames[i].1.len(), 1, "{:?}", ours.frames[i]);
            ours.value(i, FEATURE).unwrap()
        })
        .collect();
    let (mut worst, mut pooled) = (Worst::default(), Worst::default());
    compare(pair, &golden, &values, &mut worst, &mut pooled);
    // The file's pooled block is the one the tool wrote, not recomputed.
    for (method, value) in &ours.pooled[FEATURE] {
        let expected = golden.pooled[FEATURE][method];
        assert!((value - expected).abs() <= TOLERANCE, "{method}");
    }
}
