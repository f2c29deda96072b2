//! Shared planes: each plane some extractor reads is uploaded once per
//! frame into device buffers the context owns, and every GPU extractor
//! reads it there.
//!
//! Uploads go through pinned staging buffers: `upload` copies the host
//! picture into staging on the CPU and queues the staging → device copy,
//! so the caller may refill its picture as soon as `upload` returns, and
//! nothing waits for kernels. Two staging sets alternate; a set is reused
//! only once its previous copy has completed (an event per set).
//!
//! The device planes come in `SETS` sets, used frame by frame in turn, so
//! frame N+1's upload (or layout pass) runs while frames N and N-1 are
//! still read from the other sets. A set is written only after its previous
//! frame's readers are done: the engine records the set's `free` event
//! after them ([`SharedPlanes::release`]) and the writing stream waits for
//! it. A device frame read in place writes no set and waits for nothing.

use super::bind::{Binder, DeviceFrame};
use super::device::{DeviceBuffer, Event, Gpu, PinnedBuffer, Stream};
use super::driver::{Copy2d, DevicePtr, Memory};
use crate::error::{Error, Result};
use crate::import::ImportError;
use crate::parallel;
use crate::picture::{HostPicture, PictureFormat, PlaneId, PlaneMask, PlaneSamples};

/// Device row pitch and plane address alignment, in bytes: what kernels may
/// rely on for every plane they read (the context's own and producer planes
/// read in place alike).
pub const PITCH_ALIGN: usize = 256;

/// A plane in device memory, as kernels see it.
#[derive(Debug, Clone, Copy)]
pub struct DevicePlane {
    pub ptr: DevicePtr,
    /// Row pitch in bytes.
    pub pitch: usize,
    pub width: usize,
    pub height: usize,
}

/// The planes of a reference and of a distorted picture something reads
/// (motion reads reference luma only: the distorted picture is not uploaded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairPlanes {
    pub reference: PlaneMask,
    pub distorted: PlaneMask,
}

impl PairPlanes {
    pub const NONE: PairPlanes = PairPlanes {
        reference: PlaneMask::NONE,
        distorted: PlaneMask::NONE,
    };

    /// The same planes of both pictures.
    pub fn both(mask: PlaneMask) -> Self {
        Self {
            reference: mask,
            distorted: mask,
        }
    }

    pub fn union(self, other: Self) -> Self {
        Self {
            reference: self.reference.union(other.reference),
            distorted: self.distorted.union(other.distorted),
        }
    }

    /// The planes read of either picture.
    pub fn either(self) -> PlaneMask {
        self.reference.union(self.distorted)
    }

    fn side(self, side: usize) -> PlaneMask {
        if side == 0 {
            self.reference
        } else {
            self.distorted
        }
    }
}

/// Where one frame pair's needed planes are on the device: the context's
/// own planes, or a producer's memory read in place. Valid while the frame's
/// work is queued (the lifetime ties it to the binding).
pub struct FramePlanes<'a> {
    planes: [[Option<DevicePlane>; 3]; 2],
    /// The plane set written for this frame (see [`SharedPlanes::release`]).
    set: usize,
    _bound: std::marker::PhantomData<&'a ()>,
}

impl FramePlanes<'_> {
    /// The context's plane set this frame uses.
    pub fn set(&self) -> usize {
        self.set
    }
    pub fn reference(&self, plane: PlaneId) -> Result<DevicePlane> {
        self.get(0, plane)
    }
    pub fn distorted(&self, plane: PlaneId) -> Result<DevicePlane> {
        self.get(1, plane)
    }
    fn get(&self, side: usize, plane: PlaneId) -> Result<DevicePlane> {
        self.planes[side][plane.index()].ok_or_else(|| {
            Error::Internal(format!(
                "plane {plane} was read but not uploaded (its extractor did not declare it)"
            ))
        })
    }
}

/// A plane staged for the next copy: where its rows are in host memory
/// (a staging buffer, or a lent pinned picture), their pitch, and where
/// they go (side, plane) in whichever set the copy writes.
#[derive(Clone, Copy)]
struct Staged {
    /// Address of the first row (kept as a number: `SharedPlanes` is Send).
    src: usize,
    pitch: usize,
    side: usize,
    plane: usize,
}

/// Device plane sets used in turn: three, so that frames spread over two
/// instances of an extractor (`context/gpu.rs`) do not wait on the set of
/// the frame two back (measured: `docs/performance.md`, "Where the time goes").
pub(crate) const SETS: usize = 3;

struct Staging {
    buffers: Vec<PinnedBuffer>,
    /// Pinned pictures read in place by this set's copy: kept until it
    /// has completed, then given back to their pool.
    lent: Option<LentPair>,
    copied: Event,
}

/// A pair of host pictures shared with whoever else reads them.
pub type LentPair = std::sync::Arc<(HostPicture, HostPicture)>;

/// Device buffers for the needed planes of a reference and a distorted
/// picture, and the staging to fill them.
pub struct SharedPlanes {
    format: PictureFormat,
    needs: PairPlanes,
    /// Owns the memory `sets` point into.
    _device: Vec<DeviceBuffer>,
    sets: [[[Option<DevicePlane>; 3]; 2]; SETS],
    /// Recorded once the readers of a set's last frame are done.
    free: [Event; SETS],
    /// The set the next frame writes.
    turn: usize,
    staging: [Staging; 2],
    /// Source pitch and destination of each plane staged for the next copy.
    pending: Vec<Staged>,
    staged: bool,
    frames: u64,
    host_copies: u64,
}

impl SharedPlanes {
    pub fn new(gpu: &Gpu, format: PictureFormat, needs: PairPlanes) -> Result<Self> {
        let bps = format.bytes_per_sample();
        let mut device = Vec::new();
        let mut sets = [[[None; 3]; 2]; SETS];
        for views in &mut sets {
            for (i, side) in views.iter_mut().enumerate() {
                let planes = needs
                    .side(i)
                    .planes()
                    .filter(|p| p.index() < format.plane_count());
                for p in planes {
                    let (w, h) = format.plane_size(p);
                    let pitch = (w * bps).div_ceil(PITCH_ALIGN) * PITCH_ALIGN;
                    let buffer = gpu.buffer(pitch * h)?;
                    side[p.index()] = Some(DevicePlane {
                        ptr: buffer.ptr(),
                        pitch,
                        width: w,
                        height: h,
                    });
                    device.push(buffer);
                }
            }
        }
        let staging_set = || -> Result<Staging> {
            Ok(Staging {
                buffers: Vec::new(),
                lent: None,
                copied: gpu.event()?,
            })
        };
        Ok(Self {
            format,
            needs,
            _device: device,
            sets,
            free: (0..SETS)
                .map(|_| gpu.event())
                .collect::<Result<Vec<_>>>()?
                .try_into()
                .unwrap_or_else(|_| unreachable!("SETS events")),
            turn: 0,
            staging: [staging_set()?, staging_set()?],
            pending: Vec::new(),
            staged: false,
            frames: 0,
            host_copies: 0,
        })
    }

    /// The planes uploaded, of either picture.
    pub fn mask(&self) -> PlaneMask {
        self.needs.either()
    }

    /// Queues the upload of the needed planes of a pair on `stream`. On
    /// return the pictures are no longer read.
    pub fn upload(
        &mut self,
        gpu: &Gpu,
        stream: &Stream,
        reference: &HostPicture,
        distorted: &HostPicture,
    ) -> Result<FramePlanes<'_>> {
        self.stage(gpu, reference, distorted)?;
        self.enqueue_copies(stream)
    }

    /// The host half of [`SharedPlanes::upload`]: copies the needed planes
    /// into the next staging set (waiting, on the host, for the copy that
    /// last read that set). On return the pictures are no longer read.
    pub fn stage(
        &mut self,
        gpu: &Gpu,
        reference: &HostPicture,
        distorted: &HostPicture,
    ) -> Result<()> {
        self.stage_pair(gpu, reference, distorted, None)
    }

    /// As [`SharedPlanes::stage`] for a pair the engine may keep: pinned
    /// pictures (a GPU context's [`crate::PicturePool`]) are not copied on
    /// the host; the device copy reads them where they are, and the pair
    /// is held until that copy has completed. Other pictures are staged.
    pub fn stage_lent(&mut self, gpu: &Gpu, pair: &LentPair) -> Result<()> {
        let in_place = pair.0.is_pinned() && pair.1.is_pinned();
        self.stage_pair(gpu, &pair.0, &pair.1, in_place.then(|| pair.clone()))
    }

    /// Stages the needed planes of a pair for the next staging set's copy:
    /// read where they are when `keep` holds the pair (pinned pictures,
    /// kept until that copy has completed), else copied into the set's
    /// staging buffers.
    fn stage_pair(
        &mut self,
        gpu: &Gpu,
        reference: &HostPicture,
        distorted: &HostPicture,
        keep: Option<LentPair>,
    ) -> Result<()> {
        for picture in [reference, distorted] {
            self.check_format(picture)?;
        }
        let set = &mut self.staging[(self.frames % 2) as usize];
        // The copy that last read this staging set (its buffers or the
        // pictures it kept) must be done.
        set.copied.synchronize()?;
        let in_place = keep.is_some();
        set.lent = keep;
        self.pending.clear();
        let mut sources = Vec::new();
        for (side, picture) in [reference, distorted].into_iter().enumerate() {
            for plane in PlaneId::ALL {
                // Where the copy goes is chosen when it is queued.
                if self.sets[0][side][plane.index()].is_none() {
                    continue;
                }
                let (bytes, pitch) = plane_bytes(picture, plane);
                let src = if in_place {
                    bytes.as_ptr()
                } else {
                    if set.buffers.len() <= sources.len() {
                        set.buffers.push(gpu.pinned(bytes.len())?);
                    }
                    sources.push(bytes);
                    set.buffers[sources.len() - 1].as_ptr()
                };
                self.pending.push(Staged {
                    src: src as usize,
                    pitch,
                    side,
                    plane: plane.index(),
                });
            }
        }
        // One core's memcpy cannot feed a 2160p pair (25 MB) at the rate
        // the device scores it.
        let bytes = sources.iter().map(|s| s.len()).sum();
        let pieces = set
            .buffers
            .iter_mut()
            .zip(&sources)
            .flat_map(|(dst, src)| {
                dst.as_mut_slice()[..src.len()]
                    .chunks_mut(parallel::PIECE)
                    .zip(src.chunks(parallel::PIECE))
            })
            .collect();
        parallel::for_each_piece(pieces, bytes, |(dst, src)| dst.copy_from_slice(src));
        self.staged = true;
        Ok(())
    }

    fn check_format(&self, picture: &HostPicture) -> Result<()> {
        if picture.format() != &self.format {
            return Err(Error::PictureMismatch(format!(
                "GPU planes were set up for {}, got {}",
                self.format,
                picture.format()
            )));
        }
        Ok(())
    }

    /// [`SharedPlanes::upload`] of a pair the engine may keep (see
    /// [`SharedPlanes::stage_lent`]).
    pub fn upload_lent(
        &mut self,
        gpu: &Gpu,
        stream: &Stream,
        pair: &LentPair,
    ) -> Result<FramePlanes<'_>> {
        self.stage_lent(gpu, pair)?;
        self.enqueue_copies(stream)
    }

    /// The device half of [`SharedPlanes::upload`]: queues the staged
    /// planes' copies on `stream`.
    pub fn enqueue_copies(&mut self, stream: &Stream) -> Result<FramePlanes<'_>> {
        if !std::mem::take(&mut self.staged) {
            return Err(Error::Internal(
                "planes: upload asked with no frame staged".into(),
            ));
        }
        // Written right away: after the set's last readers.
        let k = self.next_set();
        stream.wait(&self.free[k])?;
        let set = &self.staging[(self.frames % 2) as usize];
        self.frames += 1;
        for staged in &self.pending {
            let view = self.sets[k][staged.side][staged.plane].expect("staged planes are set up");
            let copy = Copy2d {
                src: Memory::Host(staged.src as *const u8),
                src_pitch: staged.pitch,
                dst: view.ptr,
                dst_pitch: view.pitch,
                width_bytes: view.width * self.format.bytes_per_sample(),
                height: view.height,
            };
            // SAFETY: the source (staging, or a lent picture the set holds)
            // and the device plane cover the rows; neither is touched or
            // given back before `copied` fires.
            unsafe { stream.copy_2d(&copy)? };
        }
        set.copied.record(stream)?;
        self.host_copies += self.pending.len() as u64;
        Ok(FramePlanes {
            planes: self.sets[k],
            set: k,
            _bound: std::marker::PhantomData,
        })
    }

    /// The set the next frame uses, in turn. A stream that writes it must
    /// first wait for its `free` event (the readers of its previous frame).
    fn next_set(&mut self) -> usize {
        let k = self.turn;
        self.turn = (k + 1) % SETS;
        k
    }

    /// Records, on `stream` (ordered after every reader of the frame that
    /// used `set`), that the set may be written again.
    pub fn release(&self, set: usize, stream: &Stream) -> Result<()> {
        self.free[set].record(stream)
    }

    /// Binds a pair of frames already on the device (see `Binder`): no
    /// host memory is read.
    pub fn bind(
        &mut self,
        binder: &mut Binder,
        stream: &Stream,
        frames: [&DeviceFrame<'_>; 2],
        allow_copy: bool,
        error: &dyn Fn(usize) -> ImportError,
    ) -> Result<FramePlanes<'_>> {
        let k = self.next_set();
        // Only a pass or copy into the set waits for its last readers: a
        // frame read in place leaves the set alone, so its kernels need
        // not wait for the readers of the frame SETS back.
        let free = &self.free[k];
        let mut waited = false;
        let mut before_write = || {
            if !std::mem::replace(&mut waited, true) {
                stream.wait(free)?;
            }
            Ok(())
        };
        let mut planes = [[None; 3]; 2];
        for (side, frame) in frames.into_iter().enumerate() {
            planes[side] = binder.bind(
                stream,
                frame,
                self.needs.side(side),
                &self.sets[k][side],
                allow_copy,
                &mut before_write,
                &|| error(side),
            )?;
        }
        Ok(FramePlanes {
            planes,
            set: k,
            _bound: std::marker::PhantomData,
        })
    }

    /// Planes copied from host memory so far (each upload of a plane counts
    /// one).
    pub fn host_copies(&self) -> u64 {
        self.host_copies
    }
}

/// A plane's stored bytes (rows `pitch` bytes apart).
fn plane_bytes(picture: &HostPicture, plane: PlaneId) -> (&[u8], usize) {
    match picture.plane(plane) {
        PlaneSamples::U8(p) => (&p.data[..p.stride * p.height], p.stride),
        PlaneSamples::U16(p) => {
            let data = &p.data[..p.stride * p.height];
            // SAFETY: u16 has no invalid bit patterns and u8 no alignment.
            let bytes =
                unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, data.len() * 2) };
            (bytes, p.stride * 2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::bind::SourcePlane;
    use crate::gpu::mock::{Call, MockDriver};
    use crate::import::PixelFormat;
    use crate::picture::ChromaSubsampling;

    /// Stream waits queued while binding `frames` pairs of `layout`, each
    /// plane 256-aligned (in place where the layout allows).
    fn waits_while_binding(layout: PixelFormat, frames: usize) -> Vec<usize> {
        let (mock, gpu) = MockDriver::gpu();
        let format = PictureFormat::new(64, 32, ChromaSubsampling::Yuv420, 8).unwrap();
        let mut planes = SharedPlanes::new(&gpu, format, PairPlanes::both(PlaneMask::ALL)).unwrap();
        let mut binder = Binder::new(&gpu).unwrap();
        let stream = gpu.stream().unwrap();
        let sources: Vec<SourcePlane> = (0..layout.memory_planes() as u64)
            .map(|i| SourcePlane {
                ptr: 0x10_0000 + i * 0x1_0000,
                pitch: 256,
            })
            .collect();
        let frame = DeviceFrame {
            format: layout,
            planes: &sources,
        };
        (0..frames)
            .map(|_| {
                let before = mock.log().len();
                let bound = planes
                    .bind(&mut binder, &stream, [&frame, &frame], false, &|_| {
                        unreachable!("aligned planes bind")
                    })
                    .unwrap();
                let set = bound.set();
                planes.release(set, &stream).unwrap();
                let log = mock.log();
                log[before..]
                    .iter()
                    .filter(|c| matches!(c, Call::StreamWait { .. }))
                    .count()
            })
            .collect()
    }

    #[test]
    fn frames_read_in_place_wait_for_no_plane_set() {
        let planar = PixelFormat::Planar {
            subsampling: ChromaSubsampling::Yuv420,
            bit_depth: 8,
        };
        assert_eq!(waits_while_binding(planar, SETS + 2), vec![0; SETS + 2]);
    }

    #[test]
    fn a_layout_pass_waits_once_for_its_set() {
        // NV12's chroma is split into the set's buffers: one wait a frame
        // (for the set's last readers), however many planes it writes.
        assert_eq!(
            waits_while_binding(PixelFormat::Nv12, SETS + 2),
            vec![1; SETS + 2]
        );
    }
}
