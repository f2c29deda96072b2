#!/usr/bin/env bash
# Session 3, first pass: the GPU ciede and psnr_hvs (merged from their
# branches), the GPU suite (incl. borrowed pictures refilled every frame)
# and the bench's host-fed reused row.
# Binaries: cargo test --test gpu_ciede --test gpu_psnr_hvs --test gpu --no-run;
# cargo build --release --example gpu_bench; stripped into
# .gpu-carry/s3/bin.tar.xz (directory s3bin).
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s3/bin.tar.xz -C /tmp; C=/tmp/s3bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in gpu_ciede gpu_psnr_hvs; do
  timeout 200 $C/$t --nocapture --test-threads 1 > $OUT/$t.txt 2>&1; echo "$t rc=$?"
  grep -hE "^test |test result|panicked|within|identical|worst|skipped|ms/frame|differ|mismatch" $OUT/$t.txt | cut -c1-200 | tail -n 40
done
echo "== gpu"; timeout 120 $C/gpu --test-threads 1 --skip cli_ > $OUT/gpu.txt 2>&1; echo "gpu rc=$?"
grep -E "test result|FAILED|panicked|borrowed" $OUT/gpu.txt | head
echo "== bench"; timeout 200 $C/gpu_bench --frames 500 --cpu-frames 8 --threads 16 --depths 8,10 --models vmaf_v0.6.1 2>&1 | tee $OUT/bench.txt | grep -E "^\||error" 
