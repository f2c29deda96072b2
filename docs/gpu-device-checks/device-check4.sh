#!/usr/bin/env bash
# Fourth device pass (merged main: GPU work + deduplication refactor): the
# GPU test binary, and the CLI on 20 frames of golden pair a/x264_crf30 with
# the default model plus psnr, cpu vs cuda vs auto (reports must be equal
# but for fps).
set -u
export VMAFX_TEST_ROOT=$PWD VMAFX_KERNEL_CACHE=$OUT/kcache VMAFX_BIN=$PWD/.gpu-carry/vmafx
C=.gpu-carry
echo "== nvidia-smi -L"; nvidia-smi -L
echo "== gpu tests"; $C/gpu --nocapture --test-threads 1 2>&1 | grep -vE "subsample [0-9]+: [0-9]+ frames bit-identical$" | tail -40
A="-r $C/ref.yuv -d $C/dis.yuv -w 576 -h 324 -p 420 -b 8 --feature psnr=enable_mse=true:enable_apsnr=true --json --precision max -q"
for b in cpu cuda auto; do echo "== cli $b"; $C/vmafx $A --backend $b -o $OUT/$b.json; echo "rc=$?"; done
echo "== cli cuda, 4 threads"; $C/vmafx $A --backend cuda --threads 4 -o $OUT/cuda4.json; echo "rc=$?"
for b in cuda auto cuda4; do echo "== diff cpu $b (fps only)"; diff <(grep -v '"fps"' $OUT/cpu.json) <(grep -v '"fps"' $OUT/$b.json) && echo identical; done
python3 - "$OUT/cpu.json" tests/golden/a_576x324_420p8_pan/x264_crf30.vmaf_v0.6.1.json <<'PY'
import json, sys
ours = json.load(open(sys.argv[1]))["frames"]; gold = json.load(open(sys.argv[2]))["frames"]
# frames 0..18: frame 19's motion2 has no next frame in a 20-frame cut
bad = [(i, k) for i in range(19) for k, v in gold[i]["metrics"].items() if ours[i]["metrics"][k] != v]
print("golden vmaf_v0.6.1 values, frames 0-18:", "all equal" if not bad else bad[:5])
PY
