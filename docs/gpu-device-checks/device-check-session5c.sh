#!/usr/bin/env bash
# Session 5: ADM's row sums meet by lane shuffles (no shared-memory
# reduction, no block barriers after the masks), launch bounds of 3 blocks
# per SM: gpu_adm and gpu_models with it, then the kernel time of adm and
# vmaf_v0.6.1 device-fed for launch bounds 3/3, 3/4, 4/4 (FINE_BLOCKS /
# COARSE_BLOCKS; the experimental gpu_bench reads each variant's adm.cu
# from $VMAFX_EXP_KERNEL_DIR, a local patch, not committed).
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s5c/bin.tar.xz -C /tmp; C=/tmp/s5c
for t in gpu_adm gpu_models; do
  timeout 200 $C/$t --test-threads 4 > $OUT/$t.txt 2>&1; echo "$t rc=$? $(grep -E '^test result' $OUT/$t.txt)"
  grep -E "FAILED|panicked" $OUT/$t.txt | head -5
done
for v in sh33 sh34 sh44; do
  export VMAFX_EXP_KERNEL_DIR=$C/var/$v
  echo "=== $v"
  timeout 60 $C/gpu_bench_exp --models "" --frames 300 --sizes 1080,2160 --depths 8,10 --extractors adm 2>/dev/null | grep -E "^\| [0-9]"
  timeout 60 $C/gpu_bench_exp --frames 1000 --cpu-frames 1 --threads 4 --sizes 1080,2160 --depths 8 --models vmaf_v0.6.1 2>/dev/null | grep -E "device planar|kernels only"
done 2>&1 | tee $OUT/s5c.txt
