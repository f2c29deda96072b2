//! A pool of device frames for producers that want the library to allocate
//! (decoders writing NV12/P010 into frames they recycle): `take` hands out a
//! free frame, the producer writes it on the device and turns it into a
//! [`Frame`]; once every context has read it, its release returns it to the
//! pool. Planes are aligned so that they are read in place.

use super::bind::SourcePlane;
use super::device::{DeviceBuffer, Gpu, Stream};
use super::driver::{Copy2d, Memory as CopySource};
use super::planes::PITCH_ALIGN;
use crate::error::{Error, Result};
use crate::import::pack::pack_plane;
use crate::import::{
    Acquire, DevicePtr, Frame, FrameDesc, Memory, PixelFormat, PlaneLayout, Release,
};
use crate::picture::HostPicture;
use crossbeam_channel::{Receiver, Sender};
use std::time::Duration;

/// Frames of one size and layout in device memory.
pub struct FramePool {
    width: u32,
    height: u32,
    format: PixelFormat,
    layouts: Vec<PlaneLayout>,
    free: Receiver<DeviceBuffer>,
    back: Sender<DeviceBuffer>,
    count: usize,
}

/// A pool frame the producer is writing.
pub struct PooledFrame {
    buffer: Option<DeviceBuffer>,
    back: Sender<DeviceBuffer>,
    width: u32,
    height: u32,
    format: PixelFormat,
    layouts: Vec<PlaneLayout>,
}

impl FramePool {
    pub fn new(
        gpu: &Gpu,
        width: u32,
        height: u32,
        format: PixelFormat,
        count: usize,
    ) -> Result<Self> {
        format.picture_format(width, height)?;
        let mut layouts = Vec::new();
        let mut bytes = 0usize;
        for plane in 0..format.memory_planes() {
            let (row_bytes, rows) = format.plane_extent(plane, width, height);
            let pitch = row_bytes.div_ceil(PITCH_ALIGN) * PITCH_ALIGN;
            layouts.push(PlaneLayout::new(bytes as u64, pitch as u64));
            bytes += pitch * rows;
        }
        // Whole pages (64 KiB covers every host page size), so a frame can
        // be exported as a dma-buf in one piece.
        let bytes = bytes.div_ceil(1 << 16) << 16;
        let (back, free) = crossbeam_channel::unbounded();
        for _ in 0..count {
            back.send(gpu.buffer(bytes)?)
                .expect("the pool holds the receiver");
        }
        Ok(Self {
            width,
            height,
            format,
            layouts,
            free,
            back,
            count,
        })
    }

    /// A free frame, waiting up to `timeout` for one to be released.
    pub fn take(&self, timeout: Duration) -> Result<PooledFrame> {
        let buffer = self
            .free
            .recv_timeout(timeout)
            .map_err(|_| Error::FenceTimeout {
                fence: format!(
                    "frame pool release (all {} frames still held by readers)",
                    self.count
                ),
                waited_ms: timeout.as_millis() as u64,
            })?;
        Ok(PooledFrame {
            buffer: Some(buffer),
            back: self.back.clone(),
            width: self.width,
            height: self.height,
            format: self.format,
            layouts: self.layouts.clone(),
        })
    }

    /// Frames free now.
    pub fn free_count(&self) -> usize {
        self.free.len()
    }

    /// Frames in the pool, free or held.
    pub fn count(&self) -> usize {
        self.count
    }
}

impl PooledFrame {
    /// Each memory plane's address and pitch, for the producer to write.
    pub fn planes(&self) -> Vec<SourcePlane> {
        let base = self.buffer.as_ref().expect("held until into_frame").ptr();
        self.layouts
            .iter()
            .map(|l| SourcePlane {
                ptr: base + l.offset,
                pitch: l.pitch as usize,
            })
            .collect()
    }

    pub fn format(&self) -> PixelFormat {
        self.format
    }

    /// Writes a host picture into the frame in the pool's layout, on
    /// `stream`, and waits for the copy (the packed bytes are temporary): for
    /// producers that decode on the host, and for tests and examples that
    /// play decoder. The picture's bit depth should be the layout's.
    pub fn write_from_host(&self, stream: &Stream, picture: &HostPicture) -> Result<()> {
        let f = picture.format();
        for (i, dst) in self.planes().iter().enumerate() {
            let (row_bytes, rows) = self.format.plane_extent(i, f.width, f.height);
            let bytes = pack_plane(picture, self.format, i, dst.pitch);
            let copy = Copy2d {
                src: CopySource::Host(bytes.as_ptr()),
                src_pitch: dst.pitch,
                dst: dst.ptr,
                dst_pitch: dst.pitch,
                width_bytes: row_bytes,
                height: rows,
            };
            // SAFETY: the frame holds these rows; `bytes` lives until the
            // copy has finished (synchronized before it drops).
            unsafe { stream.copy_2d(&copy)? };
            stream.synchronize()?;
        }
        Ok(())
    }

    /// The device the frame is on.
    pub fn gpu(&self) -> &Gpu {
        self.buffer.as_ref().expect("held until into_frame").gpu()
    }

    /// The frame's memory exported as a Linux dma-buf (CUDA), e.g. for a
    /// consumer that takes dma-bufs, or to hand its implicit fence over as
    /// a sync_file (`import::sync_file`).
    pub fn export_dmabuf(&self) -> Result<std::os::fd::OwnedFd> {
        let buffer = self.buffer.as_ref().expect("held until into_frame");
        // SAFETY: our live buffer, page-aligned and whole pages long.
        unsafe { self.gpu().export_dmabuf(buffer.ptr(), buffer.len()) }
    }

    /// The written frame, to submit; `acquire` says when it is written.
    /// Once released it returns to the pool (after `releases` fire).
    pub fn into_frame(mut self, acquire: Acquire, mut releases: Vec<Release>) -> Result<Frame> {
        let buffer = self.buffer.take().expect("held until into_frame");
        // SAFETY: our pool's buffer, moved into the release callback below,
        // so it lives (unwritten by the pool) until the frame is released.
        let memory = Memory::Device(unsafe { DevicePtr::new(buffer.ptr(), buffer.len() as u64) });
        let back = self.back.clone();
        releases.push(Release::Callback(Box::new(move || {
            // The pool may be gone: then the buffer is freed here.
            let _ = back.send(buffer);
        })));
        let desc = FrameDesc::new(self.width, self.height, self.format, memory, &self.layouts);
        Frame::new(desc, acquire, releases)
    }
}

impl std::fmt::Debug for PooledFrame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PooledFrame({}x{} {})",
            self.width, self.height, self.format
        )
    }
}

impl Drop for PooledFrame {
    fn drop(&mut self) {
        if let Some(buffer) = self.buffer.take() {
            let _ = self.back.send(buffer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::mock::MockDriver;
    use crate::import::HostFence;

    #[test]
    fn released_frames_return_to_the_pool() {
        let (mock, gpu) = MockDriver::gpu();
        let pool = FramePool::new(&gpu, 1920, 1080, PixelFormat::P010, 2).unwrap();
        let a = pool.take(Duration::ZERO).unwrap();
        let planes = a.planes();
        let picture = HostPicture::new(PixelFormat::P010.picture_format(1920, 1080).unwrap());
        a.write_from_host(&gpu.stream().unwrap(), &picture).unwrap();
        let writes: Vec<_> = mock
            .log()
            .into_iter()
            .filter_map(|c| match c {
                crate::gpu::mock::Call::Copy2d {
                    dst,
                    width_bytes,
                    height,
                    ..
                } => Some((dst, width_bytes, height)),
                _ => None,
            })
            .collect();
        assert_eq!(
            writes,
            [(planes[0].ptr, 3840, 1080), (planes[1].ptr, 3840, 540)],
            "each memory plane written once, at the pool's layout"
        );
        assert_eq!(planes.len(), 2);
        assert_eq!(planes[0].pitch, 3840);
        assert_eq!(planes[1].ptr - planes[0].ptr, 3840 * 1080);
        let dmabuf = a.export_dmabuf().unwrap();
        drop(dmabuf);
        assert!(planes.iter().all(|p| p.ptr % PITCH_ALIGN as u64 == 0));
        let b = pool.take(Duration::ZERO).unwrap();
        let err = pool.take(Duration::from_millis(1)).unwrap_err();
        assert!(err.to_string().contains("frame pool release"), "{err}");
        let fence = HostFence::new();
        let frame = a
            .into_frame(Acquire::None, vec![Release::Host(fence.clone())])
            .unwrap();
        let reader = frame.clone();
        drop(frame);
        assert_eq!(pool.free_count(), 0, "a reader still holds it");
        drop(reader);
        assert!(fence.is_signalled());
        assert_eq!(pool.free_count(), 1);
        drop(b); // never submitted: back at once
        assert_eq!(pool.free_count(), 2);
    }
}
