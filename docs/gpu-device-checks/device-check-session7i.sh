#!/usr/bin/env bash
# Session 7, after review: spread instances complete in turn order (no
# frame indices kept), one next_set in the planes, gpu_bench's device rows
# from one table. The suites that exercise those, and the targets' rows.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s7i/bin.tar.xz -C /tmp; C=/tmp/s7i
export VMAFX_BIN=$C/vmafx
for t in gpu gpu_vif gpu_models gpu_import gpu_float_adm; do
  timeout 200 $C/$t --test-threads 4 > /tmp/$t.txt 2>&1; echo "$t rc=$? $(grep -E '^test result' /tmp/$t.txt)"
  grep -E "FAILED|panicked" /tmp/$t.txt | head -5
done 2>&1 | tee $OUT/tests.txt
for i in 1 2; do
  timeout 60 $C/gpu_bench --frames 2000 --sizes 1080,2160 --depths 8 --feeds planar,semi,copied 2>/dev/null | grep "device"
done 2>&1 | tee $OUT/bench.txt
