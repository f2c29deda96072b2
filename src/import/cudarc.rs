//! Frames from device buffers a cudarc program owns, with no `unsafe`: the
//! frame takes the buffer (so nothing else can write or free it while
//! vmafx reads it), orders vmafx's reads after the work queued on the
//! buffer's stream, and hands the buffer back once read.

use super::fence::{Acquire, Release};
use super::frame::{Frame, FrameDesc};
use super::layout::{PixelFormat, PlaneLayout};
use super::memory::{DevicePtr, Memory};
use super::ImportError;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use cudarc::driver::{CudaSlice, DevicePtr as _};

impl Frame {
    /// A frame whose planes live in `buffer`, a cudarc device buffer of
    /// `gpu`'s CUDA context, written by work queued on the buffer's stream
    /// (cudarc orders writes from other streams before it). vmafx's reads
    /// wait for that work on the device; the frame owns the buffer until
    /// they are done, then `returned` gets it back (on a library thread,
    /// or before this call returns an error). `gpu::open` and cudarc's
    /// `CudaContext::new` share the device's primary context.
    ///
    /// ```no_run
    /// use cudarc::driver::CudaContext;
    /// use vmafx::import::{Frame, PixelFormat, PlaneLayout};
    ///
    /// let gpu = vmafx::gpu::open(vmafx::gpu::GpuBackend::Cuda, &Default::default())?;
    /// let stream = CudaContext::new(0).unwrap().default_stream();
    /// let nv12 = stream.alloc_zeros::<u8>(1920 * 1080 * 3 / 2).unwrap(); // a decoder writes it
    /// let planes = [PlaneLayout::new(0, 1920), PlaneLayout::new(1920 * 1080, 1920)];
    /// let frame = Frame::from_cuda_slice(&gpu, 1920, 1080, PixelFormat::Nv12, &planes, nv12,
    ///     |buffer| drop(buffer))?; // back in the decoder's pool, say
    /// # Ok::<(), vmafx::Error>(())
    /// ```
    pub fn from_cuda_slice(
        gpu: &Gpu,
        width: u32,
        height: u32,
        format: PixelFormat,
        planes: &[PlaneLayout],
        buffer: CudaSlice<u8>,
        returned: impl FnOnce(CudaSlice<u8>) + Send + 'static,
    ) -> Result<Frame> {
        let refuse = |reason: String| -> Error {
            ImportError::new("cudarc buffer", format.to_string())
                .reason(reason)
                .into()
        };
        let ours = gpu.cuda_context();
        let theirs = buffer.context().cu_ctx() as usize;
        if ours != Some(theirs) {
            let reason = match ours {
                None => format!("a CUDA buffer, but vmafx scores on {}", gpu.describe()),
                Some(_) => format!(
                    "the buffer belongs to another CUDA context (device {}) than vmafx's ({}): \
                     open both on the device's primary context (gpu::open, CudaContext::new)",
                    buffer.ordinal(),
                    gpu.describe()
                ),
            };
            returned(buffer);
            return Err(refuse(reason));
        }
        // The buffer's stream first waits for cudarc's last write from
        // another stream, then the event after it covers both.
        let stream = buffer.stream().clone();
        let (ptr, read) = buffer.device_ptr(&stream);
        drop(read);
        let written = gpu.event()?;
        // SAFETY: `stream` is the buffer's live cudarc stream (held here)
        // of the context checked above.
        unsafe { written.record_on_foreign_stream(stream.cu_stream() as usize)? };
        // SAFETY: the frame owns `buffer` (moved into its release below)
        // until vmafx's reads are done: `num_bytes` of this context's device
        // memory, allocated and unwritten (no one else holds it) all along.
        let memory = Memory::Device(unsafe { DevicePtr::new(ptr, buffer.num_bytes() as u64) });
        let desc = FrameDesc::new(width, height, format, memory, planes);
        let acquire = Acquire::DeviceEvent(written.as_raw());
        // The event lives until the release too (the wait is queued by then).
        let release = Release::Callback(Box::new(move || {
            drop(written);
            returned(buffer);
        }));
        Frame::new(desc, acquire, vec![release])
    }
}
