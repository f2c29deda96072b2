//! The device layer's import operations on a real GPU, fed by real
//! producers: Vulkan memory and semaphores exported as opaque fds, a
//! CUDA-exported dma-buf, a GL texture, a host frame, a producer's event;
//! and 200 import cycles that must leave fds and device memory as they were.
//!
//! Each test first builds its producer (so a machine with Vulkan or EGL but
//! no CUDA still exercises that half), then skips with a printed reason
//! where there is no CUDA device, no Vulkan loader or no EGL.

use crate::common::gpu::{on_hip, test_backend};
use crate::producers;

use cudarc::driver::sys as cu;
use producers::gl::Gl;
use producers::vulkan::{ExportedBuffer, Vulkan};
use std::os::fd::{FromRawFd, IntoRawFd, OwnedFd};
use std::time::{Duration, Instant};
use vmafx::gpu::device::{DeviceBuffer, Stream};
use vmafx::gpu::external::GL_TEXTURE_2D;
use vmafx::gpu::external::{ExternalMemoryDesc, ExternalMemoryKind, SemaphoreKind};
use vmafx::gpu::{self, cuda, DeviceSelector, Gpu, GpuBackend};
use vmafx::gpu::{Copy2d, CopySource as Memory};

/// The test device (CUDA, or HIP with VMAFX_TEST_GPU_BACKEND=hip); the
/// skip reason says the CPU half ran.
fn test_gpu() -> Option<Gpu> {
    let backend = test_backend();
    let name = backend.to_string().to_uppercase();
    let present = match backend {
        GpuBackend::Cuda => cuda::driver_present(),
        GpuBackend::Hip => gpu::hip::runtime_present(),
    };
    if !present {
        vmafx::testing::skip(
            vmafx::testing::REQUIRE_GPU,
            format_args!("no {name} runtime found; the CPU half still runs"),
        );
        return None;
    }
    match gpu::open(backend, &DeviceSelector::default()) {
        Ok(g) => {
            println!("GPU: {}", g.describe());
            Some(g)
        }
        Err(e) => {
            vmafx::testing::skip(
                vmafx::testing::REQUIRE_GPU,
                format_args!("no {name} device ({e}); the CPU half still runs"),
            );
            None
        }
    }
}

/// The Vulkan device matching the GPU (any device without one).
fn vulkan(gpu: Option<&Gpu>) -> Option<Vulkan> {
    match Vulkan::new(gpu.map(Gpu::uuid)) {
        Ok(v) => {
            println!("Vulkan: {}", v.name);
            Some(v)
        }
        Err(e) => {
            vmafx::testing::skip(vmafx::testing::REQUIRE_GPU, e);
            None
        }
    }
}

/// Bytes that differ from row to row and from frame to frame.
fn pattern(len: usize, seed: u32) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 13) as u8)
        .collect()
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Queues a 2D copy into `dst`.
fn copy(
    stream: &Stream,
    src: Memory,
    src_pitch: usize,
    dst: &DeviceBuffer,
    dst_pitch: usize,
    width: usize,
    height: usize,
) {
    assert!(dst_pitch * height <= dst.len());
    // SAFETY: the callers' sources cover the rows; `dst` is checked above.
    unsafe {
        stream
            .copy_2d(&Copy2d {
                src,
                src_pitch,
                dst: dst.ptr(),
                dst_pitch,
                width_bytes: width,
                height,
            })
            .unwrap();
    }
}

/// A device buffer's bytes, after the stream's work so far.
fn read_back(gpu: &Gpu, stream: &Stream, buffer: &DeviceBuffer) -> Vec<u8> {
    let mut pinned = gpu.pinned(buffer.len()).unwrap();
    // SAFETY: read after the synchronize below.
    unsafe { stream.copy_to_pinned(&mut pinned, buffer).unwrap() };
    stream.synchronize().unwrap();
    pinned.as_slice().to_vec()
}

/// Compares `height` rows of `width` bytes; panics at the first mismatch.
#[allow(clippy::too_many_arguments)]
fn assert_rows(
    what: &str,
    got: &[u8],
    got_pitch: usize,
    want: &[u8],
    want_offset: usize,
    want_pitch: usize,
    width: usize,
    height: usize,
) {
    for y in 0..height {
        let g = &got[y * got_pitch..][..width];
        let w = &want[want_offset + y * want_pitch..][..width];
        if let Some(x) = (0..width).find(|&x| g[x] != w[x]) {
            panic!("{what}: row {y} byte {x}: got {} want {}", g[x], w[x]);
        }
    }
    println!("{what}: {height} rows of {width} bytes match");
}

/// Polls an event for up to `limit` (never blocks forever on a bug).
fn done_within(event: &vmafx::gpu::device::Event, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if event.is_done().unwrap() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}

fn opaque(buffer: &ExportedBuffer) -> ExternalMemoryDesc {
    ExternalMemoryDesc {
        kind: ExternalMemoryKind::OpaqueFd,
        size: buffer.allocation_size,
        dedicated: buffer.dedicated,
    }
}

/// A dma-buf of device memory, exported by CUDA itself (the only dma-buf
/// source on a machine without DRM; under HIP-over-CUDA the buffer is CUDA
/// memory too, in the context current on this thread).
fn cuda_dmabuf(buffer: &DeviceBuffer) -> OwnedFd {
    let mut fd: i32 = -1;
    // SAFETY: the context is current on this thread (the buffer was just
    // made on it); `fd` receives an int.
    let r = unsafe {
        cu::cuMemGetHandleForAddressRange(
            &mut fd as *mut i32 as *mut std::ffi::c_void,
            buffer.ptr(),
            buffer.len(),
            cu::CUmemRangeHandleType::CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
            0,
        )
    };
    assert_eq!(
        r,
        cu::CUresult::CUDA_SUCCESS,
        "cuMemGetHandleForAddressRange"
    );
    // SAFETY: a new fd, ours.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// Which ranges the CUDA driver itself maps inside a Vulkan allocation
/// (printed only: the layer maps allocations whole, from offset 0).
fn probe_driver_mapping_offsets(fd: OwnedFd, pool: &ExportedBuffer) {
    let raw = fd.into_raw_fd();
    // SAFETY: plain driver calls on a context current on this thread; the
    // fd is CUDA's after a successful import, closed here otherwise.
    unsafe {
        let mut handle: cu::CUDA_EXTERNAL_MEMORY_HANDLE_DESC_st__bindgen_ty_1 = std::mem::zeroed();
        handle.fd = raw;
        let desc = cu::CUDA_EXTERNAL_MEMORY_HANDLE_DESC {
            type_: cu::CUexternalMemoryHandleType::CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD,
            handle,
            size: pool.allocation_size,
            flags: if pool.dedicated {
                cu::CUDA_EXTERNAL_MEMORY_DEDICATED
            } else {
                0
            },
            reserved: [0; 16],
        };
        let mut memory = std::ptr::null_mut();
        let r = cu::cuImportExternalMemory(&mut memory, &desc);
        if r != cu::CUresult::CUDA_SUCCESS {
            drop(OwnedFd::from_raw_fd(raw));
            return println!("probe: import {r:?}");
        }
        let size = pool.allocation_size;
        for (offset, bytes) in [
            (0, size),
            (0x1000, 0x1000),
            (0x1_0000, 0x1_0000),
            (0x20_0000, 0x10_0000),
            (0x20_0000, size - 0x20_0000),
            (FRAME1 as u64, FRAME as u64),
        ] {
            let mut d: cu::CUDA_EXTERNAL_MEMORY_BUFFER_DESC = std::mem::zeroed();
            d.offset = offset;
            d.size = bytes;
            let mut ptr = 0;
            let r = cu::cuExternalMemoryGetMappedBuffer(&mut ptr, memory, &d);
            println!("probe: driver maps {bytes:#x} bytes at offset {offset:#x}: {r:?}");
            if r == cu::CUresult::CUDA_SUCCESS {
                cu::cuMemFree_v2(ptr);
            }
        }
        cu::cuDestroyExternalMemory(memory);
    }
}

const PITCH: usize = 2048;
const HEIGHT: usize = 1080;
const FRAME: usize = PITCH * HEIGHT;
/// Frame 1 of the pool starts here: 64 KiB aligned, as pools place frames.
const FRAME1: usize = FRAME.div_ceil(65536) * 65536;

#[test]
fn vulkan_memory_imports_and_copies_at_any_offset_and_pitch() {
    let _alone = crate::one_at_a_time();
    let gpu = test_gpu();
    let Some(vk) = vulkan(gpu.as_ref()) else {
        return;
    };
    // A pool of two frames in one dedicated allocation, filled by the queue.
    let pool = vk.exportable_buffer((FRAME1 + FRAME) as u64, true).unwrap();
    let mut data = pattern(FRAME1 + FRAME, 1);
    data[FRAME1..].copy_from_slice(&pattern(FRAME, 2));
    vk.fill(&pool, &data).unwrap();
    let fd = vk.memory_fd(&pool).unwrap();
    println!(
        "Vulkan pool: {} bytes allocated, dedicated {}",
        pool.allocation_size, pool.dedicated
    );
    let Some(gpu) = gpu else {
        vmafx::testing::skip(vmafx::testing::REQUIRE_GPU, "no GPU to import into");
        return vk.destroy_buffer(pool);
    };
    {
        let memory = gpu.import_memory(fd, opaque(&pool)).unwrap();
        // (The import made the context current on this thread.)
        if !on_hip() {
            probe_driver_mapping_offsets(vk.memory_fd(&pool).unwrap(), &pool);
        }
        let frame0 = memory.map_buffer(0, FRAME as u64).unwrap();
        let frame1 = memory.map_buffer(FRAME1 as u64, FRAME as u64).unwrap();
        let stream = gpu.stream().unwrap();

        let whole = gpu.buffer(FRAME).unwrap();
        copy(
            &stream,
            Memory::Device(frame0.ptr()),
            PITCH,
            &whole,
            PITCH,
            PITCH,
            HEIGHT,
        );
        let got = read_back(&gpu, &stream, &whole);
        assert_rows(
            "frame 0, whole",
            &got,
            PITCH,
            &data,
            0,
            PITCH,
            PITCH,
            HEIGHT,
        );

        // Odd byte offset, odd width and destination pitch: a crop.
        let (x, y, width, height, dst_pitch) = (3, 5, 1917, 1071, 1923);
        let crop = gpu.buffer(dst_pitch * height).unwrap();
        let src: u64 = frame1.ptr() + (y * PITCH + x) as u64;
        copy(
            &stream,
            Memory::Device(src),
            PITCH,
            &crop,
            dst_pitch,
            width,
            height,
        );
        let got = read_back(&gpu, &stream, &crop);
        let start = FRAME1 + y * PITCH + x;
        assert_rows(
            "frame 1, crop at (3, 5)",
            &got,
            dst_pitch,
            &data,
            start,
            PITCH,
            width,
            height,
        );
    }
    vk.destroy_buffer(pool);
}

#[test]
fn timeline_and_binary_semaphores_order_cuda_and_vulkan_both_ways() {
    let _alone = crate::one_at_a_time();
    let gpu = test_gpu();
    let Some(vk) = vulkan(gpu.as_ref()) else {
        return;
    };
    let (timeline, binary) = match (vk.semaphore(true), vk.semaphore(false)) {
        (Ok(t), Ok(b)) => (t, b),
        (Err(e), _) | (_, Err(e)) => return vmafx::testing::skip(vmafx::testing::REQUIRE_GPU, e),
    };
    let Some(gpu) = gpu else {
        return vmafx::testing::skip(vmafx::testing::REQUIRE_GPU, "no GPU to import into");
    };
    let stream = gpu.stream().unwrap();
    let event = gpu.event().unwrap();
    {
        let sem = gpu
            .import_semaphore(vk.semaphore_fd(timeline).unwrap(), SemaphoreKind::Timeline)
            .unwrap();
        stream.wait_semaphore(&sem, 1).unwrap();
        event.record(&stream).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let early = event.is_done().unwrap();
        vk.signal(timeline, 1).unwrap(); // before asserting: never leave the stream blocked
        let released = done_within(&event, Duration::from_secs(5));
        println!("timeline: stream done before vkSignalSemaphore(1): {early}; after: {released}");
        assert!(
            !early,
            "the stream ran past a wait for value 1 before it was signalled"
        );
        assert!(released, "vkSignalSemaphore(1) did not release the stream");

        stream.signal_semaphore(&sem, 2).unwrap();
        assert!(vk.wait_value(timeline, 2, 5000), "Vulkan never saw value 2");
        let counter = vk.counter(timeline).unwrap();
        println!("timeline: CUDA signalled 2, Vulkan reads {counter}");
        assert_eq!(counter, 2);
        stream.synchronize().unwrap();
    }
    {
        let sem = gpu
            .import_semaphore(vk.semaphore_fd(binary).unwrap(), SemaphoreKind::Binary)
            .unwrap();
        vk.queue_signal(binary).unwrap();
        stream.wait_semaphore(&sem, 0).unwrap();
        event.record(&stream).unwrap();
        assert!(
            done_within(&event, Duration::from_secs(5)),
            "binary: Vulkan's signal never reached CUDA"
        );
        stream.signal_semaphore(&sem, 0).unwrap();
        let seen = vk.queue_wait(binary, 5000).unwrap();
        println!("binary: Vulkan -> CUDA released the stream; CUDA -> Vulkan seen: {seen}");
        assert!(seen, "binary: CUDA's signal never reached Vulkan");
        stream.synchronize().unwrap();
    }
    vk.destroy_semaphore(timeline);
    vk.destroy_semaphore(binary);
}

#[test]
fn a_dmabuf_import_gets_the_drivers_answer_and_the_paths_that_work() {
    let _alone = crate::one_at_a_time();
    let Some(gpu) = test_gpu() else {
        return vmafx::testing::skip(vmafx::testing::REQUIRE_GPU, "no GPU");
    };
    let exported = gpu.buffer(2 << 20).unwrap();
    let desc = ExternalMemoryDesc {
        kind: ExternalMemoryKind::DmaBuf,
        size: exported.len() as u64,
        dedicated: false,
    };
    // A first import lets the driver open whatever it opens on first use.
    let _ = gpu.import_memory(cuda_dmabuf(&exported), desc);
    let fd = cuda_dmabuf(&exported);
    let before = open_fds();
    match gpu.import_memory(fd, desc) {
        Err(e) => {
            let text = e.to_string();
            println!("dma-buf import: {text}");
            let call = if on_hip() {
                "HIP: hipImportExternalMemory (dma-buf fd"
            } else {
                "CUDA: cuImportExternalMemory (dma-buf fd"
            };
            assert!(text.contains(call), "{text}");
            if text.contains("NOT_SUPPORTED") {
                assert!(
                    text.contains("CUDA_ERROR_NOT_SUPPORTED (801)") && text.contains("opaque fd"),
                    "{text}"
                );
            }
            assert_eq!(
                open_fds(),
                before - 1,
                "the refused dma-buf fd was not closed"
            );
        }
        Ok(memory) => {
            println!("dma-buf import: this driver imports dma-bufs");
            let mapped = memory.map_buffer(0, desc.size).unwrap();
            assert_ne!(mapped.ptr(), 0);
        }
    }
}

#[test]
fn a_gl_texture_maps_as_an_array_and_copies_out() {
    let _alone = crate::one_at_a_time();
    let gl = match Gl::new() {
        Ok(gl) => gl,
        Err(e) => return vmafx::testing::skip(vmafx::testing::REQUIRE_GPU, e),
    };
    println!("GL: {}", gl.version);
    let (width, height) = (1917usize, 1079usize);
    let data = pattern(width * height, 3);
    let texture = gl.r8_texture(width as i32, height as i32, &data).unwrap();
    let Some(gpu) = test_gpu() else {
        gl.delete_texture(texture);
        return vmafx::testing::skip(
            vmafx::testing::REQUIRE_GPU,
            "no GPU to register the texture with",
        );
    };
    if on_hip() {
        // No HIP-GL interop: refused, pointing at the dma-buf path.
        // SAFETY: the texture is alive; nothing is registered.
        let err = unsafe { gpu.register_gl_texture(texture.0.get(), GL_TEXTURE_2D) }
            .err()
            .expect("HIP registers no GL texture")
            .to_string();
        println!("GL texture on HIP: {err}");
        assert!(err.contains("no HIP-GL interop"), "{err}");
        return gl.delete_texture(texture);
    }
    {
        let stream = gpu.stream().unwrap();
        let dst_pitch = 1920;
        let dst = gpu.buffer(dst_pitch * height).unwrap();
        // SAFETY: the texture lives until after the resource drops.
        let mut resource =
            unsafe { gpu.register_gl_texture(texture.0.get(), GL_TEXTURE_2D) }.unwrap();
        let mapped = resource.map(&stream).unwrap();
        let array = mapped.array().unwrap();
        copy(
            &stream,
            Memory::Array(array),
            0,
            &dst,
            dst_pitch,
            width,
            height,
        );
        mapped.unmap().unwrap();
        let got = read_back(&gpu, &stream, &dst);
        assert_rows(
            "GL R8 texture via its array",
            &got,
            dst_pitch,
            &data,
            0,
            width,
            width,
            height,
        );
    }
    gl.delete_texture(texture);
}

#[test]
fn a_registered_host_frame_copies_with_no_staging() {
    let _alone = crate::one_at_a_time();
    let Some(gpu) = test_gpu() else {
        return vmafx::testing::skip(vmafx::testing::REQUIRE_GPU, "no GPU");
    };
    // An ordinary heap frame at an odd address, as a producer would hand it.
    let storage = pattern(FRAME + 13, 4);
    let frame = &storage[13..];
    let registration = gpu.register_host(frame).unwrap();
    let stream = gpu.stream().unwrap();
    let dst = gpu.buffer(FRAME).unwrap();
    copy(
        &stream,
        Memory::Host(registration.as_ptr()),
        PITCH,
        &dst,
        PITCH,
        PITCH,
        HEIGHT,
    );
    let got = read_back(&gpu, &stream, &dst);
    assert_rows(
        "registered host frame",
        &got,
        PITCH,
        frame,
        0,
        PITCH,
        PITCH,
        HEIGHT,
    );

    // The same frame read by the device over the bus through its mapping.
    let mapped = registration.device_ptr().unwrap();
    let dst2 = gpu.buffer(FRAME).unwrap();
    copy(
        &stream,
        Memory::Device(mapped),
        PITCH,
        &dst2,
        PITCH,
        PITCH,
        HEIGHT,
    );
    let got = read_back(&gpu, &stream, &dst2);
    assert_rows(
        "registered host frame via its device pointer",
        &got,
        PITCH,
        frame,
        0,
        PITCH,
        PITCH,
        HEIGHT,
    );

    // Copy times of one frame, host frame registered vs pageable.
    let event = gpu.event().unwrap();
    let time = |src: *const u8| {
        let start = Instant::now();
        for _ in 0..20 {
            copy(
                &stream,
                Memory::Host(src),
                PITCH,
                &dst,
                PITCH,
                PITCH,
                HEIGHT,
            );
        }
        event.record(&stream).unwrap();
        event.synchronize().unwrap();
        start.elapsed().as_secs_f64() / 20.0 * 1e6
    };
    let registered = time(registration.as_ptr());
    drop(registration);
    let pageable = time(frame.as_ptr());
    println!("host frame copy: registered {registered:.0} us, pageable {pageable:.0} us");
}

#[test]
fn a_producers_event_is_waited_on_and_left_alive() {
    let _alone = crate::one_at_a_time();
    let Some(gpu) = test_gpu() else {
        return vmafx::testing::skip(vmafx::testing::REQUIRE_GPU, "no GPU");
    };
    let stream = gpu.stream().unwrap(); // makes the context current here
    if on_hip() {
        return hip_producer_event(&gpu, &stream);
    }
    let mut raw = std::ptr::null_mut();
    // SAFETY: the producer's event, created in our (primary) context.
    unsafe { assert_eq!(cu::cuEventCreate(&mut raw, 0), cu::CUresult::CUDA_SUCCESS) };
    {
        // SAFETY: `raw` outlives the wrapper.
        let event = unsafe { gpu.borrow_event(raw as *mut std::ffi::c_void) };
        event.record(&stream).unwrap();
        stream.wait(&event).unwrap();
        stream.synchronize().unwrap();
        assert!(event.is_done().unwrap());
    }
    // Still the producer's: alive after the wrapper dropped.
    // SAFETY: valid event, destroyed once.
    unsafe {
        assert_eq!(cu::cuEventQuery(raw), cu::CUresult::CUDA_SUCCESS);
        assert_eq!(cu::cuEventDestroy_v2(raw), cu::CUresult::CUDA_SUCCESS);
    }
    println!("producer event: recorded, waited on, left alive");
}

#[test]
fn two_hundred_import_cycles_leak_no_fd_and_no_device_memory() {
    let _alone = crate::one_at_a_time();
    let gpu = test_gpu();
    let Some(vk) = vulkan(gpu.as_ref()) else {
        return;
    };
    let pool = vk.exportable_buffer(FRAME as u64, false).unwrap();
    vk.fill(&pool, &pattern(FRAME, 5)).unwrap();
    let semaphore = vk.semaphore(true).ok();
    let gl = if on_hip() {
        println!("GL part skipped: no HIP-GL interop");
        None
    } else {
        Gl::new().map_err(|e| println!("GL part skipped: {e}")).ok()
    };
    let texture = gl
        .as_ref()
        .map(|gl| gl.r8_texture(640, 360, &pattern(640 * 360, 6)).unwrap());
    let Some(gpu) = gpu else {
        return vmafx::testing::skip(vmafx::testing::REQUIRE_GPU, "no GPU to import into");
    };
    let stream = gpu.stream().unwrap();
    let dst = gpu.buffer(FRAME).unwrap();
    let host = pattern(FRAME, 7);
    let dmabuf_source = gpu.buffer(2 << 20).unwrap();
    let mut refused = String::new();

    // Timeline values only grow: cycle n signals n.
    let mut cycle = |n: u64| {
        let with_checks = n == 1;
        let memory = gpu
            .import_memory(vk.memory_fd(&pool).unwrap(), opaque(&pool))
            .unwrap();
        let mapped = memory.map_buffer(0, FRAME as u64).unwrap();
        copy(
            &stream,
            Memory::Device(mapped.ptr()),
            PITCH,
            &dst,
            PITCH,
            PITCH,
            HEIGHT,
        );
        if let Some(s) = semaphore {
            let sem = gpu
                .import_semaphore(vk.semaphore_fd(s).unwrap(), SemaphoreKind::Timeline)
                .unwrap();
            stream.signal_semaphore(&sem, n).unwrap();
            stream.synchronize().unwrap();
        }
        let registration = gpu.register_host(&host).unwrap();
        copy(
            &stream,
            Memory::Host(registration.as_ptr()),
            PITCH,
            &dst,
            PITCH,
            PITCH,
            HEIGHT,
        );
        stream.synchronize().unwrap();
        drop(registration);
        if let Some(texture) = texture {
            // SAFETY: the texture outlives the loop.
            let mut resource =
                unsafe { gpu.register_gl_texture(texture.0.get(), GL_TEXTURE_2D) }.unwrap();
            let mapped = resource.map(&stream).unwrap();
            copy(
                &stream,
                Memory::Array(mapped.array().unwrap()),
                0,
                &dst,
                640,
                640,
                360,
            );
            drop(mapped);
        }
        // A refused import: the fd must be closed all the same.
        let desc = ExternalMemoryDesc {
            kind: ExternalMemoryKind::DmaBuf,
            size: dmabuf_source.len() as u64,
            dedicated: false,
        };
        if let Err(e) = gpu.import_memory(cuda_dmabuf(&dmabuf_source), desc) {
            if with_checks {
                refused = e.to_string();
            }
        }
        stream.synchronize().unwrap();
    };
    cycle(1); // the driver's first-use allocations happen here
    let (fds, free) = (open_fds(), gpu.memory_info().unwrap().free);
    let start = Instant::now();
    for n in 2..202 {
        cycle(n);
    }
    let elapsed = start.elapsed();
    let (fds_after, free_after) = (open_fds(), gpu.memory_info().unwrap().free);
    println!(
        "200 cycles (Vulkan memory import+map+copy, timeline semaphore {}, host registration, GL texture {}, refused dma-buf) in {:.0} ms",
        if semaphore.is_some() { "import+signal" } else { "skipped" },
        if texture.is_some() { "register+map+copy" } else { "skipped" },
        elapsed.as_secs_f64() * 1e3
    );
    println!("  first refused dma-buf: {refused}");
    println!("  open fds {fds} -> {fds_after}; free device memory {free} -> {free_after}");
    if let Some(s) = semaphore {
        // Every cycle's imported semaphore reached Vulkan.
        assert_eq!(vk.counter(s).unwrap(), 201);
    }
    assert_eq!(fds_after, fds, "fds leaked");
    assert_eq!(free_after, free, "device memory leaked");

    drop(stream);
    if let (Some(gl), Some(texture)) = (&gl, texture) {
        gl.delete_texture(texture);
    }
    if let Some(s) = semaphore {
        vk.destroy_semaphore(s);
    }
    vk.destroy_buffer(pool);
}

/// [`a_producers_event_is_waited_on_and_left_alive`] with a HIP event of
/// the producer's (the HIP runtime vmafx loaded: ROCm, or the HIP-over-CUDA
/// test runtime).
fn hip_producer_event(gpu: &Gpu, stream: &vmafx::gpu::device::Stream) {
    use cubecl_hip_sys as hip;
    let mut raw: hip::hipEvent_t = std::ptr::null_mut();
    // SAFETY: an out-pointer to a local; the runtime is loaded (the Gpu is open).
    unsafe {
        assert_eq!(
            hip::hipEventCreateWithFlags(&mut raw, hip::hipEventDefault),
            hip::hipError_t_hipSuccess
        )
    };
    {
        // SAFETY: `raw` outlives the wrapper.
        let event = unsafe { gpu.borrow_event(raw as *mut std::ffi::c_void) };
        event.record(stream).unwrap();
        stream.wait(&event).unwrap();
        stream.synchronize().unwrap();
        assert!(event.is_done().unwrap());
    }
    // SAFETY: valid event, destroyed once.
    unsafe {
        assert_eq!(hip::hipEventQuery(raw), hip::hipError_t_hipSuccess);
        assert_eq!(hip::hipEventDestroy(raw), hip::hipError_t_hipSuccess);
    }
    println!("producer HIP event: recorded, waited on, left alive");
}
