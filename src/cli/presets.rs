//! `--aom_ctc` and `--nflx_ctc`: the models and features of the AOM and
//! Netflix common test conditions, exactly as libvmaf's `cli_parse.c` adds
//! them (same order, names and options).

/// One thing a preset adds to the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item<'a> {
    /// A `--model` value.
    Model(&'a str),
    /// A `--feature` value.
    Feature(&'a str),
    /// A `--feature` value that replaces an earlier one of the same
    /// extractor (libvmaf's `CHECKED_REPLACE`), else is added.
    Replace(&'a str),
}

pub const AOM_CTC_VERSIONS: [&str; 7] = ["v1.0", "v2.0", "v3.0", "v4.0", "v5.0", "v6.0", "v7.0"];
pub const NFLX_CTC_VERSIONS: [&str; 1] = ["v1.0"];

const AOM_V1: [Item<'static>; 7] = [
    Item::Model("version=vmaf_v0.6.1:name=vmaf"),
    Item::Model("version=vmaf_v0.6.1neg:name=vmaf_neg"),
    Item::Feature("psnr=reduced_hbd_peak=true:enable_apsnr=true:min_sse=0.5"),
    Item::Feature("ciede"),
    Item::Feature("float_ssim=enable_db=true:clip_db=true"),
    Item::Feature("float_ms_ssim=enable_db=true:clip_db=true"),
    Item::Feature("psnr_hvs"),
];

/// `--aom_ctc VERSION`. v3.0 adds `cambi`; v6.0 also lets inputs of
/// different bit depths be scored (libvmaf's `common_bitdepth`, see
/// `run.rs`); v7.0 scores `float_ssim` without downscaling.
pub fn aom_ctc(version: &str) -> Result<Vec<Item<'static>>, String> {
    if version == "proposed" {
        return Err("`--aom_ctc proposed` is deprecated".into());
    }
    let n = AOM_CTC_VERSIONS
        .iter()
        .position(|v| *v == version)
        .ok_or_else(|| unknown("--aom_ctc", version, &AOM_CTC_VERSIONS))?
        + 1;
    let mut items = AOM_V1.to_vec();
    if n >= 3 {
        items.push(Item::Feature("cambi"));
    }
    if n >= 7 {
        items.push(Item::Replace(
            "float_ssim=scale=1:enable_db=true:clip_db=true",
        ));
    }
    Ok(items)
}

/// `--nflx_ctc VERSION`.
pub fn nflx_ctc(version: &str) -> Result<Vec<Item<'static>>, String> {
    if version != "v1.0" {
        return Err(unknown("--nflx_ctc", version, &NFLX_CTC_VERSIONS));
    }
    Ok(vec![
        Item::Model("version=vmaf_4k_v0.6.1:name=vmaf"),
        Item::Model("version=vmaf_4k_v0.6.1neg:name=vmaf_neg"),
        Item::Feature("psnr=enable_chroma=true:enable_apsnr=true"),
        Item::Feature("float_ssim=enable_db=true:clip_db=true"),
        Item::Feature("cambi"),
    ])
}

fn unknown(flag: &str, version: &str, known: &[&str]) -> String {
    format!(
        "{flag}: unknown version '{version}' (known: {})",
        known.join(", ")
    )
}

/// The extractor name of a `--feature` value.
pub fn feature_name(spec: &str) -> &str {
    spec.split_once('=').map_or(spec, |(n, _)| n)
}

/// Appends `item` to the command line's models and features.
pub fn apply(item: Item<'_>, models: &mut Vec<String>, features: &mut Vec<String>) {
    match item {
        Item::Model(m) => models.push(m.into()),
        Item::Feature(f) => features.push(f.into()),
        Item::Replace(f) => {
            let name = feature_name(f);
            match features.iter_mut().find(|x| feature_name(x) == name) {
                Some(x) => *x = f.into(),
                None => features.push(f.into()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(items: Vec<Item<'_>>) -> (Vec<String>, Vec<String>) {
        let (mut m, mut f) = (Vec::new(), Vec::new());
        for i in items {
            apply(i, &mut m, &mut f);
        }
        (m, f)
    }

    #[test]
    fn aom_ctc_versions_add_libvmafs_sets() {
        let (m, f) = expand(aom_ctc("v1.0").unwrap());
        assert_eq!(
            m,
            [
                "version=vmaf_v0.6.1:name=vmaf",
                "version=vmaf_v0.6.1neg:name=vmaf_neg"
            ]
        );
        assert_eq!(f.len(), 5);
        assert_eq!(expand(aom_ctc("v2.0").unwrap()).1, f);
        let (_, f3) = expand(aom_ctc("v3.0").unwrap());
        assert_eq!(f3.last().unwrap(), "cambi");
        for v in ["v4.0", "v5.0", "v6.0"] {
            assert_eq!(expand(aom_ctc(v).unwrap()).1, f3);
        }
        let (_, f7) = expand(aom_ctc("v7.0").unwrap());
        assert_eq!(f7.len(), 6);
        assert_eq!(f7[2], "float_ssim=scale=1:enable_db=true:clip_db=true");
    }

    #[test]
    fn unknown_versions_list_the_known_ones() {
        assert_eq!(
            aom_ctc("v8.0").unwrap_err(),
            "--aom_ctc: unknown version 'v8.0' (known: v1.0, v2.0, v3.0, v4.0, v5.0, v6.0, v7.0)"
        );
        assert!(aom_ctc("proposed").unwrap_err().contains("deprecated"));
        assert_eq!(
            nflx_ctc("v2.0").unwrap_err(),
            "--nflx_ctc: unknown version 'v2.0' (known: v1.0)"
        );
        assert_eq!(expand(nflx_ctc("v1.0").unwrap()).1.len(), 3);
    }
}
