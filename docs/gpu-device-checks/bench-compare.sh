#!/usr/bin/env bash
# Two gpu_bench builds side by side in one call: `vmaf_v0.6.1` 8-bit,
# frames already on the device (planar, semi-planar, copied feeds), 1080p
# and 2160p, 2,000 frames, runs alternating before / after, three each.
# What a change that must not cost speed is checked with (issue 14: within
# 3 % of before).
#
# Carried (device tool, carry [".gpu-carry"]): .gpu-carry/bin.tar.xz as
# build-for-device.sh makes it (the "after" gpu_bench) and
# .gpu-carry/gpu_bench-before.xz (the same example built at the "before"
# commit, stripped and xz-compressed). Results: docs/performance.md.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/vmafx-out}; mkdir -p "$OUT"
C=/tmp/vmafx-bench; rm -rf $C; mkdir -p $C
tar xJf .gpu-carry/bin.tar.xz -C $C --strip-components 1 bin/gpu_bench
python3 -c 'import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],"wb"))' \
    .gpu-carry/gpu_bench-before.xz $C/gpu_bench-before
mv $C/gpu_bench $C/gpu_bench-after; chmod +x $C/gpu_bench-*
# Both builds read examples/data from this checkout.
export VMAFX_KERNEL_CACHE=/tmp/vmafx-kc-bench VMAFX_TEST_ROOT=$PWD
echo "== before $(cat .gpu-carry/before 2>/dev/null), after $(cat .gpu-carry/commit 2>/dev/null)"
for b in before after; do  # warm each build's kernel cache
    timeout 120 $C/gpu_bench-$b --frames 20 --sizes 1080 --depths 8 --feeds planar > /dev/null 2>&1
done
for i in 1 2 3; do
    for b in before after; do
        timeout 120 $C/gpu_bench-$b --frames 2000 --sizes 1080,2160 --depths 8 --feeds planar,semi,copied 2>/dev/null \
            | grep "device" | sed "s/^/$b $i /"
    done
done | tee "$OUT/bench-compare.txt"
