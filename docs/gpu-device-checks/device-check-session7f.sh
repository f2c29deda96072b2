#!/usr/bin/env bash
# Session 7: the GPU benchmark table on main (spread instances, three
# plane sets): every feed at 1080p and 2160p, 8 and 10 bit, vmaf_v0.6.1;
# the float and v1.0.16_3d0h models; 720p and 1440p; then the targets'
# rows (8-bit device planar, 2,000 frames) four more times.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s7f/bin.tar.xz -C /tmp; C=/tmp/s7f
timeout 300 $C/gpu_bench --frames 1000 --cpu-frames 2 --sizes 1080,2160 --depths 8,10 --models vmaf_v0.6.1 > $OUT/table.txt 2>/dev/null
grep -E "^\|" $OUT/table.txt
timeout 120 $C/gpu_bench --frames 500 --sizes 1080,2160 --depths 8 --feeds planar,reused,kernels --models vmaf_float_v0.6.1,vmaf_v1.0.16_3d0h 2>/dev/null | grep -E "^\| [0-9]" | tee $OUT/models.txt
timeout 60 $C/gpu_bench --frames 2000 --sizes 720,1440 --depths 8 --feeds planar,kernels 2>/dev/null | grep -E "^\| [0-9]" | tee $OUT/sizes.txt
for i in 1 2 3 4; do
  timeout 60 $C/gpu_bench --frames 2000 --sizes 1080,2160 --depths 8 --feeds planar 2>/dev/null | grep "device planar"
done 2>&1 | tee $OUT/targets.txt
