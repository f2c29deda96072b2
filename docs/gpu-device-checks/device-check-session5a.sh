#!/usr/bin/env bash
# Session 5, first pass: where ADM's time goes (ncu of its scale kernels at
# 2160p and 1080p 8-bit), the host's queueing ceiling (vmaf_v0.6.1
# device-fed at 640x360, where the kernels are short), kernel times of vif,
# adm and motion at 360p/1080p/2160p, and CUDA API times under nsys if the
# machine has it. Binary: cargo build --release --example gpu_bench,
# stripped into .gpu-carry/s5a/bin.tar.xz.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s5a/bin.tar.xz -C /tmp; C=/tmp/s5a
echo "cpus $(nproc)"; ls /usr/local/cuda/bin | tr '\n' ' '; echo; command -v nsys; ls -d /opt/nvidia/* 2>/dev/null
echo "== 360p model"; timeout 60 $C/gpu_bench --frames 3000 --cpu-frames 1 --threads 4 --sizes 360,1080 --depths 8 --models vmaf_v0.6.1 2>&1 | grep -E "^\| [0-9]|host"
echo "== kernels"; timeout 60 $C/gpu_bench --models "" --frames 200 --sizes 360,1080,2160 --depths 8 --extractors vif,adm,motion 2>/dev/null | grep -E "^\| [0-9]"
NCU=/usr/local/cuda/bin/ncu
for s in 2160 1080; do
timeout 120 $NCU --kernel-name regex:adm_scale --launch-skip 8 --launch-count 4 --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section InstructionStats --section LaunchStats --section SchedulerStats --print-details all \
  $C/gpu_bench --models "" --frames 6 --sizes $s --depths 8 --extractors adm > $OUT/ncu_adm_$s.txt 2>&1; echo "ncu $s rc=$?"
grep -E "^  adm_scale|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Executed Instructions  |Block Limit|Stall|L1/TEX Hit|Mem Busy|Max Bandwidth|DRAM Throughput" $OUT/ncu_adm_$s.txt | head -90
done
timeout 100 $NCU --kernel-name regex:adm_scale --launch-skip 8 --launch-count 4 --metrics smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio,smsp__average_warp_latency_issue_stalled_not_selected.ratio,smsp__average_warp_latency_issue_stalled_lg_throttle.ratio,smsp__average_warp_latency_issue_stalled_mio_throttle.ratio,sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,smsp__thread_inst_executed.sum,gpu__time_duration.sum \
  $C/gpu_bench --models "" --frames 6 --sizes 2160 --depths 8 --extractors adm > $OUT/ncu_adm_pipes.txt 2>&1; echo "ncu pipes rc=$?"
grep -E "^  adm_scale|stalled|pipe|inst_executed|duration" $OUT/ncu_adm_pipes.txt | head -70
NSYS=$(command -v nsys || ls /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
if [ -n "$NSYS" ]; then
  timeout 120 $NSYS profile -t cuda -o /tmp/n360 --force-overwrite true $C/gpu_bench --frames 2000 --cpu-frames 1 --threads 4 --sizes 360 --depths 8 --models vmaf_v0.6.1 > /dev/null 2>&1
  timeout 60 $NSYS stats -r cuda_api_sum /tmp/n360.nsys-rep > $OUT/nsys_api.txt 2>&1; head -40 $OUT/nsys_api.txt
fi
