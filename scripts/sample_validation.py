#!/usr/bin/env python3
"""Validate `reconverge exec --sample` (issue 42, item 5): run each CUDA program with at least 10 launches
timed in full, sampled, and functionally, and print the table of docs/speed.md's section "Sampled
simulation" (cycles, the sampled estimate with its 95% bound, the error, and the wall-clock times).

Usage:
    python3 scripts/sample_validation.py [--bin target/release/reconverge] [--apps DIR] [--config gtx480]
                                         [--mechanism pdom] [--write]

The programs: those of the `exec` tests (crates/reconverge-cudart/tests/programs) with at least 10
launches, built here with the CUDA 13 wheel's nvcc (`pip install -r scripts/requirements-cuda.txt`);
with `--apps DIR`, a checkout of accel-sim/gpu-app-collection, also Rodinia 3.1 programs that need no
input files, built from DIR (read, never changed) into a temporary directory. Every run uses one host
thread (`--threads 1`) on an otherwise idle machine; times are wall-clock seconds of the whole `exec`
(process start, host code, JIT compilation and simulation), the best of `--rounds` runs. `--write`
replaces the table between `<!-- sampling:table -->` and `<!-- /sampling:table -->` in docs/speed.md; its
times are a measurement, so CI does not check it. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _tools import find_nvcc  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "speed.md"
BEGIN, END = "<!-- sampling:table -->", "<!-- /sampling:table -->"
TESTS = REPO / "crates" / "reconverge-cudart" / "tests" / "programs"
RODINIA = Path("src/cuda/rodinia/3.1/cuda")

# (name, sources, arguments): the exec tests' programs with at least 10 launches.
TEST_PROGRAMS = [
    ("bfs", ["bfs.cu"], []),
    ("stencil", ["stencil.cu"], []),
    ("gaussian", ["gaussian.cu"], []),
    ("launches", ["launches.cu"], ["100"]),
    ("graphs", ["graphs.cu"], []),
]
# Rodinia 3.1 programs without input files (directory under RODINIA, sources, arguments). SRAD v2 is left
# out: its first kernel reads a row above its matrix (CTA row 0 reads index -1), which reconverge reports
# as an out-of-bounds access.
RODINIA_PROGRAMS = [
    ("rodinia nw", "nw", ["needle.cu"], ["1024", "10"]),
    ("rodinia pathfinder", "pathfinder", ["pathfinder.cu"], ["10000", "200", "20"]),
    ("rodinia lud", "lud", ["cuda/lud.cu", "cuda/lud_kernel.cu", "common/common.c"], ["-s", "256"]),
    ("rodinia gaussian", "gaussian", ["gaussian.cu"], ["-s", "128"]),
    ("rodinia streamcluster", "streamcluster", ["streamcluster_cuda_cpu.cpp", "streamcluster_cuda.cu"],
     ["10", "20", "16", "1024", "1024", "100", "none", "out.txt", "1"]),
]


def compile_program(nvcc: str, binary: str, src: Path, sources: list[str], out: Path, lib: Path) -> None:
    """Builds `sources` (relative to `src`) into `out` as a user would, with the compatibility header."""
    include = subprocess.run([binary, "cuda-include"], capture_output=True, text=True, check=True).stdout.strip()
    args = [nvcc, "-O2", "-w", "-cudart", "shared", "-gencode", "arch=compute_80,code=compute_80",
            "-include", f"{include}/reconverge_compat.h", f"-I{src}", f"-I{src / 'common'}",
            "-o", str(out), *sources, f"-L{lib}"]
    done = subprocess.run(args, cwd=src, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"building {out.name} failed:\n{done.stderr[-2000:]}")


def run(binary: str, cwd: Path, exe: Path, args: list[str], flags: list[str], stats: Path | None) -> float:
    """Runs `exec FLAGS -- EXE ARGS` in `cwd` and returns its wall-clock seconds; exits on a failure."""
    cmd = [binary, "exec", "--threads", "1", *flags]
    if stats is not None:
        cmd += ["--stats", str(stats)]
    cmd += ["--", str(exe), *args]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return seconds


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def measure(binary: str, name: str, cwd: Path, exe: Path, args: list[str], base: list[str], rounds: int) -> str:
    """One row of the table: the program timed in full, sampled and functional."""
    full, sampled = cwd / f"{exe.name}-full.jsonl", cwd / f"{exe.name}-sampled.jsonl"
    t_full = min(run(binary, cwd, exe, args, base, full) for _ in range(rounds))
    t_sampled = min(run(binary, cwd, exe, args, [*base, "--sample"], sampled) for _ in range(rounds))
    t_functional = min(run(binary, cwd, exe, args, ["--functional"], None) for _ in range(rounds))
    a, b = lines(full), lines(sampled)
    truth = sum(x["cycles"] for x in a)
    estimate = sum(x["sampled"]["cycles"] for x in b)
    bound = sum(x["sampled"]["cycles_error"] for x in b)
    timed = sum(x["sampled"]["timed_launches"] for x in b)
    error = 100.0 * (estimate - truth) / truth
    return (f"| {name} | {len(a)} | {timed} | {truth:,} | {estimate:,} ± {bound:,} | {error:+.2f}% "
            f"| {100.0 * bound / truth:.2f}% | {t_full:.2f} | {t_sampled:.2f} | {t_full / t_sampled:.1f}× "
            f"| {t_functional:.2f} |")


def table(binary: str, apps: Path | None, base: list[str], rounds: int) -> str:
    nvcc = find_nvcc()
    head = ("| program | launches | timed under `--sample` | cycles, all timed | sampled cycles ± 95% bound "
            "| error | bound | s, all timed | s, sampled | speed-up | s, functional |\n"
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
    rows = []
    with tempfile.TemporaryDirectory(prefix="reconverge-sample-") as tmp:
        work = Path(tmp)
        lib = work / "lib"
        lib.mkdir()
        (lib / "libcudart.so").symlink_to(Path(nvcc).resolve().parent.parent / "lib" / "libcudart.so.13")
        tests = work / "tests"
        tests.mkdir()
        for name, sources, args in TEST_PROGRAMS:
            exe = tests / name
            compile_program(nvcc, binary, TESTS, sources, exe, lib)
            rows.append(measure(binary, f"exec test {name}", tests, exe, args, base, rounds))
        for name, directory, sources, args in RODINIA_PROGRAMS if apps else []:
            src = work / "rodinia" / directory
            shutil.copytree(apps / RODINIA / directory, src)
            exe = src / "app"
            compile_program(nvcc, binary, src, sources, exe, lib)
            rows.append(measure(binary, name, src, exe, args, base, rounds))
    return head + "\n".join(rows) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default=str(REPO / "target" / "release" / "reconverge"))
    p.add_argument("--apps", type=Path, help="a checkout of accel-sim/gpu-app-collection (Rodinia 3.1)")
    p.add_argument("--config", default="gtx480")
    p.add_argument("--mechanism", default="pdom")
    p.add_argument("--rounds", type=int, default=1, help="runs of each mode; the fastest counts")
    p.add_argument("--write", action="store_true", help="write the table into docs/speed.md")
    a = p.parse_args()
    text = table(a.bin, a.apps, ["--config", a.config, "--mechanism", a.mechanism], a.rounds)
    sys.stdout.write(text)
    if a.write:
        doc = DOC.read_text()
        start, stop = doc.index(BEGIN) + len(BEGIN) + 1, doc.index(END)
        DOC.write_text(doc[:start] + text + doc[stop:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
