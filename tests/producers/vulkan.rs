//! A Vulkan producer (ash, libvulkan loaded at run time): exportable
//! device-local buffers filled through a staging copy, and binary and
//! timeline semaphores exported as opaque fds.

use ash::{khr, vk};
use std::ffi::CStr;
use std::os::fd::{FromRawFd, OwnedFd};

pub struct Vulkan {
    _entry: ash::Entry,
    instance: ash::Instance,
    device: ash::Device,
    physical: vk::PhysicalDevice,
    queue: vk::Queue,
    pool: vk::CommandPool,
    memory_types: vk::PhysicalDeviceMemoryProperties,
    memory_fd: khr::external_memory_fd::Device,
    /// None where the driver exports no semaphore fds (Mesa's lavapipe).
    semaphore_fd: Option<khr::external_semaphore_fd::Device>,
    pub name: String,
}

/// A buffer in exportable memory.
pub struct ExportedBuffer {
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    /// The allocation's size: what the importer is told.
    pub allocation_size: u64,
    pub dedicated: bool,
}

fn vk_err(what: &str) -> impl Fn(vk::Result) -> String + '_ {
    move |e| format!("{what}: {e:?}")
}

impl Vulkan {
    /// The physical device whose deviceUUID is `uuid` (the CUDA device's),
    /// or the first one when there is no CUDA device to match.
    pub fn new(uuid: Option<[u8; 16]>) -> Result<Self, String> {
        // SAFETY: plain Vulkan calls on objects created here.
        unsafe {
            let entry = ash::Entry::load().map_err(|e| format!("no Vulkan loader: {e}"))?;
            let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_2);
            let instance = entry
                .create_instance(
                    &vk::InstanceCreateInfo::default().application_info(&app),
                    None,
                )
                .map_err(vk_err("vkCreateInstance"))?;
            let mut found = None;
            let mut seen = Vec::new();
            for physical in instance
                .enumerate_physical_devices()
                .map_err(vk_err("vkEnumeratePhysicalDevices"))?
            {
                let mut id = vk::PhysicalDeviceIDProperties::default();
                let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut id);
                instance.get_physical_device_properties2(physical, &mut props);
                let name = CStr::from_ptr(props.properties.device_name.as_ptr())
                    .to_string_lossy()
                    .into_owned();
                let device_uuid = id.device_uuid;
                seen.push(format!("{name} {device_uuid:02x?}"));
                if found.is_none() && uuid.is_none_or(|u| u == device_uuid) {
                    found = Some((physical, name));
                }
            }
            let (physical, name) = found
                .ok_or_else(|| format!("no Vulkan device has UUID {uuid:02x?} (seen: {seen:?})"))?;
            let family = instance
                .get_physical_device_queue_family_properties(physical)
                .iter()
                .position(|f| {
                    f.queue_flags.contains(vk::QueueFlags::TRANSFER)
                        || f.queue_flags.contains(vk::QueueFlags::GRAPHICS)
                })
                .ok_or("no transfer queue")? as u32;
            let available: Vec<_> = instance
                .enumerate_device_extension_properties(physical)
                .map_err(vk_err("vkEnumerateDeviceExtensionProperties"))?
                .iter()
                .map(|e| CStr::from_ptr(e.extension_name.as_ptr()).to_owned())
                .collect();
            if !available
                .iter()
                .any(|e| e.as_c_str() == khr::external_memory_fd::NAME)
            {
                return Err(format!("{name} has no VK_KHR_external_memory_fd"));
            }
            let semaphores = available
                .iter()
                .any(|e| e.as_c_str() == khr::external_semaphore_fd::NAME);
            let mut extensions = vec![khr::external_memory_fd::NAME.as_ptr()];
            if semaphores {
                extensions.push(khr::external_semaphore_fd::NAME.as_ptr());
            }
            let priorities = [1.0];
            let queues = [vk::DeviceQueueCreateInfo::default()
                .queue_family_index(family)
                .queue_priorities(&priorities)];
            let mut features12 =
                vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
            let device = instance
                .create_device(
                    physical,
                    &vk::DeviceCreateInfo::default()
                        .queue_create_infos(&queues)
                        .enabled_extension_names(&extensions)
                        .push_next(&mut features12),
                    None,
                )
                .map_err(vk_err("vkCreateDevice"))?;
            let queue = device.get_device_queue(family, 0);
            let pool = device
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default()
                        .queue_family_index(family)
                        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                    None,
                )
                .map_err(vk_err("vkCreateCommandPool"))?;
            Ok(Self {
                memory_types: instance.get_physical_device_memory_properties(physical),
                memory_fd: khr::external_memory_fd::Device::new(&instance, &device),
                semaphore_fd: semaphores
                    .then(|| khr::external_semaphore_fd::Device::new(&instance, &device)),
                _entry: entry,
                instance,
                device,
                physical,
                queue,
                pool,
                name,
            })
        }
    }

    fn memory_type(&self, bits: u32, wanted: vk::MemoryPropertyFlags) -> Option<u32> {
        (0..self.memory_types.memory_type_count).find(|&i| {
            bits & (1 << i) != 0
                && self.memory_types.memory_types[i as usize]
                    .property_flags
                    .contains(wanted)
        })
    }

    unsafe fn buffer_in(
        &self,
        bytes: u64,
        usage: vk::BufferUsageFlags,
        export: bool,
        dedicated: bool,
        wanted: vk::MemoryPropertyFlags,
    ) -> Result<ExportedBuffer, String> {
        let handle_types = vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD;
        let mut external = vk::ExternalMemoryBufferCreateInfo::default().handle_types(handle_types);
        let mut info = vk::BufferCreateInfo::default()
            .size(bytes)
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        let mut dedicated = dedicated;
        if export {
            info = info.push_next(&mut external);
            // Some drivers export buffers only from dedicated allocations.
            let mut props = vk::ExternalBufferProperties::default();
            self.instance
                .get_physical_device_external_buffer_properties(
                    self.physical,
                    &vk::PhysicalDeviceExternalBufferInfo::default()
                        .usage(usage)
                        .handle_type(handle_types),
                    &mut props,
                );
            let features = props.external_memory_properties.external_memory_features;
            if !features.contains(vk::ExternalMemoryFeatureFlags::EXPORTABLE) {
                return Err(format!(
                    "{}: buffers are not exportable as opaque fds",
                    self.name
                ));
            }
            dedicated |= features.contains(vk::ExternalMemoryFeatureFlags::DEDICATED_ONLY);
        }
        let buffer = self
            .device
            .create_buffer(&info, None)
            .map_err(vk_err("vkCreateBuffer"))?;
        let req = self.device.get_buffer_memory_requirements(buffer);
        let type_index = self
            .memory_type(req.memory_type_bits, wanted)
            .or_else(|| self.memory_type(req.memory_type_bits, vk::MemoryPropertyFlags::empty()))
            .ok_or("no memory type")?;
        let mut export_info = vk::ExportMemoryAllocateInfo::default().handle_types(handle_types);
        let mut dedicated_info = vk::MemoryDedicatedAllocateInfo::default().buffer(buffer);
        let mut alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(type_index);
        if export {
            alloc = alloc.push_next(&mut export_info);
            if dedicated {
                alloc = alloc.push_next(&mut dedicated_info);
            }
        }
        let memory = self
            .device
            .allocate_memory(&alloc, None)
            .map_err(vk_err("vkAllocateMemory"))?;
        self.device
            .bind_buffer_memory(buffer, memory, 0)
            .map_err(vk_err("vkBindBufferMemory"))?;
        Ok(ExportedBuffer {
            buffer,
            memory,
            allocation_size: req.size,
            dedicated: export && dedicated,
        })
    }

    /// A device-local buffer of `bytes` in memory exportable as an opaque fd.
    pub fn exportable_buffer(&self, bytes: u64, dedicated: bool) -> Result<ExportedBuffer, String> {
        // SAFETY: objects created and owned here.
        unsafe {
            self.buffer_in(
                bytes,
                vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST,
                true,
                dedicated,
                vk::MemoryPropertyFlags::DEVICE_LOCAL,
            )
        }
    }

    /// Writes `data` at the start of `target` through a host-visible
    /// staging buffer and a queue copy; returns once the copy completed.
    pub fn fill(&self, target: &ExportedBuffer, data: &[u8]) -> Result<(), String> {
        // SAFETY: objects created and owned here; the map covers `data`.
        unsafe {
            let staging = self.buffer_in(
                data.len() as u64,
                vk::BufferUsageFlags::TRANSFER_SRC,
                false,
                false,
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
            )?;
            let mapped = self
                .device
                .map_memory(
                    staging.memory,
                    0,
                    vk::WHOLE_SIZE,
                    vk::MemoryMapFlags::empty(),
                )
                .map_err(vk_err("vkMapMemory"))?;
            std::ptr::copy_nonoverlapping(data.as_ptr(), mapped as *mut u8, data.len());
            self.device.unmap_memory(staging.memory);
            let region = [vk::BufferCopy::default().size(data.len() as u64)];
            self.submit_and_wait(|cmd| {
                self.device
                    .cmd_copy_buffer(cmd, staging.buffer, target.buffer, &region)
            })?;
            self.destroy_buffer(staging);
            Ok(())
        }
    }

    unsafe fn submit_and_wait(&self, record: impl FnOnce(vk::CommandBuffer)) -> Result<(), String> {
        let cmd = self
            .device
            .allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(self.pool)
                    .command_buffer_count(1),
            )
            .map_err(vk_err("vkAllocateCommandBuffers"))?[0];
        self.device
            .begin_command_buffer(
                cmd,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )
            .map_err(vk_err("vkBeginCommandBuffer"))?;
        record(cmd);
        self.device
            .end_command_buffer(cmd)
            .map_err(vk_err("vkEndCommandBuffer"))?;
        let cmds = [cmd];
        let fence = self
            .device
            .create_fence(&vk::FenceCreateInfo::default(), None)
            .map_err(vk_err("vkCreateFence"))?;
        self.device
            .queue_submit(
                self.queue,
                &[vk::SubmitInfo::default().command_buffers(&cmds)],
                fence,
            )
            .map_err(vk_err("vkQueueSubmit"))?;
        let waited = self.device.wait_for_fences(&[fence], true, 10_000_000_000);
        self.device.destroy_fence(fence, None);
        self.device.free_command_buffers(self.pool, &cmds);
        waited.map_err(vk_err("vkWaitForFences"))
    }

    /// A new fd for the buffer's memory (each call exports another fd).
    pub fn memory_fd(&self, buffer: &ExportedBuffer) -> Result<OwnedFd, String> {
        // SAFETY: our memory; the fd returned is ours to own.
        unsafe {
            let fd = self
                .memory_fd
                .get_memory_fd(
                    &vk::MemoryGetFdInfoKHR::default()
                        .memory(buffer.memory)
                        .handle_type(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD),
                )
                .map_err(vk_err("vkGetMemoryFdKHR"))?;
            Ok(OwnedFd::from_raw_fd(fd))
        }
    }

    pub fn destroy_buffer(&self, buffer: ExportedBuffer) {
        // SAFETY: ours, no longer used (imports keep their own reference).
        unsafe {
            self.device.destroy_buffer(buffer.buffer, None);
            self.device.free_memory(buffer.memory, None);
        }
    }

    /// An exportable semaphore (timeline, starting at 0, or binary), or
    /// why there is none.
    pub fn semaphore(&self, timeline: bool) -> Result<vk::Semaphore, String> {
        if self.semaphore_fd.is_none() {
            return Err(format!("{} exports no semaphore fds", self.name));
        }
        let mut kind = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let mut export = vk::ExportSemaphoreCreateInfo::default()
            .handle_types(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
        let mut info = vk::SemaphoreCreateInfo::default().push_next(&mut export);
        if timeline {
            info = info.push_next(&mut kind);
        }
        // SAFETY: plain creation.
        unsafe { self.device.create_semaphore(&info, None) }.map_err(vk_err("vkCreateSemaphore"))
    }

    pub fn semaphore_fd(&self, semaphore: vk::Semaphore) -> Result<OwnedFd, String> {
        let ext = self.semaphore_fd.as_ref().ok_or("no semaphore fds")?;
        // SAFETY: our semaphore; the fd returned is ours to own.
        unsafe {
            let fd = ext
                .get_semaphore_fd(
                    &vk::SemaphoreGetFdInfoKHR::default()
                        .semaphore(semaphore)
                        .handle_type(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD),
                )
                .map_err(vk_err("vkGetSemaphoreFdKHR"))?;
            Ok(OwnedFd::from_raw_fd(fd))
        }
    }

    /// The logical device (for a host-waited or host-signalled timeline).
    pub fn device(&self) -> ash::Device {
        self.device.clone()
    }

    /// Host-side signal of a timeline semaphore.
    pub fn signal(&self, semaphore: vk::Semaphore, value: u64) -> Result<(), String> {
        // SAFETY: our timeline semaphore.
        unsafe {
            self.device.signal_semaphore(
                &vk::SemaphoreSignalInfo::default()
                    .semaphore(semaphore)
                    .value(value),
            )
        }
        .map_err(vk_err("vkSignalSemaphore"))
    }

    pub fn counter(&self, semaphore: vk::Semaphore) -> Result<u64, String> {
        // SAFETY: our timeline semaphore.
        unsafe { self.device.get_semaphore_counter_value(semaphore) }
            .map_err(vk_err("vkGetSemaphoreCounterValue"))
    }

    /// Waits on the host up to `timeout_ms` for a timeline value.
    pub fn wait_value(&self, semaphore: vk::Semaphore, value: u64, timeout_ms: u64) -> bool {
        let semaphores = [semaphore];
        let values = [value];
        // SAFETY: our timeline semaphore.
        unsafe {
            self.device.wait_semaphores(
                &vk::SemaphoreWaitInfo::default()
                    .semaphores(&semaphores)
                    .values(&values),
                timeout_ms * 1_000_000,
            )
        }
        .is_ok()
    }

    /// Queues a signal of a binary semaphore (an empty submit).
    pub fn queue_signal(&self, semaphore: vk::Semaphore) -> Result<(), String> {
        let semaphores = [semaphore];
        // SAFETY: our queue and semaphore.
        unsafe {
            self.device.queue_submit(
                self.queue,
                &[vk::SubmitInfo::default().signal_semaphores(&semaphores)],
                vk::Fence::null(),
            )
        }
        .map_err(vk_err("vkQueueSubmit (signal)"))
    }

    /// Queues a wait on a binary semaphore and waits on the host up to
    /// `timeout_ms` for the queue to get past it.
    pub fn queue_wait(&self, semaphore: vk::Semaphore, timeout_ms: u64) -> Result<bool, String> {
        let semaphores = [semaphore];
        let stages = [vk::PipelineStageFlags::ALL_COMMANDS];
        // SAFETY: our queue, semaphore and fence.
        unsafe {
            let fence = self
                .device
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .map_err(vk_err("vkCreateFence"))?;
            self.device
                .queue_submit(
                    self.queue,
                    &[vk::SubmitInfo::default()
                        .wait_semaphores(&semaphores)
                        .wait_dst_stage_mask(&stages)],
                    fence,
                )
                .map_err(vk_err("vkQueueSubmit (wait)"))?;
            let done = self
                .device
                .wait_for_fences(&[fence], true, timeout_ms * 1_000_000)
                .is_ok();
            if done {
                self.device.destroy_fence(fence, None);
            }
            Ok(done)
        }
    }

    pub fn destroy_semaphore(&self, semaphore: vk::Semaphore) {
        // SAFETY: ours, no work pending on it.
        unsafe { self.device.destroy_semaphore(semaphore, None) }
    }
}

impl Drop for Vulkan {
    fn drop(&mut self) {
        // SAFETY: ours; the queue is idle once waited for.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_command_pool(self.pool, None);
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}
