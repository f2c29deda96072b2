//! Every built-in model on the GPU: each extractor a model requests has a
//! GPU version (checked everywhere, CI included), and on a GPU every model
//! scores every golden pair as the CPU engine does: bit-identical, except
//! the float models (float VIF/ADM sum in double in a fixed order: within a
//! relative 1e-5, ADR 0011). Pictures a model refuses (SpEED's minimum
//! size) are refused with the CPU's message. Without a GPU the scoring test
//! records why it skipped (VMAFX_REQUIRE_GPU=1 fails instead).

use crate::common;

use common::gpu::*;
use common::PAIRS;
use vmafx::gpu::Gpu;
use vmafx::model::{Model, ModelSpec};
use vmafx::{ContextBuilder, FeatureScores};

/// Every version compiled in (`src/model/builtin/`).
const MODELS: &[&str] = &[
    "vmaf_v0.6.1",
    "vmaf_v0.6.1neg",
    "vmaf_b_v0.6.3",
    "vmaf_4k_v0.6.1",
    "vmaf_4k_v0.6.1neg",
    "vmaf_float_v0.6.1",
    "vmaf_float_v0.6.1neg",
    "vmaf_float_b_v0.6.3",
    "vmaf_float_4k_v0.6.1",
    "vmaf_v1.0.16_1d5h_2160",
    "vmaf_v1.0.16_3d0h",
    "vmaf_v1.0.16_3d0h_2160",
    "vmaf_v1.0.16_5d0h",
    "vmaf_v1.0.16_hfr_1d5h_2160",
    "vmaf_v1.0.16_hfr_3d0h",
    "vmaf_v1.0.16_hfr_3d0h_2160",
    "vmaf_v1.0.16_hfr_5d0h",
];

const TOL: f64 = 1e-5;

#[test]
fn every_model_extractor_has_a_gpu_version() {
    for version in MODELS {
        let model = Model::load(&ModelSpec::version(version)).unwrap();
        for r in model.feature_requests().unwrap() {
            assert!(
                r.extractor.gpu.is_some(),
                "{version}: {} has no GPU version",
                r.extractor.name
            );
        }
    }
}

fn model_scores(
    p: &common::Pair,
    version: &str,
    gpu: Option<&Gpu>,
) -> vmafx::error::Result<FeatureScores> {
    let model = Model::load(&ModelSpec::version(version))?;
    let mut b = ContextBuilder::new(p.format()).model(model);
    if let Some(g) = gpu {
        b = b.gpu(g.clone());
    }
    let mut ctx = b.build()?;
    for (r, d) in p.reference().into_iter().zip(p.distorted_pictures()) {
        ctx.submit(r, d)?;
    }
    ctx.finish()
}

#[test]
fn every_model_on_every_golden_pair_matches_the_cpu() {
    let Some(gpu) = test_gpu() else { return };
    for version in MODELS {
        let float = version.contains("float");
        let (mut scored, mut refused, mut worst) = (0, 0, 0.0f64);
        for p in PAIRS {
            let what = format!("{} {version}", p.name());
            match (
                model_scores(p, version, None),
                model_scores(p, version, Some(&gpu)),
            ) {
                (Ok(cpu), Ok(on_gpu)) => {
                    if float {
                        for (d, _) in assert_close_scores(&what, &cpu, &on_gpu, TOL).values() {
                            worst = worst.max(*d);
                        }
                    } else {
                        assert_identical(&what, &cpu, &on_gpu);
                    }
                    scored += 1;
                }
                (Err(c), Err(g)) => {
                    assert_eq!(c.to_string(), g.to_string(), "{what}: refusals differ");
                    refused += 1;
                }
                (c, g) => panic!("{what}: CPU {:?}, GPU {:?}", c.err(), g.err()),
            }
        }
        assert!(scored > 0, "{version}: no pair scored");
        if float {
            println!("{version}: {scored} pairs within {TOL:e} (worst {worst:.3e}), {refused} refused by both");
        } else {
            println!("{version}: {scored} pairs bit-identical, {refused} refused by both");
        }
    }
}
