//! A device frame's fences on the GPU engine: acquire waits queued on the
//! library stream, release signals sent from the device after the last
//! reader.

use super::held::{Graveyard, ReleaseStream};
use crate::context::frames::{acquire_name, SIDES};
use crate::error::{Error, Result};
use crate::gpu::device::{Gpu, Stream};
use crate::gpu::driver::SemaphoreKind;
use crate::gpu::external::ExternalSemaphore;
use crate::import::{Acquire, Frame, Release};

/// A device-side wait for a frame's acquire fence.
pub(crate) enum DeviceWait {
    Event(crate::import::RawEvent),
    Semaphore(ExternalSemaphore, u64),
}

/// What the library stream must wait for before reading the frame (its
/// semaphore imported now), with the fence's name. Host fences were waited
/// before the frame got here.
pub(crate) fn acquire_wait(
    gpu: &Gpu,
    frame: &Frame,
    index: u32,
    side: usize,
) -> Result<Option<(DeviceWait, String)>> {
    let mut acquire = frame.acquire();
    let which = SIDES[side];
    let name = acquire_name(acquire.kind(), index, which);
    match &*acquire {
        Acquire::None => Ok(None),
        Acquire::DeviceEvent(raw) => Ok(Some((DeviceWait::Event(raw.clone()), name))),
        Acquire::VulkanSemaphoreFd { fd, value } => {
            let error = |e: String| -> Error {
                frame
                    .desc()
                    .error(0)
                    .reason(format!("frame {index} ({which}): Vulkan semaphore acquire: {e}"))
                    .into()
            };
            let binary = value.is_none();
            let kind = if binary {
                SemaphoreKind::Binary
            } else {
                SemaphoreKind::Timeline
            };
            let fd = fd.try_clone().map_err(|e| error(e.to_string()))?;
            let semaphore = gpu.import_semaphore(fd, kind).map_err(|e| error(e.to_string()))?;
            let value = value.unwrap_or(0);
            // A binary semaphore's signal is consumed by one wait: later
            // readers of the frame (other contexts) find it done.
            if binary {
                *acquire = Acquire::None;
            }
            Ok(Some((DeviceWait::Semaphore(semaphore, value), name)))
        }
        other => Err(frame
            .desc()
            .error(0)
            .reason(format!(
                "frame {index} ({which}): the {} acquire fence is waited on the host, before binding",
                other.kind()
            ))
            .into()),
    }
}

/// A release signal sent from a stream of the device.
pub(crate) type DeviceSignal = Box<dyn FnOnce(&Gpu, &Stream) + Send>;

/// Turns the frame's device release signals into host-fired ones that
/// signal from the device: they fire once every reader has finished (the
/// last reference goes only then), on the engine's release stream, where
/// nothing else is queued (no stream is made or destroyed per frame).
/// Semaphores are imported now, so an import error reaches the submitter.
pub(crate) fn signal_from_device(
    gpu: &Gpu,
    frame: &Frame,
    graveyard: &Graveyard,
    release_stream: &mut Option<ReleaseStream>,
) -> Result<()> {
    for release in frame.releases().iter_mut() {
        let signal: DeviceSignal = match release {
            Release::DeviceEvent(raw) => {
                let raw = raw.clone();
                Box::new(move |gpu: &Gpu, stream: &Stream| {
                    // SAFETY: the producer's event, alive until its frame
                    // is released (now); the stream is ours.
                    let _ = unsafe { gpu.driver().event_record(raw.handle(), stream.handle()) };
                })
            }
            Release::VulkanSemaphoreFd { fd, value } => {
                let kind = if value.is_some() {
                    SemaphoreKind::Timeline
                } else {
                    SemaphoreKind::Binary
                };
                let fd = fd.try_clone().map_err(|e| {
                    frame
                        .desc()
                        .error(0)
                        .reason(format!("Vulkan release semaphore: dup of the fd: {e}"))
                })?;
                let semaphore = gpu.import_semaphore(fd, kind)?;
                let value = value.unwrap_or(0);
                let graveyard = graveyard.clone();
                Box::new(move |_: &Gpu, stream: &Stream| {
                    let _ = stream.signal_semaphore(&semaphore, value);
                    // Not destroyed here: the device may be waiting for a
                    // later frame's acquire (see `Graveyard`).
                    graveyard.bury(semaphore);
                })
            }
            _ => continue,
        };
        let stream = match release_stream {
            Some(s) => s.clone(),
            None => release_stream
                .insert(std::sync::Arc::new(std::sync::Mutex::new(gpu.stream()?)))
                .clone(),
        };
        let gpu = gpu.clone();
        // A failure has no one to report to: the producer's wait times out
        // and names its fence.
        *release = Release::Callback(Box::new(move || {
            let stream = stream.lock().unwrap_or_else(|e| e.into_inner());
            signal(&gpu, &stream);
        }));
    }
    Ok(())
}
