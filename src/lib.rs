#![doc = include_str!("../README.md")]
#![warn(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

#[cfg(feature = "cli")]
pub mod cli;
pub mod collector;
pub mod context;
pub mod error;
pub mod feature;
pub mod gpu;
pub mod import;
pub mod io;
pub mod model;
pub mod numfmt;
pub mod picture;
pub mod pool;
pub mod report;
#[doc(hidden)]
pub mod testing;

pub use context::{Context, ContextBuilder, FeatureScores};
pub use error::{Error, GpuApi, GpuCode, Result};
pub use picture::{ChromaSubsampling, HostPicture, PictureFormat, PlaneId, PlaneMask};
