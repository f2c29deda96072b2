#!/usr/bin/env bash
# Session 6: VIF scale 0 (8-bit) with its horizontal pass on the int8
# tensor cores too (the vertical moments as byte planes, m16n8k32 u8
# products against the weights' bytes). gpu_vif and gpu_models with
# __launch_bounds__(256, 4); vif's kernel time and the model's rate against
# main (var/gpu_bench_prev) and against launch bounds (256, 3)
# (var/gpu_bench_lb3).
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s6f/bin.tar.xz -C /tmp; C=/tmp/s6f
for t in gpu_vif gpu_models; do
  timeout 100 $C/$t --test-threads 4 > $OUT/$t.txt 2>&1; echo "$t rc=$? $(grep -E '^test result' $OUT/$t.txt)"
  grep -E "FAILED|panicked" $OUT/$t.txt | head -5
done
for v in prev lb4 lb3 lb4 prev; do
  b=$C/gpu_bench; [ $v = prev ] && b=$C/var/gpu_bench_prev; [ $v = lb3 ] && b=$C/var/gpu_bench_lb3
  echo "=== $v"
  timeout 40 $b --models "" --frames 200 --sizes 1080,2160 --depths 8 --extractors vif 2>/dev/null | grep -E "^\| [0-9]" | grep -E "scale0|\|  \|"
  timeout 40 $b --frames 1000 --cpu-frames 1 --threads 4 --sizes 1080,2160 --depths 8 --models vmaf_v0.6.1 2>/dev/null | grep -E "^\| .*device planar"
done 2>&1 | tee $OUT/ab.txt
