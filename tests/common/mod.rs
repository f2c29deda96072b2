//! Shared helpers for the parity tests: the golden vectors copied from
//! libvmaf 3.2.0 runs into `tests/golden` (see its README).
#![allow(dead_code)]

pub mod extractor;
pub mod gpu;
pub mod synthetic;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use vmafx::{ChromaSubsampling, HostPicture, PictureFormat};

/// `$VMAFX_TEST_ROOT/tests/golden` when set (test binaries carried to
/// another machine), else the source tree's.
pub fn golden_dir() -> PathBuf {
    let root = std::env::var_os("VMAFX_TEST_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf());
    root.join("tests/golden")
}

/// One reference/distorted pair of the golden set.
#[derive(Debug, Clone)]
pub struct Pair {
    pub folder: &'static str,
    pub distorted: &'static str,
    pub width: u32,
    pub height: u32,
    pub subsampling: ChromaSubsampling,
    pub bit_depth: u8,
}

impl Pair {
    pub fn format(&self) -> PictureFormat {
        PictureFormat::new(self.width, self.height, self.subsampling, self.bit_depth).unwrap()
    }
    pub fn reference_path(&self) -> PathBuf {
        golden_dir().join(self.folder).join("ref.yuv.zst")
    }
    pub fn distorted_path(&self) -> PathBuf {
        golden_dir()
            .join(self.folder)
            .join(format!("{}.yuv.zst", self.distorted))
    }
    pub fn golden_path(&self, run: &str) -> PathBuf {
        golden_dir()
            .join(self.folder)
            .join(format!("{}.{run}.json", self.distorted))
    }
    pub fn reference(&self) -> Vec<HostPicture> {
        load_yuv_zst(&self.reference_path(), self.format())
    }
    pub fn distorted_pictures(&self) -> Vec<HostPicture> {
        load_yuv_zst(&self.distorted_path(), self.format())
    }
    pub fn golden(&self, run: &str) -> Golden {
        Golden::load(&self.golden_path(run))
    }
    pub fn name(&self) -> String {
        format!("{}/{}", self.folder, self.distorted)
    }
}

use ChromaSubsampling::*;

/// Every pair of the golden set.
pub const PAIRS: &[Pair] = &[
    Pair {
        folder: "a_576x324_420p8_pan",
        distorted: "x264_crf18",
        width: 576,
        height: 324,
        subsampling: Yuv420,
        bit_depth: 8,
    },
    Pair {
        folder: "a_576x324_420p8_pan",
        distorted: "x264_crf30",
        width: 576,
        height: 324,
        subsampling: Yuv420,
        bit_depth: 8,
    },
    Pair {
        folder: "a_576x324_420p8_pan",
        distorted: "x264_crf42",
        width: 576,
        height: 324,
        subsampling: Yuv420,
        bit_depth: 8,
    },
    Pair {
        folder: "b_1280x720_420p8_zoom",
        distorted: "downup_640x360_bicubic",
        width: 1280,
        height: 720,
        subsampling: Yuv420,
        bit_depth: 8,
    },
    Pair {
        folder: "c_576x324_420p10_zoom",
        distorted: "x265_main10_crf30",
        width: 576,
        height: 324,
        subsampling: Yuv420,
        bit_depth: 10,
    },
    Pair {
        folder: "d_352x288_422p10_pan",
        distorted: "x264_422p10_crf30",
        width: 352,
        height: 288,
        subsampling: Yuv422,
        bit_depth: 10,
    },
    Pair {
        folder: "d_352x288_444p8_pan",
        distorted: "x264_444_crf32",
        width: 352,
        height: 288,
        subsampling: Yuv444,
        bit_depth: 8,
    },
    Pair {
        folder: "e_321x179_420p8_zoom",
        distorted: "vp9_crf45",
        width: 321,
        height: 179,
        subsampling: Yuv420,
        bit_depth: 8,
    },
];

/// The v1.0.16 models the `models_v1.0.16` goldens were run with.
pub const V1_0_16_MODELS: [&str; 8] = [
    "vmaf_v1.0.16_3d0h",
    "vmaf_v1.0.16_3d0h_2160",
    "vmaf_v1.0.16_5d0h",
    "vmaf_v1.0.16_1d5h_2160",
    "vmaf_v1.0.16_hfr_3d0h",
    "vmaf_v1.0.16_hfr_3d0h_2160",
    "vmaf_v1.0.16_hfr_5d0h",
    "vmaf_v1.0.16_hfr_1d5h_2160",
];

pub fn decompress(path: &Path) -> Vec<u8> {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    zstd::stream::decode_all(f).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Loads a whole (small) compressed golden .yuv as pictures.
pub fn load_yuv_zst(path: &Path, format: PictureFormat) -> Vec<HostPicture> {
    let bytes = decompress(path);
    let n = format.frame_bytes();
    assert_eq!(
        bytes.len() % n,
        0,
        "{}: not a whole number of frames",
        path.display()
    );
    bytes
        .chunks_exact(n)
        .map(|frame| {
            let mut p = HostPicture::new(format);
            p.fill_from_packed(frame);
            p
        })
        .collect()
}

/// A golden JSON file: per-frame metrics, pooled and aggregate metrics.
#[derive(Debug, Clone)]
pub struct Golden {
    pub frames: Vec<(u32, BTreeMap<String, f64>)>,
    pub pooled: BTreeMap<String, BTreeMap<String, f64>>,
    pub aggregate: BTreeMap<String, f64>,
}

impl Golden {
    pub fn load(path: &Path) -> Golden {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let frames = v["frames"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let n = f["frameNum"].as_u64().unwrap() as u32;
                let m = f["metrics"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_f64().unwrap()))
                    .collect();
                (n, m)
            })
            .collect();
        let pooled = v["pooled_metrics"]
            .as_object()
            .map(|o| {
                o.iter()
                    .map(|(k, v)| {
                        let m = v
                            .as_object()
                            .unwrap()
                            .iter()
                            .map(|(k, v)| (k.clone(), v.as_f64().unwrap()))
                            .collect();
                        (k.clone(), m)
                    })
                    .collect()
            })
            .unwrap_or_default();
        let aggregate = v["aggregate_metrics"]
            .as_object()
            .map(|o| {
                o.iter()
                    .map(|(k, v)| (k.clone(), v.as_f64().unwrap()))
                    .collect()
            })
            .unwrap_or_default();
        Golden {
            frames,
            pooled,
            aggregate,
        }
    }

    /// The golden value of `feature` at frame position `i` of the file.
    pub fn value(&self, i: usize, feature: &str) -> Option<f64> {
        self.frames[i].1.get(feature).copied()
    }
}

/// Relative difference, with an absolute floor for values near zero.
pub fn rel_diff(a: f64, b: f64) -> f64 {
    if a == b {
        return 0.0;
    }
    (a - b).abs() / a.abs().max(b.abs()).max(1e-300)
}

/// Asserts `actual` matches `expected` within a relative `tol`, naming what
/// was compared.
pub fn assert_close(what: &str, actual: f64, expected: f64, tol: f64) {
    let d = rel_diff(actual, expected);
    assert!(
        d <= tol,
        "{what}: got {actual:.17e}, golden {expected:.17e} (relative diff {d:.3e} > {tol:.0e})"
    );
}

/// Whether this CPU's `rcpss` gives the reciprocal estimates of the CPU the
/// goldens were made on (an AMD EPYC). Float ADM divides by `rcpss` refined
/// by one Newton-Raphson step, exactly as libvmaf does (ADR 0005), so on
/// another vendor its outputs differ from the goldens in the last bits, as
/// libvmaf's own would.
pub fn rcpss_as_goldens() -> bool {
    cpu_vendor() == "AuthenticAMD"
}

/// The relative bound of float ADM outputs on a CPU whose `rcpss` is not
/// the goldens' (worst measured on an Intel Xeon: 1.8e-7, `adm_scale1_egl_1`;
/// `aim` 1.7e-8).
pub const OTHER_RCPSS_TOL: f64 = 1e-6;

/// `tol` for values computed from float ADM: as given on the goldens'
/// vendor, else no tighter than [`OTHER_RCPSS_TOL`].
pub fn float_adm_tol(tol: f64) -> f64 {
    if rcpss_as_goldens() {
        tol
    } else {
        tol.max(OTHER_RCPSS_TOL)
    }
}

/// Whether `name` is an output of float ADM (`adm2`, `adm_scale0`, `aim`,
/// with option suffixes), as the goldens name them.
pub fn is_float_adm_output(name: &str) -> bool {
    name.starts_with("adm") || name.starts_with("aim")
}

/// The CPU vendor string (`AuthenticAMD`, `GenuineIntel`, ...).
pub fn cpu_vendor() -> String {
    #[cfg(target_arch = "x86_64")]
    {
        // CPUID leaf 0 (every x86-64 CPU has it): the vendor string.
        let r = std::arch::x86_64::__cpuid(0);
        let bytes: Vec<u8> = [r.ebx, r.edx, r.ecx]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        String::new()
    }
}

/// The path in environment variable `var`, or `None` after recording why
/// the test skips (a failure where `require_var` is set).
pub fn path_from_env(var: &str, require_var: &str, reason: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(p) => Some(PathBuf::from(p)),
        None => {
            vmafx::testing::skip(require_var, format_args!("{var} not set ({reason})"));
            None
        }
    }
}

/// A result file's text without its `fps` line (wall-clock speed, which
/// differs run to run).
pub fn without_fps(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.contains("fps"))
        .collect::<Vec<_>>()
        .join("\n")
}
