#!/usr/bin/env bash
# Session 3, last pass on the merged main: psnr_hvs with the CPU's exact
# float running sum (branch wip-phvs-exact), the engine suites again (lanes,
# device fence timeouts), imports, producers, the integer extractors, and
# the bench's model rows for psnr_hvs-free models plus v1.0.16.
# Binaries: cargo test --no-run --test gpu_psnr_hvs --test gpu --test
# gpu_import --test gpu_import_layer --test gpu_import_producers --test
# gpu_vif --test gpu_adm; cargo build --release --examples --bin vmafx;
# stripped into .gpu-carry/s3f/bin.tar.xz (s3f). Carry [".gpu-carry/s3f", ".gl"].
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s3f/bin.tar.xz -C /tmp; C=/tmp/s3f
export VMAFX_BIN=$C/vmafx
timeout 150 $C/gpu_psnr_hvs --nocapture --test-threads 1 > $OUT/gpu_psnr_hvs.txt 2>&1; echo "gpu_psnr_hvs rc=$?"
grep -hE "test result|panicked|ms/frame|identical|differ|mismatch" $OUT/gpu_psnr_hvs.txt | cut -c1-200 | tail -n 30
for t in gpu gpu_import gpu_import_layer gpu_import_producers gpu_vif gpu_adm; do
  timeout 100 $C/$t --test-threads 1 --nocapture > $OUT/$t.txt 2>&1; echo "$t rc=$? $(grep -E '^test result' $OUT/$t.txt)"
  grep -E "FAILED|panicked" $OUT/$t.txt | head -5
done
echo "== decoder_producer nv12"; timeout 30 $C/decoder_producer --format nv12 2>&1 | tail -1
