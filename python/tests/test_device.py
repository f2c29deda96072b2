"""CUDA device arrays read in place: planes handed over through
`__dlpack__` and `__cuda_array_interface__`, made here with ctypes and the
CUDA driver (no CuPy or PyTorch needed), scored on a GPU context with the
CPU engine's scores, and released once read. Without a GPU only the
refusals run; the rest skips (VMAFX_REQUIRE_GPU=1 makes that a failure).
Needs no numpy, so it runs on a bare GPU machine too."""

import ctypes
import gc
import os
import weakref
from pathlib import Path

import pytest

import vmafx

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_REF = ROOT / "examples" / "data" / "ref_576x324.y4m"
SAMPLE_DIST = ROOT / "examples" / "data" / "dist_576x324_x264_crf30.y4m"
# The CPU engine's pooled vmaf of the bundled sample pair (10 frames).
SAMPLE_VMAF = 95.065082326734753


def y4m_frames(path):
    """(width, height, [I420 frame bytes]) of an 8-bit 4:2:0 .y4m."""
    data = path.read_bytes()
    header, rest = data.split(b"\n", 1)
    fields = {f[:1]: f[1:] for f in header.split()[1:]}
    w, h = int(fields[b"W"]), int(fields[b"H"])
    size = w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)
    frames = []
    while rest.startswith(b"FRAME"):
        rest = rest.split(b"\n", 1)[1]
        frames.append(rest[:size])
        rest = rest[size:]
    return w, h, frames


class Cuda:
    """The few CUDA driver calls a producer here needs, on device 0's
    primary context (the one vmafx scores on)."""

    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        ctx, dev = ctypes.c_void_p(), ctypes.c_int()
        self.check(self.lib.cuInit(0))
        self.check(self.lib.cuDeviceGet(ctypes.byref(dev), 0))
        self.check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
        self.check(self.lib.cuCtxSetCurrent(ctx))

    @staticmethod
    def check(result):
        assert result == 0, f"CUDA error {result}"

    def stream(self):
        s = ctypes.c_void_p()
        self.check(self.lib.cuStreamCreate(ctypes.byref(s), 1))  # non-blocking
        return s.value

    def upload(self, data):
        ptr = ctypes.c_uint64()
        self.check(self.lib.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(len(data))))
        self.check(self.lib.cuMemcpyHtoD_v2(ctypes.c_uint64(ptr.value), data, ctypes.c_size_t(len(data))))
        return ptr.value

    def free(self, ptr):
        self.lib.cuMemFree_v2(ctypes.c_uint64(ptr))


def cuda_or_skip():
    try:
        return Cuda()
    except (OSError, AssertionError) as e:
        if os.environ.get("VMAFX_REQUIRE_GPU") == "1":
            raise
        pytest.skip(f"no CUDA device ({e})")


class InterfacePlane:
    """A 2-D uint8 device array seen through __cuda_array_interface__ v3
    (stream None: written already, the upload was synchronous). With a
    `pitch`, rows are that many bytes apart (a multiple of 256 is read in
    place; compact rows of other widths are copied on the device)."""

    def __init__(self, cuda, data, rows, cols, pitch=None, channels=None, stream=None):
        strides = None
        if pitch:
            data = b"".join(data[r * cols:(r + 1) * cols].ljust(pitch, b"\0") for r in range(rows))
            strides = (pitch, 1)
        shape = (rows, cols)
        if channels:  # (rows, columns, channels), as decoders describe CbCr
            shape = (rows, cols // channels, channels)
            strides = strides and (pitch, channels, 1)
        self.cuda, self.ptr = cuda, cuda.upload(data)
        self.__cuda_array_interface__ = {
            "shape": shape, "typestr": "|u1", "data": (self.ptr, False),
            "version": 3, "strides": strides, "stream": stream,
        }

    def __del__(self):
        self.cuda.free(self.ptr)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class DLPackPlane:
    """A 2-D uint8 device array handing out DLPack capsules; its deleter
    counts how many tensors the consumer gave back."""

    deleted = 0

    def __init__(self, cuda, data, rows, cols):
        self.cuda, self.ptr = cuda, cuda.upload(data)
        self.shape = (ctypes.c_int64 * 2)(rows, cols)
        self.streams = []
        self.deleter = DELETER(self._delete)

    def _delete(self, _managed):
        DLPackPlane.deleted += 1

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA, device 0

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        t = DLManagedTensor()
        t.dl_tensor = DLTensor(self.ptr, DLDevice(2, 0), 2, DLDataType(1, 8, 1), self.shape, None, 0)
        t.deleter = self.deleter
        self.tensor = t  # alive while the capsule's pointer is
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(t), b"dltensor", None)

    def __del__(self):
        self.cuda.free(self.ptr)


def test_device_arrays_need_a_gpu_context():
    ctx = vmafx.Context(64, 64)
    plane = type("P", (), {"__cuda_array_interface__": {"shape": (64, 64), "typestr": "|u1",
                                                         "data": (1 << 20, False), "version": 3}})()
    with pytest.raises(vmafx.VmafxError, match='need a GPU context: Context\\(..., backend="cuda"\\)'):
        ctx.submit((plane, plane, plane), (plane, plane, plane))


def test_backends_are_named_and_missing_ones_say_why():
    with pytest.raises(vmafx.VmafxError, match="backend 'gpu': expected"):
        vmafx.Context(64, 64, backend="gpu")
    if os.environ.get("VMAFX_REQUIRE_GPU") != "1":
        try:
            vmafx.Context(64, 64, backend="cuda")
        except vmafx.VmafxError as e:
            assert "cuda" in str(e).lower(), e


def test_dlpack_and_interface_planes_score_in_place_and_are_released():
    cuda = cuda_or_skip()
    w, h, refs = y4m_frames(SAMPLE_REF)
    _, _, dists = y4m_frames(SAMPLE_DIST)
    cw, ch = (w + 1) // 2, (h + 1) // 2
    ctx = vmafx.Context(w, h, backend="cuda")
    producer = cuda.stream()
    alive, dlpack = [], []
    for i, (r, d) in enumerate(zip(refs, dists)):
        # Reference: planar I420 through DLPack; distorted: NV12 through
        # __cuda_array_interface__, as a decoder's output: one surface (Y
        # rows, then CbCr rows) or two planes, in turn.
        ref = tuple(DLPackPlane(cuda, r[a:b], rows, cols) for a, b, rows, cols in (
            (0, w * h, h, w), (w * h, w * h + cw * ch, ch, cw), (w * h + cw * ch, len(r), ch, cw)))
        uv = bytes(b for pair in zip(d[w * h:w * h + cw * ch], d[w * h + cw * ch:]) for b in pair)
        if i % 2:
            # On the producer's own stream: vmafx waits for it on the device.
            dist = (InterfacePlane(cuda, d[:w * h], h, w, pitch=768, stream=producer),
                    InterfacePlane(cuda, uv, ch, 2 * cw, pitch=768, channels=2, stream=producer))
        else:
            dist = (InterfacePlane(cuda, d[:w * h] + uv, h + ch, w),)
        ctx.submit(ref, dist[0] if len(dist) == 1 else dist)
        alive += [weakref.ref(p) for p in dist]
        dlpack += ref
        del ref, dist
    result = ctx.finish()
    assert len(result) == len(refs)
    assert result.pooled("vmaf")["mean"] == SAMPLE_VMAF
    # The consumer asked for the legacy default stream, which it waits for.
    assert all(p.streams == [1] for p in dlpack)
    # Every DLPack tensor was given back, every interface array let go.
    assert DLPackPlane.deleted == 3 * len(refs)
    del ctx
    gc.collect()
    assert not [r for r in alive if r() is not None]


def test_bad_device_arrays_raise_naming_what_was_wrong():
    cuda = cuda_or_skip()
    ctx = vmafx.Context(64, 64, backend="cuda")
    good = InterfacePlane(cuda, bytes(4096), 64, 64)
    small = InterfacePlane(cuda, bytes(1024), 32, 32)
    wide = InterfacePlane(cuda, bytes(8192), 64, 128)
    with pytest.raises(vmafx.VmafxError, match=r"distorted plane 0: shape \(64, 128\), expected \(64, 64\)"):
        ctx.submit((good, small, small), (wide, small, small))
    bad_type = InterfacePlane(cuda, bytes(4096), 64, 64)
    bad_type.__cuda_array_interface__ = dict(good.__cuda_array_interface__, typestr="<f4")
    with pytest.raises(vmafx.VmafxError, match="reference plane 0: element type <f4, expected a uint8 array"):
        ctx.submit((bad_type, small, small), (good, small, small))
    legacy = InterfacePlane(cuda, bytes(4096), 64, 64)
    legacy.__cuda_array_interface__ = dict(good.__cuda_array_interface__, stream=1)
    other = InterfacePlane(cuda, bytes(1024), 32, 32)
    other.__cuda_array_interface__ = dict(small.__cuda_array_interface__, stream=0x1234)
    with pytest.raises(vmafx.VmafxError, match="reference: planes on different streams"):
        ctx.submit((legacy, other, small), (good, small, small))
    other = DLPackPlane(cuda, bytes(4096), 64, 64)
    other.__dlpack_device__ = lambda: (2, 7)
    with pytest.raises(vmafx.VmafxError, match="a CUDA array of device 7; this context scores on device 0"):
        ctx.submit((other, small, small), (good, small, small))
