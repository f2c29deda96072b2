#!/usr/bin/env bash
# The GPU suites, the producer examples and the command line on the HIP
# backend, on an NVIDIA GPU: vmafx's HIP driver (src/gpu/hip) loads the
# HIP-over-CUDA test runtime (tests/hip_over_cuda) as libamdhip64.so and
# libhiprtc.so through ROCM_PATH. What this shows and what it cannot:
# docs/gpu-testing.md, "HIP over CUDA". VMAFX_REQUIRE_GPU=1: a test that
# would skip fails instead, but for the CUDA-specific ones (they record
# "CUDA-specific (...): not run under VMAFX_TEST_GPU_BACKEND=hip").
#
# Written for the H200 device machines (one NVIDIA H200, driver with NVRTC,
# no Rust toolchain; the command runs in the checkout's root, results go
# to $OUT). When it last ran, and what it printed, is recorded in
# docs/gpu-testing.md.
#
# Before: bash docs/gpu-device-checks/build-for-device.sh (here; it packs
# the runtime as bin/libhip_over_cuda.so), then the device tool with carry
# [".gpu-carry", ".gl"] and the command
#   bash docs/gpu-device-checks/hip.sh [SUITE ...]
# SUITE as in suites.sh (gpu, gpu_vif, ..., examples, cli, or "BINARY
# PREFIX"); none runs them all. The first call compiles every kernel
# module (NVRTC, cached in /tmp/vmafx-kc-hip while the machine stays
# warm): split the list over two calls if the per-call limit is near.
# Each suite's output goes to $OUT/hip-SUITE.txt, the summary to
# $OUT/hip-summary.txt.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/vmafx-out}
mkdir -p "$OUT"
C=/tmp/vmafx-bin-hip

. docs/gpu-device-checks/device-common.sh
[ -f "$C/libhip_over_cuda.so" ] || { echo "no libhip_over_cuda.so in .gpu-carry/bin.tar.xz: rebuild with build-for-device.sh"; exit 1; }

# The one library under both names ROCm's are loaded by.
ROCM=/tmp/vmafx-hip-over-cuda
rm -rf "$ROCM" && mkdir -p "$ROCM/lib"
cp "$C/libhip_over_cuda.so" "$ROCM/lib/libamdhip64.so"
cp "$C/libhip_over_cuda.so" "$ROCM/lib/libhiprtc.so"
export ROCM_PATH=$ROCM
unset HIP_PATH

export VMAFX_TEST_GPU_BACKEND=hip
export VMAFX_TEST_ROOT=$PWD VMAFX_BIN=$C/vmafx VMAFX_KERNEL_CACHE=/tmp/vmafx-kc-hip
export VMAFX_REQUIRE_GPU=1 VMAFX_SKIP_LOG=$OUT/hip-skips.log
rm -f "$OUT/hip-skips.log"

# As suites.sh, less capi (the C library's CUDA pictures) and gpu_kernels
# (NVRTC's own compile of every kernel: no HIP call in it). Under HIP
# cambi's c-values run in 32-column blocks within the 64 KiB of shared
# memory the runtime gives a block, as AMD's.
unset 'SUITE_TESTS[capi]' 'SUITE_TESTS[gpu_kernels]'
SUITES=(cli gpu gpu_adm gpu_ciede gpu_float gpu_float_adm gpu_float_ssim
        gpu_import gpu_import_layer gpu_import_producers gpu_models
        gpu_ms_ssim gpu_psnr_hvs gpu_speed gpu_ssim gpu_ssimulacra2 gpu_vif examples gpu_cambi)
[ $# -gt 0 ] && SUITES=("$@")

{
echo "== $(cat .gpu-carry/commit 2>/dev/null || echo 'commit unknown') on HIP over CUDA"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
} 2>&1 | tee -a "$OUT/hip-summary.txt"

failed=0
for t in "${SUITES[@]}"; do
    case $t in
    examples)
        # The producers' frames scored through HIP; expected: the CPU
        # engine's pooled scores of the sample pair, 95.065082 (10 frames)
        # and 84.619452 (vulkan_producer's 24 frames).
        {
        echo "== decoder_producer nv12 --backend hip"; timeout 120 $C/decoder_producer --format nv12 --backend hip 2>&1 | tail -2
        echo "== decoder_producer p010 --backend hip"; timeout 120 $C/decoder_producer --format p010 --backend hip 2>&1 | tail -2
        echo "== vulkan_producer --backend hip"; timeout 120 $C/vulkan_producer --backend hip --frames 24 2>&1 | tail -1
        } 2>&1 | tee "$OUT/hip-examples.txt"
        ;;
    cli)
        # vmafx on the sample pair, per model, CPU against HIP: the JSON
        # must be identical but for the fps line; stderr names the device.
        for m in vmaf_v0.6.1 vmaf_v1.0.16_3d0h; do
            A=(-r examples/data/ref_576x324.y4m -d examples/data/dist_576x324_x264_crf30.y4m
               --model version=$m --json --precision max)
            timeout 120 $C/vmafx "${A[@]}" -q --backend cpu -o "$OUT/hip-cli-$m-cpu.json"
            timeout 300 $C/vmafx "${A[@]}" --backend hip -o "$OUT/hip-cli-$m-hip.json" 2> "$OUT/hip-cli-$m-hip.err"
            grep -m1 "scoring on" "$OUT/hip-cli-$m-hip.err" || { echo "cli $m: --backend hip FAILED:"; tail -5 "$OUT/hip-cli-$m-hip.err"; }
            if diff <(grep -v '"fps"' "$OUT/hip-cli-$m-cpu.json") <(grep -v '"fps"' "$OUT/hip-cli-$m-hip.json") > /dev/null 2>&1; then
                echo "cli $m: cpu and hip JSON identical (fps aside)"
            else
                echo "cli $m: cpu and hip JSON DIFFER"; failed=1
            fi
        done 2>&1 | tee "$OUT/hip-cli.txt"
        ;;
    *)
        run_suite "$t" hip- 300 || failed=1
        ;;
    esac
done 2>&1 | tee -a "$OUT/hip-summary.txt"

grep -q "rc=[1-9]\|DIFFER\|FAILED\|not in the carried\|no such suite" "$OUT/hip-summary.txt" && failed=1
if [ -s "$OUT/hip-skips.log" ]; then
    echo "CUDA-specific tests, not applicable under HIP:"
    grep "CUDA-specific" "$OUT/hip-skips.log" | cut -f2
    if grep -v "CUDA-specific" "$OUT/hip-skips.log" | grep -q .; then
        echo "other skips (should be none):"
        grep -v "CUDA-specific" "$OUT/hip-skips.log"
        failed=1
    fi
fi 2>&1 | tee -a "$OUT/hip-summary.txt"
grep -q "should be none" "$OUT/hip-summary.txt" && failed=1
echo "every log is in \$OUT ($OUT)"
exit $failed
