#!/usr/bin/env bash
# Device run for the GPU psnr_hvs (branch wip-gpu-phvs): every golden pair
# within a relative 1e-5 of the CPU (worst relative difference per output
# printed), subsample 3, three runs bit-identical, kernel timing at 1080p
# and 2160p. Binary: `cargo test --test gpu_psnr_hvs --no-run`, stripped
# into .gpu-carry/phvs/gpu_psnr_hvs. Under a minute.
# Run: run(carry=[".gpu-carry/phvs"], command="bash .gpu-carry/phvs/run.sh", timeout_s=120)
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 100 .gpu-carry/phvs/gpu_psnr_hvs --nocapture --test-threads 1 > $OUT/gpu_psnr_hvs.txt 2>&1; echo "gpu_psnr_hvs rc=$?"
grep -hE "^test |test result|panicked|skipped|ms/frame|within|bit-identical|worst|^  |differ|mismatch" $OUT/gpu_psnr_hvs.txt | cut -c1-200 | tail -n 80
