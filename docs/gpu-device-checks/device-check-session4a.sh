#!/usr/bin/env bash
# Session 4, first pass: gpu_import (the two-context release test now holds
# its second context behind a host-fenced pair; 20 repeats of it), and an
# ncu profile of VIF/ADM scales 0-1 at 2160p 8-bit: pipe use and stalls.
# Binaries: cargo test --no-run --test gpu_import; cargo build --release
# --example gpu_bench; stripped into .gpu-carry/s4a/bin.tar.xz.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s4a/bin.tar.xz -C /tmp; C=/tmp/s4a
timeout 120 $C/gpu_import --test-threads 1 > $OUT/gpu_import.txt 2>&1; echo "gpu_import rc=$? $(grep -E '^test result' $OUT/gpu_import.txt)"
grep -E "FAILED|panicked" $OUT/gpu_import.txt | head -5
fails=0; for i in $(seq 20); do timeout 30 $C/gpu_import --exact a_frame_read_by_two_contexts_is_released_after_both >/dev/null 2>&1 || fails=$((fails+1)); done; echo "two-context test: $fails of 20 failed"
NCU=/usr/local/cuda/bin/ncu
K='regex:vif_scale0_u8|vif_scale1|adm_scale0_u8|adm_scale1'
timeout 200 $NCU --kernel-name "$K" --launch-skip 8 --launch-count 4 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section InstructionStats --print-details all \
  $C/gpu_bench --models "" --frames 6 --sizes 2160 --depths 8 --extractors vif,adm > $OUT/ncu_sections.txt 2>&1; echo "ncu sections rc=$?"
timeout 120 $NCU --kernel-name "$K" --launch-skip 8 --launch-count 4 --metrics sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__inst_executed.sum,smsp__thread_inst_executed.sum,gpu__time_duration.sum \
  $C/gpu_bench --models "" --frames 6 --sizes 2160 --depths 8 --extractors vif,adm > $OUT/ncu_pipes.txt 2>&1; echo "ncu pipes rc=$?"
grep -E "^  [a-z_0-9]+\(|pipe|inst_executed|duration" $OUT/ncu_pipes.txt | head -60
