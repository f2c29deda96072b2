//! vmafx scores video quality (VMAF and its companion metrics) with numbers
//! identical to Netflix's libvmaf 3.2.0, on the CPU and on GPUs, from host
//! pictures, files, or frames a producer already holds on a device.
//!
//! # Scoring pictures
//!
//! A [`Context`] scores a sequence of reference/distorted picture pairs of
//! one [`PictureFormat`]. Name models and features on a [`ContextBuilder`],
//! submit pairs in order, and read the results by name:
//!
//! ```
//! use vmafx::io::{open, FrameSource};
//! use vmafx::{ContextBuilder, HostPicture};
//!
//! let mut refs = open("examples/data/ref_576x324.y4m".as_ref(), None)?;
//! let mut dist = open("examples/data/dist_576x324_x264_crf30.y4m".as_ref(), None)?;
//! let mut ctx = ContextBuilder::new(refs.format())
//!     .default_model() // vmaf_v0.6.1, as the command line
//!     .feature("psnr", vec![])
//!     .build()?;
//! let (mut r, mut d) = (HostPicture::new(refs.format()), HostPicture::new(dist.format()));
//! while refs.read_into(&mut r)? && dist.read_into(&mut d)? {
//!     ctx.submit_borrowed(&r, &d)?; // the same two pictures, refilled
//! }
//! let scores = ctx.finish()?;
//! let vmaf = scores.pooled("vmaf").expect("every frame has a score");
//! assert!((94.0..96.0).contains(&vmaf.mean));
//! assert!(scores.get(0, "psnr_y").is_some());
//! # Ok::<(), vmafx::Error>(())
//! ```
//!
//! Models are [`model::Model`]s (built in by version name, or from a JSON
//! file); features are libvmaf's extractor names with `key=value` options
//! ([`feature::REGISTRY`] lists them). [`FeatureScores`] holds every scored
//! frame's values (features, then model scores) and pools them as libvmaf
//! does ([`pool`]); [`report`] writes the `vmaf` tool's JSON, XML and CSV.
//!
//! # Results as frames finish
//!
//! A live stream need not wait for [`Context::finish`]: [`Context::on_frame`]
//! calls back with each scored frame once it is complete (its temporal
//! features need up to two later frames), [`Context::take_finished`] returns
//! those completed since the last call, [`Context::score_at`] answers one
//! frame and [`Context::pooled_so_far`] pools the frames complete so far.
//!
//! # On a GPU
//!
//! [`gpu::open`] opens a CUDA or HIP device (the runtime is loaded when
//! asked for, so one binary runs with or without a GPU and says what is
//! missing); [`ContextBuilder::gpu`] puts the context on it. Every extractor
//! with a GPU version runs there, with the CPU's scores (integer features
//! bit for bit, float features within 1e-5).
//!
//! # Frames where they live
//!
//! A producer hands over a frame where it already is (device memory, a
//! CUDA/HIP array, a dma-buf, a Vulkan allocation, a GL texture, host
//! memory) with the fence that says it is written, and gets release
//! signals when vmafx has read it: [`import`] and `docs/importing.md`.
//! Values that carry a raw address or handle are made by `unsafe`
//! constructors whose `# Safety` sections say what the producer promises.
//!
//! # Errors
//!
//! Every fallible call returns [`Error`], whose message names what was
//! wrong (file and frame, extractor and option, memory kind, format, plane
//! and modifier). GPU failures carry the runtime ([`GpuApi`]) and a
//! [`GpuCode`] a caller can act on.
//!
//! # Cargo features
//!
//! | feature | what it adds |
//! | --- | --- |
//! | `cuda` | NVIDIA GPUs (CUDA driver API and NVRTC, loaded at run time) |
//! | `hip` | AMD GPUs (HIP runtime and hiprtc, loaded at run time) |
//! | `vulkan` | Vulkan timeline semaphores as host-waited fences |
//! | `gl` | GL sync objects as fences |
//! | `cli` | the `vmafx` command-line tool |
//! | `capi` | libvmaf's C ABI (`vmaf_init`, ...), off by default: `capi/install.sh` builds the C library |
//!
//! All but `capi` are on by default; without them the library is CPU-only and pulls
//! in no GPU, graphics or command-line crate.
#![warn(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

/// libvmaf's C ABI (the `capi` feature; `capi/install.sh` builds the library).
#[cfg(feature = "capi")]
pub mod capi;
/// The `vmafx` command line (the binary is its only user).
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
pub(crate) mod collector;
pub mod context;
pub(crate) mod cpu;
pub mod error;
pub mod feature;
pub mod gpu;
pub mod import;
pub mod io;
pub mod model;
pub(crate) mod numfmt;
pub(crate) mod parallel;
pub mod picture;
pub mod pool;
pub mod report;
#[doc(hidden)]
pub mod testing;

pub use context::{Context, ContextBuilder, FeatureScores};
pub use error::{Error, GpuApi, GpuCode, Result};
pub use picture::{ChromaSubsampling, HostPicture, PictureFormat, PicturePool, PlaneId, PlaneMask};

/// The README's examples compile as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
