//! `psnr_hvs` on the GPU: one thread per overlapping 8x8 block computes its
//! 64 masked, CSF-weighted DCT error terms bit for bit as the CPU does
//! (kernels/psnr_hvs.cu); the blocks' sums are added in double in a fixed
//! order, and the scores come from the CPU extractor's code. The CPU adds
//! the terms in one running `float` sum, so the plane totals (and the dB
//! values) differ slightly: within the tolerance of tests/gpu_psnr_hvs.rs.

use super::float_common::{arg, doubles, sample_suffix, PartialSums};
use super::readback::Readback;
use super::GpuExtractor;
use crate::error::{Error, Result};
use crate::feature::psnr_hvs::blocks::{block_count, score_of_total};
use crate::feature::psnr_hvs::csf::Weights;
use crate::feature::psnr_hvs::{emit_scores, plane_weights, scored_sizes};
use crate::feature::{FeatureSink, Options};
use crate::gpu::device::{Function, Gpu, Stream};
use crate::gpu::driver::LaunchDims;
use crate::gpu::kernels;
use crate::gpu::planes::{FramePlanes, PairPlanes};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};
use std::ffi::c_void;

/// Threads per CUDA block, one per 8x8 block (kernels/psnr_hvs.cu).
const THREADS: u32 = 64;

/// `PsnrHvsWeights` of kernels/psnr_hvs.cu, passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
struct KernelWeights {
    csf: [f32; 64],
    mask: [f32; 64],
}

impl From<&Weights> for KernelWeights {
    fn from(w: &Weights) -> Self {
        Self {
            csf: w.csf,
            mask: w.mask,
        }
    }
}

/// One plane's launch: its 8x8 blocks across, its grid and its weights.
struct PlaneLaunch {
    blocks_x: i32,
    /// Samples scored (64 per block), libvmaf's `pixels`.
    pixels: i32,
    dims: LaunchDims,
    weights: KernelWeights,
}

pub(super) struct GpuPsnrHvs {
    bit_depth: u8,
    planes: [PlaneLaunch; 3],
    kernel: Function,
    sums: PartialSums,
    results: Readback,
}

impl GpuPsnrHvs {
    pub(super) fn create(_: &Options, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        let sizes = scored_sizes(format)?;
        let weights = plane_weights();
        let mut planes = Vec::with_capacity(3);
        for ((w, h), weights) in sizes.iter().zip(&weights) {
            let (across, down) = (block_count(*w) as u32, block_count(*h) as u32);
            let blocks = u64::from(across) * u64::from(down);
            if down > 65535 || 64 * blocks > i32::MAX as u64 {
                return Err(Error::Extractor {
                    extractor: "psnr_hvs".into(),
                    reason: format!("a {w}x{h} plane is too large for the GPU version"),
                });
            }
            planes.push(PlaneLaunch {
                blocks_x: across as i32,
                pixels: (64 * blocks) as i32,
                dims: LaunchDims {
                    grid: (across.div_ceil(THREADS), down, 1),
                    block: (THREADS, 1, 1),
                    shared_bytes: 0,
                },
                weights: weights.into(),
            });
        }
        let planes: [PlaneLaunch; 3] = planes
            .try_into()
            .unwrap_or_else(|_| unreachable!("three planes"));
        let stride = planes
            .iter()
            .map(|p| p.dims.grid.0 * p.dims.grid.1)
            .max()
            .unwrap_or(1);
        let module = kernels::load(gpu, "psnr_hvs.cu")?;
        Ok(Self {
            bit_depth: format.bit_depth,
            kernel: module.function(&format!(
                "psnr_hvs_plane_{}",
                sample_suffix(format.bytes_per_sample())
            ))?,
            sums: PartialSums::new(gpu, &module, 3, stride)?,
            results: Readback::new(gpu, 3)?,
            planes,
        })
    }
}

impl GpuExtractor for GpuPsnrHvs {
    fn name(&self) -> &'static str {
        "psnr_hvs"
    }

    fn planes(&self) -> PairPlanes {
        PairPlanes::both(PlaneMask::ALL)
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        let out = self.results.begin(stream)?.ptr();
        for (q, (id, plane)) in PlaneId::ALL.into_iter().zip(&self.planes).enumerate() {
            let (r, d) = (frame.reference(id)?, frame.distorted(id)?);
            let (mut rp, mut rpitch) = (r.ptr, r.pitch as u32);
            let (mut dp, mut dpitch) = (d.ptr, d.pitch as u32);
            let mut blocks_x = plane.blocks_x;
            let mut weights = plane.weights;
            let mut partials = self.sums.quantity(q as u32);
            let mut params: [*mut c_void; 7] = [
                arg(&mut rp),
                arg(&mut rpitch),
                arg(&mut dp),
                arg(&mut dpitch),
                arg(&mut blocks_x),
                arg(&mut weights),
                arg(&mut partials),
            ];
            // SAFETY: the parameters match psnr_hvs_plane_* (the weights a
            // `PsnrHvsWeights` by value); the blocks lie inside the scored
            // size, inside the plane; the planes are context-owned and the
            // partials ours, alive until the stream ran.
            unsafe { stream.launch(&self.kernel, &plane.dims, &mut params)? };
        }
        self.sums.reduce_into(out, stream)?;
        self.results.end(index, stream)
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        Ok(match self.results.complete()? {
            None => None,
            Some((index, values)) => {
                let totals = doubles(&values.expect("psnr_hvs launches every frame"));
                let scores: [f64; 3] = std::array::from_fn(|q| {
                    score_of_total(totals[q] as f32, self.planes[q].pixels, self.bit_depth)
                });
                emit_scores(index, &scores, sink);
                Some(index)
            }
        })
    }
}
