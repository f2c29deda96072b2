#!/usr/bin/env bash
# Session 7: the full GPU benchmark table on main for the three models
# (vmaf_v0.6.1, vmaf_float_v0.6.1, vmaf_v1.0.16_3d0h): 1080p and 2160p, 8
# and 10 bit, every feed, beside the CPU engine (16 threads) on the same
# host.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s7f/bin.tar.xz -C /tmp; C=/tmp/s7f
timeout 500 $C/gpu_bench --frames 500 --cpu-frames 4 --threads 16 --sizes 1080,2160 --depths 8,10 \
  --models vmaf_v0.6.1,vmaf_float_v0.6.1,vmaf_v1.0.16_3d0h > $OUT/table3.txt 2>/dev/null
echo "rc=$?"; grep -E "^\|" $OUT/table3.txt
