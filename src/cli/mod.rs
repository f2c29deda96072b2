//! The `vmafx` command line: the `vmaf` tool's flags, a scoring run over two
//! files, and its result file.

pub mod args;
mod backend_names;
mod device_queues;
mod number;
mod output;
mod presets;
mod progress;
mod read_ahead;
mod run;
mod sigbus;

pub use args::{Args, Backend, VMAF_VERSION};
pub use run::{run, run_then_exit};
