#!/usr/bin/env bash
# Session 6, closing run: four frames in flight per extractor instead of
# two (var/gpu_bench_if4, IN_FLIGHT = 4 in src/context/gpu.rs) against
# main, alternating; then main's vmaf_v0.6.1 table (1080p/2160p, 8/10-bit,
# host-fed and device-fed) and the three models at 1080p 8-bit.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s6d/bin.tar.xz -C /tmp; C=/tmp/s6d
for v in main if4 main if4; do
  b=$C/gpu_bench; [ $v = if4 ] && b=$C/var/gpu_bench_if4
  echo "=== $v"
  timeout 60 $b --frames 1000 --cpu-frames 1 --threads 4 --sizes 1080,2160 --depths 8 --models vmaf_v0.6.1 2>/dev/null | grep -E "device planar|host-fed reused"
done 2>&1 | tee $OUT/ab.txt
echo "=== table"
timeout 150 $C/gpu_bench --frames 1000 --cpu-frames 2 --sizes 1080,2160 --depths 8,10 --models vmaf_v0.6.1 2>&1 | tee $OUT/table.txt | grep -E "^\| [0-9]|host:"
echo "=== models"
timeout 120 $C/gpu_bench --frames 500 --cpu-frames 2 --sizes 1080 --depths 8 --models vmaf_float_v0.6.1,vmaf_v1.0.16_3d0h 2>&1 | tee $OUT/models.txt | grep -E "^\| [0-9]"
