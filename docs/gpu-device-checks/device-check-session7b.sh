#!/usr/bin/env bash
# Session 7: vif and adm spread over instances taking frames in turn, each
# on its own lane (VMAFX_EXP_INSTANCES=1 is main's one instance): model
# rate at 1080p and 2160p, 8 and 10 bit, device planar and host-fed
# reused, alternating.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s7b/bin.tar.xz -C /tmp; C=/tmp/s7b
$C/gpu_bench --frames 50 --sizes 1080 --depths 8 --feeds planar >/dev/null 2>&1
for n in 1 2 3 1 2 3; do
  echo "=== instances $n"
  VMAFX_EXP_INSTANCES=$n timeout 60 $C/gpu_bench --frames 3000 --sizes 1080,2160 --depths 8 --feeds planar 2>/dev/null | grep "device planar"
done 2>&1 | tee $OUT/ab.txt
for n in 1 2; do
  echo "=== instances $n"
  VMAFX_EXP_INSTANCES=$n timeout 60 $C/gpu_bench --frames 1000 --sizes 1080,2160 --depths 10 --feeds planar,reused 2>/dev/null | grep -E "device planar|reused"
  VMAFX_EXP_INSTANCES=$n timeout 60 $C/gpu_bench --frames 1000 --sizes 1080 --depths 8 --feeds reused,semi 2>/dev/null | grep -E "NV12|reused"
done 2>&1 | tee -a $OUT/ab.txt
