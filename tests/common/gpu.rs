//! The GPU-vs-CPU harness: the test device (or a printed reason to skip),
//! scoring a golden pair on either engine, and bit-identity checks.
//!
//! The GPU tests run on CUDA, or on HIP with `VMAFX_TEST_GPU_BACKEND=hip`
//! (on an NVIDIA machine through the HIP-over-CUDA test runtime,
//! tests/hip_over_cuda; docs/gpu-device-checks/hip.sh).

use super::{Pair, PAIRS};
use vmafx::feature::options::parse_key_values;
use vmafx::gpu::{self, cuda, DeviceSelector, Gpu, GpuBackend};
use vmafx::{ContextBuilder, FeatureScores, HostPicture, PictureFormat, PlaneId};

/// The variable that picks the GPU tests' backend: `cuda` (or unset) or `hip`.
pub const BACKEND_VAR: &str = "VMAFX_TEST_GPU_BACKEND";

/// The backend the GPU tests open ([`BACKEND_VAR`]).
pub fn test_backend() -> GpuBackend {
    match std::env::var(BACKEND_VAR).as_deref() {
        Err(_) | Ok("" | "cuda") => GpuBackend::Cuda,
        Ok("hip") => GpuBackend::Hip,
        Ok(other) => panic!("{BACKEND_VAR}={other}: expected cuda or hip"),
    }
}

/// Whether the GPU tests run on HIP.
pub fn on_hip() -> bool {
    test_backend() == GpuBackend::Hip
}

/// Under HIP a test of CUDA's own API (cudarc buffers, CUDA events or
/// contexts, CUDA's error texts) has nothing to check: records the skip,
/// reason and all, and returns true. (`VMAFX_REQUIRE_CUDA_ONLY=1` would
/// fail it; hip.sh lists these skips as expected.)
#[allow(dead_code)] // not every test binary has such a test
pub fn cuda_specific(what: &str) -> bool {
    if on_hip() {
        vmafx::testing::skip(
            "VMAFX_REQUIRE_CUDA_ONLY",
            format_args!("CUDA-specific ({what}): not run under {BACKEND_VAR}=hip"),
        );
        return true;
    }
    false
}

/// The test device of [`test_backend`], or why there is none (printed as
/// the skip reason).
pub fn test_gpu() -> Option<Gpu> {
    let backend = test_backend();
    let present = match backend {
        GpuBackend::Cuda => cuda::driver_present(),
        GpuBackend::Hip => gpu::hip::runtime_present(),
    };
    if !present {
        vmafx::testing::skip(
            vmafx::testing::REQUIRE_GPU,
            match backend {
                GpuBackend::Cuda => "no CUDA device (libcuda not found)",
                GpuBackend::Hip => {
                    "no HIP device (libamdhip64/libhiprtc not found; ROCM_PATH names their folder)"
                }
            },
        );
        return None;
    }
    match gpu::open(backend, &DeviceSelector::default()) {
        Ok(g) => {
            println!("running on {}", g.describe());
            Some(g)
        }
        Err(e) => {
            vmafx::testing::skip(
                vmafx::testing::REQUIRE_GPU,
                format_args!("no {} device ({e})", backend.to_string().to_uppercase()),
            );
            None
        }
    }
}

pub fn score(
    pair: &Pair,
    features: &[(&str, &str)],
    subsample: u32,
    gpu: Option<&Gpu>,
) -> FeatureScores {
    score_threads(pair, features, subsample, gpu, 1)
}

/// A context builder for `features` (libvmaf option strings), on `gpu`
/// when given.
pub fn builder(
    format: PictureFormat,
    features: &[(&str, &str)],
    gpu: Option<&Gpu>,
) -> ContextBuilder {
    let mut b = ContextBuilder::new(format);
    for (name, opts) in features {
        b = b.feature(name, parse_key_values(name, opts).unwrap());
    }
    if let Some(g) = gpu {
        b = b.gpu(g.clone());
    }
    b
}

/// `features` of these pictures, on `gpu` when given, else on the CPU.
pub fn score_pictures(
    features: &[(&str, &str)],
    refs: &[HostPicture],
    dists: &[HostPicture],
    gpu: Option<&Gpu>,
) -> FeatureScores {
    let mut ctx = builder(*refs[0].format(), features, gpu).build().unwrap();
    for (r, d) in refs.iter().zip(dists) {
        ctx.submit(r.clone(), d.clone()).unwrap();
    }
    ctx.finish().unwrap()
}

pub fn score_threads(
    pair: &Pair,
    features: &[(&str, &str)],
    subsample: u32,
    gpu: Option<&Gpu>,
    threads: usize,
) -> FeatureScores {
    let mut ctx = builder(pair.format(), features, gpu)
        .subsample(subsample)
        .threads(threads)
        .build()
        .unwrap();
    for (r, d) in pair.reference().into_iter().zip(pair.distorted_pictures()) {
        ctx.submit(r, d).unwrap();
    }
    ctx.finish().unwrap()
}

/// 200 frames cycling `pair`'s pictures. With `overwrite`, after each
/// submit the test allocates same-sized pictures and fills them with
/// garbage (the allocator hands back the blocks the submitted pictures just
/// freed) and keeps them until the next submit: host pictures are the
/// caller's again once `submit` returns, so the engine must have copied
/// what the device reads.
pub fn score_cycled(
    pair: &Pair,
    features: &[(&str, &str)],
    gpu: Option<&Gpu>,
    overwrite: bool,
) -> FeatureScores {
    let (refs, dists) = (pair.reference(), pair.distorted_pictures());
    let mut ctx = builder(pair.format(), features, gpu).build().unwrap();
    let mut garbage = Vec::new();
    for i in 0..200 {
        let k = i % refs.len();
        ctx.submit(refs[k].clone(), dists[k].clone()).unwrap();
        garbage.clear();
        if overwrite {
            for seed in [i as u8, !(i as u8)] {
                let mut g = HostPicture::new(pair.format());
                for plane in PlaneId::ALL {
                    g.plane_u8_mut(plane).fill(seed);
                }
                garbage.push(g);
            }
        }
    }
    ctx.finish().unwrap()
}

/// As [`score_cycled`], with every picture taken from the context's pool
/// (`Context::picture`: pinned memory on a GPU, read in place by the
/// upload). After each submit two more pool pictures are taken, scribbled
/// on and given back: memory handed out while a copy could still read it
/// would change the scores. Returns the scores and the pool's idle count.
pub fn score_cycled_from_pool(
    pair: &Pair,
    features: &[(&str, &str)],
    gpu: Option<&Gpu>,
) -> (FeatureScores, usize) {
    let (refs, dists) = (pair.reference(), pair.distorted_pictures());
    let mut ctx = builder(pair.format(), features, gpu).build().unwrap();
    let planes = pair.format().plane_count();
    for i in 0..200 {
        let k = i % refs.len();
        let (mut r, mut d) = (ctx.picture().unwrap(), ctx.picture().unwrap());
        r.copy_from(&refs[k]);
        d.copy_from(&dists[k]);
        ctx.submit(r, d).unwrap();
        for seed in [i as u8, !(i as u8)] {
            let mut g = ctx.picture().unwrap();
            for plane in PlaneId::ALL.into_iter().take(planes) {
                g.plane_bytes_mut(plane).fill(seed);
            }
        }
    }
    let idle = ctx.picture_pool().idle();
    (ctx.finish().unwrap(), idle)
}

/// Exact equality: names, order and the bits of every value.
pub fn assert_identical(what: &str, cpu: &FeatureScores, gpu: &FeatureScores) {
    assert_eq!(cpu.frames.len(), gpu.frames.len(), "{what}: frame count");
    for ((ci, cv), (gi, gv)) in cpu.frames.iter().zip(&gpu.frames) {
        assert_eq!(ci, gi, "{what}: frame index");
        let cn: Vec<&str> = cv.iter().map(|(n, _)| n.as_str()).collect();
        let gn: Vec<&str> = gv.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(cn, gn, "{what} frame {ci}: feature names");
        for ((n, c), (_, g)) in cv.iter().zip(gv) {
            assert_eq!(
                c.to_bits(),
                g.to_bits(),
                "{what} frame {ci} {n}: CPU {c:.17e} GPU {g:.17e}"
            );
        }
    }
    let ca: Vec<_> = cpu
        .aggregate
        .iter()
        .map(|(n, v)| (n.clone(), v.to_bits()))
        .collect();
    let ga: Vec<_> = gpu
        .aggregate
        .iter()
        .map(|(n, v)| (n.clone(), v.to_bits()))
        .collect();
    assert_eq!(ca, ga, "{what}: aggregates");
}

pub fn check_all_pairs(gpu: &Gpu, features: &[(&str, &str)], subsample: u32) {
    for pair in PAIRS {
        let what = format!("{} {features:?} subsample {subsample}", pair.name());
        let cpu = score(pair, features, subsample, None);
        let on_gpu = score(pair, features, subsample, Some(gpu));
        assert_identical(&what, &cpu, &on_gpu);
        println!("{what}: {} frames bit-identical", cpu.frames.len());
    }
}

/// The first pair whose name contains `needle`.
pub fn pair(needle: &str) -> &'static Pair {
    PAIRS.iter().find(|p| p.name().contains(needle)).unwrap()
}

/// Like [`assert_identical`] but values need only agree within a relative
/// `rel_tol` (float extractors: the GPU sums in another order). Names,
/// order and frame indices must still match exactly. Returns the worst
/// relative difference per feature name, with where it was.
pub fn assert_close_scores(
    what: &str,
    cpu: &FeatureScores,
    gpu: &FeatureScores,
    rel_tol: f64,
) -> std::collections::BTreeMap<String, (f64, String)> {
    let mut worst = std::collections::BTreeMap::<String, (f64, String)>::new();
    let mut note = |name: &str, c: f64, g: f64, at: String| {
        let d = super::rel_diff(c, g);
        assert!(
            d <= rel_tol,
            "{what} {at} {name}: CPU {c:.17e} GPU {g:.17e}, relative difference {d:.3e} > {rel_tol:e}"
        );
        let e = worst
            .entry(name.to_string())
            .or_insert((0.0, String::new()));
        if d > e.0 || e.1.is_empty() {
            *e = (d, at);
        }
    };
    assert_eq!(cpu.frames.len(), gpu.frames.len(), "{what}: frame count");
    for ((ci, cv), (gi, gv)) in cpu.frames.iter().zip(&gpu.frames) {
        assert_eq!(ci, gi, "{what}: frame index");
        let cn: Vec<&str> = cv.iter().map(|(n, _)| n.as_str()).collect();
        let gn: Vec<&str> = gv.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(cn, gn, "{what} frame {ci}: feature names");
        for ((n, c), (_, g)) in cv.iter().zip(gv) {
            note(n, *c, *g, format!("frame {ci}"));
        }
    }
    let cn: Vec<&String> = cpu.aggregate.iter().map(|(n, _)| n).collect();
    let gn: Vec<&String> = gpu.aggregate.iter().map(|(n, _)| n).collect();
    assert_eq!(cn, gn, "{what}: aggregate names");
    for ((n, c), (_, g)) in cpu.aggregate.iter().zip(&gpu.aggregate) {
        note(n, *c, *g, "aggregate".into());
    }
    worst
}

/// Three GPU runs of `features` on each pair give the same bits (fixed-order
/// sums, no float atomics).
pub fn assert_runs_identical(gpu: &Gpu, pairs: &[&Pair], features: &[(&str, &str)]) {
    for p in pairs {
        let first = score(p, features, 1, Some(gpu));
        for run in 0..2 {
            let again = score(p, features, 1, Some(gpu));
            assert_identical(&format!("{} run {}", p.name(), run + 2), &first, &again);
        }
        println!("{}: three GPU runs bit-identical", p.name());
    }
}

/// [`check_all_pairs`] within a relative `rel_tol`: prints and returns the
/// worst relative difference per feature over every golden pair.
pub fn check_all_pairs_close(
    gpu: &Gpu,
    features: &[(&str, &str)],
    subsample: u32,
    rel_tol: f64,
) -> std::collections::BTreeMap<String, (f64, String)> {
    let mut worst = std::collections::BTreeMap::<String, (f64, String)>::new();
    for pair in PAIRS {
        let what = format!("{} {features:?} subsample {subsample}", pair.name());
        let cpu = score(pair, features, subsample, None);
        let on_gpu = score(pair, features, subsample, Some(gpu));
        for (name, (d, at)) in assert_close_scores(&what, &cpu, &on_gpu, rel_tol) {
            let e = worst.entry(name).or_insert((0.0, String::new()));
            if d > e.0 || e.1.is_empty() {
                *e = (d, format!("{} {at}", pair.name()));
            }
        }
    }
    println!("{features:?} subsample {subsample}, every golden pair within {rel_tol:e}; worst relative differences:");
    for (name, (d, at)) in &worst {
        println!("  {name:28} {d:.3e}  ({at})");
    }
    worst
}
