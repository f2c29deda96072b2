//! Constants of libvmaf's integer ADM: the db2 wavelet in Q15, the reciprocal
//! table that replaces division (as a test reference), and the visual-model tables (Watson 1997,
//! blended Barten/Watson) the contrast sensitivity weights come from.

/// db2 low-pass analysis filter, Q15.
pub const DB2_LO: [i32; 4] = [15826, 27411, 7345, -4240];
/// db2 high-pass analysis filter, Q15.
pub const DB2_HI: [i32; 4] = [-4240, -7345, 27411, -15826];
/// Sum of [`DB2_LO`]: the scale-0 vertical pass subtracts it times half the
/// sample range to centre samples on zero (the high-pass sum is 0).
pub const DB2_LO_SUM: i32 = 46342;

/// 1/15 in Q17 (scale 0 masking threshold of the centre coefficient).
pub const ONE_BY_15: i32 = 8738;
/// 1/30 in Q17 (scale 0 masking filter of the neighbours).
pub const ONE_BY_30: i32 = 4369;
/// 1/15 in Q32 (scales 1-3).
pub const I4_ONE_BY_15: i64 = 286_331_153;
/// 1/30 in Q32 (scales 1-3).
pub const I4_ONE_BY_30: i64 = 143_165_577;

/// The non-negative half of libvmaf's reciprocal table:
/// `RECIPROCAL_Q30[d] = trunc(2^30 / d)` for d in 1..=32768, 0 at d = 0.
/// The AVX-512 decoupling gathers from it; the portable loop computes the
/// same entries in f64 (vectorizable).
pub static RECIPROCAL_Q30: [i32; 32769] = build_reciprocals();

const fn build_reciprocals() -> [i32; 32769] {
    let mut t = [0i32; 32769];
    let mut d = 1;
    while d <= 32768 {
        t[d as usize] = (1i32 << 30) / d;
        d += 1;
    }
    t
}

/// libvmaf's reciprocal table: `DIV_LOOKUP[32768 + d] = 2^30 / d`
/// (truncated, negated for d < 0), for d in -32768..=32768; entry 32768
/// (d = 0) is unused and 0. The tests check the decoupling against it.
#[cfg(test)]
pub static DIV_LOOKUP: [i32; 65537] = build_div_lookup();

#[cfg(test)]
const fn build_div_lookup() -> [i32; 65537] {
    let mut t = [0i32; 65537];
    let mut i = 1;
    while i <= 32768 {
        let recip = (1i32 << 30) / i;
        t[32768 + i as usize] = recip;
        t[32768 - i as usize] = -recip;
        i += 1;
    }
    t
}

/// Watson et al. 1997 DWT quantisation-noise visibility model, luma row
/// (`dwt_7_9_YCbCr_threshold[0]`); C stores these double literals as float.
pub struct WatsonParams {
    pub a: f32,
    pub k: f32,
    pub f0: f32,
    pub g: [f32; 4],
}

pub const WATSON_Y: WatsonParams = WatsonParams {
    a: 0.495_f64 as f32,
    k: 0.466_f64 as f32,
    f0: 0.401_f64 as f32,
    g: [1.501_f64 as f32, 1.0, 0.534_f64 as f32, 1.0],
};

/// Basis function amplitudes A(lambda, theta) of the 7/9 wavelet (Watson
/// 1997, table V, transposed).
pub const WATSON_AMPLITUDES: [[f32; 4]; 6] = [
    [
        0.62171_f64 as f32,
        0.67234_f64 as f32,
        0.72709_f64 as f32,
        0.67234_f64 as f32,
    ],
    [
        0.34537_f64 as f32,
        0.41317_f64 as f32,
        0.49428_f64 as f32,
        0.41317_f64 as f32,
    ],
    [
        0.18004_f64 as f32,
        0.22727_f64 as f32,
        0.28688_f64 as f32,
        0.22727_f64 as f32,
    ],
    [
        0.091401_f64 as f32,
        0.11792_f64 as f32,
        0.15214_f64 as f32,
        0.11792_f64 as f32,
    ],
    [
        0.045943_f64 as f32,
        0.059758_f64 as f32,
        0.077727_f64 as f32,
        0.059758_f64 as f32,
    ],
    [
        0.023013_f64 as f32,
        0.030018_f64 as f32,
        0.039156_f64 as f32,
        0.030018_f64 as f32,
    ],
];

/// Barten CSF: luminance anchors (cd/m^2) of the HDR-VDP-2.2.1 fits.
pub const BARTEN_LUM_ANCHORS: [f32; 6] = [
    0.002_f64 as f32,
    0.02_f64 as f32,
    0.2_f64 as f32,
    2.0,
    20.0,
    150.0,
];

/// Barten CSF parameters per anchor (column 0 is unused by the model).
pub const BARTEN_PARAMS: [[f32; 5]; 6] = [
    [
        0.0160737_f64 as f32,
        0.991265_f64 as f32,
        3.74038_f64 as f32,
        0.50722_f64 as f32,
        4.46044_f64 as f32,
    ],
    [
        0.383873_f64 as f32,
        0.800889_f64 as f32,
        3.54104_f64 as f32,
        0.682505_f64 as f32,
        4.94958_f64 as f32,
    ],
    [
        0.929301_f64 as f32,
        0.476505_f64 as f32,
        4.37453_f64 as f32,
        0.750315_f64 as f32,
        5.28678_f64 as f32,
    ],
    [
        1.29776_f64 as f32,
        0.405782_f64 as f32,
        4.40602_f64 as f32,
        0.935314_f64 as f32,
        5.61425_f64 as f32,
    ],
    [
        1.49222_f64 as f32,
        0.334278_f64 as f32,
        3.79542_f64 as f32,
        1.07327_f64 as f32,
        6.4635_f64 as f32,
    ],
    [
        1.46213_f64 as f32,
        0.394533_f64 as f32,
        2.7755_f64 as f32,
        1.16577_f64 as f32,
        7.45665_f64 as f32,
    ],
];

/// Rod/cone sensitivity parameters (p5..p8 of the paper).
pub const BARTEN_SA: [f32; 4] = [
    30.162_f64 as f32,
    4.0627_f64 as f32,
    1.6596_f64 as f32,
    0.2712_f64 as f32,
];
/// Optical MTF mixture weights and exponents.
pub const BARTEN_MTF_A: [f32; 4] = [
    0.424838596301290_f64 as f32,
    0.572435103936480_f64 as f32,
    0.000167576239164937_f64 as f32,
    0.00255872352306433_f64 as f32,
];
pub const BARTEN_MTF_B: [f32; 4] = [0.028_f64 as f32, 0.37_f64 as f32, 37.0, 360.0];

/// One blended-CSF table: `[theta][scale]`, theta 0 = horizontal/vertical,
/// 1 = diagonal.
pub type BlendTable = [[f32; 4]; 2];

macro_rules! blend {
    ($a0:expr, $a1:expr, $a2:expr, $a3:expr; $b0:expr, $b1:expr, $b2:expr, $b3:expr) => {
        [
            [$a0 as f32, $a1 as f32, $a2 as f32, $a3 as f32],
            [$b0 as f32, $b1 as f32, $b2 as f32, $b3 as f32],
        ]
    };
}

/// Blended Barten/Watson CSF weights of `adm_csf_mode=2`, keyed by
/// (reference display height, normalised viewing distance). libvmaf maps
/// 2160p at 1.5H to the 1080p 3H table (same pixels per degree).
pub const BLEND_LEGACY: [(i32, f64, BlendTable); 9] = [
    (
        1080,
        3.0,
        blend!(0.01183_f64, 0.025026_f64, 0.04295_f64, 0.058621_f64; 0.004302_f64, 0.011778_f64, 0.023918_f64, 0.035901_f64),
    ),
    (
        1080,
        5.0,
        blend!(0.004212_f64, 0.014809_f64, 0.029642_f64, 0.047464_f64; 0.000984_f64, 0.005852_f64, 0.0146_f64, 0.027574_f64),
    ),
    (
        2160,
        1.5,
        blend!(0.01183_f64, 0.025026_f64, 0.04295_f64, 0.058621_f64; 0.004302_f64, 0.011778_f64, 0.023918_f64, 0.035901_f64),
    ),
    (
        2160,
        3.0,
        blend!(0.00226_f64, 0.01183_f64, 0.025026_f64, 0.04295_f64; 0.000479_f64, 0.004302_f64, 0.011778_f64, 0.023918_f64),
    ),
    (
        2160,
        5.0,
        blend!(0.000092_f64, 0.004212_f64, 0.014809_f64, 0.029642_f64; 0.000050_f64, 0.000984_f64, 0.005852_f64, 0.0146_f64),
    ),
    (
        720,
        3.0,
        blend!(0.018715_f64, 0.035637_f64, 0.052798_f64, 0.061509_f64; 0.007999_f64, 0.018396_f64, 0.031851_f64, 0.037718_f64),
    ),
    (
        720,
        5.0,
        blend!(0.010144_f64, 0.022561_f64, 0.040309_f64, 0.05672_f64; 0.003463_f64, 0.010282_f64, 0.021839_f64, 0.034641_f64),
    ),
    (
        480,
        3.0,
        blend!(0.027961_f64, 0.045875_f64, 0.060275_f64, 0.056234_f64; 0.013572_f64, 0.026277_f64, 0.036959_f64, 0.034511_f64),
    ),
    (
        480,
        5.0,
        blend!(0.016781_f64, 0.032822_f64, 0.05032_f64, 0.061594_f64; 0.00691_f64, 0.016545_f64, 0.029917_f64, 0.037777_f64),
    ),
];

/// The same for `adm_csf_mode=3` (refit with the L1 scaling fix).
pub const BLEND_MAE: [(i32, f64, BlendTable); 9] = [
    (
        1080,
        3.0,
        blend!(0.011249_f64, 0.022606_f64, 0.035930_f64, 0.045673_f64; 0.004097_f64, 0.010921_f64, 0.021430_f64, 0.031313_f64),
    ),
    (
        1080,
        5.0,
        blend!(0.004052_f64, 0.013939_f64, 0.026298_f64, 0.038833_f64; 0.000927_f64, 0.005544_f64, 0.013415_f64, 0.024515_f64),
    ),
    (
        2160,
        1.5,
        blend!(0.011249_f64, 0.022606_f64, 0.035930_f64, 0.045673_f64; 0.004097_f64, 0.010921_f64, 0.021430_f64, 0.031313_f64),
    ),
    (
        2160,
        3.0,
        blend!(0.002166_f64, 0.011249_f64, 0.022606_f64, 0.035930_f64; 0.000447_f64, 0.004097_f64, 0.010921_f64, 0.021430_f64),
    ),
    (
        2160,
        5.0,
        blend!(0.000077_f64, 0.004052_f64, 0.013939_f64, 0.026298_f64; 0.000045_f64, 0.000927_f64, 0.005544_f64, 0.013415_f64),
    ),
    (
        720,
        3.0,
        blend!(0.017329_f64, 0.030870_f64, 0.042134_f64, 0.047410_f64; 0.007509_f64, 0.016707_f64, 0.028072_f64, 0.032722_f64),
    ),
    (
        720,
        5.0,
        blend!(0.009689_f64, 0.020577_f64, 0.034162_f64, 0.044523_f64; 0.003302_f64, 0.009579_f64, 0.019661_f64, 0.030318_f64),
    ),
    (
        480,
        3.0,
        blend!(0.024969_f64, 0.037825_f64, 0.046676_f64, 0.043974_f64; 0.012511_f64, 0.023424_f64, 0.032139_f64, 0.030166_f64),
    ),
    (
        480,
        5.0,
        blend!(0.015665_f64, 0.028766_f64, 0.040612_f64, 0.047483_f64; 0.006514_f64, 0.015107_f64, 0.026476_f64, 0.032776_f64),
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn div_lookup_matches_libvmaf_generator() {
        assert_eq!(DIV_LOOKUP[32768], 0);
        assert_eq!(DIV_LOOKUP[32768..], RECIPROCAL_Q30[..]);
        assert_eq!(DIV_LOOKUP[32769], 1 << 30);
        assert_eq!(DIV_LOOKUP[32767], -(1 << 30));
        assert_eq!(DIV_LOOKUP[65536], 32768);
        assert_eq!(DIV_LOOKUP[0], -32768);
        assert_eq!(DIV_LOOKUP[32768 + 3], 357_913_941);
    }

    #[test]
    fn filter_sums() {
        assert_eq!(DB2_LO.iter().sum::<i32>(), DB2_LO_SUM);
        assert_eq!(DB2_HI.iter().sum::<i32>(), 0);
    }
}
