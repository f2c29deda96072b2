#!/usr/bin/env bash
# Session 2 device pass: the whole GPU suite after the VIF/ADM/import merges,
# the CLI on a golden pair with the full model, the producer examples and
# the benchmark. Binaries are built here and carried as .gpu-carry/main/main.tar.xz.
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
tar xJf .gpu-carry/main/main.tar.xz -C /tmp; C=/tmp/main
export VMAFX_BIN=$C/vmafx
nvidia-smi -L
for t in gpu_vif gpu_adm gpu gpu_import gpu_import_producers; do
  echo "== $t"; timeout 120 $C/$t --test-threads 1 --nocapture 2>&1 | grep -E "^test .*(ok|FAILED)$|test result|panicked|soak|Vulkan|GL textures|refused" | head -40
done
# 20 frames of tests/golden/a_576x324_420p8_pan (reference, x264_crf30), carried in the tarball
A="-r $C/ref.yuv -d $C/dis.yuv -w 576 -h 324 -p 420 -b 8 --json --precision max"
echo "== cli vmaf_v0.6.1 cpu vs cuda"; $C/vmafx $A --backend cpu -o /tmp/cpu.json; $C/vmafx $A --backend cuda -o /tmp/cuda.json
diff <(grep -v '"fps"' /tmp/cpu.json) <(grep -v '"fps"' /tmp/cuda.json) && echo "identical (fps line aside)"; grep -A3 pooled_metrics /tmp/cuda.json | head -8
echo "== decoder_producer nv12"; $C/decoder_producer --format nv12 2>&1 | tail -2
echo "== decoder_producer p010"; $C/decoder_producer --format p010 2>&1 | tail -1
echo "== vulkan_producer cuda"; timeout 60 $C/vulkan_producer --backend cuda --frames 24 2>&1 | tail -3
echo "== vulkan_producer cpu (NVIDIA Vulkan, host engine)"; timeout 60 $C/vulkan_producer --frames 6 2>&1 | tail -1
echo "== gpu_bench"; timeout 300 $C/gpu_bench --frames 500 --cpu-frames 16 --threads 16 2>&1 | grep -v "^[0-9]*x[0-9]* .*fps$"
