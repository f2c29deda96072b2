#!/usr/bin/env bash
# Device run for the GPU ciede (branch wip-gpu-ciede): every golden pair
# (default and fix_422_chroma) within 1e-5 of the CPU, worst relative
# difference per output printed; subsample 3; three runs bit-identical;
# 12- and 16-bit input; synthetic odd-size 4:2:0/4:2:2/4:4:4 pictures.
# Expected (CPU emulation of the kernel with libm results moved by up to
# CUDA's documented worst ulps): worst relative differences up to about
# 1e-10 (golden pairs 8e-11, synthetic pictures 8e-11); anything near
# 1e-5 means a kernel bug, not maths-library noise.
# Build here: cargo test --test gpu_ciede --no-run, strip the binary into
# .gpu-carry/ciede/gpu_ciede; run with carry [".gpu-carry/ciede"].
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 240 .gpu-carry/ciede/gpu_ciede --nocapture --test-threads 1 > ${OUT:-/tmp}/gpu_ciede.txt 2>&1; echo "gpu_ciede rc=$?"
grep -hE "^test |test result|panicked|within|identical|worst|^  |skipped|running on" ${OUT:-/tmp}/gpu_ciede.txt | cut -c1-200 | tail -n 80
