#!/usr/bin/env bash
# Session 3, second pass: the engine with a lane (stream) per extractor,
# two plane sets in turn, and the fused motion kernel. Every GPU test
# binary (they all score through a Context), the producers' examples and
# the CLI test. Then device-check-session3c.sh for the benchmark.
# Binaries: cargo test --no-run --test gpu --test gpu_import ... (below);
# cargo build --release --examples --bin vmafx; stripped into
# .gpu-carry/s3/bin.tar.xz (directory s3b). Carry [".gpu-carry/s3", ".gl"].
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s3/bin.tar.xz -C /tmp; C=/tmp/s3b
export VMAFX_BIN=$C/vmafx
for t in gpu gpu_import gpu_import_layer gpu_import_producers gpu_vif gpu_adm gpu_float gpu_float_adm gpu_float_ssim gpu_ciede gpu_psnr_hvs; do
  timeout 150 $C/$t --test-threads 1 --nocapture > $OUT/$t.txt 2>&1; echo "$t rc=$? $(grep -E '^test result' $OUT/$t.txt)"
  grep -E "FAILED|panicked|ms/frame" $OUT/$t.txt | head -8
done
echo "== decoder_producer nv12"; timeout 30 $C/decoder_producer --format nv12 2>&1 | tail -2
echo "== decoder_producer p010 --sync-file"; timeout 30 $C/decoder_producer --format p010 --sync-file 2>&1 | tail -2
echo "== gl_producer"; timeout 60 $C/gl_producer 2>&1 | tail -2
echo "== vulkan_producer cuda"; timeout 60 $C/vulkan_producer --backend cuda --frames 24 2>&1 | tail -1
