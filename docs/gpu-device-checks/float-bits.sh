#!/usr/bin/env bash
# Where float features' bits come from across machines (#17): the same
# vmafx binary scores the sample pair on the CPU with this machine's C
# library (libm) and with Debian 12's (carried, run through its own
# dynamic loader), and each JSON is compared with the one the development
# machine wrote (.gpu-carry/ref-json, Debian 12's glibc 2.36): identical
# bytes, or the largest difference per metric.
#
# Before (here): build-for-device.sh, then
#   mkdir -p .gpu-carry/libm .gpu-carry/ref-json
#   cp -L /lib64/ld-linux-x86-64.so.2 /lib/x86_64-linux-gnu/{libc.so.6,libm.so.6,libgcc_s.so.1} .gpu-carry/libm/
#   and the reference JSONs: the two vmafx runs below with --backend cpu,
#   written to .gpu-carry/ref-json/MODEL.json.
# There: carry [".gpu-carry"], bash docs/gpu-device-checks/float-bits.sh
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/vmafx-out}; mkdir -p "$OUT"
C=/tmp/vmafx-fb; rm -rf $C; mkdir -p $C
tar xJf .gpu-carry/bin.tar.xz -C $C --strip-components 1 bin/vmafx
L=.gpu-carry/libm
echo "this machine: $(ldd --version | head -1); $(grep -m1 'model name' /proc/cpuinfo)"
for m in vmaf_float_v0.6.1 vmaf_v0.6.1; do
    A=(-r examples/data/ref_576x324.y4m -d examples/data/dist_576x324_x264_crf30.y4m
       --model version=$m --feature float_ssim --feature float_ms_ssim --feature ciede
       --feature psnr_hvs --json --precision max -q --backend cpu)
    $C/vmafx "${A[@]}" -o "$OUT/fb-$m-system.json"
    $L/ld-linux-x86-64.so.2 --library-path $L $C/vmafx "${A[@]}" -o "$OUT/fb-$m-debian.json"
    for libc in system debian; do
        python3 - "$OUT/fb-$m-$libc.json" ".gpu-carry/ref-json/$m.json" "$m $libc libc" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
worst = {}
for fa, fb in zip(a["frames"], b["frames"]):
    for k, v in fa["metrics"].items():
        d = abs(v - fb["metrics"][k])
        if d > worst.get(k, 0):
            worst[k] = d
if not worst:
    print(f"{sys.argv[3]}: every frame's metrics identical to the development machine's")
else:
    print(f"{sys.argv[3]}: differs from the development machine's:",
          ", ".join(f"{k} {d:.3g}" for k, d in sorted(worst.items(), key=lambda x: -x[1])[:8]))
PY
    done
done 2>&1 | tee "$OUT/float-bits.txt"
