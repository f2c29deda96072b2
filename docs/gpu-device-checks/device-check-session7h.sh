#!/usr/bin/env bash
# Session 7: the 2160p margin. vmaf_v0.6.1 8-bit device planar at 2160p
# (2,000 frames), main against: vif alone spread at every size
# (var/gpu_bench_spread_vif), adm alone (spread_adm), and motion with
# __launch_bounds__(256, 5) (motion_lb5); alternating. Then motion's
# kernel time, main against motion_lb5.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s7h/bin.tar.xz -C /tmp; C=/tmp/s7h
for v in main spread_vif spread_adm motion_lb5 main spread_vif spread_adm motion_lb5; do
  b=$C/gpu_bench; [ $v != main ] && b=$C/var/gpu_bench_$v
  echo "=== $v $(timeout 60 $b --frames 2000 --sizes 1080,2160 --depths 8 --feeds planar 2>/dev/null | grep 'device planar' | awk -F'|' '{printf "%s %s;", $2, $7}')"
done 2>&1 | tee $OUT/ab.txt
for v in main motion_lb5 main motion_lb5; do
  b=$C/gpu_bench; [ $v != main ] && b=$C/var/gpu_bench_$v
  echo "=== $v"
  timeout 60 $b --models "" --frames 200 --sizes 1080,2160 --depths 8,10 --extractors motion 2>/dev/null | grep -E "^\| [0-9].*motion_sad"
done 2>&1 | tee -a $OUT/ab.txt
