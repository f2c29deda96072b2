#!/usr/bin/env bash
# Session 2, fourth pass: Vulkan frames with device-waited semaphores after
# the import-destruction fix; the import tests and the GPU suite again.
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
tar xJf .gpu-carry/main/main.tar.xz -C /tmp; C=/tmp/main
echo "== gpu_import_producers"; timeout 50 $C/gpu_import_producers --test-threads 1 --nocapture 2>&1 | grep -vE "^running on|^$"
echo "== gpu_import"; timeout 30 $C/gpu_import --test-threads 1 2>&1 | grep -E "test result|FAILED|panicked"
echo "== gpu"; timeout 40 $C/gpu --test-threads 1 --skip cli_ 2>&1 | grep -E "test result|FAILED|panicked"
echo "== vulkan_producer cuda"; timeout 30 $C/vulkan_producer --backend cuda --frames 24 2>&1 | tail -1
