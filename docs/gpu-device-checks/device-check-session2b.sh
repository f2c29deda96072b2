#!/usr/bin/env bash
# Session 2, second pass: Vulkan frames with device-waited timeline
# semaphores (imports before waits), the producer examples, float extractors
# after the merges. Binaries carried as .gpu-carry/main/main.tar.xz.
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
tar xJf .gpu-carry/main/main.tar.xz -C /tmp; C=/tmp/main; export VMAFX_BIN=$C/vmafx
echo "== gpu_import_producers"; timeout 60 $C/gpu_import_producers --test-threads 1 --nocapture 2>&1 | grep -vE "^running on|^$"
echo "== decoder_producer nv12"; timeout 30 $C/decoder_producer --format nv12 2>&1 | tail -2
echo "== decoder_producer p010 --sync-file"; timeout 30 $C/decoder_producer --format p010 --sync-file 2>&1 | tail -2
echo "== gl_producer"; timeout 60 $C/gl_producer 2>&1 | tail -4
echo "== vulkan_producer cuda"; timeout 60 $C/vulkan_producer --backend cuda --frames 24 2>&1 | tail -1
echo "== gpu_float"; timeout 60 $C/gpu_float --test-threads 1 2>&1 | grep -E "test result|FAILED|panicked"
echo "== gpu"; timeout 60 $C/gpu --test-threads 1 2>&1 | grep -E "test result|FAILED|panicked"
