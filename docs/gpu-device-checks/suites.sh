#!/usr/bin/env bash
# Every GPU test suite on a GPU machine, then the producer examples and the
# command line against the CPU engine. VMAFX_REQUIRE_GPU=1: a test that
# would skip (no device, no Vulkan or EGL driver) fails instead.
#
# Written for the H200 device machines (one NVIDIA H200, driver with NVRTC,
# no Rust toolchain; the command runs in the checkout's root, results go
# to $OUT). When it last ran, and what it printed, is recorded in
# docs/gpu-testing.md.
#
# Before: bash docs/gpu-device-checks/build-for-device.sh (here), then the
# device tool with carry [".gpu-carry", ".gl"] and the command
#   bash docs/gpu-device-checks/suites.sh [SUITE ...]
# SUITE names a suite of SUITE_TESTS below (gpu, gpu_vif, ...: the tests of
# one module of a test binary), `examples`, `cli` or `reruns`, or is a test binary and
# a name prefix in one argument ("gpu vif::"); none runs them all (about 5
# minutes; split the list over two calls if the per-call limit is near).
# Each suite's output goes to $OUT/SUITE.txt. Extra test-binary arguments
# go in $TEST_ARGS (e.g. TEST_ARGS=--nocapture for every per-pair line);
# SUITE_TIMEOUT (200 s) bounds each suite, VMAFX_SOAK_FRAMES sizes the soaks
# (VMAFX_SOAK_ACQUIRES / VMAFX_SOAK_RELEASES, comma-separated kinds as the
# soak prints them, narrow its fences to find which one a failure needs).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/vmafx-out}
mkdir -p "$OUT"
C=/tmp/vmafx-bin

. docs/gpu-device-checks/device-common.sh

# The test binaries bake the build machine's CARGO_MANIFEST_DIR:
# VMAFX_TEST_ROOT points them at this checkout (tests/golden, kernels/),
# VMAFX_BIN at the carried vmafx for the CLI tests.
export VMAFX_TEST_ROOT=$PWD VMAFX_BIN=$C/vmafx VMAFX_KERNEL_CACHE=/tmp/vmafx-kc
export VMAFX_REQUIRE_GPU=1 VMAFX_REQUIRE_NVRTC=1 VMAFX_SKIP_LOG=$OUT/skips.log
# The C library built by build-for-device.sh (the capi suite compiles C
# clients against it with the machine's gcc).
export VMAFX_CAPI_PREFIX=$C/libvmaf VMAFX_REQUIRE_CAPI=1

SUITES=(capi gpu gpu_adm gpu_cambi gpu_ciede gpu_float gpu_float_adm gpu_float_ssim
        gpu_import gpu_import_layer gpu_import_producers gpu_kernels gpu_models
        gpu_ms_ssim gpu_psnr_hvs gpu_speed gpu_ssim gpu_ssimulacra2 gpu_vif examples cli reruns)
[ $# -gt 0 ] && SUITES=("$@")

{
echo "== $(cat .gpu-carry/commit 2>/dev/null || echo 'commit unknown')"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nproc
} 2>&1 | tee "$OUT/summary.txt"

failed=0
for t in "${SUITES[@]}"; do
    case $t in
    examples)
        # The producers' frames scored on the GPU; expected: the CPU
        # engine's pooled scores of the sample pair, 95.065082 (10 frames)
        # and 84.619452 (vulkan_producer's 24 frames).
        {
        echo "== decoder_producer nv12";  timeout 60 $C/decoder_producer --format nv12 2>&1 | tail -2
        echo "== decoder_producer p010 --sync-file"; timeout 60 $C/decoder_producer --format p010 --sync-file 2>&1 | tail -2
        echo "== gl_producer"; timeout 60 $C/gl_producer 2>&1 | tail -3
        echo "== vulkan_producer --backend cuda"; timeout 60 $C/vulkan_producer --backend cuda --frames 24 2>&1 | tail -1
        } 2>&1 | tee "$OUT/examples.txt"
        ;;
    cli)
        # vmafx on the sample pair, per model, CPU against CUDA: the JSON
        # must be identical but for the fps line.
        for m in vmaf_v0.6.1 vmaf_v1.0.16_3d0h; do
            A=(-r examples/data/ref_576x324.y4m -d examples/data/dist_576x324_x264_crf30.y4m
               --model version=$m --json --precision max -q)
            timeout 120 $C/vmafx "${A[@]}" --backend cpu -o "$OUT/cli-$m-cpu.json"
            timeout 120 $C/vmafx "${A[@]}" --backend cuda -o "$OUT/cli-$m-cuda.json"
            if diff <(grep -v '"fps"' "$OUT/cli-$m-cpu.json") <(grep -v '"fps"' "$OUT/cli-$m-cuda.json") > /dev/null; then
                echo "cli $m: cpu and cuda JSON identical (fps aside)"
            else
                echo "cli $m: cpu and cuda JSON DIFFER"; failed=1
            fi
        done 2>&1 | tee "$OUT/cli.txt"
        ;;
    reruns)
        # The same run again and again gives the same bytes (#17): RERUNS
        # (100) runs per backend and model, eight at a time, on the sample
        # pair; every JSON but its fps line must hash alike.
        n=${RERUNS:-100}
        for m in vmaf_float_v0.6.1 vmaf_v0.6.1; do
            for b in cpu cuda; do
                mkdir -p "$OUT/reruns"
                seq "$n" | xargs -P 8 -I{} timeout 120 $C/vmafx \
                    -r examples/data/ref_576x324.y4m -d examples/data/dist_576x324_x264_crf30.y4m \
                    --model version=$m --feature float_ssim --feature float_ms_ssim \
                    --json --precision max -q --backend $b -o "$OUT/reruns/$m-$b-{}.json"
                hashes=$(for f in "$OUT"/reruns/$m-$b-*.json; do grep -v '"fps"' "$f" | sha256sum; done | sort | uniq -c)
                runs=$(ls "$OUT"/reruns/$m-$b-*.json | wc -l)
                if [ "$runs" -eq "$n" ] && [ "$(echo "$hashes" | wc -l)" -eq 1 ]; then
                    echo "reruns $m $b: $runs runs, one JSON (fps aside)"
                else
                    echo "reruns $m $b: $runs runs, JSON DIFFER: $hashes"; failed=1
                fi
                rm -f "$OUT"/reruns/$m-$b-*.json
            done
        done 2>&1 | tee "$OUT/reruns.txt"
        ;;
    *)
        run_suite "$t" "" "${SUITE_TIMEOUT:-200}" || failed=1
        ;;
    esac
done 2>&1 | tee -a "$OUT/summary.txt"

grep -q "rc=[1-9]\|DIFFER\|not in the carried\|no such suite" "$OUT/summary.txt" && failed=1
[ -s "$OUT/skips.log" ] && { echo "skips recorded (should be none):"; cat "$OUT/skips.log"; failed=1; }
echo "every log is in \$OUT ($OUT)"
exit $failed
