//! A Vulkan producer handing frames to vmafx where they live.
//!
//! The producer renders (here: fills on the CPU and copies with
//! `vkCmdCopyBuffer`) a moving NV12 pattern as the reference and a blurred,
//! noisy copy as the distorted frame into exportable memory (one allocation
//! per ring slot, exported as an opaque fd), and signals a timeline
//! semaphore from its queue when a frame is written. vmafx imports the fd,
//! waits on the timeline, scores with vmaf_v0.6.1 and signals the slot's
//! release timelines once it has read the frames; the producer waits on
//! those before it reuses the slot.
//!
//! ```sh
//! cargo run --release --example vulkan_producer -- --frames 30 --size 640x360 --ring 3
//! ```
//!
//! With the CPU engine (`--backend cpu`, the default) it runs on any Vulkan
//! 1.2 device with `VK_KHR_external_memory_fd` whose opaque fds the host can
//! map (Mesa's lavapipe). With `--backend cuda` the Vulkan device is the one
//! whose deviceUUID is the CUDA device's, and the GPU engine imports the
//! same allocations into CUDA and scores them there, with no host copy;
//! `--backend hip` does the same through HIP.

use ash::vk;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};
use vmafx::import::VulkanMemoryFd;
use vmafx::import::{
    Acquire, Frame, FrameDesc, Memory, PixelFormat, PlaneLayout, Release, VulkanTimeline,
};
use vmafx::model::{Model, ModelSpec};
use vmafx::ContextBuilder;

type Error = Box<dyn std::error::Error>;

struct Args {
    frames: u64,
    width: u32,
    height: u32,
    ring: usize,
    backend: String,
}

fn args() -> Result<Args, Error> {
    let mut a = Args {
        frames: 30,
        width: 640,
        height: 360,
        ring: 3,
        backend: "cpu".into(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--frames" => a.frames = value.parse()?,
            "--ring" => a.ring = value.parse::<usize>()?.max(1),
            "--backend" => a.backend = value,
            "--size" => {
                let (w, h) = value.split_once('x').ok_or("--size is WIDTHxHEIGHT")?;
                (a.width, a.height) = (w.parse()?, h.parse()?);
            }
            _ => {
                return Err(
                    format!("unknown flag {flag} (--frames, --size, --ring, --backend)").into(),
                )
            }
        }
    }
    Ok(a)
}

fn main() -> Result<(), Error> {
    let args = args()?;
    let gpu = match args.backend.as_str() {
        "cpu" => None,
        "cuda" => Some(vmafx::gpu::open(
            vmafx::gpu::GpuBackend::Cuda,
            &vmafx::gpu::DeviceSelector::default(),
        )?),
        "hip" => Some(vmafx::gpu::open(
            vmafx::gpu::GpuBackend::Hip,
            &vmafx::gpu::DeviceSelector::default(),
        )?),
        other => return Err(format!("--backend {other}: expected cpu, cuda or hip").into()),
    };
    let vk = Vulkan::new(gpu.as_ref().map(|g| g.uuid()))?;
    println!("producer: {} (device UUID {})", vk.name, hex(&vk.uuid));

    let (w, h) = (args.width, args.height);
    let layout = Nv12::new(w, h);
    let format = PixelFormat::Nv12.picture_format(w, h)?;
    let model = Model::load(&ModelSpec::version("vmaf_v0.6.1"))?;
    let mut builder = ContextBuilder::new(format).model(model).threads(2);
    if let Some(g) = &gpu {
        println!("scoring on {}", g.describe());
        builder = builder.gpu(g.clone());
    }
    let mut ctx = builder.build()?;

    let written = vk.timeline()?;
    let mut slots = (0..args.ring)
        .map(|_| Slot::new(&vk, 2 * layout.bytes))
        .collect::<Result<Vec<_>, _>>()?;
    let start = Instant::now();
    for i in 0..args.frames {
        let slot = &mut slots[i as usize % args.ring];
        // Reuse only once vmafx has released both frames of the slot's
        // previous use.
        vk.wait(
            &[slot.ref_released, slot.dist_released],
            slot.uses,
            Duration::from_secs(10),
        )?;
        slot.uses += 1;

        let staging = slot.staging_bytes();
        layout.fill(&mut staging[..layout.bytes], i, None);
        layout.fill(&mut staging[layout.bytes..], i, Some(i));
        vk.copy_and_signal(slot, 2 * layout.bytes as u64, written, i + 1)?;

        // Each frame gets its own fd; both point at the slot's allocation.
        let fd = vk.export(slot.memory)?;
        let frame = |fd: OwnedFd, offset: usize, released| {
            let desc = FrameDesc::new(
                w,
                h,
                PixelFormat::Nv12,
                Memory::VulkanFd(unsafe { VulkanMemoryFd::new(fd, slot.size, false) }),
                &layout.planes(offset as u64),
            );
            let timeline = |semaphore, value| unsafe {
                VulkanTimeline::new(vk.device.clone(), semaphore, value)
            };
            Frame::new(
                desc,
                Acquire::VulkanTimeline(timeline(written, i + 1)),
                vec![Release::VulkanTimeline(timeline(released, slot.uses))],
            )
        };
        let second = fd.as_fd().try_clone_to_owned()?;
        let reference = frame(fd, 0, slot.ref_released)?;
        let distorted = frame(second, layout.bytes, slot.dist_released)?;
        ctx.submit_frames(&reference, &distorted)?;
    }
    let scores = ctx.finish()?;
    let elapsed = start.elapsed();

    let mut sum = 0.0;
    for (frame, values) in &scores.frames {
        let vmaf = values
            .iter()
            .find(|(n, _)| n == "vmaf")
            .map_or(f64::NAN, |(_, v)| *v);
        sum += vmaf;
        println!("frame {frame:3}: vmaf {vmaf:.6}");
    }
    let n = scores.frames.len().max(1) as f64;
    println!(
        "pooled (mean) vmaf over {} frames: {:.6}   ({:.1} frames/s, ring of {})",
        scores.frames.len(),
        sum / n,
        scores.frames.len() as f64 / elapsed.as_secs_f64(),
        args.ring
    );
    for s in slots.drain(..) {
        s.destroy(&vk);
    }
    unsafe { vk.device.destroy_semaphore(written, None) };
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// An NV12 frame's layout: Y rows then interleaved CbCr rows, pitches
/// rounded up to 256 bytes (as GPU allocators like them).
struct Nv12 {
    width: usize,
    height: usize,
    pitch: usize,
    chroma_offset: usize,
    bytes: usize,
}

impl Nv12 {
    fn new(width: u32, height: u32) -> Self {
        let (width, height) = (width as usize, height as usize);
        let pitch = width.div_ceil(256) * 256;
        let chroma_offset = pitch * height;
        let bytes = chroma_offset + pitch * height.div_ceil(2);
        Self {
            width,
            height,
            pitch,
            chroma_offset,
            bytes,
        }
    }

    fn planes(&self, offset: u64) -> [PlaneLayout; 2] {
        let pitch = self.pitch as u64;
        [
            PlaneLayout::new(offset, pitch),
            PlaneLayout::new(offset + self.chroma_offset as u64, pitch),
        ]
    }

    /// Frame `t` of a moving pattern; with `noise_seed`, blurred and with
    /// noise added (the "distorted" encode).
    fn fill(&self, out: &mut [u8], t: u64, noise_seed: Option<u64>) {
        let tf = t as f64;
        let luma = |x: usize, y: usize| -> f64 {
            let (x, y) = (x as f64, y as f64);
            let waves = 60.0 * ((x + 3.0 * tf) / 17.0).sin() * ((y - 2.0 * tf) / 23.0).cos();
            let (cx, cy) = (
                (self.width as f64) * (0.5 + 0.3 * (tf / 20.0).cos()),
                (self.height as f64) * (0.5 + 0.3 * (tf / 15.0).sin()),
            );
            let disc = if (x - cx).hypot(y - cy) < self.height as f64 / 6.0 {
                50.0
            } else {
                0.0
            };
            (110.0 + waves + disc + 40.0 * x / self.width as f64).clamp(16.0, 235.0)
        };
        let mut rng = noise_seed.map(|s| s.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut noise = move || match &mut rng {
            None => 0.0,
            Some(state) => {
                *state ^= *state << 13;
                *state ^= *state >> 7;
                *state ^= *state << 17;
                ((*state % 17) as f64) - 8.0
            }
        };
        let blurred = noise_seed.is_some();
        for y in 0..self.height {
            for x in 0..self.width {
                let v = if blurred {
                    let mut s = 0.0;
                    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                        s += luma((x + dx).min(self.width - 1), (y + dy).min(self.height - 1));
                    }
                    s / 4.0 + noise()
                } else {
                    luma(x, y)
                };
                out[y * self.pitch + x] = v.clamp(0.0, 255.0) as u8;
            }
        }
        for y in 0..self.height.div_ceil(2) {
            let row = &mut out[self.chroma_offset + y * self.pitch..];
            for x in 0..self.width.div_ceil(2) {
                let cb = 128.0 + 30.0 * ((x as f64 + tf) / 40.0).sin();
                let cr = 128.0 + 30.0 * ((y as f64 - tf) / 30.0).cos();
                row[2 * x] = (cb + noise() / 2.0) as u8;
                row[2 * x + 1] = (cr + noise() / 2.0) as u8;
            }
        }
    }
}

/// One ring slot: the exportable allocation (bound to a buffer the copy
/// writes), a staging buffer the CPU fills, a command buffer, and the
/// release timelines vmafx signals for the slot's reference and distorted
/// frames (value = the slot's use count).
struct Slot {
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    size: u64,
    staging: vk::Buffer,
    staging_memory: vk::DeviceMemory,
    /// The staging memory, mapped (coherent) for the slot's life.
    staging_ptr: *mut u8,
    staging_len: usize,
    commands: vk::CommandBuffer,
    ref_released: vk::Semaphore,
    dist_released: vk::Semaphore,
    uses: u64,
}

impl Slot {
    fn new(vk: &Vulkan, bytes: usize) -> Result<Slot, Error> {
        let (buffer, memory, size) = vk.buffer(bytes as u64, true)?;
        let (staging, staging_memory, _) = vk.buffer(bytes as u64, false)?;
        let staging_ptr = unsafe {
            vk.device
                .map_memory(staging_memory, 0, bytes as u64, vk::MemoryMapFlags::empty())?
        }
        .cast::<u8>();
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(vk.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        let commands = unsafe { vk.device.allocate_command_buffers(&info)? }[0];
        Ok(Slot {
            buffer,
            memory,
            size,
            staging,
            staging_memory,
            staging_ptr,
            staging_len: bytes,
            commands,
            ref_released: vk.timeline()?,
            dist_released: vk.timeline()?,
            uses: 0,
        })
    }

    /// The staging bytes. The caller has waited for the slot's release, so
    /// the last copy out of them is done.
    fn staging_bytes(&mut self) -> &mut [u8] {
        // SAFETY: mapped in `new` for `staging_len` bytes, unmapped on destroy.
        unsafe { std::slice::from_raw_parts_mut(self.staging_ptr, self.staging_len) }
    }

    fn destroy(self, vk: &Vulkan) {
        unsafe {
            let _ = vk.device.device_wait_idle();
            vk.device.destroy_buffer(self.buffer, None);
            vk.device.free_memory(self.memory, None);
            vk.device.destroy_buffer(self.staging, None);
            vk.device.free_memory(self.staging_memory, None);
            vk.device.destroy_semaphore(self.ref_released, None);
            vk.device.destroy_semaphore(self.dist_released, None);
        }
    }
}

/// The producer's Vulkan objects.
struct Vulkan {
    _entry: ash::Entry,
    instance: ash::Instance,
    physical: vk::PhysicalDevice,
    device: ash::Device,
    queue: vk::Queue,
    pool: vk::CommandPool,
    memory_fd: ash::khr::external_memory_fd::Device,
    name: String,
    uuid: [u8; 16],
}

impl Vulkan {
    /// The first device exporting memory fds, or the one whose deviceUUID
    /// is `uuid` (the CUDA device's).
    fn new(uuid: Option<[u8; 16]>) -> Result<Self, Error> {
        let entry = unsafe { ash::Entry::load()? };
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_2);
        let instance = unsafe {
            entry.create_instance(
                &vk::InstanceCreateInfo::default().application_info(&app),
                None,
            )?
        };
        let physical = unsafe { instance.enumerate_physical_devices()? }
            .into_iter()
            .find(|&p| unsafe {
                let mut id = vk::PhysicalDeviceIDProperties::default();
                let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut id);
                instance.get_physical_device_properties2(p, &mut props);
                uuid.is_none_or(|u| u == id.device_uuid)
                    && instance
                        .enumerate_device_extension_properties(p)
                        .unwrap_or_default()
                        .iter()
                        .any(|e| {
                            e.extension_name_as_c_str() == Ok(ash::khr::external_memory_fd::NAME)
                        })
            })
            .ok_or(
                "no Vulkan device with VK_KHR_external_memory_fd (and the CUDA device's UUID)",
            )?;
        let mut id = vk::PhysicalDeviceIDProperties::default();
        let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut id);
        unsafe { instance.get_physical_device_properties2(physical, &mut props) };
        let name = props
            .properties
            .device_name_as_c_str()?
            .to_string_lossy()
            .into_owned();
        let uuid = id.device_uuid;
        let family = unsafe { instance.get_physical_device_queue_family_properties(physical) }
            .iter()
            .position(|q| {
                q.queue_flags
                    .intersects(vk::QueueFlags::TRANSFER | vk::QueueFlags::GRAPHICS)
            })
            .ok_or("no queue family that copies")? as u32;
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&[1.0])];
        let extensions = [ash::khr::external_memory_fd::NAME.as_ptr()];
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&extensions)
            .push_next(&mut v12);
        let device = unsafe { instance.create_device(physical, &info, None)? };
        let queue = unsafe { device.get_device_queue(family, 0) };
        let pool = unsafe {
            device.create_command_pool(
                &vk::CommandPoolCreateInfo::default()
                    .queue_family_index(family)
                    .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                None,
            )?
        };
        let memory_fd = ash::khr::external_memory_fd::Device::new(&instance, &device);
        Ok(Self {
            _entry: entry,
            instance,
            physical,
            device,
            queue,
            pool,
            memory_fd,
            name,
            uuid,
        })
    }

    fn timeline(&self) -> Result<vk::Semaphore, Error> {
        let mut kind = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let info = vk::SemaphoreCreateInfo::default().push_next(&mut kind);
        Ok(unsafe { self.device.create_semaphore(&info, None)? })
    }

    /// Waits until every semaphore in `semaphores` reaches `value`.
    fn wait(
        &self,
        semaphores: &[vk::Semaphore],
        value: u64,
        timeout: Duration,
    ) -> Result<(), Error> {
        let values = vec![value; semaphores.len()];
        let info = vk::SemaphoreWaitInfo::default()
            .semaphores(semaphores)
            .values(&values);
        unsafe {
            self.device
                .wait_semaphores(&info, timeout.as_nanos() as u64)
        }
        .map_err(|e| format!("waiting for vmafx's release: {e}").into())
    }

    /// A buffer of `bytes` with its own memory: exportable as an opaque fd
    /// (device-local where the device has it), or host-visible staging.
    fn buffer(
        &self,
        bytes: u64,
        exportable: bool,
    ) -> Result<(vk::Buffer, vk::DeviceMemory, u64), Error> {
        let handle = vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD;
        let mut external = vk::ExternalMemoryBufferCreateInfo::default().handle_types(handle);
        let mut info = vk::BufferCreateInfo::default()
            .size(bytes)
            .usage(if exportable {
                vk::BufferUsageFlags::TRANSFER_DST
            } else {
                vk::BufferUsageFlags::TRANSFER_SRC
            });
        if exportable {
            info = info.push_next(&mut external);
        }
        let buffer = unsafe { self.device.create_buffer(&info, None)? };
        let needs = unsafe { self.device.get_buffer_memory_requirements(buffer) };
        let types = unsafe {
            self.instance
                .get_physical_device_memory_properties(self.physical)
        };
        let wanted = if exportable {
            vk::MemoryPropertyFlags::DEVICE_LOCAL
        } else {
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT
        };
        let allowed = |i: usize| needs.memory_type_bits & (1 << i) != 0;
        let kinds = &types.memory_types[..types.memory_type_count as usize];
        let index = (0..kinds.len())
            .find(|&i| allowed(i) && kinds[i].property_flags.contains(wanted))
            .or_else(|| (0..kinds.len()).find(|&i| allowed(i)))
            .ok_or("no memory type for the buffer")?;
        let mut export = vk::ExportMemoryAllocateInfo::default().handle_types(handle);
        let mut alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(needs.size)
            .memory_type_index(index as u32);
        if exportable {
            alloc = alloc.push_next(&mut export);
        }
        let memory = unsafe { self.device.allocate_memory(&alloc, None)? };
        unsafe { self.device.bind_buffer_memory(buffer, memory, 0)? };
        Ok((buffer, memory, needs.size))
    }

    /// Copies the slot's staging buffer into its exportable buffer on the
    /// queue and signals `timeline` to `value` when done.
    fn copy_and_signal(
        &self,
        slot: &Slot,
        bytes: u64,
        timeline: vk::Semaphore,
        value: u64,
    ) -> Result<(), Error> {
        unsafe {
            let cb = slot.commands;
            self.device
                .reset_command_buffer(cb, vk::CommandBufferResetFlags::empty())?;
            self.device.begin_command_buffer(
                cb,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )?;
            let region = vk::BufferCopy::default().size(bytes);
            self.device
                .cmd_copy_buffer(cb, slot.staging, slot.buffer, &[region]);
            self.device.end_command_buffer(cb)?;
            let values = [value];
            let signals = [timeline];
            let buffers = [cb];
            let mut timeline_info =
                vk::TimelineSemaphoreSubmitInfo::default().signal_semaphore_values(&values);
            let submit = vk::SubmitInfo::default()
                .command_buffers(&buffers)
                .signal_semaphores(&signals)
                .push_next(&mut timeline_info);
            self.device
                .queue_submit(self.queue, &[submit], vk::Fence::null())?;
        }
        Ok(())
    }

    fn export(&self, memory: vk::DeviceMemory) -> Result<OwnedFd, Error> {
        let info = vk::MemoryGetFdInfoKHR::default()
            .memory(memory)
            .handle_type(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        let fd = unsafe { self.memory_fd.get_memory_fd(&info)? };
        // SAFETY: vkGetMemoryFdKHR hands over a new fd.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

impl Drop for Vulkan {
    fn drop(&mut self) {
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_command_pool(self.pool, None);
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}
