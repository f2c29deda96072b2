#!/usr/bin/env bash
# What a process pays to start scoring on the GPU, as a service or a
# stripped container sees it: no HOME (so CUDA's own cache of PTX
# translations is off) and vmafx's kernel cache empty, then warm.
#
# Carried (device tool, carry [".startup"]): .startup/vmafx-before.xz and
# .startup/vmafx-after.xz, two stripped, xz-compressed `vmafx` builds
# (e.g. before and after a change to how kernels are compiled or loaded).
# Each is run three times on the sample pair with --backend cuda: the
# first run compiles into an empty kernel cache, the next two find it.
# Written for the H200 device machines; results in docs/performance.md.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/vmafx-out}; mkdir -p "$OUT"
W=/tmp/startup; rm -rf $W; mkdir -p $W
A=(-r examples/data/ref_576x324.y4m -d examples/data/dist_576x324_x264_crf30.y4m
   --model version=vmaf_v0.6.1 --json --precision max -q)
for b in before after; do
    python3 -c 'import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],"wb"))' \
        .startup/vmafx-$b.xz $W/vmafx-$b && chmod +x $W/vmafx-$b
done
echo "| build | run | kernel cache | seconds | vmaf |"
echo "|---|---|---|---|---|"
for b in before after; do
    for run in 1 2 3; do
        cache=$([ $run = 1 ] && echo empty || echo warm)
        s=$(date +%s.%N)
        env -i PATH=/usr/bin:/bin VMAFX_KERNEL_CACHE=$W/kc-$b \
            timeout 300 $W/vmafx-$b "${A[@]}" --backend cuda -o $W/$b-$run.json 2> $W/$b-$run.err
        rc=$?
        e=$(date +%s.%N)
        v=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pooled_metrics"]["vmaf"]["mean"])' $W/$b-$run.json 2>/dev/null)
        printf "| %s | %s | %s | %.2f | %s |\n" $b $run $cache "$(echo "$e - $s" | python3 -c 'import sys; print(eval(sys.stdin.read()))')" "${v:-rc=$rc $(tail -c 200 $W/$b-$run.err)}"
    done
done
ls -la $W/kc-before $W/kc-after | head -20
