//! The sizes SpEED works at (libvmaf's `SpeedDimensions`): the plane as
//! given, after prescaling, after decimating by 16, and cut to whole 5x5
//! blocks.

/// Side of the blocks the entropy model is fitted on.
pub const BLOCK: usize = 5;
/// Samples per block, the dimension of the covariance matrix.
pub const BLOCK_AREA: usize = BLOCK * BLOCK;
/// log2 of the decimation applied before estimation (4 scales of 2).
const SCALES: u32 = 4;
/// The smallest prescaled side that leaves one block after decimation.
pub const MIN_SCALED_SIDE: usize = BLOCK << SCALES;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub width: usize,
    pub height: usize,
}

#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    /// The plane as extracted.
    pub original: Size,
    /// After `speed_prescale`.
    pub scaled: Size,
    /// Room for both (the frame buffers hold either).
    pub alloc: Size,
    /// After decimating by 16.
    pub operating: Size,
    /// `operating` cut down to whole blocks.
    pub truncated: Size,
    pub blocks_horizontal: usize,
    pub blocks_vertical: usize,
    /// The window every block offset (0..5, 0..5) shares for the means and
    /// covariances: `truncated - BLOCK + 1`.
    pub submatrix: Size,
}

impl Geometry {
    /// The sizes for a `width` x `height` plane, or `None` when less than
    /// one block is left after prescaling and decimation (where libvmaf
    /// logs "SpEED: image too small" and goes on to crash).
    pub fn new(width: usize, height: usize, prescale: f64) -> Option<Self> {
        let original = Size { width, height };
        // As libvmaf: `(int)(side * prescale + 0.5)`.
        let scale = |side: usize| (side as f64 * prescale + 0.5) as i32 as usize;
        let scaled = Size {
            width: scale(width),
            height: scale(height),
        };
        let alloc = Size {
            width: width.max(scaled.width),
            height: height.max(scaled.height),
        };
        let operating = Size {
            width: scaled.width >> SCALES,
            height: scaled.height >> SCALES,
        };
        let truncated = Size {
            width: operating.width / BLOCK * BLOCK,
            height: operating.height / BLOCK * BLOCK,
        };
        if truncated.width == 0 || truncated.height == 0 {
            return None;
        }
        Some(Self {
            original,
            scaled,
            alloc,
            operating,
            truncated,
            blocks_horizontal: truncated.width / BLOCK,
            blocks_vertical: truncated.height / BLOCK,
            submatrix: Size {
                width: truncated.width - BLOCK + 1,
                height: truncated.height - BLOCK + 1,
            },
        })
    }

    pub fn blocks(&self) -> usize {
        self.blocks_horizontal * self.blocks_vertical
    }

    /// Samples in the common window, the divisor of means and covariances.
    pub fn submatrix_area(&self) -> usize {
        self.submatrix.width * self.submatrix.height
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chroma_of_1080p() {
        let g = Geometry::new(960, 540, 1.0).unwrap();
        assert_eq!(
            g.operating,
            Size {
                width: 60,
                height: 33
            }
        );
        assert_eq!(
            g.truncated,
            Size {
                width: 60,
                height: 30
            }
        );
        assert_eq!(g.blocks(), 72);
        assert_eq!(
            g.submatrix,
            Size {
                width: 56,
                height: 26
            }
        );
    }

    #[test]
    fn prescaling_below_one_block_is_too_small() {
        // The 321x179 golden pair's chroma at the 2160 models' prescale.
        assert!(Geometry::new(160, 89, 0.5).is_none());
        let g = Geometry::new(288, 162, 0.5).unwrap();
        assert_eq!(
            (g.scaled, g.blocks()),
            (
                Size {
                    width: 144,
                    height: 81
                },
                1
            )
        );
        assert!(Geometry::new(80, 80, 1.0).is_some());
        assert!(Geometry::new(79, 80, 1.0).is_none());
    }
}
