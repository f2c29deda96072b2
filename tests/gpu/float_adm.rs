//! `float_adm` on the GPU against the CPU extractor: same feature names
//! and order, per-frame values within a relative 1e-5 on every golden pair
//! (default options, the options models set, subsampling), and the same
//! bits from run to run (whole models: `tests/gpu/models.rs`). Without a GPU
//! each test records why it skipped (VMAFX_REQUIRE_GPU=1 fails instead).

use crate::common;

use common::gpu::*;

/// Per-pixel values are the CPU's but for the decouple's division (the CPU
/// refines x86's `rcpss` estimate, the GPU the exact reciprocal), and the
/// CPU adds each row in float where the GPU adds in double. Measured (the
/// kernels emulated on the host, every golden pair, every output, debug
/// ones included): worst 3.1e-7 (`adm_scale2`, a_576x324 crf42 frame 5);
/// with `adm_enhn_gain_limit=1.0` 2.1e-7, `adm_p_norm=2.5` 2.6e-7,
/// `adm_bypass_cm=1` 2.0e-7.
const TOL: f64 = 1e-5;

#[test]
fn float_adm_within_tolerance_on_every_golden_pair() {
    let Some(gpu) = test_gpu() else { return };
    check_all_pairs_close(&gpu, &[("float_adm", "debug=true")], 1, TOL);
}

/// The options the float models and libvmaf's documentation set: the neg
/// models' gain limit, another viewing distance and display, the CSF
/// overrides, the p-norm, bypassed masking, the skipped scales and the
/// adm3 variants.
#[test]
fn float_adm_options_within_tolerance_on_every_golden_pair() {
    let Some(gpu) = test_gpu() else { return };
    for options in [
        "adm_enhn_gain_limit=1.0:debug=true",
        "adm_norm_view_dist=1.5:adm_ref_display_height=2160:adm_noise_weight=0.1:adm_f1s1=0.5:adm_f2s3=2.0",
        "adm_p_norm=2.5:adm_csf_scale=2.0:adm_adm3_apply_hm=true:adm_min_val=0.9:debug=true",
        "adm_bypass_cm=1:adm_dlm_weight=0.8",
        "adm_skip_scale0=true:adm_skip_aim_scale=2:debug=true",
    ] {
        check_all_pairs_close(&gpu, &[("float_adm", options)], 1, TOL);
    }
}

#[test]
fn float_adm_subsample_3_within_tolerance() {
    let Some(gpu) = test_gpu() else { return };
    let p = pair("a_576x324_420p8_pan");
    let features = [("float_adm", "debug=true")];
    let cpu = score(p, &features, 3, None);
    let on_gpu = score(p, &features, 3, Some(&gpu));
    assert!(cpu.frames.len() > 1);
    let worst = assert_close_scores(&format!("{} subsample 3", p.name()), &cpu, &on_gpu, TOL);
    println!("subsample 3, {}: worst {worst:?}", p.name());
}

#[test]
fn float_adm_gives_the_same_bits_every_run() {
    let Some(gpu) = test_gpu() else { return };
    assert_runs_identical(&gpu, &[pair("b_1280x720")], &[("float_adm", "debug=true")]);
}
