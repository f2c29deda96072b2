//! The part of each band that ADM scores: libvmaf drops a border of 10 % of
//! the band on every side (computed in double and truncated, as there).

/// A half-open rectangle of band coefficients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub top: usize,
    pub bottom: usize,
    pub left: usize,
    pub right: usize,
}

/// Fraction of the band dropped on each side.
const BORDER_FACTOR: f64 = 0.1;

/// libvmaf's `(int)(n * ADM_BORDER_FACTOR - 0.5)`, at least 0.
fn border(n: usize) -> usize {
    (n as f64 * BORDER_FACTOR - 0.5).max(0.0) as usize
}

impl Region {
    /// The scored region of a `width` x `height` band.
    pub fn scored(width: usize, height: usize) -> Self {
        let (left, top) = (border(width), border(height));
        Self {
            top,
            bottom: height - top,
            left,
            right: width - left,
        }
    }

    /// This region grown by one coefficient on each side, within the band:
    /// the neighbours the masking threshold reads (libvmaf computes a larger
    /// margin, whose extra values are never read).
    pub fn with_halo(&self, width: usize, height: usize) -> Self {
        Self {
            top: self.top.saturating_sub(1),
            bottom: (self.bottom + 1).min(height),
            left: self.left.saturating_sub(1),
            right: (self.right + 1).min(width),
        }
    }

    /// Number of coefficients.
    pub fn area(&self) -> usize {
        (self.bottom - self.top) * (self.right - self.left)
    }

    pub fn width(&self) -> usize {
        self.right - self.left
    }

    pub fn height(&self) -> usize {
        self.bottom - self.top
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn border_is_a_tenth_rounded() {
        // 288 * 0.1 - 0.5 = 28.3 -> 28; 161 -> 15.6 -> 15; tiny bands keep all.
        assert_eq!(
            Region::scored(288, 162),
            Region {
                top: 15,
                bottom: 147,
                left: 28,
                right: 260
            }
        );
        assert_eq!(
            Region::scored(161, 4),
            Region {
                top: 0,
                bottom: 4,
                left: 15,
                right: 146
            }
        );
        let r = Region::scored(20, 4);
        assert_eq!(
            r.with_halo(20, 4),
            Region {
                top: 0,
                bottom: 4,
                left: 0,
                right: 20
            }
        );
    }
}
