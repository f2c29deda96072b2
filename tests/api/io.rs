//! File input: .yuv and .y4m give the same pictures; short, corrupt or
//! mis-described files give errors that name the file and frame.

use crate::common;

use std::io::Write;
use vmafx::io::{open, FrameSource};
use vmafx::{ChromaSubsampling, Error, HostPicture, PictureFormat, PlaneId};

fn fmt(w: u32, h: u32, s: ChromaSubsampling, b: u8) -> PictureFormat {
    PictureFormat::new(w, h, s, b).unwrap()
}

fn write_tmp(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.path().join(name);
    std::fs::File::create(&p).unwrap().write_all(bytes).unwrap();
    p
}

fn read_all(src: &mut dyn FrameSource) -> Result<Vec<HostPicture>, Error> {
    let mut out = Vec::new();
    loop {
        let mut p = HostPicture::new(src.format());
        if !src.read_into(&mut p)? {
            return Ok(out);
        }
        out.push(p);
    }
}

#[test]
fn y4m_and_yuv_read_the_same_odd_size_pictures() {
    let pair = &common::PAIRS[7]; // 321x179 4:2:0, standard ceil-size chroma
    let raw = common::decompress(&pair.reference_path());
    let f = pair.format();
    let dir = tempfile::tempdir().unwrap();
    let yuv = write_tmp(&dir, "ref.yuv", &raw);
    let mut y4m = b"YUV4MPEG2 W321 H179 F30:1 Ip C420jpeg\n".to_vec();
    for frame in raw.chunks(f.frame_bytes()) {
        y4m.extend_from_slice(b"FRAME\n");
        y4m.extend_from_slice(frame);
    }
    let y4m = write_tmp(&dir, "ref.y4m", &y4m);

    let a = read_all(open(&yuv, Some(f)).unwrap().as_mut()).unwrap();
    let b = read_all(open(&y4m, None).unwrap().as_mut()).unwrap();
    assert_eq!(a.len(), 8);
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        for p in PlaneId::ALL {
            assert_eq!(x.plane_u8(p).data, y.plane_u8(p).data);
        }
    }
    // Into pictures with padded rows (read through a buffer, not straight
    // into the planes) and into pool pictures: the same samples.
    let mut padded_source = open(&y4m, None).unwrap();
    let pool = vmafx::PicturePool::new(f, 2);
    let mut pooled_source = open(&yuv, Some(f)).unwrap();
    for x in &a {
        let mut padded = HostPicture::with_alignment(f, 64);
        assert!(padded_source.read_into(&mut padded).unwrap());
        let mut lent = pool.picture().unwrap();
        assert!(pooled_source.read_into(&mut lent).unwrap());
        for p in PlaneId::ALL {
            let (want, got) = (x.plane_u8(p), padded.plane_u8(p));
            for row in 0..want.height {
                assert_eq!(want.row(row), got.row(row), "padded plane {p} row {row}");
            }
            assert_eq!(want.data, lent.plane_u8(p).data, "pool plane {p}");
        }
    }
    // The last chroma column is the file's, not padding.
    let cb = a[0].plane_u8(PlaneId::Cb);
    assert_eq!((cb.width, cb.height), (161, 90));
    assert_eq!(cb.at(160, 0), raw[321 * 179 + 160]);
}

#[test]
fn ten_bit_samples_are_little_endian_words() {
    let f = fmt(2, 2, ChromaSubsampling::Yuv420, 10);
    let dir = tempfile::tempdir().unwrap();
    let bytes: Vec<u8> = [1023u16, 0, 512, 1, 300, 700]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let p = write_tmp(&dir, "a.yuv", &bytes);
    let pics = read_all(open(&p, Some(f)).unwrap().as_mut()).unwrap();
    assert_eq!(pics[0].plane_u16(PlaneId::Y).data, &[1023, 0, 512, 1]);
    assert_eq!(pics[0].plane_u16(PlaneId::Cr).data, &[700]);
}

#[test]
fn truncated_yuv_names_file_and_frame() {
    let f = fmt(4, 4, ChromaSubsampling::Yuv420, 8);
    let dir = tempfile::tempdir().unwrap();
    let p = write_tmp(&dir, "short.yuv", &[0u8; 24 * 2 + 10]);
    let e = open(&p, Some(f)).err().expect("size check").to_string();
    assert!(e.contains("short.yuv") && e.contains("frame 2"), "{e}");
}

#[test]
fn wrong_geometry_is_caught() {
    // 576x324 file read as 576x320: not a whole number of frames.
    let pair = &common::PAIRS[0];
    let raw = common::decompress(&pair.reference_path());
    let dir = tempfile::tempdir().unwrap();
    let p = write_tmp(&dir, "ref.yuv", &raw);
    let e = open(&p, Some(fmt(576, 320, ChromaSubsampling::Yuv420, 8)))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("wrong width/height"), "{e}");
}

#[test]
fn out_of_range_samples_are_refused() {
    let f = fmt(2, 2, ChromaSubsampling::Yuv400, 10);
    let dir = tempfile::tempdir().unwrap();
    let bytes: Vec<u8> = [5u16, 4096, 0, 0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let p = write_tmp(&dir, "hi.yuv", &bytes);
    let e = read_all(open(&p, Some(f)).unwrap().as_mut()).unwrap_err();
    assert!(matches!(e, Error::BadInput { frame: 0, .. }), "{e}");
    assert!(e.to_string().contains("4096"), "{e}");
}

#[test]
fn corrupt_y4m_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_tmp(
        &dir,
        "bad.y4m",
        b"YUV4MPEG2 W4 H4 C420jpeg\nFRAME\n\x01\x02",
    );
    let e = read_all(open(&p, None).unwrap().as_mut())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("bad.y4m") && e.contains("frame 0") && e.contains("truncated"),
        "{e}"
    );

    let mut body = b"YUV4MPEG2 W2 H2 C420jpeg\nFRAME\n".to_vec();
    body.extend_from_slice(&[0; 6]);
    body.extend_from_slice(b"GARBAGE\n");
    let p = write_tmp(&dir, "bad2.y4m", &body);
    let e = read_all(open(&p, None).unwrap().as_mut())
        .unwrap_err()
        .to_string();
    assert!(e.contains("frame 1") && e.contains("FRAME"), "{e}");

    let p = write_tmp(&dir, "nohdr.y4m", b"YUV4MPEG2 W4\n");
    let e = open(&p, None).err().unwrap().to_string();
    assert!(e.contains("nohdr.y4m") && e.contains("H"), "{e}");
}

#[test]
fn y4m_header_must_agree_with_flags() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_tmp(&dir, "a.y4m", b"YUV4MPEG2 W4 H4 C420jpeg\n");
    let e = open(&p, Some(fmt(8, 4, ChromaSubsampling::Yuv420, 8)))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("header says"), "{e}");
}

#[test]
fn raw_input_needs_geometry() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_tmp(&dir, "a.yuv", &[0; 6]);
    let e = open(&p, None).err().unwrap().to_string();
    assert!(e.contains("--width"), "{e}");
    let e = open(
        &dir.path().join("missing.yuv"),
        Some(fmt(2, 2, ChromaSubsampling::Yuv420, 8)),
    )
    .err()
    .unwrap();
    assert!(
        matches!(e, Error::Io { .. }) && e.to_string().contains("missing.yuv"),
        "{e}"
    );
}

#[test]
fn absurd_sizes_are_refused_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    // Beyond the supported maximum: refused from the header alone.
    for (name, header) in [
        ("huge.y4m", "YUV4MPEG2 W99999999 H99999999 F30:1 C420jpeg\n"),
        ("wide.y4m", "YUV4MPEG2 W200000 H100000 C420jpeg\n"),
        ("deep.y4m", "YUV4MPEG2 W80000 H80000 C444p16\n"),
    ] {
        let mut body = header.as_bytes().to_vec();
        body.extend_from_slice(b"FRAME\n");
        body.extend_from_slice(&[0; 64]);
        let p = write_tmp(&dir, name, &body);
        let e = open(&p, None).err().expect("refused").to_string();
        assert!(e.contains(name) && e.contains("16384x16384"), "{name}: {e}");
    }
    // Within the maximum, but more than the file holds.
    let p = write_tmp(
        &dir,
        "short.y4m",
        b"YUV4MPEG2 W16000 H16000 C444p16\nFRAME\n\x01\x02",
    );
    let e = open(&p, None).err().expect("refused").to_string();
    assert!(
        e.contains("short.y4m") && e.contains("1536000000 bytes") && e.contains("only 40 bytes"),
        "{e}"
    );
    // Raw geometry: the same maximum.
    let e = PictureFormat::new(99999, 99999, ChromaSubsampling::Yuv420, 8)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("99999x99999") && e.contains("16384x16384"),
        "{e}"
    );
    assert!(PictureFormat::new(65538, 3, ChromaSubsampling::Yuv400, 8).is_ok());
}

#[test]
fn y4m_header_limit_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut long = b"YUV4MPEG2 W4 H4 C420jpeg X".to_vec();
    long.resize(5000, b'a');
    long.push(b'\n');
    let p = write_tmp(&dir, "long.y4m", &long);
    let e = open(&p, None).err().unwrap().to_string();
    assert!(
        e.contains("long.y4m") && e.contains("header longer than 4096 bytes"),
        "{e}"
    );
    let p = write_tmp(&dir, "cut.y4m", b"YUV4MPEG2 W4 H4");
    let e = open(&p, None).err().unwrap().to_string();
    assert!(
        e.contains("cut.y4m") && e.contains("header without a newline"),
        "{e}"
    );
}
