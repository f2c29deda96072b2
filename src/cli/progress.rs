//! A progress bar on a terminal; nothing when stderr is not one.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

pub struct Progress(Option<ProgressBar>);

impl Progress {
    /// `total`: frames expected, when the input size tells it.
    pub fn new(quiet: bool, total: Option<u64>) -> Self {
        if quiet || !std::io::stderr().is_terminal() {
            return Self(None);
        }
        let bar = match total {
            Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr()),
            None => ProgressBar::new_spinner(),
        };
        let style =
            ProgressStyle::with_template("{bar:40} {pos}/{len} frames, {per_sec} ({eta} left)")
                .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        Self(Some(bar))
    }

    pub fn tick(&self) {
        if let Some(b) = &self.0 {
            b.inc(1);
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}
