//! The library's error type. Every message names the thing that was wrong.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A caller-supplied value is out of range or malformed.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// An I/O error while reading or writing a named file.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A video file ended early or holds data that does not fit its format.
    #[error("{path}: frame {frame}: {reason}")]
    BadInput {
        path: PathBuf,
        frame: u64,
        reason: String,
    },

    /// A file header (y4m) could not be understood.
    #[error("{path}: bad header: {reason}")]
    BadHeader { path: PathBuf, reason: String },

    /// No feature extractor has this name.
    #[error("unknown feature extractor '{name}' (known: {known})")]
    UnknownFeature { name: String, known: String },

    /// An extractor or model option is unknown or has a bad value.
    #[error("{owner}: option '{option}': {reason}")]
    BadOption {
        owner: String,
        option: String,
        reason: String,
    },

    /// No built-in model has this version name.
    #[error("unknown model version '{name}' (built in: {known})")]
    UnknownModel { name: String, known: String },

    /// A model file could not be parsed or is inconsistent.
    #[error("model {name}: {reason}")]
    BadModel { name: String, reason: String },

    /// The reference and distorted pictures do not match, or a picture does
    /// not suit an extractor.
    #[error("picture mismatch: {0}")]
    PictureMismatch(String),

    /// A feature that a model needs was not produced for a frame.
    #[error("frame {frame}: feature '{feature}' missing for model {model}")]
    MissingFeature {
        model: String,
        feature: String,
        frame: u32,
    },

    /// An extractor cannot run on this input.
    #[error("{extractor}: {reason}")]
    Extractor { extractor: String, reason: String },

    /// A backend is not available on this machine.
    #[error("backend {backend} unavailable: {reason}")]
    BackendUnavailable { backend: String, reason: String },

    /// A producer's frame cannot be imported: the message names the memory
    /// kind, pixel format, plane and modifier, and why.
    #[error(
        "{}",
        crate::import::describe_import(memory, format, plane, modifier, reason)
    )]
    Import {
        memory: String,
        format: String,
        plane: Option<usize>,
        modifier: Option<String>,
        reason: String,
    },

    /// A fence was not signalled in time.
    #[error("{fence} not signalled within {waited_ms} ms")]
    FenceTimeout { fence: String, waited_ms: u64 },

    /// A GPU runtime call or kernel compile failed.
    #[error("{backend}: {operation} failed: {reason}")]
    Gpu {
        backend: String,
        operation: String,
        reason: String,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
