#!/usr/bin/env bash
# Session 3, fifth pass: the GPU cambi, speed_chroma and speed_temporal
# (merged from their branches, checked before only by g++ emulations), the
# new producer tests (binary Vulkan acquire semaphores; a never-signalled
# acquire timing out), vmaf_v1.0.16_3d0h wholly on the GPU (CLI and bench).
# Binaries: cargo test --no-run --test gpu_cambi --test gpu_speed
# --test gpu_import_producers --test gpu; cargo build --release --example
# gpu_bench --bin vmafx; stripped into .gpu-carry/s3e/bin.tar.xz (s3e).
# Carry [".gpu-carry/s3e", ".gl"].
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
tar xJf .gpu-carry/s3e/bin.tar.xz -C /tmp; C=/tmp/s3e
export VMAFX_BIN=$C/vmafx
echo "== producers"; timeout 60 $C/gpu_import_producers --test-threads 1 --nocapture binary never 2>&1 | grep -E "test result|FAILED|panicked|bit-identical|FenceTimeout"
echo "== cli"; timeout 60 $C/gpu --test-threads 1 cli_ 2>&1 | grep -E "test result|FAILED|panicked"
echo "== v1.0.16 on cuda vs cpu"; for b in cpu cuda; do timeout 60 $C/vmafx --backend $b -r examples/data/ref_576x324.y4m -d examples/data/dist_576x324_x264_crf30.y4m -m version=vmaf_v1.0.16_3d0h --json -o $OUT/v1016_$b.json > $OUT/v1016_$b.txt 2>&1; tail -1 $OUT/v1016_$b.txt; done; cmp $OUT/v1016_cpu.json $OUT/v1016_cuda.json && echo "v1.0.16 JSON identical"
echo "== speed"; timeout 150 $C/gpu_speed --nocapture --test-threads 1 > $OUT/gpu_speed.txt 2>&1; echo "gpu_speed rc=$?"; grep -E "test result|FAILED|panicked|bit-identical" $OUT/gpu_speed.txt | head; grep -cE "^  .* 0\.000e0" $OUT/gpu_speed.txt; grep -E "^  " $OUT/gpu_speed.txt | grep -v "0\.000e0" | head -20
echo "== cambi"; timeout 200 $C/gpu_cambi --nocapture --test-threads 1 > $OUT/gpu_cambi.txt 2>&1; echo "gpu_cambi rc=$?"; grep -E "test result|FAILED|panicked|ms/frame|bit-identical" $OUT/gpu_cambi.txt | head -20; grep -E "^  " $OUT/gpu_cambi.txt | grep -v "0\.000e0" | head -20
echo "== bench"; timeout 120 $C/gpu_bench --frames 500 --cpu-frames 4 --threads 16 --depths 8 --models vmaf_v1.0.16_3d0h 2>&1 | grep -E "^\||error"
