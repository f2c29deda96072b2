#!/usr/bin/env bash
# Side-by-side CPU timing of libvmaf's `vmaf` tool and `vmafx`: the same
# raw .yuv pair, the same model and thread count, runs interleaved, whole
# process wall time (min / median / max). Writes nothing but its table.
#
#   [MODELS="vmaf_v0.6.1 ..."] [THREADS="1 2"] [DEPTHS="8 10"] \
#   docs/cpu-peer/compare.sh VMAF_TOOL VMAFX PAIRS_DIR [RUNS]
#
# VMAF_TOOL: libvmaf's `vmaf`, built from ../shared/thirdparty (meson,
# release, asm on); VMAFX: a release build; PAIRS_DIR: the output of
# `examples/bench_pairs.rs` (`--sizes 1080 --frames 30`). Rows: every
# model (built-in versions, `--model version=...`), depth (1080p) and
# thread count given; by default `vmaf_v0.6.1`, 8 and 10 bit, 1 and 2
# threads. EXTRA: more arguments for both tools, e.g. EXTRA="--cpumask
# 48" for their AVX2 code on an AVX-512 machine (both read bits 4-5 as
# "no AVX-512").
set -euo pipefail
vmaf=$1 vmafx=$2 pairs=$3 runs=${4:-5}
median() { sort -n | awk '{a[NR]=$1} END {printf "%.2f / %.2f / %.2f", a[1], a[int((NR+1)/2)], a[NR]}'; }
models=${MODELS:-vmaf_v0.6.1}
printf '| model | input | threads | libvmaf s (min / median / max) | vmafx s | libvmaf / vmafx (medians) |\n|---|---|---|---|---|---|\n'
for model in $models; do
for bits in ${DEPTHS:-8 10}; do
    for threads in ${THREADS:-1 2}; do
        args=(-r "$pairs/ref_1920x1080_${bits}bit.yuv" -d "$pairs/dist_1920x1080_${bits}bit.yuv"
            -w 1920 -h 1080 -p 420 -b "$bits" --threads "$threads" --model "version=$model"
            -q --json -o /dev/null ${EXTRA:-})
        : >/tmp/cpu-peer-a; : >/tmp/cpu-peer-b
        for _ in $(seq "$runs"); do
            /usr/bin/time -f %e -a -o /tmp/cpu-peer-a "$vmaf" "${args[@]}" >/dev/null
            /usr/bin/time -f %e -a -o /tmp/cpu-peer-b "$vmafx" "${args[@]}" >/dev/null
        done
        a=$(median </tmp/cpu-peer-a) b=$(median </tmp/cpu-peer-b)
        # The middle field of "min / median / max".
        ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {split(a, x, " / "); split(b, y, " / "); printf "%.2fx", x[2] / y[2]}')
        printf '| %s | 1920x1080 %s-bit, %s frames | %s | %s | %s | %s |\n' "$model" "$bits" \
            "$(( $(stat -c %s "$pairs/ref_1920x1080_${bits}bit.yuv") / (1920 * 1080 * 3 / 2 * (bits > 8 ? 2 : 1)) ))" \
            "$threads" "$a" "$b" "$ratio"
    done
done
done
