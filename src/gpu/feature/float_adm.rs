//! `float_adm` on the GPU: per scale, one launch (kernels/float_adm.cu)
//! takes the wavelet level of both pictures into band planes, and one
//! scores the pooled region tile by tile (decouple, CSF weighting, masking
//! thresholds, p-th powers) into per-block double partials; one more launch
//! adds the partials up. The host pools each scale's sums and scores the
//! frame with the CPU extractor's own code ([`pool`], [`combine_scales`],
//! [`FloatAdmOutputs::emit`]).
//!
//! Per-pixel values are the CPU's bit for bit but for the decouple's
//! division (the CPU refines x86's `rcpss` estimate, the kernel the exact
//! reciprocal), and the CPU adds each row in float where the kernels add in
//! double (fixed order): values agree within float rounding of the CPU's
//! sums (tolerance in docs/gpu-testing.md).

use super::float_common::{luma_scale, sample_suffix, FrameSums};
use super::{single_twin, GpuTwin};
use super::{GpuExtractor, SPREAD};
use crate::error::Result;
use crate::feature::float_adm::{
    combine_scales, cos_1deg_sq, pool, FloatAdmOutputs, PNorm, Region, ScaleSums, BORDER_FACTOR,
};
use crate::feature::{FeatureSink, Options};
use crate::gpu::args::{KernelArg, KernelArgs};
use crate::gpu::device::{DeviceBuffer, Function, Gpu, Stream};
use crate::gpu::driver::{DevicePtr, LaunchDims};
use crate::gpu::kernels;
use crate::gpu::kernels::{kernel_source, KernelSource};
use crate::gpu::planes::{FramePlanes, PairPlanes};
use crate::gpu::slice::DeviceSlice;
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

/// kernels/float_adm.cu.
pub(crate) static KERNELS: KernelSource = kernel_source!("float_adm.cu");

/// The GPU version named by the CPU extractor's registry record.
pub(crate) static TWIN: GpuTwin = single_twin!(GpuFloatAdm, &[&KERNELS], super::EVERY_BACKEND);

const SCALES: usize = 4;
/// Threads per block and pooled-region tile of `float_adm_scale`.
const THREADS: u32 = 256;
const TILE_W: u32 = 32;
const TILE_H: u32 = 8;
/// Block of `float_adm_dwt_*`: one thread per band position.
const DWT_BLOCK: (u32, u32) = (32, 8);
/// Band planes per scale: a, h, v, d of each picture.
const BANDS: usize = 8;
/// Sums per scale: DLM numerator, AIM numerator and denominator, each h,
/// v, d (the kernel's partials order).
const SUMS: usize = 9;

/// `struct AdmScaleParams` of the kernel.
#[repr(C)]
#[derive(Clone, Copy)]
struct AdmScaleParams {
    weights: [f32; 3],
    cos_1deg_sq: f32,
    enhn_gain_limit: f64,
    p_norm: f32,
    cube: i32,
    bypass_cm: i32,
    left: i32,
    top: i32,
    right: i32,
    bottom: i32,
}

// SAFETY: a repr(C) copy of the kernel's struct, plain numbers.
unsafe impl KernelArg for AdmScaleParams {}

/// One scale: its wavelet's input size, its bands and their pooled region.
struct Scale {
    input: (usize, usize),
    band: (usize, usize),
    region: Region,
    /// The eight band planes, `pitch` floats per row.
    bands: DeviceBuffer,
    pitch: usize,
    /// `float_adm_scale`'s grid over the pooled region.
    grid: (u32, u32),
    params: AdmScaleParams,
}

impl Scale {
    fn plane_stride(&self) -> u64 {
        (self.pitch * self.band.1) as u64
    }

    /// Band plane `k`.
    fn plane(&self, k: usize) -> DeviceSlice<f32> {
        let stride = self.plane_stride() as usize;
        self.bands.slice(k * stride..(k + 1) * stride)
    }
}

pub(super) struct GpuFloatAdm {
    outputs: FloatAdmOutputs,
    dwt0: Function,
    dwt: Function,
    score: Function,
    scale: f32,
    scales: Vec<Scale>,
    sums: FrameSums,
}

impl GpuFloatAdm {
    pub(super) fn create(options: &Options, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        let outputs = FloatAdmOutputs::create(options, format)?;
        let module = kernels::load(gpu, &KERNELS)?;
        let p = *outputs.params();
        let mut input = format.plane_size(PlaneId::Y);
        let mut scales = Vec::with_capacity(SCALES);
        for s in 0..SCALES {
            let band = (input.0.div_ceil(2), input.1.div_ceil(2));
            let region = Region::pooled(band.0, band.1, BORDER_FACTOR);
            // Rows 256-byte aligned, as the shared planes'.
            let pitch = band.0.div_ceil(64) * 64;
            let (rw, rh) = (region.right - region.left, region.bottom - region.top);
            scales.push(Scale {
                input,
                band,
                region,
                bands: gpu.buffer(BANDS * pitch * band.1 * 4)?,
                pitch,
                grid: (
                    (rw.max(0) as u32).div_ceil(TILE_W),
                    (rh.max(0) as u32).div_ceil(TILE_H),
                ),
                params: AdmScaleParams {
                    weights: p.weights[s],
                    cos_1deg_sq: cos_1deg_sq(),
                    enhn_gain_limit: p.enhn_gain_limit,
                    p_norm: p.p_norm as f32,
                    cube: i32::from(p.p_norm == 3.0),
                    bypass_cm: i32::from(p.bypass_cm),
                    left: region.left as i32,
                    top: region.top as i32,
                    right: region.right as i32,
                    bottom: region.bottom as i32,
                },
            });
            input = band;
        }
        let blocks = scales
            .iter()
            .map(|s| s.grid.0 * s.grid.1)
            .max()
            .unwrap_or(1);
        Ok(Self {
            sums: FrameSums::new(gpu, &module, (SUMS * SCALES) as u32, blocks.max(1))?,
            dwt0: module.function(&format!(
                "float_adm_dwt_{}",
                sample_suffix(format.bytes_per_sample())
            ))?,
            dwt: module.function("float_adm_dwt_f32")?,
            score: module.function("float_adm_scale")?,
            scale: luma_scale(format.bit_depth),
            outputs,
            scales,
        })
    }

    /// Whether scale `s` is scored (`adm_skip_scale0` leaves scale 0 out).
    fn scored(&self, s: usize) -> bool {
        !(s == 0 && self.outputs.params().skip_scale0)
    }

    /// Queues the wavelet level of scale `s` from the given planes.
    fn launch_dwt(
        &self,
        s: usize,
        (reference, reference_pitch): (DevicePtr, u32),
        (distorted, distorted_pitch): (DevicePtr, u32),
        stream: &Stream,
    ) -> Result<()> {
        let sc = &self.scales[s];
        let mut args = KernelArgs::new();
        args.arg(reference)
            .arg(reference_pitch)
            .arg(distorted)
            .arg(distorted_pitch)
            .arg(sc.input.0 as i32)
            .arg(sc.input.1 as i32)
            .arg(self.scale)
            .arg(sc.bands.slice::<f32>(..))
            .arg(sc.pitch as u32)
            .arg(sc.plane_stride());
        let dims = LaunchDims {
            grid: (
                (sc.band.0 as u32).div_ceil(DWT_BLOCK.0),
                (sc.band.1 as u32).div_ceil(DWT_BLOCK.1),
                1,
            ),
            block: (DWT_BLOCK.0, DWT_BLOCK.1, 1),
            shared_bytes: 0,
        };
        let function = if s == 0 { &self.dwt0 } else { &self.dwt };
        // SAFETY: the arguments match float_adm_dwt_*; the input planes
        // (context-owned shared planes or our previous scale's bands) and
        // our band buffer stay alive until the stream ran.
        unsafe { stream.launch(function, &dims, &mut args) }
    }

    /// Queues the scoring of scale `s`'s bands into its partials.
    fn launch_score(&self, s: usize, stream: &Stream) -> Result<()> {
        let sc = &self.scales[s];
        let first = (SUMS * s) as u32;
        let partials = self.sums.partials();
        let mut args = KernelArgs::new();
        args.arg(sc.bands.slice::<f32>(..))
            .arg(sc.pitch as u32)
            .arg(sc.plane_stride())
            .arg(sc.band.0 as i32)
            .arg(sc.band.1 as i32)
            .arg(sc.params)
            .arg(partials.quantities(first..first + SUMS as u32))
            .arg(partials.stride());
        let dims = LaunchDims {
            grid: (sc.grid.0, sc.grid.1, 1),
            block: (THREADS, 1, 1),
            shared_bytes: 0,
        };
        // SAFETY: the arguments match float_adm_scale; the bands and the
        // partials are ours and outlive the stream's work.
        unsafe { stream.launch(&self.score, &dims, &mut args) }
    }

    /// The frame's per-scale values from the reduced sums.
    fn scale_sums(&self, totals: &[f64]) -> [ScaleSums; SCALES] {
        let p = self.outputs.params();
        let norm = PNorm(p.p_norm);
        std::array::from_fn(|s| {
            if !self.scored(s) {
                return ScaleSums::SKIPPED;
            }
            // libvmaf's accumulators are floats.
            let t = |q: usize| -> [f32; 3] {
                std::array::from_fn(|b| totals[SUMS * s + 3 * q + b] as f32)
            };
            let region = self.scales[s].region;
            ScaleSums {
                num: pool(t(0), norm, region, p.noise_weight),
                aim_num: pool(t(1), norm, region, 0.0),
                den: pool(t(2), norm, region, p.noise_weight),
            }
        })
    }
}

impl GpuExtractor for GpuFloatAdm {
    fn name(&self) -> &'static str {
        "float_adm"
    }

    fn instances(&self, _: &PictureFormat) -> usize {
        // At every size, as float_vif (the float model at 2160p: +6 %).
        SPREAD
    }

    fn planes(&self) -> PairPlanes {
        PairPlanes::both(PlaneMask::LUMA)
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        let (r, d) = (frame.reference(PlaneId::Y)?, frame.distorted(PlaneId::Y)?);
        let mut source = ((r.ptr, r.pitch as u32), (d.ptr, d.pitch as u32));
        let totals = self.sums.begin(stream)?;
        for s in 0..SCALES {
            self.launch_dwt(s, source.0, source.1, stream)?;
            if self.scored(s) {
                self.launch_score(s, stream)?;
            }
            let sc = &self.scales[s];
            let pitch = (sc.pitch * 4) as u32;
            source = (
                (sc.plane(0).ptr(), pitch),
                (sc.plane(BANDS / 2).ptr(), pitch),
            );
        }
        self.sums.end(index, totals, stream)
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        let Some((index, totals)) = self.sums.complete("float_adm")? else {
            return Ok(None);
        };
        let sums = self.scale_sums(&totals);
        let (w, h) = self.scales[0].input;
        let p = *self.outputs.params();
        let scores = combine_scales(w, h, &p, &sums);
        self.outputs.emit(index, &scores, sink);
        Ok(Some(index))
    }
}
