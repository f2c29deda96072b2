#!/usr/bin/env bash
# Session 2, third pass: device-waited Vulkan semaphores (layout kernels
# loaded before the waits), host-memory frames and two-context release on
# the GPU, float_adm / float_ssim / float_ms_ssim, regression, and the
# benchmark with the three models. Binaries: .gpu-carry/main/main.tar.xz.
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
tar xJf .gpu-carry/main/main.tar.xz -C /tmp; C=/tmp/main; export VMAFX_BIN=$C/vmafx
echo "== gpu_import_producers (vulkan)"; timeout 45 $C/gpu_import_producers --test-threads 1 --nocapture vulkan 2>&1 | grep -vE "^running on|^$"
echo "== gpu_import"; timeout 60 $C/gpu_import --test-threads 1 --nocapture 2>&1 | grep -E "^test .*(ok|FAILED)$|test result|panicked|host memory|two GPU contexts"
for t in gpu_float_adm gpu_float_ssim; do
  echo "== $t"; timeout 90 $C/$t --test-threads 1 --nocapture 2>&1 | grep -vE "^running on|^$" | grep -vE "frames within|: [0-9]+ frames" | tail -30
done
echo "== gpu"; timeout 60 $C/gpu --test-threads 1 2>&1 | grep -E "test result|FAILED|panicked"
echo "== gpu_bench"; timeout 240 $C/gpu_bench --frames 500 --cpu-frames 16 --threads 16 --models vmaf_v0.6.1,vmaf_float_v0.6.1,vmaf_v1.0.16_3d0h 2>&1 | grep -v "fps$"
