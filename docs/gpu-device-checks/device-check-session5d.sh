#!/usr/bin/env bash
# Session 5, closing run: integer block sums by lane shuffles (two block
# barriers; VIF's four sums in one pass) and motion's loads a row ahead.
# gpu, gpu_vif, gpu_adm and gpu_models with these kernels; the kernel time
# of each extractor against the previous commit's kernels (32b036f: vif.cu,
# motion.cu, psnr.cu with their common.cuh inlined, read by the
# experimental gpu_bench from $VMAFX_EXP_KERNEL_DIR, a local patch); then
# the full vmaf_v0.6.1 table for docs/performance.md.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s5d/bin.tar.xz -C /tmp; C=/tmp/s5d
for t in gpu gpu_vif gpu_adm gpu_models; do
  timeout 150 $C/$t --test-threads 4 > $OUT/$t.txt 2>&1; echo "$t rc=$? $(grep -E '^test result' $OUT/$t.txt)"
  grep -E "FAILED|panicked" $OUT/$t.txt | head -5
done
for v in prev new prev new; do
  if [ $v = prev ]; then export VMAFX_EXP_KERNEL_DIR=$C/var/prev; else unset VMAFX_EXP_KERNEL_DIR; fi
  echo "=== $v"
  timeout 60 $C/gpu_bench_exp --models "" --frames 300 --sizes 1080,2160 --depths 8,10 --extractors vif,motion,psnr 2>/dev/null | grep -E "^\| [0-9]"
  timeout 60 $C/gpu_bench_exp --frames 1000 --cpu-frames 1 --threads 4 --sizes 1080,2160 --depths 8 --models vmaf_v0.6.1 2>/dev/null | grep -E "device planar|kernels only"
done 2>&1 | tee $OUT/ab.txt
unset VMAFX_EXP_KERNEL_DIR
echo "=== table"
timeout 150 $C/gpu_bench_exp --frames 1000 --cpu-frames 2 --sizes 1080,2160 --depths 8,10 --models vmaf_v0.6.1 2>&1 | tee $OUT/table.txt | grep -E "^\| [0-9]|host:"
