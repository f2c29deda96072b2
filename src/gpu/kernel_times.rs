//! Device time per kernel, for tuning and benchmarks: a [`Gpu`] made by
//! [`Gpu::with_kernel_times`] brackets every launch with timed events, and
//! [`KernelTimes::take`] adds up their intervals by kernel name. A profiler
//! gives the same numbers, but replays each kernel: this costs two event
//! records a launch and runs the engine's real schedule.

use super::device::Gpu;
use super::driver::{Driver, EventHandle};
use crate::error::Result;
use std::sync::{Arc, Mutex};

/// One kernel's launches since the last [`KernelTimes::take`].
#[derive(Debug, Clone, PartialEq)]
pub struct KernelTime {
    pub name: String,
    pub launches: u32,
    /// Device milliseconds, summed over the launches.
    pub ms: f64,
}

/// The timed events of each launch: (kernel, start, end).
pub(crate) struct Launches {
    driver: Arc<dyn Driver>,
    records: Mutex<Vec<(Arc<str>, EventHandle, EventHandle)>>,
}

impl Launches {
    pub(crate) fn new(driver: Arc<dyn Driver>) -> Self {
        Self {
            driver,
            records: Mutex::new(Vec::new()),
        }
    }

    /// Two fresh timed events; the launch goes between their records.
    pub(crate) fn events(&self) -> Result<(EventHandle, EventHandle)> {
        let start = self.driver.timed_event_create()?;
        match self.driver.timed_event_create() {
            Ok(end) => Ok((start, end)),
            Err(e) => {
                // SAFETY: created above, never recorded.
                unsafe { self.driver.event_destroy(start) };
                Err(e)
            }
        }
    }

    /// Keeps a launch's events (recorded around it) until they are read.
    pub(crate) fn push(&self, kernel: Arc<str>, start: EventHandle, end: EventHandle) {
        self.lock().push((kernel, start, end));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(Arc<str>, EventHandle, EventHandle)>> {
        self.records.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Launches {
    fn drop(&mut self) {
        for (_, start, end) in self.lock().drain(..) {
            // SAFETY: ours; the streams that recorded them synchronize on
            // drop, before the last `Gpu` (holding these) goes.
            unsafe {
                self.driver.event_destroy(start);
                self.driver.event_destroy(end);
            }
        }
    }
}

/// Reads the kernel times of a [`Gpu`] made by [`Gpu::with_kernel_times`].
#[derive(Clone)]
pub struct KernelTimes(pub(crate) Arc<Launches>);

impl KernelTimes {
    /// Device time per kernel of every launch since the last call, in the
    /// order the kernels first ran; waits for those launches to finish.
    pub fn take(&self) -> Result<Vec<KernelTime>> {
        let records = std::mem::take(&mut *self.0.lock());
        let driver = &self.0.driver;
        let mut times: Vec<KernelTime> = Vec::new();
        let mut failure = None;
        for (name, start, end) in records {
            // SAFETY: our events, recorded around the launch.
            let ms = unsafe {
                driver
                    .event_synchronize(end)
                    .and_then(|()| driver.event_elapsed_ms(start, end))
            };
            // SAFETY: our events; the synchronize above finished their work,
            // and nothing else holds them.
            unsafe {
                driver.event_destroy(start);
                driver.event_destroy(end);
            }
            match ms {
                Ok(ms) => match times.iter_mut().find(|t| *t.name == *name) {
                    Some(t) => {
                        t.launches += 1;
                        t.ms += ms as f64;
                    }
                    None => times.push(KernelTime {
                        name: name.to_string(),
                        launches: 1,
                        ms: ms as f64,
                    }),
                },
                Err(e) => failure = failure.or(Some(e)),
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(times),
        }
    }
}

impl Gpu {
    /// This device with every kernel launch timed, and the reader of those
    /// times. Contexts built on the returned [`Gpu`] run as usual.
    pub fn with_kernel_times(&self) -> (Gpu, KernelTimes) {
        let launches = Arc::new(Launches::new(self.driver_arc()));
        (self.timed(launches.clone()), KernelTimes(launches))
    }
}
