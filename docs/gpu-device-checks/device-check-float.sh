#!/usr/bin/env bash
# Device run for the float GPU extractors (branch h-float).
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
.gpu-carry/float/gpu_float --nocapture --test-threads 1 > $OUT/gpu_float.txt 2>&1; echo "gpu_float rc=$?"
.gpu-carry/float/gpu gpu_and_cpu_extractors_mix --nocapture --test-threads 1 > $OUT/gpu_mix.txt 2>&1; echo "gpu mix rc=$?"
grep -hE "^test |test result|panicked|ms/frame|within|bit-identical|identical|worst|^  " $OUT/gpu_float.txt $OUT/gpu_mix.txt | cut -c1-160 | tail -n 150
