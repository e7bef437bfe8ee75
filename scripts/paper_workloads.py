#!/usr/bin/env python3
"""Run the ISPASS-2009 programs through `reconverge exec` under every mechanism whose paper claims a gain, on
the GTX 480 preset and on GPGPU-Sim 2.x's ISPASS-2009 machine (`ispass09`), and write the workloads table of
docs/paper-reproduction.md.

Usage:
    python3 scripts/paper_workloads.py --apps DIR --data DATA [--bin target/release/reconverge] [--nvcc NVCC]
                                       [--only NAME] [--check]

DIR is a checkout of accel-sim/gpu-app-collection (the directory holding `src/cuda`); it is read, never
changed: each program's sources are copied into a temporary directory and built there with
`nvcc -cudart shared` (CUDA 13, sm_80; `cudaThreadSynchronize`/`cudaThreadExit`, which CUDA 12 removed,
mapped to their successors with `-D`; the SDK timers from the collection's `libcutil_x86_64.a`), then run
once per mechanism and machine with `--stats`. DATA is the `ispass2009-benchmarks/benchmarks/CUDA`
directory of a GPGPU-Sim 2.1.1b release (for instance the public mirror sfraney/gpgpu-sim), which holds the
input files the collection downloads with its get_data.sh: BFS runs on its `graph65536.txt`, the input the
ISPASS-2009 paper's README names. Nothing from either enters this repository. The programs that use
texture references (AES, DG, MUM, issue 40) or lack an input (NN's images and WP's data are not in the
release) are listed as not run. The table sits between `<!-- workloads:table -->` and
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
from _tools import find_nvcc  # noqa: E402
from paper_ablation import GROUPS  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "paper-reproduction.md"
BEGIN, END = "<!-- workloads:table -->", "<!-- /workloads:table -->"
MECHS = ["pdom", "tbc", "capri", "dwf", "dws", "sbi", "harp"]

# (name, sources to compile, arguments); every one in src/cuda/ispass-2009/NAME.
PROGRAMS = [
    ("BFS", ["bfs.cu"], ["data/graph65536.txt"]),
    ("NQU", ["nqueen.cu"], []),
    ("RAY", ["rayTracing.cu", "EasyBMP.cpp", "makebmp.cpp"], ["256", "256"]),
    ("STO", ["main.cu", "storeGPU.cu", "storeCPU.cpp", "md5_cpu.cpp", "sha1_cpu.cpp"], []),
    ("LIB", ["libor.cu"], []),
    ("LPS", ["laplace3d.cu", "laplace3d_gold.cpp"], []),
]
MACHINES = ["gtx480", "ispass09"]
# Programs also run on `ispass09` with one group of the GTX 480's parameters at a time (paper_ablation.GROUPS),
# under these mechanisms.
GROUP_PROGRAMS, GROUP_MECHS = ["BFS"], ["pdom", "tbc", "dwf"]
NOT_RUN = [("AES", "texture references, which CUDA 13's headers no longer declare (issue 40)"),
           ("DG", "the same"), ("MUM", "the same"), ("NN", "its image input is not in the release"),
           ("WP", "its data directory is not in the release"), ("CP", "a separate Parboil-style build")]


def build(apps: Path, data: Path, name: str, sources: list[str], nvcc: str, work: Path) -> Path:
    """Copies program `name` from the collection (and its input files from the release) into `work` and
    builds it; returns its directory."""
    src = apps / "src" / "cuda" / "ispass-2009" / name
    common = apps / "src" / "cuda" / "common"
    d = work / name
    shutil.copytree(src, d)
    if (data / name / "data").is_dir():
        shutil.copytree(data / name / "data", d / "data", dirs_exist_ok=True)
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


def run(binary: str, d: Path, mech: str, machine: str, args: list[str]) -> list[dict]:
    """Every launch's statistics of the program in `d` under `mech` on `machine` (timed)."""
    stats = d / f"{mech.replace(':', '_')}-{Path(machine).stem}.jsonl"
    cmd = [binary, "exec", "--mechanism", mech, "--config", machine, "--stats", str(stats), "--", "./app", *args]
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


def table(binary: str, apps: Path, data: Path, nvcc: str, only: str | None) -> str:
    rows = ["| program | machine | launches | CTAs per SM | pdom SIMD eff. | "
            + " | ".join(f"{m} / pdom" for m in MECHS[1:]) + " |",
            "| --- | --- | --- | --- | --- | " + " | ".join("---" for _ in MECHS[1:]) + " |"]
    ratios: dict[str, dict[str, list[float]]] = {c: {m: [] for m in MECHS[1:]} for c in MACHINES}
    groups: list[str] = []
    with tempfile.TemporaryDirectory() as w:
        for name, sources, args in PROGRAMS:
            if only and name != only:
                continue
            d = build(apps, data, name, sources, nvcc, Path(w))
            for machine in MACHINES:
                got = {m: run(binary, d, m, machine, args) for m in MECHS}
                base = summary(got["pdom"])
                cells = []
                for m in MECHS[1:]:
                    s = summary(got[m])
                    if s[3] and base[3] and s[0]:
                        ratios[machine][m].append(base[0] / s[0])
                        cells.append(f"{base[0] / s[0]:.3f}")
                    else:
                        cells.append("-")
                rows.append(f"| {name} | {machine} | {len(got['pdom'])} | {base[4]} | {100 * base[2]:.1f}% | "
                            + " | ".join(cells) + " |")
            if name in GROUP_PROGRAMS:
                groups.append(group_rows(binary, d, name, args))
    for machine in MACHINES:
        geo = [f"{math.exp(sum(map(math.log, r)) / len(r)):.3f}" if r else "-" for r in ratios[machine].values()]
        rows.append(f"| geometric mean | {machine} | | | | " + " | ".join(geo) + " |")
    head = ("ISPASS-2009 programs of `accel-sim/gpu-app-collection`, built with CUDA 13 and run unmodified through "
            "`exec` (timed, every launch) on the GTX 480 preset and on GPGPU-Sim 2.x's ISPASS-2009 machine "
            "(`ispass09`): speed over pdom (pdom's cycles / the mechanism's, summed over launches; `-` where a "
            "run does not complete).\n")
    tail = "\nNot run: " + "; ".join(f"{n} ({why})" for n, why in NOT_RUN) + ".\n"
    return head + "\n" + "\n".join(rows) + "\n" + tail + "".join(groups)


def group_rows(binary: str, d: Path, name: str, args: list[str]) -> str:
    """`name` on `ispass09`, on it with each group of the GTX 480's parameters, and on `gtx480`."""
    out = [f"\n{name} from the ISPASS-2009 machine towards the GTX 480, one group of the `gtx480` preset's "
           "parameters at a time (the groups of the ablation below):\n",
           "| machine | CTAs per SM | pdom cycles | pdom SIMD eff. | tbc SIMD eff. | "
           + " | ".join(f"{m} / pdom" for m in GROUP_MECHS[1:]) + " |",
           "| --- | --- | --- | --- | --- | " + " | ".join("---" for _ in GROUP_MECHS[1:]) + " |"]
    configs = [("ispass09", "ispass09")]
    for label, _, body in GROUPS:
        f = d / (label.replace(" ", "-") + ".toml")
        f.write_text(f'base = "ispass09"\nname = "ispass09 + {label}"\n' + body)
        configs.append((f"ispass09 + {label}", str(f)))
    configs.append(("gtx480", "gtx480"))
    for label, config in configs:
        got = {m: summary(run(binary, d, m, config, args)) for m in GROUP_MECHS}
        base = got["pdom"]
        cells = [f"{base[0] / s[0]:.3f}" if s[3] and base[3] and s[0] else "-" for s in
                 (got[m] for m in GROUP_MECHS[1:])]
        out.append(f"| {label} | {base[4]} | {base[0]} | {100 * base[2]:.1f}% | {100 * got['tbc'][2]:.1f}% | "
                   + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--apps", required=True, type=Path, help="a checkout of accel-sim/gpu-app-collection")
    ap.add_argument("--data", required=True, type=Path,
                    help="GPGPU-Sim 2.1.1b's ispass2009-benchmarks/benchmarks/CUDA (the input files)")
    ap.add_argument("--only", default=None, help="run one program and print its rows (no doc change)")
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "reconverge"))
    ap.add_argument("--nvcc", default=None)
    ap.add_argument("--check", action="store_true", help="exit 1 when the doc's table differs")
    a = ap.parse_args()
    new = table(str(Path(a.bin).resolve()), a.apps.resolve(), a.data.resolve(), a.nvcc or find_nvcc(), a.only)
    if a.only:
        print(new)
        return 0
    return write_or_check(DOC, BEGIN, END, new, a.check, "paper_workloads.py")


if __name__ == "__main__":
    sys.exit(main())
