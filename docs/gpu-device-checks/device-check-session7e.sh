#!/usr/bin/env bash
# Session 7: every GPU suite on main with two instances of the
# frames-independent extractors (up to 1440p) and three plane sets; then,
# at 2160p, spreading at every size (var/gpu_bench_spread_all) against
# main's one instance there, for vmaf_v0.6.1 and vmaf_float_v0.6.1.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s7e/bin.tar.xz -C /tmp; C=/tmp/s7e
export VMAFX_BIN=$C/vmafx
for t in gpu gpu_adm gpu_cambi gpu_ciede gpu_float gpu_float_adm gpu_float_ssim gpu_import gpu_import_layer gpu_import_producers gpu_kernels gpu_models gpu_psnr_hvs gpu_speed gpu_vif; do
  timeout 200 $C/$t --test-threads 4 > /tmp/$t.txt 2>&1; echo "$t rc=$? $(grep -E '^test result' /tmp/$t.txt)"
  grep -E "FAILED|panicked" /tmp/$t.txt | head -5
done 2>&1 | tee $OUT/tests.txt
for v in main spread_all main spread_all; do
  b=$C/gpu_bench; [ $v != main ] && b=$C/var/gpu_bench_$v
  echo "=== $v"
  timeout 60 $b --frames 2000 --sizes 2160 --depths 8 --feeds planar --models vmaf_v0.6.1,vmaf_float_v0.6.1 2>/dev/null | grep "device"
done 2>&1 | tee $OUT/ab.txt
