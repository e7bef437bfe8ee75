#!/usr/bin/env python3
"""Cross-check kernels/reference.py against the CUDA sources compiled for the host.

Usage:
    python3 scripts/host_check.py [NAME ...]      # default: every kernel of kernels/manifest.toml

For each kernel of the manifest this compiles kernels/src/NAME.cu as C++ with g++ and
scripts/host_shim.h (one POSIX thread per CUDA thread, pthread barriers for __syncthreads,
GCC atomics, IEEE single-precision floats with -ffp-contract=off), runs the manifest's launch
with the manifest's inputs, and compares every expected buffer byte for byte with the .npy
that reference.py wrote. It checks the reference (an independent sequential re-implementation)
against the kernel source itself; it needs no GPU and no NVIDIA tool, only g++ and numpy.

Limits: warp intrinsics run with warp size 32 and __activemask() returns the calling thread
only (see host_shim.h); spinlock_naive completes here (threads are MIMD), which is the outcome
expected of the `none` mechanism.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

sys.dont_write_bytecode = True   # keep scripts/ free of __pycache__
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _tools  # noqa: E402

_tools.require_numpy()
import numpy as np  # noqa: E402

REPO = _tools.REPO
KERNELS = REPO / "kernels"
SHIM = REPO / "scripts" / "host_shim.h"

_SIG_RE = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(([^)]*)\)', re.S)
_EXTERN_SHARED_RE = re.compile(r"extern\s+__shared__\s+([\w\s]+?)\s+(\w+)\s*\[\s*\]\s*;")


def kernel_params(src: str, name: str) -> list[str]:
    for m in _SIG_RE.finditer(src):
        if m.group(1) == name:
            params = [" ".join(p.split()) for p in m.group(2).split(",")]
            # drop the parameter name, keep the type
            return [re.sub(r"\s*\b(\w+)\s*$", "", p) for p in params]
    raise SystemExit(f"{name}: kernel signature not found")


def harness(spec: dict, src: str, workdir: Path) -> tuple[str, dict[int, tuple[Path, np.dtype]]]:
    name = spec["name"]
    types = kernel_params(src, name)
    args = spec["args"]
    if len(types) != len(args):
        raise SystemExit(f"{name}: {len(args)} args in manifest, {len(types)} parameters")
    decls, loads, call, dumps = [], [], [], []
    outputs: dict[int, tuple[Path, np.dtype]] = {}
    expected = {int(k): v for k, v in spec.get("expected", {}).items()}
    for i, (ty, arg) in enumerate(zip(types, args)):
        if isinstance(arg, str) and (arg.startswith("@") or arg.startswith("zeros:")):
            if arg.startswith("@"):
                arr = np.load(KERNELS / arg[1:])
            else:
                _, dt, n = arg.split(":")
                arr = np.zeros(int(n), dtype={"i8": np.int8, "u8": np.uint8, "i16": np.int16,
                                              "u16": np.uint16, "i32": np.int32,
                                              "u32": np.uint32, "i64": np.int64,
                                              "u64": np.uint64, "f32": np.float32,
                                              "f64": np.float64}[dt])
            raw = workdir / f"arg{i}.bin"
            raw.write_bytes(np.ascontiguousarray(arr).tobytes())
            nbytes = arr.nbytes
            decls.append(f"static unsigned char *buf{i};")
            loads.append(f'buf{i} = load("{raw}", {nbytes});')
            call.append(f"({ty})buf{i}")
            if i in expected:
                out = workdir / f"out{i}.bin"
                dumps.append(f'dump("{out}", buf{i}, {nbytes});')
                outputs[i] = (out, arr.dtype)
        elif isinstance(arg, float):
            call.append(f"({ty}){float(arg)!r}f" if "float" in ty else f"({ty}){arg!r}")
        else:
            call.append(f"({ty}){int(arg)}")
    gx, gy, gz = spec["grid"]
    bx, by, bz = spec["block"]
    nthreads = bx * by * bz
    body = _EXTERN_SHARED_RE.sub(r"static \1 \2[16384];", src)
    code = f"""
#include "{SHIM}"
#include <stdio.h>
#include <stdlib.h>
{body}

{chr(10).join(decls)}
static unsigned char *load(const char *path, size_t n) {{
    unsigned char *p = (unsigned char *)calloc(n + 64, 1);
    FILE *f = fopen(path, "rb"); if (!f || fread(p, 1, n, f) != n) {{ perror(path); exit(2); }}
    fclose(f); return p;
}}
static void dump(const char *path, unsigned char *p, size_t n) {{
    FILE *f = fopen(path, "wb"); fwrite(p, 1, n, f); fclose(f);
}}
struct Tid {{ unsigned x, y, z, bx, by, bz; }};
static void *run(void *vp) {{
    Tid *t = (Tid *)vp;
    threadIdx.x = t->x; threadIdx.y = t->y; threadIdx.z = t->z;
    blockIdx.x = t->bx; blockIdx.y = t->by; blockIdx.z = t->bz;
    int linear = t->x + {bx} * (t->y + {by} * t->z);
    host_lane = linear % 32; host_warp = linear / 32;
    {name}({", ".join(call)});
    return 0;
}}
int main() {{
    {chr(10).join(loads)}
    blockDim.x = {bx}; blockDim.y = {by}; blockDim.z = {bz};
    gridDim.x = {gx}; gridDim.y = {gy}; gridDim.z = {gz};
    static Tid tids[{nthreads}];
    static pthread_t th[{nthreads}];
    for (unsigned cz = 0; cz < {gz}; cz++) for (unsigned cy = 0; cy < {gy}; cy++)
    for (unsigned cx = 0; cx < {gx}; cx++) {{
        pthread_barrier_init(&host_block_barrier, 0, {nthreads});
        for (int w = 0; w * 32 < {nthreads}; w++) {{
            int lanes = {nthreads} - w * 32; if (lanes > 32) lanes = 32;
            pthread_barrier_init(&host_warps[w].bar, 0, lanes);
        }}
        int k = 0;
        for (unsigned z = 0; z < {bz}; z++) for (unsigned y = 0; y < {by}; y++)
        for (unsigned x = 0; x < {bx}; x++, k++) {{
            tids[k] = Tid{{x, y, z, cx, cy, cz}};
            pthread_attr_t at; pthread_attr_init(&at); pthread_attr_setstacksize(&at, 1 << 20);
            if (pthread_create(&th[k], &at, run, &tids[k])) {{ perror("pthread_create"); return 2; }}
        }}
        for (int i = 0; i < {nthreads}; i++) pthread_join(th[i], 0);
        pthread_barrier_destroy(&host_block_barrier);
        for (int w = 0; w * 32 < {nthreads}; w++) pthread_barrier_destroy(&host_warps[w].bar);
    }}
    {chr(10).join(dumps)}
    return 0;
}}
"""
    return code, outputs


def check(spec: dict) -> bool:
    name = spec["name"]
    src = (KERNELS / "src" / f"{name}.cu").read_text()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        code, outputs = harness(spec, src, work)
        cpp = work / f"{name}.cpp"
        cpp.write_text(code)
        exe = work / name
        cc = subprocess.run(["g++", "-std=c++17", "-O1", "-ffp-contract=off", "-pthread",
                             "-w", "-o", str(exe), str(cpp)], capture_output=True, text=True)
        if cc.returncode != 0:
            print(f"{name:15s} COMPILE ERROR\n{cc.stderr[:4000]}")
            return False
        try:
            rr = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            print(f"{name:15s} TIMEOUT (host run did not finish in 60 s)")
            return False
        if rr.returncode != 0:
            print(f"{name:15s} RUN ERROR rc={rr.returncode}\n{rr.stderr[:2000]}")
            return False
        ok = True
        notes = []
        for idx, (out, dtype) in sorted(outputs.items()):
            got = np.frombuffer(out.read_bytes(), dtype=dtype)
            want = np.load(KERNELS / spec["expected"][str(idx)])
            if got.tobytes() != want.tobytes():
                ok = False
                diff = [i for i in range(want.size)
                        if got[i:i + 1].tobytes() != want[i:i + 1].tobytes()]
                notes.append(f"arg {idx}: {len(diff)} of {want.size} elements differ, first at "
                             f"{diff[0]}: host {got[diff[0]]!r} vs reference {want[diff[0]]!r}")
            else:
                notes.append(f"arg {idx}: {want.size} x {want.dtype} equal")
        print(f"{name:15s} {'ok  ' if ok else 'FAIL'} " + "; ".join(notes))
        return ok


def main() -> int:
    manifest = tomllib.loads((KERNELS / "manifest.toml").read_text())
    wanted = set(sys.argv[1:])
    specs = [k for k in manifest["kernel"] if not wanted or k["name"] in wanted]
    results = [check(k) for k in specs]
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
