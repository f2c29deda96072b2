#!/usr/bin/env bash
# Fifth device pass: the producer's own CUDA context (cuCtxCreate) lent to
# vmafx, plus the whole GPU test binary again.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=$OUT/kcache VMAFX_BIN=$PWD/.gpu-carry/vmafx
C=.gpu-carry
nvidia-smi -L
$C/gpu --nocapture --test-threads 1 2>&1 | grep -vE "subsample [0-9]+: [0-9]+ frames bit-identical$" | grep -E "^test |producer|result|panicked|skipped"
