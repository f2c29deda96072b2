#!/usr/bin/env python3
"""Static SASS of a kernel file, without a GPU: NVRTC compiles it for ARCH
(default sm_90) to a cubin, nvdisasm lists it; prints per kernel the
instruction count, the most frequent opcodes and ptxas' register, shared
memory and spill figures.

usage: sass.py kernels/X.cu [kernel-name-regex] [-v: print the SASS] [-DNAME=V ...]
NVRTC: $NVRTC (libnvrtc.so.13; .ci/run installs it under target/ci-nvrtc).
nvdisasm: $NVDISASM (PyPI wheel nvidia-cuda-nvdisasm, bin/nvdisasm in it).
"""
import ctypes, sys, os, re, subprocess, collections
ARCH = os.environ.get("ARCH", "sm_90")
lib = ctypes.CDLL(os.environ.get("NVRTC", "target/ci-nvrtc/nvidia/cu13/lib/libnvrtc.so.13"))
NVD = os.environ.get("NVDISASM", "nvdisasm")
args = [a for a in sys.argv[1:] if not a.startswith("-")]
flags = [a for a in sys.argv[1:] if a.startswith("-")]
path = args[0]; pat = args[1] if len(args) > 1 else "."
kdir = os.path.dirname(os.path.abspath(path))
def expand(p):
    out = []
    for line in open(p):
        m = re.match(r'\s*#include\s+"(.*)"', line)
        out.append(expand(os.path.join(kdir, m.group(1))) if m else line)
    return "".join(out)
src = expand(path).encode()
CUBIN = "/tmp/sass-%d.cubin" % os.getpid()
prog = ctypes.c_void_p()
assert lib.nvrtcCreateProgram(ctypes.byref(prog), src, path.encode(), 0, None, None) == 0
opts = [f"--gpu-architecture={ARCH}", "-default-device", "--ptxas-options=-v"] + [f for f in flags if f.startswith("-D")]
copts = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
rc = lib.nvrtcCompileProgram(prog, len(opts), copts)
n = ctypes.c_size_t(); lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
log = ctypes.create_string_buffer(n.value); lib.nvrtcGetProgramLog(prog, log)
logs = log.value.decode()
if rc != 0: print(logs); sys.exit(1)
lib.nvrtcGetCUBINSize(prog, ctypes.byref(n)); buf = ctypes.create_string_buffer(n.value)
lib.nvrtcGetCUBIN(prog, buf)
open(CUBIN, "wb").write(buf.raw)
regs = {}
cur = None
for line in logs.splitlines():
    m = re.search(r"Compiling entry function '(\w+)'", line)
    if m: cur = m.group(1)
    m = re.search(r"Used (\d+) registers.*?(\d+) bytes smem", line)
    if m and cur: regs[cur] = line.split("ptxas info    :")[-1].strip()
    m2 = re.search(r"(\d+) bytes spill stores", line)
    if m2 and cur and m2.group(1) != "0": regs[cur + " SPILL"] = line.strip()
sass = subprocess.run([NVD, "-c", CUBIN], capture_output=True, text=True).stdout
funcs = re.split(r"\n\s*\.text\.(\w+):", sass)
for i in range(1, len(funcs), 2):
    name, body = funcs[i], funcs[i + 1]
    if not re.search(pat, name): continue
    ops = collections.Counter()
    for line in body.splitlines():
        m = re.match(r"\s*/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)", line)
        if m: ops[m.group(2)] += 1
    tot = sum(ops.values())
    print(f"== {name}: {tot} instr; {regs.get(name, '')} {regs.get(name+' SPILL', '')}")
    if "-v" in flags: print(body)
    print("  " + ", ".join(f"{k} {v}" for k, v in ops.most_common(28)))
