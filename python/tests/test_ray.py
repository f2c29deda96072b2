"""Fleets on Ray (examples/python/ray_fleet.py) on a local two-CPU Ray
instance: the sample pair and golden pairs scored as separate Ray tasks,
whole and in segments, give what `vmafx.score` gives run directly and
libvmaf 3.2's goldens, bit for bit. Without Ray the tests skip
(VMAFX_REQUIRE_RAY=1, which CI sets, makes that a failure)."""

import importlib.util
import json
import os
from pathlib import Path

import pytest
import zstandard

import vmafx

try:
    import ray
except ImportError as e:
    if os.environ.get("VMAFX_REQUIRE_RAY") == "1":
        raise
    pytest.skip(f"Ray is not installed ({e}): pip install 'ray>=2.9,<3'", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
EXAMPLE = ROOT / "examples" / "python"
SAMPLE = (ROOT / "examples" / "data" / "ref_576x324.y4m", ROOT / "examples" / "data" / "dist_576x324_x264_crf30.y4m")
# (folder, distorted, raw format): 30 frames 8-bit 4:2:0, 12 frames 10-bit
# 4:2:0, 8 frames 10-bit 4:2:2.
GOLDEN_PAIRS = [
    ("a_576x324_420p8_pan", "x264_crf30", dict(width=576, height=324, pix_fmt="420", bit_depth=8)),
    ("c_576x324_420p10_zoom", "x265_main10_crf30", dict(width=576, height=324, pix_fmt="420", bit_depth=10)),
    ("d_352x288_422p10_pan", "x264_422p10_crf30", dict(width=352, height=288, pix_fmt="422", bit_depth=10)),
]


@pytest.fixture(scope="module")
def fleet():
    """The example as a module, on a local Ray instance of two CPUs. The
    module is loaded from its file (not importable by name), so Ray sends
    the tasks' function to the workers by value."""
    spec = importlib.util.spec_from_file_location("ray_fleet", EXAMPLE / "ray_fleet.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # CI reaches no usage server
    # "local": a new instance, even where `ray start` left a cluster behind.
    # One GPU is declared (a logical resource where there is none) so that
    # a GPU task is scheduled.
    ray.init(address="local", num_cpus=2, num_gpus=1, include_dashboard=False)
    assert ray.cluster_resources()["CPU"] == 2
    yield module
    ray.shutdown()


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    """The sample pair, then the golden pairs decompressed: (reference,
    distorted[, raw format]) and each one's golden (None for the sample)."""
    out = tmp_path_factory.mktemp("golden")
    listed, goldens = [SAMPLE], [None]
    for folder, distorted, raw in GOLDEN_PAIRS:
        files = []
        for name in ("ref", distorted):
            path = out / f"{folder}.{name}.yuv"
            path.write_bytes(zstandard.ZstdDecompressor().decompress(
                (GOLDEN / folder / f"{name}.yuv.zst").read_bytes(), max_output_size=1 << 30))
            files.append(path)
        listed.append((*files, raw))
        goldens.append(json.loads((GOLDEN / folder / f"{distorted}.vmaf_v0.6.1.json").read_text()))
    return listed, goldens


def direct(pair, **options):
    """`vmafx.score` as the fleet's tasks call it: with one thread unless
    told (the feature order, like libvmaf's, depends on whether there are
    worker threads)."""
    reference, distorted, *raw = pair
    options.setdefault("threads", 1)
    return vmafx.score(reference, distorted, **options, **(raw[0] if raw else {}))


def assert_same(result, expected, whole=True):
    """A fleet's result dict is `vmafx.score`'s Result, bit for bit (floats
    compared with ==)."""
    assert result["indices"] == expected.indices
    assert result["frames"] == expected.frames
    assert list(result["pooled"]) == expected.names
    for name in expected.names:
        assert result["pooled"][name] == expected.pooled(name), name
    if whole:
        assert result["aggregate"] == expected.aggregate


def assert_golden(result, gold):
    assert len(result["frames"]) == len(gold["frames"])
    for ours, theirs in zip(result["frames"], gold["frames"]):
        for name, value in theirs["metrics"].items():
            assert ours[name] == value, (theirs["frameNum"], name)
    for name, pooled in gold["pooled_metrics"].items():
        assert result["pooled"][name] == pooled, name


def test_pairs_as_ray_tasks_give_the_direct_scores_and_the_goldens(fleet, pairs):
    listed, goldens = pairs
    results = fleet.fleet(listed, model="vmaf_v0.6.1", threads=1)
    assert len(results) == len(listed)
    for pair, result, gold in zip(listed, results, goldens):
        assert_same(result, direct(pair, model="vmaf_v0.6.1", threads=1))
        if gold:
            assert_golden(result, gold)
    assert results[0]["pooled"]["vmaf"]["mean"] == 95.065082326734753  # the sample's


def test_segments_pool_to_the_whole_pair(fleet, pairs):
    """Frame ranges scored as separate tasks (7 frames each: the 30-frame
    pair in 5 tasks), concatenated and pooled again: the whole pair's values
    and pooled scores, motion at the segments' edges included."""
    listed, goldens = pairs
    results = fleet.fleet(listed, segment=7)
    for pair, result, gold in zip(listed, results, goldens):
        assert_same(result, direct(pair), whole=False)
        if gold:
            assert_golden(result, gold)


def test_segments_keep_the_longest_temporal_window(fleet, pairs, monkeypatch):
    """motion's five-frame window with the moving average reaches 4 frames
    back (the example's CONTEXT_BEFORE); float_motion and speed_temporal
    look at the previous frame. Segments of 4 frames give the whole pair's
    values; with one frame less of context they would not."""
    features = ["motion=motion_five_frame_window=true:motion_moving_average=true", "float_motion",
                "speed_temporal", "psnr"]
    pair = pairs[0][1]
    whole = direct(pair, features=features)
    [result] = fleet.fleet([pair], features=features, segment=4)
    assert_same(result, whole, whole=False)

    # The same segments in this process, with one frame less of context.
    def segmented(before):
        monkeypatch.setattr(fleet, "CONTEXT_BEFORE", before)
        options = {"features": features, **pair[2]}
        return fleet.merge([fleet.score_pair(pair[0], pair[1], options, first, 4) for first in range(0, 30, 4)])

    assert segmented(4)["frames"] == whole.frames
    assert segmented(3)["frames"] != whole.frames


def test_a_gpu_task_scores_on_the_gpu_ray_assigned(fleet, pairs):
    """A task given half the GPU scores with backend cuda on device 0 (the
    GPU in its CUDA_VISIBLE_DEVICES): the CPU engine's values, bit for bit.
    Without a CUDA device the task reaches vmafx and fails there; the test
    then skips (VMAFX_REQUIRE_GPU=1 makes that a failure)."""
    pair = pairs[0][1]
    try:
        [result] = fleet.fleet([pair], gpus=0.5)
    except ray.exceptions.RayTaskError as e:
        assert "backend cuda unavailable" in str(e)
        if os.environ.get("VMAFX_REQUIRE_GPU") == "1":
            raise
        pytest.skip("no CUDA device: the GPU task asked vmafx for backend cuda, which failed")
    assert_same(result, direct(pair))


def test_options_are_checked(fleet):
    with pytest.raises(ValueError, match="threads"):
        fleet.fleet([SAMPLE], threads=0)
    with pytest.raises(ValueError, match="gpus"):
        fleet.fleet([SAMPLE], gpus=2)
    assert fleet.pool([]) is None
    assert fleet.pool([1.0, 3.0]) == {"min": 1.0, "max": 3.0, "mean": 2.0, "harmonic_mean": 2 / 0.75 - 1}
