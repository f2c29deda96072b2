//! A producer's frame: its description (memory, layout), its acquire fence
//! and its release signals, shared by every context it is submitted to.
//!
//! `Frame` is reference-counted. The producer's handle and each context's
//! reference keep it alive; a context drops its reference once its last
//! reader of the frame has finished. When the last reference goes, the
//! release signals fire, in the order given. Error paths drop references
//! too, so a refused or failed frame is still released: nothing is lost.

use super::fence::{Acquire, Release};
use super::layout::{check_plane, PixelFormat, PlaneLayout};
use super::memory::Memory;
use super::ImportError;
use crate::error::Result;
use crate::picture::PictureFormat;
use std::sync::{Arc, Mutex, MutexGuard};

/// Where one memory plane of a frame is: which memory object of the frame,
/// and the plane's offset and pitch in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlaneDesc {
    pub memory: usize,
    pub layout: PlaneLayout,
}

/// What a frame is and where it lives.
#[derive(Debug)]
pub struct FrameDesc {
    pub width: u32,
    pub height: u32,
    pub format: PixelFormat,
    /// The memory objects the planes live in (one for all planes, or one
    /// per plane).
    pub memory: Vec<Memory>,
    /// One per memory plane of `format`.
    pub planes: Vec<PlaneDesc>,
}

impl FrameDesc {
    /// A frame whose planes all live in one memory object.
    pub fn new(
        width: u32,
        height: u32,
        format: PixelFormat,
        memory: Memory,
        planes: &[PlaneLayout],
    ) -> Self {
        Self {
            width,
            height,
            format,
            memory: vec![memory],
            planes: planes
                .iter()
                .map(|&layout| PlaneDesc { memory: 0, layout })
                .collect(),
        }
    }

    /// A frame with one memory object per plane (arrays, textures, separate
    /// buffers).
    pub fn per_plane(
        width: u32,
        height: u32,
        format: PixelFormat,
        planes: Vec<(Memory, PlaneLayout)>,
    ) -> Self {
        let (memory, layouts): (Vec<_>, Vec<_>) = planes.into_iter().unzip();
        Self {
            width,
            height,
            format,
            memory,
            planes: layouts
                .into_iter()
                .enumerate()
                .map(|(memory, layout)| PlaneDesc { memory, layout })
                .collect(),
        }
    }

    /// The format the engine scores this frame as.
    pub fn picture_format(&self) -> Result<PictureFormat> {
        self.format.picture_format(self.width, self.height)
    }

    /// An error about this frame's memory object `memory`.
    pub fn error(&self, memory: usize) -> ImportError {
        let m = self.memory.get(memory);
        let mut e = ImportError::new(m.map_or("unknown", |m| m.kind()), self.format.to_string());
        if let Some(modifier) = m.and_then(|m| m.modifier()) {
            e = e.modifier(format!("{modifier:?}"));
        }
        e
    }

    /// Checks the planes against the format and the memory behind them.
    pub fn validate(&self) -> Result<()> {
        self.picture_format()
            .map_err(|e| self.error(0).reason(e.to_string()))?;
        let wanted = self.format.memory_planes();
        if self.planes.len() != wanted {
            return Err(self
                .error(0)
                .reason(format!(
                    "{} planes described, the format has {wanted}",
                    self.planes.len()
                ))
                .into());
        }
        for (i, plane) in self.planes.iter().enumerate() {
            let Some(memory) = self.memory.get(plane.memory) else {
                return Err(self
                    .error(0)
                    .plane(i)
                    .reason(format!(
                        "names memory object {} of {}",
                        plane.memory,
                        self.memory.len()
                    ))
                    .into());
            };
            if let Some(modifier) = memory.modifier() {
                if modifier != drm_fourcc::DrmModifier::Linear {
                    return Err(self
                        .error(plane.memory)
                        .plane(i)
                        .reason("only linear (untiled) dma-bufs can be read")
                        .into());
                }
            }
            if memory.is_per_plane() {
                let shared = self.planes.iter().filter(|p| p.memory == plane.memory);
                if shared.count() > 1 {
                    return Err(self
                        .error(plane.memory)
                        .plane(i)
                        .reason("an array or texture holds one plane: give each plane its own")
                        .into());
                }
                continue;
            }
            check_plane(
                self.format,
                self.width,
                self.height,
                i,
                &plane.layout,
                memory.bytes(),
                || self.error(plane.memory),
            )?;
        }
        Ok(())
    }
}

struct Shared {
    desc: FrameDesc,
    acquire: Mutex<Acquire>,
    releases: Mutex<Vec<Release>>,
}

/// A producer's frame, shared by the contexts it is submitted to; released
/// after the last one has read it (see the module docs).
#[derive(Clone)]
pub struct Frame(Arc<Shared>);

impl Frame {
    /// Checks `desc` and wraps it with its fences. A refused frame fires its
    /// release signals before the error returns (the producer may reuse the
    /// memory) and closes the fds it was given.
    pub fn new(desc: FrameDesc, acquire: Acquire, releases: Vec<Release>) -> Result<Frame> {
        let frame = Frame(Arc::new(Shared {
            desc,
            acquire: Mutex::new(acquire),
            releases: Mutex::new(releases),
        }));
        frame.desc().validate()?;
        Ok(frame)
    }

    pub fn desc(&self) -> &FrameDesc {
        &self.0.desc
    }

    /// The acquire fence, for a context to wait on. Whoever sees it
    /// signalled on the host replaces it with [`Acquire::None`].
    pub(crate) fn acquire(&self) -> MutexGuard<'_, Acquire> {
        self.0.acquire.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The release signals not fired yet, for a context that turns device
    /// signals into its own (it must leave host ones in place).
    pub(crate) fn releases(&self) -> MutexGuard<'_, Vec<Release>> {
        self.0.releases.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// References alive (the producer's and the contexts').
    pub fn references(&self) -> usize {
        Arc::strong_count(&self.0)
    }
}

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let d = self.desc();
        write!(f, "Frame({}x{} {}", d.width, d.height, d.format)?;
        for m in &d.memory {
            write!(f, ", {}", m.kind())?;
        }
        f.write_str(")")
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        let releases = std::mem::take(self.releases.get_mut().unwrap_or_else(|e| e.into_inner()));
        for release in releases {
            fire_on_host(release);
        }
    }
}

/// Fires a release signal from the host. Device signals still here were
/// never handed to a device (the frame reached no GPU context): their
/// producer is not waiting on a device, and nothing read the frame there,
/// so they are dropped; see `gpu` for the device side.
fn fire_on_host(release: Release) {
    match release {
        Release::Host(fence) => fence.signal(),
        Release::Callback(f) => f(),
        #[cfg(feature = "vulkan")]
        Release::VulkanTimeline(t) => {
            let info = ash::vk::SemaphoreSignalInfo::default()
                .semaphore(t.semaphore())
                .value(t.value());
            // SAFETY: the producer gave a live timeline semaphore of `device`.
            // A failure has no one to report to: the producer's wait times
            // out and names the semaphore.
            let _ = unsafe { t.device().signal_semaphore(&info) };
        }
        Release::DeviceEvent(_) | Release::VulkanSemaphoreFd { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::import::{HostFence, HostMemory};
    use std::ptr::NonNull;

    fn host_nv12(bytes: &mut [u8], width: u32, height: u32, pitch: u64) -> FrameDesc {
        // SAFETY: `bytes` outlives every frame the test builds from it.
        let memory = Memory::Host(unsafe {
            HostMemory::new(NonNull::new(bytes.as_mut_ptr()).unwrap(), bytes.len())
        });
        FrameDesc::new(
            width,
            height,
            PixelFormat::Nv12,
            memory,
            &[
                PlaneLayout::new(0, pitch),
                PlaneLayout::new(pitch * height as u64, pitch),
            ],
        )
    }

    #[test]
    fn release_fires_after_the_last_reference() {
        let mut bytes = vec![0u8; 64 * 48];
        let fence = HostFence::new();
        let frame = Frame::new(
            host_nv12(&mut bytes, 64, 32, 64),
            Acquire::None,
            vec![Release::Host(fence.clone())],
        )
        .unwrap();
        let reader = frame.clone();
        drop(frame);
        assert!(!fence.is_signalled(), "a reader still holds the frame");
        drop(reader);
        assert!(fence.is_signalled());
    }

    #[test]
    fn a_refused_frame_is_released_and_the_error_names_it() {
        let mut bytes = vec![0u8; 64 * 40];
        let fence = HostFence::new();
        let err = Frame::new(
            host_nv12(&mut bytes, 64, 32, 64),
            Acquire::None,
            vec![Release::Host(fence.clone())],
        )
        .unwrap_err();
        assert!(fence.is_signalled(), "refused frames are released");
        assert!(matches!(err, Error::Import { plane: Some(1), .. }), "{err}");
        let msg = err.to_string();
        assert!(msg.contains("host memory (NV12, plane 1)"), "{msg}");
        assert!(msg.contains("memory holds 2560"), "{msg}");
    }

    #[test]
    fn tiled_dma_bufs_are_refused_naming_the_modifier() {
        let fd = nix::sys::memfd::memfd_create(
            c"vmafx-test",
            nix::sys::memfd::MemFdCreateFlag::MFD_CLOEXEC,
        )
        .unwrap();
        let desc = FrameDesc::new(
            64,
            32,
            PixelFormat::Nv12,
            Memory::DmaBuf {
                fd,
                bytes: 64 * 48,
                modifier: drm_fourcc::DrmModifier::I915_x_tiled,
            },
            &[PlaneLayout::new(0, 64), PlaneLayout::new(64 * 32, 64)],
        );
        let err = Frame::new(desc, Acquire::None, vec![]).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("dma-buf memory (NV12, plane 0, modifier I915_x_tiled)"),
            "{msg}"
        );
    }

    #[test]
    fn frames_cross_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Frame>();
    }
}
