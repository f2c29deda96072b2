//! `motion2` and `motion3` of each frame, derived from the per-frame SAD
//! scores (libvmaf 3.2.0 derives them in `flush()` from the stored
//! `VMAF_integer_feature_motion_sad_score` values).
//!
//! Rules, for `min_idx` = 1 (three-frame window) or 2 (five-frame window):
//! * frames `< min_idx` have no SAD: `motion2` = 0 and `motion3` = the
//!   blended SAD of frame `min_idx` (0 when the input is that short);
//! * otherwise `motion2[i]` = min(`sad[lo]`, `sad[i + 1]`) with `lo` = `i`
//!   (three-frame) or `i - 1` (five-frame; left out while `< min_idx`),
//!   and the last frame's `motion2` is its own SAD;
//! * `motion3[i]` = min(blend(`motion2[i]`), max), averaged with the previous
//!   frame's un-averaged value under `motion_moving_average`.
//!
//! Frames are derived as soon as their window is complete, so values stream
//! out one frame behind the input; the results equal one pass at the end.

use crate::feature::common::motion_blend::blend_clipped;

/// How `motion3` is shaped from `motion2`.
#[derive(Debug, Clone, Copy)]
pub struct BlendParams {
    pub blend_factor: f64,
    pub blend_offset: f64,
    pub max_val: f64,
    pub moving_average: bool,
}

impl BlendParams {
    /// libvmaf's `MIN(motion_blend(score, factor, offset), max_val)`.
    fn blend_clipped(&self, score: f64) -> f64 {
        blend_clipped(score, self.blend_factor, self.blend_offset, self.max_val)
    }
}

/// `motion2` and `motion3` of one frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Derived {
    pub index: u32,
    pub motion2: f64,
    pub motion3: f64,
}

/// Streaming derivation state.
#[derive(Debug, Clone)]
pub struct MotionWindow {
    params: BlendParams,
    /// First frame that has a SAD (1, or 2 with the five-frame window).
    min_idx: u32,
    five_frame: bool,
    /// SAD scores received so far.
    count: u32,
    /// The last three SAD scores: `recent[k]` is `sad[count - 3 + k]`.
    recent: [f64; 3],
    /// `motion3` of the previous frame before averaging.
    prev_processed: f64,
}

impl MotionWindow {
    pub fn new(params: BlendParams, five_frame: bool) -> Self {
        Self {
            params,
            min_idx: if five_frame { 2 } else { 1 },
            five_frame,
            count: 0,
            recent: [0.0; 3],
            prev_processed: 0.0,
        }
    }

    /// First frame that gets a SAD score (1, or 2 with the five-frame window).
    pub fn min_idx(&self) -> u32 {
        self.min_idx
    }

    /// Takes the SAD score of the next frame; returns the frames whose
    /// values it completes.
    pub fn push(&mut self, sad: f64, out: &mut Vec<Derived>) {
        let k = self.count;
        self.recent = [self.recent[1], self.recent[2], sad];
        self.count += 1;
        if k == self.min_idx {
            let stamp = self.params.blend_clipped(sad);
            self.emit_leading(stamp, out);
        }
        if k > self.min_idx {
            // Frame k - 1 now has its successor; its predecessor (five-frame
            // window, used once it has a SAD) is recent[0] = sad[k - 2].
            let (lo, cur, hi) = (self.recent[0], self.recent[1], self.recent[2]);
            let i = k - 1;
            let motion2 = if !self.five_frame {
                if cur < hi {
                    cur
                } else {
                    hi
                }
            } else if i > self.min_idx {
                if lo < hi {
                    lo
                } else {
                    hi
                }
            } else {
                hi
            };
            self.emit(i, motion2, out);
        }
    }

    /// Derives what is left after the last frame.
    pub fn flush(&mut self, out: &mut Vec<Derived>) {
        let n = self.count;
        if n == 0 {
            return;
        }
        if n <= self.min_idx {
            // No frame reached its first SAD: all zero.
            self.emit_leading_upto(n, 0.0, out);
        } else {
            // The last frame has no successor: its motion2 is its own SAD.
            let last = self.recent[2];
            self.emit(n - 1, last, out);
        }
        self.count = 0;
    }

    fn emit_leading(&mut self, stamp: f64, out: &mut Vec<Derived>) {
        self.emit_leading_upto(self.min_idx, stamp, out);
    }

    fn emit_leading_upto(&mut self, end: u32, stamp: f64, out: &mut Vec<Derived>) {
        for index in 0..end {
            out.push(Derived {
                index,
                motion2: 0.0,
                motion3: stamp,
            });
        }
        self.prev_processed = stamp;
    }

    fn emit(&mut self, index: u32, motion2: f64, out: &mut Vec<Derived>) {
        let processed = self.params.blend_clipped(motion2);
        let motion3 = if self.params.moving_average {
            (processed + self.prev_processed) / 2.0
        } else {
            processed
        };
        self.prev_processed = processed;
        out.push(Derived {
            index,
            motion2,
            motion3,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: BlendParams = BlendParams {
        blend_factor: 1.0,
        blend_offset: 40.0,
        max_val: 10000.0,
        moving_average: false,
    };

    fn run(window: &mut MotionWindow, sads: &[f64]) -> Vec<Derived> {
        let mut out = Vec::new();
        for &s in sads {
            window.push(s, &mut out);
        }
        window.flush(&mut out);
        out
    }

    #[test]
    fn three_frame_window() {
        let out = run(&mut MotionWindow::new(PLAIN, false), &[0.0, 5.0, 3.0, 4.0]);
        let m2: Vec<f64> = out.iter().map(|d| d.motion2).collect();
        let m3: Vec<f64> = out.iter().map(|d| d.motion3).collect();
        assert_eq!(
            out.iter().map(|d| d.index).collect::<Vec<_>>(),
            [0, 1, 2, 3]
        );
        assert_eq!(m2, [0.0, 3.0, 3.0, 4.0]);
        assert_eq!(m3, [5.0, 3.0, 3.0, 4.0]);
    }

    #[test]
    fn five_frame_window_with_moving_average() {
        let p = BlendParams {
            moving_average: true,
            ..PLAIN
        };
        let out = run(
            &mut MotionWindow::new(p, true),
            &[0.0, 0.0, 6.0, 4.0, 8.0, 2.0],
        );
        let m2: Vec<f64> = out.iter().map(|d| d.motion2).collect();
        let m3: Vec<f64> = out.iter().map(|d| d.motion3).collect();
        assert_eq!(m2, [0.0, 0.0, 4.0, 6.0, 2.0, 2.0]);
        assert_eq!(m3, [6.0, 6.0, 5.0, 5.0, 4.0, 2.0]);
    }

    #[test]
    fn short_inputs_are_zero() {
        let out = run(&mut MotionWindow::new(PLAIN, true), &[0.0, 0.0]);
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|d| d.motion2 == 0.0 && d.motion3 == 0.0));
        let out = run(&mut MotionWindow::new(PLAIN, false), &[0.0]);
        assert_eq!(
            out,
            [Derived {
                index: 0,
                motion2: 0.0,
                motion3: 0.0
            }]
        );
    }

    #[test]
    fn blend_caps_above_offset() {
        let p = BlendParams {
            blend_factor: 0.5,
            blend_offset: 10.0,
            max_val: 12.0,
            moving_average: false,
        };
        assert_eq!(p.blend_clipped(4.0), 4.0);
        assert_eq!(p.blend_clipped(20.0), 12.0);
        assert_eq!(p.blend_clipped(12.0), 11.0);
    }
}
