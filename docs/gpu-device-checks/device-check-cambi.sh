#!/usr/bin/env bash
# Device run for the GPU cambi (branch wip-gpu-cambi): tests/gpu_cambi.rs.
# * every golden pair within a relative 1e-5 of the CPU, worst relative
#   difference per output printed, for 8 option sets: default, full_ref,
#   full_ref with enc 288x162 / src 400x240 (device resize down and up),
#   window/topk/tvi/max_log_contrast, the v1.0.16 model options, eotf=pq
#   with enc_bitdepth=8 (band of 1028 values: ~140 KiB of shared memory per
#   c-values block), max_log_contrast=5 with k = 1, max_log_contrast=0;
# * scales shorter than half the window (libvmaf's reads beyond the scale:
#   the extractor's "exact" canonical-plane mode), subsample 3, three runs
#   bit-identical, 12- and 16-bit input, synthetic odd sizes, the
#   high-resolution speed-up at 1080p, the out-of-range refusal;
# * kernel timing (ms/frame device) at 1080p and 2160p.
# Expected (CPU emulation of the kernels through the real host code, every
# test above except the timing): every value bit-identical to the CPU
# (worst relative difference 0 everywhere), runs bit-identical, refusal
# message "luma sample 1100 exceeds the 10-bit maximum 1023". A nonzero
# difference far below 1e-5 would be the top-k sum's order (possible only
# where the CPU takes its quick-select path); anything near 1e-5, a launch
# error (e.g. shared memory) or a mismatch is a bug.
# Build here:
#   cargo test --test gpu_cambi --no-run
#   mkdir -p .gpu-carry/cambi && cp target/debug/deps/gpu_cambi-<hash> .gpu-carry/cambi/gpu_cambi
#   strip .gpu-carry/cambi/gpu_cambi && cp docs/gpu-device-checks/device-check-cambi.sh .gpu-carry/cambi/run.sh
# Run: run(carry=[".gpu-carry/cambi"], command="bash .gpu-carry/cambi/run.sh", timeout_s=600)
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# Timing first (short), then everything else.
timeout 120 .gpu-carry/cambi/gpu_cambi --nocapture --test-threads 1 cambi_kernel_timing > $OUT/gpu_cambi_timing.txt 2>&1; echo "timing rc=$?"
timeout 420 .gpu-carry/cambi/gpu_cambi --nocapture --test-threads 1 --skip cambi_kernel_timing > $OUT/gpu_cambi.txt 2>&1; echo "gpu_cambi rc=$?"
grep -hE "^test |test result|panicked|skipped|ms/frame|within|bit-identical|refused|worst|^  |differ|mismatch|error" $OUT/gpu_cambi_timing.txt $OUT/gpu_cambi.txt | cut -c1-220 | tail -n 120
