//! Placeholder: being written.
use super::{CreateFn, ExtractorInfo};
use crate::error::Error;

fn create(_: &super::Options, _: &crate::picture::PictureFormat) -> crate::error::Result<Box<dyn super::Extractor>> {
    Err(Error::Extractor { extractor: "motion".into(), reason: "not implemented yet".into() })
}

pub static INFO: ExtractorInfo = ExtractorInfo { name: "motion", options: &[], provides: &[], create: create as CreateFn };
