#!/usr/bin/env bash
# Device run for float_adm on the GPU (branch h-fadm): every golden pair
# with default and model options, subsample 3, run-to-run bits, and the
# whole vmaf_float_v0.6.1 model against the CPU engine (within 1e-5).
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 240 .gpu-carry/fadm/gpu_float_adm --nocapture --test-threads 1 > $OUT/gpu_float_adm.txt 2>&1; echo "gpu_float_adm rc=$?"
grep -hE "^test |test result|panicked|running on|skipped|within|identical|worst|^  " $OUT/gpu_float_adm.txt | cut -c1-160 | tail -n 150
