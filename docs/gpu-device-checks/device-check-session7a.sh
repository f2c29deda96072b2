#!/usr/bin/env bash
# Session 7: where 1080p's time goes. An nsys trace of `vmaf_v0.6.1`
# 1080p 8-bit device planar (300 frames): every kernel, copy and the host's
# driver calls, to see how busy the device is between frames; then long
# runs (3,000 frames) of the same, three times, to separate noise from
# the margin over 7,600 fps.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s7a/bin.tar.xz -C /tmp; C=/tmp/s7a
NSYS=$(ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys /usr/local/cuda/nsight-systems*/bin/nsys 2>/dev/null | head -1)
echo "nsys: ${NSYS:-none}"
$C/gpu_bench --frames 50 --sizes 1080 --depths 8 --feeds planar 2>/dev/null | grep "device planar"
if [ -n "$NSYS" ]; then
  timeout 120 $NSYS profile -t cuda --cuda-memory-usage=false -o /tmp/p1080 -f true \
    $C/gpu_bench --frames 300 --sizes 1080 --depths 8 --feeds planar > $OUT/nsys_run.txt 2>&1
  tail -3 $OUT/nsys_run.txt
  timeout 120 $NSYS stats -q -r cuda_gpu_trace -f csv -o /tmp/s1080 /tmp/p1080.nsys-rep > /dev/null 2>&1
  timeout 120 $NSYS stats -q -r cuda_api_trace -f csv -o /tmp/a1080 /tmp/p1080.nsys-rep > /dev/null 2>&1
  timeout 60 $NSYS stats -q -r cuda_api_sum,cuda_gpu_kern_sum -f csv -o /tmp/sum1080 /tmp/p1080.nsys-rep > /dev/null 2>&1
  ls /tmp/*1080*
  for f in /tmp/s1080*.csv /tmp/a1080*.csv /tmp/sum1080*.csv; do xz -c $f > $OUT/$(basename $f).xz; done
fi
for i in 1 2 3; do
  timeout 60 $C/gpu_bench --frames 3000 --sizes 1080,2160 --depths 8 --feeds planar 2>/dev/null | grep "device planar"
done 2>&1 | tee $OUT/long.txt
