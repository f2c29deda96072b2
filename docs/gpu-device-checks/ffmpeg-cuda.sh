#!/usr/bin/env bash
# FFmpeg 7.1.5, unmodified, decoding on NVDEC and scoring with its
# libvmaf_cuda filter: one binary, run on vmafx and on libvmaf 3.2 (both
# are libvmaf.so.3; LD_LIBRARY_PATH picks one), on the H200.
#
# Before (here): the FFmpeg built by
#   NV_CODEC_HEADERS=../shared/thirdparty/nv-codec-headers-13.0.19.1.tar.gz \
#     bash capi/build-ffmpeg.sh PREFIX ../shared/thirdparty/ffmpeg-7.1.5.tar.xz DIR
# stripped and xz-compressed as .ffcarry/ffmpeg.xz, vmafx's library
# (capi/install.sh, stripped) as .ffcarry/lib/libvmaf.so.3.2.0.xz, and H.264
# and HEVC encodes of a golden pair as .ffcarry/{ref,dist}_1080p_{h264,hevc}.mp4
# (docs/ffmpeg.md says how they are made); .anchor as for peers.py. Then the
# device tool with carry [".ffcarry", ".anchor"] and this script.
#
# Checks, per codec: vmafx's per-frame scores through NVDEC + libvmaf_cuda
# equal vmafx's through FFmpeg's software decoder + libvmaf (CPU engine),
# and those equal libvmaf's CPU scores; then frames per second of decode +
# score against decode alone, vmafx against libvmaf, 1080p and (scaled on
# the device by scale_cuda) 2160p, three interleaved runs.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/vmafx-out}; mkdir -p "$OUT"
W=/tmp/ffc; mkdir -p $W/vmafx
python3 -c 'import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],"wb"))' .ffcarry/ffmpeg.xz $W/ffmpeg
python3 -c 'import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],"wb"))' .ffcarry/lib/libvmaf.so.3.2.0.xz $W/vmafx/libvmaf.so.3
chmod +x $W/ffmpeg
[ -x /tmp/lvw/vmaf-f85a853/libvmaf/build/tools/vmaf ] || bash .anchor/build_libvmaf_cuda.sh .anchor/thirdparty /tmp/lvw .anchor/nasm.xz > $OUT/anchor.log 2>&1 || { tail -20 $OUT/anchor.log; exit 1; }
LIBVMAF=/tmp/lvw/vmaf-f85a853/libvmaf/build/src
FF="timeout 120 $W/ffmpeg -hide_banner -loglevel error -y"
failed=0

for codec in h264 hevc; do
    R=.ffcarry/ref_1080p_$codec.mp4; D=.ffcarry/dist_1080p_$codec.mp4
    cpu() { # lib log
        LD_LIBRARY_PATH=$1 $FF -i $D -i $R -lavfi "[0:v][1:v]libvmaf=log_path=$2:log_fmt=json:n_threads=16" -f null -
    }
    gpu() { # lib log [scale]
        LD_LIBRARY_PATH=$1 $FF -hwaccel cuda -hwaccel_output_format cuda -i $D \
            -hwaccel cuda -hwaccel_output_format cuda -i $R -filter_complex \
            "[0:v]scale_cuda=${3:-}format=yuv420p[d];[1:v]scale_cuda=${3:-}format=yuv420p[r];[d][r]libvmaf_cuda=log_path=$2:log_fmt=json" -f null -
    }
    echo "== $codec $(date +%T)"
    cpu $W/vmafx $OUT/$codec-vmafx-cpu.json || failed=1
    gpu $W/vmafx $OUT/$codec-vmafx-gpu.json || failed=1
    cpu $LIBVMAF $OUT/$codec-libvmaf-cpu.json || failed=1
    gpu $LIBVMAF $OUT/$codec-libvmaf-gpu.json || failed=1
    python3 - "$OUT" $codec <<'PY' || failed=1
import json, sys
out, codec = sys.argv[1:]
logs = {k: json.load(open(f"{out}/{codec}-{k}.json")) for k in ("vmafx-cpu", "vmafx-gpu", "libvmaf-cpu", "libvmaf-gpu")}
frames = {k: v["frames"] for k, v in logs.items()}
def same(a, b):
    fa, fb = frames[a], frames[b]
    if len(fa) != len(fb):
        return f"{len(fa)} frames against {len(fb)}"
    for x, y in zip(fa, fb):
        if x["metrics"] != y["metrics"]:
            diff = {k: (x["metrics"][k], y["metrics"].get(k)) for k in x["metrics"] if x["metrics"][k] != y["metrics"].get(k)}
            return f"frame {x['frameNum']}: {diff}"
    return None
print(f"{codec}: {len(frames['vmafx-gpu'])} frames; pooled vmaf: " + ", ".join(
    f"{k} {v['pooled_metrics']['vmaf']['mean']:.6f}" for k, v in logs.items()))
bad = 0
for a, b, why in (("vmafx-gpu", "vmafx-cpu", "NVDEC + libvmaf_cuda on vmafx = software decode + libvmaf on vmafx"),
                  ("vmafx-cpu", "libvmaf-cpu", "vmafx = libvmaf, CPU")):
    d = same(a, b)
    print(f"  {why}: {'every frame, every metric identical' if d is None else 'DIFFER: ' + d[:300]}")
    bad |= d is not None
d = same("libvmaf-gpu", "libvmaf-cpu")
print(f"  (libvmaf's own CUDA path against its CPU path: {'identical' if d is None else 'differs: ' + d[:160]})")
sys.exit(bad)
PY
done

# Throughput: decode + score against decode alone, the 100-frame clips,
# whole process (FFmpeg's and CUDA's start-up included).
# (-stream_loop is not used: at the loop point FFmpeg re-creates the filter
# graph and libvmaf_cuda refuses to be configured twice.)
python3 - "$W" "$LIBVMAF" "$OUT" <<'PY'
import json, math, os, statistics, subprocess, sys, time
W, LIBVMAF, OUT = sys.argv[1:]
FF = [f"{W}/ffmpeg", "-hide_banner", "-loglevel", "error", "-y"]
def inputs(codec):
    a = []
    for f in (f".ffcarry/dist_1080p_{codec}.mp4", f".ffcarry/ref_1080p_{codec}.mp4"):
        a += ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda", "-i", f]
    return a
print("| codec | size | decode only fps | decode + libvmaf 3.2 (libvmaf_cuda) fps | decode + vmafx (libvmaf_cuda) fps | ratio |")
print("|---|---|---|---|---|---|")
for codec in ("h264", "hevc"):
    for scale, size in (("", "1920x1080"), ("3840:2160:", "3840x2160")):
        pre = f"[0:v]scale_cuda={scale}format=yuv420p[d];[1:v]scale_cuda={scale}format=yuv420p[r]"
        runs = {
            "decode": (f"{W}/vmafx", FF + inputs(codec) + ["-filter_complex", pre + ";[d]null[o1];[r]null[o2]", "-map", "[o1]", "-map", "[o2]", "-f", "null", "-"]),
            "libvmaf": (LIBVMAF, FF + inputs(codec) + ["-filter_complex", pre + ";[d][r]libvmaf_cuda", "-f", "null", "-"]),
            "vmafx": (f"{W}/vmafx", FF + inputs(codec) + ["-filter_complex", pre + ";[d][r]libvmaf_cuda", "-f", "null", "-"]),
        }
        t = {k: [] for k in runs}
        for _ in range(3):
            for k, (lib, argv) in runs.items():
                env = dict(os.environ, LD_LIBRARY_PATH=lib)
                s = time.perf_counter()
                try:
                    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
                except subprocess.TimeoutExpired:
                    print(k, "timed out")
                    continue
                t[k].append(time.perf_counter() - s)
                if r.returncode:
                    print(k, "failed:", r.stderr[-500:])
        n = len(json.load(open(f"{OUT}/{codec}-vmafx-gpu.json"))["frames"])
        fps = {k: n / statistics.median(v) if v else math.nan for k, v in t.items()}
        print(f"  ({codec} {size}, {n} frames, seconds per run: " + "; ".join(f"{k} " + " ".join(f"{x:.2f}" for x in v) for k, v in t.items()) + ")", flush=True)
        print(f"| {codec} | {size} | {fps['decode']:.0f} | {fps['libvmaf']:.0f} | {fps['vmafx']:.0f} | {fps['vmafx'] / fps['libvmaf']:.2f}x |", flush=True)
PY
exit $failed
