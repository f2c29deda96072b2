#!/usr/bin/env bash
# Session 7: frames-independent extractors (vif, adm, float_vif, float_adm,
# float_ms_ssim, psnr_hvs) spread over two instances taking frames in turn.
# The GPU parity suites with two instances forced at every size; then the
# model rate by size (720p to 2160p) with one and two instances,
# alternating, to set the largest size that spreads; the float model too.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s7c/bin.tar.xz -C /tmp; C=/tmp/s7c
export VMAFX_BIN=$C/vmafx
for t in gpu gpu_vif gpu_adm gpu_models gpu_float gpu_float_adm gpu_psnr_hvs gpu_float_ssim; do
  VMAFX_EXP_INSTANCES=2 timeout 200 $C/$t --test-threads 4 > $OUT/$t.txt 2>&1; echo "$t rc=$? $(grep -E '^test result' $OUT/$t.txt)"
  grep -E "FAILED|panicked" $OUT/$t.txt | head -5
done
for n in 1 2 1 2; do
  echo "=== instances $n"
  VMAFX_EXP_INSTANCES=$n timeout 80 $C/gpu_bench --frames 2000 --sizes 720,1080,1440,2160 --depths 8 --feeds planar 2>/dev/null | grep "device planar"
done 2>&1 | tee $OUT/ab.txt
for n in 1 2; do
  echo "=== instances $n"
  VMAFX_EXP_INSTANCES=$n timeout 80 $C/gpu_bench --frames 1000 --sizes 1080,2160 --depths 8 --feeds planar,reused --models vmaf_float_v0.6.1 2>/dev/null | grep -E "device planar|reused"
  VMAFX_EXP_INSTANCES=$n timeout 80 $C/gpu_bench --frames 1000 --sizes 1080 --depths 8,10 --feeds reused,host 2>/dev/null | grep -E "host-fed"
done 2>&1 | tee -a $OUT/ab.txt
