#!/usr/bin/env bash
# Session 5: ADM's kernels with launch bounds that allow 2-4 blocks per SM
# (fewer registers, some spills), against main's: kernel time of adm alone,
# per-scale time under ncu, and vmaf_v0.6.1 device-fed. One experimental
# gpu_bench reads each variant's adm.cu from $VMAFX_EXP_KERNEL_DIR (a local
# patch, not committed); variants are kernels/adm.cu with FINE_BLOCKS and
# COARSE_BLOCKS set (lbFC).
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s5b/bin.tar.xz -C /tmp; C=/tmp/s5b
NCU=/usr/local/cuda/bin/ncu
for v in main lb23 lb33 lb34 lb44; do
  if [ $v = main ]; then unset VMAFX_EXP_KERNEL_DIR; else export VMAFX_EXP_KERNEL_DIR=$C/var/$v; fi
  echo "=== $v"
  timeout 60 $C/gpu_bench_exp --models "" --frames 300 --sizes 1080,2160 --depths 8,10 --extractors adm 2>/dev/null | grep -E "^\| [0-9]"
  for s in 2160 1080; do
    timeout 60 $NCU --kernel-name regex:adm_scale --launch-skip 8 --launch-count 4 --metrics gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active \
      $C/gpu_bench_exp --models "" --frames 6 --sizes $s --depths 8 --extractors adm 2>/dev/null | grep -E "^  adm_scale|duration|warps_active" | paste - - - | awk -v s=$s '{print s, $1, $(NF-4), $NF}'
  done
  timeout 60 $C/gpu_bench_exp --frames 1000 --cpu-frames 1 --threads 4 --sizes 1080,2160 --depths 8 --models vmaf_v0.6.1 2>/dev/null | grep -E "device planar|kernels only"
done 2>&1 | tee $OUT/s5b.txt
