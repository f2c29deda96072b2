#!/usr/bin/env bash
# Builds, on the development machine, everything suites.sh and bench.sh run
# on a GPU machine, and packs it into .gpu-carry/bin.tar.xz:
#
#   every GPU test binary (`cargo test --no-run`, test profile: opt-level 3),
#   the release `vmafx` binary (the CLI checks and the tests' VMAFX_BIN),
#   the release examples (gpu_bench and the producer examples).
#
# Usage, from anywhere in the checkout:
#   bash docs/gpu-device-checks/build-for-device.sh
# then call the device tool with carry [".gpu-carry", ".gl"] (".gl": the
# Vulkan/EGL loader packages, see docs/gpu-testing.md) and the command
#   bash docs/gpu-device-checks/suites.sh      (or bench.sh)
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

# Every tests/gpu*.rs binary. tests/cli.rs is not among them: it expects
# `--backend cuda` to fail, which holds only where there is no GPU.
# `capi` (tests/capi.rs) also runs the C library's CUDA pictures there.
TESTS=(capi gpu gpu_adm gpu_cambi gpu_ciede gpu_float gpu_float_adm gpu_float_ssim
       gpu_import gpu_import_layer gpu_import_producers gpu_kernels gpu_models
       gpu_psnr_hvs gpu_speed gpu_ssim gpu_vif)
EXAMPLES=(gpu_bench bench_pairs lib_bench decoder_producer gl_producer vulkan_producer)

for f in tests/gpu*.rs; do
    t=$(basename "$f" .rs)
    [[ " ${TESTS[*]} " == *" $t "* ]] || echo "warning: $f is not in TESTS (add it here and in suites.sh)" >&2
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
cp target/release/vmafx "$STAGE/"
for e in "${EXAMPLES[@]}"; do cp "target/release/examples/$e" "$STAGE/"; done

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
