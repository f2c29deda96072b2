//! `float_motion` on the GPU: the blur of this frame's and the previous
//! frame's reference luma and the sum of their absolute differences in one
//! kernel (kernels/float_motion.cu), the previous luma kept on the device;
//! scores and the `motion2`/`motion3` window are the CPU extractor's.
//!
//! The blurred samples are the CPU's bit for bit; the CPU adds each row's
//! differences in float, the kernel adds them in double (fixed order), so
//! `motion` agrees within float rounding of the CPU's sum (tolerance in
//! docs/gpu-testing.md).

use super::float_common::{doubles, luma_scale, sample_suffix, PartialSums};
use super::readback::Readback;
use super::GpuExtractor;
use super::GpuTwin;
use crate::error::Result;
use crate::feature::float_motion::{luma_5_tap_only, FloatMotionOutputs, FILTER_5};
use crate::feature::motion::FrameOrder;
use crate::feature::{FeatureSink, Options};
use crate::gpu::args::{KernelArg, KernelArgs};
use crate::gpu::device::{DeviceBuffer, Function, Gpu, Stream};
use crate::gpu::driver::{Copy2d, LaunchDims, Memory};
use crate::gpu::kernels;
use crate::gpu::kernels::{kernel_source, KernelSource};
use crate::gpu::planes::{FramePlanes, PairPlanes, PITCH_ALIGN};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

/// kernels/float_motion.cu.
pub(crate) static KERNELS: KernelSource = kernel_source!("float_motion.cu");

/// The GPU version named by the CPU extractor's registry record: the
/// default 5-tap blur of luma alone (other blurs, chroma and the halved
/// planes are scored by the CPU extractor).
pub(crate) static TWIN: GpuTwin = GpuTwin {
    create: |requests, format, gpu| {
        let [(_, options)] = requests else {
            return None;
        };
        if !luma_5_tap_only(options) {
            return None;
        }
        Some(
            GpuFloatMotion::create(options, format, gpu)
                .map(|x| Box::new(x) as Box<dyn GpuExtractor>),
        )
    },
    modules: &[&KERNELS],
    backends: super::EVERY_BACKEND,
};

/// Threads per block and output tile (kernels/float_motion.cu).
const THREADS: u32 = 256;
const TILE_W: u32 = 64;
const TILE_H: u32 = 16;

/// `struct Filter5` of the kernel.
#[repr(C)]
#[derive(Clone, Copy)]
struct Filter5([f32; 5]);

// SAFETY: a repr(C) copy of the kernel's struct, plain floats.
unsafe impl KernelArg for Filter5 {}

/// The device side (none with `motion_force_zero`).
struct Work {
    sad: Function,
    sums: PartialSums,
    /// The previous frame's reference luma, as the shared plane holds it.
    previous: DeviceBuffer,
    previous_pitch: usize,
}

pub(super) struct GpuFloatMotion {
    outputs: FloatMotionOutputs,
    format: PictureFormat,
    work: Option<Work>,
    results: Readback,
    /// Frames must be queued in order from 0.
    order: FrameOrder,
}

impl GpuFloatMotion {
    pub(super) fn create(options: &Options, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        let outputs = FloatMotionOutputs::create(options, format)?;
        let work = if outputs.force_zero() {
            None
        } else {
            let module = kernels::load(gpu, &KERNELS)?;
            let (w, h) = format.plane_size(PlaneId::Y);
            let previous_pitch =
                (w * format.bytes_per_sample()).div_ceil(PITCH_ALIGN) * PITCH_ALIGN;
            let blocks = w.div_ceil(TILE_W as usize) * h.div_ceil(TILE_H as usize);
            Some(Work {
                sad: module.function(&format!(
                    "float_motion_sad_{}",
                    sample_suffix(format.bytes_per_sample())
                ))?,
                sums: PartialSums::new(gpu, &module, 1, blocks as u32)?,
                previous: gpu.buffer(previous_pitch * h)?,
                previous_pitch,
            })
        };
        Ok(Self {
            results: Readback::new(gpu, 1)?,
            outputs,
            format: *format,
            work,
            order: FrameOrder::default(),
        })
    }
}

impl GpuExtractor for GpuFloatMotion {
    fn name(&self) -> &'static str {
        "float_motion"
    }

    fn planes(&self) -> PairPlanes {
        // Motion compares reference frames with each other only.
        PairPlanes {
            reference: PlaneMask::LUMA,
            distorted: PlaneMask::NONE,
        }
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        self.order.admit("float_motion", index)?;
        let Some(work) = &self.work else {
            self.results.skip(index);
            return Ok(());
        };
        let current = frame.reference(PlaneId::Y)?;
        if index == 0 {
            self.results.skip(index);
        } else {
            let out = self.results.begin(stream)?;
            let (w, h) = (current.width as u32, current.height as u32);
            let mut args = KernelArgs::new();
            args.arg(work.previous.ptr())
                .arg(work.previous_pitch as u32)
                .arg(current.ptr)
                .arg(current.pitch as u32)
                .arg(w as i32)
                .arg(h as i32)
                .arg(luma_scale(self.format.bit_depth))
                .arg(Filter5(FILTER_5))
                .arg(work.sums.quantities(0..1));
            let dims = LaunchDims {
                grid: (w.div_ceil(TILE_W), h.div_ceil(TILE_H), 1),
                block: (THREADS, 1, 1),
                shared_bytes: 0,
            };
            // SAFETY: the arguments match float_motion_sad_*; the planes are
            // ours or context-owned and outlive the stream's work.
            unsafe { stream.launch(&work.sad, &dims, &mut args)? };
            work.sums.reduce_into(out.cast(), stream)?;
            self.results.end(index, stream)?;
        }
        // Keep this frame's luma for the next frame (after the kernel that
        // read the previous one, in stream order).
        let copy = Copy2d {
            src: Memory::Device(current.ptr),
            src_pitch: current.pitch,
            dst: work.previous.ptr(),
            dst_pitch: work.previous_pitch,
            width_bytes: current.width * self.format.bytes_per_sample(),
            height: current.height,
        };
        // SAFETY: both buffers cover the rows and outlive the stream's work.
        unsafe { stream.copy_2d(&copy) }
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        Ok(match self.results.complete()? {
            None => None,
            Some((index, values)) => {
                let area = self.format.width as usize * self.format.height as usize;
                // The CPU's last steps: the sum as a float, divided in float.
                let score = values.map(|v| (doubles(&v)[0] as f32 / area as f32) as f64);
                self.outputs.frame(index, score, sink);
                Some(index)
            }
        })
    }

    fn flush(&mut self, sink: &mut FeatureSink) -> Result<()> {
        self.outputs.flush(sink);
        Ok(())
    }
}
