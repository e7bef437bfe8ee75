#!/usr/bin/env python3
"""Build five CUDA programs that use texture references (Rodinia 3.1 kmeans and hybridsort, ISPASS-2009 AES
and MUM, Parboil spmv) with CUDA 13 and `reconverge_compat.h`, run each through `reconverge exec` under
pdom, tbc and its (timed, the gtx480 preset) and pdom `--functional`, check every run's output, and print a
markdown table.

Usage:
    python3 scripts/texture_programs.py --apps DIR --data DATA [--bin target/release/reconverge] [--nvcc NVCC]
                                        [--header FILE] [--only NAME] [--keep DIR]

DIR is a checkout of accel-sim/gpu-app-collection (the directory holding `src/cuda`), DATA the
`ispass2009-benchmarks/benchmarks/CUDA` directory of a GPGPU-Sim 2.1.1b release (the public mirror
sfraney/gpgpu-sim), as for scripts/paper_workloads.py; both are read, never changed. Each program's sources
are copied into a temporary directory (`--keep DIR`: into DIR, kept) and built there with
`nvcc -cudart shared -gencode arch=compute_80,code=compute_80 -include reconverge_compat.h` (the header of
`reconverge cuda-include` unless `--header` names another) and no source edit. What a build adds, and why:

- kmeans: `-fopenmp` for its host files (they include omp.h), as its Makefile builds them;
- hybridsort: `-DVERIFY` (its Makefile's option), which turns on its own check against qsort;
- AES: `boost/filesystem` from a stand-in over std::filesystem when Boost's headers are not installed
  (the program uses `path`, `exists` and `file_size`), and the collection's `libcutil_x86_64.a`;
- MUM: `-fno-delete-null-pointer-checks` for the host code, whose suffix tree calls `id()` through a null
  parent and tests `if (this)` there (GCC 6 and later drop that test at -O2: a crash before any CUDA
  call); the collection's `libcutil_x86_64.a`;
- spmv (Parboil `cuda_base_tex`): Parboil's `parboil_cuda.c` and the dataset converter built in.

Inputs and checks (no data enters the repository; generated inputs come from fixed seeds):

- kmeans: 4096 points of 34 features around 5 centres (Rodinia's text format, `id f1 ... f34`), `-o`;
  its printed centroids and iteration count against an independent Lloyd's k-means in Python from the
  same initial centres (the first 5 points, as the program takes them), float32 inputs;
- hybridsort: 32768 uniform floats from a file; its own check (`-DVERIFY`: the GPU's sorted list equal,
  element by element, to qsort's);
- AES: the release's `data/output.bmp` and `data/key128.txt` (`e 128`, its README's command line);
  `output_0.dat` against AES-128 (ECB, PKCS#7 padding, as the program pads) computed in Python (checked
  on FIPS-197's example first);
- MUM: the release's reference `NC_003997.20k.fna` and 50,000 25-bp queries (its README's command line);
  the matches printed identical to the program's CPU path (`-C`), and every match checked against the
  sequences (equal substrings, at least 20 long, maximal at both ends);
- spmv: a generated symmetric 3000 x 3000 matrix (17,885 stored entries, 1 to 73 a row) and the
  collection's `fidapm05.mtx` (42 x 42), with vectors of uniform floats; the output vector against y = A x
  in Python over the entries as the program reads them (it mirrors every off-diagonal entry).

Each run's cycles and SIMD efficiency are summed over its launches from `--stats`. It takes a few minutes;
standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _tools import find_nvcc  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
RUNS = [("pdom", False), ("tbc", False), ("its", False), ("pdom", True)]  # (mechanism, functional)
TIMEOUT = 900


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


# ---- building ---------------------------------------------------------------------------------------------

BOOST_STANDIN = """// A stand-in for the part of Boost.Filesystem that ISPASS-2009 AES uses, over std::filesystem.
#pragma once
#include <cstdint>
#include <filesystem>
#include <fstream>
namespace boost {
using std::intmax_t;
namespace filesystem {
using std::filesystem::exists;
using std::filesystem::file_size;
using std::filesystem::path;
}  // namespace filesystem
}  // namespace boost
"""


class Builder:
    def __init__(self, nvcc: str, header: Path, cuda_lib: str, apps: Path):
        self.nvcc, self.header, self.cuda_lib, self.apps = nvcc, header, cuda_lib, apps
        self.common = apps / "src" / "cuda" / "common"

    def nvcc_build(self, d: Path, sources: list[str], extra: list[str], libs: list[str] | None = None) -> Path:
        env = dict(os.environ)
        env["PATH"] = str(Path(self.nvcc).parent) + os.pathsep + env.get("PATH", "")
        args = [self.nvcc, "-cudart", "shared", "-O2", "-gencode", "arch=compute_80,code=compute_80",
                "-include", str(self.header), "-I.", *extra, "-o", "app", *sources, f"-L{self.cuda_lib}",
                *(libs or [])]
        out = subprocess.run(args, cwd=d, capture_output=True, text=True, check=False, env=env)
        if out.returncode != 0:
            raise RuntimeError("build failed:\n" + " ".join(args) + "\n" + out.stderr[-3000:])
        return d / "app"


def build_kmeans(b: Builder, work: Path) -> Path:
    d = work / "kmeans"
    shutil.copytree(b.apps / "src/cuda/rodinia/3.1/cuda/kmeans", d)
    b.nvcc_build(d, ["cluster.c", "getopt.c", "kmeans.c", "kmeans_clustering.c", "kmeans_cuda.cu", "rmse.c"],
                 ["-Xcompiler", "-fopenmp"], ["-lgomp", "-lm"])
    return d


def build_hybridsort(b: Builder, work: Path) -> Path:
    d = work / "hybridsort"
    shutil.copytree(b.apps / "src/cuda/rodinia/3.1/cuda/hybridsort", d)
    b.nvcc_build(d, ["bucketsort.cu", "mergesort.cu", "main.cu"], ["-DVERIFY"])
    return d


def build_aes(b: Builder, work: Path) -> Path:
    d = work / "AES"
    shutil.copytree(b.apps / "src/cuda/ispass-2009/AES", d)
    extra = [f"-I{b.common / 'inc'}"]
    libs = [f"-L{b.common / 'lib'}", "-lcutil_x86_64"]
    if Path("/usr/include/boost/filesystem.hpp").exists():
        libs += ["-lboost_filesystem", "-lboost_system"]
    else:
        standin = d / "standin" / "boost" / "filesystem"
        standin.mkdir(parents=True)
        (standin / "operations.hpp").write_text(BOOST_STANDIN)
        (standin / "fstream.hpp").write_text('#pragma once\n#include "operations.hpp"\n')
        extra.append("-Istandin")
    b.nvcc_build(d, ["aesHost.cu", "aescuda.cpp", "aesCudaUtils.cpp"], extra, libs)
    return d


def build_mum(b: Builder, work: Path) -> Path:
    d = work / "MUM"
    shutil.copytree(b.apps / "src/cuda/ispass-2009/MUM", d)
    b.nvcc_build(d, ["mummergpu.cu", "mummergpu_main.cpp", "mummergpu_gold.cpp", "suffix-tree.cpp",
                     "PoolMalloc.cpp"],
                 ["-Xcompiler", "-fno-delete-null-pointer-checks", f"-I{b.common / 'inc'}"],
                 [f"-L{b.common / 'lib'}", "-lcutil_x86_64"])
    return d


def build_spmv(b: Builder, work: Path) -> Path:
    d = work / "spmv"
    bench = b.apps / "src/cuda/parboil/benchmarks/spmv"
    shutil.copytree(bench / "src/cuda_base_tex", d)
    conv = bench / "common_src/convert-dataset"
    parboil = b.apps / "src/cuda/parboil/common"
    b.nvcc_build(d, ["main.cu", "file.cc", "gpu_info.cc", str(conv / "convert_dataset.c"), str(conv / "mmio.c"),
                     str(parboil / "src/parboil_cuda.c")], [f"-I{conv}", f"-I{parboil / 'include'}"], ["-lm"])
    return d


# ---- inputs -----------------------------------------------------------------------------------------------

def kmeans_input(d: Path) -> Path:
    rng = random.Random(2009)
    k, dims, n = 5, 34, 4096
    centres = [[rng.uniform(0, 10) for _ in range(dims)] for _ in range(k)]
    lines = []
    for i in range(n):
        c = centres[rng.randrange(k)]
        lines.append(str(i + 1) + " " + " ".join("%.4f" % (x + rng.gauss(0, 2.5)) for x in c))
    f = d / "kmeans_4096_34.txt"
    f.write_text("\n".join(lines) + "\n")
    return f


def hybridsort_input(d: Path) -> Path:
    rng = random.Random(31)
    f = d / "floats_32768.txt"
    f.write_text(" ".join("%.6f" % rng.random() for _ in range(32768)) + "\n")
    return f


def spmv_inputs(d: Path, conv: Path) -> list[tuple[str, Path, Path]]:
    rng = random.Random(54321)
    n, ents = 3000, {}
    for i in range(n):
        ents[(i, i)] = rng.uniform(1, 2)
        for _ in range(rng.randint(1, 8) + (60 if i % 97 == 0 else 0)):  # every 97th row long
            ents[(i, rng.randrange(0, i + 1))] = rng.uniform(-1, 1)
    m = d / "sym3000.mtx"
    with m.open("w") as f:
        f.write("%%MatrixMarket matrix coordinate real symmetric\n")
        f.write("%d %d %d\n" % (n, n, len(ents)))
        for (i, j), v in sorted(ents.items(), key=lambda e: (e[0][1], e[0][0])):
            f.write("%d %d %.6e\n" % (i + 1, j + 1, v))
    v = d / "vec3000.bin"
    v.write_bytes(struct.pack("<%df" % n, *[rng.random() for _ in range(n)]))
    v42 = d / "vec42.bin"
    v42.write_bytes(struct.pack("<42f", *[rng.random() for _ in range(42)]))
    return [("sym3000", m, v), ("fidapm05", conv / "fidapm05.mtx", v42)]


# ---- checks -----------------------------------------------------------------------------------------------

def kmeans_reference(points_file: Path, k: int = 5) -> tuple[int, list[list[float]]]:
    """Lloyd's k-means as kmeans_clustering.c iterates it: initial centres the first k points, stop when no
    point moves (delta > threshold 0.001) or after 501 passes; points read as float32."""
    pts = [[f32(float(t)) for t in line.split()[1:]] for line in points_file.read_text().splitlines() if line.strip()]
    dims = len(pts[0])
    centres = [p[:] for p in pts[:k]]
    member = [-1] * len(pts)
    passes = 0
    while True:
        delta, sums, count = 0, [[0.0] * dims for _ in range(k)], [0] * k
        for i, p in enumerate(pts):
            dist = [sum((a - c) * (a - c) for a, c in zip(p, cen)) for cen in centres]
            best = min(range(k), key=lambda j: (dist[j], j))
            if best != member[i]:
                delta += 1
                member[i] = best
            count[best] += 1
            s = sums[best]
            for j in range(dims):
                s[j] += p[j]
        for j in range(k):
            if count[j]:
                centres[j] = [f32(x / count[j]) for x in sums[j]]
        passes += 1
        if not (delta > 0.001 and passes <= 500):
            return passes, centres


def check_kmeans(stdout: str, ref: tuple[int, list[list[float]]]) -> tuple[bool, str]:
    m = re.search(r"iterated (\d+) times", stdout)
    rows = re.findall(r"^(\d+):((?: -?\d+\.\d+)+)\s*$", stdout, re.M)
    if not m or len(rows) != len(ref[1]):
        return False, "no centroids printed"
    if int(m.group(1)) != ref[0]:
        return False, f"{m.group(1)} iterations, the reference {ref[0]}"
    worst = max(abs(float(g) - r) for (_, row), cen in zip(rows, ref[1]) for g, r in zip(row.split(), cen))
    return worst <= 0.0051, f"{ref[0]} iterations; centroids within {worst:.4f}"


def check_hybridsort(stdout: str) -> tuple[bool, str]:
    if "PASSED" in stdout:
        return True, "PASSED"
    return False, "FAILED" if "FAILED" in stdout else "no verdict printed"


SBOX: list[int] = []


def _xtime(a: int) -> int:
    return ((a << 1) ^ 0x1B) & 0xFF if a & 0x80 else a << 1


def _sbox() -> list[int]:
    if not SBOX:
        inv = [0] * 256
        for a in range(1, 256):  # multiplicative inverses in GF(2^8)
            for b in range(1, 256):
                p, x, y = 0, a, b
                while y:
                    if y & 1:
                        p ^= x
                    x, y = _xtime(x), y >> 1
                if p == 1:
                    inv[a] = b
                    break
        for a in range(256):
            q = inv[a]
            SBOX.append(q ^ ((q << 1 | q >> 7) & 0xFF) ^ ((q << 2 | q >> 6) & 0xFF) ^ ((q << 3 | q >> 5) & 0xFF)
                        ^ ((q << 4 | q >> 4) & 0xFF) ^ 0x63)
    return SBOX


def aes128_round_keys(key: bytes) -> list[list[int]]:
    s, w, rc = _sbox(), [list(key[4 * i:4 * i + 4]) for i in range(4)], 1
    for i in range(4, 44):
        t = w[i - 1][:]
        if i % 4 == 0:
            t = [s[b] for b in t[1:] + t[:1]]
            t[0] ^= rc
            rc = _xtime(rc)
        w.append([a ^ b for a, b in zip(w[i - 4], t)])
    return [sum(w[4 * r:4 * r + 4], []) for r in range(11)]


def aes128_encrypt(block: bytes, rk: list[list[int]]) -> bytes:
    s, st = _sbox(), [b ^ k for b, k in zip(block, rk[0])]
    for r in range(1, 11):
        st = [s[b] for b in st]
        st = [st[(i + 4 * (i % 4)) % 16] for i in range(16)]  # ShiftRows on the column-major state
        if r != 10:
            mixed = []
            for c in range(4):
                a = st[4 * c:4 * c + 4]
                t = a[0] ^ a[1] ^ a[2] ^ a[3]
                mixed += [a[i] ^ t ^ _xtime(a[i] ^ a[(i + 1) % 4]) for i in range(4)]
            st = mixed
        st = [b ^ k for b, k in zip(st, rk[r])]
    return bytes(st)


def check_aes(d: Path, plain: Path, keyfile: Path) -> tuple[bool, str]:
    fips = aes128_encrypt(bytes.fromhex("00112233445566778899aabbccddeeff"), aes128_round_keys(bytes(range(16))))
    assert fips.hex() == "69c4e0d86a7b0430d8cdb78070b4c55a", "the reference AES fails FIPS-197's example"
    out = d / "output_0.dat"
    if not out.exists():
        return False, "no output_0.dat"
    data = plain.read_bytes()
    pad = 16 - len(data) % 16
    data += bytes([pad]) * pad
    rk = aes128_round_keys(bytes(int(t, 16) for t in keyfile.read_text().split()[:16]))
    got = out.read_bytes()
    if len(got) != len(data):
        return False, f"{len(got)} bytes, expected {len(data)}"
    bad = sum(aes128_encrypt(data[i:i + 16], rk) != got[i:i + 16] for i in range(0, len(data), 16))
    return bad == 0, f"{len(data) // 16 - bad}/{len(data) // 16} blocks equal"


def read_fasta(path: Path) -> list[tuple[str, str]]:
    seqs, name, parts = [], None, []
    for line in path.read_text().splitlines():
        if line.startswith(">"):
            if name is not None:
                seqs.append((name, "".join(parts)))
            name, parts = line[1:].split()[0], []
        else:
            parts.append(line.strip())
    if name is not None:
        seqs.append((name, "".join(parts)))
    return seqs


def verify_mum(stdout: str, ref_file: Path, qry_file: Path, min_len: int = 20) -> tuple[int, int]:
    """(matches, wrong ones): every `refpos qpos len` line under `> query` must be an exact match of at least
    min_len that extends neither left nor right."""
    ref = read_fasta(ref_file)[0][1]
    queries = dict(read_fasta(qry_file))
    matches = wrong = 0
    q = ""
    # The program's debug line `FOO = N` (mummergpu.cu, printMatches) lands inside a match line.
    for line in re.sub(r"FOO = \d+\n", "", stdout).splitlines():
        if line.startswith(">"):
            q = queries.get(line[1:].split()[0], "")
            continue
        f = line.split()
        if len(f) != 3:
            continue
        r, p, n = (int(x) - 1 for x in f)
        n += 1
        matches += 1
        ok = n >= min_len and ref[r:r + n] == q[p:p + n]
        ok = ok and (r == 0 or p == 0 or ref[r - 1] != q[p - 1])
        ok = ok and (r + n == len(ref) or p + n == len(q) or ref[r + n] != q[p + n])
        wrong += not ok
    return matches, wrong


def check_mum(stdout: str, cpu: str, ref_file: Path, qry_file: Path) -> tuple[bool, str]:
    same = stdout == cpu
    matches, wrong = verify_mum(stdout, ref_file, qry_file)
    note = f"{matches} matches, {'equal to' if same else 'DIFFERENT from'} -C, {wrong} wrong"
    return same and wrong == 0 and matches > 0, note


def check_spmv(out: Path, mtx: Path, vec: Path) -> tuple[bool, str]:
    lines = [ln for ln in mtx.read_text().splitlines() if not ln.startswith("%")]
    n, _, nz = map(int, lines[0].split())
    x = struct.unpack("<%df" % n, vec.read_bytes()[:4 * n])
    y, mag = [0.0] * n, [0.0] * n
    for ln in lines[1:1 + nz]:
        r, c, v = ln.split()
        r, c, val = int(r) - 1, int(c) - 1, f32(float(v))
        y[r] += val * x[c]
        mag[r] += abs(val * x[c])
        if r != c:  # coo_to_jds(..., mirrored = 1, ...)
            y[c] += val * x[r]
            mag[c] += abs(val * x[r])
    if not out.exists():
        return False, "no output file"
    b = out.read_bytes()
    (dim,) = struct.unpack("<I", b[:4])
    if dim != n or len(b) != 4 + 4 * n:
        return False, f"output of {dim} rows, expected {n}"
    got = struct.unpack("<%df" % n, b[4:])
    bad = sum(abs(g - r) > 1e-5 * m + 1e-6 for g, r, m in zip(got, y, mag))
    return bad == 0, f"{n - bad}/{n} rows within 1e-5 relative"


# ---- running ----------------------------------------------------------------------------------------------

def run(binary: str, d: Path, mech: str, functional: bool, args: list[str], tag: str) -> dict:
    stats = d / f"{tag}-{mech}{'-functional' if functional else ''}.jsonl"
    stats.unlink(missing_ok=True)
    cmd = [binary, "exec", "--mechanism", mech, *(["--functional"] if functional else []), "--stats", str(stats),
           "--", "./app", *args]
    env = dict(os.environ)
    ptxas = Path(find_nvcc()).parent / "ptxas"
    if ptxas.exists() and "RECONVERGE_PTXAS" not in env:
        env["RECONVERGE_PTXAS"] = str(ptxas)  # registers (so occupancy) from ptxas, as paper_workloads.py
    try:
        out = subprocess.run(cmd, cwd=d, capture_output=True, text=True, check=False, env=env, timeout=TIMEOUT,
                             errors="replace")
        rc, stdout, stderr = out.returncode, out.stdout, out.stderr
    except subprocess.TimeoutExpired:
        rc, stdout, stderr = -1, "", f"timed out after {TIMEOUT} s"
    launches = [json.loads(x) for x in stats.read_text().splitlines() if x.strip()] if stats.exists() else []
    warp = sum(int(s.get("warp_instructions") or 0) for s in launches)
    threads = sum(int(s.get("thread_instructions") or 0) for s in launches)
    width = int(launches[0].get("warp_size") or 32) if launches else 32
    return {"rc": rc, "stdout": stdout, "stderr": stderr, "launches": len(launches),
            "completed": bool(launches) and all(s.get("outcome") == "completed" for s in launches),
            "cycles": sum(int(s.get("cycles") or 0) for s in launches),
            "simd": threads / (warp * width) if warp else 0.0, "cmd": " ".join(cmd)}


def cell(r: dict, ok: bool, functional: bool) -> str:
    if r["rc"] != 0 or not r["completed"]:
        return f"FAIL (exit {r['rc']})"
    verdict = "ok" if ok else "WRONG"
    if functional:
        return f"{verdict}, SIMD {100 * r['simd']:.1f}%"
    return f"{verdict}, {r['cycles']:,} cycles, SIMD {100 * r['simd']:.1f}%"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--apps", required=True, type=Path, help="a checkout of accel-sim/gpu-app-collection")
    ap.add_argument("--data", required=True, type=Path,
                    help="GPGPU-Sim 2.1.1b's ispass2009-benchmarks/benchmarks/CUDA (AES's and MUM's inputs)")
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "reconverge"))
    ap.add_argument("--nvcc", default=None)
    ap.add_argument("--header", type=Path, default=None, help="default: `reconverge cuda-include`'s header")
    ap.add_argument("--only", default=None, help="kmeans, hybridsort, AES, MUM or spmv")
    ap.add_argument("--keep", type=Path, default=None, help="build and run in this directory, and keep it")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each command and failing run's output")
    a = ap.parse_args()
    binary = str(Path(a.bin).resolve())
    apps, data = a.apps.resolve(), a.data.resolve()
    nvcc = a.nvcc or find_nvcc()
    ask = lambda what: subprocess.run([binary, what], capture_output=True, text=True, check=True).stdout.strip()
    header = a.header.resolve() if a.header else Path(ask("cuda-include")) / "reconverge_compat.h"
    b = Builder(nvcc, header, ask("cuda-lib"), apps)

    rows = ["| program | source | check | pdom | tbc | its | pdom functional |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = a.keep.resolve() if a.keep else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        conv = apps / "src/cuda/parboil/benchmarks/spmv/common_src/convert-dataset"
        aes_data, mum_data = data / "AES" / "data", data / "MUM" / "data"
        # (name, source, what the check compares, build, cases: dir -> [(tag, args, check(dir, run) -> (ok, note))])

        def kmeans_cases(d: Path):
            pts = kmeans_input(d)
            ref = kmeans_reference(pts)
            return [("", ["-o", "-i", pts.name], lambda _d, r: check_kmeans(r["stdout"], ref))]

        def hybridsort_cases(d: Path):
            f = hybridsort_input(d)
            return [("", [f.name], lambda _d, r: check_hybridsort(r["stdout"]))]

        def aes_cases(d: Path):
            args = ["e", "128", str(aes_data / "output.bmp"), str(aes_data / "key128.txt")]

            def check(dd: Path, _r: dict):
                ok = check_aes(dd, aes_data / "output.bmp", aes_data / "key128.txt")
                (dd / "output_0.dat").unlink(missing_ok=True)
                return ok
            return [("", args, check)]

        def mum_cases(d: Path):
            ref, qry = mum_data / "NC_003997.20k.fna", mum_data / "NC_003997_q25bp.50k.fna"
            cpu = run(binary, d, "pdom", True, ["-C", str(ref), str(qry)], "cpu")
            if cpu["rc"] != 0:
                raise RuntimeError("MUM's CPU path (-C) failed:\n" + cpu["stderr"][-2000:])
            return [("", [str(ref), str(qry)], lambda _d, r: check_mum(r["stdout"], cpu["stdout"], ref, qry))]

        def spmv_cases(d: Path):
            cases = []
            for tag, mtx, vec in spmv_inputs(d, conv):
                out = d / f"out-{tag}.bin"

                def check(_d: Path, _r: dict, out=out, mtx=mtx, vec=vec):
                    ok = check_spmv(out, mtx, vec)
                    out.unlink(missing_ok=True)
                    return ok
                cases.append((tag, ["-i", f"{mtx},{vec}", "-o", str(out)], check))
            return cases

        programs = [
            ("kmeans", "Rodinia 3.1 `cuda/kmeans`", "centroids and iterations vs. Python k-means",
             build_kmeans, kmeans_cases),
            ("hybridsort", "Rodinia 3.1 `cuda/hybridsort`", "its own check (-DVERIFY: = qsort)",
             build_hybridsort, hybridsort_cases),
            ("AES", "ISPASS-2009 `AES`", "ciphertext vs. Python AES-128 ECB", build_aes, aes_cases),
            ("MUM", "ISPASS-2009 `MUM`", "matches = its CPU path (-C); each match checked", build_mum, mum_cases),
            ("spmv", "Parboil `spmv/cuda_base_tex`", "y vs. Python y = A x", build_spmv, spmv_cases),
        ]
        for name, source, what, build, cases in programs:
            if a.only and name.lower() != a.only.lower():
                continue
            try:
                d = build(b, work)
                todo = cases(d)
            except (RuntimeError, OSError) as e:
                rows.append(f"| {name} | {source} | {what} | not built | | | |")
                failures.append(f"{name}: {e}")
                continue
            for tag, args, check in todo:
                cells = []
                for mech, functional in RUNS:
                    r = run(binary, d, mech, functional, args, tag or name)
                    ok, note = check(d, r) if r["rc"] == 0 else (False, "")
                    if a.verbose:
                        print(r["cmd"], f"-> exit {r['rc']}, {note}", file=sys.stderr)
                    if not ok or r["rc"] != 0 or not r["completed"]:
                        failures.append(f"{name} {tag} {mech}{' functional' if functional else ''}: exit {r['rc']}, "
                                        f"{note}\n{r['stderr'][-1500:]}")
                    cells.append(cell(r, ok, functional))
                    last_note = note
                label = f"{name} ({tag})" if tag else name
                rows.append(f"| {label} | {source} | {what}: {last_note} | " + " | ".join(cells) + " |")
    print("\n".join(rows))
    for f in failures:
        print("\n" + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
