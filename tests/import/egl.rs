//! GL producers on the CPU engine (Mesa's llvmpipe through EGL's
//! surfaceless platform in CI): the producer uploads NV12 planes to R8 and
//! RG8 textures, reads them back into a persistently mapped pixel buffer
//! (the GPU writes host memory asynchronously), and fences that with
//! `glFenceSync`. vmafx waits on the GL sync on the submitting thread and
//! scores bit for bit as host pictures.
//!
//! Skips (printing why) where no EGL/GL 4.5 context can be made, unless
//! VMAFX_REQUIRE_EGL is set.

use crate::import_support;

use glow::HasContext;
use import_support::egl::Gl;
use import_support::*;
use std::ptr::NonNull;
use vmafx::import::GlSync;
use vmafx::import::{Acquire, Frame, FrameDesc, HostMemory, Memory, PixelFormat};
use vmafx::{Error, HostPicture};

fn gl() -> Option<Gl> {
    let gl = Gl::new();
    let probe = gl.as_ref().map(|_| ()).map_err(|e| e.clone());
    if !available("EGL + GL 4.5", "VMAFX_REQUIRE_EGL", probe) {
        return None;
    }
    let gl = gl.unwrap();
    eprintln!("GL renderer: {}", gl.renderer);
    Some(gl)
}

/// Textures of one NV12 frame read back into `pbo` at its layout's
/// offsets.
///
/// # Safety
/// The GL context of `gl` is current; `pbo` is bound to PIXEL_PACK_BUFFER.
unsafe fn render_into(
    gl: &glow::Context,
    p: &HostPicture,
    base: usize,
) -> vmafx::import::PlaneLayout {
    let packed = pack(p, PixelFormat::Nv12, 0);
    let f = p.format();
    let (w, h) = (f.width as i32, f.height as i32);
    let (cw, ch) = ((w + 1) / 2, (h + 1) / 2);
    let planes = [
        (glow::R8, glow::RED, w, h, packed.planes[0]),
        (glow::RG8, glow::RG, cw, ch, packed.planes[1]),
    ];
    let fbo = gl.create_framebuffer().unwrap();
    gl.bind_framebuffer(glow::FRAMEBUFFER, Some(fbo));
    for (internal, format, tw, th, layout) in planes {
        // The producer's "render": upload the plane's rows into a texture.
        let texel = if format == glow::RG { 2 } else { 1 };
        let tex = gl.create_texture().unwrap();
        gl.bind_texture(glow::TEXTURE_2D, Some(tex));
        gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
        gl.pixel_store_i32(glow::UNPACK_ROW_LENGTH, layout.pitch as i32 / texel);
        gl.tex_image_2d(
            glow::TEXTURE_2D,
            0,
            internal as i32,
            tw,
            th,
            0,
            format,
            glow::UNSIGNED_BYTE,
            glow::PixelUnpackData::Slice(Some(&packed.bytes[layout.offset as usize..])),
        );
        // Read it back into the mapped buffer: the GPU writes host memory.
        gl.framebuffer_texture_2d(
            glow::FRAMEBUFFER,
            glow::COLOR_ATTACHMENT0,
            glow::TEXTURE_2D,
            Some(tex),
            0,
        );
        gl.pixel_store_i32(glow::PACK_ALIGNMENT, 1);
        gl.pixel_store_i32(glow::PACK_ROW_LENGTH, layout.pitch as i32 / texel);
        gl.read_pixels(
            0,
            0,
            tw,
            th,
            format,
            glow::UNSIGNED_BYTE,
            glow::PixelPackData::BufferOffset((base as u64 + layout.offset) as u32),
        );
        gl.delete_texture(tex);
    }
    gl.bind_framebuffer(glow::FRAMEBUFFER, None);
    gl.delete_framebuffer(fbo);
    packed.planes[1]
}

#[test]
fn gl_synced_frames_score_like_host_pictures() {
    let Some(ctx_gl) = gl() else { return };
    let gl = &ctx_gl.gl;
    let pairs = golden_frames(golden("e_321x179_420p8_zoom"), 3);
    let want = score_pictures(&pairs, 1);
    let format = *pairs[0].0.format();
    let frame_bytes = pack(&pairs[0].0, PixelFormat::Nv12, 0).bytes.len();
    let pool_bytes = frame_bytes * 2 * pairs.len();

    let mut ctx = context(format, 1).build().unwrap();
    // SAFETY: the context made by `gl()` is current on this thread.
    unsafe {
        let pbo = gl.create_buffer().unwrap();
        gl.bind_buffer(glow::PIXEL_PACK_BUFFER, Some(pbo));
        let flags = glow::MAP_READ_BIT | glow::MAP_PERSISTENT_BIT | glow::MAP_COHERENT_BIT;
        gl.buffer_storage(glow::PIXEL_PACK_BUFFER, pool_bytes as i32, None, flags);
        let mapped = gl.map_buffer_range(glow::PIXEL_PACK_BUFFER, 0, pool_bytes as i32, flags);
        let mapped = NonNull::new(mapped).expect("glMapBufferRange");
        let mut syncs = Vec::new();
        for (i, (r, d)) in pairs.iter().enumerate() {
            let mut frame = |p, slot: usize| {
                let base = slot * frame_bytes;
                let chroma = render_into(gl, p, base);
                let luma = pack(p, PixelFormat::Nv12, 0).planes[0];
                let sync = gl.fence_sync(glow::SYNC_GPU_COMMANDS_COMPLETE, 0).unwrap();
                syncs.push(sync);
                let memory = Memory::Host(HostMemory::new(
                    NonNull::new(mapped.as_ptr().add(base)).unwrap(),
                    frame_bytes,
                ));
                let desc = FrameDesc::new(
                    format.width,
                    format.height,
                    PixelFormat::Nv12,
                    memory,
                    &[luma, chroma],
                );
                Frame::new(
                    desc,
                    Acquire::GlSync(GlSync::from_raw(sync.0 as usize)),
                    vec![],
                )
                .unwrap()
            };
            let (rf, df) = (frame(r, 2 * i), frame(d, 2 * i + 1));
            ctx.submit_frames(&rf, &df).unwrap();
        }
        for sync in syncs {
            // Waited (and so signalled) by submit_frames.
            assert_eq!(gl.get_sync_status(sync), glow::SIGNALED);
            gl.delete_sync(sync);
        }
        assert_identical("GL-synced NV12", &ctx.finish().unwrap(), &want);
        gl.unmap_buffer(glow::PIXEL_PACK_BUFFER);
        gl.delete_buffer(pbo);
    }
}

#[test]
fn a_gl_sync_submitted_where_no_gl_context_is_current_is_refused() {
    // Only needs libEGL (to look glClientWaitSync up): skip like the rest.
    let Some(_gl) = gl() else { return };
    let pairs = golden_frames(golden("e_321x179_420p8_zoom"), 1);
    let format = *pairs[0].0.format();
    let packed = pack(&pairs[0].0, PixelFormat::Nv12, 0);
    std::thread::scope(|s| {
        s.spawn(|| {
            let desc = FrameDesc::new(
                format.width,
                format.height,
                PixelFormat::Nv12,
                host_memory(&packed.bytes),
                &packed.planes,
            );
            let frame = Frame::new(
                desc,
                Acquire::GlSync(unsafe { GlSync::from_raw(0x1) }),
                vec![],
            )
            .unwrap();
            let mut ctx = context(format, 1).build().unwrap();
            let e = ctx.submit_frames(&frame, &frame).unwrap_err();
            assert!(matches!(e, Error::Gpu { .. }), "{e}");
            let msg = e.to_string();
            assert!(
                msg.contains("glClientWaitSync (GL sync (acquire of frame 0, reference))"),
                "{msg}"
            );
            assert!(msg.contains("current on the submitting thread"), "{msg}");
        });
    });
}

/// AMD's GL path (EGL_MESA_image_dma_buf_export, then a dma-buf import):
/// where this EGL offers the export, an R8 texture exports as one linear R8
/// plane whose bytes are the texture's; where it does not (Debian 12's
/// Mesa, the H200's EGL), the refusal names the extension.
#[test]
fn gl_textures_export_as_dma_bufs_or_the_refusal_names_the_extension() {
    let Some(gl) = gl() else { return };
    let (w, h) = (64usize, 48usize);
    let bytes: Vec<u8> = (0..w * h).map(|i| (i * 7 % 251) as u8).collect();
    // SAFETY: the context of `gl` is current on this thread.
    let texture = unsafe {
        let g = &gl.gl;
        let tex = g.create_texture().unwrap();
        g.bind_texture(glow::TEXTURE_2D, Some(tex));
        g.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
        g.tex_image_2d(
            glow::TEXTURE_2D,
            0,
            glow::R8 as i32,
            w as i32,
            h as i32,
            0,
            glow::RED,
            glow::UNSIGNED_BYTE,
            glow::PixelUnpackData::Slice(Some(&bytes)),
        );
        g.finish();
        tex
    };
    match vmafx::testing::export_gl_texture(texture.0.get(), PixelFormat::Nv12, 0) {
        Err(e) => {
            let msg = e.to_string();
            println!("{} (no export): {msg}", gl.renderer);
            assert!(
                msg.contains("EGL_MESA_image_dma_buf_export")
                    || msg.contains("eglExportDMABUFImage"),
                "{msg}"
            );
        }
        Ok((fd, [size, offset, pitch, fourcc, modifier], refusal)) => {
            println!("exported: {size} bytes, offset {offset}, pitch {pitch}, fourcc {fourcc:#x}, modifier {modifier:#x}");
            assert_eq!(refusal, None, "an R8 texture must be NV12's luma plane");
            let map = unsafe {
                nix::sys::mman::mmap(
                    None,
                    std::num::NonZeroUsize::new(size as usize).unwrap(),
                    nix::sys::mman::ProtFlags::PROT_READ,
                    nix::sys::mman::MapFlags::MAP_SHARED,
                    &fd,
                    0,
                )
            }
            .expect("a dma-buf the host can map");
            let all =
                unsafe { std::slice::from_raw_parts(map.as_ptr() as *const u8, size as usize) };
            for y in 0..h {
                let row = &all[(offset + y as u64 * pitch) as usize..][..w];
                assert_eq!(row, &bytes[y * w..][..w], "row {y}");
            }
            unsafe { nix::sys::mman::munmap(map, size as usize).unwrap() };
        }
    }
    unsafe { gl.gl.delete_texture(texture) };
}
