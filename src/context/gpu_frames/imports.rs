//! A frame's memory as linear device planes: device pointers as they are,
//! fd-backed memory imported, arrays, textures and host memory copied once
//! on the device into scratch planes.

use super::held::Imported;
use crate::error::{Error, Result};
use crate::gpu::bind::SourcePlane;
use crate::gpu::device::{DeviceBuffer, Gpu, Stream};
use crate::gpu::driver::{Copy2d, ExternalMemoryDesc, ExternalMemoryKind, Memory as CopySource};
use crate::gpu::external::{ExternalMemory, GraphicsResource, GL_TEXTURE_2D};
use crate::gpu::planes::PITCH_ALIGN;
use crate::gpu::GpuBackend;
use crate::import::egl_export;
use crate::import::layout::check_plane;
use crate::import::{FrameDesc, Memory, PlaneLayout};
use std::collections::HashMap;
use std::os::fd::AsFd;
use std::sync::Arc;

/// What this context imported of producers' objects.
///
/// Memory exported as fds is imported per frame and kept with the frame
/// until its readers finish: an fd says nothing reliable about which
/// allocation it is (opaque fds of one driver may share an inode), so a
/// cache keyed on it could read the wrong memory. A producer that wants to
/// import once does it itself (`Gpu::import_memory`) and submits device
/// pointers into the mapping.
#[derive(Default)]
pub(crate) struct Imports {
    /// Imports made for the frame being bound, handed to its held entry.
    pub(crate) pending: Imported,
    /// Where each imported memory object of the pair being bound is mapped,
    /// by side and memory index.
    pub(crate) bases: HashMap<(usize, usize), u64>,
    /// GL textures, by name, registered on first use (re-registering per
    /// frame costs more than scoring it); the producer keeps them alive and
    /// their storage unchanged while the context lives.
    pub(crate) textures: HashMap<u32, GraphicsResource>,
    /// GL textures on runtimes without GL interop (HIP), by name: exported
    /// through EGL as dma-bufs and imported on first use, under the same
    /// rule (alive, storage unchanged while the context lives).
    pub(crate) exported: HashMap<u32, (Arc<ExternalMemory>, PlaneLayout)>,
    /// Linear copies of arrays and textures, by side and memory plane.
    pub(crate) scratch: HashMap<(usize, usize), DeviceBuffer>,
    /// Planes copied from arrays and textures so far.
    pub(crate) array_copies: u64,
    /// Planes transferred from host-memory frames so far.
    pub(crate) host_uploads: u64,
}

impl Imports {
    /// Each memory plane of `desc` (side `side`) as linear device memory:
    /// device pointers as they are, Vulkan allocations imported, arrays and
    /// textures copied once on the device into scratch planes.
    pub(crate) fn planes(
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
                Memory::Device(d) => at(d.ptr()),
                Memory::VulkanFd(_) | Memory::DmaBuf { .. } => at(self.bases[&(side, p.memory)]),
                Memory::Array(array) => {
                    self.array_copies += 1;
                    self.copy_plane(
                        gpu,
                        stream,
                        desc,
                        side,
                        i,
                        CopySource::Array(array.handle()),
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
                Memory::GlTexture(texture) if gpu.backend() == GpuBackend::Hip => {
                    self.texture_as_dma_buf(gpu, desc, i, p.memory, texture.name())?
                }
                Memory::GlTexture(texture) => {
                    let texture = &texture.name();
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

    /// Memory plane `plane` of `desc` from GL texture `texture` as dma-buf
    /// memory (exported through EGL once per texture, imported, read in
    /// place): AMD's path, where the runtime has no GL interop.
    fn texture_as_dma_buf(
        &mut self,
        gpu: &Gpu,
        desc: &FrameDesc,
        plane: usize,
        memory: usize,
        texture: u32,
    ) -> Result<SourcePlane> {
        let error =
            |reason: String| -> Error { desc.error(memory).plane(plane).reason(reason).into() };
        let (imported, layout) = match self.exported.entry(texture) {
            std::collections::hash_map::Entry::Occupied(known) => known.into_mut(),
            std::collections::hash_map::Entry::Vacant(slot) => {
                let e = egl_export::export(texture).map_err(|e| error(e.to_string()))?;
                if let Some(why) = egl_export::refusal(desc.format, plane, e.fourcc, 1, e.modifier)
                {
                    return Err(error(why));
                }
                let layout = PlaneLayout::new(e.offset, e.pitch);
                check_plane(
                    desc.format,
                    desc.width,
                    desc.height,
                    plane,
                    &layout,
                    Some(e.bytes),
                    || desc.error(memory),
                )?;
                let imported = gpu
                    .import_memory(
                        e.fd,
                        ExternalMemoryDesc {
                            kind: ExternalMemoryKind::DmaBuf,
                            size: e.bytes,
                            dedicated: false,
                        },
                    )
                    .map_err(|e| error(e.to_string()))?;
                slot.insert((imported, layout))
            }
        };
        Ok(SourcePlane {
            ptr: imported.ptr() + layout.offset,
            pitch: layout.pitch as usize,
        })
    }

    /// Imports the fd-backed memory objects of `desc` (side `side`): the
    /// whole allocation of each (the fd is duplicated: the frame keeps its
    /// own), mapped once.
    pub(crate) fn import_memory(&mut self, gpu: &Gpu, side: usize, desc: &FrameDesc) -> Result<()> {
        for (i, memory) in desc.memory.iter().enumerate() {
            let (fd, kind, size, dedicated) = match memory {
                Memory::VulkanFd(v) => (
                    v.fd(),
                    ExternalMemoryKind::OpaqueFd,
                    v.bytes(),
                    v.dedicated(),
                ),
                Memory::DmaBuf { fd, bytes, .. } => {
                    (fd.as_fd(), ExternalMemoryKind::DmaBuf, *bytes, false)
                }
                _ => continue,
            };
            let plane = desc.planes.iter().position(|p| p.memory == i).unwrap_or(0);
            let error =
                |reason: String| -> Error { desc.error(i).plane(plane).reason(reason).into() };
            let dup = fd
                .try_clone_to_owned()
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
    pub(crate) fn copy_plane(
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
