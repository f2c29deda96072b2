//! Large frames of regular files read in pieces on several threads
//! (`read_stream_frame`) against the frames written: the same samples, the
//! same place in the stream, the same ends and the same errors.

use super::test_files::*;
use super::*;
use crate::picture::ChromaSubsampling::*;
use std::cell::Cell;

thread_local! {
    /// Frames this thread read in pieces (the tests' proof that the path
    /// they test ran).
    pub(super) static FRAMES_IN_PIECES: Cell<usize> = const { Cell::new(0) };
}

fn in_pieces() -> usize {
    FRAMES_IN_PIECES.with(Cell::get)
}

/// Frames of two pieces' worth and more: 8-bit 4:2:0 (3 MB), 10-bit
/// 4:4:4 (5.5 MB, planes of odd piece counts) and 12-bit 4:2:2 whose
/// width is odd (chroma rows of an odd byte count).
fn large_formats() -> [PictureFormat; 3] {
    [
        PictureFormat::new(1920, 1080, Yuv420, 8).unwrap(),
        PictureFormat::new(1280, 720, Yuv444, 10).unwrap(),
        PictureFormat::new(1281, 721, Yuv422, 12).unwrap(),
    ]
}

/// Pool pictures and the caller's own packed pictures read in pieces give
/// the frames as written, then a clean end; reads in order (a padded
/// picture) between them keep their place in the stream, y4m `FRAME`
/// lines and odd-length headers included.
#[test]
fn large_frames_read_in_pieces_are_the_frames_written() {
    let dir = tempfile::tempdir().unwrap();
    for format in large_formats() {
        assert!(format.frame_bytes() >= 2 * parallel::PIECE);
        let written = frames(format, 4);
        for path in [
            yuv(dir.path(), &written),
            y4m(dir.path(), format, &written, 0),
            y4m(dir.path(), format, &written, 1),
        ] {
            let name = |k| format!("{} {format} frame {k}", path.display());
            let pool = PicturePool::new(format, 2);
            let mut source = open_source(&path, format);
            let before = in_pieces();
            let p = source.read_next(&pool, false).unwrap().unwrap();
            assert_eq!(packed(&p), written[0], "{}", name(0));
            let mut own = HostPicture::new(format);
            assert!(source.read_into(&mut own).unwrap());
            assert_eq!(packed(&own), written[1], "{}", name(1));
            assert_eq!(in_pieces(), before + 2, "{}", name(1));
            let mut padded = HostPicture::with_alignment(format, 7);
            assert!(!padded.is_packed());
            assert!(source.read_into(&mut padded).unwrap());
            assert_eq!(packed(&padded), written[2], "{}", name(2));
            assert_eq!(in_pieces(), before + 2, "{}: read in order", name(2));
            let p = source.read_next(&pool, false).unwrap().unwrap();
            assert_eq!(packed(&p), written[3], "{}", name(3));
            assert_eq!(in_pieces(), before + 3, "{}", name(3));
            assert_eq!(source.position(), 4);
            assert!(source.read_next(&pool, false).unwrap().is_none());
        }
    }
}

/// A sample above the bit depth in any piece (the first, one in the
/// middle of luma, the last sample of Cr) is named by plane and row, as
/// in a frame read in order.
#[test]
fn a_sample_above_the_bit_depth_in_any_piece_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let format = large_formats()[1];
    let (w, _) = format.plane_size(PlaneId::Y);
    for (at, named) in [
        (2 * 3, "plane Y row 0: sample 1024"),
        ((400 * w + 9) * 2, "plane Y row 400: sample 1024"),
        (format.frame_bytes() - 2, "plane Cr row 719: sample 1024"),
    ] {
        let mut bad = frames(format, 2);
        bad[1][at..at + 2].copy_from_slice(&1024u16.to_le_bytes());
        let path = yuv(dir.path(), &bad);
        let pool = PicturePool::new(format, 2);
        let mut source = open_source(&path, format);
        source.read_next(&pool, false).unwrap().unwrap();
        let before = in_pieces();
        match source.read_next(&pool, false) {
            Err(Error::BadInput { frame, reason, .. }) => {
                assert_eq!(frame, 1);
                assert!(reason.starts_with(named), "{reason}");
            }
            other => panic!("{named}: {other:?}"),
        }
        assert_eq!(in_pieces(), before + 1);
    }
}

/// A file cut inside a frame after it was opened is read in order up to
/// its end and reported truncated at that frame with the bytes it holds.
#[test]
fn a_large_frame_cut_short_is_reported_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let format = large_formats()[0];
    let written = frames(format, 3);
    for (path, line) in [
        (yuv(dir.path(), &written), 0),
        (y4m(dir.path(), format, &written, 1), 6),
    ] {
        let pool = PicturePool::new(format, 2);
        let mut source = open_source(&path, format);
        let first = source.read_next(&pool, false).unwrap().unwrap();
        cut_into_the_second_frame(&path, format, line);
        let before = in_pieces();
        assert_second_frame_truncated(source.read_next(&pool, false), &path, format);
        assert_eq!(in_pieces(), before, "{}", path.display());
        assert_eq!(packed(&first), written[0]);
    }
}
