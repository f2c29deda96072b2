#!/usr/bin/env bash
# Session 6: integer block sums with the block size known at compile time
# (no run-time loop or division: vif, motion, psnr) and motion by lanes of
# four columns with shuffles (no shared memory, no barriers per row).
# gpu, gpu_vif, gpu_models; kernel times against the previous build
# (var/gpu_bench_prev: ADM small bands only), alternating; then ncu's
# instruction counts of vif_scale0_u8 and motion_sad_u8 at 2160p.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s6b/bin.tar.xz -C /tmp; C=/tmp/s6b
export VMAFX_BIN=$C/vmafx
for t in gpu gpu_vif gpu_models; do
  timeout 200 $C/$t --test-threads 4 > $OUT/$t.txt 2>&1; echo "$t rc=$? $(grep -E '^test result' $OUT/$t.txt)"
  grep -E "FAILED|panicked" $OUT/$t.txt | head -5
done
for v in prev new prev new; do
  b=$C/gpu_bench; [ $v = prev ] && b=$C/var/gpu_bench_prev
  echo "=== $v"
  timeout 60 $b --models "" --frames 300 --sizes 1080,2160 --depths 8,10 --extractors vif,motion,psnr 2>/dev/null | grep -E "^\| [0-9]" | grep -v "vif_scale[123]"
  timeout 60 $b --frames 1000 --cpu-frames 1 --threads 4 --sizes 1080,2160 --depths 8 --models vmaf_v0.6.1 2>/dev/null | grep -E "device planar|kernels only"
done 2>&1 | tee $OUT/ab.txt
NCU=/usr/local/cuda/bin/ncu
for k in vif_scale0_u8 motion_sad_u8; do
  timeout 60 $NCU --section SpeedOfLight --section InstructionStats --section WarpStateStats --section Occupancy --section LaunchStats --kernel-name $k --launch-skip 4 --launch-count 1 \
    $C/gpu_bench --models "" --frames 8 --sizes 2160 --depths 8 --extractors vif,motion > $OUT/ncu_$k.txt 2>&1
  grep -E "Duration|Executed Instructions  |Registers Per|Achieved Occ|Issue Slots|Warp Cycles Per Issued" $OUT/ncu_$k.txt | head -8
done
