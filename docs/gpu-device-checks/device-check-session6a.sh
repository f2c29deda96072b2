#!/usr/bin/env bash
# Session 6, first run: what session 5 wrote after its last device run.
# gpu.rs (the float extractors under the upload race and rising sizes),
# gpu_vif, gpu_adm, gpu_models with main (6c3d3de); the per-kernel table
# (Gpu::with_kernel_times) of vif, adm, motion; vmaf_v0.6.1 at 360p (host
# staging and done-event changes); then "ADM small bands in one pass"
# (1f4a68c reapplied): its gpu_adm and gpu_models, and adm/model times
# against main, alternating.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s6a/bin.tar.xz -C /tmp; C=/tmp/s6a
export VMAFX_BIN=$C/vmafx
for t in gpu gpu_vif gpu_adm gpu_models var/gpu_adm_small var/gpu_models_small; do
  o=$OUT/$(basename $t).txt
  timeout 200 $C/$t --test-threads 4 > $o 2>&1; echo "$t rc=$? $(grep -E '^test result' $o)"
  grep -E "FAILED|panicked" $o | head -5
done
echo "=== per kernel (main)"
timeout 90 $C/gpu_bench --models "" --frames 300 --sizes 1080,2160 --depths 8 --extractors vif,adm,motion > $OUT/kernels.txt 2>&1
grep -E "^\| " $OUT/kernels.txt
echo "=== 360p"
timeout 60 $C/gpu_bench --frames 3000 --cpu-frames 1 --threads 4 --sizes 360 --depths 8 --models vmaf_v0.6.1 2>&1 | tee $OUT/360.txt | grep -E "^\| [0-9]|host"
for v in main small main small; do
  b=$C/gpu_bench; [ $v = small ] && b=$C/var/gpu_bench_small
  echo "=== $v"
  timeout 60 $b --models "" --frames 300 --sizes 1080,2160 --depths 8,10 --extractors adm 2>/dev/null | grep -E "^\| [0-9]"
  timeout 60 $b --frames 1000 --cpu-frames 1 --threads 4 --sizes 1080,2160 --depths 8 --models vmaf_v0.6.1 2>/dev/null | grep -E "device planar|kernels only"
done 2>&1 | tee $OUT/ab.txt
