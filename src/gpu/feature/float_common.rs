//! What the float GPU extractors share: deterministic double sums (each
//! block writes its partial to a slot of its own, `float_reduce_partials`
//! adds a quantity's slots in a fixed order, kernels/float_common.cuh),
//! read back per frame ([`FrameSums`]), and the conversion of the shared
//! planes' samples to libvmaf's float scale.

use super::readback::Readback;
use crate::error::Result;
use crate::feature::common::picture_copy::power_of_two_divisor;
use crate::gpu::args::KernelArgs;
use crate::gpu::device::{DeviceBuffer, Function, Gpu, Module, Stream};
use crate::gpu::driver::LaunchDims;
use crate::gpu::slice::DeviceSlice;
use std::ops::Range;
use std::sync::Arc;

/// Threads of `float_reduce_partials` (`REDUCE_THREADS`).
const REDUCE_THREADS: u32 = 256;

/// Per-block double partials of `quantities` sums, `stride` slots each,
/// and the kernel that adds them up.
pub(super) struct PartialSums {
    buffer: DeviceBuffer,
    quantities: u32,
    stride: u32,
    reduce: Function,
}

impl PartialSums {
    /// Zeroed slots: slots no block writes (a smaller scale's) add 0.
    pub(super) fn new(
        gpu: &Gpu,
        module: &Arc<Module>,
        quantities: u32,
        stride: u32,
    ) -> Result<Self> {
        let buffer = gpu.buffer(quantities as usize * stride as usize * 8)?;
        let stream = gpu.stream()?;
        stream.fill_u32(&buffer, 0)?;
        stream.synchronize()?;
        Ok(Self {
            buffer,
            quantities,
            stride,
            reduce: module.function("float_reduce_partials")?,
        })
    }

    /// The slots of quantities `range`, where a launch writes its blocks'
    /// partials (quantity `q`, block `b` at `q * stride + b` of the view's
    /// first quantity).
    pub(super) fn quantities(&self, range: Range<u32>) -> DeviceSlice<f64> {
        let stride = self.stride as usize;
        self.buffer
            .slice(range.start as usize * stride..range.end as usize * stride)
    }

    /// Slots per quantity.
    pub(super) fn stride(&self) -> u32 {
        self.stride
    }

    /// Queues the totals of every quantity into `out` (`quantities`
    /// doubles), after the kernels that wrote the partials.
    pub(super) fn reduce_into(&self, out: DeviceSlice<f64>, stream: &Stream) -> Result<()> {
        let mut args = KernelArgs::new();
        args.arg(self.buffer.slice::<f64>(..))
            .arg(self.stride)
            .arg(out.slice(..self.quantities as usize));
        let dims = LaunchDims {
            grid: (self.quantities, 1, 1),
            block: (REDUCE_THREADS, 1, 1),
            shared_bytes: 0,
        };
        // SAFETY: the arguments match float_reduce_partials; the partials
        // are ours and `out` is a live result buffer of `quantities` words.
        unsafe { stream.launch(&self.reduce, &dims, &mut args) }
    }
}

/// A float extractor's per-frame totals: its kernels write per-block
/// partials, one reduction adds them into the frame's result slot, and the
/// slot is read back as doubles.
pub(super) struct FrameSums {
    partials: PartialSums,
    results: Readback,
}

impl FrameSums {
    /// `quantities` totals a frame, each from up to `stride` blocks.
    pub(super) fn new(
        gpu: &Gpu,
        module: &Arc<Module>,
        quantities: u32,
        stride: u32,
    ) -> Result<Self> {
        Ok(Self {
            partials: PartialSums::new(gpu, module, quantities, stride)?,
            results: Readback::new(gpu, quantities as usize)?,
        })
    }

    /// Where the kernels write their partials.
    pub(super) fn partials(&self) -> &PartialSums {
        &self.partials
    }

    /// Clears the next frame's totals on `stream` and returns them; the
    /// frame's kernels (writing [`FrameSums::partials`]) follow, then
    /// [`FrameSums::end`] with these totals.
    pub(super) fn begin(&mut self, stream: &Stream) -> Result<DeviceSlice<f64>> {
        Ok(self.results.begin(stream)?.cast())
    }

    /// Queues the reduction of the partials into `totals` (from
    /// [`FrameSums::begin`]) and their copy back for frame `index`.
    pub(super) fn end(
        &mut self,
        index: u32,
        totals: DeviceSlice<f64>,
        stream: &Stream,
    ) -> Result<()> {
        self.partials.reduce_into(totals, stream)?;
        self.results.end(index, stream)
    }

    /// Waits for the oldest frame: its index and totals; `None` when
    /// nothing is queued.
    pub(super) fn complete(&mut self, extractor: &str) -> Result<Option<(u32, Vec<f64>)>> {
        Ok(self
            .results
            .complete_launched(extractor)?
            .map(|(index, words)| (index, doubles(&words))))
    }
}

/// Result words read back as the doubles the kernels wrote.
pub(super) fn doubles(words: &[u64]) -> Vec<f64> {
    words.iter().map(|&w| f64::from_bits(w)).collect()
}

/// `1 / divisor` of libvmaf's float conversion for `bit_depth`-bit
/// samples (float_vif, float_adm and float_motion's `copy_luma`).
pub(super) fn luma_scale(bit_depth: u8) -> f32 {
    1.0 / power_of_two_divisor(bit_depth)
}

/// The kernel variant for the samples' width.
pub(super) fn sample_suffix(bytes_per_sample: usize) -> &'static str {
    if bytes_per_sample == 1 {
        "u8"
    } else {
        "u16"
    }
}
