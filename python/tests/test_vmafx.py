"""The Python package on real data: files and numpy frames give libvmaf
3.2's golden scores bit for bit; every bad input raises VmafxError naming
what was wrong. Run: pytest python/tests (after pip install ./python)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import zstandard

import vmafx

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
SAMPLE_REF = ROOT / "examples" / "data" / "ref_576x324.y4m"
SAMPLE_DIST = ROOT / "examples" / "data" / "dist_576x324_x264_crf30.y4m"
# The CPU engine's pooled vmaf of the bundled sample pair.
SAMPLE_VMAF = 95.065082326734753


def golden(folder, run, distorted):
    with open(GOLDEN / folder / f"{distorted}.{run}.json") as f:
        return json.load(f)


def raw(path, tmp_path):
    out = tmp_path / path.name.replace(".zst", "")
    out.write_bytes(zstandard.ZstdDecompressor().decompress(path.read_bytes(), max_output_size=1 << 30))
    return out


def frames(path, w, h, depth):
    """The planes of each frame of a raw 4:2:0 file."""
    dtype = np.uint16 if depth > 8 else np.uint8
    data = np.fromfile(path, dtype=dtype)
    cw, ch = (w + 1) // 2, (h + 1) // 2
    size = w * h + 2 * cw * ch
    for f in data.reshape(-1, size):
        y = f[: w * h].reshape(h, w)
        u = f[w * h : w * h + cw * ch].reshape(ch, cw)
        v = f[w * h + cw * ch :].reshape(ch, cw)
        yield y, u, v


def assert_golden(result, gold):
    assert len(result) == len(gold["frames"])
    for ours, theirs in zip(result.frames, gold["frames"]):
        for name, value in theirs["metrics"].items():
            assert ours[name] == value, (theirs["frameNum"], name)
    for name, pooled in gold["pooled_metrics"].items():
        assert result.pooled(name) == pooled, name


def test_files_score_the_sample_pair():
    r = vmafx.score(SAMPLE_REF, SAMPLE_DIST)
    assert r.pooled("vmaf")["mean"] == SAMPLE_VMAF
    assert len(r) == 10 and r.indices == list(range(10))
    assert r["vmaf"][0] == r.frames[0]["vmaf"]
    assert "vmaf" in r.names and "integer_adm2" in r.names


@pytest.mark.parametrize(
    "folder,distorted,depth",
    [("a_576x324_420p8_pan", "x264_crf30", 8), ("c_576x324_420p10_zoom", "x265_main10_crf30", 10)],
)
def test_raw_files_and_numpy_frames_give_the_goldens(tmp_path, folder, distorted, depth):
    ref = raw(GOLDEN / folder / "ref.yuv.zst", tmp_path)
    dist = raw(GOLDEN / folder / f"{distorted}.yuv.zst", tmp_path)
    gold = golden(folder, "vmaf_v0.6.1", distorted)
    r = vmafx.score(ref, dist, model="vmaf_v0.6.1", width=576, height=324, pix_fmt="420", bit_depth=depth)
    assert_golden(r, gold)

    ctx = vmafx.Context(576, 324, "420", depth, models=["vmaf_v0.6.1"], threads=2)
    seen = []
    for rp, dp in zip(frames(ref, 576, 324, depth), frames(dist, 576, 324, depth)):
        ctx.submit(rp, dp)
        seen += [i for i, _ in ctx.finished()]
    result = ctx.finish()
    assert_golden(result, gold)
    assert seen == sorted(seen) and len(seen) < len(result)  # some finished before the end


def test_semi_planar_frames_score_as_planar(tmp_path):
    """NV12 (8-bit) and P010 (10-bit, high bits) planes as decoders give them."""
    folder, distorted = "c_576x324_420p10_zoom", "x265_main10_crf30"
    ref = raw(GOLDEN / folder / "ref.yuv.zst", tmp_path)
    dist = raw(GOLDEN / folder / f"{distorted}.yuv.zst", tmp_path)
    gold = golden(folder, "vmaf_v0.6.1", distorted)
    ctx = vmafx.Context(576, 324, "420", 10)
    for (y, u, v), (y2, u2, v2) in zip(frames(ref, 576, 324, 10), frames(dist, 576, 324, 10)):
        def p010(y, u, v):
            uv = np.empty((u.shape[0], u.shape[1] * 2), dtype=np.uint16)
            uv[:, 0::2], uv[:, 1::2] = u << 6, v << 6
            return (y << 6, uv)
        ctx.submit(p010(y, u, v), p010(y2, u2, v2))
    assert_golden(ctx.finish(), gold)


def test_one_array_per_side_scores_as_its_planes():
    """A packed planar picture (1-D: Y, Cb, Cr) or a semi-planar surface
    (Y rows, then CbCr rows), as decoders and raw files give them."""
    ref = SAMPLE_REF
    w, h = 576, 324
    data = ref.read_bytes()
    frames = data.split(b"FRAME\n")[1:3]
    size = w * h * 3 // 2
    pics = [np.frombuffer(f[:size], dtype=np.uint8) for f in frames]
    y = [p[: w * h].reshape(h, w) for p in pics]
    u = [p[w * h : w * h + size // 6].reshape(h // 2, w // 2) for p in pics]
    v = [p[w * h + size // 6 :].reshape(h // 2, w // 2) for p in pics]

    def run(side):
        ctx = vmafx.Context(w, h, features=["psnr"])
        ctx.submit(side(0), side(1))
        return ctx.finish().frames

    planes = run(lambda i: (y[i], u[i], v[i]))
    assert run(lambda i: pics[i]) == planes
    def surface(i):
        uv = np.empty((h // 2, w), dtype=np.uint8)
        uv[:, 0::2], uv[:, 1::2] = u[i], v[i]
        return np.vstack([y[i], uv])
    assert run(surface) == planes
    with pytest.raises(vmafx.VmafxError, match=r"one array is a packed planar picture \(279936,\)"):
        run(lambda i: y[i])


def test_array_interface_without_strides_reads_compact_rows():
    """`strides` is optional in the array interface (absent: compact rows)."""

    class NoStrides:
        def __init__(self, a):
            self.a = a  # keeps the memory alive
            self.__array_interface__ = {k: v for k, v in a.__array_interface__.items() if k != "strides"}

    rng = np.random.default_rng(7)
    planes = [rng.integers(0, 256, shape, dtype=np.uint8) for shape in ((64, 64), (32, 32), (32, 32))]
    results = []
    for wrap in (lambda a: a, NoStrides):
        ctx = vmafx.Context(64, 64, features=["psnr"])
        ctx.submit(tuple(wrap(p) for p in planes), tuple(wrap(255 - p) for p in planes))
        results.append(ctx.finish().frames)
    assert results[0] == results[1]


def test_features_with_options_and_aggregates():
    r = vmafx.score(SAMPLE_REF, SAMPLE_DIST, features=["psnr=enable_apsnr=true", "float_ssim"])
    assert "vmaf" not in r.names  # features only: no default model
    assert set(r.aggregate) >= {"apsnr_y", "apsnr_cb", "apsnr_cr"}
    assert 0 < r.pooled("float_ssim")["mean"] < 1


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda y, u, v: (y.astype(np.uint16), u, v), "expected a uint8 array"),
        (lambda y, u, v: (y[:, :-1], u, v), "shape (324, 575), expected (324, 576)"),
        (lambda y, u, v: (y[:, ::2], u, v), "strides [576, 2] (bytes): rows must be contiguous"),
        (lambda y, u, v: (np.asfortranarray(y), u, v), "strides [1, 324]"),
        (lambda y, u, v: (y, u), "plane 1: shape (162, 288), expected (162, 576)"),
        (lambda y, u, v: (y,), "shape (324, 576): one array is a packed planar picture (279936,)"),
        (lambda y, u, v: y, "shape (324, 576): one array is a packed planar picture"),
        (lambda y, u, v: (y, u, v, v), "4 planes for a 576x324 4:2:0 8-bit picture"),
        (lambda y, u, v: 42, "a tuple or list of planes"),
    ],
)
def test_bad_frames_raise_naming_what_was_wrong(make, message):
    ctx = vmafx.Context(576, 324)
    y, u, v = next(frames_of_sample())
    with pytest.raises(vmafx.VmafxError, match=None) as e:
        ctx.submit(make(y, u, v), (y, u, v))
    assert message in str(e.value)


def frames_of_sample():
    with open(SAMPLE_REF, "rb") as f:
        data = f.read()
    start = data.index(b"FRAME\n") + 6
    w, h = 576, 324
    y = np.frombuffer(data, np.uint8, w * h, start).reshape(h, w)
    u = np.frombuffer(data, np.uint8, (w // 2) * (h // 2), start + w * h).reshape(h // 2, w // 2)
    v = np.frombuffer(data, np.uint8, (w // 2) * (h // 2), start + w * h * 5 // 4).reshape(h // 2, w // 2)
    yield y, u, v


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: vmafx.score(SAMPLE_REF, SAMPLE_DIST, model="vmaf_v9"), "vmaf_v9"),
        (lambda: vmafx.score(SAMPLE_REF, SAMPLE_DIST, features=["no_such"]), "no_such"),
        (lambda: vmafx.score(SAMPLE_REF, SAMPLE_DIST, features=["psnr=bad=1"]), "'bad'"),
        (lambda: vmafx.score("/no/such.y4m", SAMPLE_DIST), "/no/such.y4m"),
        (lambda: vmafx.score(SAMPLE_REF, SAMPLE_DIST, width=576), "both width and height"),
        (lambda: vmafx.Context(576, 324, "411"), "411"),
        (lambda: vmafx.Context(576, 324, bit_depth=7), "bit depth 7"),
        (lambda: vmafx.score(SAMPLE_REF, SAMPLE_DIST).pooled("nothing"), "no value 'nothing'"),
        (lambda: vmafx.score(SAMPLE_REF, SAMPLE_DIST, frame_skip_ref=11), "ended while skipping 11 frames"),
        (lambda: vmafx.score(SAMPLE_REF, SAMPLE_DIST, backend="metal"), "backend 'metal'"),
    ],
)
def test_bad_arguments_raise_naming_what_was_wrong(call, message):
    with pytest.raises(vmafx.VmafxError) as e:
        call()
    assert message in str(e.value)


def test_a_finished_context_refuses_more_frames():
    ctx = vmafx.Context(576, 324)
    y, u, v = next(frames_of_sample())
    ctx.submit((y, u, v), (y, u, v))
    # One identical pair: libvmaf's score of a first frame with no motion.
    assert ctx.finish().pooled("vmaf")["mean"] == pytest.approx(97.428, abs=1e-3)
    with pytest.raises(vmafx.VmafxError, match="finished"):
        ctx.submit((y, u, v), (y, u, v))


def test_a_frame_range_scores_as_the_command_line(tmp_path):
    """frame_skip_ref, frame_skip_dist and frame_cnt are the command line's:
    the range is scored as a run of its own (frame 0: no motion)."""
    r = vmafx.score(SAMPLE_REF, SAMPLE_DIST, frame_skip_ref=3, frame_skip_dist=2, frame_cnt=4)
    out = tmp_path / "o.json"
    subprocess.run(
        [sys.executable, "-m", "vmafx", "-r", str(SAMPLE_REF), "-d", str(SAMPLE_DIST), "--frame_skip_ref", "3",
         "--frame_skip_dist", "2", "--frame_cnt", "4", "--json", "--precision", "max", "-q", "-o", str(out)],
        check=True,
    )
    cli = json.loads(out.read_text())
    assert r.indices == [0, 1, 2, 3] and r.frames == [f["metrics"] for f in cli["frames"]]
    assert r.pooled("vmaf") == cli["pooled_metrics"]["vmaf"]
    # Past the end: what is there.
    assert len(vmafx.score(SAMPLE_REF, SAMPLE_DIST, frame_skip_ref=8, frame_skip_dist=8, frame_cnt=5)) == 2


def test_python_m_vmafx_is_the_command_line(tmp_path):
    out = tmp_path / "o.json"
    subprocess.run(
        [sys.executable, "-m", "vmafx", "-r", str(SAMPLE_REF), "-d", str(SAMPLE_DIST),
         "--json", "--precision", "max", "-q", "-o", str(out)],
        check=True,
    )
    assert json.loads(out.read_text())["pooled_metrics"]["vmaf"]["mean"] == SAMPLE_VMAF
    v = subprocess.run([sys.executable, "-m", "vmafx", "-v"], capture_output=True, text=True)
    assert v.returncode == 0 and v.stderr.strip() == "3.2.0"
