//! One SpEED comparison of a reference and a distorted plane (libvmaf's
//! `speed_extract_score`), with every buffer held per instance.

use super::config::SpeedConfig;
use super::convolve::{self, FloatPlane};
use super::estimate::{speed_score, BlockStats, Estimator, WeightMode};
use super::geometry::{Geometry, Size};
use super::kernels::antialias_filter;
use super::resample::Resampler;
use crate::feature::common::picture_copy::{convert_row, sample_divisor};
use crate::feature::common::vif_kernels::scale_filter;
use crate::feature::FrameInput;
use crate::picture::{HostPicture, PlaneId, PlaneRef, PlaneSamples, Sample};

/// The decimation before estimation is 2^4, as four dyadic scales.
const SCALES: u32 = 4;
/// libvmaf moves samples to a zero-centred range before SpEED.
pub(crate) const SAMPLE_OFFSET: i32 = -128;

/// The anti-alias filter applied before decimating by 16 and the low-pass
/// filter whose output (the local mean) is removed after it.
pub(crate) fn filters(config: &SpeedConfig) -> (Vec<f32>, Vec<f32>) {
    (
        antialias_filter(SCALES, config.kernelscale),
        scale_filter(SCALES as usize, config.kernelscale),
    )
}

/// The `speed_prescale` resampler from the original to the scaled size,
/// `None` when libvmaf does not prescale.
pub(crate) fn prescaler(config: &SpeedConfig, geometry: &Geometry) -> Option<Resampler> {
    let g = geometry;
    config.prescales().then(|| {
        Resampler::new(
            config.method,
            (g.original.width, g.original.height),
            (g.scaled.width, g.scaled.height),
        )
    })
}

/// The score of a fitted reference and distorted plane; `ref_ok` and
/// `dis_ok` tell whether their covariance matrices were regular (the
/// estimator's return values).
pub(crate) fn combine(
    config: &SpeedConfig,
    reference: &BlockStats,
    distorted: &BlockStats,
    ref_ok: bool,
    dis_ok: bool,
) -> SpeedScore {
    // One-sided instability would inflate the score: libvmaf gives 0.
    let score = if ref_ok != dis_ok {
        0.0
    } else {
        speed_score(
            reference,
            distorted,
            config.sigma_nn,
            config.nn_floor,
            WeightMode(config.weight_var_mode),
        )
    };
    SpeedScore {
        score,
        singular: !(ref_ok && dis_ok),
    }
}

/// A SpEED score and whether a covariance matrix was singular.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpeedScore {
    pub score: f32,
    /// libvmaf's error return: either plane's covariance was singular.
    pub singular: bool,
}

pub struct SpeedCore {
    geometry: Geometry,
    config: SpeedConfig,
    prescaler: Option<Resampler>,
    antialias: Vec<f32>,
    lowpass: Vec<f32>,
    /// The prescaled plane (rows `scaled.width` apart).
    scaled: Vec<f32>,
    /// One row of filter scratch.
    row: Vec<f32>,
    /// The rows of the original plane the filters read.
    rows: Vec<usize>,
    /// The size of the frame buffers planes are loaded into.
    buffer: Size,
    /// The decimated plane, then with its local mean removed.
    decimated: Vec<f32>,
    local_mean: Vec<f32>,
    estimator: Estimator,
    reference: BlockStats,
    distorted: BlockStats,
}

impl SpeedCore {
    pub fn new(config: SpeedConfig, geometry: Geometry) -> Self {
        let g = geometry;
        let prescaler = prescaler(&config, &geometry);
        let scaled_len = if prescaler.is_some() {
            g.scaled.width * g.scaled.height
        } else {
            0
        };
        let operating = g.operating.width * g.operating.height;
        let (antialias, lowpass) = filters(&config);
        // Decimation reads only the filter support of every 16th row; the
        // resamplers read rows all over.
        let rows = if prescaler.is_some() {
            (0..g.original.height).collect()
        } else {
            let mut rows = convolve::rows_read_by_decimate16(antialias.len(), g.scaled.height);
            rows.retain(|&y| y < g.original.height);
            rows
        };
        // Resampling writes elsewhere, so only unscaled planes are read at
        // the scaled size (which, within 1e-3 of 1, may not be the original).
        let buffer = if prescaler.is_some() {
            g.original
        } else {
            g.alloc
        };
        Self {
            geometry,
            config,
            prescaler,
            antialias,
            lowpass,
            scaled: vec![0.0; scaled_len],
            row: vec![0.0; g.alloc.width],
            rows,
            buffer,
            decimated: vec![0.0; operating],
            local_mean: vec![0.0; operating],
            estimator: Estimator::new(geometry),
            reference: BlockStats::new(g.blocks()),
            distorted: BlockStats::new(g.blocks()),
        }
    }

    /// A zeroed buffer for one plane, rows [`Self::stride`] apart.
    fn frame_buffer(&self) -> Vec<f32> {
        vec![0.0; self.buffer.width * self.buffer.height]
    }

    /// Zeroed frame buffers for a reference and a distorted plane.
    pub fn plane_pair(&self) -> PlanePair {
        PlanePair {
            reference: self.frame_buffer(),
            distorted: self.frame_buffer(),
        }
    }

    /// Loads the leftmost `width` samples of `plane` of both pictures of
    /// `frame` into `pair`: the rows scoring reads, as libvmaf's
    /// `picture_copy` converts them (8-bit scale, offset -128).
    pub fn load(&self, frame: &FrameInput<'_>, plane: PlaneId, width: usize, pair: &mut PlanePair) {
        let (rows, stride) = (self.rows(), self.stride());
        load_plane(
            frame.reference,
            plane,
            width,
            rows,
            &mut pair.reference,
            stride,
        );
        load_plane(
            frame.distorted,
            plane,
            width,
            rows,
            &mut pair.distorted,
            stride,
        );
    }

    /// The rows of a plane that scoring reads: frame buffers need only
    /// these loaded.
    pub fn rows(&self) -> &[usize] {
        &self.rows
    }

    /// Row pitch of [`Self::frame_buffer`]s.
    pub fn stride(&self) -> usize {
        self.buffer.width
    }

    /// Compares the two planes of `planes`.
    pub fn score(&mut self, planes: &PlanePair) -> SpeedScore {
        let (reference, distorted) = (&planes.reference, &planes.distorted);
        let sigma_nn = self.config.sigma_nn;
        self.filter_and_downscale(reference);
        let stride = self.geometry.operating.width;
        let ref_ok =
            self.estimator
                .estimate(&self.decimated, stride, sigma_nn, &mut self.reference);
        self.filter_and_downscale(distorted);
        let dis_ok =
            self.estimator
                .estimate(&self.decimated, stride, sigma_nn, &mut self.distorted);
        combine(
            &self.config,
            &self.reference,
            &self.distorted,
            ref_ok,
            dis_ok,
        )
    }

    /// Prescales, low-passes and decimates by 16, then removes the local
    /// mean (the scale-4 low-pass) into `self.decimated`.
    fn filter_and_downscale(&mut self, plane: &[f32]) {
        let g = self.geometry;
        let src = match &self.prescaler {
            Some(prescaler) => {
                let original = FloatPlane {
                    data: plane,
                    width: g.original.width,
                    height: g.original.height,
                    stride: self.buffer.width,
                };
                prescaler.scale(original, &mut self.scaled, g.scaled.width);
                FloatPlane {
                    data: &self.scaled,
                    width: g.scaled.width,
                    height: g.scaled.height,
                    stride: g.scaled.width,
                }
            }
            // Without prescaling the scaled size is the original one (or, for
            // factors within 1e-3 of 1, what libvmaf reads of the buffer).
            None => FloatPlane {
                data: plane,
                width: g.scaled.width,
                height: g.scaled.height,
                stride: self.buffer.width,
            },
        };
        let op = g.operating;
        convolve::filter_decimate16(
            &self.antialias,
            src,
            &mut self.decimated,
            op.width,
            &mut self.row,
        );
        let decimated = FloatPlane {
            data: &self.decimated,
            width: op.width,
            height: op.height,
            stride: op.width,
        };
        convolve::filter(
            &self.lowpass,
            decimated,
            &mut self.local_mean,
            op.width,
            &mut self.row,
        );
        for (d, &m) in self.decimated.iter_mut().zip(&self.local_mean) {
            *d -= m;
        }
    }
}

/// A reference and a distorted plane in frame buffers.
pub struct PlanePair {
    pub reference: Vec<f32>,
    pub distorted: Vec<f32>,
}

/// Loads `rows` of the leftmost `width` samples of a plane into a frame
/// buffer as libvmaf's `picture_copy` does: scaled to 8 bits, offset -128.
fn load_plane(
    picture: &HostPicture,
    plane: PlaneId,
    width: usize,
    rows: &[usize],
    dst: &mut [f32],
    stride: usize,
) {
    fn load<T: Sample>(
        p: PlaneRef<'_, T>,
        rows: &[usize],
        divisor: f32,
        dst: &mut [f32],
        stride: usize,
        width: usize,
    ) {
        for &y in rows {
            convert_row(
                p.row(y),
                divisor,
                SAMPLE_OFFSET,
                &mut dst[y * stride..][..width],
            );
        }
    }
    let divisor = sample_divisor(picture.format().bit_depth).unwrap_or(1.0);
    match picture.plane(plane) {
        PlaneSamples::U8(p) => load(p, rows, divisor, dst, stride, width),
        PlaneSamples::U16(p) => load(p, rows, divisor, dst, stride, width),
    }
}
