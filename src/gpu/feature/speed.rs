//! `speed_chroma` and `speed_temporal` on the GPU (kernels/speed.cu): per
//! frame one launch converts, prescales, anti-aliases and decimates every
//! plane (Cb and Cr of both pictures, or the luma differences of both), one
//! more fits the entropy model on each plane in a block of its own (local
//! mean removal, covariance, eigenvalues, QR solve, per-block variances and
//! entropies). The block entropies and variances come back and the host
//! scores them with the CPU extractor's code (`speed_score`, the chroma
//! combination and cap), with the options, sizes, filters and resampling
//! positions and weights the CPU extractors compute.
//!
//! Every value is the CPU's bit for bit except the entropies' `log2`, which
//! is CUDA's (within an ulp of glibc's) before rounding to float, so scores
//! agree within a relative tolerance (tests/gpu/speed.rs).

use super::float_common::{luma_scale, sample_suffix};
use super::readback::Readback;
use super::GpuExtractor;
use super::{single_twin, GpuTwin};
use crate::error::Result;
use crate::feature::speed::twin::{
    combine, filters, prescaler, BlockStats, ChromaOutputs, ChromaSetup, Geometry, ScaleMethod,
    SpeedConfig, SpeedScore, TemporalSetup, BLOCK_AREA,
};
use crate::feature::{FeatureSink, Options};
use crate::gpu::args::{KernelArg, KernelArgs};
use crate::gpu::device::{DeviceBuffer, Function, Gpu, Stream};
use crate::gpu::driver::{Copy2d, DevicePtr, LaunchDims, Memory};
use crate::gpu::kernels;
use crate::gpu::kernels::{kernel_source, KernelSource};
use crate::gpu::planes::{DevicePlane, FramePlanes, PairPlanes, PITCH_ALIGN};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

/// kernels/speed.cu.
pub(crate) static KERNELS: KernelSource = kernel_source!("speed.cu");

/// The GPU version named by the CPU extractor's registry record.
pub(crate) static CHROMA_TWIN: GpuTwin =
    single_twin!(GpuSpeedChroma, &[&KERNELS], super::EVERY_BACKEND);

/// The GPU version named by the CPU extractor's registry record.
pub(crate) static TEMPORAL_TWIN: GpuTwin =
    single_twin!(GpuSpeedTemporal, &[&KERNELS], super::EVERY_BACKEND);

/// Threads per block of the two kernels (kernels/speed.cu).
const DECIMATE_THREADS: u32 = 128;
const ESTIMATE_THREADS: u32 = 512;

/// `RESAMPLE_*` of the kernel.
const RESAMPLE_NONE: i32 = 0;

/// `struct SpeedGeometry` of the kernel.
#[repr(C)]
#[derive(Clone, Copy)]
struct KernelGeometry {
    antialias: DevicePtr,
    lowpass: DevicePtr,
    col_index: DevicePtr,
    col_weight: DevicePtr,
    row_index: DevicePtr,
    row_weight: DevicePtr,
    src_w: i32,
    src_h: i32,
    scaled_w: i32,
    scaled_h: i32,
    op_w: i32,
    op_h: i32,
    trunc_w: i32,
    trunc_h: i32,
    blocks_h: i32,
    blocks_v: i32,
    antialias_taps: i32,
    lowpass_taps: i32,
    method: i32,
    col_taps: i32,
    row_taps: i32,
    sample_scale: f32,
    sigma_nn: f32,
    pad: i32,
}

// SAFETY: a repr(C) copy of the kernel's struct: device addresses and
// numbers.
unsafe impl KernelArg for KernelGeometry {}

/// `struct PlaneSource` of the kernel: picture `a`, minus `b` when the
/// sources are differences.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct PlaneSource {
    a: DevicePtr,
    b: DevicePtr,
    pitch_a: u32,
    pitch_b: u32,
}

impl PlaneSource {
    fn single(p: DevicePlane) -> Self {
        Self {
            a: p.ptr,
            b: 0,
            pitch_a: p.pitch as u32,
            pitch_b: 0,
        }
    }
}

/// `struct Sources` of the kernel.
#[repr(C)]
#[derive(Clone, Copy)]
struct Sources {
    p: [PlaneSource; 4],
    difference: i32,
    pad: i32,
}

// SAFETY: a repr(C) copy of the kernel's struct: device addresses and
// integers.
unsafe impl KernelArg for Sources {}

/// The SpEED computation on the device for pairs of planes (reference,
/// distorted), with its results read back per frame.
struct SpeedDevice {
    config: SpeedConfig,
    kernel_geometry: KernelGeometry,
    /// Planes per frame: two per pair.
    planes: u32,
    blocks: usize,
    op_area: usize,
    decimate: Function,
    estimate: Function,
    /// Filters and resampling tables (`kernel_geometry` points into it).
    _tables: DeviceBuffer,
    decimated: DeviceBuffer,
    vertical: DeviceBuffer,
    samples: DeviceBuffer,
    solution: DeviceBuffer,
    results: Readback,
}

impl SpeedDevice {
    fn new(
        gpu: &Gpu,
        config: SpeedConfig,
        geometry: Geometry,
        planes: u32,
        format: &PictureFormat,
    ) -> Result<Self> {
        let module = kernels::load(gpu, &KERNELS)?;
        let g = geometry;
        let (antialias, lowpass) = filters(&config);
        // The tables as 32-bit words: filters, then the resampling tables.
        let mut words: Vec<u32> = Vec::new();
        let mut put = |values: &mut dyn Iterator<Item = u32>| -> usize {
            let at = words.len();
            words.extend(values);
            at
        };
        let antialias_at = put(&mut antialias.iter().map(|v| v.to_bits()));
        let lowpass_at = put(&mut lowpass.iter().map(|v| v.to_bits()));
        let (method, tables) = match prescaler(&config, &g) {
            None => (RESAMPLE_NONE, None),
            Some(r) => {
                let method = match r.table_method() {
                    ScaleMethod::Nearest => 1,
                    ScaleMethod::Bilinear => 2,
                    ScaleMethod::Bicubic => 3,
                    ScaleMethod::Lanczos4 => 4,
                };
                (method, Some(r.axis_taps()))
            }
        };
        let (mut col_taps, mut row_taps) = (0, 0);
        let mut offsets = [0; 4];
        if let Some((cols, rows)) = &tables {
            (col_taps, row_taps) = (cols.taps as i32, rows.taps as i32);
            offsets = [
                put(&mut cols.index.iter().map(|&i| i as u32)),
                put(&mut cols.weight.iter().map(|v| v.to_bits())),
                put(&mut rows.index.iter().map(|&i| i as u32)),
                put(&mut rows.weight.iter().map(|v| v.to_bits())),
            ];
        }
        let tables = gpu.upload(&words)?;
        let table = |at: usize| tables.slice::<u32>(..).offset(at).ptr();
        let blocks = g.blocks();
        let kernel_geometry = KernelGeometry {
            antialias: table(antialias_at),
            lowpass: table(lowpass_at),
            col_index: table(offsets[0]),
            col_weight: table(offsets[1]),
            row_index: table(offsets[2]),
            row_weight: table(offsets[3]),
            src_w: g.original.width as i32,
            src_h: g.original.height as i32,
            scaled_w: g.scaled.width as i32,
            scaled_h: g.scaled.height as i32,
            op_w: g.operating.width as i32,
            op_h: g.operating.height as i32,
            trunc_w: g.truncated.width as i32,
            trunc_h: g.truncated.height as i32,
            blocks_h: g.blocks_horizontal as i32,
            blocks_v: g.blocks_vertical as i32,
            antialias_taps: antialias.len() as i32,
            lowpass_taps: lowpass.len() as i32,
            method,
            col_taps,
            row_taps,
            sample_scale: luma_scale(format.bit_depth),
            sigma_nn: config.sigma_nn,
            pad: 0,
        };
        let op_area = g.operating.width * g.operating.height;
        let per_plane = |floats: usize| gpu.buffer(planes as usize * floats * 4);
        // Per plane: block entropies, block variances, the regular flag.
        let result_floats = planes as usize * (2 * blocks + 1);
        Ok(Self {
            config,
            kernel_geometry,
            planes,
            blocks,
            op_area,
            decimate: module.function(&format!(
                "speed_decimate_{}",
                sample_suffix(format.bytes_per_sample())
            ))?,
            estimate: module.function("speed_estimate")?,
            _tables: tables,
            decimated: per_plane(op_area)?,
            vertical: per_plane(op_area)?,
            samples: per_plane(BLOCK_AREA * blocks)?,
            solution: per_plane(BLOCK_AREA * blocks)?,
            results: Readback::new(gpu, result_floats.div_ceil(2))?,
        })
    }

    /// Queues frame `index`'s two launches on `sources`.
    fn enqueue(&mut self, index: u32, sources: Sources, stream: &Stream) -> Result<()> {
        let out = self.results.begin(stream)?;
        let g = self.kernel_geometry;
        let decimated = self.decimated.slice::<f32>(..);
        let mut args = KernelArgs::new();
        args.arg(g).arg(sources).arg(decimated);
        let dims = LaunchDims {
            grid: (
                (self.op_area as u32).div_ceil(DECIMATE_THREADS),
                self.planes,
                1,
            ),
            block: (DECIMATE_THREADS, 1, 1),
            shared_bytes: 0,
        };
        // SAFETY: the arguments match speed_decimate_* (repr(C) copies of
        // the kernel's structs); the planes are context-owned or ours and the
        // buffers hold `planes` planes, alive until the stream ran.
        unsafe { stream.launch(&self.decimate, &dims, &mut args)? };
        let mut args = KernelArgs::new();
        args.arg(g)
            .arg(decimated)
            .arg(self.vertical.slice::<f32>(..))
            .arg(self.samples.slice::<f32>(..))
            .arg(self.solution.slice::<f32>(..))
            .arg(out);
        let dims = LaunchDims {
            grid: (self.planes, 1, 1),
            block: (ESTIMATE_THREADS, 1, 1),
            shared_bytes: 0,
        };
        // SAFETY: as above, for speed_estimate; the result slot holds
        // `planes * (2 * blocks + 1)` floats.
        unsafe { stream.launch(&self.estimate, &dims, &mut args)? };
        self.results.end(index, stream)
    }

    /// Waits for the oldest frame: its index and the score of each pair of
    /// planes (`None` for a frame that launched nothing).
    fn complete(&mut self) -> Result<Option<(u32, Option<Vec<SpeedScore>>)>> {
        let Some((index, words)) = self.results.complete()? else {
            return Ok(None);
        };
        let Some(words) = words else {
            return Ok(Some((index, None)));
        };
        let floats: Vec<f32> = words
            .iter()
            .flat_map(|w| {
                let b = w.to_ne_bytes();
                [
                    f32::from_ne_bytes([b[0], b[1], b[2], b[3]]),
                    f32::from_ne_bytes([b[4], b[5], b[6], b[7]]),
                ]
            })
            .collect();
        let blocks = self.blocks;
        let plane = |p: usize| {
            let r = &floats[p * (2 * blocks + 1)..][..2 * blocks + 1];
            let stats = BlockStats {
                entropies: r[..blocks].to_vec(),
                variances: r[blocks..2 * blocks].to_vec(),
            };
            (stats, r[2 * blocks] != 0.0)
        };
        let scores = (0..self.planes as usize / 2)
            .map(|pair| {
                let (reference, ref_ok) = plane(2 * pair);
                let (distorted, dis_ok) = plane(2 * pair + 1);
                combine(&self.config, &reference, &distorted, ref_ok, dis_ok)
            })
            .collect();
        Ok(Some((index, Some(scores))))
    }
}

/// `speed_chroma`: the Cb and Cr planes of both pictures in each launch.
pub(super) struct GpuSpeedChroma {
    outputs: ChromaOutputs,
    device: SpeedDevice,
}

impl GpuSpeedChroma {
    pub(super) fn create(options: &Options, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        let setup = ChromaSetup::new(options, format)?;
        Ok(Self {
            device: SpeedDevice::new(gpu, setup.config, setup.geometry, 4, format)?,
            outputs: setup.outputs,
        })
    }
}

impl GpuExtractor for GpuSpeedChroma {
    fn name(&self) -> &'static str {
        "speed_chroma"
    }

    fn instances(&self, _: &PictureFormat) -> usize {
        // A frame's values depend on that frame alone (speed_temporal's
        // on the frame before, so it keeps one).
        super::SPREAD_LONG_CHAINS
    }

    fn planes(&self) -> PairPlanes {
        PairPlanes::both(PlaneMask::CHROMA)
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        // Pairs (reference, distorted): Cb, then Cr. The kernels read the
        // leftmost floor(W / 2) columns (and rows) of the ceil-size planes.
        let sources = Sources {
            p: [
                PlaneSource::single(frame.reference(PlaneId::Cb)?),
                PlaneSource::single(frame.distorted(PlaneId::Cb)?),
                PlaneSource::single(frame.reference(PlaneId::Cr)?),
                PlaneSource::single(frame.distorted(PlaneId::Cr)?),
            ],
            difference: 0,
            pad: 0,
        };
        self.device.enqueue(index, sources, stream)
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        Ok(match self.device.complete()? {
            None => None,
            Some((index, scores)) => {
                let scores = scores.expect("speed_chroma launches every frame");
                self.outputs.emit(index, scores[0], scores[1], sink);
                Some(index)
            }
        })
    }
}

/// `speed_temporal`: the differences of the previous and this frame's
/// luma, the previous frame's planes kept on the device.
pub(super) struct GpuSpeedTemporal {
    name: String,
    use_ref_diff: bool,
    format: PictureFormat,
    device: SpeedDevice,
    /// The previous frame's reference and distorted luma, as the shared
    /// planes hold them.
    previous: [DeviceBuffer; 2],
    previous_pitch: usize,
    /// Whether `previous` holds a frame yet.
    has_previous: bool,
}

impl GpuSpeedTemporal {
    pub(super) fn create(options: &Options, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        let setup = TemporalSetup::new(options, format)?;
        let (w, h) = format.plane_size(PlaneId::Y);
        let previous_pitch = (w * format.bytes_per_sample()).div_ceil(PITCH_ALIGN) * PITCH_ALIGN;
        Ok(Self {
            device: SpeedDevice::new(gpu, setup.config, setup.geometry, 2, format)?,
            previous: [
                gpu.buffer(previous_pitch * h)?,
                gpu.buffer(previous_pitch * h)?,
            ],
            previous_pitch,
            name: setup.name,
            use_ref_diff: setup.use_ref_diff,
            format: *format,
            has_previous: false,
        })
    }
}

impl GpuExtractor for GpuSpeedTemporal {
    fn name(&self) -> &'static str {
        "speed_temporal"
    }

    fn planes(&self) -> PairPlanes {
        PairPlanes::both(PlaneMask::LUMA)
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        let (reference, distorted) = (frame.reference(PlaneId::Y)?, frame.distorted(PlaneId::Y)?);
        if self.has_previous {
            // Previous minus current; the distorted difference from the
            // current reference with `speed_use_ref_diff`.
            let pitch = self.previous_pitch as u32;
            let base = if self.use_ref_diff {
                reference
            } else {
                distorted
            };
            let sources = Sources {
                p: [
                    PlaneSource {
                        a: self.previous[0].ptr(),
                        b: reference.ptr,
                        pitch_a: pitch,
                        pitch_b: reference.pitch as u32,
                    },
                    PlaneSource {
                        a: self.previous[1].ptr(),
                        b: base.ptr,
                        pitch_a: pitch,
                        pitch_b: base.pitch as u32,
                    },
                    PlaneSource::default(),
                    PlaneSource::default(),
                ],
                difference: 1,
                pad: 0,
            };
            self.device.enqueue(index, sources, stream)?;
        } else {
            // The first frame scores 0, as on the CPU.
            self.device.results.skip(index);
        }
        // Keep this frame's luma for the next frame (after the kernels that
        // read the previous one, in stream order).
        for (plane, previous) in [reference, distorted].iter().zip(&self.previous) {
            let copy = Copy2d {
                src: Memory::Device(plane.ptr),
                src_pitch: plane.pitch,
                dst: previous.ptr(),
                dst_pitch: self.previous_pitch,
                width_bytes: plane.width * self.format.bytes_per_sample(),
                height: plane.height,
            };
            // SAFETY: both buffers cover the rows and outlive the stream's
            // work.
            unsafe { stream.copy_2d(&copy)? };
        }
        self.has_previous = true;
        Ok(())
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        Ok(match self.device.complete()? {
            None => None,
            Some((index, scores)) => {
                let score = scores.map_or(0.0, |s| f64::from(s[0].score));
                sink.emit(index, &self.name, score);
                Some(index)
            }
        })
    }
}
