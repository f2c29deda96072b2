//! Integer `motion` and `motion_v2` on the GPU: the blurred-difference SAD
//! in one fused kernel (kernels/motion.cu) against earlier reference luma
//! kept on the device; scores and the `motion2`/`motion3` window are the
//! CPU extractor's, so per-frame values are bit-identical. As on the CPU,
//! one instance can write both extractors' names from one SAD per frame.

use super::readback::Readback;
use super::GpuExtractor;
use super::GpuTwin;
use crate::error::Result;
use crate::feature::motion::{self, FrameOrder, MotionOutputs};
use crate::feature::{ExtractorInfo, FeatureSink, Options};
use crate::gpu::args::KernelArgs;
use crate::gpu::device::{DeviceBuffer, Function, Gpu, Stream};
use crate::gpu::driver::{Copy2d, LaunchDims, Memory};
use crate::gpu::kernels;
use crate::gpu::kernels::{kernel_source, KernelSource};
use crate::gpu::planes::{FramePlanes, PairPlanes};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

/// kernels/motion.cu.
pub(crate) static KERNELS: KernelSource = kernel_source!("motion.cu");

/// The GPU version named by `motion`'s and `motion_v2`'s registry records:
/// one instance serves a slot's requests of both (one SAD), up to
/// [`MAX_WIDTH`].
pub(crate) static TWIN: GpuTwin = GpuTwin {
    create: |requests, format, gpu| {
        if format.width > MAX_WIDTH {
            return None;
        }
        GpuMotion::create(requests, format, gpu)
            .map(|x| x.map(|x| Box::new(x) as Box<dyn GpuExtractor>))
    },
    modules: &[&KERNELS],
    backends: super::EVERY_BACKEND,
};

/// The SAD kernel's geometry (kernels/motion.cu): threads per block;
/// columns a warp scores (32 lanes of 4 columns less a 2-column halo on
/// either side); rows a block scores (8 warps of 8 rows).
const THREADS: u32 = 256;
const STRIP_COLS: u32 = 32 * 4 - 4;
const BLOCK_ROWS: u32 = (THREADS / 32) * 8;

/// The widest picture the kernel scores: libvmaf sums each row in a
/// wrapping 32-bit integer, and rows of up to this many pixels (each
/// |value| below 2^16) never wrap, so the kernel adds plain 64-bit sums.
/// Wider pictures use the CPU extractor.
pub(super) const MAX_WIDTH: u32 = 65537;

pub(super) struct GpuMotion {
    /// The extractor named in errors (the first request's).
    name: &'static str,
    /// The name sets written, each with its own window; all fed one SAD.
    outputs: Vec<MotionOutputs>,
    /// How many frames back the SAD looks (the same for every set).
    depth: u32,
    format: PictureFormat,
    /// Earlier reference luma planes: slot `i % depth` holds frame `i`.
    history: Vec<DeviceBuffer>,
    history_pitch: usize,
    sad: Option<Function>,
    results: Readback,
    /// Frames must be queued in order from 0.
    order: FrameOrder,
}

impl GpuMotion {
    /// One instance for `motion`/`motion_v2` requests that can share a SAD
    /// (`None` when they cannot, as on the CPU).
    pub(super) fn create(
        requests: &[(&'static ExtractorInfo, &Options)],
        format: &PictureFormat,
        gpu: &Gpu,
    ) -> Option<Result<Self>> {
        let outputs = motion::joint_outputs(requests, format)?;
        Some(outputs.and_then(|o| Self::with_outputs(requests[0].0.name, o, format, gpu)))
    }

    fn with_outputs(
        name: &'static str,
        outputs: Vec<MotionOutputs>,
        format: &PictureFormat,
        gpu: &Gpu,
    ) -> Result<Self> {
        let depth = outputs[0].depth();
        let (w, h) = (format.width as usize, format.height as usize);
        let history_pitch = (w * format.bytes_per_sample()).div_ceil(256) * 256;
        let (history, sad) = if outputs.iter().all(|o| o.force_zero()) {
            (Vec::new(), None)
        } else {
            let module = kernels::load(gpu, &KERNELS)?;
            let name = match (format.bytes_per_sample(), format.bit_depth) {
                (1, _) => "motion_sad_u8",
                (_, 9..=15) => "motion_sad_u16",
                _ => "motion_sad_u16_wide",
            };
            (
                (0..depth)
                    .map(|_| gpu.buffer(history_pitch * h))
                    .collect::<Result<_>>()?,
                Some(module.function(name)?),
            )
        };
        Ok(Self {
            results: Readback::new(gpu, 1)?,
            name,
            outputs,
            depth,
            format: *format,
            history,
            history_pitch,
            sad,
            order: FrameOrder::default(),
        })
    }
}

impl GpuExtractor for GpuMotion {
    fn name(&self) -> &'static str {
        self.name
    }

    fn planes(&self) -> PairPlanes {
        // Motion compares reference frames with each other only.
        PairPlanes {
            reference: PlaneMask::LUMA,
            distorted: PlaneMask::NONE,
        }
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        self.order.admit(self.name, index)?;
        let Some(sad) = &self.sad else {
            self.results.skip(index);
            return Ok(());
        };
        let cur = frame.reference(PlaneId::Y)?;
        let slot = &self.history[index as usize % self.history.len()];
        if index >= self.depth {
            let total = self.results.begin(stream)?;
            let (w, h) = (cur.width as u32, cur.height as u32);
            let mut args = KernelArgs::new();
            args.arg(slot.ptr())
                .arg(self.history_pitch as u32)
                .arg(cur.ptr)
                .arg(cur.pitch as u32)
                .arg(w)
                .arg(h)
                .arg(u32::from(self.format.bit_depth))
                .arg(total);
            // One block per BLOCK_ROWS x STRIP_COLS tile, the first strip
            // starting two columns left of the picture (grid rows cover up
            // to 65535 * BLOCK_ROWS picture rows).
            let dims = LaunchDims {
                grid: ((w + 2).div_ceil(STRIP_COLS), h.div_ceil(BLOCK_ROWS), 1),
                block: (THREADS, 1, 1),
                shared_bytes: 0,
            };
            // SAFETY: the arguments match motion_sad_*; buffers are ours or
            // context-owned and outlive the stream's work.
            unsafe { stream.launch(sad, &dims, &mut args)? };
            self.results.end(index, stream)?;
        } else {
            self.results.skip(index);
        }
        // Keep this frame's luma for later frames (device to device, after
        // the kernels that read the slot's previous contents, in stream order).
        let copy = Copy2d {
            src: Memory::Device(cur.ptr),
            src_pitch: cur.pitch,
            dst: slot.ptr(),
            dst_pitch: self.history_pitch,
            width_bytes: cur.width * self.format.bytes_per_sample(),
            height: cur.height,
        };
        // SAFETY: both buffers cover the rows and outlive the stream's work.
        unsafe { stream.copy_2d(&copy) }
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        Ok(match self.results.complete()? {
            None => None,
            Some((index, values)) => {
                let area = self.format.width.wrapping_mul(self.format.height);
                for o in &mut self.outputs {
                    let sad = if o.force_zero() {
                        None
                    } else {
                        values.as_ref().map(|v| v[0])
                    };
                    o.frame(index, sad, area, sink);
                }
                Some(index)
            }
        })
    }

    fn flush(&mut self, sink: &mut FeatureSink) -> Result<()> {
        for o in &mut self.outputs {
            o.flush(sink);
        }
        Ok(())
    }
}
