//! `float_ssim` on the GPU: the optional box pre-filter
//! (`float_ssim_decimate_*`) and one launch of `float_ssim_stats_*` that
//! sums the SSIM terms into per-block double partials
//! (kernels/float_ssim.cu), then the partials' reduction. The host turns
//! the sums into the CPU extractor's outputs with its own code.
//!
//! [`SsimKernels`] is shared with `float_ms_ssim` and `integer_ms_ssim`,
//! [`Pair`], [`FloatPair`] and [`Variants`] with `integer_ms_ssim`'s
//! halving.
//!
//! Per-position values are the CPU's bit for bit; both add them in double,
//! in another order, so the means agree within double rounding (tolerance
//! in docs/gpu-testing.md).

use super::float_common::{sample_suffix, FrameSums, PartialSums};
use super::GpuExtractor;
use super::{single_twin, GpuTwin};
use crate::error::Result;
use crate::feature::common::iqa_filter::decimated_len;
use crate::feature::common::iqa_ssim::{constants, SsimMeans, WINDOW};
use crate::feature::common::picture_copy::power_of_two_divisor;
use crate::feature::float_ssim::{box_filter, FloatSsimOutputs};
use crate::feature::{FeatureSink, Options};
use crate::gpu::args::{KernelArg, KernelArgs};
use crate::gpu::device::{DeviceBuffer, Function, Gpu, Module, Stream};
use crate::gpu::driver::{DevicePtr, LaunchDims};
use crate::gpu::kernels;
use crate::gpu::kernels::{kernel_source, KernelSource};
use crate::gpu::planes::{DevicePlane, FramePlanes, PairPlanes};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};
use std::sync::Arc;

/// kernels/float_ssim.cu.
pub(crate) static KERNELS: KernelSource = kernel_source!("float_ssim.cu");

/// The GPU version named by the CPU extractor's registry record.
pub(crate) static TWIN: GpuTwin = single_twin!(GpuFloatSsim, &[&KERNELS], super::EVERY_BACKEND);

/// Threads per block, window positions per stats block and outputs per
/// decimation block row (kernels/float_ssim.cu).
const THREADS: u32 = 256;
const TILE_W: u32 = 32;
const TILE_H: u32 = 16;
const DEC_W: u32 = 32;

/// Taps of `struct DecimateTaps`: kernels with more must be uniform.
pub(super) const MAX_TAPS: usize = 81;

/// The sums each stats launch writes: l*c*s, l, c, s.
pub(super) const SUMS: u32 = 4;

/// `struct SsimConstants` of the kernels.
#[repr(C)]
#[derive(Clone, Copy)]
struct SsimConstants {
    c1: f32,
    c2: f32,
    c3: f32,
}

// SAFETY: a repr(C) copy of the kernel's struct, plain floats.
unsafe impl KernelArg for SsimConstants {}

/// `struct DecimateTaps` of the kernels, with its size and whether only
/// the first tap is passed (a box filter of any size).
#[derive(Clone, Copy)]
pub(super) struct DecimateFilter {
    taps: [f32; MAX_TAPS],
    size: usize,
    uniform: bool,
}

impl DecimateFilter {
    /// `taps`: `size x size`, row-major; all equal, or at most MAX_TAPS.
    pub(super) fn new(taps: &[f32], size: usize) -> Self {
        let uniform = taps.iter().all(|&t| t.to_bits() == taps[0].to_bits());
        let mut k = [0.0; MAX_TAPS];
        let n = if uniform { 1 } else { taps.len() };
        assert!(
            n <= MAX_TAPS,
            "decimation kernels above 9x9 must be uniform"
        );
        k[..n].copy_from_slice(&taps[..n]);
        Self {
            taps: k,
            size,
            uniform,
        }
    }
}

/// A picture pair of the kernels: the shared planes' samples or a float
/// pair of ours (pitches in bytes).
#[derive(Clone, Copy)]
pub(super) struct Pair {
    reference: DevicePtr,
    distorted: DevicePtr,
    pitch_ref: u32,
    pitch_dis: u32,
    pub(super) width: usize,
    pub(super) height: usize,
    /// Raw samples (converted in the kernels) rather than floats.
    raw: bool,
}

impl Pair {
    /// Appends the arguments every kernel takes first: both planes and
    /// their pitches, then the width and height.
    pub(super) fn args(self, args: &mut KernelArgs) -> &mut KernelArgs {
        args.arg(self.reference)
            .arg(self.pitch_ref)
            .arg(self.distorted)
            .arg(self.pitch_dis)
            .arg(self.width as i32)
            .arg(self.height as i32)
    }

    pub(super) fn shared(r: &DevicePlane, d: &DevicePlane) -> Self {
        Self {
            reference: r.ptr,
            distorted: d.ptr,
            pitch_ref: r.pitch as u32,
            pitch_dis: d.pitch as u32,
            width: r.width,
            height: r.height,
            raw: true,
        }
    }
}

/// A float picture pair on the device (a decimated level).
pub(super) struct FloatPair {
    reference: DeviceBuffer,
    distorted: DeviceBuffer,
    /// Row pitch in samples.
    pitch: usize,
    width: usize,
    height: usize,
}

impl FloatPair {
    pub(super) fn new(gpu: &Gpu, width: usize, height: usize) -> Result<Self> {
        // Rows 256-byte aligned, as the shared planes'.
        let pitch = width.div_ceil(64) * 64;
        Ok(Self {
            reference: gpu.buffer(pitch * height * 4)?,
            distorted: gpu.buffer(pitch * height * 4)?,
            pitch,
            width,
            height,
        })
    }

    pub(super) fn pair(&self) -> Pair {
        Pair {
            reference: self.reference.ptr(),
            distorted: self.distorted.ptr(),
            pitch_ref: (self.pitch * 4) as u32,
            pitch_dis: (self.pitch * 4) as u32,
            width: self.width,
            height: self.height,
            raw: false,
        }
    }

    pub(super) fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    /// Both planes' samples, packed rows (after `stream`'s work).
    #[cfg(test)]
    pub(super) fn download(&self, gpu: &Gpu, stream: &Stream) -> [Vec<f32>; 2] {
        [&self.reference, &self.distorted].map(|plane| {
            let mut host = gpu.pinned(self.pitch * self.height * 4).unwrap();
            // SAFETY: read after the synchronize below.
            unsafe { stream.copy_to_pinned(&mut host, plane).unwrap() };
            stream.synchronize().unwrap();
            let samples: Vec<f32> = host
                .as_slice()
                .chunks_exact(4)
                .map(|b| f32::from_ne_bytes(b.try_into().unwrap()))
                .collect();
            samples
                .chunks_exact(self.pitch)
                .flat_map(|row| &row[..self.width])
                .copied()
                .collect()
        })
    }

    /// Appends the arguments the decimation kernels take last, as the
    /// pair they write: both planes, the pitch in samples, the width and
    /// height.
    pub(super) fn out_args<'a>(&self, args: &'a mut KernelArgs) -> &'a mut KernelArgs {
        args.arg(self.reference.ptr())
            .arg(self.distorted.ptr())
            .arg(self.pitch as u32)
            .arg(self.width as i32)
            .arg(self.height as i32)
    }

    /// The grid of the decimation kernels writing this pair: a block per
    /// DEC_W x (THREADS / DEC_W) outputs.
    pub(super) fn decimate_dims(&self) -> LaunchDims {
        let rows = THREADS / DEC_W;
        LaunchDims {
            grid: (
                (self.width as u32).div_ceil(DEC_W),
                (self.height as u32).div_ceil(rows),
                1,
            ),
            block: (THREADS, 1, 1),
            shared_bytes: 0,
        }
    }
}

/// One kernel of kernels/float_ssim.cu in its variant for the format's
/// raw samples (`_u8`/`_u16`) and its `_f32` one, for decimated levels.
pub(super) struct Variants {
    raw: Function,
    float: Function,
}

impl Variants {
    /// `NAME_u8` or `NAME_u16` (the format's samples) and `NAME_f32`.
    pub(super) fn new(module: &Arc<Module>, name: &str, format: &PictureFormat) -> Result<Self> {
        let suffix = sample_suffix(format.bytes_per_sample());
        Ok(Self {
            raw: module.function(&format!("{name}_{suffix}"))?,
            float: module.function(&format!("{name}_f32"))?,
        })
    }

    /// The variant reading `pair`.
    pub(super) fn of(&self, pair: Pair) -> &Function {
        if pair.raw {
            &self.raw
        } else {
            &self.float
        }
    }
}

/// The stats and decimation kernels for raw samples of one width and for
/// floats, and what they need from the format.
pub(super) struct SsimKernels {
    stats: Variants,
    decimate: Variants,
    /// `1 / divisor` of the float conversion.
    sample_scale: f32,
    constants: SsimConstants,
}

impl SsimKernels {
    pub(super) fn new(module: &Arc<Module>, format: &PictureFormat) -> Result<Self> {
        let (c1, c2, c3) = constants();
        Ok(Self {
            stats: Variants::new(module, "float_ssim_stats", format)?,
            decimate: Variants::new(module, "float_ssim_decimate", format)?,
            sample_scale: 1.0 / power_of_two_divisor(format.bit_depth),
            constants: SsimConstants { c1, c2, c3 },
        })
    }

    /// Stats blocks a `width x height` pair needs (its partials' slots).
    pub(super) fn stats_blocks(width: usize, height: usize) -> u32 {
        let (w, h) = (width + 1 - WINDOW, height + 1 - WINDOW);
        (w.div_ceil(TILE_W as usize) * h.div_ceil(TILE_H as usize)) as u32
    }

    /// Window positions of a `width x height` pair (the means' divisor).
    pub(super) fn positions(width: usize, height: usize) -> usize {
        (width + 1 - WINDOW) * (height + 1 - WINDOW)
    }

    /// Queues the SSIM sums of `pair` into the SUMS quantities of
    /// `sums` from `first` on.
    pub(super) fn stats(
        &self,
        pair: Pair,
        sums: &PartialSums,
        first: u32,
        stream: &Stream,
    ) -> Result<()> {
        let mut args = KernelArgs::new();
        pair.args(&mut args)
            .arg(self.sample_scale)
            .arg(self.constants)
            .arg(sums.quantities(first..first + SUMS))
            .arg(sums.stride());
        let (pw, ph) = (pair.width + 1 - WINDOW, pair.height + 1 - WINDOW);
        let dims = LaunchDims {
            grid: (
                pw.div_ceil(TILE_W as usize) as u32,
                ph.div_ceil(TILE_H as usize) as u32,
                1,
            ),
            block: (THREADS, 1, 1),
            shared_bytes: 0,
        };
        // SAFETY: the arguments match float_ssim_stats_*; the planes and
        // the partials stay alive until the stream ran (the shared planes
        // are context-owned, the rest is ours); the stride covers the grid.
        unsafe { stream.launch(self.stats.of(pair), &dims, &mut args) }
    }

    /// Queues the decimation of `pair` by `factor` with `filter` into
    /// `out`, sized `decimated_len` of the pair's.
    pub(super) fn decimate(
        &self,
        pair: Pair,
        factor: usize,
        filter: &DecimateFilter,
        out: &FloatPair,
        stream: &Stream,
    ) -> Result<()> {
        debug_assert_eq!(
            (out.width, out.height),
            (
                decimated_len(pair.width, factor),
                decimated_len(pair.height, factor)
            )
        );
        let mut args = KernelArgs::new();
        pair.args(&mut args)
            .arg(self.sample_scale)
            .arg(factor as i32)
            .arg(filter.size as i32)
            .arg(i32::from(filter.uniform))
            .arg(filter.taps);
        out.out_args(&mut args);
        // SAFETY: the arguments match float_ssim_decimate_*; `out` holds
        // its width x height samples at its pitch; every buffer stays alive
        // until the stream ran.
        unsafe { stream.launch(self.decimate.of(pair), &out.decimate_dims(), &mut args) }
    }
}

/// The means of the SUMS totals from `first` on over `positions`.
pub(super) fn means_of(totals: &[f64], first: usize, positions: usize) -> SsimMeans {
    SsimMeans::from_sums(std::array::from_fn(|q| totals[first + q]), positions)
}

pub(super) struct GpuFloatSsim {
    outputs: FloatSsimOutputs,
    kernels: SsimKernels,
    /// The box pre-filter and its output, when the factor is above 1.
    pre_filter: Option<(DecimateFilter, FloatPair)>,
    /// Window positions scored.
    positions: usize,
    sums: FrameSums,
}

impl GpuFloatSsim {
    pub(super) fn create(options: &Options, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        let outputs = FloatSsimOutputs::create(options, format)?;
        let module = kernels::load(gpu, &KERNELS)?;
        let (w, h) = format.plane_size(PlaneId::Y);
        let factor = outputs.factor();
        let pre_filter = if factor > 1 {
            let small = FloatPair::new(gpu, decimated_len(w, factor), decimated_len(h, factor))?;
            Some((DecimateFilter::new(&box_filter(factor), factor), small))
        } else {
            None
        };
        let (sw, sh) = pre_filter
            .as_ref()
            .map_or((w, h), |(_, p)| (p.width, p.height));
        Ok(Self {
            outputs,
            kernels: SsimKernels::new(&module, format)?,
            pre_filter,
            positions: SsimKernels::positions(sw, sh),
            sums: FrameSums::new(gpu, &module, SUMS, SsimKernels::stats_blocks(sw, sh))?,
        })
    }
}

impl GpuExtractor for GpuFloatSsim {
    fn name(&self) -> &'static str {
        "float_ssim"
    }

    fn planes(&self) -> PairPlanes {
        PairPlanes::both(PlaneMask::LUMA)
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        let source = Pair::shared(&frame.reference(PlaneId::Y)?, &frame.distorted(PlaneId::Y)?);
        let totals = self.sums.begin(stream)?;
        let scored = match &self.pre_filter {
            Some((filter, small)) => {
                let factor = self.outputs.factor();
                self.kernels
                    .decimate(source, factor, filter, small, stream)?;
                small.pair()
            }
            None => source,
        };
        self.kernels
            .stats(scored, self.sums.partials(), 0, stream)?;
        self.sums.end(index, totals, stream)
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        let Some((index, totals)) = self.sums.complete("float_ssim")? else {
            return Ok(None);
        };
        let means = means_of(&totals, 0, self.positions);
        self.outputs.emit(index, &means, sink);
        Ok(Some(index))
    }
}
