//! Reading an imported frame on the host into a [`HostPicture`], for the
//! CPU engines. Their extractors need owned planes in the engine's layout,
//! so a frame is copied once: planar rows as they are, semi-planar rows
//! de-interleaved (and shifted down, for the P formats) in the same pass.

use super::frame::{Frame, FrameDesc};
use super::layout::PixelFormat;
use super::mapping::{view, HostView};
use super::memory::Memory;
use super::ImportError;
use crate::error::Result;
use crate::picture::{HostPicture, PlaneId, PlaneMask};

/// The first part of a frame that only a device can handle (device memory:
/// pointers, arrays, GL textures; fences waited or signalled on a device
/// stream), as an error naming the memory, format and plane, and a phrase
/// saying what it is; `None` when the host can read and wait on it all.
pub(crate) fn device_only_part(frame: &Frame) -> Option<(ImportError, String)> {
    let desc = frame.desc();
    for (i, plane) in desc.planes.iter().enumerate() {
        let memory = &desc.memory[plane.memory];
        if matches!(
            memory,
            Memory::Device(_) | Memory::Array(_) | Memory::GlTexture(_)
        ) {
            return Some((
                desc.error(plane.memory).plane(i),
                format!("{} memory", memory.kind()),
            ));
        }
    }
    let acquire = frame.acquire();
    if acquire.needs_device() {
        return Some((
            desc.error(0),
            format!("its acquire fence ({})", acquire.kind()),
        ));
    }
    drop(acquire);
    let releases = frame.releases();
    let release = releases.iter().find(|r| r.needs_device())?;
    Some((
        desc.error(0),
        format!("its release signal ({})", release.kind()),
    ))
}

/// Refuses, for the CPU engines, what [`device_only_part`] finds.
pub(crate) fn check_host_readable(frame: &Frame) -> Result<()> {
    match device_only_part(frame) {
        None => Ok(()),
        Some((error, what)) => Err(error
            .reason(format!(
                "{what} needs a GPU context (`--backend cuda|hip`): the CPU engine reads \
                 host memory and waits on host fences only"
            ))
            .into()),
    }
}

/// Copies the planes in `needed` of a frame into a new picture (planes not
/// needed stay zero: no extractor of the run reads them).
pub(crate) fn read_frame(frame: &Frame, needed: PlaneMask) -> Result<HostPicture> {
    let desc = frame.desc();
    let mut picture = HostPicture::new(desc.picture_format()?);
    let planes = memory_planes(desc.format, needed);
    let views = map_memory(desc, &planes)?;
    for &p in &planes {
        let plane = &desc.planes[p];
        let view = views[plane.memory]
            .as_ref()
            .expect("mapped every memory object a plane needs");
        let src = &view.bytes()[plane.layout.offset as usize..];
        copy_plane(
            desc.format,
            p,
            src,
            plane.layout.pitch as usize,
            &mut picture,
        );
    }
    Ok(picture)
}

/// The memory planes that hold the picture planes in `needed`.
fn memory_planes(format: PixelFormat, needed: PlaneMask) -> Vec<usize> {
    let chroma = needed.contains(PlaneId::Cb) || needed.contains(PlaneId::Cr);
    if format.is_semi_planar() {
        [(0, needed.contains(PlaneId::Y)), (1, chroma)]
            .into_iter()
            .filter_map(|(p, want)| want.then_some(p))
            .collect()
    } else {
        (0..format.memory_planes())
            .filter(|&p| needed.contains(PlaneId::ALL[p]))
            .collect()
    }
}

/// A host view of each memory object some of `planes` live in, covering
/// the bytes up to the end of the last of them.
fn map_memory<'a>(desc: &'a FrameDesc, planes: &[usize]) -> Result<Vec<Option<HostView<'a>>>> {
    let mut ends = vec![None::<u64>; desc.memory.len()];
    for &p in planes {
        let plane = &desc.planes[p];
        let (row_bytes, rows) = desc.format.plane_extent(p, desc.width, desc.height);
        let end = plane.layout.offset + plane.layout.span(row_bytes, rows);
        let slot = &mut ends[plane.memory];
        *slot = Some(slot.map_or(end, |e| e.max(end)));
    }
    ends.iter()
        .enumerate()
        .map(|(i, end)| {
            end.map(|end| view(&desc.memory[i], end, || desc.error(i)))
                .transpose()
        })
        .collect()
}

/// Copies memory plane `p` (rows `pitch` bytes apart from the start of
/// `src`) into the picture.
fn copy_plane(format: PixelFormat, p: usize, src: &[u8], pitch: usize, picture: &mut HostPicture) {
    let shift = format.sample_shift();
    let wide = format.bytes_per_sample() == 2;
    if format.is_semi_planar() && p == 1 {
        let (width, rows) = picture.format().plane_size(PlaneId::Cb);
        let stride = picture.stride(PlaneId::Cb);
        if wide {
            let (cb, cr) = picture.chroma_u16_mut();
            split_rows_u16(src, pitch, cb, cr, stride, width, rows, shift);
        } else {
            let (cb, cr) = picture.chroma_u8_mut();
            split_rows_u8(src, pitch, cb, cr, stride, width, rows);
        }
        return;
    }
    let id = PlaneId::ALL[p];
    let (width, rows) = picture.format().plane_size(id);
    let stride = picture.stride(id);
    if wide {
        copy_rows_u16(
            src,
            pitch,
            picture.plane_u16_mut(id),
            stride,
            width,
            rows,
            shift,
        );
    } else {
        copy_rows_u8(src, pitch, picture.plane_u8_mut(id), stride, width, rows);
    }
}

fn copy_rows_u8(
    src: &[u8],
    pitch: usize,
    dst: &mut [u8],
    stride: usize,
    width: usize,
    rows: usize,
) {
    for y in 0..rows {
        dst[y * stride..][..width].copy_from_slice(&src[y * pitch..][..width]);
    }
}

/// Little-endian 16-bit words, shifted down by `shift`.
fn copy_rows_u16(
    src: &[u8],
    pitch: usize,
    dst: &mut [u16],
    stride: usize,
    width: usize,
    rows: usize,
    shift: u32,
) {
    for y in 0..rows {
        let s = &src[y * pitch..][..2 * width];
        let d = &mut dst[y * stride..][..width];
        for (d, s) in d.iter_mut().zip(s.chunks_exact(2)) {
            *d = u16::from_le_bytes([s[0], s[1]]) >> shift;
        }
    }
}

/// Interleaved CbCr byte pairs into separate Cb and Cr rows.
fn split_rows_u8(
    src: &[u8],
    pitch: usize,
    cb: &mut [u8],
    cr: &mut [u8],
    stride: usize,
    width: usize,
    rows: usize,
) {
    for y in 0..rows {
        let s = &src[y * pitch..][..2 * width];
        let b = &mut cb[y * stride..][..width];
        let r = &mut cr[y * stride..][..width];
        for ((s, b), r) in s.chunks_exact(2).zip(b.iter_mut()).zip(r.iter_mut()) {
            *b = s[0];
            *r = s[1];
        }
    }
}

/// Interleaved CbCr little-endian word pairs into separate Cb and Cr rows,
/// shifted down by `shift`.
#[allow(clippy::too_many_arguments)]
fn split_rows_u16(
    src: &[u8],
    pitch: usize,
    cb: &mut [u16],
    cr: &mut [u16],
    stride: usize,
    width: usize,
    rows: usize,
    shift: u32,
) {
    for y in 0..rows {
        let s = &src[y * pitch..][..4 * width];
        let b = &mut cb[y * stride..][..width];
        let r = &mut cr[y * stride..][..width];
        for ((s, b), r) in s.chunks_exact(4).zip(b.iter_mut()).zip(r.iter_mut()) {
            *b = u16::from_le_bytes([s[0], s[1]]) >> shift;
            *r = u16::from_le_bytes([s[2], s[3]]) >> shift;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{Acquire, FrameDesc, HostMemory, PlaneLayout};
    use std::ptr::NonNull;

    fn host(bytes: &[u8]) -> Memory {
        // SAFETY: the tests keep `bytes` alive and unwritten while the frame
        // lives.
        Memory::Host(unsafe { HostMemory::new(NonNull::from(bytes).cast(), bytes.len()) })
    }

    #[test]
    fn p010_is_split_and_shifted_with_padding_skipped() {
        // 2x2 frame, 4:2:0: one chroma sample pair. Pitch 8 bytes (4 words).
        let word = |v: u16| (v << 6).to_le_bytes();
        let mut bytes = Vec::new();
        for row in [[1u16, 2], [3, 4]] {
            bytes.extend(word(row[0]));
            bytes.extend(word(row[1]));
            bytes.extend([0xff; 4]);
        }
        bytes.extend(word(700));
        bytes.extend(word(1023));
        bytes.extend([0xff; 4]);
        let desc = FrameDesc::new(
            2,
            2,
            PixelFormat::P010,
            host(&bytes),
            &[PlaneLayout::new(0, 8), PlaneLayout::new(16, 8)],
        );
        let frame = Frame::new(desc, Acquire::None, vec![]).unwrap();
        let p = read_frame(&frame, PlaneMask::ALL).unwrap();
        assert_eq!(p.format().bit_depth, 10);
        assert_eq!(p.plane_u16(PlaneId::Y).row(1), &[3, 4]);
        assert_eq!(p.plane_u16(PlaneId::Cb).row(0), &[700]);
        assert_eq!(p.plane_u16(PlaneId::Cr).row(0), &[1023]);
    }

    #[test]
    fn planes_not_needed_are_not_read() {
        // NV12 whose chroma plane lies past the memory would be refused by
        // Frame::new; here the memory is fine but only luma is asked for.
        let bytes: Vec<u8> = (0..24).collect();
        let desc = FrameDesc::new(
            4,
            4,
            PixelFormat::Nv12,
            host(&bytes),
            &[PlaneLayout::new(0, 4), PlaneLayout::new(16, 4)],
        );
        let frame = Frame::new(desc, Acquire::None, vec![]).unwrap();
        let p = read_frame(&frame, PlaneMask::LUMA).unwrap();
        assert_eq!(p.plane_u8(PlaneId::Y).row(3), &[12, 13, 14, 15]);
        assert_eq!(p.plane_u8(PlaneId::Cb).row(0), &[0, 0]);
        let p = read_frame(&frame, PlaneMask::ALL).unwrap();
        assert_eq!(p.plane_u8(PlaneId::Cb).row(1), &[20, 22]);
        assert_eq!(p.plane_u8(PlaneId::Cr).row(1), &[21, 23]);
    }
}
