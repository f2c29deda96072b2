#!/usr/bin/env bash
# Session 7: a frame bound in place no longer waits for the readers of the
# plane set two frames back (only a layout pass or copy into the set
# does). The device-frame and model suites; then the model's rate with
# that (gpu_bench), against the eager wait (var/gpu_bench_eager, two
# instances) and with three plane sets (var/gpu_bench_sets3), alternating.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s7d/bin.tar.xz -C /tmp; C=/tmp/s7d
export VMAFX_BIN=$C/vmafx
for t in gpu gpu_import gpu_import_layer gpu_import_producers gpu_models gpu_vif; do
  timeout 200 $C/$t --test-threads 4 > $OUT/$t.txt 2>&1; echo "$t rc=$? $(grep -E '^test result' $OUT/$t.txt)"
  grep -E "FAILED|panicked|skip" $OUT/$t.txt | head -5
done
for v in eager lazy sets3 eager lazy sets3; do
  b=$C/gpu_bench; [ $v != lazy ] && b=$C/var/gpu_bench_$v
  echo "=== $v"
  timeout 80 $b --frames 2000 --sizes 1080,2160 --depths 8 --feeds planar,semi 2>/dev/null | grep "device"
done 2>&1 | tee $OUT/ab.txt
