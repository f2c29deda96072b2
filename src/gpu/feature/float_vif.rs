//! `float_vif` on the GPU: one launch per scale (kernels/float_vif.cu)
//! filters a tile, sums the statistic's numerator and denominator into
//! per-block double partials and decimates the tile into the next scale;
//! one more launch adds the partials up. The host turns the sums into
//! scores with the CPU extractor's own code.
//!
//! Per-pixel values are the CPU's bit for bit; the CPU adds each row in
//! float, the kernels add in double (fixed order), so values agree within
//! float rounding of the CPU's sums (tolerance in docs/gpu-testing.md).
//! Kernel scales with other filter widths and `vif_prescale` run on the
//! CPU (see [`GpuFloatVif::create`]).

use super::float_common::{luma_scale, sample_suffix, FrameSums};
use super::GpuTwin;
use super::{GpuExtractor, SPREAD};
use crate::error::Result;
use crate::feature::float_vif::{FloatVifOutputs, VifSums};
use crate::feature::{FeatureSink, Options};
use crate::gpu::args::{KernelArg, KernelArgs};
use crate::gpu::device::{DeviceBuffer, Function, Gpu, Stream};
use crate::gpu::driver::{DevicePtr, LaunchDims};
use crate::gpu::kernels;
use crate::gpu::kernels::{kernel_source, KernelSource};
use crate::gpu::planes::{FramePlanes, PairPlanes};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

/// kernels/float_vif.cu.
pub(crate) static KERNELS: KernelSource = kernel_source!("float_vif.cu");

/// The GPU version named by the CPU extractor's registry record (kernel
/// scale 1 without prescaling only: [`GpuFloatVif::create`]).
pub(crate) static TWIN: GpuTwin = GpuTwin {
    create: |requests, format, gpu| {
        let [(_, options)] = requests else {
            return None;
        };
        GpuFloatVif::create(options, format, gpu)
            .map(|x| x.map(|x| Box::new(x) as Box<dyn GpuExtractor>))
    },
    modules: &[&KERNELS],
    backends: super::EVERY_BACKEND,
};

/// Threads per block and output tile (kernels/float_vif.cu).
const THREADS: u32 = 256;
const TILE_W: u32 = 64;
const TILE_H: u32 = 16;

const SCALES: usize = 4;

/// The filter widths the kernels are built for (kernel scale 1).
const TAPS: [usize; SCALES] = [17, 9, 5, 3];

/// `struct VifFilters` of the kernels: this scale's filter and the next's.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct VifFilters {
    taps: [f32; 17],
    next: [f32; 9],
}

// SAFETY: a repr(C) copy of the kernel's struct, plain floats.
unsafe impl KernelArg for VifFilters {}

/// A decimated scale of both pictures, float samples.
struct ScaleBuffers {
    reference: DeviceBuffer,
    distorted: DeviceBuffer,
    /// Row pitch in samples.
    pitch: usize,
    width: usize,
    height: usize,
}

/// What one launch reads: a scale's planes (pitches in bytes).
#[derive(Clone, Copy)]
struct Source {
    reference: DevicePtr,
    distorted: DevicePtr,
    pitch_ref: u32,
    pitch_dis: u32,
    width: u32,
    height: u32,
}

pub(super) struct GpuFloatVif {
    outputs: FloatVifOutputs,
    /// One kernel per scale.
    kernels: [Function; SCALES],
    filters: [VifFilters; SCALES],
    scale: f32,
    /// Scales 1 to 3.
    pyramid: Vec<ScaleBuffers>,
    /// Numerator and denominator per scale.
    sums: FrameSums,
}

impl GpuFloatVif {
    /// `None` for options the kernels do not cover (other filter widths,
    /// `vif_prescale`): the CPU extractor scores those.
    pub(super) fn create(
        options: &Options,
        format: &PictureFormat,
        gpu: &Gpu,
    ) -> Option<Result<Self>> {
        let outputs = match FloatVifOutputs::create(options, format) {
            Ok(o) => o,
            Err(e) => return Some(Err(e)),
        };
        let (w, h) = format.plane_size(PlaneId::Y);
        let widths = outputs.kernels().each_ref().map(|k| k.len());
        if widths != TAPS || outputs.scored_size() != (w, h) {
            return None;
        }
        Some(Self::build(outputs, format, gpu))
    }

    fn build(outputs: FloatVifOutputs, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        let module = kernels::load(gpu, &KERNELS)?;
        let kernels = [
            module.function(&format!(
                "float_vif_scale0_{}",
                sample_suffix(format.bytes_per_sample())
            ))?,
            module.function("float_vif_scale1")?,
            module.function("float_vif_scale2")?,
            module.function("float_vif_scale3")?,
        ];
        let k = outputs.kernels();
        let filters = std::array::from_fn(|s| {
            let mut f = VifFilters::default();
            f.taps[..k[s].len()].copy_from_slice(&k[s]);
            if let Some(next) = k.get(s + 1) {
                f.next[..next.len()].copy_from_slice(next);
            }
            f
        });
        let (w, h) = format.plane_size(PlaneId::Y);
        let pyramid = (1..SCALES)
            .map(|s| {
                let (width, height) = (w >> s, h >> s);
                // Rows 256-byte aligned, as the shared planes'.
                let pitch = width.div_ceil(64) * 64;
                Ok(ScaleBuffers {
                    reference: gpu.buffer(pitch * height * 4)?,
                    distorted: gpu.buffer(pitch * height * 4)?,
                    pitch,
                    width,
                    height,
                })
            })
            .collect::<Result<_>>()?;
        let blocks = w.div_ceil(TILE_W as usize) * h.div_ceil(TILE_H as usize);
        Ok(Self {
            sums: FrameSums::new(gpu, &module, 2 * SCALES as u32, blocks as u32)?,
            outputs,
            kernels,
            filters,
            scale: luma_scale(format.bit_depth),
            pyramid,
        })
    }
}

impl GpuExtractor for GpuFloatVif {
    fn name(&self) -> &'static str {
        "float_vif"
    }

    fn instances(&self, _: &PictureFormat) -> usize {
        // At every size: at 2160p too the float model gained 6 % (its
        // coarse scales are longer chains than the integer ones).
        SPREAD
    }

    fn planes(&self) -> PairPlanes {
        PairPlanes::both(PlaneMask::LUMA)
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        let (r, d) = (frame.reference(PlaneId::Y)?, frame.distorted(PlaneId::Y)?);
        let mut source = Source {
            reference: r.ptr,
            distorted: d.ptr,
            pitch_ref: r.pitch as u32,
            pitch_dis: d.pitch as u32,
            width: r.width as u32,
            height: r.height as u32,
        };
        let totals = self.sums.begin(stream)?;
        for scale in 0..SCALES {
            let next = self.pyramid.get(scale);
            self.launch(scale, source, next, stream)?;
            if let Some(n) = next {
                source = Source {
                    reference: n.reference.ptr(),
                    distorted: n.distorted.ptr(),
                    pitch_ref: (n.pitch * 4) as u32,
                    pitch_dis: (n.pitch * 4) as u32,
                    width: n.width as u32,
                    height: n.height as u32,
                };
            }
        }
        self.sums.end(index, totals, stream)
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        let Some((index, totals)) = self.sums.complete("float_vif")? else {
            return Ok(None);
        };
        // libvmaf's sums are floats.
        let sums = VifSums {
            num: std::array::from_fn(|s| totals[2 * s] as f32),
            den: std::array::from_fn(|s| totals[2 * s + 1] as f32),
        };
        self.outputs.emit(index, &sums, sink);
        Ok(Some(index))
    }
}

impl GpuFloatVif {
    /// Queues scale `scale`'s kernel over `source`, decimating into `next`.
    fn launch(
        &self,
        scale: usize,
        source: Source,
        next: Option<&ScaleBuffers>,
        stream: &Stream,
    ) -> Result<()> {
        let (width, height) = (source.width, source.height);
        let params = self.outputs.params();
        let (next_ref, next_dis, next_pitch) = next.map_or((0, 0, 0), |n| {
            (n.reference.ptr(), n.distorted.ptr(), n.pitch as u32)
        });
        let scale_sums = 2 * scale as u32;
        let partials = self.sums.partials();
        let mut args = KernelArgs::new();
        args.arg(source.reference)
            .arg(source.pitch_ref)
            .arg(source.distorted)
            .arg(source.pitch_dis)
            .arg(width as i32)
            .arg(height as i32)
            .arg(self.scale)
            .arg(self.filters[scale])
            .arg(params.sigma_nsq)
            .arg(params.enhn_gain_limit)
            .arg(params.sigma_max_inv())
            .arg(partials.quantities(scale_sums..scale_sums + 2))
            .arg(partials.stride())
            .arg(next_ref)
            .arg(next_dis)
            .arg(next_pitch);
        let dims = LaunchDims {
            grid: (width.div_ceil(TILE_W), height.div_ceil(TILE_H), 1),
            block: (THREADS, 1, 1),
            shared_bytes: 0,
        };
        // SAFETY: the arguments match the float_vif_scale* kernels; the
        // planes and the partials stay alive until the stream ran (the
        // shared planes are context-owned, the rest is ours).
        unsafe { stream.launch(&self.kernels[scale], &dims, &mut args) }
    }
}
