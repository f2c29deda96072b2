//! `psnr_hvs` on the GPU: one thread per overlapping 8x8 block computes its
//! 64 masked, CSF-weighted DCT error terms bit for bit as the CPU does, and
//! the plane totals are the CPU's one running `float` sum of those terms,
//! bit for bit, reproduced in parallel (kernels/psnr_hvs.cu: per-binade
//! maps of runs of terms, composed, and a walker that checks every map
//! against the exact sum). The scores come from the CPU extractor's code,
//! so they equal the CPU's.

use super::float_common::{doubles, sample_suffix};
use super::readback::Readback;
use super::{single_twin, GpuTwin};
use super::{spread_up_to_1440p, GpuExtractor};
use crate::error::{Error, Result};
use crate::feature::psnr_hvs::twin::{
    block_count, emit_scores, plane_weights, score_of_total, scored_sizes, Weights,
};
use crate::feature::{FeatureSink, Options};
use crate::gpu::args::{KernelArg, KernelArgs};
use crate::gpu::device::{DeviceBuffer, Function, Gpu, Stream};
use crate::gpu::driver::{DevicePtr, LaunchDims};
use crate::gpu::kernels;
use crate::gpu::kernels::{kernel_source, KernelSource};
use crate::gpu::planes::{FramePlanes, PairPlanes};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

/// kernels/psnr_hvs.cu.
pub(crate) static KERNELS: KernelSource = kernel_source!("psnr_hvs.cu");

/// The GPU version named by the CPU extractor's registry record.
pub(crate) static TWIN: GpuTwin = single_twin!(GpuPsnrHvs, &[&KERNELS], super::EVERY_BACKEND);

/// Threads per CUDA block of `psnr_hvs_terms_*`, one per 8x8 block
/// (`THREADS` of kernels/psnr_hvs.cu).
const THREADS: u32 = 64;
/// 8x8 blocks per tile of `psnr_hvs_maps` and `psnr_hvs_walk` (`TILE`).
const TILE: u32 = 256;
/// 8x8 blocks whose terms are stored together, term by term (`GROUP`).
const GROUP: u64 = 32;

/// `PsnrHvsWeights` of kernels/psnr_hvs.cu, passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
struct KernelWeights {
    csf: [f32; 64],
    mask: [f32; 64],
}

// SAFETY: a repr(C) copy of the kernel's struct, plain floats.
unsafe impl KernelArg for KernelWeights {}

impl From<&Weights> for KernelWeights {
    fn from(w: &Weights) -> Self {
        Self {
            csf: w.csf,
            mask: w.mask,
        }
    }
}

/// `PsnrHvsPlane` of kernels/psnr_hvs.cu: one plane's buffers.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct MapPlane {
    terms: DevicePtr,
    sums: DevicePtr,
    partials: DevicePtr,
    chunks: DevicePtr,
    tiles: DevicePtr,
    n: i32,
    pad: i32,
}

/// `PsnrHvsPlanes`, passed by value to `psnr_hvs_maps` and `psnr_hvs_walk`.
#[repr(C)]
#[derive(Clone, Copy)]
struct MapPlanes {
    p: [MapPlane; 3],
}

// SAFETY: a repr(C) copy of the kernel's struct: device addresses and
// integers.
unsafe impl KernelArg for MapPlanes {}

/// One plane's launch: its 8x8 blocks across and in all, its grid, its
/// weights and its buffers.
struct PlaneLaunch {
    blocks_x: i32,
    /// 8x8 blocks of the plane, in raster order.
    chunks: i32,
    /// Samples scored (64 per block), libvmaf's `pixels`.
    pixels: i32,
    dims: LaunchDims,
    weights: KernelWeights,
    buffers: MapPlane,
}

pub(super) struct GpuPsnrHvs {
    bit_depth: u8,
    planes: [PlaneLaunch; 3],
    terms_kernel: Function,
    predict_kernel: Function,
    maps_kernel: Function,
    walk_kernel: Function,
    maps_dims: LaunchDims,
    /// Every plane's terms, sums, partials, chunk maps and tile maps.
    _buffer: DeviceBuffer,
    results: Readback,
}

/// Bytes of each of a plane's buffers (terms, chunk sums, partials, chunk
/// maps, tile maps) for `chunks` 8x8 blocks, each rounded up to 256.
fn buffer_sizes(chunks: u64) -> [u64; 5] {
    let groups = chunks.div_ceil(GROUP);
    [
        4 * 64 * GROUP * groups,
        8 * chunks,
        8 * chunks.div_ceil(u64::from(THREADS)),
        4 * 8 * chunks,
        4 * 12 * chunks.div_ceil(u64::from(TILE)),
    ]
    .map(|b| b.next_multiple_of(256))
}

impl GpuPsnrHvs {
    pub(super) fn create(_: &Options, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        let sizes = scored_sizes(format)?;
        let weights = plane_weights();
        let mut planes = Vec::with_capacity(3);
        let mut bytes = 0u64;
        for ((w, h), weights) in sizes.iter().zip(&weights) {
            let (across, down) = (block_count(*w) as u64, block_count(*h) as u64);
            let blocks = across * down;
            if 64 * blocks > i32::MAX as u64 {
                return Err(Error::Extractor {
                    extractor: "psnr_hvs".into(),
                    reason: format!("a {w}x{h} plane is too large for the GPU version"),
                });
            }
            planes.push(PlaneLaunch {
                blocks_x: across as i32,
                chunks: blocks as i32,
                pixels: (64 * blocks) as i32,
                dims: LaunchDims {
                    grid: ((blocks as u32).div_ceil(THREADS), 1, 1),
                    block: (THREADS, 1, 1),
                    shared_bytes: 0,
                },
                weights: weights.into(),
                buffers: MapPlane {
                    n: blocks as i32,
                    ..MapPlane::default()
                },
            });
            bytes += buffer_sizes(blocks).iter().sum::<u64>();
        }
        let mut planes: [PlaneLaunch; 3] = planes
            .try_into()
            .unwrap_or_else(|_| unreachable!("three planes"));
        let buffer = gpu.buffer(bytes as usize)?;
        // Each plane's buffers in turn, from the start of `buffer`.
        let mut rest = buffer.slice::<u8>(..);
        for plane in &mut planes {
            let [terms, sums, partials, chunks, tiles] =
                buffer_sizes(plane.chunks as u64).map(|bytes| {
                    let part = rest.slice(..bytes as usize);
                    rest = rest.offset(bytes as usize);
                    part.ptr()
                });
            plane.buffers = MapPlane {
                terms,
                sums,
                partials,
                chunks,
                tiles,
                ..plane.buffers
            };
        }
        let tiles = planes
            .iter()
            .map(|p| (p.chunks as u32).div_ceil(TILE))
            .max()
            .unwrap_or(1);
        let module = kernels::load(gpu, &KERNELS)?;
        Ok(Self {
            bit_depth: format.bit_depth,
            terms_kernel: module.function(&format!(
                "psnr_hvs_terms_{}",
                sample_suffix(format.bytes_per_sample())
            ))?,
            predict_kernel: module.function("psnr_hvs_predict")?,
            maps_kernel: module.function("psnr_hvs_maps")?,
            walk_kernel: module.function("psnr_hvs_walk")?,
            maps_dims: LaunchDims {
                grid: (tiles, 3, 1),
                block: (TILE, 1, 1),
                shared_bytes: 0,
            },
            _buffer: buffer,
            results: Readback::new(gpu, 3)?,
            planes,
        })
    }
}

impl GpuExtractor for GpuPsnrHvs {
    fn name(&self) -> &'static str {
        "psnr_hvs"
    }

    fn instances(&self, format: &PictureFormat) -> usize {
        spread_up_to_1440p(format)
    }

    fn planes(&self) -> PairPlanes {
        PairPlanes::both(PlaneMask::ALL)
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        let out = self.results.begin(stream)?;
        for (id, plane) in PlaneId::ALL.into_iter().zip(&self.planes) {
            let (r, d) = (frame.reference(id)?, frame.distorted(id)?);
            let b = plane.buffers;
            let mut args = KernelArgs::new();
            args.arg(r.ptr)
                .arg(r.pitch as u32)
                .arg(d.ptr)
                .arg(d.pitch as u32)
                .arg(plane.blocks_x)
                .arg(plane.chunks)
                .arg(plane.weights)
                .arg(b.terms)
                .arg(b.sums)
                .arg(b.partials);
            // SAFETY: the arguments match psnr_hvs_terms_* (the weights a
            // `PsnrHvsWeights` by value); the blocks lie inside the scored
            // size, inside the plane; the planes are context-owned and the
            // buffers ours (sized by `buffer_sizes`), alive until the
            // stream ran.
            unsafe { stream.launch(&self.terms_kernel, &plane.dims, &mut args)? };
        }
        let planes = MapPlanes {
            p: std::array::from_fn(|q| self.planes[q].buffers),
        };
        for kernel in [&self.predict_kernel, &self.maps_kernel] {
            // SAFETY: the argument is a `PsnrHvsPlanes` by value; its
            // buffers are ours, written by the launches before, alive until
            // the stream ran; the grid covers every plane's tiles (extra
            // CUDA blocks return at once).
            unsafe { stream.launch(kernel, &self.maps_dims, KernelArgs::new().arg(planes))? };
        }
        let walk = LaunchDims {
            grid: (3, 1, 1),
            block: (TILE, 1, 1),
            shared_bytes: 0,
        };
        let mut args = KernelArgs::new();
        args.arg(planes).arg(out.slice(..3));
        // SAFETY: as above, and `out` is the live result buffer of three
        // words, one double per plane.
        unsafe { stream.launch(&self.walk_kernel, &walk, &mut args)? };
        self.results.end(index, stream)
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        let Some((index, values)) = self.results.complete_launched("psnr_hvs")? else {
            return Ok(None);
        };
        let totals = doubles(&values);
        let scores: [f64; 3] = std::array::from_fn(|q| {
            score_of_total(totals[q] as f32, self.planes[q].pixels, self.bit_depth)
        });
        emit_scores(index, &scores, sink);
        Ok(Some(index))
    }
}
