#!/usr/bin/env bash
# The GPU tables of docs/performance.md, reproduced with gpu_bench
# (examples/gpu_bench.rs, release build) on a GPU machine.
#
# Written for the H200 device machines (one NVIDIA H200, 16 host CPUs; the
# command runs in the checkout's root, results go to $OUT). When it last
# ran is recorded in docs/performance.md, each table with its command.
#
# Before: bash docs/gpu-device-checks/build-for-device.sh (here), then the
# device tool with carry [".gpu-carry"] and the command
#   bash docs/gpu-device-checks/bench.sh [PART ...]
# PART: models, targets, sizes, host, extractors; none runs them all
# (about 8 minutes; `models` alone about 4, so split over two calls if the
# per-call limit is near). Input: examples/data's pair, frames 0-7 scaled
# up and cycled (gpu_bench's own doc comment says how).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/vmafx-out}
mkdir -p "$OUT"
C=/tmp/vmafx-bin
rm -rf "$C" && mkdir -p "$C"
tar xJf .gpu-carry/bin.tar.xz -C "$C" --strip-components 1 || { echo "no .gpu-carry/bin.tar.xz: run build-for-device.sh and carry .gpu-carry"; exit 1; }
export VMAFX_KERNEL_CACHE=/tmp/vmafx-kc VMAFX_TEST_ROOT=$PWD # examples/data of this checkout
B=$C/gpu_bench

PARTS=(models targets sizes host extractors)
[ $# -gt 0 ] && PARTS=("$@")

echo "== $(cat .gpu-carry/commit 2>/dev/null || echo 'commit unknown')"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "host CPUs: $(nproc)"
# Warm the kernel cache, so no table pays for compiling.
timeout 120 $B --frames 20 --cpu-frames 1 --sizes 360 --depths 8,10 \
    --models vmaf_v0.6.1,vmaf_float_v0.6.1,vmaf_v1.0.16_3d0h > /dev/null 2>&1

for p in "${PARTS[@]}"; do
    echo "=== $p"
    case $p in
    models)
        # "The three models, every feed": 1080p and 2160p, 8 and 10 bit.
        timeout 550 $B --frames 500 --cpu-frames 4 --threads 16 --sizes 1080,2160 --depths 8,10 \
            --models vmaf_v0.6.1,vmaf_float_v0.6.1,vmaf_v1.0.16_3d0h 2>/dev/null | grep -E "^\|"
        ;;
    targets)
        # "Against the targets": vmaf_v0.6.1 8-bit device-fed, 2,000-frame
        # runs, three times (the rate moves a few per cent run to run).
        for i in 1 2 3; do
            timeout 120 $B --frames 2000 --sizes 1080,2160 --depths 8 --feeds planar,semi,copied 2>/dev/null | grep "device"
        done
        ;;
    sizes)
        # 720p and 1440p, device planar and kernels only.
        timeout 120 $B --frames 2000 --sizes 720,1440 --depths 8 --feeds planar,kernels 2>/dev/null | grep -E "^\| [0-9]"
        ;;
    host)
        # The host's ceiling: 640x360, where the kernels are short.
        timeout 120 $B --frames 3000 --cpu-frames 1 --sizes 360 --depths 8 --models vmaf_v0.6.1 2>/dev/null | grep -E "^\| [0-9]"
        ;;
    extractors)
        # Each GPU extractor alone, then per kernel (Gpu::with_kernel_times).
        timeout 300 $B --models "" --frames 100 --sizes 1080,2160 --depths 8,10 \
            --extractors vif,adm,motion,psnr,psnr_hvs,ciede,cambi,cambi/full_ref=true,speed_chroma,speed_temporal,float_vif,float_adm,float_ssim,float_ms_ssim,float_motion,float_psnr,float_moment,ssimulacra2 \
            2>/dev/null | grep -E "^\||^[A-Za-z]"
        ;;
    *)
        echo "unknown part $p (models, targets, sizes, host, extractors)"
        ;;
    esac
done 2>&1 | tee "$OUT/bench.txt"
