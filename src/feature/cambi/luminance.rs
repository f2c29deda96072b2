//! Display luminance of 10-bit limited-range luma codes and the visibility
//! thresholds CAMBI derives from it once per instance: for each contrast
//! step, the largest luma code at which that step is still invisible
//! (libvmaf's `get_tvi_for_diff`), and the darkest code considered at all
//! (`get_vlt_luma`).

/// Code range of 10-bit limited ("TV") range luma, where CAMBI works.
const FOOT: i32 = 64;
const HEAD: i32 = 940;
/// Largest 10-bit code.
const MAX_CODE: i32 = 1023;

/// Electro-optical transfer function used to turn codes into luminance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eotf {
    /// ITU-R BT.1886 with a 300 cd/m² white and 0.01 cd/m² black.
    Bt1886,
    /// SMPTE ST 2084 (PQ).
    Pq,
}

impl Eotf {
    /// Parses libvmaf's `eotf` option values.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "bt1886" => Some(Self::Bt1886),
            "pq" => Some(Self::Pq),
            _ => None,
        }
    }

    /// Luminance (cd/m²) of a normalized signal `v` in [0, 1].
    fn apply(self, v: f64) -> f64 {
        match self {
            Self::Bt1886 => {
                const GAMMA: f64 = 2.4;
                const LW: f64 = 300.0;
                const LB: f64 = 0.01;
                let lw = LW.powf(1.0 / GAMMA);
                let lb = LB.powf(1.0 / GAMMA);
                let a = (lw - lb).powf(GAMMA);
                let b = lb / (lw - lb);
                let base = v + b;
                a * (if base > 0.0 { base } else { 0.0 }).powf(GAMMA)
            }
            Self::Pq => {
                const M1: f64 = 0.1593017578125;
                const M2: f64 = 78.84375;
                const C1: f64 = 0.8359375;
                const C2: f64 = 18.8515625;
                const C3: f64 = 18.6875;
                let p = v.powf(1.0 / M2);
                let num = p - C1;
                let num = if num > 0.0 { num } else { 0.0 };
                let den = C2 - C3 * p;
                10000.0 * (num / den).powf(1.0 / M1)
            }
        }
    }

    /// Luminance of a 10-bit code, clipped to the limited range first.
    pub fn luminance(self, code: i32) -> f64 {
        let clipped = code.clamp(FOOT, HEAD);
        self.apply((clipped - FOOT) as f64 / (HEAD - FOOT) as f64)
    }
}

/// Where a candidate code stands against the visibility threshold of a step.
#[derive(PartialEq)]
enum Bisect {
    TooSmall,
    Correct,
    TooBig,
}

/// Whether a step of `diff` codes above `code` is visible: its luminance
/// change exceeds `threshold` times the luminance at `code`.
fn visible(eotf: Eotf, code: i32, diff: i32, threshold: f64) -> bool {
    let mean = eotf.luminance(code);
    let stepped = eotf.luminance(code + diff);
    stepped - mean > threshold * mean
}

fn classify(eotf: Eotf, code: i32, diff: i32, threshold: f64) -> Bisect {
    if !visible(eotf, code, diff, threshold) {
        Bisect::TooBig
    } else if visible(eotf, code + 1, diff, threshold) {
        Bisect::TooSmall
    } else {
        Bisect::Correct
    }
}

/// libvmaf's `get_tvi_for_diff` at 10 bits: the code where a step of
/// `diff` codes stops being visible, found by bisection between the foot
/// and `head - diff - 1` (0 when it is never visible, 1023 when always).
pub fn tvi_for_diff(eotf: Eotf, diff: i32, threshold: f64) -> i32 {
    let mut foot = FOOT;
    let mut head = HEAD - diff - 1;
    match classify(eotf, foot, diff, threshold) {
        Bisect::TooBig => return 0,
        Bisect::Correct => return foot,
        Bisect::TooSmall => {}
    }
    match classify(eotf, head, diff, threshold) {
        Bisect::TooSmall => return MAX_CODE,
        Bisect::Correct => return head,
        Bisect::TooBig => {}
    }
    // The condition is monotonic in the code, so this ends; the bound on
    // the iterations only guards against a pathological EOTF.
    for _ in 0..64 {
        let mid = foot + (head - foot) / 2;
        match classify(eotf, mid, diff, threshold) {
            Bisect::TooBig => head = mid,
            Bisect::TooSmall => foot = mid,
            Bisect::Correct => return mid,
        }
    }
    foot
}

/// libvmaf's `get_vlt_luma`: the first code (from the foot up) whose
/// luminance reaches `threshold`, or 0 when the foot already does. `None`
/// when no code reaches it (libvmaf would loop forever).
pub fn visibility_luma(eotf: Eotf, threshold: f64) -> Option<u16> {
    let mut code = FOOT;
    while eotf.luminance(code) < threshold {
        code += 1;
        if code > HEAD {
            return None;
        }
    }
    Some(if code == FOOT { 0 } else { code as u16 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bt1886_spans_black_to_white() {
        assert!((Eotf::Bt1886.luminance(FOOT) - 0.01).abs() < 1e-12);
        assert!((Eotf::Bt1886.luminance(HEAD) - 300.0).abs() < 1e-9);
        assert!((Eotf::Pq.luminance(HEAD) - 10000.0).abs() < 1e-6);
    }

    #[test]
    fn thresholds_grow_with_the_step() {
        let t: Vec<i32> = (1..=4)
            .map(|d| tvi_for_diff(Eotf::Bt1886, d, 0.019))
            .collect();
        assert!(t.windows(2).all(|w| w[0] <= w[1]), "{t:?}");
        assert_eq!(visibility_luma(Eotf::Bt1886, 0.0), Some(0));
        let v = visibility_luma(Eotf::Bt1886, 0.06).unwrap() as i32;
        assert!(Eotf::Bt1886.luminance(v) >= 0.06 && Eotf::Bt1886.luminance(v - 1) < 0.06);
        assert_eq!(visibility_luma(Eotf::Bt1886, 300.5), None);
    }
}
