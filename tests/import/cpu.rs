//! Imported frames on the CPU engines: host memory and memfd-backed
//! frames, planar and every semi-planar layout (built from golden frames by
//! interleaving and shifting), score bit for bit as the same frames
//! submitted as host pictures; host fences and sync_file stand-ins (pipes)
//! are waited off the producer's thread; pairs keep submission order; a
//! frame shared by two contexts is released after both.

use crate::import_support;

use import_support::*;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};
use vmafx::import::{Acquire, Frame, FrameDesc, HostFence, Memory, PixelFormat, Release};
use vmafx::{ChromaSubsampling, Error, HostPicture};

const FRAMES: usize = 3;

/// Where the test puts a frame's bytes.
#[derive(Clone, Copy, Debug)]
enum Backing {
    Host,
    Memfd,
}

/// Frames of `pairs` laid out as `format`, in host memory or in one memfd
/// shared by all of them (each frame holding a duplicate of its fd, as
/// from a producer's pool), each with a release fence.
struct Imported {
    frames: Vec<(Frame, Frame)>,
    released: Vec<HostFence>,
    _bytes: Vec<Vec<u8>>,
}

fn import(pairs: &[(HostPicture, HostPicture)], format: PixelFormat, backing: Backing) -> Imported {
    let pictures: Vec<&HostPicture> = pairs.iter().flat_map(|(r, d)| [r, d]).collect();
    // Frame k starts where frame k-1 ended, plus a 4 KiB gap (any offset
    // works; the first frame starts at 100 bytes in).
    let mut pool = Vec::new();
    let mut layouts = Vec::new();
    for p in &pictures {
        let base = if pool.is_empty() {
            100
        } else {
            pool.len() + 4096
        };
        let packed = pack(p, format, base);
        pool.resize(base, 0);
        pool.extend_from_slice(&packed.bytes[base..]);
        layouts.push(packed.planes);
    }
    let shared_fd = matches!(backing, Backing::Memfd).then(|| memfd(&pool));
    let mut released = Vec::new();
    let mut frames: Vec<Frame> = Vec::new();
    for (p, planes) in pictures.iter().zip(&layouts) {
        let memory = match &shared_fd {
            None => host_memory(&pool),
            Some(fd) => Memory::HostFd {
                fd: fd.as_fd().try_clone_to_owned().unwrap(),
                bytes: pool.len() as u64,
            },
        };
        let f = p.format();
        let fence = HostFence::new();
        let desc = FrameDesc::new(f.width, f.height, format, memory, planes);
        frames.push(Frame::new(desc, Acquire::None, vec![Release::Host(fence.clone())]).unwrap());
        released.push(fence);
    }
    let mut it = frames.into_iter();
    let mut paired = Vec::new();
    while let (Some(r), Some(d)) = (it.next(), it.next()) {
        paired.push((r, d));
    }
    Imported {
        frames: paired,
        released,
        _bytes: vec![pool],
    }
}

/// Scores `pairs` imported as `format` from each backing and checks every
/// run against the host-picture run, and that every frame was released.
fn check_layout(
    what: &str,
    pairs: &[(HostPicture, HostPicture)],
    format: PixelFormat,
    threads: usize,
) {
    let want = score_pictures(pairs, threads);
    for backing in [Backing::Host, Backing::Memfd] {
        let imported = import(pairs, format, backing);
        let mut ctx = context(*pairs[0].0.format(), threads).build().unwrap();
        for (r, d) in &imported.frames {
            ctx.submit_frames(r, d).unwrap();
        }
        drop(imported.frames);
        let got = ctx.finish().unwrap();
        assert_identical(&format!("{what} as {format} from {backing:?}"), &got, &want);
        for (i, f) in imported.released.iter().enumerate() {
            assert!(
                f.is_signalled(),
                "{what} {format} {backing:?}: frame {i} not released"
            );
        }
    }
}

fn planar(s: ChromaSubsampling, bit_depth: u8) -> PixelFormat {
    PixelFormat::Planar {
        subsampling: s,
        bit_depth,
    }
}

fn frames(folder: &str, bit_depth: Option<u8>) -> Vec<(HostPicture, HostPicture)> {
    let pairs = golden_frames(golden(folder), FRAMES);
    match bit_depth {
        None => pairs,
        Some(b) => pairs
            .iter()
            .map(|(r, d)| (rescale(r, b), rescale(d, b)))
            .collect(),
    }
}

#[test]
fn planar_frames_score_like_host_pictures() {
    use ChromaSubsampling::*;
    check_layout(
        "420p8",
        &frames("a_576x324_420p8_pan", None),
        planar(Yuv420, 8),
        1,
    );
    check_layout(
        "420p10",
        &frames("c_576x324_420p10_zoom", None),
        planar(Yuv420, 10),
        1,
    );
    check_layout(
        "422p10",
        &frames("d_352x288_422p10_pan", None),
        planar(Yuv422, 10),
        1,
    );
    check_layout(
        "444p8",
        &frames("d_352x288_444p8_pan", None),
        planar(Yuv444, 8),
        2,
    );
}

#[test]
fn eight_bit_semi_planar_frames_score_like_host_pictures() {
    check_layout(
        "420p8",
        &frames("a_576x324_420p8_pan", None),
        PixelFormat::Nv12,
        1,
    );
    check_layout(
        "422p10>>2",
        &frames("d_352x288_422p10_pan", Some(8)),
        PixelFormat::Nv16,
        1,
    );
    check_layout(
        "444p8",
        &frames("d_352x288_444p8_pan", None),
        PixelFormat::Nv24,
        2,
    );
}

#[test]
fn ten_bit_semi_planar_frames_score_like_host_pictures() {
    check_layout(
        "420p10",
        &frames("c_576x324_420p10_zoom", None),
        PixelFormat::P010,
        1,
    );
    check_layout(
        "422p10",
        &frames("d_352x288_422p10_pan", None),
        PixelFormat::P210,
        1,
    );
    check_layout(
        "444p8<<2",
        &frames("d_352x288_444p8_pan", Some(10)),
        PixelFormat::P410,
        2,
    );
}

#[test]
fn sixteen_bit_semi_planar_frames_score_like_host_pictures() {
    check_layout(
        "420p10<<6",
        &frames("c_576x324_420p10_zoom", Some(16)),
        PixelFormat::P016,
        1,
    );
    check_layout(
        "422p10<<6",
        &frames("d_352x288_422p10_pan", Some(16)),
        PixelFormat::P216,
        1,
    );
    check_layout(
        "444p8<<8",
        &frames("d_352x288_444p8_pan", Some(16)),
        PixelFormat::P416,
        2,
    );
}

#[test]
fn odd_sized_frames_score_like_host_pictures() {
    let odd = frames("e_321x179_420p8_zoom", None);
    check_layout(
        "321x179 420p8",
        &odd,
        planar(ChromaSubsampling::Yuv420, 8),
        1,
    );
    check_layout("321x179 420p8", &odd, PixelFormat::Nv12, 2);
    let odd10 = frames("e_321x179_420p8_zoom", Some(10));
    check_layout("321x179 420p8<<2", &odd10, PixelFormat::P010, 1);
}

/// One NV12 frame in host memory with the given acquire and a release
/// fence.
fn nv12_frame(p: &HostPicture, acquire: Acquire, bytes: &mut Vec<Vec<u8>>) -> (Frame, HostFence) {
    let packed = pack(p, PixelFormat::Nv12, 0);
    let f = p.format();
    let desc = FrameDesc::new(
        f.width,
        f.height,
        PixelFormat::Nv12,
        host_memory(&packed.bytes),
        &packed.planes,
    );
    bytes.push(packed.bytes);
    let fence = HostFence::new();
    let frame = Frame::new(desc, acquire, vec![Release::Host(fence.clone())]).unwrap();
    (frame, fence)
}

#[test]
fn sync_files_are_waited_off_the_producer_thread() {
    let pairs = frames("a_576x324_420p8_pan", None);
    let want = score_pictures(&pairs, 1);
    let mut keep = Vec::new();
    let mut ctx = context(*pairs[0].0.format(), 1).build().unwrap();
    let mut writers = Vec::new();
    let mut releases = Vec::new();
    for (r, d) in &pairs {
        // A pipe stands in for a sync_file: readable = signalled.
        let (read, write) = nix::unistd::pipe().unwrap();
        let (rf, rr) = nv12_frame(r, Acquire::None, &mut keep);
        let (df, dr) = nv12_frame(d, Acquire::SyncFile(read), &mut keep);
        let start = Instant::now();
        ctx.submit_frames(&rf, &df).unwrap();
        assert!(
            start.elapsed() < Duration::from_secs(1),
            "submit waited on the fence"
        );
        writers.push(write);
        releases.push((rr, dr));
    }
    std::thread::sleep(Duration::from_millis(50));
    for (i, (rr, dr)) in releases.iter().enumerate() {
        // The reference had no fence: read at submit and released (the
        // test's handle is gone after the loop).
        assert!(
            rr.is_signalled(),
            "reference {i} not released after its read"
        );
        assert!(
            !dr.is_signalled(),
            "distorted {i} released before its fence signalled"
        );
    }
    // Signal in reverse: reading may go in any order, scoring goes in
    // submission order (motion would differ otherwise).
    for w in writers.iter().rev() {
        nix::unistd::write(w, b"x").unwrap();
    }
    for (i, (_, dr)) in releases.iter().enumerate() {
        assert!(
            dr.wait(Duration::from_secs(10)),
            "distorted {i} not released once signalled"
        );
    }
    assert_identical("sync_file frames", &ctx.finish().unwrap(), &want);
}

#[test]
fn a_silent_sync_file_times_out_naming_fence_frame_and_side() {
    let pairs = frames("a_576x324_420p8_pan", None);
    let mut keep = Vec::new();
    let mut ctx = context(*pairs[0].0.format(), 1)
        .fence_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let (r0, _) = nv12_frame(&pairs[0].0, Acquire::None, &mut keep);
    let (d0, _) = nv12_frame(&pairs[0].1, Acquire::None, &mut keep);
    ctx.submit_frames(&r0, &d0).unwrap();
    let (_writer_kept, never) = {
        let (read, write) = nix::unistd::pipe().unwrap();
        (write, read)
    };
    let (r1, r1_released) = nv12_frame(&pairs[1].0, Acquire::SyncFile(never), &mut keep);
    let (d1, d1_released) = nv12_frame(&pairs[1].1, Acquire::None, &mut keep);
    ctx.submit_frames(&r1, &d1).unwrap();
    drop((r0, d0, r1, d1));
    let start = Instant::now();
    let e = ctx.finish().unwrap_err();
    assert!(
        matches!(e, Error::FenceTimeout { waited_ms: 200, .. }),
        "{e}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("sync_file (acquire of frame 1, reference)"),
        "{msg}"
    );
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(
        r1_released.is_signalled(),
        "the timed-out frame was not released"
    );
    assert!(d1_released.is_signalled());
}

#[test]
fn host_fences_signalled_later_by_another_thread() {
    let pairs = frames("c_576x324_420p10_zoom", None);
    let want = score_pictures(&pairs, 2);
    let mut keep = Vec::new();
    let mut ctx = context(*pairs[0].0.format(), 2).build().unwrap();
    let mut acquires = Vec::new();
    for (r, d) in &pairs {
        let ready = HostFence::new();
        let mk = |p: &HostPicture, keep: &mut Vec<Vec<u8>>| {
            let packed = pack(p, PixelFormat::P010, 64);
            let f = p.format();
            let desc = FrameDesc::new(
                f.width,
                f.height,
                PixelFormat::P010,
                host_memory(&packed.bytes),
                &packed.planes,
            );
            keep.push(packed.bytes);
            Frame::new(desc, Acquire::Host(ready.clone()), vec![]).unwrap()
        };
        ctx.submit_frames(&mk(r, &mut keep), &mk(d, &mut keep))
            .unwrap();
        acquires.push(ready);
    }
    let signaller = std::thread::spawn(move || {
        for a in acquires {
            std::thread::sleep(Duration::from_millis(20));
            a.signal();
        }
    });
    let got = ctx.finish().unwrap();
    signaller.join().unwrap();
    assert_identical("host-fenced P010 frames", &got, &want);
}

#[test]
fn host_pictures_behind_waiting_frames_keep_their_turn() {
    let pairs = frames("a_576x324_420p8_pan", None);
    let want = score_pictures(&pairs, 1);
    let mut keep = Vec::new();
    let mut ctx = context(*pairs[0].0.format(), 1).build().unwrap();
    let gate = HostFence::new();
    let (r0, _) = nv12_frame(&pairs[0].0, Acquire::Host(gate.clone()), &mut keep);
    let (d0, _) = nv12_frame(&pairs[0].1, Acquire::None, &mut keep);
    ctx.submit_frames(&r0, &d0).unwrap();
    for (r, d) in &pairs[1..] {
        ctx.submit(r.clone(), d.clone()).unwrap();
    }
    gate.signal();
    assert_identical("frames then pictures", &ctx.finish().unwrap(), &want);
}

#[test]
fn a_frame_read_by_two_contexts_is_released_after_both() {
    let pairs = frames("a_576x324_420p8_pan", None);
    let want = score_pictures(&pairs[..1], 1);
    let mut keep = Vec::new();
    let written = HostFence::new();
    let (r, released) = nv12_frame(&pairs[0].0, Acquire::Host(written.clone()), &mut keep);
    let (d, _) = nv12_frame(&pairs[0].1, Acquire::None, &mut keep);
    let format = *pairs[0].0.format();
    let mut a = context(format, 1).build().unwrap();
    let mut b = context(format, 2).build().unwrap();
    a.submit_frames(&r, &d).unwrap();
    b.submit_frames(&r, &d).unwrap();
    assert_eq!(
        r.references(),
        3,
        "the producer's handle and one per context"
    );
    drop((r, d));
    std::thread::sleep(Duration::from_millis(20));
    assert!(
        !released.is_signalled(),
        "released while both contexts hold it"
    );
    written.signal();
    assert!(released.wait(Duration::from_secs(10)));
    assert_identical("context a", &a.finish().unwrap(), &want);
    assert_identical("context b", &b.finish().unwrap(), &want);
}

#[test]
fn one_context_done_the_other_still_holds_the_frame() {
    let pairs = frames("a_576x324_420p8_pan", None);
    let mut keep = Vec::new();
    let written = HostFence::new();
    let (r, released) = nv12_frame(&pairs[0].0, Acquire::Host(written.clone()), &mut keep);
    let (d, _) = nv12_frame(&pairs[0].1, Acquire::None, &mut keep);
    let format = *pairs[0].0.format();
    let mut a = context(format, 1).build().unwrap();
    a.submit_frames(&r, &d).unwrap();
    written.signal();
    a.finish().unwrap();
    // Context a has read and dropped it; the producer's handle remains, and
    // a second context can still read it (its fence is known signalled).
    assert_eq!(r.references(), 1);
    assert!(!released.is_signalled());
    let mut b = context(format, 1).build().unwrap();
    b.submit_frames(&r, &d).unwrap();
    drop((r, d));
    assert!(
        released.is_signalled(),
        "the last reader's copy releases it"
    );
    b.finish().unwrap();
}

#[test]
fn dropping_a_context_releases_the_frames_it_waits_on() {
    let pairs = frames("a_576x324_420p8_pan", None);
    let mut keep = Vec::new();
    let never = HostFence::new();
    let (r, r_released) = nv12_frame(&pairs[0].0, Acquire::Host(never.clone()), &mut keep);
    let (d, d_released) = nv12_frame(&pairs[0].1, Acquire::None, &mut keep);
    let mut ctx = context(*pairs[0].0.format(), 1).build().unwrap();
    ctx.submit_frames(&r, &d).unwrap();
    drop((r, d));
    assert!(d_released.is_signalled(), "read at submit, released");
    assert!(!r_released.is_signalled(), "still waiting on its fence");
    drop(ctx);
    assert!(r_released.is_signalled(), "a dropped context let go of it");
}
