#!/usr/bin/env bash
# Session 6: VIF's horizontal pass on the FP64 tensor cores (m8n8k4 DMMA,
# every scale, sm_80+). gpu_vif and gpu_models (bit-identical to the CPU);
# vif's kernel times and the vmaf_v0.6.1 rate against the previous build
# (var/gpu_bench_prev: block sums and motion change), alternating; ncu's
# instruction count of vif_scale0_u8 at 2160p.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s6c/bin.tar.xz -C /tmp; C=/tmp/s6c
for t in gpu_vif gpu_models; do
  timeout 200 $C/$t --test-threads 4 > $OUT/$t.txt 2>&1; echo "$t rc=$? $(grep -E '^test result' $OUT/$t.txt)"
  grep -E "FAILED|panicked" $OUT/$t.txt | head -5
done
for v in prev new prev new; do
  b=$C/gpu_bench; [ $v = prev ] && b=$C/var/gpu_bench_prev
  echo "=== $v"
  timeout 60 $b --models "" --frames 300 --sizes 1080,2160 --depths 8,10 --extractors vif 2>/dev/null | grep -E "^\| [0-9]"
  timeout 60 $b --frames 1000 --cpu-frames 1 --threads 4 --sizes 1080,2160 --depths 8 --models vmaf_v0.6.1 2>/dev/null | grep -E "device planar|kernels only"
done 2>&1 | tee $OUT/ab.txt
timeout 60 /usr/local/cuda/bin/ncu --section SpeedOfLight --section InstructionStats --section WarpStateStats --section Occupancy --section ComputeWorkloadAnalysis --kernel-name vif_scale0_u8 --launch-skip 4 --launch-count 1 \
    $C/gpu_bench --models "" --frames 8 --sizes 2160 --depths 8 --extractors vif > $OUT/ncu_vif.txt 2>&1
grep -E "Duration|Executed Instructions  |Registers Per|Achieved Occ|Issue Slots|Warp Cycles Per Issued|^\s+(FP64|Tensor|ALU|FMA) " $OUT/ncu_vif.txt | head -14
