"""NVDEC frames scored where they are: PyNvVideoCodec decodes a reference
and a distorted clip into CUDA surfaces, vmafx reads each surface's planes
in place (their __cuda_array_interface__), and, with --check, the same
decoded frames copied to the host are scored by the CPU engine and must
give the same values, frame by frame and metric by metric. --rate times
decode alone against decode and score (three runs each, median).

    python examples/python/nvdec_in_place.py REF.mp4 DIST.mp4 [--check] [--rate]

Needs a CUDA device, PyNvVideoCodec (pip install pynvvideocodec) and the
vmafx package (pip install ./python); no numpy. Run on the H200 by
docs/gpu-device-checks/python.sh (results in docs/python.md).
"""

import argparse
import ctypes
import statistics
import sys
import time

import PyNvVideoCodec as nvc

import vmafx


class HostPlane:
    """A host copy of a device plane, seen through __array_interface__."""

    def __init__(self, cuda, interface):
        shape, pitch = interface["shape"], interface["strides"][0]
        rows, cols = shape[0], shape[1] * (shape[2] if len(shape) > 2 else 1)
        assert pitch == cols, "compact rows expected"
        self.buf = ctypes.create_string_buffer(rows * cols)
        src = ctypes.c_uint64(interface["data"][0])
        assert cuda.cuMemcpyDtoH_v2(self.buf, src, ctypes.c_size_t(rows * cols)) == 0
        self.__array_interface__ = {"shape": (rows, cols), "typestr": "|u1",
                                    "data": (ctypes.addressof(self.buf), False), "version": 3}


def decoders(paths):
    return [nvc.SimpleDecoder(p, gpu_id=0, use_device_memory=True) for p in paths]


def score(paths, check):
    ref, dist = decoders(paths)
    n = min(len(ref), len(dist))
    y = ref[0].cuda()[0].__cuda_array_interface__["shape"]
    h, w = y[0], y[1]
    gpu = vmafx.Context(w, h, backend="cuda")
    cpu = vmafx.Context(w, h, backend="cpu") if check else None
    cuda = ctypes.CDLL("libcuda.so.1") if check else None
    for i in range(n):
        pair = [tuple(d[i].cuda()) for d in (ref, dist)]  # NV12: (Y, CbCr)
        gpu.submit(pair[0], pair[1])
        if cpu:
            host = [tuple(HostPlane(cuda, p.__cuda_array_interface__) for p in side) for side in pair]
            cpu.submit(host[0], host[1])
    g = gpu.finish()
    print(f"{n} frames {w}x{h}: pooled vmaf {g.pooled('vmaf')['mean']:.6f} (GPU, in place)")
    if cpu:
        c = cpu.finish()
        same = g.frames == c.frames
        print(f"  CPU on the same decoded frames: {c.pooled('vmaf')['mean']:.6f}: "
              f"{'every frame, every metric identical' if same else 'DIFFER'}")
        return same, (w, h, n)
    return True, (w, h, n)


def rate(paths, size):
    w, h, n = size

    def run(with_score):
        ref, dist = decoders(paths)
        ctx = vmafx.Context(w, h, backend="cuda") if with_score else None
        start = time.perf_counter()
        for i in range(n):
            pair = [tuple(d[i].cuda()) for d in (ref, dist)]
            if ctx:
                ctx.submit(pair[0], pair[1])
        if ctx:
            ctx.finish()
        return n / (time.perf_counter() - start)

    decode = statistics.median(run(False) for _ in range(3))
    both = statistics.median(run(True) for _ in range(3))
    print(f"  {w}x{h}: decode only {decode:.0f} fps, decode + vmafx in place {both:.0f} fps")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("ref")
    p.add_argument("dist")
    p.add_argument("--check", action="store_true")
    p.add_argument("--rate", action="store_true")
    a = p.parse_args()
    same, size = score([a.ref, a.dist], a.check)
    if a.rate:
        rate([a.ref, a.dist], size)
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
