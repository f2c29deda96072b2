#!/usr/bin/env bash
# Second device pass: the new device-layer test, a warm kernel cache, and a
# whole vmaf_v0.6.1 model with motion on the GPU and adm/vif on the host.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=$OUT/kcache
C=.gpu-carry
echo "== gpu tests, cold cache"; time $C/gpu --nocapture --test-threads 1 2>&1 | grep -E "^test |test result|2D upload|running on" | sort | uniq -c
echo "== gpu tests, warm cache"; time $C/gpu --test-threads 1 2>&1 | grep "test result"
A="-r $C/ref.yuv -d $C/dis.yuv -w 576 -h 324 -p 420 -b 8 --json --precision max"
echo "== model cpu"; time timeout 250 $C/vmafx $A --backend cpu -o $OUT/model_cpu.json
echo "== model cuda"; time timeout 250 $C/vmafx $A --backend cuda -o $OUT/model_cuda.json
echo "== diff"; diff $OUT/model_cpu.json $OUT/model_cuda.json; echo "diff rc=$?"
