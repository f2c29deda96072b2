//! The `vmafx` command line: the `vmaf` tool's flags, a scoring run over two
//! files, and its result file.

pub mod args;
mod output;
mod progress;
mod run;

pub use args::{Args, Backend};
pub use run::run;
