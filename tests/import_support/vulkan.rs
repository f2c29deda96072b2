//! A small Vulkan producer for the import tests: a Vulkan 1.2 device with
//! `VK_KHR_external_memory_fd` and timeline semaphores (lavapipe in CI),
//! host-visible exportable allocations filled through a mapping and
//! exported as opaque fds, and timeline semaphores signalled and waited on
//! the host.

use ash::vk;
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::Duration;

pub struct Vk {
    _entry: ash::Entry,
    instance: ash::Instance,
    physical: vk::PhysicalDevice,
    pub device: ash::Device,
    memory_fd: ash::khr::external_memory_fd::Device,
    pub name: String,
}

impl Vk {
    /// The first device with what the tests need, or why there is none.
    pub fn new() -> Result<Vk, String> {
        // SAFETY: loading the system's Vulkan loader.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| format!("no Vulkan loader: {e}"))?;
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_2);
        let info = vk::InstanceCreateInfo::default().application_info(&app);
        // SAFETY: a plain instance, destroyed in Drop.
        let instance = unsafe { entry.create_instance(&info, None) }
            .map_err(|e| format!("vkCreateInstance: {e}"))?;
        match Self::open_device(&instance) {
            Ok((physical, device, name)) => {
                let memory_fd = ash::khr::external_memory_fd::Device::new(&instance, &device);
                Ok(Vk {
                    _entry: entry,
                    instance,
                    physical,
                    device,
                    memory_fd,
                    name,
                })
            }
            Err(e) => {
                // SAFETY: nothing was created from it.
                unsafe { instance.destroy_instance(None) };
                Err(e)
            }
        }
    }

    fn open_device(
        instance: &ash::Instance,
    ) -> Result<(vk::PhysicalDevice, ash::Device, String), String> {
        // SAFETY: queries of a live instance.
        let physicals =
            unsafe { instance.enumerate_physical_devices() }.map_err(|e| e.to_string())?;
        for physical in physicals {
            let props = unsafe { instance.get_physical_device_properties(physical) };
            let name = props
                .device_name_as_c_str()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if props.api_version < vk::API_VERSION_1_2 {
                continue;
            }
            let exts = unsafe { instance.enumerate_device_extension_properties(physical) }
                .map_err(|e| e.to_string())?;
            let has_fd = exts
                .iter()
                .any(|e| e.extension_name_as_c_str() == Ok(ash::khr::external_memory_fd::NAME));
            if !has_fd {
                continue;
            }
            let queue = vk::DeviceQueueCreateInfo::default()
                .queue_family_index(0)
                .queue_priorities(&[1.0]);
            let queues = [queue];
            let ext_names = [ash::khr::external_memory_fd::NAME.as_ptr()];
            let mut v12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
            let info = vk::DeviceCreateInfo::default()
                .queue_create_infos(&queues)
                .enabled_extension_names(&ext_names)
                .push_next(&mut v12);
            // SAFETY: a device with one queue, destroyed in Drop.
            let device = unsafe { instance.create_device(physical, &info, None) }
                .map_err(|e| format!("vkCreateDevice on {name}: {e}"))?;
            return Ok((physical, device, name));
        }
        Err("no Vulkan 1.2 device with VK_KHR_external_memory_fd".into())
    }

    pub fn timeline(&self) -> vk::Semaphore {
        let mut kind = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let info = vk::SemaphoreCreateInfo::default().push_next(&mut kind);
        // SAFETY: destroyed by the caller through `destroy_semaphore`.
        unsafe { self.device.create_semaphore(&info, None) }.unwrap()
    }

    pub fn destroy_semaphore(&self, s: vk::Semaphore) {
        unsafe { self.device.destroy_semaphore(s, None) }
    }

    pub fn counter(&self, s: vk::Semaphore) -> u64 {
        unsafe { self.device.get_semaphore_counter_value(s) }.unwrap()
    }

    pub fn signal(&self, s: vk::Semaphore, value: u64) {
        let info = vk::SemaphoreSignalInfo::default().semaphore(s).value(value);
        unsafe { self.device.signal_semaphore(&info) }.unwrap()
    }

    /// vkWaitSemaphores for `value`; false on timeout.
    pub fn wait(&self, s: vk::Semaphore, value: u64, timeout: Duration) -> bool {
        let sems = [s];
        let values = [value];
        let info = vk::SemaphoreWaitInfo::default()
            .semaphores(&sems)
            .values(&values);
        match unsafe {
            self.device
                .wait_semaphores(&info, timeout.as_nanos() as u64)
        } {
            Ok(()) => true,
            Err(vk::Result::TIMEOUT) => false,
            Err(e) => panic!("vkWaitSemaphores: {e}"),
        }
    }

    /// A host-visible allocation exportable as an opaque fd, holding
    /// `bytes`: the memory (free it with `free`), its fd and its size.
    pub fn exportable(&self, bytes: &[u8]) -> (vk::DeviceMemory, OwnedFd, u64) {
        let props = unsafe {
            self.instance
                .get_physical_device_memory_properties(self.physical)
        };
        let wanted = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let type_index = props.memory_types[..props.memory_type_count as usize]
            .iter()
            .position(|t| t.property_flags.contains(wanted))
            .expect("a host-visible coherent memory type") as u32;
        let size = bytes.len() as u64;
        let mut export = vk::ExportMemoryAllocateInfo::default()
            .handle_types(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        let info = vk::MemoryAllocateInfo::default()
            .allocation_size(size)
            .memory_type_index(type_index)
            .push_next(&mut export);
        // SAFETY: a fresh allocation, mapped and written by us only, then
        // exported; freed through `free`.
        unsafe {
            let memory = self.device.allocate_memory(&info, None).unwrap();
            let ptr = self
                .device
                .map_memory(memory, 0, size, vk::MemoryMapFlags::empty())
                .unwrap();
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr.cast::<u8>(), bytes.len());
            self.device.unmap_memory(memory);
            let fd_info = vk::MemoryGetFdInfoKHR::default()
                .memory(memory)
                .handle_type(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
            let fd = self.memory_fd.get_memory_fd(&fd_info).unwrap();
            (memory, OwnedFd::from_raw_fd(fd), size)
        }
    }

    pub fn free(&self, memory: vk::DeviceMemory) {
        unsafe { self.device.free_memory(memory, None) }
    }
}

impl Drop for Vk {
    fn drop(&mut self) {
        // SAFETY: the tests have released every object made from them.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}
