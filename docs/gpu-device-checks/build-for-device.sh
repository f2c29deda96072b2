#!/usr/bin/env bash
# Builds, on the development machine, everything suites.sh and bench.sh run
# on a GPU machine, and packs it into .gpu-carry/bin.tar.xz:
#
#   every test binary with GPU suites (`cargo test --no-run`, test profile:
#   opt-level 3),
#   the release `vmafx` binary (the CLI checks and the tests' VMAFX_BIN),
#   the release examples (gpu_bench and the producer examples),
#   the HIP-over-CUDA test runtime (tests/hip_over_cuda, for hip.sh) as
#   libhip_over_cuda.so.
#
# Usage, from anywhere in the checkout:
#   bash docs/gpu-device-checks/build-for-device.sh
# then call the device tool with carry [".gpu-carry", ".gl"] (".gl": the
# Vulkan/EGL loader packages, see docs/gpu-testing.md) and the command
#   bash docs/gpu-device-checks/suites.sh      (or bench.sh, or hip.sh)
#
# The device machine has no Rust toolchain, so binaries are built here; the
# scripts themselves travel with the working tree. Keep `.gpu-carry` out of
# git: `echo /.gpu-carry/ >> "$(git rev-parse --git-common-dir)/info/exclude"`.
# The carry limit is 64 MiB in all: binaries are stripped and compressed.
#
# Written for the H200 device machines; when the scripts last ran, and what
# they printed, is recorded in docs/gpu-testing.md and docs/performance.md.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
# Where cargo puts what it builds (CARGO_TARGET_DIR when set).
TGT=${CARGO_TARGET_DIR:-target}

# The test binaries that hold GPU suites (suites.sh runs them module by
# module): tests/gpu, tests/import (its gpu module), tests/import_serial
# (gpu_layer, gpu_producers) and tests/capi (the C library's CUDA
# pictures). tests/api is not among them: its cli tests expect
# `--backend cuda` to fail, which holds only where there is no GPU.
TESTS=(capi gpu import import_serial)
EXAMPLES=(gpu_bench bench_pairs lib_bench decoder_producer gl_producer vulkan_producer)

# Every GPU module needs a suite in device-common.sh's SUITE_TESTS, which
# suites.sh runs (amd_kernels needs hipcc, not a GPU: CI runs it).
for f in tests/gpu/*.rs tests/import/gpu*.rs tests/import_serial/gpu*.rs; do
    b=$(basename "$(dirname "$f")") m=$(basename "$f" .rs)
    case $m in main | amd_kernels) continue ;; esac
    grep -q "=\"$b $m::" docs/gpu-device-checks/device-common.sh \
        || echo "warning: $f is in no suite (add one to device-common.sh)" >&2
done

STAGE=.gpu-carry/bin
rm -rf "$STAGE" && mkdir -p "$STAGE"

args=()
for t in "${TESTS[@]}"; do args+=(--test "$t"); done
# cargo prints each test binary's path as "executable" in its JSON messages;
# the file name is NAME-HASH, copied as NAME.
cargo test --no-run "${args[@]}" --message-format=json-render-diagnostics \
    | grep -o '"executable":"[^"]*"' | cut -d'"' -f4 \
    | while read -r exe; do
        name=$(basename "$exe")
        cp "$exe" "$STAGE/${name%-*}"
      done

ex=()
for e in "${EXAMPLES[@]}"; do ex+=(--example "$e"); done
cargo build --release --bin vmafx "${ex[@]}"
cp "$TGT/release/vmafx" "$STAGE/"
for e in "${EXAMPLES[@]}"; do cp "$TGT/release/examples/$e" "$STAGE/"; done
# The HIP-over-CUDA test runtime: a package of its own, never part of
# vmafx (hip.sh installs it as libamdhip64.so and libhiprtc.so).
cargo build --release --locked --manifest-path tests/hip_over_cuda/Cargo.toml \
    --target-dir "$TGT/hip-over-cuda"
cp "$TGT/hip-over-cuda/release/libhip_over_cuda.so" "$STAGE/"

strip "$STAGE"/*
# The C library (libvmaf ABI), for the capi suite: installed into the stage.
CARGO_PROFILE=release bash capi/install.sh "$STAGE/libvmaf" > /dev/null
strip "$STAGE"/libvmaf/lib/libvmaf.so.*
rm "$STAGE"/libvmaf/lib/libvmaf.a # the shared library is what the tests link
for t in "${TESTS[@]}"; do
    [ -x "$STAGE/$t" ] || { echo "missing test binary: $t" >&2; exit 1; }
done
tar cJf .gpu-carry/bin.tar.xz -C .gpu-carry bin
rm -rf "$STAGE"
git rev-parse --short HEAD > .gpu-carry/commit
git status --porcelain --untracked-files=no | grep -q . && echo "(with uncommitted changes)" >> .gpu-carry/commit
ls -la .gpu-carry
echo "built at $(cat .gpu-carry/commit)"
