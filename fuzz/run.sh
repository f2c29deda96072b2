#!/usr/bin/env bash
# Builds the coverage-guided fuzz targets on the stable toolchain and runs
# each for SECONDS (default 30), starting from corpus/TARGET (ADR 0020).
#
#   bash fuzz/run.sh [SECONDS|ci] [TARGET ...]
#
# `ci` runs a fixed number of inputs per target (about 20 s each on the CI
# machine kind) from a fixed seed: the same budget on any machine and
# mostly the same mutations (targets that start threads vary a little);
# a campaign (SECONDS) takes a new seed.
#
# libFuzzer comes from libfuzzer-sys (compiled with the system C++
# compiler); coverage is LLVM's SanitizerCoverage, switched on with
# stable codegen flags (-Cpasses=sancov-module and -Cllvm-args), applied
# to the target crates only (--target keeps them off build scripts). New
# inputs that reach new code go to a scratch corpus, not the committed
# seeds; a crash leaves its input in fuzz/artifacts/TARGET/ and fails
# the run: fix it, add a test beside the code it broke, and keep the
# input in fuzz/regressions/TARGET/ (replayed at the start of every run).
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-30}
shift || true
# Inputs per target for `ci` (measured rates on two cores, ~20 s each).
declare -A CI_RUNS=([y4m]=50000 [raw_yuv]=100000 [model_json]=800000 [option_texts]=300000
                    [cli_args]=100000 [import_desc]=40000 [capi]=200000)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(y4m raw_yuv model_json option_texts cli_args import_desc capi)

triple=$(rustc -vV | sed -n 's/^host: //p')
export RUSTFLAGS="-Cpasses=sancov-module \
 -Cllvm-args=-sanitizer-coverage-level=4 \
 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
 -Cllvm-args=-sanitizer-coverage-pc-table \
 -Cllvm-args=-sanitizer-coverage-trace-compares \
 --cfg fuzzing"
export CARGO_TARGET_DIR=${FUZZ_TARGET_DIR:-$PWD/target}
cargo build --release --target "$triple" --bins
bin=$CARGO_TARGET_DIR/$triple/release

failed=0
for t in "${targets[@]}"; do
    work=$(mktemp -d)
    mkdir -p "artifacts/$t"
    # -close_fd_mask=1: the CLI's output would flood the log.
    # -rss_limit_mb: a target must not need more than this for any input.
    # regressions/TARGET: inputs that once crashed, replayed first.
    seeds=("corpus/$t")
    [ -d "regressions/$t" ] && seeds+=("regressions/$t")
    if [ "$seconds" = ci ]; then
        budget=(-runs="${CI_RUNS[$t]}" -seed=1)
    else
        budget=(-max_total_time="$seconds")
    fi
    if "$bin/$t" "$work" "${seeds[@]}" "${budget[@]}" -max_len=65536 \
        -rss_limit_mb=2048 -timeout=20 -close_fd_mask=1 -print_final_stats=1 \
        -artifact_prefix="artifacts/$t/" > "$work.log" 2>&1; then
        echo "$t: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work.log" | grep -o '[0-9]*$') runs ($seconds)," \
            "$(grep -o 'cov: [0-9]*' "$work.log" | tail -1), corpus $(ls "$work" | wc -l) inputs, no crash"
    else
        echo "$t: FAILED"; tail -30 "$work.log"; failed=1
    fi
    rm -rf "$work" "$work.log"
done
exit $failed
