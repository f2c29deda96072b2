//! Parity of the float extractors `float_vif`, `float_adm` and
//! `float_motion` with libvmaf 3.2.0: every frame of every golden pair,
//! every output, against the golden JSON files.

use crate::common;

use common::extractor::{create_extractor, run_extractor, FrameValues, Worst};
use common::{rel_diff, Pair, PAIRS};
use vmafx::feature::{FeatureSink, FrameInput};
use vmafx::{Error, HostPicture};

/// Runs one extractor with `key=value:...` options over whole sequences
/// and gathers what it emits, per frame (flush included).
fn run(
    name: &str,
    options: &str,
    reference: &[HostPicture],
    distorted: &[HostPicture],
) -> Vec<FrameValues> {
    let mut x = create_extractor(name, options, reference[0].format()).unwrap();
    run_extractor(x.as_mut(), reference, distorted)
}

/// Compares `ours` with the golden `run` of `pair` for every feature in
/// `names` (missing in ours is a failure; missing in the golden too).
fn compare(pair: &Pair, run: &str, ours: &[FrameValues], names: &[String], worst: &mut Worst) {
    let golden = pair.golden(run);
    assert_eq!(
        golden.frames.len(),
        ours.len(),
        "{}: frame count",
        pair.name()
    );
    for (i, (num, metrics)) in golden.frames.iter().enumerate() {
        for name in names {
            let expected = *metrics
                .get(name)
                .unwrap_or_else(|| panic!("{} {run}: golden lacks {name}", pair.name()));
            let got = *ours[i]
                .get(name)
                .unwrap_or_else(|| panic!("{} frame {num}: we did not emit {name}", pair.name()));
            worst.note(
                name,
                rel_diff(got, expected),
                format!("{} frame {num}", pair.name()),
            );
        }
    }
}

fn names(list: &[&str], suffix: &str) -> Vec<String> {
    list.iter().map(|n| format!("{n}{suffix}")).collect()
}

const VIF: [&str; 4] = ["vif_scale0", "vif_scale1", "vif_scale2", "vif_scale3"];
const VIF_DEBUG: [&str; 11] = [
    "vif",
    "vif_num",
    "vif_den",
    "vif_num_scale0",
    "vif_den_scale0",
    "vif_num_scale1",
    "vif_den_scale1",
    "vif_num_scale2",
    "vif_den_scale2",
    "vif_num_scale3",
    "vif_den_scale3",
];
const ADM: [&str; 7] = [
    "adm2",
    "aim",
    "adm3",
    "adm_scale0",
    "adm_scale1",
    "adm_scale2",
    "adm_scale3",
];
const ADM_DEBUG: [&str; 11] = [
    "adm",
    "adm_num",
    "adm_den",
    "adm_num_scale0",
    "adm_den_scale0",
    "adm_num_scale1",
    "adm_den_scale1",
    "adm_num_scale2",
    "adm_den_scale2",
    "adm_num_scale3",
    "adm_den_scale3",
];
const MOTION: [&str; 3] = ["motion", "motion2", "motion3"];

/// Allowed relative difference; `aim` must be exact.
const TOL: f64 = 1e-6;

fn pictures(pair: &Pair) -> (Vec<HostPicture>, Vec<HostPicture>) {
    (pair.reference(), pair.distorted_pictures())
}

#[test]
fn float_vif_matches_feature_goldens() {
    let mut worst = Worst::default();
    for pair in PAIRS {
        let (r, d) = pictures(pair);
        let ours = run("float_vif", "debug=true", &r, &d);
        let all = [names(&VIF, ""), names(&VIF_DEBUG, "")].concat();
        compare(pair, "features", &ours, &all, &mut worst);
        compare(
            pair,
            "vmaf_float_v0.6.1",
            &ours,
            &names(&VIF, ""),
            &mut worst,
        );
        compare(pair, "models_v0.6", &ours, &names(&VIF, ""), &mut worst);
    }
    worst.print("float_vif");
    worst.assert_within(TOL, &[]);
}

#[test]
fn float_vif_egl_matches_model_goldens() {
    let mut worst = Worst::default();
    for pair in PAIRS {
        let (r, d) = pictures(pair);
        let ours = run("float_vif", "vif_enhn_gain_limit=1.0", &r, &d);
        compare(
            pair,
            "models_v0.6",
            &ours,
            &names(&VIF, "_egl_1"),
            &mut worst,
        );
    }
    worst.print("float_vif egl=1");
    worst.assert_within(TOL, &[]);
}

/// Fractional gain limits (oracle goldens `fractional_gain`), every
/// output.
#[test]
fn float_fractional_gain_limits_match_oracle_goldens() {
    let mut vif = Worst::default();
    let mut adm = Worst::default();
    for pair in PAIRS {
        let (r, d) = pictures(pair);
        let ours = run("float_vif", "debug=true:vif_enhn_gain_limit=1.7", &r, &d);
        let all = [names(&VIF, "_egl_1.7"), names(&VIF_DEBUG, "_egl_1.7")].concat();
        compare(pair, "fractional_gain", &ours, &all, &mut vif);
        let ours = run("float_adm", "debug=true:adm_enhn_gain_limit=1.3", &r, &d);
        // libvmaf names the debug `adm` output without the options' suffix.
        let all = [
            names(&ADM, "_egl_1.3"),
            names(&ADM_DEBUG[..1], ""),
            names(&ADM_DEBUG[1..], "_egl_1.3"),
        ]
        .concat();
        compare(pair, "fractional_gain", &ours, &all, &mut adm);
    }
    vif.print("float_vif egl=1.7");
    vif.assert_within(TOL, &[]);
    adm.print("float_adm egl=1.3");
    adm.assert_within_or(TOL, &["aim_egl_1.3"], common::float_adm_tol(0.0));
}

#[test]
fn float_motion_matches_feature_goldens() {
    let mut worst = Worst::default();
    for pair in PAIRS {
        let (r, d) = pictures(pair);
        let ours = run("float_motion", "", &r, &d);
        compare(pair, "features", &ours, &names(&MOTION, ""), &mut worst);
        compare(
            pair,
            "vmaf_float_v0.6.1",
            &ours,
            &names(&MOTION, ""),
            &mut worst,
        );
        compare(pair, "models_v0.6", &ours, &names(&MOTION, ""), &mut worst);
    }
    worst.print("float_motion");
    worst.assert_within(TOL, &[]);
}

#[test]
fn float_adm_matches_feature_goldens() {
    let mut worst = Worst::default();
    for pair in PAIRS {
        let (r, d) = pictures(pair);
        let ours = run("float_adm", "debug=true", &r, &d);
        let all = [names(&ADM, ""), names(&ADM_DEBUG, "")].concat();
        compare(pair, "features", &ours, &all, &mut worst);
        compare(
            pair,
            "vmaf_float_v0.6.1",
            &ours,
            &names(&ADM, ""),
            &mut worst,
        );
        compare(pair, "models_v0.6", &ours, &names(&ADM, ""), &mut worst);
    }
    worst.print("float_adm");
    worst.assert_within_or(TOL, &["aim"], common::float_adm_tol(0.0));
}

#[test]
fn float_adm_egl_matches_model_goldens() {
    let mut worst = Worst::default();
    for pair in PAIRS {
        let (r, d) = pictures(pair);
        let ours = run("float_adm", "adm_enhn_gain_limit=1.0", &r, &d);
        compare(
            pair,
            "models_v0.6",
            &ours,
            &names(&ADM, "_egl_1"),
            &mut worst,
        );
    }
    worst.print("float_adm egl=1");
    worst.assert_within_or(TOL, &["aim_egl_1"], common::float_adm_tol(0.0));
}

/// `float_adm`'s other CSFs, Barten's (with its scales and another
/// viewing distance) and the DLM paper's (oracle goldens `float_adm_csf`).
#[test]
fn float_adm_csf_modes_match_oracle_goldens() {
    let mut worst = Worst::default();
    for pair in PAIRS {
        let (r, d) = pictures(pair);
        let barten = "_csf_1";
        let ours = run("float_adm", "adm_csf_mode=1:debug=true", &r, &d);
        // libvmaf names the debug `adm` output without the options' suffix.
        let all = [
            names(&ADM, barten),
            names(&ADM_DEBUG[..1], ""),
            names(&ADM_DEBUG[1..], barten),
        ]
        .concat();
        compare(pair, "float_adm_csf", &ours, &all, &mut worst);
        for (options, suffix) in [
            ("adm_csf_mode=2", "_csf_2"),
            (
                "adm_csf_mode=1:adm_csf_scale=1.3:adm_csf_diag_scale=0.8:adm_norm_view_dist=5",
                "_scfd_0.8_csf_1_scf_1.3_nvd_5",
            ),
        ] {
            let ours = run("float_adm", options, &r, &d);
            compare(
                pair,
                "float_adm_csf",
                &ours,
                &names(&ADM, suffix),
                &mut worst,
            );
        }
    }
    worst.print("float_adm CSF modes");
    worst.assert_within_or(
        TOL,
        &["aim_csf_1", "aim_csf_2", "aim_scfd_0.8_csf_1_scf_1.3_nvd_5"],
        common::float_adm_tol(0.0),
    );
}

/// `float_motion`'s other blurs, chroma and halved planes, and a
/// `motion_max_val` that libvmaf's option normalization changes (oracle
/// goldens `float_motion_options`; chroma and halving together on 4:4:4
/// only, where libvmaf's value is defined).
#[test]
fn float_motion_options_match_oracle_goldens() {
    let mut worst = Worst::default();
    for pair in PAIRS {
        let (r, d) = pictures(pair);
        let mut sets = vec![
            ("motion_filter_size=3:debug=true", "_mfs_3"),
            ("motion_filter_size=1", "_mfs_1"),
            ("motion_add_uv=true", "_mau"),
            ("motion_add_scale1=true", "_mdc"),
            ("motion_max_val=2639.545", "_mmxv_2639.54"),
        ];
        if pair.subsampling == vmafx::ChromaSubsampling::Yuv444 {
            sets.push(("motion_add_uv=true:motion_add_scale1=true", "_mdc_mau"));
        }
        for (options, suffix) in sets {
            let ours = run("float_motion", options, &r, &d);
            compare(
                pair,
                "float_motion_options",
                &ours,
                &names(&MOTION, suffix),
                &mut worst,
            );
        }
    }
    worst.print("float_motion options");
    worst.assert_within(0.0, &[]);
}

/// Creating `name` with `key=value:...` options for `format` fails: the
/// error text.
fn create_error(name: &str, options: &str, format: vmafx::PictureFormat) -> String {
    match create_extractor(name, options, &format) {
        Ok(_) => panic!("{name} {options:?}: accepted"),
        Err(e) => e.to_string(),
    }
}

fn luma_format(w: u32, h: u32) -> vmafx::PictureFormat {
    vmafx::PictureFormat::new(w, h, vmafx::ChromaSubsampling::Yuv420, 8).unwrap()
}

#[test]
fn bad_options_are_refused_with_their_name() {
    let f = luma_format(64, 48);
    let cases = [
        (
            "float_vif",
            "vif_enhn_gain_limit=0.5",
            "vif_enhn_gain_limit",
        ),
        ("float_vif", "vif_kernelscale=3.3", "vif_kernelscale"),
        ("float_vif", "vif_kernelscale=x", "vif_kernelscale"),
        ("float_vif", "vif_skip_scale0=maybe", "vif_skip_scale0"),
        ("float_vif", "vif_sigma_nsq=6", "vif_sigma_nsq"),
        ("float_vif", "nope=1", "nope"),
        (
            "float_adm",
            "adm_enhn_gain_limit=200",
            "adm_enhn_gain_limit",
        ),
        ("float_adm", "adm_skip_aim_scale=4", "adm_skip_aim_scale"),
        ("float_adm", "adm_p_norm=0.5", "adm_p_norm"),
        ("float_adm", "debug=maybe", "debug"),
        // Undefined in libvmaf on subsampled chroma (see float_motion.rs).
        (
            "float_motion",
            "motion_add_uv=true:motion_add_scale1=true",
            "motion_add_uv",
        ),
        ("float_motion", "motion_fps_weight=-1", "motion_fps_weight"),
    ];
    for (name, options, needle) in cases {
        let e = create_error(name, options, f);
        assert!(e.contains(needle), "{name} {options:?}: {e}");
    }
}

#[test]
fn too_small_pictures_are_refused() {
    for (name, w, h) in [
        ("float_vif", 15, 64),
        ("float_adm", 64, 16),
        ("float_motion", 2, 64),
    ] {
        let e = create_error(name, "", luma_format(w, h));
        assert!(e.contains(name) && e.contains("too small"), "{e}");
    }
    // The smallest accepted sizes run.
    for (name, w, h) in [
        ("float_vif", 16, 16),
        ("float_adm", 17, 17),
        ("float_motion", 3, 3),
    ] {
        let pics = vec![HostPicture::new(luma_format(w, h)); 2];
        let out = run(name, "", &pics, &pics);
        assert!(
            out.iter().all(|f| f.values().all(|v| v.is_finite())),
            "{name}: {out:?}"
        );
    }
}

#[test]
fn picture_of_another_format_is_an_error() {
    for name in ["float_vif", "float_adm", "float_motion"] {
        let mut x = create_extractor(name, "", &luma_format(64, 48)).unwrap();
        let other = HostPicture::new(luma_format(48, 64));
        let frame = FrameInput {
            index: 0,
            reference: &other,
            distorted: &other,
        };
        let e = x.extract(&frame, &mut FeatureSink::new()).unwrap_err();
        assert!(matches!(e, Error::PictureMismatch(_)), "{name}: {e}");
    }
}

#[test]
fn feature_params_suffix_output_names() {
    let pics = vec![HostPicture::new(luma_format(64, 48)); 3];
    let vif = run(
        "float_vif",
        "vif_kernelscale=2.0:debug=true",
        &pics[..1],
        &pics[..1],
    );
    assert!(
        vif[0].contains_key("vif_scale0_ks_2") && vif[0].contains_key("vif_num_ks_2"),
        "{vif:?}"
    );
    let adm = run(
        "float_adm",
        "adm_dlm_weight=0.7:adm_min_val=0.5:debug=true",
        &pics[..1],
        &pics[..1],
    );
    for n in [
        "adm2_dlmw_0.7_min_0.5",
        "adm3_dlmw_0.7_min_0.5",
        "aim_dlmw_0.7_min_0.5",
        "adm",
        "adm_num_dlmw_0.7_min_0.5",
    ] {
        assert!(adm[0].contains_key(n), "{n} missing: {:?}", adm[0].keys());
    }
    // Forced to zero: every frame gets its three zeros at once, no flush.
    // A true boolean parameter adds its bare alias (libvmaf 3.2.0, as in the
    // goldens' `integer_motion3_mffw_mmxv_18_mma`).
    let motion = run("float_motion", "motion_force_zero=true", &pics, &pics);
    for f in &motion {
        assert_eq!(f.len(), 3, "{f:?}");
        assert!(["motion_force_0", "motion2_force_0", "motion3_force_0"]
            .iter()
            .all(|n| f[*n] == 0.0));
    }
}

#[test]
fn motion_of_a_single_frame_is_zero() {
    let pics = vec![HostPicture::new(luma_format(64, 48))];
    let m = run("float_motion", "", &pics, &pics);
    assert_eq!(m[0].get("motion"), Some(&0.0));
    assert_eq!(m[0].get("motion2"), Some(&0.0));
    assert_eq!(m[0].get("motion3"), Some(&0.0));
    let quiet = run("float_motion", "debug=false", &pics, &pics);
    assert!(!quiet[0].contains_key("motion"));
}
