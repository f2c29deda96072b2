#!/usr/bin/env bash
# Session 3, closing pass: cambi's faster kernels (branch wip-cambi-speed:
# every scale's c-values in one launch, keys through a shared-memory row
# ring, select sized per scale), every built-in model on every golden pair
# (tests/gpu_models.rs), the upload race and rising sizes with every
# bit-identical extractor (tests/gpu.rs), and the per-extractor kernel table
# and v1.0.16 rows of the bench.
# Binaries: cargo test --no-run --test gpu_cambi --test gpu_models --test gpu;
# cargo build --release --example gpu_bench --bin vmafx; stripped into
# .gpu-carry/s3g/bin.tar.xz (s3g). Carry [".gpu-carry/s3g"].
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s3g/bin.tar.xz -C /tmp; C=/tmp/s3g
export VMAFX_BIN=$C/vmafx
timeout 100 $C/gpu_cambi --nocapture --test-threads 1 > $OUT/gpu_cambi.txt 2>&1; echo "gpu_cambi rc=$? $(grep -E '^test result' $OUT/gpu_cambi.txt)"
grep -E "FAILED|panicked" $OUT/gpu_cambi.txt | head -3; grep -E "^  |worst" $OUT/gpu_cambi.txt | grep -vc "0\.000e0"
timeout 150 $C/gpu_models --nocapture --test-threads 1 > $OUT/gpu_models.txt 2>&1; echo "gpu_models rc=$?"
grep -E "test result|FAILED|panicked|pairs" $OUT/gpu_models.txt | head -24
timeout 100 $C/gpu --test-threads 1 --nocapture > $OUT/gpu.txt 2>&1; echo "gpu rc=$? $(grep -E '^test result' $OUT/gpu.txt)"
grep -E "FAILED|panicked|overwritten|fresh context|interleaved" $OUT/gpu.txt | head -8
timeout 90 $C/gpu_bench --models "" --frames 100 --depths 8,10 --extractors vif,adm,motion,psnr_hvs,ciede,cambi,cambi/full_ref=true,speed_chroma,speed_temporal,float_vif,float_adm,float_ms_ssim 2>/dev/null | grep -E "^\|"
timeout 90 $C/gpu_bench --frames 300 --cpu-frames 2 --threads 16 --depths 8,10 --models vmaf_v1.0.16_3d0h 2>/dev/null | grep -E "^\|"
