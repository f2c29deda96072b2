#!/usr/bin/env bash
# Session 4: the committed VIF kernels (ea94438, double sums on the FP64
# pipe) on the real GPU: gpu_vif, gpu_models (every model, every golden
# pair), gpu (upload race, rising sizes); then vif kernel time of tile
# variants: v2 = committed (64x16 tiles), v4 = 128x8, v5 = 112x8 (256
# vertical items: one per thread), v6 = 64x16 with __launch_bounds__(256, 5).
# Binaries: cargo test --no-run --test gpu_vif --test gpu_models --test gpu;
# vmafx; gpu_bench built per variant; stripped into .gpu-carry/s4c/bin.tar.xz.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s4c/bin.tar.xz -C /tmp; C=/tmp/s4c
export VMAFX_BIN=$C/vmafx
timeout 100 $C/gpu_vif --nocapture --test-threads 1 > $OUT/gpu_vif.txt 2>&1; echo "gpu_vif rc=$? $(grep -E '^test result' $OUT/gpu_vif.txt)"
grep -E "FAILED|panicked" $OUT/gpu_vif.txt | head -3
timeout 150 $C/gpu_models --nocapture --test-threads 1 > $OUT/gpu_models.txt 2>&1; echo "gpu_models rc=$? $(grep -E '^test result' $OUT/gpu_models.txt)"
grep -E "FAILED|panicked" $OUT/gpu_models.txt | head -3
timeout 100 $C/gpu --test-threads 1 --nocapture > $OUT/gpu.txt 2>&1; echo "gpu rc=$? $(grep -E '^test result' $OUT/gpu.txt)"
grep -E "FAILED|panicked" $OUT/gpu.txt | head -3
for v in v2 v4 v5 v6; do
  echo "== $v"; timeout 60 $C/gpu_bench_$v --models "" --frames 300 --sizes 1080,2160 --depths 8,10 --extractors vif 2>/dev/null | grep -E "^\| [0-9]"
done
