#!/usr/bin/env bash
# Session 4: VIF's 8-bit scale-0 vertical pass on the tensor cores
# (mma.m16n8k32 u8): gpu_vif, gpu_models (every model, every pair),
# gpu (upload race, rising sizes); vif kernel time beside the previous
# kernels (gpu_bench_v2 = commit ea94438); the model's device-fed rows; ncu
# of the new scale 0.
# Binaries: cargo test --no-run --test gpu_vif --test gpu_models --test gpu;
# vmafx, gpu_bench; stripped into .gpu-carry/s4d/bin.tar.xz.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s4d/bin.tar.xz -C /tmp; C=/tmp/s4d
export VMAFX_BIN=$C/vmafx
timeout 100 $C/gpu_vif --nocapture --test-threads 1 > $OUT/gpu_vif.txt 2>&1; echo "gpu_vif rc=$? $(grep -E '^test result' $OUT/gpu_vif.txt)"
grep -E "FAILED|panicked|left|right" $OUT/gpu_vif.txt | head -6
timeout 150 $C/gpu_models --nocapture --test-threads 1 > $OUT/gpu_models.txt 2>&1; echo "gpu_models rc=$? $(grep -E '^test result' $OUT/gpu_models.txt)"
grep -E "FAILED|panicked" $OUT/gpu_models.txt | head -3
timeout 100 $C/gpu --test-threads 1 --nocapture > $OUT/gpu.txt 2>&1; echo "gpu rc=$? $(grep -E '^test result' $OUT/gpu.txt)"
grep -E "FAILED|panicked" $OUT/gpu.txt | head -3
for v in gpu_bench_v2 gpu_bench; do
  echo "== $v"; timeout 60 $C/$v --models "" --frames 200 --sizes 1080,2160 --depths 8,10 --extractors vif 2>/dev/null | grep -E "^\| [0-9]"
done
timeout 100 $C/gpu_bench --frames 1000 --cpu-frames 1 --threads 4 --sizes 1080,2160 --depths 8 --models vmaf_v0.6.1 2>/dev/null | grep -E "device|kernels only|reused"
NCU=/usr/local/cuda/bin/ncu
timeout 120 $NCU --kernel-name regex:vif_scale0_u8 --launch-skip 3 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --print-details all \
  $C/gpu_bench --models "" --frames 6 --sizes 2160 --depths 8 --extractors vif > $OUT/ncu_mma.txt 2>&1; echo "ncu rc=$?"
grep -E "Duration|Issue Slots Busy|Fmaheavy|Pipe Alu|Fp64 Cycles|Tensor|Stall (Not|Wait|Barrier|Math|Long|Short|Dispatch)|Achieved Occupancy" $OUT/ncu_mma.txt | head -30
