"""Scores many reference/distorted pairs with Ray: one Ray task per pair,
or per segment of a long pair (docs/scale.md).

Each task calls `vmafx.score` in a Ray worker and returns plain data (the
per-frame values and the pooled ones), so nothing of vmafx crosses between
processes. A segment is scored with a few frames of context on each side
(motion looks at neighbouring frames) and only its own frames are kept;
the segments' frames are concatenated and pooled again with libvmaf's
pooling, so a segmented pair gives the same numbers as one task, bit for
bit.

    python examples/python/ray_fleet.py REF DIST [REF DIST ...] \\
        [--model vmaf_v0.6.1] [--feature psnr] [--threads 2] [--gpus 1] \\
        [--segment 300] [--address auto]

As a library: `fleet(pairs, ...)` (see its docstring); `python/tests/
test_ray.py` runs it on a local two-CPU Ray instance.
"""

import argparse
import json
import os
import re
import sys
from pathlib import Path

import ray

import vmafx

POOLS = ("min", "max", "mean", "harmonic_mean")

# Frames of context a segment is scored with, before and after its own.
# Temporal features look at neighbours: motion/float_motion/speed_temporal
# and motion_v2 need the previous frame, motion2 the next one; motion's
# five-frame window (SAD against frame i - 2, motion2 from frames i - 1 and
# i + 1) with the moving average (which takes the previous frame's motion3)
# reaches back 4 frames. Every other feature scores each frame alone.
CONTEXT_BEFORE = 4
CONTEXT_AFTER = 1


def pool(values):
    """libvmaf's pooling of per-frame values given in frame order: plain
    double sums in that order (no compensated summation, unlike `sum` from
    Python 3.12 on), the harmonic mean shifted by one, min and max replaced
    only on strict comparisons (as vmafx and libvmaf do)."""
    n = 0
    total = inverse = 0.0
    lo = hi = None
    for x in values:
        if n == 0 or x < lo:
            lo = x
        if n == 0 or x > hi:
            hi = x
        total += x
        inverse += 1.0 / (x + 1.0)
        n += 1
    if n == 0:
        return None
    return {"min": lo, "max": hi, "mean": total / n, "harmonic_mean": n / inverse - 1.0}


def frame_count(path, width=None, height=None, pix_fmt="420", bit_depth=8):
    """The number of frames of a .y4m file (its header and FRAME lines are
    read, the pictures skipped), or of a raw .yuv file of the given format."""
    path = Path(path)
    if path.suffix != ".y4m":
        if width is None or height is None:
            raise ValueError(f"{path}: give width and height for raw .yuv input")
        return path.stat().st_size // _frame_bytes(width, height, pix_fmt, bit_depth)
    with open(path, "rb") as f:
        fields = f.readline().split()[1:]
        tags = {t[:1]: t[1:].decode() for t in fields}
        colour = tags.get(b"C", "420jpeg")
        m = re.fullmatch(r"(420|422|444)p(\d+)", colour)  # "420p10"; not "420paldv"
        depth = int(m[2]) if m else 16 if colour == "mono16" else 8
        size = _frame_bytes(int(tags[b"W"]), int(tags[b"H"]), colour, depth)
        n = 0
        while f.readline().startswith(b"FRAME"):
            f.seek(size, 1)
            n += 1
        return n


def _frame_bytes(width, height, pix_fmt, bit_depth):
    item = 2 if bit_depth > 8 else 1
    if pix_fmt.startswith("mono"):
        chroma = 0
    elif pix_fmt.startswith("420"):
        chroma = 2 * ((width + 1) // 2) * ((height + 1) // 2)
    elif pix_fmt.startswith("422"):
        chroma = 2 * ((width + 1) // 2) * height
    elif pix_fmt.startswith("444"):
        chroma = 2 * width * height
    else:
        raise ValueError(f"pixel format {pix_fmt!r}")
    return item * (width * height + chroma)


def score_pair(reference, distorted, options, first=0, count=None):
    """Scores one pair, or frames [first, first + count) of it, with
    `vmafx.score(reference, distorted, **options)`: a dict of plain data
    (frame indices in the file, per-frame values, pooled values; whole-run
    aggregates for a whole pair). A segment is read with CONTEXT_BEFORE and
    CONTEXT_AFTER frames around it (fewer at the file's ends), whose values
    are dropped."""
    if count is None and first == 0:
        r = vmafx.score(str(reference), str(distorted), **options)
        return {
            "indices": r.indices,
            "frames": r.frames,
            "pooled": {name: r.pooled(name) for name in r.names},
            "aggregate": r.aggregate,
        }
    start = max(first - CONTEXT_BEFORE, 0)
    window = None if count is None else first + count + CONTEXT_AFTER - start
    r = vmafx.score(str(reference), str(distorted), frame_skip_ref=start, frame_skip_dist=start,
                    frame_cnt=window, **options)
    end = float("inf") if count is None else first + count
    keep = [(start + i, v) for i, v in zip(r.indices, r.frames) if first <= start + i < end]
    return {"indices": [i for i, _ in keep], "frames": [v for _, v in keep]}


def merge(parts):
    """One pair's result from its segments' results, in frame order: the
    frames concatenated, every name pooled again over all of them."""
    indices = [i for p in parts for i in p["indices"]]
    frames = [f for p in parts for f in p["frames"]]
    names = list(frames[0]) if frames else []
    pooled = {}
    for name in names:
        if all(name in f for f in frames):
            pooled[name] = pool(f[name] for f in frames)
    return {"indices": indices, "frames": frames, "pooled": pooled}


def fleet(pairs, model=None, models=None, features=None, threads=1, gpus=0, segment=None):
    """Scores `pairs` on the Ray cluster `ray.init` joined; returns one
    result dict per pair, in order (see `score_pair`; `aggregate` only for
    pairs scored whole).

    pairs: (reference, distorted) file paths, or (reference, distorted,
    raw_format) for raw .yuv files, raw_format a dict of `vmafx.score`'s
    width, height, pix_fmt and bit_depth.

    model, models, features: as `vmafx.score`'s. threads: vmafx threads per
    task, and the CPUs each task asks Ray for. gpus: the GPU each task
    asks Ray for (`num_gpus`): 0 (the CPU engine), 1, or a fraction to share
    one GPU between tasks; a task with one scores with `backend="cuda"` on
    device 0, which is the GPU that Ray assigned it (Ray sets
    CUDA_VISIBLE_DEVICES for the task). segment: frames per task for pairs
    longer than that.
    """
    if threads < 1:
        raise ValueError("threads: at least 1 (each task's vmafx threads, and its Ray CPUs)")
    if not 0 <= gpus <= 1:
        raise ValueError("gpus: from 0 to 1 (a task scores on one GPU)")
    common = {"model": model, "models": models, "features": features, "threads": threads}
    if gpus:
        common.update(backend="cuda", device="0")
    task = ray.remote(score_pair).options(num_cpus=threads, num_gpus=gpus)
    plans = []
    for reference, distorted, *raw in pairs:
        # Workers need not share the driver's working directory (on other
        # hosts, files are found by the same absolute path: shared storage).
        reference, distorted = os.path.abspath(reference), os.path.abspath(distorted)
        raw_format = raw[0] if raw else {}
        options = {**common, **raw_format}
        # vmafx scores as many frames as the shorter file has.
        n = min(frame_count(reference, **raw_format), frame_count(distorted, **raw_format)) if segment else 0
        if segment and n > segment:
            plans.append([task.remote(reference, distorted, options, first, min(segment, n - first))
                          for first in range(0, n, segment)])
        else:
            plans.append(task.remote(reference, distorted, options))
    return [merge(ray.get(p)) if isinstance(p, list) else ray.get(p) for p in plans]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="REF DIST pairs")
    ap.add_argument("--model", action="append", help="a model (a built-in name or a spec); repeatable")
    ap.add_argument("--feature", action="append", help="a feature (as --feature on the command line); repeatable")
    ap.add_argument("--threads", type=int, default=1, help="vmafx threads and Ray CPUs per task (1)")
    ap.add_argument("--gpus", type=float, default=0,
                    help="GPUs per task: 0 (CPU), 1, or a fraction to share a GPU; scored with backend cuda")
    ap.add_argument("--segment", type=int, help="frames per task for longer pairs")
    ap.add_argument("--address", help="the Ray cluster to join: 'auto' (the one `ray start` began on this "
                    "host), 'local' (a new one here), HOST:PORT; default: Ray's (RAY_ADDRESS, else a cluster "
                    "started on this host, else a new one)")
    ap.add_argument("--width", type=int)
    ap.add_argument("--height", type=int)
    ap.add_argument("--pix-fmt", default="420")
    ap.add_argument("--bit-depth", type=int, default=8)
    a = ap.parse_args(argv)
    if len(a.files) % 2:
        ap.error("give reference and distorted files in pairs")
    raw = [dict(width=a.width, height=a.height, pix_fmt=a.pix_fmt, bit_depth=a.bit_depth)] if a.width else []
    ray.init(address=a.address, include_dashboard=False)
    pairs = [(r, d, *raw) for r, d in zip(a.files[0::2], a.files[1::2])]
    results = fleet(pairs, models=a.model, features=a.feature, threads=a.threads, gpus=a.gpus,
                    segment=a.segment)
    for (reference, distorted, *_), r in zip(pairs, results):
        summary = {name: p["mean"] for name, p in r["pooled"].items() if name.startswith("vmaf")}
        print(json.dumps({"reference": reference, "distorted": distorted, "frames": len(r["frames"]),
                          "mean": summary or {n: p["mean"] for n, p in r["pooled"].items()}}))
    ray.shutdown()


if __name__ == "__main__":
    sys.exit(main())
