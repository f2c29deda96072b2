//! Imported frames on the GPU engine: device acquire fences waited on the
//! library stream, the frames' memory bound to the extractors' planes
//! (`gpu::bind`: in place, or one device pass), frames held until their
//! readers have finished, device release signals fired after the last one.
//! No host memory is read on this path.

use super::gpu::{enqueue_all, GpuEngine, HostSide};
use super::*;
use crate::gpu::bind::{BindCounts, Binder, DeviceFrame, SourcePlane};
use crate::gpu::device::{DeviceBuffer, Event, Stream};
use crate::gpu::driver::{
    Copy2d, ExternalMemoryDesc, ExternalMemoryKind, Handle, Memory as CopySource, SemaphoreKind,
};
use crate::gpu::external::{ExternalMemory, ExternalSemaphore, GraphicsResource, GL_TEXTURE_2D};
use crate::gpu::planes::PITCH_ALIGN;
use crate::import::host_read::{device_only_part, read_frame};
use crate::import::{Acquire, Frame, FrameDesc, Memory, Release};
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// A pair whose reads are queued: the event after its last reader, the
/// frames and the imports made for them.
struct Held {
    /// Recorded after the pair's acquire waits.
    acquired: Event,
    done: Event,
    _frames: [Frame; 2],
    imports: Imported,
    graveyard: Graveyard,
}

/// Runtime imports made for one frame pair.
#[derive(Default)]
struct Imported {
    memory: Vec<Arc<ExternalMemory>>,
    semaphores: Vec<ExternalSemaphore>,
}

impl Drop for Held {
    fn drop(&mut self) {
        let imports = std::mem::take(&mut self.imports);
        if !imports.memory.is_empty() || !imports.semaphores.is_empty() {
            self.graveyard.bury(imports);
        }
    }
}

/// Imports whose frames are done, destroyed only while the library stream
/// is idle.
///
/// Destroying an import synchronizes the device inside the runtime (holding
/// its context lock). While the stream waits for a producer's semaphore that
/// the producer signals only after `submit` returns, that would block
/// forever, on this thread or, through the lock, on any other.
#[derive(Clone, Default)]
pub(super) struct Graveyard(Arc<Mutex<Vec<Box<dyn Send>>>>);

impl Graveyard {
    fn bury<T: Send + 'static>(&self, doomed: T) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Box::new(doomed));
    }

    /// Destroys what was buried (call only with no queued waits pending).
    pub(super) fn empty(&self) {
        let doomed = std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()));
        drop(doomed);
    }
}

/// Device frames in flight and what binds them.
#[derive(Default)]
pub(super) struct ImportedFrames {
    binder: Option<Binder>,
    imports: Imports,
    /// Frames whose reads are queued, with the event after their last
    /// reader, oldest first.
    held: VecDeque<Held>,
    /// Imports of finished frames, waiting for an idle stream.
    pub(super) graveyard: Graveyard,
    /// Copy (on the device) layouts that cannot be read in place instead of
    /// refusing them.
    pub(super) allow_device_copy: bool,
}

impl ImportedFrames {
    /// Drops the frames whose readers have finished: their release signals
    /// fire (after those of any other context still reading them).
    fn release_finished(&mut self) -> Result<()> {
        while let Some(held) = self.held.front() {
            if !held.done.is_done()? {
                break;
            }
            self.held.pop_front();
        }
        Ok(())
    }

    /// Drops every held frame (the stream has been synchronized, or an
    /// error left it so) and destroys their imports.
    pub(super) fn release_all(&mut self) {
        self.held.clear();
        self.graveyard.empty();
    }

    /// Destroys finished frames' imports when no queued wait is still
    /// unsatisfied (checked before this frame's waits are queued): the
    /// destruction may then wait for running kernels, never for a producer.
    fn empty_graveyard_if_idle(&mut self) -> Result<()> {
        self.release_finished()?;
        for held in &self.held {
            if !held.acquired.is_done()? {
                return Ok(());
            }
        }
        self.graveyard.empty();
        Ok(())
    }

    /// Planes of host-memory frames transferred to the device.
    pub(super) fn host_uploads(&self) -> u64 {
        self.imports.host_uploads
    }

    pub(super) fn counts(&self) -> BindCounts {
        let mut counts = self.binder.as_ref().map(Binder::counts).unwrap_or_default();
        counts.arrays = self.imports.array_copies;
        counts
    }
}

/// Whether the engine binds the frame on the device: device memory of any
/// kind, and host memory (transferred plane by plane by the device) when no
/// extractor of the set runs on the host. Host fds, and host memory for a
/// set with host extractors, are read on the host instead.
fn bound_on_device(frame: &Frame, host_extractors: bool) -> bool {
    frame.desc().memory.iter().all(|m| match m {
        Memory::HostFd { .. } => false,
        Memory::Host(_) => !host_extractors,
        _ => true,
    })
}

impl GpuEngine {
    /// The context's frame queue hands each pair here in submission order,
    /// once its host-waited fences have signalled (device fences are still
    /// in the frames). Device memory is bound on the device; host-mappable
    /// memory is read on the host and uploaded like host pictures.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn submit_frames(
        &mut self,
        index: u32,
        reference: Frame,
        distorted: Frame,
        scored: bool,
        slots: &[Slot],
        collector: &mut FeatureCollector,
        error: &mut Option<Error>,
    ) -> Result<()> {
        let host_extractors = match &self.on_host {
            HostSide::Inline(x) => !x.is_empty(),
            HostSide::Threaded(_) => true,
        };
        if bound_on_device(&reference, host_extractors)
            && bound_on_device(&distorted, host_extractors)
        {
            return self.submit_device_frames(
                index,
                [&reference, &distorted],
                scored,
                slots,
                collector,
            );
        }
        for frame in [&reference, &distorted] {
            if let Some((e, what)) = device_only_part(frame) {
                return Err(e
                    .reason(format!(
                        "{what} cannot be mixed with host memory in one pair on the GPU engine"
                    ))
                    .into());
            }
        }
        let planes = self.planes_needed();
        let pair = Arc::new((
            read_frame(&reference, planes)?,
            read_frame(&distorted, planes)?,
        ));
        // The copies are ours: the producer may reuse its memory now.
        drop((reference, distorted));
        self.submit(index, pair, scored, slots, collector, error)
    }

    /// Scores a pair of device frames: nothing is copied from the host.
    pub(super) fn submit_device_frames(
        &mut self,
        index: u32,
        frames: [&Frame; 2],
        scored: bool,
        slots: &[Slot],
        collector: &mut FeatureCollector,
    ) -> Result<()> {
        let on_host: Vec<&str> = match &self.on_host {
            HostSide::Inline(x) => x.iter().map(|(s, _)| slots[*s].info.name).collect(),
            HostSide::Threaded(w) => w.slots.iter().map(|&s| slots[s].info.name).collect(),
        };
        if !on_host.is_empty() {
            return Err(frames[0]
                .desc()
                .error(0)
                .reason(format!(
                    "device frames are scored on the device, and {} {} no GPU version yet",
                    on_host.join(", "),
                    if on_host.len() == 1 { "has" } else { "have" }
                ))
                .into());
        }
        let wanted = |slot: usize| scored || slots[slot].temporal;
        if !self.on_gpu.iter().any(|(s, _, _)| wanted(*s)) {
            // Nothing reads this frame: the references go now and it is
            // released at once.
            return Ok(());
        }
        self.imported.empty_graveyard_if_idle()?;
        self.imported.imports.pending = Imported::default();
        self.imported.imports.bases.clear();
        // Every import before the first queued wait: the runtime may
        // synchronize the device inside an import, and a queued wait for a
        // producer's semaphore would then never end (it signals after
        // `submit` returns).
        // The layout kernels load before the waits too (a module load may
        // synchronize the device as well).
        if self.imported.binder.is_none() {
            self.imported.binder = Some(Binder::new(&self.gpu)?);
        }
        let mut waits = Vec::new();
        for (side, frame) in frames.iter().enumerate() {
            waits.extend(acquire_wait(&self.gpu, frame, index, side)?);
            signal_from_device(&self.gpu, frame, &self.imported.graveyard)?;
            self.imported
                .imports
                .import_memory(&self.gpu, side, frame.desc())?;
        }
        for wait in waits {
            match wait {
                // SAFETY: the producer's event of this device, alive until
                // the frame is released (its contract); the stream is ours.
                DeviceWait::Event(raw) => unsafe {
                    self.gpu
                        .driver()
                        .stream_wait_event(self.stream.handle(), Handle(raw.0))?
                },
                DeviceWait::Semaphore(semaphore, value) => {
                    self.stream.wait_semaphore(&semaphore, value)?;
                    // Kept until the frame's reads are done.
                    self.imported.imports.pending.semaphores.push(semaphore);
                }
            }
        }
        let acquired = self.gpu.event()?;
        acquired.record(&self.stream)?;
        let mut sources = [Vec::new(), Vec::new()];
        for (side, frame) in frames.iter().enumerate() {
            sources[side] =
                self.imported
                    .imports
                    .planes(&self.gpu, &self.stream, side, frame.desc())?;
        }
        let device = [0, 1].map(|side| DeviceFrame {
            format: frames[side].desc().format,
            planes: &sources[side],
        });
        let binder = self
            .imported
            .binder
            .as_mut()
            .expect("loaded before the waits");
        let queued = (|| {
            let planes = self.planes.bind(
                binder,
                &self.stream,
                [&device[0], &device[1]],
                self.imported.allow_device_copy,
                &|side| frames[side].desc().error(0),
            )?;
            enqueue_all(&mut self.on_gpu, index, &planes, &self.stream, wanted)?;
            let done = self.gpu.event()?;
            done.record(&self.stream)?;
            Ok(done)
        })();
        let done = match queued {
            Ok(done) => done,
            Err(e) => {
                // Some reads may be queued: the frames are released only
                // once they have finished.
                let _ = self.stream.synchronize();
                self.imported.imports.pending = Imported::default();
                self.imported.release_all();
                return Err(e);
            }
        };
        let imports = std::mem::take(&mut self.imported.imports.pending);
        self.imported.held.push_back(Held {
            acquired,
            done,
            _frames: [frames[0].clone(), frames[1].clone()],
            imports,
            graveyard: self.imported.graveyard.clone(),
        });
        self.imported.release_finished()?;
        self.complete_older(collector)
    }
}

/// What this context imported of producers' objects.
///
/// Memory exported as fds is imported per frame and kept with the frame
/// until its readers finish: an fd says nothing reliable about which
/// allocation it is (opaque fds of one driver may share an inode), so a
/// cache keyed on it could read the wrong memory. A producer that wants to
/// import once does it itself (`Gpu::import_memory`) and submits device
/// pointers into the mapping.
#[derive(Default)]
pub(super) struct Imports {
    /// Imports made for the frame being bound, handed to its held entry.
    pending: Imported,
    /// Where each imported memory object of the pair being bound is mapped,
    /// by side and memory index.
    bases: HashMap<(usize, usize), u64>,
    /// GL textures, by name, registered on first use (re-registering per
    /// frame costs more than scoring it); the producer keeps them alive and
    /// their storage unchanged while the context lives.
    textures: HashMap<u32, GraphicsResource>,
    /// Linear copies of arrays and textures, by side and memory plane.
    scratch: HashMap<(usize, usize), DeviceBuffer>,
    /// Planes copied from arrays and textures so far.
    array_copies: u64,
    /// Planes transferred from host-memory frames so far.
    host_uploads: u64,
}

impl Imports {
    /// Each memory plane of `desc` (side `side`) as linear device memory:
    /// device pointers as they are, Vulkan allocations imported, arrays and
    /// textures copied once on the device into scratch planes.
    fn planes(
        &mut self,
        gpu: &Gpu,
        stream: &Stream,
        side: usize,
        desc: &FrameDesc,
    ) -> Result<Vec<SourcePlane>> {
        let mut out = Vec::with_capacity(desc.planes.len());
        for (i, p) in desc.planes.iter().enumerate() {
            let at = |base: u64| SourcePlane {
                ptr: base + p.layout.offset,
                pitch: p.layout.pitch as usize,
            };
            out.push(match &desc.memory[p.memory] {
                Memory::Device { ptr, .. } => at(*ptr),
                Memory::VulkanFd { .. } | Memory::DmaBuf { .. } => {
                    at(self.bases[&(side, p.memory)])
                }
                Memory::Array { handle } => {
                    self.array_copies += 1;
                    self.copy_plane(
                        gpu,
                        stream,
                        desc,
                        side,
                        i,
                        CopySource::Array(Handle(*handle)),
                        0,
                    )?
                }
                Memory::Host(host) => {
                    // One host-to-device transfer of the plane as it is (the
                    // layout pass, if any, runs on the device); no copy on
                    // the CPU. The frame is held until it has completed.
                    self.host_uploads += 1;
                    let src = host.as_ptr().wrapping_add(p.layout.offset as usize);
                    self.copy_plane(
                        gpu,
                        stream,
                        desc,
                        side,
                        i,
                        CopySource::Host(src),
                        p.layout.pitch as usize,
                    )?
                }
                Memory::GlTexture { texture } => {
                    if !self.textures.contains_key(texture) {
                        // SAFETY: the producer's texture of the GL context
                        // current on this (the submitting) thread.
                        let r = unsafe { gpu.register_gl_texture(*texture, GL_TEXTURE_2D) }
                            .map_err(|e| desc.error(p.memory).plane(i).reason(e.to_string()))?;
                        self.textures.insert(*texture, r);
                    }
                    let mut resource = self.textures.remove(texture).expect("inserted above");
                    let copied = (|| {
                        let mapped = resource.map(stream)?;
                        let array = mapped.array()?;
                        self.array_copies += 1;
                        let plane = self.copy_plane(
                            gpu,
                            stream,
                            desc,
                            side,
                            i,
                            CopySource::Array(array),
                            0,
                        )?;
                        mapped.unmap()?;
                        Ok::<_, Error>(plane)
                    })();
                    self.textures.insert(*texture, resource);
                    copied?
                }
                other => {
                    return Err(desc
                        .error(p.memory)
                        .plane(i)
                        .reason(format!(
                            "{} memory is read on the host, not bound",
                            other.kind()
                        ))
                        .into())
                }
            });
        }
        Ok(out)
    }

    /// Imports the fd-backed memory objects of `desc` (side `side`): the
    /// whole allocation of each (the fd is duplicated: the frame keeps its
    /// own), mapped once.
    fn import_memory(&mut self, gpu: &Gpu, side: usize, desc: &FrameDesc) -> Result<()> {
        for (i, memory) in desc.memory.iter().enumerate() {
            let (fd, kind, size, dedicated) = match memory {
                Memory::VulkanFd {
                    fd,
                    bytes,
                    dedicated,
                } => (fd, ExternalMemoryKind::OpaqueFd, *bytes, *dedicated),
                Memory::DmaBuf { fd, bytes, .. } => (fd, ExternalMemoryKind::DmaBuf, *bytes, false),
                _ => continue,
            };
            let plane = desc.planes.iter().position(|p| p.memory == i).unwrap_or(0);
            let error =
                |reason: String| -> Error { desc.error(i).plane(plane).reason(reason).into() };
            let dup = fd
                .try_clone()
                .map_err(|e| error(format!("dup of the fd: {e}")))?;
            let imported = gpu
                .import_memory(
                    dup,
                    ExternalMemoryDesc {
                        kind,
                        size,
                        dedicated,
                    },
                )
                .map_err(|e| error(e.to_string()))?;
            self.bases.insert((side, i), imported.ptr());
            self.pending.memory.push(imported);
        }
        Ok(())
    }

    /// Copies memory plane `plane` of `desc` from an array or host memory
    /// into a scratch plane (aligned like the context's own, so it is then
    /// read in place or split like any device plane).
    #[allow(clippy::too_many_arguments)]
    fn copy_plane(
        &mut self,
        gpu: &Gpu,
        stream: &Stream,
        desc: &FrameDesc,
        side: usize,
        plane: usize,
        source: CopySource,
        source_pitch: usize,
    ) -> Result<SourcePlane> {
        let (row_bytes, rows) = desc.format.plane_extent(plane, desc.width, desc.height);
        let pitch = row_bytes.div_ceil(PITCH_ALIGN) * PITCH_ALIGN;
        let bytes = pitch * rows;
        let buffer = match self.scratch.get(&(side, plane)) {
            Some(b) if b.len() >= bytes => b,
            _ => {
                self.scratch.insert((side, plane), gpu.buffer(bytes)?);
                &self.scratch[&(side, plane)]
            }
        };
        let copy = Copy2d {
            src: source,
            src_pitch: source_pitch,
            dst: buffer.ptr(),
            dst_pitch: pitch,
            width_bytes: row_bytes,
            height: rows,
        };
        // SAFETY: the source holds the plane (the producer's description,
        // checked against host memory's size by `Frame::new`); the scratch
        // plane holds `rows` rows of `pitch`.
        unsafe { stream.copy_2d(&copy)? };
        Ok(SourcePlane {
            ptr: buffer.ptr(),
            pitch,
        })
    }
}

/// A device-side wait for a frame's acquire fence.
enum DeviceWait {
    Event(crate::import::RawEvent),
    Semaphore(ExternalSemaphore, u64),
}

/// What the library stream must wait for before reading the frame (its
/// semaphore imported now). Host fences were waited before the frame got
/// here.
fn acquire_wait(gpu: &Gpu, frame: &Frame, index: u32, side: usize) -> Result<Option<DeviceWait>> {
    let mut acquire = frame.acquire();
    let which = if side == 0 { "reference" } else { "distorted" };
    match &*acquire {
        Acquire::None => Ok(None),
        Acquire::DeviceEvent(raw) => Ok(Some(DeviceWait::Event(*raw))),
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
            Ok(Some(DeviceWait::Semaphore(semaphore, value)))
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
type DeviceSignal = Box<dyn FnOnce(&Gpu, &Stream) + Send>;

/// Turns the frame's device release signals into host-fired ones that
/// signal from the device: they fire once every reader has finished (the
/// last reference goes only then), on a fresh stream with nothing queued.
/// Semaphores are imported now, so an import error reaches the submitter.
fn signal_from_device(gpu: &Gpu, frame: &Frame, graveyard: &Graveyard) -> Result<()> {
    for release in frame.releases().iter_mut() {
        let signal: DeviceSignal = match release {
            Release::DeviceEvent(raw) => {
                let raw = *raw;
                Box::new(move |gpu: &Gpu, stream: &Stream| {
                    // SAFETY: the producer's event, alive until its frame
                    // is released (now); the stream is ours.
                    let _ = unsafe { gpu.driver().event_record(Handle(raw.0), stream.handle()) };
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
        let gpu = gpu.clone();
        // A failure has no one to report to: the producer's wait times out
        // and names its fence.
        *release = Release::Callback(Box::new(move || {
            if let Ok(stream) = gpu.stream() {
                signal(&gpu, &stream);
            }
        }));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! The order the GPU engine gives a device frame's operations, on the
    //! recording mock driver: every import before the first queued wait,
    //! the wait before the frame's reads, the release signal after them,
    //! every import destroyed by the end, and the frame released.

    use super::*;
    use crate::gpu::mock::{Call, MockDriver};
    use crate::import::{FrameDesc, HostFence, PixelFormat, PlaneLayout};
    use crate::picture::ChromaSubsampling;

    fn memfd() -> std::os::fd::OwnedFd {
        nix::sys::memfd::memfd_create(c"mock", nix::sys::memfd::MemFdCreateFlag::MFD_CLOEXEC)
            .unwrap()
    }

    fn vulkan_frame(fence: &HostFence) -> Frame {
        let desc = FrameDesc::new(
            64,
            32,
            PixelFormat::Nv12,
            Memory::VulkanFd {
                fd: memfd(),
                bytes: 256 * 48,
                dedicated: true,
            },
            &[PlaneLayout::new(0, 256), PlaneLayout::new(256 * 32, 256)],
        );
        Frame::new(
            desc,
            Acquire::VulkanSemaphoreFd {
                fd: memfd(),
                value: Some(1),
            },
            vec![
                Release::VulkanSemaphoreFd {
                    fd: memfd(),
                    value: Some(1),
                },
                Release::Host(fence.clone()),
            ],
        )
        .unwrap()
    }

    #[test]
    fn imports_precede_waits_which_precede_reads_and_releases_follow() {
        let (mock, gpu) = MockDriver::gpu();
        let format =
            crate::picture::PictureFormat::new(64, 32, ChromaSubsampling::Yuv420, 8).unwrap();
        let mut ctx = ContextBuilder::new(format)
            .feature("psnr", Vec::new())
            .gpu(gpu)
            .build()
            .unwrap();
        let fence = HostFence::new();
        let (r, d) = (vulkan_frame(&fence), vulkan_frame(&fence));
        ctx.submit_frames(&r, &d).unwrap();
        drop((r, d));
        let (counts, host) = ctx.transfer_counts().unwrap();
        ctx.finish().unwrap();
        assert!(fence.is_signalled(), "released after the context finished");
        assert_eq!(host, 0);
        assert_eq!(counts.in_place, 2, "NV12 luma read where it is");
        assert_eq!(counts.passes, 2, "one chroma split per picture");

        let log = mock.log();
        let first = |f: &dyn Fn(&Call) -> bool| log.iter().position(f).unwrap();
        let last = |f: &dyn Fn(&Call) -> bool| log.iter().rposition(f).unwrap();
        let count = |f: &dyn Fn(&Call) -> bool| log.iter().filter(|c| f(c)).count();
        let is_import =
            |c: &Call| matches!(c, Call::ImportMemory { .. } | Call::ImportSemaphore { .. });
        let is_wait = |c: &Call| matches!(c, Call::WaitSemaphore { value: 1, .. });
        let is_read = |c: &Call| matches!(c, Call::Launch { .. });
        let is_signal = |c: &Call| matches!(c, Call::SignalSemaphore { value: 1, .. });
        // 2 memory imports, 2 acquire and 2 release semaphores.
        assert_eq!(count(&|c| matches!(c, Call::ImportMemory { .. })), 2);
        assert_eq!(count(&|c| matches!(c, Call::ImportSemaphore { .. })), 4);
        assert_eq!(count(&is_wait), 2);
        assert!(
            last(&is_import) < first(&is_wait),
            "an import after a queued wait: {log:#?}"
        );
        assert!(
            last(&is_wait) < first(&is_read),
            "a read before the acquire wait"
        );
        assert_eq!(count(&is_signal), 2);
        assert!(
            first(&is_signal) > last(&is_read),
            "released before the last reader"
        );
        // Nothing leaks: every import destroyed, mappings freed.
        assert_eq!(count(&|c| matches!(c, Call::DestroyExternalMemory(_))), 2);
        assert_eq!(count(&|c| matches!(c, Call::FreeExternalBuffer(_))), 2);
        assert_eq!(count(&|c| matches!(c, Call::DestroySemaphore(_))), 4);
    }
}
