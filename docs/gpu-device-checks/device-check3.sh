#!/usr/bin/env bash
# Third device pass: the new on-device tests (upload race, successive
# contexts), the whole GPU test binary, and the GPU benchmark.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=$OUT/kcache VMAFX_BIN=$PWD/.gpu-carry/vmafx
C=.gpu-carry
echo "== nvidia-smi -L"; nvidia-smi -L
echo "== lscpu"; lscpu | grep -E "Model name|^CPU\(s\)"
echo "== gpu tests"; time $C/gpu --nocapture --test-threads 1 2>&1 | grep -vE "subsample [0-9]+: [0-9]+ frames bit-identical$" | tail -60
echo "== gpu_bench"; time timeout 420 $C/gpu_bench --frames 300 --host-frames 60 --threads 16 --sizes 1080,2160 2>&1
