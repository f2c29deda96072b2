#!/usr/bin/env bash
# Device run for the GPU speed_chroma and speed_temporal (branch
# wip-gpu-speed): every golden pair within 1e-5 of the CPU (default options,
# the v1.0.16 models' option sets, every prescale method up and down,
# factors within 1e-3 of 1, kernel scales up to 360/97, weight modes 0-6,
# sigma_nn/nn_floor, max_val, speed_use_ref_diff), worst relative
# difference per output printed; subsample 3; three runs bit-identical;
# 12- and 16-bit input; odd-size synthetic 4:2:0/4:2:2/4:4:4 pictures with
# flat planes (singular covariance) and still frames.
# Expected (CPU emulation of the kernels driven by the real host code, see
# tests/gpu_speed.rs): every value identical to the CPU's, worst relative
# difference 0.000e0 everywhere, also with every log2 moved by up to 16
# ulps (CUDA's log2 is within 1). SpEED amplifies last-bit differences (one
# ulp on the eigenvalues moves scores by ~1e-5), so a nonzero worst value
# means some device operation is not the CPU's (a fused multiply-add, a
# math function, an order): report the first failing frame and output.
# Expected summary: "test result: ok. 8 passed", "per-output worst values:
# 65 printed, 65 of them 0", "picture-set lines: 9, worst 0 in 9", three
# "three GPU runs bit-identical" lines.
# Build here (branch wip-gpu-speed, or after merging it):
#   cargo test --test gpu_speed --no-run      # prints target/debug/deps/gpu_speed-<hash>
#   mkdir -p .gpu-carry/speed && cp target/debug/deps/gpu_speed-<hash> .gpu-carry/speed/gpu_speed
#   strip .gpu-carry/speed/gpu_speed && cp docs/gpu-device-checks/device-check-speed.sh .gpu-carry/speed/
# run with carry [".gpu-carry/speed"], command: bash .gpu-carry/speed/device-check-speed.sh
# (about a minute: the CPU side of each comparison dominates).
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 540 .gpu-carry/speed/gpu_speed --nocapture --test-threads 1 > ${OUT:-/tmp}/gpu_speed.txt 2>&1; echo "gpu_speed rc=$?"
# The whole log comes back as $OUT/gpu_speed.txt; here: the tests, any
# failure, the per-output worst values that are not 0, and how many are.
R=${OUT:-/tmp}/gpu_speed.txt
grep -hE "^test |test result|panicked|relative difference|skipped|running on|identical" $R | cut -c1-220 | head -n 40
grep -hE "^  " $R | grep -v " 0.000e0 " | cut -c1-160 | head -n 40
echo "per-output worst values: $(grep -cE '^  ' $R) printed, $(grep -E '^  ' $R | grep -c ' 0.000e0 ') of them 0"
grep -hE "\(worst " $R | grep -v "worst 0.000e0" | cut -c1-220 | head -n 20
echo "picture-set lines: $(grep -c '(worst ' $R), worst 0 in $(grep -c 'worst 0.000e0' $R)"
