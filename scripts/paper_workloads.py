#!/usr/bin/env python3
"""Run the ISPASS-2009 programs that need no input files through `reconverge exec` under every mechanism
whose paper claims a gain, and write the workloads table of docs/paper-reproduction.md.

Usage:
    python3 scripts/paper_workloads.py --apps DIR [--bin target/release/reconverge] [--nvcc NVCC] [--check]

DIR is a checkout of accel-sim/gpu-app-collection (the directory holding `src/cuda`); it is read, never
changed: each program's sources are copied into a temporary directory and built there with
`nvcc -cudart shared` (CUDA 13, sm_80; `cudaThreadSynchronize`/`cudaThreadExit`, which CUDA 12 removed,
mapped to their successors with `-D`; the SDK timers from the collection's `libcutil_x86_64.a`), then run
once per mechanism with `--stats`. Nothing from the collection enters this repository. The programs whose
inputs the collection downloads (AES, BFS, DG, MUM, NN, WP) and LPS (`cudaMallocPitch`, not supported
yet) are listed as not run. The table sits between `<!-- workloads:table -->` and
`<!-- /workloads:table -->`; it takes minutes and needs the collection, so CI does not run it: `--check`
by hand, like the graph tables of docs/seed002-results.md. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_tables import write_or_check  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "paper-reproduction.md"
BEGIN, END = "<!-- workloads:table -->", "<!-- /workloads:table -->"
MECHS = ["pdom", "tbc", "capri", "dwf", "dws", "sbi", "harp"]

# (name, sources to compile, arguments); every one in src/cuda/ispass-2009/NAME.
PROGRAMS = [
    ("NQU", ["nqueen.cu"], []),
    ("RAY", ["rayTracing.cu", "EasyBMP.cpp", "makebmp.cpp"], ["256", "256"]),
    ("STO", ["main.cu", "storeGPU.cu", "storeCPU.cpp", "md5_cpu.cpp", "sha1_cpu.cpp"], []),
    ("LIB", ["libor.cu"], []),
]
NOT_RUN = [("AES", "input files downloaded by the collection's get_data.sh"), ("BFS", "the same"),
           ("DG", "the same"), ("MUM", "the same"), ("NN", "the same"), ("WP", "the same"),
           ("LPS", "`cudaMallocPitch` is not supported yet (issue 40)"), ("CP", "a separate Parboil-style build")]


def find_nvcc() -> str:
    wheel = sorted(REPO.glob(".tools/cuda/lib/python3*/site-packages/nvidia/cu13/bin/nvcc"))
    found = wheel[0] if wheel else shutil.which("nvcc")
    if not found:
        sys.exit("no nvcc: pip install -r scripts/requirements-cuda.txt (it installs into .tools/cuda)")
    return str(found)


def build(apps: Path, name: str, sources: list[str], nvcc: str, work: Path) -> Path:
    """Copies program `name` from the collection into `work` and builds it; returns its directory."""
    src = apps / "src" / "cuda" / "ispass-2009" / name
    common = apps / "src" / "cuda" / "common"
    d = work / name
    shutil.copytree(src, d)
    lib = work / "lib"
    lib.mkdir(exist_ok=True)
    cudart = Path(nvcc).resolve().parent.parent / "lib" / "libcudart.so.13"
    if not (lib / "libcudart.so").exists():
        (lib / "libcudart.so").symlink_to(cudart)
    args = [nvcc, "-O2", "-cudart", "shared", "-arch=sm_80", "-I.", f"-I{common / 'inc'}",
            "-DcudaThreadSynchronize=cudaDeviceSynchronize", "-DcudaThreadExit=cudaDeviceReset",
            "-o", "app", *sources, f"-L{lib}", f"-L{common / 'lib'}", "-lcutil_x86_64"]
    out = subprocess.run(args, cwd=d, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"building {name} failed:\n{out.stderr[-2000:]}")
    return d


def run(binary: str, d: Path, mech: str, args: list[str]) -> list[dict]:
    """Every launch's statistics of the program in `d` under `mech` (GTX 480, timed)."""
    stats = d / f"{mech.replace(':', '_')}.jsonl"
    cmd = [binary, "exec", "--mechanism", mech, "--config", "gtx480", "--stats", str(stats), "--", "./app", *args]
    env = dict(os.environ)
    ptxas = Path(find_nvcc()).parent / "ptxas"
    if ptxas.exists() and "RECONVERGE_PTXAS" not in env:
        env["RECONVERGE_PTXAS"] = str(ptxas)  # registers (so occupancy) from ptxas, as validation takes them
    subprocess.run(cmd, cwd=d, capture_output=True, text=True, check=False, env=env)
    return [json.loads(line) for line in stats.read_text().splitlines() if line.strip()] if stats.exists() else []


def summary(launches: list[dict]) -> tuple[int, int, float, bool, int]:
    """(cycles, warp instructions, SIMD efficiency, all completed, resident CTAs per SM of the first launch)."""
    cycles = sum(int(s.get("cycles") or 0) for s in launches)
    warp = sum(int(s.get("warp_instructions") or 0) for s in launches)
    threads = sum(int(s.get("thread_instructions") or 0) for s in launches)
    ok = bool(launches) and all(s.get("outcome") == "completed" for s in launches)
    width = int(launches[0].get("warp_size") or 32) if launches else 32
    ctas = int((launches[0].get("occupancy") or {}).get("resident_ctas") or 0) if launches else 0
    return cycles, warp, threads / (warp * width) if warp else 0.0, ok, ctas


def table(binary: str, apps: Path, nvcc: str) -> str:
    rows = ["| program | launches | CTAs per SM | pdom SIMD eff. | " + " | ".join(f"{m} / pdom" for m in MECHS[1:]) + " |",
            "| --- | --- | --- | --- | " + " | ".join("---" for _ in MECHS[1:]) + " |"]
    ratios: dict[str, list[float]] = {m: [] for m in MECHS[1:]}
    with tempfile.TemporaryDirectory() as w:
        for name, sources, args in PROGRAMS:
            d = build(apps, name, sources, nvcc, Path(w))
            got = {m: run(binary, d, m, args) for m in MECHS}
            base = summary(got["pdom"])
            cells = []
            for m in MECHS[1:]:
                s = summary(got[m])
                if s[3] and base[3] and s[0]:
                    ratios[m].append(base[0] / s[0])
                    cells.append(f"{base[0] / s[0]:.3f}")
                else:
                    cells.append("-")
            rows.append(f"| {name} | {len(got['pdom'])} | {base[4]} | {100 * base[2]:.1f}% | " + " | ".join(cells) + " |")
    geo = [f"{math.exp(sum(map(math.log, r)) / len(r)):.3f}" if r else "-" for r in ratios.values()]
    rows.append("| geometric mean | | | | " + " | ".join(geo) + " |")
    head = ("ISPASS-2009 programs of `accel-sim/gpu-app-collection` that need no input files, built with CUDA 13 "
            "and run unmodified through `exec` (GTX 480, timed, every launch): speed over pdom (pdom's cycles "
            "/ the mechanism's, summed over launches; `-` where a run does not complete).\n")
    tail = "\nNot run: " + "; ".join(f"{n} ({why})" for n, why in NOT_RUN) + ".\n"
    return head + "\n" + "\n".join(rows) + "\n" + tail


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--apps", required=True, type=Path, help="a checkout of accel-sim/gpu-app-collection")
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "reconverge"))
    ap.add_argument("--nvcc", default=None)
    ap.add_argument("--check", action="store_true", help="exit 1 when the doc's table differs")
    a = ap.parse_args()
    new = table(str(Path(a.bin).resolve()), a.apps.resolve(), a.nvcc or find_nvcc())
    return write_or_check(DOC, BEGIN, END, new, a.check, "paper_workloads.py")


if __name__ == "__main__":
    sys.exit(main())
