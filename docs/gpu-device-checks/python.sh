#!/usr/bin/env bash
# The Python package on a GPU machine: the device-array tests, then NVDEC
# frames from PyNvVideoCodec scored in place.
#
# Carried (device tool, carry [".pycarry", ".ffcarry"]):
#   .pycarry/*.whl        vmafx's wheel (maturin build --release -m
#                         python/Cargo.toml -o .pycarry) and pytest's
#                         wheels (pip download -d .pycarry pytest)
#   .pycarry/pynvc.tar.xz PyNvVideoCodec's wheel unpacked without its
#                         bundled FFmpeg source, samples and notebooks (the
#                         whole wheel is larger than the carry limit)
#   .ffcarry/*_1080p_*.mp4 the H.264 and HEVC clips of ffmpeg-cuda.sh
# Written for the H200 device machines (Python 3.11, no network).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/vmafx-out}; mkdir -p "$OUT"
P=/tmp/pyenv; rm -rf $P; mkdir -p $P/site
python3 --version
python3 -m pip install --quiet --no-index --no-deps --target $P/site .pycarry/*.whl 2>&1 | tail -3
tar xJf .pycarry/pynvc.tar.xz -C $P/site
export PYTHONPATH=$P/site VMAFX_REQUIRE_GPU=1 VMAFX_KERNEL_CACHE=/tmp/vmafx-kc
failed=0

echo "== pytest python/tests/test_device.py"
python3 -m pytest -q -rs -p no:cacheprovider python/tests/test_device.py 2>&1 | tail -15
[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1

echo "== PyNvVideoCodec: NVDEC frames scored in place"
python3 - <<'PY' || failed=1
import ctypes, sys, time
import PyNvVideoCodec as nvc
import vmafx

cuda = ctypes.CDLL("libcuda.so.1")

class HostPlane:
    """A host copy of a device plane, seen through __array_interface__."""
    def __init__(self, ptr, rows, cols, pitch):
        self.buf = ctypes.create_string_buffer(rows * cols)
        r = cuda.cuMemcpyDtoH_v2(self.buf, ctypes.c_uint64(ptr), ctypes.c_size_t(rows * cols))
        assert r == 0 and pitch == cols, (r, pitch, cols)
        self.__array_interface__ = {"shape": (rows, cols), "typestr": "|u1",
                                    "data": (ctypes.addressof(self.buf), False), "version": 3}

def describe(frame):
    names = [n for n in dir(frame) if not n.startswith("__") or n in ("__dlpack__", "__cuda_array_interface__")]
    print("  frame:", type(frame).__name__, names)
    try:
        planes = frame.cuda()
        for p in planes:
            print("  plane:", p.__cuda_array_interface__)
    except Exception as e:
        print("  cuda():", e)

for codec in ("h264", "hevc"):
    paths = [f".ffcarry/{s}_1080p_{codec}.mp4" for s in ("ref", "dist")]
    dec = [nvc.SimpleDecoder(p, gpu_id=0, use_device_memory=True) for p in paths]
    n = min(len(d) for d in dec)
    first = dec[0][0]
    if codec == "h264":
        describe(first)
    planes = first.cuda()
    h, w = planes[0].__cuda_array_interface__["shape"][:2]
    print(f"  {codec}: {len(planes)} planes of {w}x{h}")
    gpu_ctx = vmafx.Context(w, h, backend="cuda")
    cpu_ctx = vmafx.Context(w, h, backend="cpu")
    t = time.perf_counter()
    for i in range(n):
        pair = []
        for d in dec:
            f = d[i]
            views = f.cuda()
            pair.append(tuple(views))
        gpu_ctx.submit(pair[0], pair[1])
        host = []
        for side in pair:
            hp = []
            for v in side:
                ai = v.__cuda_array_interface__
                rows, cols = ai["shape"][0], ai["shape"][1] * (ai["shape"][2] if len(ai["shape"]) > 2 else 1)
                hp.append(HostPlane(ai["data"][0], rows, cols, (ai.get("strides") or (cols,))[0]))
            host.append(tuple(hp))
        cpu_ctx.submit(host[0], host[1])
    g, c = gpu_ctx.finish(), cpu_ctx.finish()
    same = g.frames == c.frames
    print(f"{codec}: {n} frames {w}x{h}: pooled vmaf GPU in place {g.pooled('vmaf')['mean']:.6f}, "
          f"CPU on the same decoded frames {c.pooled('vmaf')['mean']:.6f}: "
          f"{'every frame, every metric identical' if same else 'DIFFER'}")
    if not same:
        sys.exit(1)

    # Throughput: decode alone against decode + score in place, three runs.
    def run(score):
        dec = [nvc.SimpleDecoder(p, gpu_id=0, use_device_memory=True) for p in paths]
        ctx = vmafx.Context(w, h, backend="cuda") if score else None
        s = time.perf_counter()
        for i in range(n):
            pair = [tuple(d[i].cuda()) for d in dec]
            if ctx:
                ctx.submit(pair[0], pair[1])
        if ctx:
            ctx.finish()
        return n / (time.perf_counter() - s)
    rates = {k: sorted(run(k == "score") for _ in range(3))[1] for k in ("decode", "score")}
    print(f"  {codec} 1080p: decode only {rates['decode']:.0f} fps, decode + vmafx in place {rates['score']:.0f} fps")
PY
exit $failed
