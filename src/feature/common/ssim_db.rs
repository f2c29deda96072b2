//! The options `float_ssim` and `float_ms_ssim` share, and their optional
//! conversion of the score to decibels.

use crate::feature::{OptionSpec, Options};
use crate::picture::PictureFormat;

pub static SSIM_OPTIONS: [OptionSpec; 3] = [ENABLE_LCS, ENABLE_DB, CLIP_DB];

/// Also emit the luminance, contrast and structure terms.
pub const ENABLE_LCS: OptionSpec = OptionSpec::bool("enable_lcs", false);
/// Write the score as -10 log10(1 - score).
pub const ENABLE_DB: OptionSpec = OptionSpec::bool("enable_db", false);
/// Cap dB scores at what a half-LSB error over the picture would give.
pub const CLIP_DB: OptionSpec = OptionSpec::bool("clip_db", false);

/// How the score is written: as is, or in dB with an optional cap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ScoreScale {
    Linear,
    Db { max_db: f64 },
}

impl ScoreScale {
    pub fn from_options(options: &Options, format: &PictureFormat) -> Self {
        if !options.bool("enable_db") {
            return ScoreScale::Linear;
        }
        if !options.bool("clip_db") {
            return ScoreScale::Db {
                max_db: f64::INFINITY,
            };
        }
        // libvmaf: unsigned peak = (1 << bpc) - 1; mse = 0.5 / (w * h), with
        // C's unsigned arithmetic.
        let peak = (1u32 << format.bit_depth) - 1;
        let mse = 0.5 / format.width.wrapping_mul(format.height) as f64;
        let max_db = (10.0 * (peak.wrapping_mul(peak) as f64 / mse).log10()).ceil();
        ScoreScale::Db { max_db }
    }

    pub fn apply(self, score: f64) -> f64 {
        match self {
            ScoreScale::Linear => score,
            ScoreScale::Db { max_db } => {
                let db = -10.0 * (1.0 - score).log10();
                // C's MIN(db, max_db).
                if db < max_db {
                    db
                } else {
                    max_db
                }
            }
        }
    }
}
