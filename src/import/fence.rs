//! Fences: the producer's "written" (acquire) and the library's "done
//! reading" (release).
//!
//! Device fences (CUDA/HIP events, Vulkan semaphores imported from fds) are
//! waited and signalled on the library stream, never by the host. Host
//! fences (sync_file fds, host-waited Vulkan timelines, EGL syncs, the
//! [`HostFence`]) are waited off the producer's thread, so `submit` does not
//! block on them; a GL sync belongs to the GL context current on the
//! submitting thread and is waited there.

use std::os::fd::OwnedFd;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// A one-shot fence signalled and waited on the host. Clones share it.
#[derive(Debug, Clone, Default)]
pub struct HostFence {
    state: Arc<(Mutex<bool>, Condvar)>,
}

impl HostFence {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn signal(&self) {
        let (lock, cv) = &*self.state;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cv.notify_all();
    }

    pub fn is_signalled(&self) -> bool {
        *self.state.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits up to `timeout`; true once signalled.
    pub fn wait(&self, timeout: Duration) -> bool {
        let (lock, cv) = &*self.state;
        let deadline = Instant::now() + timeout;
        let mut done = lock.lock().unwrap_or_else(|e| e.into_inner());
        while !*done {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            done = cv
                .wait_timeout(done, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }
}

/// A CUDA `CUevent` or HIP `hipEvent_t` on the context's device. Made by
/// the unsafe [`RawEvent::from_raw`] (a producer's own event: the library
/// never destroys it), or safely by `gpu::Event::as_raw`, which keeps that
/// event alive as long as any copy of this value:
///
/// ```compile_fail
/// let e = vmafx::import::RawEvent(0x1234);
/// ```
#[derive(Clone)]
pub struct RawEvent {
    handle: usize,
    /// What keeps the event alive, when vmafx owns it.
    _keep: Option<Arc<dyn Send + Sync>>,
}

impl RawEvent {
    /// # Safety
    /// `handle` is a live event of the device (CUDA: of the context vmafx
    /// uses, or one that context may wait on) that stays alive until the
    /// frame's acquire has been waited and its release signals have fired.
    pub unsafe fn from_raw(handle: usize) -> Self {
        Self {
            handle,
            _keep: None,
        }
    }

    /// An event vmafx owns, kept alive by `keep`.
    pub(crate) fn owned(handle: usize, keep: Arc<dyn Send + Sync>) -> Self {
        Self {
            handle,
            _keep: Some(keep),
        }
    }

    pub fn as_raw(&self) -> usize {
        self.handle
    }

    /// The event as the device layer takes it.
    pub(crate) fn handle(&self) -> crate::gpu::driver::EventHandle {
        crate::gpu::driver::EventHandle::from_raw(self.handle)
    }
}

impl std::fmt::Debug for RawEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RawEvent({:#x})", self.handle)
    }
}

impl PartialEq for RawEvent {
    fn eq(&self, other: &Self) -> bool {
        self.handle == other.handle
    }
}
impl Eq for RawEvent {}

/// A GL sync object (`GLsync`, from `glFenceSync`) of the GL context
/// current on the submitting thread.
///
/// ```compile_fail
/// let s = vmafx::import::GlSync { sync: 1 };
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GlSync {
    sync: usize,
}

impl GlSync {
    /// # Safety
    /// `sync` is a live `GLsync` of the GL context that is current on the
    /// thread that submits the frame, and is not deleted before `submit`
    /// returns.
    pub const unsafe fn from_raw(sync: usize) -> Self {
        Self { sync }
    }

    pub fn as_raw(&self) -> usize {
        self.sync
    }
}

/// A Vulkan timeline semaphore the library waits for (or signals) on the
/// host, through the producer's device: for producers that cannot export
/// semaphore fds (and the CPU device).
///
/// ```compile_fail
/// # let (device, semaphore): (ash::Device, ash::vk::Semaphore) = todo!();
/// let t = vmafx::import::VulkanTimeline { device, semaphore, value: 1 };
/// ```
#[cfg(feature = "vulkan")]
#[derive(Clone)]
pub struct VulkanTimeline {
    device: ash::Device,
    semaphore: ash::vk::Semaphore,
    value: u64,
}

#[cfg(feature = "vulkan")]
impl VulkanTimeline {
    /// # Safety
    /// `semaphore` is a live timeline semaphore of `device`, and both stay
    /// alive until the frame's acquire has been waited (acquire) or its
    /// release signals have fired (release).
    pub unsafe fn new(device: ash::Device, semaphore: ash::vk::Semaphore, value: u64) -> Self {
        Self {
            device,
            semaphore,
            value,
        }
    }

    pub fn device(&self) -> &ash::Device {
        &self.device
    }

    pub fn semaphore(&self) -> ash::vk::Semaphore {
        self.semaphore
    }

    pub fn value(&self) -> u64 {
        self.value
    }
}

#[cfg(feature = "vulkan")]
impl std::fmt::Debug for VulkanTimeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "VulkanTimeline({:?} = {})", self.semaphore, self.value)
    }
}

/// What says a frame is written.
// The Vulkan variants carry the producer's `ash::Device` (its function
// table): there is one of these per frame, boxing buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Default)]
pub enum Acquire {
    /// The frame is written already.
    #[default]
    None,
    /// The producer signals this fence.
    Host(HostFence),
    /// A CUDA/HIP event: the library stream waits on it on the device.
    DeviceEvent(RawEvent),
    /// A Vulkan semaphore exported as an opaque fd, imported as an external
    /// semaphore and waited on the device: binary (`value: None`) or
    /// timeline (wait for `value`).
    VulkanSemaphoreFd { fd: OwnedFd, value: Option<u64> },
    /// A Vulkan timeline semaphore waited on the host.
    #[cfg(feature = "vulkan")]
    VulkanTimeline(VulkanTimeline),
    /// A Linux sync_file (e.g. from `DMA_BUF_IOCTL_EXPORT_SYNC_FILE`):
    /// readable once signalled, polled on a waiter thread.
    SyncFile(OwnedFd),
    /// A GL sync object of the GL context current on the submitting
    /// thread, waited there with `glClientWaitSync`.
    GlSync(GlSync),
}

impl Acquire {
    /// The fence kind, as messages name it.
    pub fn kind(&self) -> &'static str {
        match self {
            Acquire::None => "none",
            Acquire::Host(_) => "host fence",
            Acquire::DeviceEvent(_) => "device event",
            Acquire::VulkanSemaphoreFd { value: None, .. } => "Vulkan binary semaphore",
            Acquire::VulkanSemaphoreFd { .. } => "Vulkan timeline semaphore",
            #[cfg(feature = "vulkan")]
            Acquire::VulkanTimeline(_) => "Vulkan timeline semaphore (host wait)",
            Acquire::SyncFile(_) => "sync_file",
            Acquire::GlSync(_) => "GL sync",
        }
    }

    /// Whether only a GPU context can wait on it (on its stream).
    pub fn needs_device(&self) -> bool {
        matches!(
            self,
            Acquire::DeviceEvent(_) | Acquire::VulkanSemaphoreFd { .. }
        )
    }
}

/// What the library does once it is done reading a frame.
#[allow(clippy::large_enum_variant)] // as for Acquire
pub enum Release {
    /// Signals a host fence.
    Host(HostFence),
    /// Records the producer's CUDA/HIP event on the library stream after
    /// the frame's last reader.
    DeviceEvent(RawEvent),
    /// Signals a Vulkan semaphore (exported as an opaque fd) from the
    /// library stream: binary, or timeline to `value`.
    VulkanSemaphoreFd { fd: OwnedFd, value: Option<u64> },
    /// Signals a Vulkan timeline semaphore from the host.
    #[cfg(feature = "vulkan")]
    VulkanTimeline(VulkanTimeline),
    /// Calls back (on whichever library thread saw the last read finish).
    Callback(Box<dyn FnOnce() + Send>),
}

impl Release {
    pub fn kind(&self) -> &'static str {
        match self {
            Release::Host(_) => "host fence",
            Release::DeviceEvent(_) => "device event",
            Release::VulkanSemaphoreFd { .. } => "Vulkan semaphore",
            #[cfg(feature = "vulkan")]
            Release::VulkanTimeline(_) => "Vulkan timeline semaphore (host signal)",
            Release::Callback(_) => "callback",
        }
    }

    pub fn needs_device(&self) -> bool {
        matches!(
            self,
            Release::DeviceEvent(_) | Release::VulkanSemaphoreFd { .. }
        )
    }
}

impl std::fmt::Debug for Release {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.kind())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_fence_wakes_a_waiter_and_times_out() {
        let f = HostFence::new();
        assert!(!f.wait(Duration::from_millis(5)));
        let g = f.clone();
        let t = std::thread::spawn(move || g.wait(Duration::from_secs(10)));
        std::thread::sleep(Duration::from_millis(10));
        f.signal();
        assert!(t.join().unwrap());
        assert!(f.is_signalled());
    }
}
