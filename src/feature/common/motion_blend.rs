//! libvmaf's `motion3` shaping (`motion_blend` of `motion_blend_tools.h`),
//! shared by integer and float motion.

/// `MIN(motion_blend(score, factor, offset), max_val)`: `score` pulled
/// toward `MIN(offset, score)` by `1 - factor`, then capped.
pub fn blend_clipped(score: f64, factor: f64, offset: f64, max_val: f64) -> f64 {
    let blended = score * factor + (1.0 - factor) * c_min(offset, score);
    c_min(blended, max_val)
}

/// C's `MIN(x, y)`: `x < y ? x : y` (unlike `f64::min`, a NaN `x` gives `y`
/// and a NaN `y` is kept).
pub fn c_min(x: f64, y: f64) -> f64 {
    if x < y {
        x
    } else {
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blends_toward_the_offset_and_caps() {
        // Below the offset the score is kept whatever the factor.
        assert_eq!(blend_clipped(10.0, 0.5, 40.0, 1000.0), 10.0);
        // Above it, halfway to the offset with factor 0.5.
        assert_eq!(blend_clipped(60.0, 0.5, 40.0, 1000.0), 50.0);
        assert_eq!(blend_clipped(60.0, 1.0, 40.0, 18.0), 18.0);
    }
}
