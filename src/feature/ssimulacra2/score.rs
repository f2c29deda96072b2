//! The final score from the norms of every scale: libjxl's
//! `Msssim::Score()` (`tools/ssimulacra2.cc`, weights of April 2023), in
//! `f64`.

/// What one scale contributes, per channel (X, Y, B).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ScaleNorms {
    /// Per channel: SSIM error mean and 4-norm.
    pub ssim: [[f64; 2]; 3],
    /// Per channel: artifact mean, artifact 4-norm, detail-lost mean,
    /// detail-lost 4-norm.
    pub edge: [[f64; 4]; 3],
}

/// The 108 weights, in the order `Score()` reads them.
#[rustfmt::skip]
const WEIGHTS: [f64; 108] = [
    0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0,
    0.0, 0.0004371155730107379, 0.0, 1.1041726426657346, 0.00066284834129271,
    0.00015231632783718752, 0.0, 0.0016406437456599754, 0.0, 1.8422455520539298,
    11.441172603757666, 0.0, 0.0007989109436015163, 0.000176816438078653, 0.0,
    1.8787594979546387, 10.94906990605142, 0.0, 0.0007289346991508072,
    0.9677937080626833, 0.0, 0.00014003424285435884, 0.9981766977854967,
    0.00031949755934435053, 0.0004550992113792063, 0.0, 0.0, 0.0013648766163243398,
    0.0, 0.0, 0.0, 0.0, 0.0, 7.466890328078848, 0.0, 17.445833984131262,
    0.0006235601634041466, 0.0, 0.0, 6.683678146179332, 0.00037724407979611296,
    1.027889937768264, 225.20515300849274, 0.0, 0.0, 19.213238186143016,
    0.0011401524586618361, 0.001237755635509985, 176.39317598450694, 0.0, 0.0,
    24.43300999870476, 0.28520802612117757, 0.0004485436923833408, 0.0, 0.0, 0.0,
    34.77906344483772, 44.835625328877896, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0008680556573291698, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0005313191874358747, 0.0,
    0.00016533814161379112, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0004179171803251336,
    0.0017290828234722833, 0.0, 0.0020827005846636437, 0.0, 0.0, 8.826982764996862,
    23.19243343998926, 0.0, 95.1080498811086, 0.9863978034400682, 0.9834382792465353,
    0.0012286405048278493, 171.2667255897307, 0.9807858872435379, 0.0, 0.0, 0.0,
    0.0005130064588990679, 0.0, 0.00010854057858411537,
];

/// The SSIMULACRA 2 score (100: identical; not clamped below).
///
/// With fewer than six scales (pictures under 8 pixels on a side after
/// halving) libjxl keeps reading the weights in sequence, so the later
/// channels use weights meant for other scales; this does the same.
pub fn score(scales: &[ScaleNorms]) -> f64 {
    let mut ssim = 0.0f64;
    let mut weights = WEIGHTS.iter();
    let mut add = |v: f64| ssim += weights.next().expect("at most six scales") * v.abs();
    for c in 0..3 {
        for s in scales {
            for n in 0..2 {
                add(s.ssim[c][n]);
                add(s.edge[c][n]);
                add(s.edge[c][n + 2]);
            }
        }
    }
    ssim *= 0.9562382616834844;
    ssim = 2.326765642916932 * ssim - 0.020884521182843837 * ssim * ssim
        + 6.248496625763138e-05 * ssim * ssim * ssim;
    if ssim > 0.0 {
        100.0 - 10.0 * ssim.powf(0.6276336467831387)
    } else {
        100.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_error_scores_100() {
        assert_eq!(score(&[ScaleNorms::default(); 6]), 100.0);
    }

    #[test]
    fn errors_lower_the_score() {
        let mut s = [ScaleNorms::default(); 6];
        // X channel, scale 1, 4-norm of the SSIM map: weight 9.
        s[1].ssim[0][1] = 0.01;
        let x: f64 = WEIGHTS[9] * 0.01 * 0.9562382616834844;
        let poly = 2.326765642916932 * x - 0.020884521182843837 * x * x
            + 6.248496625763138e-05 * x * x * x;
        assert_eq!(score(&s), 100.0 - 10.0 * poly.powf(0.6276336467831387));
    }
}
