//! The integer extractors' kernels, run by the real GPU engine on the
//! emulated device (`emu.rs`), against the CPU engine on golden pairs:
//! every per-frame value must have the same bits. No GPU needed; g++ is
//! (without it the tests print `skipped: ...` and pass, unless
//! `VMAFX_REQUIRE_GXX=1`).

use super::emu::{self, EmuDriver, Patch};
use super::Gpu;
use crate::feature::options::parse_key_values;
use crate::picture::{ChromaSubsampling, HostPicture, PictureFormat};
use crate::{ContextBuilder, FeatureScores};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Frames scored per pair: enough for motion's history and a subsample.
const FRAMES: usize = 4;

/// (folder, distorted file, width, height, subsampling, bit depth).
type Pair = (&'static str, &'static str, u32, u32, ChromaSubsampling, u8);

const PAN_8BIT: Pair = (
    "a_576x324_420p8_pan",
    "x264_crf30",
    576,
    324,
    ChromaSubsampling::Yuv420,
    8,
);
const ZOOM_10BIT: Pair = (
    "c_576x324_420p10_zoom",
    "x265_main10_crf30",
    576,
    324,
    ChromaSubsampling::Yuv420,
    10,
);
/// Odd sizes: every tile edge and mirror case.
const ODD_8BIT: Pair = (
    "e_321x179_420p8_zoom",
    "vp9_crf45",
    321,
    179,
    ChromaSubsampling::Yuv420,
    8,
);
const PAN_422_10BIT: Pair = (
    "d_352x288_422p10_pan",
    "x264_422p10_crf30",
    352,
    288,
    ChromaSubsampling::Yuv422,
    10,
);
const PAIRS: [Pair; 4] = [PAN_8BIT, ZOOM_10BIT, ODD_8BIT, PAN_422_10BIT];
/// 4:4:4: chroma planes as large as luma (integer_ms_ssim's
/// `enable_chroma` needs them at least 176x176; 4:2:2 352x288 has 176x288).
const PAN_444_8BIT: Pair = (
    "d_352x288_444p8_pan",
    "x264_444_crf32",
    352,
    288,
    ChromaSubsampling::Yuv444,
    8,
);

/// The emulated device, or None (printed) when g++ is missing and not
/// required.
fn device(defines: &[&str], patches: &[Patch]) -> Option<Gpu> {
    match emu::unavailable() {
        None => Some(EmuDriver::gpu(defines, patches)),
        Some(why) => {
            crate::testing::skip("VMAFX_REQUIRE_GXX", why);
            None
        }
    }
}

/// The first FRAMES frames of a golden .yuv.zst.
fn frames(path: &Path, format: PictureFormat) -> Vec<HostPicture> {
    let pictures = first_frames(path, format, FRAMES);
    assert_eq!(pictures.len(), FRAMES, "{}", path.display());
    pictures
}

/// Up to `n` frames of a golden .yuv.zst (all of them with `usize::MAX`).
fn first_frames(path: &Path, format: PictureFormat, n: usize) -> Vec<HostPicture> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut zst = zstd::stream::read::Decoder::new(file).unwrap();
    let mut bytes = vec![0u8; format.frame_bytes()];
    let mut pictures = Vec::new();
    while pictures.len() < n && zst.read_exact(&mut bytes).is_ok() {
        let mut p = HostPicture::new(format);
        p.fill_from_packed(&bytes);
        pictures.push(p);
    }
    pictures
}

/// `$VMAFX_TEST_ROOT/tests/golden` when set (test binaries carried to
/// another machine), else the source tree's.
fn golden_dir() -> PathBuf {
    std::env::var_os("VMAFX_TEST_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
        .join("tests/golden")
}

fn builder(
    format: PictureFormat,
    features: &[(&str, &str)],
    subsample: u32,
    gpu: Option<&Gpu>,
) -> ContextBuilder {
    let mut b = ContextBuilder::new(format).subsample(subsample);
    for (name, opts) in features {
        b = b.feature(name, parse_key_values(name, opts).unwrap());
    }
    if let Some(g) = gpu {
        b = b.gpu(g.clone());
    }
    b
}

fn score(
    pair: &Pair,
    features: &[(&str, &str)],
    subsample: u32,
    gpu: Option<&Gpu>,
) -> crate::Result<FeatureScores> {
    score_first(pair, features, subsample, gpu, FRAMES)
}

/// [`score`] on the first `n` frames of the pair (all with `usize::MAX`).
fn score_first(
    pair: &Pair,
    features: &[(&str, &str)],
    subsample: u32,
    gpu: Option<&Gpu>,
    n: usize,
) -> crate::Result<FeatureScores> {
    let (folder, distorted, w, h, sub, bits) = *pair;
    let format = PictureFormat::new(w, h, sub, bits).unwrap();
    let dir = golden_dir().join(folder);
    let refs = first_frames(&dir.join("ref.yuv.zst"), format, n);
    let dists = first_frames(&dir.join(format!("{distorted}.yuv.zst")), format, n);
    assert!(
        refs.len() >= FRAMES.min(n) && refs.len() == dists.len(),
        "{folder}"
    );
    let mut ctx = builder(format, features, subsample, gpu).build()?;
    for (r, d) in refs.into_iter().zip(dists) {
        ctx.submit(r, d)?;
    }
    ctx.finish()
}

/// The first difference: frames, names, order or bits.
fn difference(cpu: &FeatureScores, gpu: &FeatureScores) -> Option<String> {
    if cpu.frames.len() != gpu.frames.len() {
        return Some(format!("{} frames, {}", cpu.frames.len(), gpu.frames.len()));
    }
    for ((ci, cv), (gi, gv)) in cpu.frames.iter().zip(&gpu.frames) {
        let names = |v: &[(String, f64)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        if ci != gi || names(cv) != names(gv) {
            return Some(format!(
                "frame {ci}: {:?}, frame {gi}: {:?}",
                names(cv),
                names(gv)
            ));
        }
        for ((n, c), (_, g)) in cv.iter().zip(gv) {
            if c.to_bits() != g.to_bits() {
                return Some(format!(
                    "frame {ci} {n}: CPU {c:.17e} emulated GPU {g:.17e}"
                ));
            }
        }
    }
    None
}

/// `features` on `pairs`, CPU against the emulated device: the first
/// difference or failure, None when all agree (or g++ is missing).
fn compare(
    features: &[(&str, &str)],
    pairs: &[Pair],
    subsample: u32,
    defines: &[&str],
    patches: &[Patch],
) -> Option<String> {
    let gpu = device(defines, patches)?;
    for pair in pairs {
        let what = format!("{}/{} {features:?} subsample {subsample}", pair.0, pair.1);
        let cpu = score(pair, features, subsample, None).unwrap();
        assert!(!cpu.frames.is_empty() && !cpu.frames[0].1.is_empty());
        let emulated = match score(pair, features, subsample, Some(&gpu)) {
            Ok(s) => s,
            Err(e) => return Some(format!("{what}: {e}")),
        };
        if let Some(d) = difference(&cpu, &emulated) {
            return Some(format!("{what}: {d}"));
        }
        println!("{what}: {} frames bit-identical", cpu.frames.len());
    }
    None
}

fn check(features: &[(&str, &str)], pairs: &[Pair], subsample: u32, defines: &[&str]) {
    if let Some(d) = compare(features, pairs, subsample, defines, &[]) {
        panic!("{d}");
    }
}

/// A deliberate kernel bug must make the comparison fail (or the launch:
/// `expect` is in the message).
fn check_caught(
    features: &[(&str, &str)],
    pair: Pair,
    defines: &[&str],
    patch: Patch,
    expect: &str,
) {
    if device(&[], &[]).is_none() {
        return;
    }
    match compare(features, &[pair], 1, defines, &[patch]) {
        Some(d) => {
            assert!(d.contains(expect), "{patch:?}: {d}");
            println!("{patch:?} caught: {d}");
        }
        None => panic!("{patch:?}: not caught"),
    }
}

#[test]
fn psnr_kernels_match_the_cpu() {
    check(&[("psnr", "")], &PAIRS, 1, &[]);
}

#[test]
fn motion_kernels_match_the_cpu() {
    check(&[("motion", "")], &PAIRS, 1, &[]);
}

/// `motion_v2` alone, with its moving average, and joined with `motion`
/// (one instance writing both name sets, as on the CPU).
#[test]
fn motion_v2_kernels_match_the_cpu() {
    check(&[("motion_v2", "")], &PAIRS, 1, &[]);
    check(
        &[
            ("motion", "debug=true"),
            ("motion_v2", "motion_moving_average=true"),
        ],
        &[PAN_8BIT, ZOOM_10BIT],
        1,
        &[],
    );
    check(&[("motion_v2", ""), ("motion", "")], &[ODD_8BIT], 2, &[]);
}

/// `motion` and `motion_v2` together cost one SAD a frame on the device;
/// a five-frame `motion` window cannot share it and runs its own.
#[test]
fn motion_and_motion_v2_share_one_sad_kernel() {
    let Some(gpu) = device(&[], &[]) else { return };
    let sad_launches = |features: &[(&str, &str)]| {
        let (timed, times) = gpu.with_kernel_times();
        let scores = score(&PAN_8BIT, features, 1, Some(&timed)).unwrap();
        let v2 = "VMAF_integer_feature_motion_v2_sad_score";
        assert!(scores.names().iter().any(|n| n.starts_with(v2)));
        times
            .take()
            .unwrap()
            .iter()
            .filter(|t| t.name.starts_with("motion_sad"))
            .map(|t| t.launches)
            .sum::<u32>()
    };
    let frames = FRAMES as u32;
    assert_eq!(sad_launches(&[("motion_v2", "")]), frames - 1);
    assert_eq!(
        sad_launches(&[("motion", ""), ("motion_v2", "motion_moving_average=true")]),
        frames - 1
    );
    assert_eq!(
        sad_launches(&[
            ("motion", "motion_five_frame_window=true"),
            ("motion_v2", "")
        ]),
        (frames - 2) + (frames - 1)
    );
}

#[test]
fn vif_kernels_match_the_cpu() {
    check(&[("vif", "")], &PAIRS, 1, &[]);
}

#[test]
fn vif_debug_kernels_match_the_cpu() {
    check(&[("vif", "debug=true")], &[PAN_8BIT, ZOOM_10BIT], 1, &[]);
}

/// vif.cu's tensor-core pass (8-bit scale 0 on sm_80+), its mma.sync
/// emulated lane by lane from the PTX fragment layouts.
#[test]
fn vif_tensor_core_path_matches_the_cpu() {
    check(&[("vif", "")], &[PAN_8BIT, ODD_8BIT], 1, &["VIF_EMU_MMA"]);
}

#[test]
fn adm_kernels_match_the_cpu() {
    check(&[("adm", "")], &PAIRS, 1, &[]);
}

#[test]
fn adm_debug_kernels_match_the_cpu() {
    check(&[("adm", "debug=true")], &[PAN_8BIT, ZOOM_10BIT], 1, &[]);
}

/// A fractional enhancement gain limit: its products rounded to nearest in
/// libvmaf's vector columns, truncated in its scalar ones, at every scale
/// (1.5 makes ties at scale 0), on large and small tiles (odd sizes).
#[test]
fn adm_fractional_gain_limit_matches_the_cpu() {
    check(
        &[("adm", "debug=true:adm_enhn_gain_limit=1.5")],
        &[PAN_8BIT, ODD_8BIT],
        1,
        &[],
    );
}

#[test]
fn all_four_with_subsample_match_the_cpu() {
    let all = [("psnr", ""), ("motion", ""), ("vif", ""), ("adm", "")];
    check(&all, &[ODD_8BIT], 2, &[]);
}

/// The other extractors that are bit-identical on the device (exact sums:
/// integers, fixed-order doubles, psnr_hvs' exact float sums).
const OTHER_EXACT: [(&str, &str); 7] = [
    ("cambi", ""),
    ("cambi", "full_ref=true"),
    ("speed_chroma", ""),
    ("speed_temporal", ""),
    ("psnr_hvs", ""),
    ("float_psnr", ""),
    ("float_moment", ""),
];

/// On AMD (HIP's choices: `EMU_HIP` at 32 lanes as RDNA, `EMU_WAVE64` at
/// 64 as CDNA, 64 KiB of shared memory per block, checked at launch)
/// cambi's c-values run in AMD's 64-thread blocks (its entry point),
/// on the device, with the CPU's bits.
#[test]
fn cambi_fits_amd_shared_memory_with_the_cpu_bits() {
    for defines in [&["EMU_HIP"][..], &["EMU_WAVE64"][..]] {
        let Some(gpu) = device(defines, &[]) else {
            return;
        };
        let (timed, times) = gpu.with_kernel_times();
        for options in ["", "full_ref=true"] {
            let features = [("cambi", options)];
            for pair in [PAN_8BIT, ZOOM_10BIT, ODD_8BIT] {
                let cpu = score(&pair, &features, 1, None).unwrap();
                let amd = score(&pair, &features, 1, Some(&timed)).unwrap();
                if let Some(d) = difference(&cpu, &amd) {
                    panic!("{defines:?} cambi {options:?} {}/{}: {d}", pair.0, pair.1);
                }
            }
        }
        let names: Vec<String> = times.take().unwrap().into_iter().map(|t| t.name).collect();
        assert!(
            names.iter().any(|n| n == "cambi_c_values_wave64")
                && !names.iter().any(|n| n == "cambi_c_values"),
            "{defines:?}: c-values kernels launched: {names:?}"
        );
    }
}

#[test]
fn other_exact_kernels_match_the_cpu() {
    for feature in OTHER_EXACT {
        check(&[feature], &[PAN_8BIT, ZOOM_10BIT, ODD_8BIT], 1, &[]);
    }
}

/// The extractors that agree with the CPU within a relative 1e-5 on the
/// device (sums in another order, the device's math functions) must do so
/// here too: a kernel bug is far larger than that.
/// Synthetic 4:4:4 frames: a moving gradient plus noise over the full
/// range of `bits` (every frame differs, so motion has work).
fn synthetic_frames(format: PictureFormat, seed: u64) -> Vec<HostPicture> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let max = (1u64 << format.bit_depth) - 1;
    (0..FRAMES)
        .map(|f| {
            let mut bytes = Vec::with_capacity(format.frame_bytes());
            for plane in 0..3u64 {
                for y in 0..format.height as u64 {
                    for x in 0..format.width as u64 {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        let ramp = (x * 37 + y * 11 + f as u64 * 53 + plane * 7) * max / 400;
                        let noise = (state >> 33) % (max / 4 + 1);
                        let v = (ramp + noise) % (max + 1);
                        if format.bit_depth > 8 {
                            bytes.extend_from_slice(&(v as u16).to_le_bytes());
                        } else {
                            bytes.push(v as u8);
                        }
                    }
                }
            }
            let mut p = HostPicture::new(format);
            p.fill_from_packed(&bytes);
            p
        })
        .collect()
}

/// `features` on synthetic 4:4:4 pictures of every size of `sizes` at 8,
/// 12 and 16 bits (pictures seeded by `seed`), GPU against CPU bit for bit;
/// `present` names a value the CPU's first frame must have.
fn check_synthetic_sizes(
    features: &[(&str, &str)],
    sizes: &[(u32, u32)],
    seed: u64,
    present: &str,
) {
    let Some(gpu) = device(&[], &[]) else { return };
    for &(w, h) in sizes {
        for bits in [8u8, 12, 16] {
            let format = PictureFormat::new(w, h, ChromaSubsampling::Yuv444, bits).unwrap();
            let refs = synthetic_frames(format, seed + bits as u64);
            let dists = synthetic_frames(format, 100 * seed + bits as u64);
            let run = |gpu: Option<&Gpu>| {
                let mut ctx = builder(format, features, 1, gpu).build().unwrap();
                for (r, d) in refs.iter().zip(&dists) {
                    ctx.submit(r.clone(), d.clone()).unwrap();
                }
                ctx.finish().unwrap()
            };
            let cpu = run(None);
            assert!(cpu.frames.len() == FRAMES && cpu.get(0, present).is_some());
            if let Some(d) = difference(&cpu, &run(Some(&gpu))) {
                panic!("{w}x{h} {bits}-bit: {d}");
            }
        }
    }
}

/// motion (every kernel width: u8, u16, the 16-bit wide one) and psnr on
/// synthetic pictures at 8, 12 and 16 bits and sizes around motion's
/// 124-column strips and 64-row blocks (a strip's edge, two strips, one
/// column into a third), against the CPU.
#[test]
fn motion_and_psnr_match_the_cpu_at_any_size_and_depth() {
    check_synthetic_sizes(
        &[("motion", "debug=true"), ("psnr", "")],
        &[(16, 16), (17, 33), (125, 70), (246, 9), (249, 65)],
        1,
        "psnr_y",
    );
}

/// `ssim` (integer_ssim) on every golden pair, by either name and with its
/// dB options.
#[test]
fn integer_ssim_kernels_match_the_cpu() {
    check(&[("ssim", "")], &PAIRS, 1, &[]);
    check(
        &[("integer_ssim", "enable_db=true:clip_db=true")],
        &[PAN_8BIT, ZOOM_10BIT],
        1,
        &[],
    );
    check(&[("ssim", "enable_db=true")], &[ODD_8BIT], 2, &[]);
}

/// `ssim` on synthetic pictures at 8, 12 and 16 bits (above 12 bits the
/// moments' `int` products wrap, as in C) and sizes around the 32x8 tiles
/// and the 9-tap window (pictures narrower or shorter than a window).
#[test]
fn integer_ssim_matches_the_cpu_at_any_size_and_depth() {
    check_synthetic_sizes(
        &[("ssim", "")],
        &[(5, 3), (9, 9), (33, 17), (64, 8), (125, 70)],
        3,
        "ssim",
    );
}

#[test]
fn float_kernels_are_within_tolerance() {
    const TOL: f64 = 1e-5;
    let Some(gpu) = device(&[], &[]) else { return };
    let close = [
        ("float_vif", "debug=true"),
        ("float_adm", "debug=true"),
        // Barten's and the DLM paper's CSF weights (float_adm's csf.rs).
        ("float_adm", "adm_csf_mode=1:adm_csf_scale=1.3"),
        ("float_adm", "adm_csf_mode=2"),
        ("float_motion", "debug=true"),
        // Options the kernel lacks: the CPU extractor scores them.
        ("float_motion", "motion_add_uv=true:motion_filter_size=3"),
        ("float_ssim", "enable_lcs=true"),
        ("float_ms_ssim", "enable_lcs=true"),
        ("integer_ms_ssim", "enable_lcs=true"),
        ("ciede", ""),
    ];
    for feature in close {
        for pair in [PAN_8BIT, ZOOM_10BIT, ODD_8BIT] {
            let cpu = score(&pair, &[feature], 1, None).unwrap();
            let emulated = score(&pair, &[feature], 1, Some(&gpu)).unwrap();
            let worst = worst_relative_difference(&cpu, &emulated);
            assert!(
                worst <= TOL,
                "{}/{} {feature:?}: relative difference {worst:.3e} > {TOL:e}",
                pair.0,
                pair.1
            );
            println!("{}/{} {feature:?}: within {worst:.3e}", pair.0, pair.1);
        }
    }
}

/// `integer_ms_ssim` (VMAFx's MS-SSIM) with every option on every pair it
/// takes, chroma on the 4:2:2 and 4:4:4 pairs (on 4:2:0 pairs this small
/// both engines refuse it, with the same reason): within the float twins'
/// 1e-5. Its pyramid is the CPU's bit for bit (the halving's fused
/// multiply-adds included: `gpu::feature::integer_ms_ssim`'s tests), its
/// sums differ in double rounding only; measured here: 0 (every output,
/// every pair).
#[test]
fn integer_ms_ssim_kernels_are_within_tolerance() {
    const TOL: f64 = 1e-5;
    let Some(gpu) = device(&[], &[]) else { return };
    let chroma = "enable_chroma=true:enable_lcs=true";
    let runs: [(&str, &[Pair]); 4] = [
        ("", &PAIRS),
        ("enable_db=true", &[PAN_8BIT, ODD_8BIT]),
        ("enable_db=true:clip_db=true", &[ZOOM_10BIT, PAN_444_8BIT]),
        (chroma, &[PAN_422_10BIT, PAN_444_8BIT]),
    ];
    let mut worst = std::collections::BTreeMap::<String, (f64, f64)>::new();
    for (options, pairs) in runs {
        let feature = [("integer_ms_ssim", options)];
        for pair in pairs {
            let cpu = score(pair, &feature, 1, None).unwrap();
            let emulated = score(pair, &feature, 1, Some(&gpu)).unwrap();
            for (name, (abs, rel)) in differences(&cpu, &emulated) {
                assert!(
                    rel <= TOL,
                    "{}/{} {options:?} {name}: relative difference {rel:.3e} > {TOL:e}",
                    pair.0,
                    pair.1
                );
                let w = worst.entry(name).or_insert((0.0, 0.0));
                *w = (w.0.max(abs), w.1.max(rel));
            }
        }
    }
    assert!(worst.contains_key("float_ms_ssim_cr") && worst.contains_key("float_ms_ssim_s_scale4"));
    for (name, (abs, rel)) in &worst {
        println!("integer_ms_ssim {name}: worst absolute {abs:.3e}, relative {rel:.3e}");
    }
    // The kernels scored it: four 9/7 halvings and five stats launches a
    // plane a frame (the CPU's 9x9 one never ran).
    let (timed, times) = gpu.with_kernel_times();
    score(
        &PAN_444_8BIT,
        &[("integer_ms_ssim", chroma)],
        1,
        Some(&timed),
    )
    .unwrap();
    let times = times.take().unwrap();
    let launches = |prefix: &str| -> u32 {
        times
            .iter()
            .filter(|t| t.name.starts_with(prefix))
            .map(|t| t.launches)
            .sum()
    };
    let planes_frames = 3 * FRAMES as u32;
    assert_eq!(launches("float_ssim_decimate_97_"), 4 * planes_frames);
    assert_eq!(launches("float_ssim_stats_"), 5 * planes_frames);
    assert_eq!(launches("float_ssim_decimate_u"), 0);
    // Chroma below 176x176 (4:2:0 at 576x324: 288x162) is refused by the
    // CPU's set-up, which the twin shares.
    let cpu = score(&PAN_8BIT, &[("integer_ms_ssim", chroma)], 1, None).unwrap_err();
    let emulated = score(&PAN_8BIT, &[("integer_ms_ssim", chroma)], 1, Some(&gpu)).unwrap_err();
    assert_eq!(cpu.to_string(), emulated.to_string());
    assert!(cpu.to_string().contains("288x162"), "{cpu}");
}

/// Per output name, the largest absolute and relative difference of any
/// frame; names, order and frame count must match.
fn differences(
    cpu: &FeatureScores,
    gpu: &FeatureScores,
) -> std::collections::BTreeMap<String, (f64, f64)> {
    assert_eq!(cpu.frames.len(), gpu.frames.len(), "frame count");
    let mut worst = std::collections::BTreeMap::<String, (f64, f64)>::new();
    for ((ci, cv), (gi, gv)) in cpu.frames.iter().zip(&gpu.frames) {
        assert_eq!(ci, gi, "frame index");
        assert!(!cv.is_empty());
        assert_eq!(cv.len(), gv.len(), "frame {ci}: feature count");
        for ((cn, c), (gn, g)) in cv.iter().zip(gv) {
            assert_eq!(cn, gn, "frame {ci}: feature names");
            let (abs, rel) = if c == g {
                (0.0, 0.0)
            } else {
                let abs = (c - g).abs();
                (abs, abs / c.abs().max(g.abs()))
            };
            assert!(!rel.is_nan(), "frame {ci} {cn}: CPU {c} emulated GPU {g}");
            let w = worst.entry(cn.clone()).or_insert((0.0, 0.0));
            *w = (w.0.max(abs), w.1.max(rel));
        }
    }
    worst
}

/// The largest relative difference of any per-frame value; names, order
/// and frame count must match.
fn worst_relative_difference(cpu: &FeatureScores, gpu: &FeatureScores) -> f64 {
    differences(cpu, gpu)
        .values()
        .map(|&(_, rel)| rel)
        .fold(0.0, f64::max)
}

// The emulation catches bugs: a changed constant, a missing barrier, lanes
// that skip a warp operation, a shuffle from the wrong lane.

#[test]
fn a_wrong_filter_tap_is_caught() {
    let patch = ("vif.cu", "case 0: return 489;", "case 0: return 490;");
    check_caught(&[("vif", "")], ODD_8BIT, &[], patch, "vif");
}

#[test]
fn a_missing_block_barrier_is_caught() {
    // The masks of the tile and its border are read before all are written
    // (the small tiles' kernel, which the small golden pairs use).
    let patch = (
        "adm.cu",
        "    __syncthreads();\n\n    if (counted) {",
        "\n    if (counted) {",
    );
    check_caught(&[("adm", "")], ODD_8BIT, &[], patch, "adm");
}

#[test]
fn a_wrong_lane_exchange_is_caught() {
    // Motion's horizontal tap takes its right-hand neighbours from two
    // lanes away: wrong only inside whole strips (the pan pair has some).
    let patch = (
        "motion.cu",
        "lane_get(v[3], (lane + 1) % 32, 32)",
        "lane_get(v[3], (lane + 2) % 32, 32)",
    );
    check_caught(&[("motion", "")], PAN_8BIT, &[], patch, "motion");
}

/// The frame's sum of SSIM terms must be the CPU's raster-order running
/// double sum: adding a chunk's terms backwards where no map applies, or
/// maps that truncate instead of rounding, change the score's bits (so
/// both paths of the walk run on the pan pair).
#[test]
fn a_wrong_ssim_sum_is_caught() {
    let backwards = (
        "integer_ssim.cu",
        "sum = __dadd_rn(sum, terms[i])",
        "sum = __dadd_rn(sum, terms[base + end - 1 - i])",
    );
    check_caught(&[("ssim", "")], PAN_8BIT, &[], backwards, "ssim");
    let truncating = ("integer_ssim.cu", "f > 0.5 ? 1", "f > 2.0 ? 1");
    check_caught(&[("ssim", "")], PAN_8BIT, &[], truncating, "ssim");
}

#[test]
fn a_divergent_warp_is_caught() {
    // Half a warp at __syncthreads, half at a shuffle: a deadlock on a GPU
    // too; the launch fails instead of hanging.
    let patch = (
        "psnr.cu",
        "u64 row = block_sum_u64<THREADS>(acc, scratch);",
        "if (threadIdx.x % 32 < 16) __syncthreads();\n        u64 row = block_sum_u64<THREADS>(acc, scratch);",
    );
    check_caught(&[("psnr", "")], PAN_8BIT, &[], patch, "deadlock");
}

#[test]
fn a_wrong_tensor_core_fragment_is_caught() {
    // The A fragments' rows g and g + 8 swapped.
    let patch = (
        "vif.cu",
        "const int row = g + 8 * (q & 1),",
        "const int row = g + 8 * (1 - (q & 1)),",
    );
    check_caught(&[("vif", "")], PAN_8BIT, &["VIF_EMU_MMA"], patch, "vif");
}

/// layout.cu: golden pictures as device frames in a decoder layout (the
/// chroma split, P010's shift) score as the host pictures on the CPU.
#[test]
fn device_frames_through_the_layout_kernels_match_the_cpu() {
    use crate::gpu::pool::FramePool;
    use crate::import::{Acquire, PixelFormat};
    use std::time::Duration;
    let Some(gpu) = device(&[], &[]) else { return };
    let features = [("psnr", "enable_chroma=true"), ("motion", "")];
    for (pair, layout) in [
        (ODD_8BIT, PixelFormat::Nv12),
        (ZOOM_10BIT, PixelFormat::P010),
    ] {
        let (folder, distorted, w, h, sub, bits) = pair;
        let format = PictureFormat::new(w, h, sub, bits).unwrap();
        let dir = golden_dir().join(folder);
        let refs = frames(&dir.join("ref.yuv.zst"), format);
        let dists = frames(&dir.join(format!("{distorted}.yuv.zst")), format);
        let mut cpu = builder(format, &features, 1, None).build().unwrap();
        let mut emulated = builder(format, &features, 1, Some(&gpu)).build().unwrap();
        let pool = FramePool::new(&gpu, w, h, layout, 2 * FRAMES).unwrap();
        let stream = gpu.stream().unwrap();
        for (r, d) in refs.iter().zip(&dists) {
            cpu.submit(r.clone(), d.clone()).unwrap();
            let [fr, fd] = [r, d].map(|p| {
                let frame = pool.take(Duration::from_secs(1)).unwrap();
                frame.write_from_host(&stream, p).unwrap();
                frame.into_frame(Acquire::None, vec![]).unwrap()
            });
            emulated.submit_frames(&fr, &fd).unwrap();
        }
        let (counts, _) = emulated.transfer_counts().unwrap();
        assert!(
            counts.passes > 0,
            "{layout}: no layout pass ran: {counts:?}"
        );
        let (cpu, emulated) = (cpu.finish().unwrap(), emulated.finish().unwrap());
        if let Some(d) = difference(&cpu, &emulated) {
            panic!("{folder}/{distorted} as {layout}: {d}");
        }
        println!("{folder}/{distorted} as {layout}: bit-identical");
    }
}

/// AMD's CDNA GPUs run 64-lane waves, in lockstep: every exact kernel,
/// built with `EMU_WAVE64` (64-lane warps, the kernels' AMD branches: HIP's
/// `__shfl`/`__shfl_xor` and wave barriers), must give the CPU's bits too.
#[test]
fn exact_kernels_match_the_cpu_in_64_lane_waves() {
    const WAVE64: &[&str] = &["EMU_WAVE64"];
    let first = [
        ("psnr", ""),
        ("motion", ""),
        ("motion_v2", ""),
        ("vif", ""),
        ("adm", ""),
        ("ssim", ""),
    ];
    for feature in first.into_iter().chain(OTHER_EXACT) {
        check(&[feature], &[PAN_8BIT, ZOOM_10BIT, ODD_8BIT], 1, WAVE64);
    }
}

/// A lane exchange that assumed 32-lane warps would read the wrong lane in
/// a 64-lane wave: shown by making the AMD branch's butterfly cross the
/// 32-lane groups (width 64).
#[test]
fn a_wave_size_assumption_is_caught_at_64_lanes() {
    check_caught(
        &[("psnr", "")],
        PAN_8BIT,
        &["EMU_WAVE64"],
        (
            "psnr.cu",
            "#define lane_xor(v, mask, width) __shfl_xor((v), (mask), (width))",
            "#define lane_xor(v, mask, width) __shfl_xor((v), (mask) * 2, 64)",
        ),
        "psnr",
    );
}

/// Every golden pair of tests/golden (tests/common's `PAIRS`).
const EVERY_PAIR: [Pair; 8] = [
    (
        "a_576x324_420p8_pan",
        "x264_crf18",
        576,
        324,
        ChromaSubsampling::Yuv420,
        8,
    ),
    PAN_8BIT,
    (
        "a_576x324_420p8_pan",
        "x264_crf42",
        576,
        324,
        ChromaSubsampling::Yuv420,
        8,
    ),
    (
        "b_1280x720_420p8_zoom",
        "downup_640x360_bicubic",
        1280,
        720,
        ChromaSubsampling::Yuv420,
        8,
    ),
    ZOOM_10BIT,
    PAN_422_10BIT,
    PAN_444_8BIT,
    ODD_8BIT,
];

/// `features` on every frame of `pairs`, CPU against the emulated device
/// built with `defines`: panics at the first difference.
fn check_every_frame(features: &[(&str, &str)], pairs: &[Pair], defines: &[&str]) {
    let Some(gpu) = device(defines, &[]) else {
        return;
    };
    for pair in pairs {
        let what = format!("{}/{} {features:?} {defines:?}", pair.0, pair.1);
        let cpu = score_first(pair, features, 1, None, usize::MAX).unwrap();
        let emulated = score_first(pair, features, 1, Some(&gpu), usize::MAX)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        if let Some(d) = difference(&cpu, &emulated) {
            panic!("{what}: {d}");
        }
        println!("{what}: {} frames bit-identical", cpu.frames.len());
    }
}

/// `ssimulacra2`: every frame of every golden pair (4:2:0, 4:2:2, 4:4:4,
/// 8 and 10 bits, the odd 321x179) gives the CPU's bits, in 32-lane warps.
#[test]
fn ssimulacra2_matches_the_cpu_on_every_golden_frame() {
    check_every_frame(&[("ssimulacra2", "")], &EVERY_PAIR, &[]);
}

/// The same in AMD's 64-lane waves.
#[test]
fn ssimulacra2_matches_the_cpu_in_64_lane_waves() {
    check_every_frame(&[("ssimulacra2", "")], &EVERY_PAIR, &["EMU_WAVE64"]);
}

/// Every `yuv_matrix` (BT.709/BT.601, limited/full range) on the odd-size
/// 4:2:0, the 10-bit 4:2:2 and the 4:4:4 pairs.
#[test]
fn ssimulacra2_matches_the_cpu_with_every_yuv_matrix() {
    for matrix in ["yuv_matrix=1", "yuv_matrix=2", "yuv_matrix=3"] {
        check(
            &[("ssimulacra2", matrix)],
            &[ODD_8BIT, PAN_422_10BIT, PAN_444_8BIT],
            1,
            &[],
        );
    }
    check(
        &[("ssimulacra2", "yuv_matrix=3")],
        &[ODD_8BIT],
        2,
        &["EMU_WAVE64"],
    );
}

/// Synthetic 4:4:4 pictures at 8, 12 and 16 bits and sizes around the
/// blur's borders and the scales' limits: the smallest picture (8x8, one
/// scale), a blur narrower than its 4-lane steps (9 wide), five scales
/// (64x64: the weights read on in sequence), tall and wide strips, odd
/// sizes at every halving.
#[test]
fn ssimulacra2_matches_the_cpu_at_any_size_and_depth() {
    check_synthetic_sizes(
        &[("ssimulacra2", "")],
        &[(8, 8), (9, 17), (64, 64), (23, 260), (261, 15), (133, 97)],
        5,
        "ssimulacra2",
    );
}

/// The comparison sees a blur off by one rounding: the vertical pass with
/// its inner multiply-add unfused (rounded product, then rounded sum).
#[test]
fn an_unfused_ssimulacra2_blur_is_caught() {
    check_caught(
        &[("ssimulacra2", "")],
        ODD_8BIT,
        &[],
        (
            "ssimulacra2.cu",
            "-__fmaf_rn(g.d1[k], y1[p][k], y2[p][k])",
            "-fadd(fmul(g.d1[k], y1[p][k]), y2[p][k])",
        ),
        "ssimulacra2",
    );
}

/// The row tiles are shared: without the barrier between loading a tile
/// and reading it, threads read other rows' inputs before they are there.
#[test]
fn a_missing_ssimulacra2_tile_barrier_is_caught() {
    check_caught(
        &[("ssimulacra2", "")],
        ODD_8BIT,
        &[],
        (
            "ssimulacra2.cu",
            "        __syncthreads();\n        if (r < rows_here) {",
            "        if (r < rows_here) {",
        ),
        "ssimulacra2",
    );
}

/// cambi's option sets that change its blocks' work: windows smaller than
/// a column's threads (the window shrinks with the picture: 33 is 3
/// columns at 352x288), more contrast steps than threads, PQ's wide band.
#[test]
fn cambi_option_sets_match_the_cpu() {
    for options in [
        "window_size=33:topk=0.1:tvi_threshold=0.012:max_log_contrast=3",
        "window_size=15",
        "eotf=pq:enc_bitdepth=8:topk=1.0",
        "max_log_contrast=5:tvi_threshold=0.0001:topk=0.0001",
    ] {
        check(&[("cambi", options)], &[PAN_422_10BIT, PAN_8BIT], 1, &[]);
    }
}
