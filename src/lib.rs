//! vmafx: VMAF and its companion metrics, identical to libvmaf, on host
//! frames (CPU) and, in later stages, GPU-resident frames.

pub mod error;
pub mod feature;
pub mod model;
pub mod numfmt;
pub mod picture;

pub use error::{Error, Result};
pub use picture::{ChromaSubsampling, HostPicture, PictureFormat, PlaneId, PlaneMask};
