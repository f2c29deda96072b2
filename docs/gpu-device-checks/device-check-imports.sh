#!/usr/bin/env bash
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
C=.gpu-carry/dev
echo "== nvidia-smi -L"; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader
echo "== loaders"; ldconfig -p | grep -E "libvulkan.so.1|libEGL.so.1"; ls $VK_DRIVER_FILES $__EGL_VENDOR_LIBRARY_FILENAMES
echo "== gpu_import_layer"; timeout 150 $C/gpu_import_layer --test-threads 1 --nocapture 2>&1; echo "rc=$?"
echo "== lib gpu (mock contract tests)"; timeout 60 $C/lib_tests gpu 2>&1 | tail -4
echo "== gpu (GPU-vs-CPU regression)"; timeout 60 $C/gpu --test-threads 1 --skip cli_ 2>&1 | tail -4
