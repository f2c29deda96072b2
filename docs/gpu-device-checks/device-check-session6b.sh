#!/usr/bin/env bash
# Session 6: where vif scale 0, motion and adm scale 0/1 spend their time at
# 2160p 8-bit (main + the small-band ADM): one ncu report (full set, one
# launch of each kernel), its details page and vif_scale0_u8's and
# motion_sad_u8's per-instruction source pages (SASS), in one archive.
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=/tmp/kc
OUT=${OUT:-/tmp}
[ -d /tmp/s6a ] || tar xJf .gpu-carry/s6a/bin.tar.xz -C /tmp; C=/tmp/s6a
NCU=/usr/local/cuda/bin/ncu; R=/tmp/r6b; mkdir -p $R
for k in vif_scale0_u8 vif_scale1 motion_sad_u8 adm_scale0_u8_t4 adm_scale1_t4; do
  timeout 120 $NCU --set full --import-source no --kernel-name $k --launch-skip 4 --launch-count 1 -o $R/$k -f \
    $C/gpu_bench --models "" --frames 8 --sizes 2160 --depths 8 --extractors vif,adm,motion > $R/run_$k.txt 2>&1
  echo "ncu $k rc=$?"
  $NCU -i $R/$k.ncu-rep --page details --print-details all > $R/details_$k.txt 2>&1
  $NCU -i $R/$k.ncu-rep --page source --csv --print-source sass > $R/src_$k.csv 2>&1
done
ls -la $R; grep -E "^  [a-z_0-9]+ \(|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Executed Ipc A|Block Limit|DRAM Throughput|Compute \(SM\) Throughput|One or More|No Eligible|Warp Cycles Per Issued" $R/details_*.txt | head -120
tar cJf $OUT/r6b.tar.xz --exclude='*.ncu-rep' -C /tmp r6b
