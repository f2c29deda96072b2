//! Host-waited acquire fences, held apart from their frame: a clone of the
//! host fence or Vulkan timeline, a duplicate of the sync_file fd. Several
//! contexts can wait on one frame's fence that way, each with its own
//! handle, none holding the frame's lock while it waits.

#[cfg(feature = "vulkan")]
use super::fence::VulkanTimeline;
use super::fence::{Acquire, HostFence};
use crate::error::{Error, Result};
#[cfg(feature = "vulkan")]
use crate::error::{GpuApi, GpuCode};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

/// A fence the host can check without blocking.
#[allow(clippy::large_enum_variant)] // one per waiting frame side
#[derive(Debug)]
pub(crate) enum HostWait {
    Fence(HostFence),
    #[cfg(feature = "vulkan")]
    Timeline(VulkanTimeline),
    SyncFile(OwnedFd),
}

impl HostWait {
    /// What to wait on for `acquire`, or `None` where the host waits for
    /// nothing here (no fence; device fences, which the device waits; GL
    /// syncs, which the submitting thread waits).
    pub(crate) fn of(acquire: &Acquire) -> Result<Option<HostWait>> {
        Ok(Some(match acquire {
            Acquire::Host(f) => HostWait::Fence(f.clone()),
            #[cfg(feature = "vulkan")]
            Acquire::VulkanTimeline(t) => HostWait::Timeline(t.clone()),
            Acquire::SyncFile(fd) => HostWait::SyncFile(fd.try_clone().map_err(|e| {
                Error::InvalidArgument(format!("cannot duplicate the sync_file fd: {e}"))
            })?),
            _ => return Ok(None),
        }))
    }

    /// The fence kind, as [`Acquire::kind`] names it.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            HostWait::Fence(_) => "host fence",
            #[cfg(feature = "vulkan")]
            HostWait::Timeline(_) => "Vulkan timeline semaphore (host wait)",
            HostWait::SyncFile(_) => "sync_file",
        }
    }

    /// The fd to sleep on, for sync files (the others are checked on a
    /// short interval).
    pub(crate) fn fd(&self) -> Option<BorrowedFd<'_>> {
        match self {
            HostWait::SyncFile(fd) => Some(fd.as_fd()),
            _ => None,
        }
    }

    /// Whether the fence is signalled now; never blocks. `name` says which
    /// fence in errors.
    pub(crate) fn is_signalled(&self, name: &str) -> Result<bool> {
        match self {
            HostWait::Fence(f) => Ok(f.is_signalled()),
            #[cfg(feature = "vulkan")]
            HostWait::Timeline(t) => {
                // SAFETY: the producer gave a live timeline semaphore of
                // `device` (a Vulkan 1.2 device: the call is core there).
                let value = unsafe { t.device().get_semaphore_counter_value(t.semaphore()) }
                    .map_err(|e| {
                        Error::gpu(
                            GpuApi::Vulkan,
                            format!("vkGetSemaphoreCounterValue ({name})"),
                            GpuCode::from_vulkan(e.as_raw()),
                            e.to_string(),
                        )
                    })?;
                Ok(value >= t.value())
            }
            HostWait::SyncFile(fd) => is_readable(fd.as_fd())
                .map_err(|reason| Error::InvalidArgument(format!("{name}: {reason}"))),
        }
    }
}

/// Whether an fd is readable now: a sync_file is once its fences have
/// signalled (so is a pipe or eventfd with data, or whose writer closed).
pub(crate) fn is_readable(fd: BorrowedFd<'_>) -> std::result::Result<bool, String> {
    let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
    loop {
        match poll(&mut fds, PollTimeout::ZERO) {
            Ok(_) => break,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(format!("poll failed: {e}")),
        }
    }
    let events = fds[0].revents().unwrap_or(PollFlags::empty());
    if events.intersects(PollFlags::POLLNVAL | PollFlags::POLLERR) {
        return Err(format!("poll reports {events:?} on the fd"));
    }
    Ok(events.intersects(PollFlags::POLLIN | PollFlags::POLLHUP))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_stands_in_for_a_sync_file() {
        let (read, write) = nix::unistd::pipe().unwrap();
        let wait = HostWait::of(&Acquire::SyncFile(read)).unwrap().unwrap();
        assert_eq!(wait.kind(), "sync_file");
        assert!(!wait.is_signalled("test").unwrap());
        nix::unistd::write(&write, b"x").unwrap();
        assert!(wait.is_signalled("test").unwrap());
        assert!(HostWait::of(&Acquire::None).unwrap().is_none());
    }
}
