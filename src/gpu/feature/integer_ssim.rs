//! `ssim` (integer_ssim) on the GPU: each window's `w ssim` in a kernel
//! (kernels/integer_ssim.cu) from exact integer moments, summed in the
//! CPU's raster order by one device thread; the weights' sum and the score
//! are the CPU extractor's, so per-frame values are bit-identical.

use super::readback::Readback;
use super::GpuExtractor;
use crate::error::Result;
use crate::feature::integer_ssim::{weight_sum, SsimOutputs};
use crate::feature::{FeatureSink, Options};
use crate::gpu::device::{DeviceBuffer, Function, Gpu, Stream};
use crate::gpu::driver::LaunchDims;
use crate::gpu::kernels;
use crate::gpu::planes::{FramePlanes, PairPlanes};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};
use std::ffi::c_void;

/// The terms kernel's tile (kernels/integer_ssim.cu: TILE_W x TILE_H, one
/// thread per window) and the sum kernel's block.
const TILE_W: u32 = 32;
const TILE_H: u32 = 8;
const SUM_THREADS: u32 = 256;

pub(super) struct GpuIntegerSsim {
    outputs: SsimOutputs,
    /// `sum(w)` of every frame (the picture size fixes it).
    weights: f64,
    terms_kernel: Function,
    sum_kernel: Function,
    /// One `w ssim` per pixel; frames reuse it in stream order.
    terms: DeviceBuffer,
    results: Readback,
}

impl GpuIntegerSsim {
    pub(super) fn create(options: &Options, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        let outputs = SsimOutputs::create(options, format)?;
        let (w, h) = (format.width as usize, format.height as usize);
        let module = kernels::load(gpu, "integer_ssim.cu")?;
        let terms_kernel = module.function(if format.bytes_per_sample() == 1 {
            "ssim_terms_u8"
        } else {
            "ssim_terms_u16"
        })?;
        Ok(Self {
            outputs,
            weights: weight_sum(w, h),
            terms_kernel,
            sum_kernel: module.function("ssim_sum")?,
            terms: gpu.buffer(w * h * 8)?,
            results: Readback::new(gpu, 1)?,
        })
    }
}

impl GpuExtractor for GpuIntegerSsim {
    fn name(&self) -> &'static str {
        "ssim"
    }

    fn planes(&self) -> PairPlanes {
        PairPlanes::both(PlaneMask::LUMA)
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        let mut total = self.results.begin(stream)?.ptr();
        let (r, d) = (frame.reference(PlaneId::Y)?, frame.distorted(PlaneId::Y)?);
        let (mut rp, mut rpitch) = (r.ptr, r.pitch as u32);
        let (mut dp, mut dpitch) = (d.ptr, d.pitch as u32);
        let (mut w, mut h) = (r.width as u32, r.height as u32);
        let (mut c1, mut c2) = self.outputs.c_bases();
        let mut terms = self.terms.ptr();
        let mut params: [*mut c_void; 9] = [
            &mut rp as *mut _ as *mut c_void,
            &mut rpitch as *mut _ as *mut c_void,
            &mut dp as *mut _ as *mut c_void,
            &mut dpitch as *mut _ as *mut c_void,
            &mut w as *mut _ as *mut c_void,
            &mut h as *mut _ as *mut c_void,
            &mut c1 as *mut _ as *mut c_void,
            &mut c2 as *mut _ as *mut c_void,
            &mut terms as *mut _ as *mut c_void,
        ];
        let dims = LaunchDims {
            grid: (w.div_ceil(TILE_W), h.div_ceil(TILE_H), 1),
            block: (TILE_W * TILE_H, 1, 1),
            shared_bytes: 0,
        };
        // SAFETY: parameters match ssim_terms_*; the planes (context-owned)
        // and `terms` outlive the stream's work.
        unsafe { stream.launch(&self.terms_kernel, &dims, &mut params)? };
        let mut n = u64::from(w) * u64::from(h);
        let mut params: [*mut c_void; 3] = [
            &mut terms as *mut _ as *mut c_void,
            &mut n as *mut _ as *mut c_void,
            &mut total as *mut _ as *mut c_void,
        ];
        let dims = LaunchDims {
            grid: (1, 1, 1),
            block: (SUM_THREADS, 1, 1),
            shared_bytes: 0,
        };
        // SAFETY: parameters match ssim_sum; `terms` and the result slot
        // outlive the stream's work.
        unsafe { stream.launch(&self.sum_kernel, &dims, &mut params)? };
        self.results.end(index, stream)
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        Ok(match self.results.complete()? {
            None => None,
            Some((index, values)) => {
                let sum = values.expect("ssim launches every frame")[0];
                self.outputs
                    .emit(index, f64::from_bits(sum), self.weights, sink);
                Some(index)
            }
        })
    }
}
