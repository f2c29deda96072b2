//! Deferred release of what the device may still be using: device memory,
//! pinned host memory and kernel modules are freed only once every stream
//! of the device has run the work queued before their owner was dropped.
//!
//! A dropped owner hands its resource here. A host function is queued on
//! each live stream (`Driver::launch_host_func`, no polling and no events
//! to query); each one, when the stream reaches it, counts down the
//! resource's outstanding streams, and the resource is freed at the next
//! `reap` after the count reaches zero (host functions may not call the
//! runtime, so they never free anything themselves). Streams register here
//! when made; a stream being destroyed is "draining" until its work has
//! run, and what is retired meanwhile waits for that too. So no stream that
//! could still read a resource is missed, and no lock is held while a
//! stream drains (its work may wait on a producer that is itself dropping
//! something). This is how a buffer's lifetime
//! is tied to the work that reads it by recorded stream order rather than
//! by every owner remembering to synchronise (ADR 0022).

use super::driver::{DevicePtr, Driver, ModuleHandle, StreamHandle};
use crate::picture::huge::HugeRegion;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// What is freed once the device is done with it.
pub(super) enum Release {
    Device(DevicePtr),
    Pinned(*mut u8),
    /// Host memory page-locked by registration: unregistered, then unmapped.
    Registered(HugeRegion),
    Module(ModuleHandle),
}

// SAFETY: plain handles and addresses, freed through the thread-safe driver.
unsafe impl Send for Release {}

struct Pending {
    release: Release,
    /// Streams that have not yet reached the work queued at the drop.
    outstanding: Arc<AtomicUsize>,
    /// Streams that were draining at the drop: set once each has drained.
    draining: Vec<Arc<AtomicBool>>,
}

impl Pending {
    fn done(&self) -> bool {
        self.outstanding.load(Ordering::Acquire) == 0
            && self.draining.iter().all(|d| d.load(Ordering::Acquire))
    }
}

/// The live streams, and those being destroyed (with their "drained" flag).
#[derive(Default)]
struct Streams {
    live: Vec<StreamHandle>,
    draining: Vec<(StreamHandle, Arc<AtomicBool>)>,
}

/// One device's live streams and the resources waiting on them. Shared by
/// every clone of a [`super::Gpu`] (and the timed view of it).
pub(super) struct Retirement {
    driver: Arc<dyn Driver>,
    streams: Mutex<Streams>,
    pending: Mutex<Vec<Pending>>,
}

impl Retirement {
    pub fn new(driver: Arc<dyn Driver>) -> Self {
        Self {
            driver,
            streams: Mutex::default(),
            pending: Mutex::new(Vec::new()),
        }
    }

    /// A stream the device's resources may now be used on.
    pub fn stream_created(&self, stream: StreamHandle) {
        lock(&self.streams).live.push(stream);
    }

    /// Waits for `stream`'s work, then destroys it. Meanwhile it is
    /// draining: a resource retired now also waits until it has drained.
    pub fn destroy_stream(&self, stream: StreamHandle) {
        let drained = Arc::new(AtomicBool::new(false));
        {
            let mut streams = lock(&self.streams);
            streams.live.retain(|s| *s != stream);
            streams.draining.push((stream, drained.clone()));
        }
        // SAFETY: a stream of this driver, no longer handed to `retire`,
        // destroyed once.
        unsafe {
            let _ = self.driver.stream_synchronize(stream);
            self.driver.stream_destroy(stream);
        }
        drained.store(true, Ordering::Release);
        lock(&self.streams).draining.retain(|(s, _)| *s != stream);
        self.reap();
    }

    /// Frees `release` once the work queued so far on every live stream has
    /// run (at once when there is none).
    pub fn retire(&self, release: Release) {
        // One count for this call, so no host function can bring the
        // count to zero before every stream has been given one.
        let outstanding = Arc::new(AtomicUsize::new(1));
        let draining;
        {
            let streams = lock(&self.streams);
            draining = streams.draining.iter().map(|(_, d)| d.clone()).collect();
            for &stream in &streams.live {
                outstanding.fetch_add(1, Ordering::AcqRel);
                let count = outstanding.clone();
                let reached = Box::new(move || {
                    count.fetch_sub(1, Ordering::AcqRel);
                });
                // SAFETY: a live stream (registered; it leaves the list
                // under this lock before it is destroyed); the function
                // calls no runtime.
                let queued = unsafe { self.driver.launch_host_func(stream, reached) };
                if queued.is_err() {
                    // The function was dropped uncalled: wait for the
                    // stream on the host instead. A stream that cannot
                    // even be waited for has a broken context that runs no
                    // more work, so the resource may go.
                    // SAFETY: as above.
                    let _ = unsafe { self.driver.stream_synchronize(stream) };
                    outstanding.fetch_sub(1, Ordering::AcqRel);
                }
            }
        }
        outstanding.fetch_sub(1, Ordering::AcqRel);
        lock(&self.pending).push(Pending {
            release,
            outstanding,
            draining,
        });
        self.reap();
    }

    /// Frees every retired resource whose streams have all moved on.
    pub fn reap(&self) {
        let done: Vec<Release> = {
            let mut pending = lock(&self.pending);
            if pending.is_empty() {
                return;
            }
            let (done, waiting) = std::mem::take(&mut *pending)
                .into_iter()
                .partition::<Vec<_>, _>(Pending::done);
            *pending = waiting;
            done.into_iter().map(|p| p.release).collect()
        };
        for release in done {
            self.free(release);
        }
    }

    /// Resources still waiting for a stream (tests and leak checks).
    #[cfg(test)]
    pub fn waiting(&self) -> usize {
        lock(&self.pending).len()
    }

    fn free(&self, release: Release) {
        // SAFETY: each resource was allocated by this driver, handed here
        // once by its owner's drop, and no queued work can reach it any
        // more (its streams have passed the drop, or are gone).
        unsafe {
            match release {
                Release::Device(ptr) => self.driver.free(ptr),
                Release::Pinned(ptr) => self.driver.free_pinned(ptr),
                Release::Registered(mut region) => {
                    self.driver.host_unregister(region.as_mut_ptr());
                    drop(region);
                }
                Release::Module(module) => self.driver.module_unload(module),
            }
        }
    }
}

impl Drop for Retirement {
    fn drop(&mut self) {
        // Every stream holds a `Gpu`, so all are destroyed (after draining)
        // by now: nothing queued can reach what is left.
        let left = std::mem::take(&mut *lock(&self.pending));
        for pending in left {
            self.free(pending.release);
        }
    }
}

/// A poisoned lock only means another thread panicked while holding it;
/// the lists stay consistent (every change is one push, retain or take).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use crate::gpu::driver::{Interop, SemaphoreHandle};
    use crate::gpu::mock::{Call, MockDriver};

    fn frees(driver: &MockDriver) -> usize {
        driver
            .log()
            .iter()
            .filter(|c| matches!(c, Call::Free(_)))
            .count()
    }

    #[test]
    fn a_buffer_dropped_while_a_stream_is_busy_waits_for_the_stream() {
        let (driver, gpu) = MockDriver::gpu();
        let busy = gpu.stream().unwrap();
        let idle = gpu.stream().unwrap();
        // `busy` waits on a producer's semaphore that is not signalled yet.
        driver.stall_semaphore_waits();
        // SAFETY: the mock takes any semaphore handle.
        unsafe {
            driver
                .wait_semaphore(SemaphoreHandle::from_raw(7), 1, busy.handle())
                .unwrap()
        };
        let buffer = gpu.buffer(256).unwrap();
        drop(buffer);
        assert_eq!(frees(&driver), 0, "freed while `busy` may still read it");
        assert_eq!(gpu.retired_waiting(), 1);
        // New allocations do not free it either.
        let other = gpu.buffer(16).unwrap();
        assert_eq!(frees(&driver), 0);
        driver.end_stalls();
        // Freed at the next reap once `busy` passed the drop.
        assert_eq!(gpu.retired_waiting(), 0);
        assert_eq!(frees(&driver), 1);
        drop((other, idle, busy));
        assert_eq!(driver.live()[0], 0, "every buffer freed");
    }

    #[test]
    fn with_every_stream_idle_or_gone_memory_goes_at_once() {
        let (driver, gpu) = MockDriver::gpu();
        let stream = gpu.stream().unwrap();
        drop(gpu.buffer(64).unwrap());
        assert_eq!(frees(&driver), 1, "the idle stream passed the drop at once");
        drop(stream);
        drop(gpu.buffer(64).unwrap());
        assert_eq!(frees(&driver), 2, "no stream: nothing to wait for");
    }

    #[test]
    fn a_failed_host_function_launch_waits_on_the_host_instead() {
        let (driver, gpu) = MockDriver::gpu();
        let _stream = gpu.stream().unwrap();
        let buffer = gpu.buffer(64).unwrap();
        driver.fail_next("launch_host_func");
        drop(buffer);
        assert_eq!(frees(&driver), 1);
        assert!(driver
            .log()
            .iter()
            .any(|c| matches!(c, Call::StreamSync(_))));
    }

    #[test]
    fn a_large_pinned_buffer_is_registered_huge_pages_unregistered_after_its_streams() {
        let (driver, gpu) = MockDriver::gpu();
        let stream = gpu.stream().unwrap();
        let bytes = crate::picture::huge::MIN_BYTES + 12345;
        let mut large = gpu.pinned(bytes).unwrap();
        let small = gpu.pinned(4096).unwrap();
        let ptr = large.as_mut_ptr() as usize;
        assert_eq!(ptr % (2 << 20), 0, "on a huge page boundary");
        large.as_mut_slice()[bytes - 1] = 3;
        let registered = |c: &Call| matches!(c, Call::HostRegister { .. });
        assert_eq!(
            driver
                .log()
                .iter()
                .filter(|c| registered(c))
                .collect::<Vec<_>>(),
            [&Call::HostRegister { ptr, bytes }],
            "only the large buffer is registered"
        );
        assert_eq!(driver.live()[1], 1, "the small one is the driver's");
        driver.stall_semaphore_waits();
        // SAFETY: the mock takes any semaphore handle.
        unsafe {
            driver
                .wait_semaphore(SemaphoreHandle::from_raw(7), 1, stream.handle())
                .unwrap()
        };
        drop(large);
        let unregistered = |d: &MockDriver| d.log().contains(&Call::HostUnregister(ptr));
        assert!(
            !unregistered(&driver),
            "unregistered while a copy may read it"
        );
        driver.end_stalls();
        drop(small);
        assert!(unregistered(&driver));
        assert_eq!(gpu.retired_waiting(), 0);
    }

    #[test]
    fn what_is_still_waiting_goes_with_the_last_handle_of_the_device() {
        let (driver, gpu) = MockDriver::gpu();
        let stream = gpu.stream().unwrap();
        driver.stall_semaphore_waits();
        // SAFETY: the mock takes any semaphore handle.
        unsafe {
            driver
                .wait_semaphore(SemaphoreHandle::from_raw(7), 1, stream.handle())
                .unwrap()
        };
        drop(gpu.pinned(64).unwrap());
        drop(gpu.buffer(64).unwrap());
        assert_eq!(gpu.retired_waiting(), 2);
        drop((stream, gpu));
        assert_eq!(driver.live()[0], 0);
        assert_eq!(driver.live()[1], 0);
    }
}
