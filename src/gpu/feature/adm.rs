//! Integer `adm` on the GPU: the four wavelet scales, decoupling, contrast
//! masking and the cube sums in kernels (kernels/adm.cu), per-row sums
//! rounded and shifted per row as the CPU does; the host finishes the
//! integer totals with the CPU extractor's own float steps
//! ([`Scoring::scores`], [`output::emit`]), so per-frame values are
//! bit-identical to the CPU `adm`, libvmaf's AVX-512 edge-column quirk
//! included (ADR 0005).
//!
//! Per frame: one DWT launch and one scoring launch per scale (both
//! pictures in one grid), then one launch for the totals.

use super::readback::Readback;
use super::GpuExtractor;
use crate::error::Result;
use crate::feature::adm::cm::ScaleKernel;
use crate::feature::adm::decouple::cos_1deg_sq;
use crate::feature::adm::den::{fine_row_shift, CoarseShifts};
use crate::feature::adm::dwt::{coarse_simd_reads_past_row, simd_reads_past_row, COARSE_ROUNDING};
use crate::feature::adm::output::{self, Names, Pooling};
use crate::feature::adm::pipeline::{band_sizes, ScaleSums, Scoring, SCALES};
use crate::feature::adm::region::Region;
use crate::feature::adm::Config;
use crate::feature::{FeatureSink, Options};
use crate::gpu::device::{DeviceBuffer, Function, Gpu, Stream};
use crate::gpu::driver::{DevicePtr, LaunchDims};
use crate::gpu::kernels;
use crate::gpu::planes::{FramePlanes, PairPlanes};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};
use std::any::Any;
use std::ffi::c_void;

/// The 2-D kernels' block: a tile of 32 x 8 coefficients (kernels/adm.cu).
const TILE: (u32, u32) = (32, 8);
/// Per-row sums of a scale: ADM numerator, AIM numerator and reference
/// energy, each h, v, d.
const SUMS: usize = 9;
/// Threads per block of adm_finalize (one per row).
const FINALIZE_THREADS: u32 = 256;

/// kernels/adm.cu's `FinalizeScale`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct FinalizeScale {
    offset: u64,
    rows: u32,
    cols: u32,
    row_shift: u32,
    den_shift: u32,
}

/// kernels/adm.cu's `FinalizeParams`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct FinalizeParams {
    scale: [FinalizeScale; SCALES],
}

/// Kernel arguments, each boxed so its address stays valid until launch.
#[derive(Default)]
struct Args(Vec<Box<dyn Any>>);

impl Args {
    fn arg<T: Copy + 'static>(mut self, value: T) -> Self {
        self.0.push(Box::new(value));
        self
    }

    /// Launches `function` with these arguments.
    ///
    /// # Safety
    /// The arguments must match the kernel's parameters, and the memory the
    /// kernel touches must outlive the stream's work.
    unsafe fn launch(
        mut self,
        stream: &Stream,
        function: &Function,
        dims: &LaunchDims,
    ) -> Result<()> {
        let mut params: Vec<*mut c_void> = self
            .0
            .iter_mut()
            .map(|b| &mut **b as *mut dyn Any as *mut c_void)
            .collect();
        stream.launch(function, dims, &mut params)
    }
}

/// A grid of [`TILE`] blocks over `width` x `height`, `depth` deep.
fn tiles(width: usize, height: usize, depth: u32) -> LaunchDims {
    LaunchDims {
        grid: (
            (width as u32).div_ceil(TILE.0),
            (height as u32).div_ceil(TILE.1),
            depth,
        ),
        block: (TILE.0, TILE.1, 1),
        shared_bytes: 0,
    }
}

/// One scale's geometry and device buffers.
struct Scale {
    /// DWT input and output (band) sizes.
    input: (usize, usize),
    band: (usize, usize),
    region: Region,
    /// Whether the last band column reproduces libvmaf's AVX-512 overrun.
    overrun: bool,
    /// Both pictures' approximations (i16 at scale 0, i32 after), then
    /// their h, v, d bands.
    approx: DeviceBuffer,
    bands: Option<DeviceBuffer>,
    /// First of this scale's per-tile row sums in the partials buffer.
    partials_offset: usize,
}

impl Scale {
    fn tile_columns(&self) -> usize {
        self.region.width().div_ceil(TILE.0 as usize)
    }
}

struct Kernels {
    dwt0: Function,
    dwt_coarse: [Function; SCALES - 1],
    score_fine: Function,
    score_coarse: Function,
    finalize: Function,
}

pub(super) struct GpuAdm {
    bit_depth: u32,
    scoring: Scoring,
    pooling: Pooling,
    names: Names,
    scales: Vec<Scale>,
    partials: DeviceBuffer,
    finalize: FinalizeParams,
    cos_sq: f64,
    kernels: Kernels,
    results: Readback,
}

impl GpuAdm {
    pub(super) fn create(options: &Options, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        let config = Config::new(options, format)?;
        let scoring = Scoring::new(format, &config.csf, config.params);
        let skip_scale0 = config.params.skip_scale0;
        let bytes = format.bytes_per_sample();
        let sizes = band_sizes(format.width as usize, format.height as usize);
        let mut scales = Vec::with_capacity(SCALES);
        let mut partials = 0;
        for (s, &band) in sizes.iter().enumerate() {
            let input = if s == 0 {
                (format.width as usize, format.height as usize)
            } else {
                sizes[s - 1]
            };
            let n = band.0 * band.1;
            let coef = if s == 0 { 2 } else { 4 };
            let scored = s > 0 || !skip_scale0;
            let region = scoring.regions[s];
            let scale = Scale {
                input,
                band,
                region,
                overrun: if s == 0 {
                    scored && simd_reads_past_row(band.0, bytes)
                } else {
                    coarse_simd_reads_past_row(band.0)
                },
                approx: gpu.buffer(2 * n * coef)?,
                bands: if scored {
                    Some(gpu.buffer(2 * 3 * n * coef)?)
                } else {
                    None
                },
                partials_offset: partials,
            };
            if scored {
                partials += region.height() * scale.tile_columns() * SUMS;
            }
            scales.push(scale);
        }
        let mut finalize = FinalizeParams::default();
        for (s, (scale, f)) in scales.iter().zip(&mut finalize.scale).enumerate() {
            if scale.bands.is_none() {
                continue;
            }
            let region = &scale.region;
            *f = FinalizeScale {
                offset: scale.partials_offset as u64,
                rows: region.height() as u32,
                cols: scale.tile_columns() as u32,
                row_shift: if s == 0 {
                    scoring.fine.row_shift()
                } else {
                    scoring.coarse[s - 1].row_shift()
                },
                den_shift: if s == 0 {
                    fine_row_shift(region)
                } else {
                    CoarseShifts::new(s, region).row
                },
            };
        }
        let module = kernels::load(gpu, "adm.cu")?;
        let kernels = Kernels {
            dwt0: module.function(if bytes == 1 {
                "adm_dwt0_u8"
            } else {
                "adm_dwt0_u16"
            })?,
            dwt_coarse: [
                module.function("adm_dwt_coarse_s1")?,
                module.function("adm_dwt_coarse_s2")?,
                module.function("adm_dwt_coarse_s3")?,
            ],
            score_fine: module.function("adm_score_fine")?,
            score_coarse: module.function("adm_score_coarse")?,
            finalize: module.function("adm_finalize")?,
        };
        Ok(Self {
            bit_depth: format.bit_depth as u32,
            scoring,
            pooling: config.pooling,
            names: config.names,
            scales,
            partials: gpu.buffer(partials.max(1) * 8)?,
            finalize,
            cos_sq: cos_1deg_sq(),
            kernels,
            results: Readback::new(gpu, SCALES * SUMS)?,
        })
    }

    /// Scale 0 DWT of both luma planes.
    fn dwt0(&self, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        let (r, d) = (frame.reference(PlaneId::Y)?, frame.distorted(PlaneId::Y)?);
        let s = &self.scales[0];
        let args = Args::default()
            .arg(r.ptr)
            .arg(r.pitch as u32)
            .arg(d.ptr)
            .arg(d.pitch as u32)
            .arg(s.input.0 as i32)
            .arg(s.input.1 as i32)
            .arg(self.bit_depth as i32)
            .arg(s.band.0 as i32)
            .arg(s.band.1 as i32)
            .arg(s.approx.ptr())
            .arg(s.bands.as_ref().map_or(0, |b| b.ptr()))
            .arg(s.bands.is_some() as i32)
            .arg(s.overrun as i32);
        // SAFETY: the arguments match adm_dwt0_*; the planes are
        // context-owned and the buffers ours, alive past the stream's work.
        unsafe { args.launch(stream, &self.kernels.dwt0, &tiles(s.band.0, s.band.1, 2)) }
    }

    /// DWT of scale `s` (1-3) from both approximations of scale `s - 1`.
    fn dwt_coarse(&self, s: usize, stream: &Stream) -> Result<()> {
        let (scale, input) = (&self.scales[s], &self.scales[s - 1]);
        let ((vadd, vshift), (hadd, hshift)) = COARSE_ROUNDING[s - 1];
        let bands = scale.bands.as_ref().map_or(0, |b| b.ptr());
        // libvmaf's scratch past this scale's rows holds the previous
        // scale's last vertical-pass row (none before scale 1).
        let (prev_input, prev_iw, prev_ih, prev_oh, (prev_add, prev_shift)): (
            DevicePtr,
            usize,
            usize,
            usize,
            (i64, u32),
        ) = if s == 1 {
            (0, 1, 1, 1, (0, 0))
        } else {
            let prev = &self.scales[s - 2];
            (
                prev.approx.ptr(),
                input.input.0,
                input.input.1,
                input.band.1,
                COARSE_ROUNDING[s - 2].0,
            )
        };
        let args = Args::default()
            .arg(input.approx.ptr())
            .arg(scale.input.0 as i32)
            .arg(scale.input.1 as i32)
            .arg(scale.band.0 as i32)
            .arg(scale.band.1 as i32)
            .arg(vadd)
            .arg(vshift as i32)
            .arg(hadd)
            .arg(hshift as i32)
            .arg(scale.approx.ptr())
            .arg(bands)
            .arg(scale.overrun as i32)
            .arg(prev_input)
            .arg(prev_iw as i32)
            .arg(prev_ih as i32)
            .arg(prev_oh as i32)
            .arg(prev_add)
            .arg(prev_shift as i32);
        let dims = tiles(scale.band.0, scale.band.1, 2);
        // SAFETY: the arguments match adm_dwt_coarse_s*; buffers are ours.
        unsafe { args.launch(stream, &self.kernels.dwt_coarse[s - 1], &dims) }
    }

    /// Decoupling, masking and per-row sums of scale `s`.
    fn score(&self, s: usize, stream: &Stream) -> Result<()> {
        let scale = &self.scales[s];
        let Some(bands) = &scale.bands else {
            return Ok(());
        };
        let region = &scale.region;
        let (rfactor, cube_shift, den_shifts, function) = if s == 0 {
            let k = &self.scoring.fine;
            (
                k.rfactor.map(i64::from),
                k.cube_shift,
                (0, 0),
                &self.kernels.score_fine,
            )
        } else {
            let k = &self.scoring.coarse[s - 1];
            let den = CoarseShifts::new(s, region);
            (
                k.rfactor,
                [k.cube_shift; 3],
                (den.square, den.cube),
                &self.kernels.score_coarse,
            )
        };
        let partials = self.partials.ptr() + 8 * scale.partials_offset as u64;
        let args = Args::default()
            .arg(bands.ptr())
            .arg(scale.band.0 as i32)
            .arg(scale.band.1 as i32)
            .arg(region.top as i32)
            .arg(region.bottom as i32)
            .arg(region.left as i32)
            .arg(region.right as i32)
            .arg(rfactor[0])
            .arg(rfactor[1])
            .arg(rfactor[2])
            .arg(cube_shift[0] as i32)
            .arg(cube_shift[1] as i32)
            .arg(cube_shift[2] as i32)
            .arg(den_shifts.0 as i32)
            .arg(den_shifts.1 as i32)
            .arg(self.scoring.params.gain_limit)
            .arg(self.cos_sq)
            .arg(partials);
        let dims = tiles(region.width(), region.height(), 1);
        // SAFETY: the arguments match adm_score_*; buffers are ours.
        unsafe { args.launch(stream, function, &dims) }
    }

    /// The totals of every scale into `totals`.
    fn finalize(&self, totals: DevicePtr, stream: &Stream) -> Result<()> {
        let rows = self
            .finalize
            .scale
            .iter()
            .map(|s| s.rows)
            .max()
            .unwrap_or(0);
        let dims = LaunchDims {
            grid: (rows.div_ceil(FINALIZE_THREADS).max(1), SCALES as u32, 1),
            block: (FINALIZE_THREADS, 1, 1),
            shared_bytes: 0,
        };
        let args = Args::default()
            .arg(self.partials.ptr())
            .arg(self.finalize)
            .arg(totals);
        // SAFETY: the arguments match adm_finalize (FinalizeParams is
        // repr(C) like its CUDA struct); buffers are ours.
        unsafe { args.launch(stream, &self.kernels.finalize, &dims) }
    }
}

impl GpuExtractor for GpuAdm {
    fn name(&self) -> &'static str {
        "adm"
    }

    fn planes(&self) -> PairPlanes {
        PairPlanes::both(PlaneMask::LUMA)
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        let totals = self.results.begin(stream)?.ptr();
        self.dwt0(frame, stream)?;
        self.score(0, stream)?;
        for s in 1..SCALES {
            self.dwt_coarse(s, stream)?;
            self.score(s, stream)?;
        }
        self.finalize(totals, stream)?;
        self.results.end(index, stream)
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        let Some((index, values)) = self.results.complete()? else {
            return Ok(None);
        };
        let values = values.expect("adm launches every frame");
        let sums: [ScaleSums; SCALES] = std::array::from_fn(|s| {
            let v = &values[s * SUMS..(s + 1) * SUMS];
            ScaleSums {
                num: std::array::from_fn(|k| v[k] as i64),
                aim: std::array::from_fn(|k| v[3 + k] as i64),
                den: std::array::from_fn(|k| v[6 + k]),
            }
        });
        let scores = self.scoring.scores(&sums);
        output::emit(index, &scores, &self.pooling, &self.names, sink);
        Ok(Some(index))
    }
}
