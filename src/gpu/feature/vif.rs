//! Integer `vif` on the GPU: one launch per scale (kernels/vif.cu) filters
//! a tile, sums the per-pixel statistic into the frame's integer
//! accumulators and decimates the tile into the next scale; the host turns
//! the sums into scores with the CPU extractor's own code, so per-frame
//! values are bit-identical.

use super::readback::Readback;
use super::{single_twin, GpuTwin};
use super::{spread_up_to_1440p, GpuExtractor};
use crate::error::Result;
use crate::feature::vif::{Log2Table, ScaleSums, VifOutputs, SCALES};
use crate::feature::{FeatureSink, Options};
use crate::gpu::args::KernelArgs;
use crate::gpu::device::{DeviceBuffer, Function, Gpu, Stream};
use crate::gpu::driver::{DevicePtr, LaunchDims};
use crate::gpu::kernels;
use crate::gpu::kernels::{kernel_source, KernelSource};
use crate::gpu::planes::{FramePlanes, PairPlanes};
use crate::gpu::slice::DeviceSlice;
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

/// kernels/vif.cu.
pub(crate) static KERNELS: KernelSource = kernel_source!("vif.cu");

/// The GPU version named by the CPU extractor's registry record.
pub(crate) static TWIN: GpuTwin = single_twin!(GpuVif, &[&KERNELS], super::EVERY_BACKEND);

/// Threads per block and output tile of the kernels (`THREADS`, `TILE_W`,
/// `TILE_H` in kernels/vif.cu).
const THREADS: u32 = 256;
const TILE_W: u32 = 64;
const TILE_H: u32 = 16;

/// The log2 table's entries the kernels read: mantissas 2^15..2^16.
const TABLE_FIRST: usize = 1 << 15;

/// Sums per scale, in the kernels' order: num_log, den_log, num_non_log,
/// den_non_log.
const SUMS: usize = 4;

/// A decimated scale of both pictures, 16-bit samples.
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

pub(super) struct GpuVif {
    outputs: VifOutputs,
    bit_depth: u32,
    /// One kernel per scale.
    kernels: [Function; SCALES],
    log2: DeviceBuffer,
    /// Scales 1 to 3.
    pyramid: Vec<ScaleBuffers>,
    results: Readback,
}

impl GpuVif {
    pub(super) fn create(options: &Options, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        let outputs = VifOutputs::create(options, format)?;
        let module = kernels::load(gpu, &KERNELS)?;
        let scale0 = if format.bytes_per_sample() == 1 {
            "vif_scale0_u8"
        } else {
            "vif_scale0_u16"
        };
        let kernels = [
            module.function(scale0)?,
            module.function("vif_scale1")?,
            module.function("vif_scale2")?,
            module.function("vif_scale3")?,
        ];
        let (w, h) = format.plane_size(PlaneId::Y);
        let pyramid = (1..SCALES)
            .map(|s| {
                let (width, height) = (w >> s, h >> s);
                // Rows 256-byte aligned, as the shared planes'.
                let pitch = width.div_ceil(128) * 128;
                Ok(ScaleBuffers {
                    reference: gpu.buffer(pitch * height * 2)?,
                    distorted: gpu.buffer(pitch * height * 2)?,
                    pitch,
                    width,
                    height,
                })
            })
            .collect::<Result<_>>()?;
        Ok(Self {
            outputs,
            bit_depth: u32::from(format.bit_depth),
            kernels,
            // The CPU's log2 table: the entries the kernels can read.
            log2: gpu.upload(&Log2Table::get().padded_entries()[TABLE_FIRST..1 << 16])?,
            pyramid,
            results: Readback::new(gpu, SCALES * SUMS)?,
        })
    }
}

impl GpuExtractor for GpuVif {
    fn name(&self) -> &'static str {
        "vif"
    }

    fn instances(&self, format: &PictureFormat) -> usize {
        spread_up_to_1440p(format)
    }

    fn planes(&self) -> PairPlanes {
        PairPlanes::both(PlaneMask::LUMA)
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        let sums = self.results.begin(stream)?;
        let (r, d) = (frame.reference(PlaneId::Y)?, frame.distorted(PlaneId::Y)?);
        let mut source = Source {
            reference: r.ptr,
            distorted: d.ptr,
            pitch_ref: r.pitch as u32,
            pitch_dis: d.pitch as u32,
            width: r.width as u32,
            height: r.height as u32,
        };
        for scale in 0..SCALES {
            let bits = if scale == 0 { self.bit_depth } else { 16 };
            let next = self.pyramid.get(scale);
            let sums = sums.slice(SUMS * scale..SUMS * (scale + 1));
            self.launch(scale, source, bits, sums, next, stream)?;
            if let Some(n) = next {
                source = Source {
                    reference: n.reference.ptr(),
                    distorted: n.distorted.ptr(),
                    pitch_ref: (n.pitch * 2) as u32,
                    pitch_dis: (n.pitch * 2) as u32,
                    width: n.width as u32,
                    height: n.height as u32,
                };
            }
        }
        self.results.end(index, stream)
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        let Some((index, values)) = self.results.complete_launched("vif")? else {
            return Ok(None);
        };
        let sums: [ScaleSums; SCALES] = std::array::from_fn(|scale| {
            // The kernels add two's complement values.
            let v = |i: usize| values[scale * SUMS + i] as i64;
            let mut s = ScaleSums::default();
            s.add_totals(v(0), v(1), v(2), v(3));
            s
        });
        self.outputs.emit_sums(index, &sums, sink);
        Ok(Some(index))
    }
}

impl GpuVif {
    /// Queues scale `scale`'s kernel over `source`, decimating into `next`.
    fn launch(
        &self,
        scale: usize,
        source: Source,
        bits: u32,
        sums: DeviceSlice<u64>,
        next: Option<&ScaleBuffers>,
        stream: &Stream,
    ) -> Result<()> {
        let (next_ref, next_dis, next_pitch) = next.map_or((0, 0, 0), |n| {
            (n.reference.ptr(), n.distorted.ptr(), n.pitch as u32)
        });
        let (width, height) = (source.width, source.height);
        let mut args = KernelArgs::new();
        args.arg(source.reference)
            .arg(source.pitch_ref)
            .arg(source.distorted)
            .arg(source.pitch_dis)
            .arg(width as i32)
            .arg(height as i32)
            .arg(bits)
            .arg(self.log2.slice::<u16>(..))
            .arg(self.outputs.gain_limit())
            .arg(sums)
            .arg(next_ref)
            .arg(next_dis)
            .arg(next_pitch);
        let dims = LaunchDims {
            grid: (width.div_ceil(TILE_W), height.div_ceil(TILE_H), 1),
            block: (THREADS, 1, 1),
            shared_bytes: 0,
        };
        // SAFETY: the arguments match the vif_scale* kernels; the planes,
        // the table and the accumulators stay alive until the stream ran
        // (the shared planes are context-owned, the rest is ours).
        unsafe { stream.launch(&self.kernels[scale], &dims, &mut args) }
    }
}
