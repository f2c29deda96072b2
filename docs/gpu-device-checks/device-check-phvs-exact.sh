#!/usr/bin/env bash
# Device run for the exact GPU psnr_hvs (branch wip-phvs-exact): the plane
# totals are the CPU's running float sum bit for bit (kernels/psnr_hvs.cu,
# ADR 0011), so every test compares bits.
#
# Build here (no GPU needed), from the repository root:
#   export CARGO_TARGET_DIR=$PWD/target
#   cargo test --test gpu_psnr_hvs --no-run 2>&1 | grep -o 'target/[^ )]*gpu_psnr_hvs-[0-9a-f]*'
#   mkdir -p .gpu-carry/phvs-exact
#   cp <that binary> .gpu-carry/phvs-exact/gpu_psnr_hvs && strip .gpu-carry/phvs-exact/gpu_psnr_hvs
#   cp docs/gpu-device-checks/device-check-phvs-exact.sh .gpu-carry/phvs-exact/run.sh
# Run (about a minute; kernels compile with NVRTC on first use):
#   run(carry=[".gpu-carry/phvs-exact"], command="bash .gpu-carry/phvs-exact/run.sh", timeout_s=300)
#
# Expected: 5 tests pass, none skipped ("running on NVIDIA H200 ...");
#   psnr_hvs_bit_identical_on_every_golden_pair: one "... frames
#     bit-identical" line per golden pair (8 pairs);
#   psnr_hvs_with_subsampling: 2 lines "subsample 3, N frames bit-identical";
#   psnr_hvs_bit_identical_at_1080p_and_2160p: "1920x1080 8-bit: 3 frames
#     bit-identical", "3840x2160 8-bit: 2 frames ...", "3840x2160 10-bit: 1
#     frames ...";
#   psnr_hvs_is_deterministic: 2 lines "three GPU runs bit-identical";
#   psnr_hvs_kernel_timing: ms/frame at 1080p 8-bit, 2160p 8-bit and 10-bit.
#     Compare with the previous double-sum version (same test on branch s3,
#     .gpu-carry/phvs): the exact sum adds a term buffer round trip (65 MB
#     written and read at 2160p), two grid-wide map kernels and a
#     one-block-per-plane walker (launches per frame: 3 term kernels,
#     psnr_hvs_predict, psnr_hvs_maps, psnr_hvs_walk); expected extra cost
#     roughly 0.03-0.05 ms at 1080p and 0.06-0.10 ms at 2160p (the walker
#     about 10 us at 1080p and 15-20 us at 2160p of that). Much more would
#     point at the walker (serial): report the numbers.
# A failure prints "CPU <value> GPU <value>" for the first differing
# feature: report the pair, frame and plane.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 280 .gpu-carry/phvs-exact/gpu_psnr_hvs --nocapture --test-threads 1 > $OUT/gpu_psnr_hvs.txt 2>&1
echo "gpu_psnr_hvs rc=$?"
grep -hE "^test |test result|panicked|skipped|running on|ms/frame|identical|CPU |differ|mismatch" $OUT/gpu_psnr_hvs.txt | cut -c1-220 | tail -n 60
