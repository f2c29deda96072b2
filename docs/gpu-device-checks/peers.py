#!/usr/bin/env python3
"""vmafx beside libvmaf 3.2 (CUDA), same frames, same feed, same call.

Written for the H200 device machines. Before (here):
    bash docs/gpu-device-checks/build-for-device.sh
    ls .anchor   # ../shared/anchor's files, thirdparty/{vmaf,nv-codec-headers}
                 # tarballs and nasm.xz (docs/performance.md, "Reproducing")
then the device tool, carry [".gpu-carry", ".anchor"], command
    python3 docs/gpu-device-checks/peers.py [PART ...]
PART: cli, library, readers (none: cli and library). Environment:
PEER_FRAMES (frames per pair, 100), PEER_SIZES (heights, "1080,2160"),
PEER_EXTS (cli inputs, "yuv,y4m"), PEER_RUNS (runs per row, 3).

What each row times (the feeds, defined once for both libraries):

* cli: the whole process, `vmaf` (libvmaf's tool, CUDA) against
  `vmafx --backend cuda`, the same `.yuv` or `.y4m` pair (written by
  examples/bench_pairs.rs, read once first so it is in the page cache),
  `vmaf_v0.6.1`, JSON log to a file. Minor page faults of the process.
  Both tools spend 0.25-0.45 s starting (CUDA's initialisation most of
  it), which a 100-frame run cannot hide: each is also run on the first
  frame alone, and "per frame beyond start-up" is
  99 / (time of 100 frames - time of 1 frame), medians of the runs
  ("noise" where that difference is no larger than the spread of the
  100-frame runs). The
  read limit is both files read once on two threads (one each) into a
  reused buffer: the rate no reader can beat.
* `.gpu-carry/vmafx-before.xz` or `lib_bench-before.xz`, when carried
  (the same program built at the commit in `.gpu-carry/before`): run
  interleaved with the others, in a column of its own.
* library, `host`: a C or Rust client holding every frame in memory makes
  a picture per frame through the library (libvmaf: vmaf_picture_alloc;
  vmafx: Context::picture), copies the frame into it and submits it;
  timed from the first submit to the pooled score. `host_pool`: libvmaf's
  preallocated pictures (vmaf_fetch_preallocated_picture), its fastest
  host feed. `device`: frames already in device memory.

Each pair of runs is interleaved (A B A B A B) and reported as
min / median / max frames per second of the runs; the pooled VMAF of both
tools is printed beside them, and a difference is reported.
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.environ.get("OUT", "/tmp/vmafx-out")
BIN = "/tmp/vmafx-bin"
LV = "/tmp/lvw"
VMAF = f"{LV}/vmaf-f85a853/libvmaf/build/tools/vmaf"
PAIRS = "/tmp/pairs"
RUNS = int(os.environ.get("PEER_RUNS", "3"))
FRAMES = int(os.environ.get("PEER_FRAMES", "100"))
SIZES = [int(h) for h in os.environ.get("PEER_SIZES", "1080,2160").split(",")]
EXTS = os.environ.get("PEER_EXTS", "yuv,y4m").split(",")


def sh(cmd, **kw):
    print("$", cmd, flush=True)
    subprocess.run(cmd, shell=True, check=True, cwd=ROOT, **kw)


def setup():
    os.makedirs(OUT, exist_ok=True)
    if not os.path.exists(f"{BIN}/vmafx"):
        os.makedirs(BIN, exist_ok=True)
        sh(f"tar xJf .gpu-carry/bin.tar.xz -C {BIN} --strip-components 1")
    if not os.path.exists(VMAF):
        sh(f"bash .anchor/build_libvmaf_cuda.sh .anchor/thirdparty {LV} .anchor/nasm.xz > {OUT}/anchor.log 2>&1"
           f" || (tail -30 {OUT}/anchor.log; false)")
    stamp = f"{PAIRS}/made-{','.join(map(str, SIZES))}-{FRAMES}"
    if not os.path.exists(stamp):
        sh(f"rm -rf {PAIRS}; VMAFX_TEST_ROOT={ROOT} {BIN}/bench_pairs {PAIRS} "
           f"--sizes {','.join(map(str, SIZES))} --frames {FRAMES} > /dev/null && touch {stamp}")
    # Into the page cache.
    for f in os.listdir(PAIRS):
        with open(os.path.join(PAIRS, f), "rb") as fh:
            while fh.read(1 << 24):
                pass


def unpack_before(name):
    """`.gpu-carry/NAME-before.xz` (the same program built at the commit in
    .gpu-carry/before), unpacked; None when not carried."""
    src = os.path.join(ROOT, ".gpu-carry", f"{name}-before.xz")
    if not os.path.exists(src):
        return None
    import lzma
    import shutil
    dst = f"{BIN}/{name}-before"
    with lzma.open(src) as f, open(dst, "wb") as o:
        shutil.copyfileobj(f, o)
    os.chmod(dst, 0o755)
    return dst


def timed(argv):
    """Wall seconds and minor page faults of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
    t = time.perf_counter()
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    faults = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - before
    if r.returncode != 0:
        raise SystemExit(f"failed ({r.returncode}): {' '.join(argv)}\n{r.stderr[-2000:]}")
    return wall, faults, r.stdout


def spread(values):
    return min(values), statistics.median(values), max(values)


def pooled_vmaf(path):
    with open(path) as f:
        return json.load(f)["pooled_metrics"]["vmaf"]["mean"]


def read_limit(files, frames):
    """Frames per second of reading `files` once, one thread each."""
    import threading

    def read(path):
        buf = memoryview(bytearray(1 << 24))
        with open(path, "rb", buffering=0) as f:
            while f.readinto(buf):
                pass
    t = time.perf_counter()
    threads = [threading.Thread(target=read, args=(f,)) for f in files]
    for x in threads:
        x.start()
    for x in threads:
        x.join()
    return frames / (time.perf_counter() - t)


def striped_read(files, threads, frame_bytes, frames):
    """Frames per second of reading `files` once, each frame of each file
    split into `threads` stripes read at their offsets (pread) by threads
    of their own: what readers splitting a frame could reach."""
    import threading

    def read(path, k):
        part = -(-frame_bytes // threads)
        buf = bytearray(part)
        fd = os.open(path, os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            header = size - frame_bytes * frames  # y4m: file header and frame headers, ignored here
            for f in range(frames):
                at = k * part
                n = min(part, frame_bytes - at)
                if n > 0:
                    os.preadv(fd, [memoryview(buf)[:n]], max(header, 0) + f * frame_bytes + at)
        finally:
            os.close(fd)
    t = time.perf_counter()
    pool = [threading.Thread(target=read, args=(f, k)) for f in files for k in range(threads)]
    for x in pool:
        x.start()
    for x in pool:
        x.join()
    return frames / (time.perf_counter() - t)


def readers():
    """The read limit by reader threads per input, raw .yuv pairs."""
    print("| input | threads per input | fps (min/med/max of 3) | GB/s (median) |")
    print("|---|---|---|---|")
    for h in SIZES:
        w = h * 16 // 9
        for bits in (8, 10):
            files = [f"{PAIRS}/{k}_{w}x{h}_{bits}bit.yuv" for k in ("ref", "dist")]
            frame = w * h * 3 // 2 * (1 if bits == 8 else 2)
            for threads in (1, 2, 4, 8):
                fps = spread([striped_read(files, threads, frame, FRAMES) for _ in range(3)])
                print(f"| {w}x{h} {bits}-bit | {threads} | {fps[0]:.0f} / {fps[1]:.0f} / {fps[2]:.0f} "
                      f"| {fps[1] * frame * 2 / 1e9:.1f} |", flush=True)


def beyond_start_up(walls, firsts):
    """Frames per second after the first: 99 / (median of the whole runs -
    median of the 1-frame runs); None where that difference is no larger
    than the whole runs' spread (a difference of noise)."""
    rest = statistics.median(walls) - statistics.median(firsts)
    if rest <= max(walls) - min(walls):
        return None
    return (FRAMES - 1) / rest


def fmt_rate(fps):
    return "noise" if fps is None else f"{fps:.0f}"


def fmt_ratio(a, b):
    return "" if a is None or b is None else f" ({a / b:.2f}x)"


def cli():
    before = unpack_before("vmafx")
    if before:
        print(f"vmafx before: {open(os.path.join(ROOT, '.gpu-carry', 'before')).read().strip()}")
    print("| input | libvmaf `vmaf` fps (min/med/max) | vmafx fps (min/med/max) | ratio (medians) "
          "| per frame beyond start-up, fps libvmaf / vmafx (ratio) | read limit fps "
          "| faults/frame libvmaf / vmafx | pooled vmaf libvmaf / vmafx "
          + ("| vmafx before fps (min/med/max), beyond start-up |" if before else "|"))
    print("|---|---|---|---|---|---|---|---|" + ("---|" if before else ""))
    for h in SIZES:
        w = h * 16 // 9
        for bits in (8, 10):
            for ext in EXTS:
                ref = f"{PAIRS}/ref_{w}x{h}_{bits}bit.{ext}"
                dist = f"{PAIRS}/dist_{w}x{h}_{bits}bit.{ext}"
                geometry = ["-w", str(w), "-h", str(h), "-p", "420", "-b", str(bits)] if ext == "yuv" else []
                common = ["-r", ref, "-d", dist, *geometry, "--json"]
                tools = {
                    "libvmaf": [VMAF, *common, "-o", f"{OUT}/lv.json"],
                    "vmafx": [f"{BIN}/vmafx", *common, "--backend", "cuda", "-q", "-o", f"{OUT}/vx.json"],
                }
                if before:
                    tools["before"] = [before, *common, "--backend", "cuda", "-q", "-o", f"{OUT}/vb.json"]
                for argv in tools.values():  # warm: kernel caches, page cache
                    timed(argv + ["--frame_cnt", "1"])
                res = {k: [] for k in tools}
                first = {k: [] for k in tools}
                for _ in range(RUNS):
                    for k, argv in tools.items():
                        res[k].append(timed(argv))
                        first[k].append(timed(argv + ["--frame_cnt", "1"])[0])
                fps = {k: spread([FRAMES / wall for wall, _, _ in v]) for k, v in res.items()}
                beyond = {k: beyond_start_up([w for w, _, _ in res[k]], first[k]) for k in tools}
                limit = read_limit([ref, dist], FRAMES)
                faults = {k: statistics.median(f for _, f, _ in v) / FRAMES for k, v in res.items()}
                scores = (pooled_vmaf(f"{OUT}/lv.json"), pooled_vmaf(f"{OUT}/vx.json"))
                flag = "" if abs(scores[0] - scores[1]) < 1e-4 else " DIFFER"
                print(f"| {w}x{h} {bits}-bit .{ext}, {FRAMES} frames "
                      f"| {fps['libvmaf'][0]:.0f} / {fps['libvmaf'][1]:.0f} / {fps['libvmaf'][2]:.0f} "
                      f"| {fps['vmafx'][0]:.0f} / {fps['vmafx'][1]:.0f} / {fps['vmafx'][2]:.0f} "
                      f"| {fps['vmafx'][1] / fps['libvmaf'][1]:.2f}x "
                      f"| {fmt_rate(beyond['libvmaf'])} / {fmt_rate(beyond['vmafx'])}{fmt_ratio(beyond['vmafx'], beyond['libvmaf'])} "
                      f"| {limit:.0f} "
                      f"| {faults['libvmaf']:.0f} / {faults['vmafx']:.0f} "
                      f"| {scores[0]:.6f} / {scores[1]:.6f}{flag} |"
                      + (f" {fps['before'][0]:.0f} / {fps['before'][1]:.0f} / {fps['before'][2]:.0f}, "
                         f"{fmt_rate(beyond['before'])} |" if before else ""), flush=True)


# (row, cudabench mode, lib_bench mode): a picture per frame from the
# library (fresh, or libvmaf's preallocated pool), frames on the device.
LIBRARY_FEEDS = (
    ("host: a picture per frame from the library", "host", "host"),
    ("host: libvmaf's preallocated pictures", "host_pool", "host"),
    ("device: frames already on the device", "device", "device"),
)


def library():
    before = unpack_before("lib_bench")
    warm = 20
    print("| feed | size | libvmaf fps (min/med/max) | vmafx fps (min/med/max) | ratio (medians) "
          "| faults/frame, whole process, libvmaf / vmafx | vmafx faults/frame, timed window |"
          + (" vmafx before fps (min/med/max) |" if before else ""))
    print("|---|---|---|---|---|---|---|" + ("---|" if before else ""))
    for h in (1080, 2160):
        w = h * 16 // 9
        n = 1000 if h == 1080 else 400
        ref, dist = f"{PAIRS}/ref_{w}x{h}_8bit.yuv", f"{PAIRS}/dist_{w}x{h}_8bit.yuv"
        for feed, lv_mode, vx_mode in LIBRARY_FEEDS:
            tools = {
                "libvmaf": [f"{LV}/cudabench", lv_mode, str(w), str(h), ref, dist, str(n), str(warm)],
                "vmafx": [f"{BIN}/lib_bench", vx_mode, str(w), str(h), ref, dist, str(n), str(warm)],
            }
            if before:
                tools["before"] = [before, vx_mode, str(w), str(h), ref, dist, str(n), str(warm)]
            res = {k: [] for k in tools}
            for _ in range(RUNS):
                for k, argv in tools.items():
                    res[k].append(timed(argv))
            # Both print "fps=F" (frames per second of the timed window).
            def field(out, key):
                for tok in out.split():
                    if tok.startswith(key + "="):
                        return float(tok[len(key) + 1:])
                raise SystemExit(f"no {key}= in output:\n" + out)
            fps = {k: spread([field(o, "fps") for _, _, o in v]) for k, v in res.items()}
            window = statistics.median(field(o, "faults_per_frame") for _, _, o in res["vmafx"])
            faults = {k: statistics.median(f for _, f, _ in v) / (n + warm) for k, v in res.items()}
            print(f"| {feed} | {w}x{h} 8-bit "
                  f"| {fps['libvmaf'][0]:.0f} / {fps['libvmaf'][1]:.0f} / {fps['libvmaf'][2]:.0f} "
                  f"| {fps['vmafx'][0]:.0f} / {fps['vmafx'][1]:.0f} / {fps['vmafx'][2]:.0f} "
                  f"| {fps['vmafx'][1] / fps['libvmaf'][1]:.2f}x "
                  f"| {faults['libvmaf']:.1f} / {faults['vmafx']:.1f} | {window:.2f} |"
                  + (f" {fps['before'][0]:.0f} / {fps['before'][1]:.0f} / {fps['before'][2]:.0f} |" if before else ""),
                  flush=True)


if __name__ == "__main__":
    parts = sys.argv[1:] or ["cli", "library"]
    setup()
    subprocess.run("nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; "
                   "cat .gpu-carry/commit", shell=True, cwd=ROOT)
    for p in parts:
        print(f"=== {p}", flush=True)
        {"cli": cli, "library": library, "readers": readers}[p]()
