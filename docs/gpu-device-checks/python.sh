#!/usr/bin/env bash
# The Python package on a GPU machine: the device-array tests, then NVDEC
# frames from PyNvVideoCodec scored in place (examples/python/nvdec_in_place.py).
#
# Carried (device tool, carry [".pycarry", ".clips"]; 64 MiB in all):
#   .pycarry/vmafx-*.whl  vmafx's wheel (maturin build --release -m
#                         python/Cargo.toml -o .pycarry)
#   .pycarry/pytest*.whl ... pytest and its wheels (pip download -d .pycarry
#                         pytest), for the tests; left out, they are skipped
#   .pycarry/pynvc.tar.xz PyNvVideoCodec's wheel (the machine's Python)
#                         unpacked without its bundled FFmpeg source, samples
#                         and notebooks (the whole wheel is over the limit)
#   .clips/{ref,dist}_SIZE_CODEC.mp4  the clips to decode (docs/ffmpeg.md
#                         says how the 1080p ones are made; 2160p: those
#                         scaled up and encoded again with x264)
# Written for the H200 device machines (Python 3.12, no network).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/vmafx-out}; mkdir -p "$OUT"
P=/tmp/pyenv; rm -rf $P; mkdir -p $P/site
python3 --version
python3 -m pip install --quiet --no-index --no-deps --target $P/site .pycarry/*.whl 2>&1 | tail -3
tar xJf .pycarry/pynvc.tar.xz -C $P/site
export PYTHONPATH=$P/site VMAFX_REQUIRE_GPU=1 VMAFX_KERNEL_CACHE=/tmp/vmafx-kc
failed=0

if compgen -G ".pycarry/pytest-*.whl" > /dev/null; then
    echo "== pytest python/tests/test_device.py"
    python3 -m pytest -q -rs -p no:cacheprovider python/tests/test_device.py 2>&1 | tail -15
    [ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
fi

for ref in .clips/ref_*.mp4; do
    dist=${ref/ref_/dist_}
    echo "== $(basename "$ref" .mp4 | sed 's/^ref_//'): NVDEC frames scored in place"
    python3 examples/python/nvdec_in_place.py "$ref" "$dist" --check --rate 2>&1 | tail -4
    [ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
done
exit $failed
