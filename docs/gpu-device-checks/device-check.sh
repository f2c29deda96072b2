#!/usr/bin/env bash
# Device checks for the GPU backend (run from the repository root).
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=$OUT/kcache
C=.gpu-carry
echo "== nvidia-smi -L"; nvidia-smi -L
echo "== nvrtc libraries"; ldconfig -p | grep -i nvrtc | head -3
echo "== gpu_kernels"; $C/gpu_kernels --nocapture 2>&1 | tail -12
echo "== gpu (first run: compiles kernels)"; time $C/gpu --nocapture --test-threads 1 2>&1 | tail -60
echo "== kernel cache"; ls -la $OUT/kcache
A="-r $C/ref.yuv -d $C/dis.yuv -w 576 -h 324 -p 420 -b 8 --no_prediction --feature psnr=enable_apsnr=true --feature motion --json --precision max"
echo "== cli cpu"; time $C/vmafx $A --backend cpu -o $OUT/cpu.json
echo "== cli cuda"; time $C/vmafx $A --backend cuda -o $OUT/cuda.json
echo "== cli auto"; $C/vmafx $A --backend auto -o $OUT/auto.json
echo "== cli hip (no AMD here)"; $C/vmafx $A --backend hip -o /dev/null; echo "rc=$?"
echo "== cli bad device"; $C/vmafx $A --backend cuda --gpu_device 7 -o /dev/null; echo "rc=$?"
echo "== diff cpu cuda (fps/time lines differ only)"; diff $OUT/cpu.json $OUT/cuda.json; echo "diff rc=$?"
