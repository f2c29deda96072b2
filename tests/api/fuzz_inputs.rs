//! Mutation fuzzing of every parser that reads outside input, on the stable
//! toolchain inside `cargo test` (ADR 0020): real inputs (a .y4m file, the
//! built-in model files, `--model` and `--feature` texts) are mutated by a
//! seeded generator, and each mutant must be answered with a value or an
//! `Error`, never a panic, a hang or an unbounded allocation.
//!
//! CI runs a fixed budget per target; `VMAFX_FUZZ_ITERATIONS=N` runs more,
//! `VMAFX_FUZZ_SEED=S` another sequence. A failure prints the seed, the
//! iteration and the input, which reproduce it.

use std::path::Path;

use vmafx::model::{Model, ModelSpec};
use vmafx::testing::fuzz::fuzz;
use vmafx::{ChromaSubsampling, ContextBuilder, HostPicture, PictureFormat};

#[test]
fn y4m_files_never_panic() {
    let sample =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/ref_576x324.y4m"))
            .unwrap();
    // The header and two frames: mutations reach the frame markers too.
    let frame = 576 * 324 * 3 / 2 + 6;
    let header_end = sample.iter().position(|&b| b == b'\n').unwrap() + 1;
    let seed_input = &sample[..header_end + 2 * frame];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.y4m");
    fuzz("y4m", seed_input, |input| {
        std::fs::write(&path, input).unwrap();
        vmafx::testing::fuzz::read_y4m(&path);
    });
}

#[test]
fn model_files_never_panic() {
    for version in ["vmaf_v0.6.1", "vmaf_b_v0.6.3", "vmaf_v1.0.16_3d0h"] {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("src/model/builtin/{version}.json"));
        let text = std::fs::read(path).unwrap();
        fuzz(version, &text, vmafx::testing::fuzz::load_model);
    }
}

#[test]
fn model_and_feature_texts_never_panic() {
    let format = PictureFormat::new(64, 48, ChromaSubsampling::Yuv420, 8).unwrap();
    let model_text = b"version=vmaf_v0.6.1:name=m:disable_clip:adm.adm_enhn_gain_limit=1.2";
    fuzz("--model", model_text, |input| {
        let Ok(text) = std::str::from_utf8(input) else {
            return;
        };
        if let Ok(spec) = ModelSpec::parse(text) {
            if let Ok(model) = Model::load(&spec) {
                let _ = ContextBuilder::new(format).model(model).build();
            }
        }
    });
    let features: &[&[u8]] = &[
        b"psnr=enable_mse=true:enable_apsnr=true:min_sse=0.5",
        b"float_ssim=enable_lcs=true:scale=2",
        b"vif=vif_enhn_gain_limit=1.0:vif_skip_scale0=true:debug=true",
        b"adm=adm_enhn_gain_limit=1.2:adm_csf_mode=0",
        b"cambi=full_ref=true:window_size=63:topk=0.6",
        b"float_vif=vif_kernelscale=0.5:vif_prescale=2:vif_prescale_method=bicubic",
        b"speed_temporal=speed_kernelscale=1.0:speed_prescale=2",
        b"motion=motion_force_zero=true:motion_five_frame_window=true",
    ];
    for seed_input in features {
        fuzz("--feature", seed_input, |input| {
            let Ok(text) = std::str::from_utf8(input) else {
                return;
            };
            if let Ok((name, options)) = vmafx::feature::options::parse_feature_spec(text) {
                if let Ok(mut ctx) = ContextBuilder::new(format).feature(&name, options).build() {
                    // One frame through whatever was built.
                    let p = HostPicture::new(format);
                    if ctx.submit(p.clone(), p).is_ok() {
                        let _ = ctx.finish();
                    }
                }
            }
        });
    }
}

#[test]
#[should_panic(expected = "panicked at iteration")]
fn the_harness_reports_a_panic_with_its_reproducer() {
    fuzz("harness", b"0123456789", |input| {
        assert_eq!(input.len(), 10, "a mutant changed the length");
    });
}
