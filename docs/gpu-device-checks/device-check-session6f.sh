#!/usr/bin/env bash
# Session 6: four frames in flight per extractor (IN_FLIGHT = 4, readback
# rings sized from it) against two (main), alternating: vmaf_v0.6.1
# device planar and host-fed reused at 1080p/2160p 8-bit; gpu.rs and
# gpu_import.rs built with four (races, device frames, fences).
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s6e/bin.tar.xz -C /tmp; C=/tmp/s6e
for t in gpu_if4 gpu_import_if4; do
  timeout 120 $C/var/$t --test-threads 4 --skip cli_backend > $OUT/$t.txt 2>&1; echo "$t rc=$? $(grep -E '^test result' $OUT/$t.txt)"
  grep -E "FAILED|panicked" $OUT/$t.txt | head -5
done
for v in main if4 main if4; do
  b=$C/gpu_bench; [ $v = if4 ] && b=$C/var/gpu_bench_if4
  echo "=== $v"
  timeout 60 $b --frames 1000 --cpu-frames 1 --threads 4 --sizes 1080,2160 --depths 8 --models vmaf_v0.6.1 2>&1 | grep -E "device planar|host-fed reused|rror"
done 2>&1 | tee $OUT/ab.txt
