//! How the GPU engine uses a device, checked on the recording mock driver
//! (no device needed, so CI runs them): uploads once per frame, only the
//! planes read, upload → clear → launch per extractor, and no upload into
//! buffers a kernel still reads.

use super::mock::{Call, DeviceOrder, MockDriver};
use super::Gpu;
use crate::feature::options::parse_key_values;
use crate::picture::{ChromaSubsampling, HostPicture, PictureFormat, PlaneId};
use crate::{ContextBuilder, Error};
use std::collections::HashSet;

const W: u32 = 64;
const H: u32 = 36;

fn format() -> PictureFormat {
    PictureFormat::new(W, H, ChromaSubsampling::Yuv420, 8).unwrap()
}

fn picture(seed: u8) -> HostPicture {
    let mut p = HostPicture::new(format());
    for plane in PlaneId::ALL {
        for (i, s) in p.plane_u8_mut(plane).iter_mut().enumerate() {
            *s = (i as u8).wrapping_mul(seed).wrapping_add(seed);
        }
    }
    p
}

/// Scores `frames` frames of `features` on the mock; returns its log with
/// a `Mark(i)` before frame `i`'s submit.
fn run(features: &[(&str, &str)], frames: u32, subsample: u32) -> Vec<Call> {
    let (driver, gpu) = MockDriver::gpu();
    let mut b = ContextBuilder::new(format()).subsample(subsample).gpu(gpu);
    for (name, opts) in features {
        b = b.feature(name, parse_key_values(name, opts).unwrap());
    }
    let mut ctx = b.build().unwrap();
    for i in 0..frames {
        driver.mark(i);
        ctx.submit(picture(i as u8 + 1), picture(i as u8 + 7))
            .unwrap();
    }
    let scores = ctx.finish().unwrap();
    assert_eq!(scores.frames.len() as u32, frames.div_ceil(subsample));
    driver.log()
}

/// Host-to-device copies (plane uploads from staging): (log position, call).
fn uploads(log: &[Call]) -> Vec<(usize, &Call)> {
    log.iter()
        .enumerate()
        .filter(|(_, c)| {
            matches!(
                c,
                Call::Copy2d {
                    src_host: Some(_),
                    ..
                }
            )
        })
        .collect()
}

/// The log positions of frame `i`'s calls: from its mark to the next.
fn frame_span(log: &[Call], i: u32) -> std::ops::Range<usize> {
    let start = log.iter().position(|c| *c == Call::Mark(i)).unwrap();
    let end = log[start + 1..]
        .iter()
        .position(|c| matches!(c, Call::Mark(_)))
        .map_or(log.len(), |n| start + 1 + n);
    start..end
}

/// Log positions of frame `i`'s launches of kernels named `prefix...`.
fn launches_of(log: &[Call], i: u32, prefix: &str) -> Vec<usize> {
    frame_span(log, i)
        .filter(
            |&k| matches!(&log[k], Call::Launch { function, .. } if function.starts_with(prefix)),
        )
        .collect()
}

fn dst(c: &Call) -> u64 {
    match c {
        Call::Copy2d { dst, .. } => *dst,
        _ => unreachable!(),
    }
}

#[test]
fn planes_upload_once_per_frame_whatever_the_extractor_count() {
    // psnr (3 planes of both pictures) alone, and with motion and a second
    // psnr instance: the same six uploads per frame.
    for set in [
        &[("psnr", "")][..],
        &[("psnr", ""), ("motion", ""), ("psnr", "enable_mse=true")][..],
    ] {
        let log = run(set, 4, 1);
        for i in 0..4 {
            let span = frame_span(&log, i);
            let frame: Vec<_> = uploads(&log[span]).iter().map(|(_, c)| dst(c)).collect();
            let distinct: HashSet<_> = frame.iter().collect();
            assert_eq!(frame.len(), 6, "{set:?} frame {i}: {frame:x?}");
            assert_eq!(
                distinct.len(),
                6,
                "{set:?} frame {i}: a plane uploaded twice"
            );
        }
    }
}

#[test]
fn only_planes_some_extractor_reads_are_uploaded() {
    let (w, h) = (W as usize, H as usize);
    // motion reads reference luma only: one luma upload, no chroma, no
    // distorted picture.
    let log = run(&[("motion", "")], 3, 1);
    for i in 0..3 {
        let frame = log[frame_span(&log, i)].to_vec();
        let up = uploads(&frame);
        assert_eq!(up.len(), 1, "motion frame {i}: {up:?}");
        assert!(
            matches!(up[0].1, Call::Copy2d { width_bytes, height, .. } if *width_bytes == w && *height == h)
        );
    }
    // psnr reads all three planes of both pictures.
    let log = run(&[("psnr", "")], 1, 1);
    let sizes: Vec<_> = uploads(&log)
        .iter()
        .map(|(_, c)| match c {
            Call::Copy2d {
                width_bytes,
                height,
                ..
            } => (*width_bytes, *height),
            _ => unreachable!(),
        })
        .collect();
    let luma = (w, h);
    let chroma = (w / 2, h / 2);
    assert_eq!(sizes, [luma, chroma, chroma, luma, chroma, chroma]);
}

#[test]
fn each_extractor_uploads_then_clears_then_launches() {
    let log = run(&[("psnr", ""), ("motion", "")], 4, 1);
    for i in 0..4 {
        let span = frame_span(&log, i);
        let frame = &log[span.clone()];
        let uploaded: HashSet<u64> = uploads(frame).iter().map(|(_, c)| dst(c)).collect();
        let last_upload = uploads(frame).last().unwrap().0;
        let launches: Vec<_> = frame
            .iter()
            .enumerate()
            .filter_map(|(k, c)| match c {
                Call::Launch {
                    function, pointers, ..
                } => Some((k, function, pointers)),
                _ => None,
            })
            .collect();
        // psnr: 3 planes; motion: nothing on frame 0 (no previous frame).
        let expected = if i == 0 { 3 } else { 4 };
        assert_eq!(launches.len(), expected, "frame {i}: {launches:?}");
        let order = DeviceOrder::new(frame);
        for (k, function, pointers) in launches {
            assert!(
                order.before(last_upload, k),
                "frame {i}: {function} may run before the upload"
            );
            // The accumulator the launch adds into (psnr: one word per
            // plane) was cleared after the upload and before the launch.
            let accumulator = *pointers.last().unwrap();
            if function.starts_with("motion_sad") {
                // Reads the uploaded luma.
                assert!(
                    uploaded.contains(&pointers[1]),
                    "frame {i}: {function} reads {pointers:x?}"
                );
            }
            let cleared = frame[..k]
                .iter()
                .rposition(|c| matches!(c, Call::Fill { dst, bytes, .. } if (*dst..*dst + *bytes as u64).contains(&accumulator)))
                .unwrap_or_else(|| panic!("frame {i}: {function}'s accumulator not cleared"));
            assert!(
                cleared > last_upload,
                "frame {i}: {function} cleared before the upload"
            );
            assert!(order.before(cleared, k));
            if function.starts_with("psnr") {
                assert!(uploaded.contains(&pointers[0]) && uploaded.contains(&pointers[1]));
            }
        }
    }
}

#[test]
fn no_upload_overwrites_planes_a_kernel_may_still_read() {
    // With --subsample 3 psnr skips frames 1, 2, 4, 5 while motion runs on
    // every frame: each upload must come after (in device order) every
    // earlier launch that read its buffer, and a staging buffer is
    // refilled only after the copy that last read it completed.
    let log = run(&[("psnr", ""), ("motion", "")], 7, 3);
    let psnr_frames: Vec<u32> = (0..7)
        .filter(|&i| {
            log[frame_span(&log, i)]
                .iter()
                .any(|c| matches!(c, Call::Launch { function, .. } if function.starts_with("psnr")))
        })
        .collect();
    assert_eq!(psnr_frames, [0, 3, 6]);
    let mut checked = 0;
    let order = DeviceOrder::new(&log);
    for (u, up) in uploads(&log) {
        let target = dst(up);
        for (k, c) in log[..u].iter().enumerate() {
            if let Call::Launch {
                function, pointers, ..
            } = c
            {
                if pointers.contains(&target) {
                    assert!(
                        order.before(k, u),
                        "upload at {u} may overwrite what {function} at {k} reads"
                    );
                    checked += 1;
                }
            }
        }
        let Call::Copy2d {
            src_host: Some(staging),
            ..
        } = up
        else {
            unreachable!()
        };
        if let Some(prev) = log[..u]
            .iter()
            .rposition(|c| matches!(c, Call::Copy2d { src_host: Some(s), .. } if s == staging))
        {
            let waited = log[prev..u].iter().enumerate().any(|(k, c)| match c {
                Call::EventRecord { event, .. } => {
                    log[prev + k..u].contains(&Call::EventSync(*event))
                }
                _ => false,
            });
            assert!(
                waited,
                "staging {staging:x} refilled at {u} before its copy at {prev} completed"
            );
        }
    }
    assert!(checked > 0);
    // A set whose only GPU extractor skips a frame uploads nothing for it.
    let log = run(&[("psnr", "")], 7, 3);
    let frames_with_uploads: Vec<u32> = (0..7)
        .filter(|&i| !uploads(&log[frame_span(&log, i)]).is_empty())
        .collect();
    assert_eq!(frames_with_uploads, [0, 3, 6]);
}

#[test]
fn driver_failures_name_backend_and_operation() {
    let (driver, gpu) = MockDriver::gpu();
    driver.fail_next("alloc");
    let e = ContextBuilder::new(format())
        .feature("psnr", vec![])
        .gpu(gpu.clone())
        .build()
        .err()
        .expect("allocation failure");
    assert!(
        matches!(&e, Error::Gpu { api: crate::error::GpuApi::Mock, operation, .. } if operation == "alloc"),
        "{e}"
    );

    let mut ctx = ContextBuilder::new(format())
        .feature("psnr", vec![])
        .gpu(gpu)
        .build()
        .unwrap();
    driver.fail_next("launch");
    let e = ctx.submit(picture(1), picture(2)).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("mock") && text.contains("launch"), "{text}");
}

#[test]
fn extractors_without_a_gpu_version_run_on_the_host() {
    // float_ansnr has no kernels: its planes are not uploaded, it scores on
    // the host next to the GPU's motion and every frame gets both.
    let (driver, gpu) = MockDriver::gpu();
    let mut ctx = ContextBuilder::new(format())
        .feature("motion", vec![])
        .feature("float_ansnr", vec![])
        .gpu(gpu)
        .build()
        .unwrap();
    for i in 0..3 {
        ctx.submit(picture(i + 1), picture(i + 9)).unwrap();
    }
    let scores = ctx.finish().unwrap();
    for (_, values) in &scores.frames {
        let names: Vec<_> = values.iter().map(|(n, _)| n.as_str()).collect();
        assert!(names.iter().any(|n| n.contains("motion")), "{names:?}");
        assert!(names.iter().any(|n| n.contains("ansnr")), "{names:?}");
    }
    // Luma of the reference only: motion's.
    assert_eq!(uploads(&driver.log()).len(), 3);
}

#[test]
fn extractors_run_beside_each_other_and_uploads_beside_kernels() {
    // Each extractor has its own lane, and the planes come in SETS sets:
    // an upload waits for the readers of the frame SETS back (same set),
    // not for the previous frame's kernels.
    use super::planes::SETS;
    let frames = SETS as u32 + 2;
    let log = run(&[("psnr", ""), ("motion", "")], frames, 1);
    let order = DeviceOrder::new(&log);
    let launches = |i: u32, prefix: &str| launches_of(&log, i, prefix);
    let stream = |k: usize| super::mock::stream_of(&log[k]).unwrap();
    let (psnr, motion) = (launches(2, "psnr"), launches(2, "motion"));
    assert_ne!(stream(psnr[0]), stream(motion[0]), "one stream for both");
    assert!(!order.before(psnr[0], motion[0]) && !order.before(motion[0], psnr[0]));
    let first_upload = |i: u32| {
        frame_span(&log, i)
            .find(|&k| {
                matches!(
                    log[k],
                    Call::Copy2d {
                        src_host: Some(_),
                        ..
                    }
                )
            })
            .unwrap()
    };
    for i in SETS as u32..frames {
        let up = first_upload(i);
        for k in launches(i - SETS as u32, "") {
            assert!(
                order.before(k, up),
                "frame {i}'s upload may overwrite frame {}'s planes",
                i - SETS as u32
            );
        }
        for k in launches(i - 1, "psnr") {
            assert!(
                !order.before(k, up),
                "frame {i}'s upload waits for frame {}'s kernels",
                i - 1
            );
        }
    }
}

#[test]
fn motion_wider_than_its_kernel_runs_on_the_host() {
    // Rows over 65537 pixels could wrap libvmaf's 32-bit row sums, which
    // the kernel does not reproduce: the CPU extractor scores them.
    // With motion_v2 joined to it, the CPU's joint instance writes both.
    let wide = PictureFormat::new(65538, 3, ChromaSubsampling::Yuv400, 8).unwrap();
    let run = |features: &[&str], gpu: Option<Gpu>| {
        let mut b = ContextBuilder::new(wide);
        for name in features {
            b = b.feature(name, Vec::new());
        }
        if let Some(gpu) = gpu {
            b = b.gpu(gpu);
        }
        let mut ctx = b.build().unwrap();
        assert_eq!(ctx.extractor_names(), features);
        for i in 0..2u8 {
            let mut p = HostPicture::new(wide);
            p.plane_u8_mut(PlaneId::Y)
                .iter_mut()
                .for_each(|v| *v = 40 * i);
            ctx.submit(p.clone(), p).unwrap();
        }
        ctx.finish().unwrap()
    };
    for features in [&["motion"][..], &["motion", "motion_v2"]] {
        let (driver, gpu) = MockDriver::gpu();
        let scores = run(features, Some(gpu));
        assert_eq!(scores.frames.len(), 2);
        assert_eq!(scores.frames, run(features, None).frames);
        let log = driver.log();
        assert!(
            !log.iter().any(|c| matches!(c, Call::Launch { .. })),
            "{log:?}"
        );
    }
}

/// A device made by `with_kernel_times` brackets each launch with timed
/// events on the launch's stream and reports every kernel by name, in the
/// order they first ran, with its launch count; the plain device records
/// nothing extra.
#[test]
fn kernel_times_bracket_every_launch() {
    let (driver, gpu) = MockDriver::gpu();
    let (timed, times) = gpu.with_kernel_times();
    let mut b = ContextBuilder::new(format()).gpu(timed);
    for (name, opts) in [("psnr", ""), ("motion", "")] {
        b = b.feature(name, parse_key_values(name, opts).unwrap());
    }
    let mut ctx = b.build().unwrap();
    for i in 0..4u8 {
        ctx.submit(picture(i + 1), picture(i + 7)).unwrap();
    }
    ctx.finish().unwrap();
    let log = driver.log();
    let launches: Vec<usize> = (0..log.len())
        .filter(|&i| matches!(log[i], Call::Launch { .. }))
        .collect();
    assert_eq!(
        launches.len(),
        4 * 3 + 3,
        "psnr: 3 planes a frame; motion from frame 1"
    );
    for &i in &launches {
        let Call::Launch { stream, .. } = &log[i] else {
            unreachable!()
        };
        for neighbour in [i - 1, i + 1] {
            assert!(
                matches!(&log[neighbour], Call::EventRecord { stream: s, .. } if s == stream),
                "launch at {i} not bracketed by records on its stream: {:?}",
                &log[i - 1..=i + 1]
            );
        }
    }
    let names: Vec<(String, u32)> = times
        .take()
        .unwrap()
        .into_iter()
        .map(|t| (t.name, t.launches))
        .collect();
    assert_eq!(
        names,
        [
            ("psnr_sse_u8".to_string(), 12),
            ("motion_sad_u8".to_string(), 3)
        ]
    );
    assert!(times.take().unwrap().is_empty(), "taken once");

    // Without timing: no records around launches.
    let plain = run(&[("psnr", "")], 2, 1);
    for (i, c) in plain.iter().enumerate() {
        if matches!(c, Call::Launch { .. }) {
            assert!(
                !matches!(plain[i - 1], Call::EventRecord { .. }),
                "{:?}",
                &plain[i - 1..=i]
            );
        }
    }
}

/// Device frames bound in place: after the first pairs, each pair's `done`
/// event is one a released pair handed back, so a frame costs no event
/// creation (nor destruction) on the runtime.
#[test]
fn device_frames_reuse_their_done_events() {
    use crate::gpu::pool::FramePool;
    use crate::import::{Acquire, PixelFormat};
    let (driver, gpu) = MockDriver::gpu();
    let layout = PixelFormat::Planar {
        subsampling: ChromaSubsampling::Yuv420,
        bit_depth: 8,
    };
    let pool = FramePool::new(&gpu, W, H, layout, 8).unwrap();
    let frames: Vec<_> = (0..8)
        .map(|i| {
            let slot = pool.take(std::time::Duration::ZERO).unwrap();
            slot.write_from_host(&gpu.stream().unwrap(), &picture(i + 1))
                .unwrap();
            slot.into_frame(Acquire::None, vec![]).unwrap()
        })
        .collect();
    let mut b = ContextBuilder::new(format()).gpu(gpu);
    for (name, opts) in [("psnr", ""), ("motion", "")] {
        b = b.feature(name, parse_key_values(name, opts).unwrap());
    }
    let mut ctx = b.build().unwrap();
    for i in 0..20usize {
        driver.mark(i as u32);
        ctx.submit_frames(&frames[2 * i % 8], &frames[(2 * i + 1) % 8])
            .unwrap();
    }
    let log = driver.log();
    let later = log.iter().position(|c| *c == Call::Mark(5)).unwrap();
    let created = log[later..]
        .iter()
        .filter(|c| matches!(c, Call::EventCreate(_)))
        .count();
    let destroyed = log[later..]
        .iter()
        .filter(|c| matches!(c, Call::EventDestroy(_)))
        .count();
    assert_eq!((created, destroyed), (0, 0), "frames 5-19");
    let scores = ctx.finish().unwrap();
    assert_eq!(scores.frames.len(), 20);
}

#[test]
fn independent_frames_alternate_between_two_instances() {
    // vif's frames depend on nothing before them: two instances take them
    // in turn, each on its own lane, so frame 1's kernels need not wait
    // for frame 0's. motion carries its previous frame: one lane, in order.
    for subsample in [1, 2] {
        let log = run(&[("vif", ""), ("motion", "")], 8, subsample);
        let order = DeviceOrder::new(&log);
        let launches = |i: u32, prefix: &str| launches_of(&log, i, prefix);
        let stream = |k: usize| super::mock::stream_of(&log[k]).unwrap();
        // Scored frames (vif is not temporal), in turn.
        let vif: Vec<Vec<usize>> = (0..8)
            .step_by(subsample as usize)
            .map(|i| launches(i, "vif"))
            .collect();
        assert!(
            vif.iter().all(|l| l.len() == 4),
            "four scales a scored frame"
        );
        for l in &vif {
            assert!(
                l.iter().all(|&k| stream(k) == stream(l[0])),
                "one lane a frame"
            );
        }
        let lane = |n: usize| stream(vif[n][0]);
        assert_ne!(lane(0), lane(1), "scored frames 0 and 1 on one lane");
        for n in 2..vif.len() {
            assert_eq!(lane(n), lane(n % 2));
            // Each instance's frames in order.
            assert!(order.before(vif[n - 2][3], vif[n][0]));
        }
        if subsample == 1 {
            // Frame 1's first scale may run beside frame 0's last (frame
            // 1 reads the other plane set).
            assert!(!order.before(vif[0][3], vif[1][0]));
        }
        let motion: Vec<usize> = (0..8).flat_map(|i| launches(i, "motion")).collect();
        assert_eq!(motion.len(), 7, "frames 1 to 7 (frame 0 has no previous)");
        assert!(motion.iter().all(|&k| stream(k) == stream(motion[0])));
        assert!(![lane(0), lane(1)].contains(&stream(motion[0])));
    }
}

/// Scores `frames` frames of GPU and host extractors on `gpu`; any error
/// ends the run (the context is dropped on the way out). `from_pool`: the
/// pictures come from the context's pool (pinned, read in place).
fn score_until_error(gpu: crate::gpu::Gpu, frames: u32, from_pool: bool) -> crate::Result<()> {
    let mut b = ContextBuilder::new(format()).gpu(gpu);
    // GPU extractors (one temporal), and one that runs on the host beside
    // them.
    for name in ["psnr", "motion", "vif", "float_ansnr"] {
        b = b.feature(name, vec![]);
    }
    let mut ctx = b.build()?;
    for i in 0..frames {
        let (mut r, mut d) = (picture(i as u8 + 1), picture(i as u8 + 7));
        if from_pool {
            let (mut pr, mut pd) = (ctx.picture()?, ctx.picture()?);
            pr.copy_from(&r);
            pd.copy_from(&d);
            (r, d) = (pr, pd);
        }
        ctx.submit(r, d)?;
    }
    ctx.finish().map(|_| ())
}

/// Fault injection: whichever driver call fails during a run (an
/// allocation, a copy, a launch, an event, a stream, a module), the run
/// ends with that error or completes, never panics, and once the context
/// is gone every buffer, pinned buffer, event, stream and fd is released.
/// Both with the caller's pictures (staged) and with the context's pool
/// pictures (pinned, read in place, held until their copy is done).
#[test]
fn a_failure_at_any_driver_call_ends_the_run_cleanly() {
    for from_pool in [false, true] {
        failure_sweep(from_pool);
    }
}

fn failure_sweep(from_pool: bool) {
    const FRAMES: u32 = 5;
    let total = {
        let (driver, gpu) = MockDriver::gpu();
        score_until_error(gpu, FRAMES, from_pool).unwrap();
        assert_eq!(driver.live(), [0; 5], "a clean run leaks");
        driver.checked_calls()
    };
    assert!(
        total > 50,
        "only {total} fallible calls: the sweep would prove little"
    );
    let (mut failed_runs, mut in_the_run) = (0, 0);
    for n in 1..=total {
        let (driver, gpu) = MockDriver::gpu();
        driver.fail_call(n);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            score_until_error(gpu, FRAMES, from_pool)
        }));
        let result = outcome.unwrap_or_else(|_| {
            panic!("pool pictures {from_pool}: a failure at call {n} of {total} panicked")
        });
        // A host function queued by a drop (`gpu::retire`) that cannot be
        // launched is handled there (the stream is waited for on the
        // host): a drop has no one to report to.
        if driver.injected_failure() != Some("launch_host_func") {
            in_the_run += 1;
        }
        if let Err(e) = result {
            failed_runs += 1;
            assert!(
                matches!(
                    &e,
                    Error::Gpu {
                        api: crate::error::GpuApi::Mock,
                        ..
                    }
                ) && e.to_string().contains("injected failure"),
                "pool pictures {from_pool}, call {n}: the error is not the driver's: {e}"
            );
        }
        assert_eq!(
            driver.live(),
            [0; 5],
            "pool pictures {from_pool}, call {n} of {total} failed: [buffers, pinned, events, streams, fds] still live"
        );
    }
    // Failures whose results are ignored on purpose (a release signal with
    // no one to report to) may let a run complete; most must surface.
    assert!(
        failed_runs * 10 >= in_the_run * 9,
        "{failed_runs} of {in_the_run} failures in the run surfaced ({total} calls)"
    );
}

/// Scores `frames` pairs of device frames (NV12 from a frame pool, a host
/// fence as each frame's release) until an error; every frame's fence is
/// pushed to `fences`.
fn score_device_frames_until_error(
    gpu: crate::gpu::Gpu,
    frames: u32,
    fences: &mut Vec<crate::import::HostFence>,
) -> crate::Result<()> {
    use crate::gpu::pool::FramePool;
    use crate::import::{Acquire, HostFence, PixelFormat, Release};
    let pool = FramePool::new(&gpu, W, H, PixelFormat::Nv12, 2 * frames as usize)?;
    let stream = gpu.stream()?;
    let mut ctx = ContextBuilder::new(format())
        .feature("psnr", vec![])
        .feature("motion", vec![])
        .gpu(gpu)
        .build()?;
    for i in 0..frames {
        let mut pair = Vec::new();
        for seed in [i as u8 + 1, i as u8 + 7] {
            let slot = pool.take(std::time::Duration::ZERO)?;
            slot.write_from_host(&stream, &picture(seed))?;
            let fence = HostFence::new();
            fences.push(fence.clone());
            pair.push(slot.into_frame(Acquire::None, vec![Release::Host(fence)])?);
        }
        ctx.submit_frames(&pair[0], &pair[1])?;
    }
    ctx.finish().map(|_| ())
}

/// Fault injection with imported frames: whichever driver call fails, the
/// run never panics, every submitted frame's release signal fires, and
/// nothing of the device is left (pool buffers included, once the pool is
/// gone).
#[test]
fn a_failure_at_any_driver_call_releases_every_imported_frame() {
    const FRAMES: u32 = 4;
    let total = {
        let (driver, gpu) = MockDriver::gpu();
        let mut fences = Vec::new();
        score_device_frames_until_error(gpu, FRAMES, &mut fences).unwrap();
        assert!(fences.iter().all(|f| f.is_signalled()));
        assert_eq!(driver.live(), [0; 5], "a clean run leaks");
        driver.checked_calls()
    };
    assert!(total > 30, "only {total} fallible calls");
    for n in 1..=total {
        let (driver, gpu) = MockDriver::gpu();
        driver.fail_call(n);
        let mut fences = Vec::new();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            score_device_frames_until_error(gpu, FRAMES, &mut fences)
        }));
        let result =
            outcome.unwrap_or_else(|_| panic!("a failure at call {n} of {total} panicked"));
        if let Err(e) = result {
            assert!(
                e.to_string().contains("injected failure"),
                "call {n}: the error hides the driver's: {e}"
            );
        }
        let unreleased = fences.iter().filter(|f| !f.is_signalled()).count();
        assert_eq!(
            unreleased, 0,
            "call {n} of {total} failed: frames never released"
        );
        assert_eq!(
            driver.live(),
            [0; 5],
            "call {n} of {total} failed: [buffers, pinned, events, streams, fds] still live"
        );
    }
}

#[test]
fn pool_pictures_are_uploaded_in_place_and_lent_again_only_after_their_copy() {
    // Pictures from a GPU context's pool are pinned: the upload reads
    // their planes where they are (no staging), and their memory is handed
    // out again only after the copy that read it has completed.
    let (driver, gpu) = MockDriver::gpu();
    let mut ctx = ContextBuilder::new(format())
        .feature("psnr", vec![])
        .gpu(gpu)
        .build()
        .unwrap();
    let (mut sources, mut checked) = (HashSet::new(), 0);
    for i in 0..8u8 {
        let log = driver.log();
        let (mut r, mut d) = (ctx.picture().unwrap(), ctx.picture().unwrap());
        for p in [&r, &d] {
            let at = p.plane_bytes(PlaneId::Y).as_ptr() as usize;
            // The last upload that read this memory, if any, has completed.
            if let Some(prev) = log
                .iter()
                .rposition(|c| matches!(c, Call::Copy2d { src_host: Some(s), .. } if *s == at))
            {
                let waited = log[prev..].iter().enumerate().any(|(k, c)| match c {
                    Call::EventRecord { event, .. } => {
                        log[prev + k..].contains(&Call::EventSync(*event))
                    }
                    _ => false,
                });
                assert!(
                    waited,
                    "frame {i}: memory lent again before its copy at {prev} completed"
                );
                checked += 1;
            }
        }
        r.copy_from(&picture(i + 1));
        d.copy_from(&picture(i + 7));
        let planes: Vec<usize> = [&r, &d]
            .iter()
            .flat_map(|p| PlaneId::ALL.map(|pl| p.plane_bytes(pl).as_ptr() as usize))
            .collect();
        driver.mark(u32::from(i));
        ctx.submit(r, d).unwrap();
        let log = driver.log();
        let read: Vec<usize> = uploads(&log[frame_span(&log, u32::from(i))])
            .iter()
            .map(|(_, c)| match c {
                Call::Copy2d {
                    src_host: Some(s), ..
                } => *s,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(
            read, planes,
            "frame {i}: uploads read the pictures' own planes"
        );
        sources.extend(read);
    }
    ctx.finish().unwrap();
    // Two staging sets hold at most two pairs: memory was reused.
    assert!(
        sources.len() < 8 * 6,
        "no memory reused: {} distinct planes",
        sources.len()
    );
    assert!(checked > 0, "no memory was lent twice");
}
