//! Frames mapped in place (`FrameSource::read_next` with `map`) against
//! frames read: the same samples, the same ends and the same errors.

use super::test_files::*;
use super::*;
use crate::picture::ChromaSubsampling::{self, *};

const FORMATS: [(u32, u32, ChromaSubsampling, u8); 4] = [
    (37, 21, Yuv420, 8),
    (36, 20, Yuv420, 10),
    (35, 9, Yuv444, 10),
    (18, 6, Yuv422, 12),
];

/// Regular files map in place (y4m samples above 8 bits only at even
/// offsets: an odd-length header makes them read) and give the frames
/// as written, then a clean end, as a read does.
#[test]
fn mapped_frames_are_the_frames_read() {
    let dir = tempfile::tempdir().unwrap();
    for (w, h, s, bits) in FORMATS {
        let format = PictureFormat::new(w, h, s, bits).unwrap();
        let written = frames(format, 3);
        let header = |pad| format!("YUV4MPEG2 W{w} H{h} F25:1 Ip C").len() + pad;
        for (path, expect_mapped) in [
            (yuv(dir.path(), &written), true),
            (
                y4m(dir.path(), format, &written, 0),
                bits == 8 || header(0) % 2 == 1,
            ),
            (
                y4m(dir.path(), format, &written, 1),
                bits == 8 || header(1) % 2 == 1,
            ),
        ] {
            let pool = PicturePool::new(format, 2);
            let mut source = open_source(&path, format);
            for (k, frame) in written.iter().enumerate() {
                let p = source.read_next(&pool, true).unwrap().expect("a frame");
                let name = format!("{} frame {k}", path.display());
                assert_eq!(p.is_mapped(), expect_mapped, "{name}");
                assert_eq!(&packed(&p), frame, "{name}");
                assert_eq!(source.position(), k as u64 + 1, "{name}");
            }
            assert!(source.read_next(&pool, true).unwrap().is_none());
            // Without `map`, pictures from the pool.
            let mut source = open_source(&path, format);
            let p = source.read_next(&pool, false).unwrap().unwrap();
            assert!(!p.is_mapped());
            assert_eq!(packed(&p), written[0]);
        }
    }
}

/// Reads and maps mixed on one source (a frame read through the stream's
/// buffer, then mapped) keep their place.
#[test]
fn reads_and_maps_interleave() {
    let dir = tempfile::tempdir().unwrap();
    let format = PictureFormat::new(20, 8, Yuv420, 8).unwrap();
    let written = frames(format, 4);
    for path in [
        yuv(dir.path(), &written),
        y4m(dir.path(), format, &written, 0),
    ] {
        let pool = PicturePool::new(format, 2);
        let mut source = open_source(&path, format);
        let mut scratch = HostPicture::new(format);
        assert!(source.read_into(&mut scratch).unwrap());
        assert_eq!(packed(&scratch), written[0]);
        let mapped = source.read_next(&pool, true).unwrap().unwrap();
        assert!(mapped.is_mapped());
        assert_eq!(packed(&mapped), written[1]);
        assert!(source.read_into(&mut scratch).unwrap());
        assert_eq!(packed(&scratch), written[2]);
        assert_eq!(
            packed(&source.read_next(&pool, true).unwrap().unwrap()),
            written[3]
        );
        assert!(source.read_next(&pool, true).unwrap().is_none());
    }
}

/// A file the system will not map (a file system without `mmap`) is read
/// instead: the frame whose mapping was refused and every later one, even
/// once mapping would work again, with the frames as written and a clean
/// end.
#[test]
fn a_refused_mapping_falls_back_to_reads() {
    let dir = tempfile::tempdir().unwrap();
    let format = PictureFormat::new(36, 20, Yuv420, 10).unwrap();
    let written = frames(format, 3);
    for path in [
        yuv(dir.path(), &written),
        y4m(dir.path(), format, &written, 1),
    ] {
        let pool = PicturePool::new(format, 2);
        let mut source = open_source(&path, format);
        let refused = crate::picture::refusal::refuse_maps();
        let first = source.read_next(&pool, true).unwrap().unwrap();
        assert!(!first.is_mapped(), "{}", path.display());
        assert_eq!(packed(&first), written[0]);
        drop(refused);
        for (k, frame) in written.iter().enumerate().skip(1) {
            let p = source.read_next(&pool, true).unwrap().unwrap();
            assert!(!p.is_mapped(), "{} frame {k}", path.display());
            assert_eq!(&packed(&p), frame, "{} frame {k}", path.display());
        }
        assert!(source.read_next(&pool, true).unwrap().is_none());
        // A new source maps again.
        let mut source = open_source(&path, format);
        assert!(source.read_next(&pool, true).unwrap().unwrap().is_mapped());
    }
}

/// A file cut short after it was opened is reported truncated at the
/// frame it cuts, not mapped past its end; a sample above the bit depth
/// in a mapped frame is named as in a read one.
#[test]
fn mapped_frames_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let format = PictureFormat::new(36, 20, Yuv420, 10).unwrap();
    let written = frames(format, 3);
    // (The last frame's `FRAME` line, in y4m, goes with it.)
    for (path, line) in [
        (yuv(dir.path(), &written), 0),
        (y4m(dir.path(), format, &written, 1), 6),
    ] {
        let pool = PicturePool::new(format, 2);
        let mut source = open_source(&path, format);
        let first = source.read_next(&pool, true).unwrap().unwrap();
        assert!(first.is_mapped());
        cut_into_the_second_frame(&path, format, line);
        assert_second_frame_truncated(source.read_next(&pool, true), &path, format);
        assert_eq!(packed(&first), written[0]);
    }

    let mut bad = written.clone();
    let luma = format.plane_size(PlaneId::Y);
    let at = (luma.0 * luma.1 + 5) * 2; // Cb, row 0
    bad[1][at..at + 2].copy_from_slice(&1024u16.to_le_bytes());
    let path = yuv(dir.path(), &bad);
    let pool = PicturePool::new(format, 2);
    let mut source = open_source(&path, format);
    source.read_next(&pool, true).unwrap().unwrap();
    match source.read_next(&pool, true) {
        Err(Error::BadInput { frame, reason, .. }) => {
            assert_eq!(frame, 1);
            assert!(
                reason.starts_with("plane Cb row 0: sample 1024"),
                "{reason}"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// Writing to a mapped picture writes a copy: the file is unchanged.
#[test]
fn a_written_mapped_picture_is_a_copy() {
    let dir = tempfile::tempdir().unwrap();
    let format = PictureFormat::new(36, 20, Yuv420, 10).unwrap();
    let written = frames(format, 1);
    let path = yuv(dir.path(), &written);
    let pool = PicturePool::new(format, 2);
    let mut p = open_source(&path, format)
        .read_next(&pool, true)
        .unwrap()
        .unwrap();
    assert!(p.is_mapped());
    p.plane_u16_mut(PlaneId::Y)[3] = 1000;
    assert!(!p.is_mapped());
    assert_eq!(p.plane_u16(PlaneId::Y).row(0)[3], 1000);
    assert_eq!(p.plane_u16(PlaneId::Cr).row(9), {
        let copy =
            HostPicture::map_file(format, &std::fs::File::open(&path).unwrap(), 0, None).unwrap();
        copy.plane_u16(PlaneId::Cr).row(9).to_vec()
    });
    assert_eq!(std::fs::read(&path).unwrap(), written[0]);
}
