//! The import layer's contract, checked on the recording mock driver (no
//! device, so CI runs them): every fd handed over is closed exactly when it
//! should be, RAII releases in the order the runtimes need, and device work
//! goes on the stream it was asked for.

use super::driver::{Copy2d, ExternalMemoryDesc, ExternalMemoryKind, Memory, SemaphoreKind};
use super::external::GL_TEXTURE_2D;
use super::mock::{Call, MockDriver};
use crate::Error;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::sync::mpsc;
use std::time::Duration;

/// A pipe whose write end is handed to an import; the read end tells when
/// every copy of the write end is closed (the read returns end-of-file).
struct FdProbe {
    closed: mpsc::Receiver<()>,
}

impl FdProbe {
    fn new() -> (Self, OwnedFd) {
        let (mut reader, writer) = std::io::pipe().unwrap();
        let (tx, closed) = mpsc::channel();
        std::thread::spawn(move || {
            let mut sink = Vec::new();
            let _ = reader.read_to_end(&mut sink);
            let _ = tx.send(());
        });
        (Self { closed }, writer.into())
    }

    /// The fd is still open: no end-of-file within a short while.
    fn is_open(&self) -> bool {
        self.closed
            .recv_timeout(Duration::from_millis(100))
            .is_err()
    }

    /// The fd has been closed (end-of-file arrives).
    fn is_closed(&self) -> bool {
        self.closed.recv_timeout(Duration::from_secs(5)).is_ok()
    }
}

fn opaque(size: u64) -> ExternalMemoryDesc {
    ExternalMemoryDesc {
        kind: ExternalMemoryKind::OpaqueFd,
        size,
        dedicated: true,
    }
}

fn position(log: &[Call], call: &Call) -> usize {
    log.iter()
        .position(|c| c == call)
        .unwrap_or_else(|| panic!("{call:?} not in {log:?}"))
}

#[test]
fn a_failed_import_closes_the_fd() {
    let (driver, gpu) = MockDriver::gpu();
    let (probe, fd) = FdProbe::new();
    driver.fail_next("import_memory");
    let e = gpu.import_memory(fd, opaque(4096)).err().unwrap();
    assert!(
        matches!(&e, Error::Gpu { api: crate::error::GpuApi::Mock, operation, .. } if operation == "import_memory"),
        "{e}"
    );
    assert!(probe.is_closed(), "the fd of a failed import leaked");

    let (probe, fd) = FdProbe::new();
    driver.fail_next("import_semaphore");
    assert!(gpu.import_semaphore(fd, SemaphoreKind::Timeline).is_err());
    assert!(
        probe.is_closed(),
        "the fd of a failed semaphore import leaked"
    );

    // Refused before the runtime is asked: the fd is closed all the same.
    let (probe, fd) = FdProbe::new();
    let e = gpu.import_memory(fd, opaque(0)).err().unwrap();
    assert!(e.to_string().contains("opaque fd"), "{e}");
    assert!(probe.is_closed());
    assert!(!driver
        .log()
        .iter()
        .any(|c| matches!(c, Call::ImportMemory { .. })));
}

#[test]
fn imported_memory_outlives_its_buffers_and_keeps_the_fd_until_destroyed() {
    let (driver, gpu) = MockDriver::gpu();
    let (probe, fd) = FdProbe::new();
    let memory = gpu.import_memory(fd, opaque(1 << 20)).unwrap();
    assert!(
        probe.is_open(),
        "the runtime owns the fd after a successful import"
    );
    // Frames at any byte offset are views of the one whole mapping.
    let frame0 = memory.map_buffer(0, 4096).unwrap();
    let frame1 = memory.map_buffer(4099, 4096).unwrap();
    assert_eq!(frame0.ptr(), memory.ptr());
    assert_eq!(frame1.ptr(), memory.ptr() + 4099);
    drop(memory); // the buffers keep the import alive
    drop(frame0);
    assert!(probe.is_open());
    assert!(!driver.log().iter().any(|c| matches!(
        c,
        Call::DestroyExternalMemory(_) | Call::FreeExternalBuffer(_)
    )));
    drop(frame1);
    assert!(probe.is_closed(), "destroying the import releases the fd");

    let log = driver.log();
    let Call::ImportMemory {
        memory,
        kind,
        size,
        dedicated,
    } = log[0].clone()
    else {
        panic!("{log:?}")
    };
    assert_eq!(
        (kind, size, dedicated),
        (ExternalMemoryKind::OpaqueFd, 1 << 20, true)
    );
    // Mapped whole from offset 0, unmapped before the memory is destroyed.
    let Call::MapExternalBuffer {
        memory: mapped,
        ptr,
        offset: 0,
        bytes: 0x10_0000,
    } = log[1].clone()
    else {
        panic!("{log:?}")
    };
    assert_eq!(mapped, memory);
    assert_eq!(
        log[2..],
        [
            Call::FreeExternalBuffer(ptr),
            Call::DestroyExternalMemory(memory)
        ]
    );
}

#[test]
fn a_failed_mapping_destroys_the_import_and_closes_the_fd() {
    let (driver, gpu) = MockDriver::gpu();
    let (probe, fd) = FdProbe::new();
    driver.fail_next("map_external_buffer");
    assert!(gpu.import_memory(fd, opaque(8192)).is_err());
    assert!(probe.is_closed());
    let log = driver.log();
    let Call::ImportMemory { memory, .. } = log[0] else {
        panic!("{log:?}")
    };
    assert_eq!(log[1..], [Call::DestroyExternalMemory(memory)]);
}

#[test]
fn buffers_outside_the_allocation_are_refused() {
    let (driver, gpu) = MockDriver::gpu();
    let (_probe, fd) = FdProbe::new();
    let memory = gpu.import_memory(fd, opaque(8192)).unwrap();
    for (offset, bytes) in [(0, 0), (4096, 4097), (8192, 1), (u64::MAX, 2)] {
        let e = memory.map_buffer(offset, bytes).err().unwrap();
        assert!(
            matches!(&e, Error::InvalidArgument(m) if m.contains("8192-byte opaque fd")),
            "{e}"
        );
    }
    assert!(memory.map_buffer(4096, 4096).is_ok());
    assert!(memory.map_buffer(8191, 1).is_ok());
    // The import's one whole mapping, nothing per buffer.
    let maps = driver
        .log()
        .iter()
        .filter(|c| matches!(c, Call::MapExternalBuffer { .. }))
        .count();
    assert_eq!(maps, 1);
}

#[test]
fn semaphores_are_waited_and_signalled_on_the_stream() {
    let (driver, gpu) = MockDriver::gpu();
    let stream = gpu.stream().unwrap();
    let (probe, fd) = FdProbe::new();
    let timeline = gpu.import_semaphore(fd, SemaphoreKind::Timeline).unwrap();
    assert!(probe.is_open());
    stream.wait_semaphore(&timeline, 1).unwrap();
    stream.signal_semaphore(&timeline, 2).unwrap();
    drop(timeline);
    assert!(probe.is_closed());

    let log = driver.log();
    let Call::StreamCreate(s) = log[0] else {
        panic!("{log:?}")
    };
    let Call::ImportSemaphore { semaphore, kind } = log[1].clone() else {
        panic!("{log:?}")
    };
    assert_eq!(kind, SemaphoreKind::Timeline);
    assert_eq!(
        log[2..5],
        [
            Call::WaitSemaphore {
                semaphore,
                value: 1,
                stream: s
            },
            Call::SignalSemaphore {
                semaphore,
                value: 2,
                stream: s
            },
            Call::DestroySemaphore(semaphore),
        ]
    );
}

#[test]
fn a_gl_texture_is_unmapped_before_it_is_unregistered() {
    let (driver, gpu) = MockDriver::gpu();
    let stream = gpu.stream().unwrap();
    let dst = gpu.buffer(64 * 16).unwrap();
    // SAFETY: the mock touches no GL texture.
    let mut texture = unsafe { gpu.register_gl_texture(7, GL_TEXTURE_2D) }.unwrap();
    let mapped = texture.map(&stream).unwrap();
    let array = mapped.array().unwrap();
    // SAFETY: the mock copies nothing.
    unsafe {
        stream
            .copy_2d(&Copy2d {
                src: Memory::Array(array),
                src_pitch: 0,
                dst: dst.ptr(),
                dst_pitch: 64,
                width_bytes: 64,
                height: 16,
            })
            .unwrap();
    }
    drop(mapped);
    drop(texture);

    let log = driver.log();
    let Some(Call::GlRegister {
        resource,
        texture: 7,
    }) = log
        .iter()
        .find(|c| matches!(c, Call::GlRegister { .. }))
        .cloned()
    else {
        panic!("{log:?}")
    };
    let s = match log[0] {
        Call::StreamCreate(s) => s,
        _ => panic!("{log:?}"),
    };
    let order = [
        position(
            &log,
            &Call::GraphicsMap {
                resource,
                stream: s,
            },
        ),
        position(&log, &Call::GraphicsArray { resource, array }),
        log.iter()
            .position(|c| matches!(c, Call::Copy2d { src_array: Some(a), .. } if *a == array))
            .unwrap(),
        position(
            &log,
            &Call::GraphicsUnmap {
                resource,
                stream: s,
            },
        ),
        position(&log, &Call::GraphicsUnregister(resource)),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}: {log:?}");

    // A failed map leaves nothing to unmap; the registration still goes.
    // SAFETY: the mock driver registers nothing real.
    let mut texture = unsafe { gpu.register_gl_texture(8, GL_TEXTURE_2D) }.unwrap();
    driver.fail_next("graphics_map");
    assert!(texture.map(&stream).is_err());
    drop(texture);
    let log = driver.log();
    let unmaps = log
        .iter()
        .filter(|c| matches!(c, Call::GraphicsUnmap { .. }))
        .count();
    let unregisters = log
        .iter()
        .filter(|c| matches!(c, Call::GraphicsUnregister(_)))
        .count();
    assert_eq!((unmaps, unregisters), (1, 2));

    // An explicit unmap is not repeated on drop.
    // SAFETY: the mock driver registers nothing real.
    let mut texture = unsafe { gpu.register_gl_texture(9, GL_TEXTURE_2D) }.unwrap();
    texture.map(&stream).unwrap().unmap().unwrap();
    drop(texture);
    let unmaps = driver
        .log()
        .iter()
        .filter(|c| matches!(c, Call::GraphicsUnmap { .. }))
        .count();
    assert_eq!(unmaps, 2);
}

#[test]
fn host_frames_are_registered_for_as_long_as_they_are_borrowed() {
    let (driver, gpu) = MockDriver::gpu();
    let frame = vec![7u8; 3 * 4096 + 5];
    let registration = gpu.register_host(&frame).unwrap();
    assert_eq!(registration.as_ptr(), frame.as_ptr());
    assert_eq!(registration.device_ptr().unwrap(), frame.as_ptr() as u64);
    drop(registration);
    assert_eq!(
        driver.log(),
        [
            Call::HostRegister {
                ptr: frame.as_ptr() as usize,
                bytes: frame.len()
            },
            Call::HostUnregister(frame.as_ptr() as usize),
        ]
    );
    assert!(matches!(
        gpu.register_host(&[]),
        Err(Error::InvalidArgument(_))
    ));
    driver.fail_next("host_register");
    assert!(gpu.register_host(&frame).is_err());
    // A registration that failed is not undone.
    let unregisters = driver
        .log()
        .iter()
        .filter(|c| matches!(c, Call::HostUnregister(_)))
        .count();
    assert_eq!(unregisters, 1);
}

#[test]
fn a_producers_event_is_used_but_never_destroyed() {
    let (driver, gpu) = MockDriver::gpu();
    let stream = gpu.stream().unwrap();
    let producer_event = 0xe0e0usize as *mut std::ffi::c_void;
    // SAFETY: the mock never dereferences handles.
    let borrowed = unsafe { gpu.borrow_event(producer_event) };
    stream.wait(&borrowed).unwrap();
    borrowed.record(&stream).unwrap();
    drop(borrowed);
    let own = gpu.event().unwrap();
    drop(own);

    let log = driver.log();
    let handle = super::driver::EventHandle::from_raw(0xe0e0);
    assert!(log.contains(&Call::StreamWait {
        stream: match log[0] {
            Call::StreamCreate(s) => s,
            _ => panic!("{log:?}"),
        },
        event: handle
    }));
    assert!(!log.contains(&Call::EventDestroy(handle)), "{log:?}");
    assert_eq!(
        log.iter()
            .filter(|c| matches!(c, Call::EventDestroy(_)))
            .count(),
        1,
        "our own event is destroyed"
    );
}

#[test]
fn the_device_uuid_and_memory_are_reported() {
    let (_driver, gpu) = MockDriver::gpu();
    assert_eq!(gpu.uuid(), [0x5a; 16]);
    let info = gpu.memory_info().unwrap();
    assert!(info.free <= info.total);
}
