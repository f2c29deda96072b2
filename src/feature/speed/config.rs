//! The options both SpEED extractors take, and their checked values.

use super::resample::{ScaleMethod, METHOD_NAMES};
use crate::error::{Error, Result};
use crate::feature::common::vif_kernels::is_valid_kernelscale;
use crate::feature::{OptionSpec, Options};

pub const KERNELSCALE: OptionSpec =
    OptionSpec::double("speed_kernelscale", 1.0, 0.1, 4.0).param("ks");
pub const PRESCALE: OptionSpec = OptionSpec::double("speed_prescale", 1.0, 0.1, 4.0).param("ps");
pub const PRESCALE_METHOD: OptionSpec =
    OptionSpec::string("speed_prescale_method", "nearest", &METHOD_NAMES).param("psm");
pub const SIGMA_NN: OptionSpec = OptionSpec::double("speed_sigma_nn", 0.29, 0.1, 2.0).param("snn");
pub const NN_FLOOR: OptionSpec = OptionSpec::double("speed_nn_floor", 0.0, 0.0, 1.0).param("nnf");
pub const MAX_VAL: OptionSpec =
    OptionSpec::double("speed_max_val", 1000.0, 0.0, 1000.0).param("mxv");

/// The SpEED computation's parameters (libvmaf's `SpeedOptions`).
#[derive(Debug, Clone, Copy)]
pub struct SpeedConfig {
    pub kernelscale: f32,
    pub prescale: f64,
    pub method: ScaleMethod,
    pub sigma_nn: f32,
    pub nn_floor: f32,
    pub weight_var_mode: i32,
}

impl SpeedConfig {
    /// Reads the shared options; `weight_var_mode` is 0 where the extractor
    /// has no such option (as `speed_temporal`).
    pub fn from_options(owner: &str, options: &Options, weight_var_mode: i32) -> Result<Self> {
        // libvmaf hands the double options to float parameters.
        let kernelscale = options.double(KERNELSCALE.name) as f32;
        if !is_valid_kernelscale(kernelscale) {
            return Err(Error::BadOption {
                owner: owner.to_string(),
                option: KERNELSCALE.name.to_string(),
                reason: format!(
                    "{} is not a supported kernel scale (1, 0.5, 1.5, 2, 2/3, 2.4, 360/97, 4/3, \
                     3.5/3, 3.75/3, 4.25/3, 5/3, 3, 1/2.25, 1.4746, 1.54, 1.6, 1.06667, \
                     0.711111, 0.74074, 1.111111)",
                    options.double(KERNELSCALE.name)
                ),
            });
        }
        let method = options.string(PRESCALE_METHOD.name);
        let method = ScaleMethod::parse(method).ok_or_else(|| Error::BadOption {
            owner: owner.to_string(),
            option: PRESCALE_METHOD.name.to_string(),
            reason: format!("'{method}' is not one of: {}", METHOD_NAMES.join(", ")),
        })?;
        Ok(Self {
            kernelscale,
            prescale: options.double(PRESCALE.name),
            method,
            sigma_nn: options.double(SIGMA_NN.name) as f32,
            nn_floor: options.double(NN_FLOOR.name) as f32,
            weight_var_mode,
        })
    }

    /// libvmaf skips prescaling for factors within 1e-3 of 1.
    pub fn prescales(&self) -> bool {
        (self.prescale - 1.0).abs() >= 1e-3
    }
}
