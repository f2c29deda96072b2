//! `ssim` (integer_ssim) on the GPU: each window's `w ssim` in a kernel
//! (kernels/integer_ssim.cu) from exact integer moments, and their sum
//! reproduced exactly as the CPU's raster-order running double sum; the
//! weights' sum and the score are the CPU extractor's, so per-frame values
//! are bit-identical.

use super::readback::Readback;
use super::GpuExtractor;
use super::{single_twin, GpuTwin};
use crate::error::{Error, Result};
use crate::feature::integer_ssim::{weight_sum, SsimOutputs};
use crate::feature::{FeatureSink, Options};
use crate::gpu::args::KernelArgs;
use crate::gpu::device::{DeviceBuffer, Function, Gpu, Module, Stream};
use crate::gpu::driver::LaunchDims;
use crate::gpu::kernels;
use crate::gpu::kernels::{kernel_source, KernelSource};
use crate::gpu::planes::{FramePlanes, PairPlanes};
use crate::gpu::slice::DeviceSlice;
use crate::picture::{PictureFormat, PlaneId, PlaneMask};
use std::sync::Arc;

/// kernels/integer_ssim.cu.
pub(crate) static KERNELS: KernelSource = kernel_source!("integer_ssim.cu");

/// The GPU version named by the CPU extractor's registry record.
pub(crate) static TWIN: GpuTwin = single_twin!(GpuIntegerSsim, &[&KERNELS], super::EVERY_BACKEND);

/// The terms kernel's tile (kernels/integer_ssim.cu: TILE_W x TILE_H, one
/// thread per window); the sum's chunk of terms, its block, the bytes of a
/// chunk's map (`ChunkMap`), and the map kernel's block.
const TILE_W: u32 = 32;
const TILE_H: u32 = 8;
const CHUNK: usize = 512;
const SUM_THREADS: u32 = 256;
const MAP_BYTES: usize = 56;
const MAP_THREADS: u32 = 128;

pub(super) struct GpuIntegerSsim {
    outputs: SsimOutputs,
    /// `sum(w)` of every frame (the picture size fixes it).
    weights: f64,
    terms_kernel: Function,
    /// One `w ssim` per pixel; frames reuse it in stream order.
    terms: DeviceBuffer,
    sum: ExactSum,
    results: Readback,
}

impl GpuIntegerSsim {
    pub(super) fn create(options: &Options, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        let outputs = SsimOutputs::create(options, format)?;
        let (w, h) = (format.width as usize, format.height as usize);
        let module = kernels::load(gpu, &KERNELS)?;
        let terms_kernel = module.function(if format.bytes_per_sample() == 1 {
            "ssim_terms_u8"
        } else {
            "ssim_terms_u16"
        })?;
        Ok(Self {
            outputs,
            weights: weight_sum(w, h),
            terms_kernel,
            terms: gpu.buffer(w * h * 8)?,
            sum: ExactSum::new(gpu, &module, w * h)?,
            results: Readback::new(gpu, 1)?,
        })
    }
}

/// The running double sum of `n` device terms in order, bit for bit, by
/// per-chunk binade maps (kernels/integer_ssim.cu, "The frame's sum").
struct ExactSum {
    /// Chunk sums, predicted binades, maps, walk.
    kernels: [Function; 4],
    n: u64,
    chunks: u32,
    /// Per chunk; frames reuse them in stream order.
    chunk_sums: DeviceBuffer,
    binades: DeviceBuffer,
    maps: DeviceBuffer,
}

impl ExactSum {
    fn new(gpu: &Gpu, module: &Arc<Module>, n: usize) -> Result<Self> {
        let chunks = n.div_ceil(CHUNK);
        Ok(Self {
            kernels: [
                module.function("ssim_chunk_sums")?,
                module.function("ssim_predict")?,
                module.function("ssim_maps")?,
                module.function("ssim_walk")?,
            ],
            n: n as u64,
            chunks: u32::try_from(chunks).map_err(|_| Error::Extractor {
                extractor: "ssim".into(),
                reason: format!("{n} windows are too many for the GPU sum"),
            })?,
            chunk_sums: gpu.buffer(chunks * 8)?,
            binades: gpu.buffer(chunks * 4)?,
            maps: gpu.buffer(chunks * MAP_BYTES)?,
        })
    }

    /// Queues the sum of the `n` terms at `terms` into the double `total`.
    fn enqueue(
        &self,
        stream: &Stream,
        terms: DeviceSlice<f64>,
        total: DeviceSlice<f64>,
    ) -> Result<()> {
        let terms = terms.slice(..self.n as usize);
        let total = total.slice(..1);
        let (n, chunks) = (self.n, self.chunks);
        let sums = self.chunk_sums.slice::<f64>(..);
        let binades = self.binades.slice::<u32>(..);
        let maps = self.maps.slice::<u8>(..);
        let [chunk_sums, predict, map, walk] = &self.kernels;
        let dims = |blocks: u32, threads: u32| LaunchDims {
            grid: (blocks, 1, 1),
            block: (threads, 1, 1),
            shared_bytes: 0,
        };
        // SAFETY: the four launches' arguments match ssim_chunk_sums,
        // ssim_predict, ssim_maps and ssim_walk in turn; the terms, the
        // total and our buffers outlive the stream's work.
        unsafe {
            let mut args = KernelArgs::new();
            args.arg(terms).arg(n).arg(sums);
            stream.launch(chunk_sums, &dims(chunks, SUM_THREADS), &mut args)?;
            let mut args = KernelArgs::new();
            args.arg(sums).arg(chunks).arg(binades);
            stream.launch(predict, &dims(1, SUM_THREADS), &mut args)?;
            let mut args = KernelArgs::new();
            args.arg(terms).arg(n).arg(binades).arg(chunks).arg(maps);
            let blocks = chunks.div_ceil(MAP_THREADS);
            stream.launch(map, &dims(blocks, MAP_THREADS), &mut args)?;
            let mut args = KernelArgs::new();
            args.arg(terms).arg(n).arg(maps).arg(chunks).arg(total);
            stream.launch(walk, &dims(1, 32), &mut args)
        }
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
        let total = self.results.begin(stream)?;
        let (r, d) = (frame.reference(PlaneId::Y)?, frame.distorted(PlaneId::Y)?);
        let (w, h) = (r.width as u32, r.height as u32);
        let (c1, c2) = self.outputs.c_bases();
        let terms = self.terms.slice::<f64>(..);
        let mut args = KernelArgs::new();
        args.arg(r.ptr)
            .arg(r.pitch as u32)
            .arg(d.ptr)
            .arg(d.pitch as u32)
            .arg(w)
            .arg(h)
            .arg(c1)
            .arg(c2)
            .arg(terms);
        let dims = LaunchDims {
            grid: (w.div_ceil(TILE_W), h.div_ceil(TILE_H), 1),
            block: (TILE_W * TILE_H, 1, 1),
            shared_bytes: 0,
        };
        // SAFETY: the arguments match ssim_terms_*; the planes
        // (context-owned) and `terms` outlive the stream's work.
        unsafe { stream.launch(&self.terms_kernel, &dims, &mut args)? };
        self.sum.enqueue(stream, terms, total.cast())?;
        self.results.end(index, stream)
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        let Some((index, values)) = self.results.complete_launched("ssim")? else {
            return Ok(None);
        };
        let sum = f64::from_bits(values[0]);
        self.outputs.emit(index, sum, self.weights, sink);
        Ok(Some(index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::emu::{self, EmuDriver};

    /// `terms` summed on the emulated device.
    fn device_sum(gpu: &Gpu, terms: &[f64]) -> f64 {
        let module = kernels::load(gpu, &KERNELS).unwrap();
        let sum = ExactSum::new(gpu, &module, terms.len()).unwrap();
        let stream = gpu.stream().unwrap();
        let on_device = gpu.upload(terms).unwrap();
        let total = gpu.buffer(8).unwrap();
        sum.enqueue(&stream, on_device.slice(..), total.slice(..))
            .unwrap();
        let mut host = gpu.pinned(8).unwrap();
        // SAFETY: read after the synchronize below.
        unsafe { stream.copy_to_pinned(&mut host, &total).unwrap() };
        stream.synchronize().unwrap();
        f64::from_ne_bytes(host.as_slice()[..8].try_into().unwrap())
    }

    /// Term sequences that stress the binade maps: ties to even (terms of
    /// exactly half an ulp of the running sum), a sum falling back through
    /// binades (negative terms), sums leaving their binade inside a chunk
    /// and coming back, exact cancellation to 0, tiny and huge terms, and
    /// pseudo-random SSIM-like terms over many chunks. Each must
    /// equal the plain running sum bit for bit.
    #[test]
    fn the_chunked_sum_is_the_running_sum() {
        if let Some(why) = emu::unavailable() {
            crate::testing::skip("VMAFX_REQUIRE_GXX", why);
            return;
        }
        let gpu = EmuDriver::gpu(&[], &[]);
        let mut seed = 17u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let random: Vec<f64> = (0..40_000)
            .map(|_| 65536.0 * (next() * 1.1 - 0.1))
            .collect();
        // Once the sum is 2^40 (ulp 2^-12), these are ties half the time.
        let mut ties = vec![1099511627776.0];
        ties.extend((0..5_000).map(|i| f64::from(i % 7) * 2f64.powi(-13) + 3.0));
        let falling: Vec<f64> = (0..6_000)
            .map(|i| {
                if i < 3_000 {
                    40000.0 + next()
                } else {
                    -40000.0 - next()
                }
            })
            .collect();
        let cancelling: Vec<f64> = (0..3_000)
            .map(|i| if i % 2 == 0 { 0.75 } else { -0.75 })
            .collect();
        // Sums just below and just above 2^31 that leave their binade and
        // come back within a chunk: a map must not apply there.
        let excursion = |start: f64, step: f64, next: &mut dyn FnMut() -> f64| {
            let mut terms = vec![start];
            for i in 0..4_000 {
                let t = step + next();
                terms.push(if i % 4 < 2 { t } else { -t });
            }
            terms
        };
        let above = excursion(2147483648.0 - 1000.0, 600.0, &mut next);
        let below = excursion(2147483648.0 + 1000.0, -600.0, &mut next);
        let extremes: Vec<f64> = (0..3_000)
            .map(|i| match i % 3 {
                0 => 1e-300,
                1 => 1e15 * next(),
                _ => -next(),
            })
            .collect();
        for (what, terms) in [
            ("random", &random),
            ("ties", &ties),
            ("falling", &falling),
            ("cancelling", &cancelling),
            ("extremes", &extremes),
            ("excursion above", &above),
            ("excursion below", &below),
            ("one term", &vec![0.5]),
        ] {
            let running = terms.iter().fold(0.0, |s, t| s + t);
            let got = device_sum(&gpu, terms);
            assert_eq!(
                got.to_bits(),
                running.to_bits(),
                "{what}: {got:e} vs {running:e}"
            );
        }
    }
}
