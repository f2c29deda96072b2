#!/usr/bin/env bash
# Device run for the GPU float_ssim and float_ms_ssim (branch h-fssim):
# every golden pair and option within 1e-5 of the CPU (worst relative
# difference per output printed), subsampling, determinism, kernel timing;
# and the mixed CPU/GPU tests that now use float_ansnr as the host-only
# extractor.
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
.gpu-carry/fssim/gpu_float_ssim --nocapture --test-threads 1 > $OUT/gpu_float_ssim.txt 2>&1; echo "gpu_float_ssim rc=$?"
.gpu-carry/fssim/gpu gpu_and_cpu_extractors_mix --nocapture --test-threads 1 > $OUT/gpu_mix.txt 2>&1; echo "gpu mix rc=$?"
.gpu-carry/fssim/gpu_import device_frames_need_every_extractor_on_the_gpu --nocapture --test-threads 1 > $OUT/gpu_import.txt 2>&1; echo "gpu_import rc=$?"
grep -hE "^test |test result|panicked|ms/frame|within|bit-identical|identical|worst|^  " $OUT/gpu_float_ssim.txt $OUT/gpu_mix.txt $OUT/gpu_import.txt | cut -c1-160 | tail -n 150
