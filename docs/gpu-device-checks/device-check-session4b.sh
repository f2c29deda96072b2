#!/usr/bin/env bash
# Session 4, VIF variants: v0 = main (64-bit integer horizontal moments),
# v1 = horizontal second moments as exact double FMAs + 32-bit per-thread
# statistic sums, v2 = v1 + the wide (16-bit input) vertical moments as
# double FMAs, v3 = v2 + horizontal means as double FMAs. Kernel time of
# vif alone per size/depth, the model's device-fed rows for v0/v2/v3, and
# ncu pipes/stalls of v2's scale 0.
# Binaries: gpu_bench built four times (kernels/vif.cu swapped), stripped
# into .gpu-carry/s4b/bin.tar.xz.
set -u
export VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s4b/bin.tar.xz -C /tmp; C=/tmp/s4b
for v in 0 1 2 3; do
  echo "== v$v"; timeout 60 $C/gpu_bench_v$v --models "" --frames 200 --sizes 1080,2160 --depths 8,10 --extractors vif,adm,motion 2>/dev/null | grep -E "^\| [0-9]"
done
for v in 0 2 3; do
  echo "== v$v model"; timeout 100 $C/gpu_bench_v$v --frames 1000 --cpu-frames 1 --threads 4 --sizes 1080,2160 --depths 8 --models vmaf_v0.6.1 2>/dev/null | grep -E "device planar|kernels only|reused"
done
NCU=/usr/local/cuda/bin/ncu
timeout 120 $NCU --kernel-name regex:vif_scale0_u8 --launch-skip 3 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --print-details all \
  $C/gpu_bench_v2 --models "" --frames 6 --sizes 2160 --depths 8 --extractors vif > $OUT/ncu_v2.txt 2>&1; echo "ncu rc=$?"
grep -E "Duration|Issue Slots Busy|Fmaheavy|Pipe Alu|Fp64 Cycles|Stall (Not|Wait|Barrier|Math|Long|Short|Dispatch)|Achieved Occupancy|Registers" $OUT/ncu_v2.txt | head -30
