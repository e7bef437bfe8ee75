#!/usr/bin/env python3
"""The tables of docs/seed002-results.md, from the binary.

Usage:
    python3 scripts/regrouping_table.py [--bin target/release/reconverge]           # rewrite the tables
    python3 scripts/regrouping_table.py --check [--quick]   # exit 1 when a table differs from the binary

Each table sits between `<!-- seed002:NAME -->` and `<!-- /seed002:NAME -->` in docs/seed002-results.md:

    testcase      seed 002's test case (suite + compare --kernel capri) under PDOM, TBC, CAPRI and the
                  likely-convergence variants
    suite-gtx480  geometric-mean speedups over pdom and over none on the suite kernels every listed
    suite-volta   mechanism completes (and the median), on the calibrated presets
    graphs        the graph workloads of kernels/graphs on gtx480: cycles over pdom, SIMD efficiency, IPC
                  and where the issue slots went
    sensitivity   the graph workloads' geometric means under configurations that remove one cost
    uniform       graph_sssp and graph_topk on a graph without hubs (every vertex 10 random in-edges)

--quick does the first three only (what crates/reconverge-cli/tests/seed002.rs checks in CI); the graph
tables take a few minutes on 2 cores. Standard library only.
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "seed002-results.md"
MECHS = ["pdom", "ssy", "none", "dwf", "dwf:sm", "tbc", "capri", "tbc:lpc", "capri:lpc"]
GRAPH_MECHS = ["pdom", "tbc", "tbc:lpc", "capri", "capri:lpc", "dwf", "dwf:sm"]
# One cost removed at a time (a configuration file on top of gtx480), for the sensitivity table.
SENSITIVITY = [
    ("gtx480 (calibrated)", ""),
    ("block-age warp scheduling (`sm.scheduler = \"cta-oldest\"`)", "[sm]\nscheduler = \"cta-oldest\""),
    ("no compaction latency", "[mechanism]\ncompaction_latency = 0"),
    ("one scheduler per SM", "[sm]\nschedulers = 1"),
    ("short memory latencies (L1 4, L2 20, DRAM 20 cycles)", "[l1]\nhit_latency = 4\n[l2]\nhit_latency = 20\n[dram]\nlatency = 20"),
]


def run(binary: str, *args: str) -> list[dict[str, str]]:
    p = subprocess.run([binary, *args, "--csv"], cwd=REPO, capture_output=True, text=True)
    if p.returncode not in (0, 1, 3):
        sys.exit(f"reconverge {' '.join(args)} failed ({p.returncode}): {p.stderr[:400]}")
    return list(csv.DictReader(io.StringIO(p.stdout)))


def mech_args(mechs: list[str]) -> list[str]:
    return [x for m in mechs for x in ("--mechanism", m)]


def testcase(binary: str) -> str:
    mechs = ["pdom", "tbc", "capri", "tbc:lpc", "capri:lpc"]
    rows = run(binary, "suite", "--kernel", "capri", *mech_args(mechs))
    timed = {r["mechanism"]: r for r in run(binary, "compare", "--kernel", "capri", *mech_args(mechs))}
    out = ["| mechanism | SIMD utilisation | warp instructions | mispredictions | prediction rate | cycles (gtx480) |",
           "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        m = r["mechanism"]
        mis = r.get("mechanism_counters_mispredictions") or "-"
        rate = r.get("mechanism_counters_prediction_rate")
        rate = f"{100 * float(rate):.1f}%" if rate else "-"
        out.append(f"| {m} | {100 * float(r['simd_efficiency']):.1f}% | {r['warp_instructions']} | {mis} | {rate} "
                   f"| {timed[m]['cycles']} |")
    return "\n".join(out) + "\n"


def completed_cycles(rows: list[dict[str, str]]) -> dict[tuple[str, str], int]:
    return {(r["kernel"], r["mechanism"]): int(r["cycles"]) for r in rows if r["outcome"] == "completed"}


def suite_table(binary: str, config: str) -> str:
    rows = run(binary, "compare", "--config", config, *mech_args(MECHS))
    cycles = completed_cycles(rows)
    kernels = sorted({r["kernel"] for r in rows})
    common = [k for k in kernels if all((k, m) in cycles for m in MECHS)]
    left_out = [k for k in kernels if k not in common]

    def ratios(num: str, den: str) -> list[float]:
        return [cycles[(k, den)] / cycles[(k, num)] for k in common]

    def gm(xs: list[float]) -> float:
        return math.exp(sum(math.log(x) for x in xs) / len(xs))

    out = [f"`{config}`, warp 32, over the {len(common)} kernels every listed mechanism completes (left out: "
           f"{', '.join(left_out)}).", "",
           "| mechanism | speedup over pdom (geomean) | median | speedup over none (geomean) | median |",
           "| --- | ---: | ---: | ---: | ---: |"]
    for m in MECHS:
        p, n = ratios(m, "pdom"), ratios(m, "none")
        out.append(f"| {m} | {gm(p):.3f}x | {statistics.median(p):.3f}x | {gm(n):.3f}x | {statistics.median(n):.3f}x |")
    return "\n".join(out) + "\n"


def graph_rows(binary: str, config: str) -> list[dict[str, str]]:
    return run(binary, "compare", "--kernels", "kernels/graphs", "--config", config, *mech_args(GRAPH_MECHS))


def graphs_table(binary: str) -> str:
    rows = graph_rows(binary, "gtx480")
    cycles = completed_cycles(rows)
    out = ["| kernel | mechanism | cycles | vs pdom | SIMD efficiency | IPC | warp instructions | idle slots: memory | dependency | mechanism | no warp | likely merges |",
           "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        k, m = r["kernel"], r["mechanism"]
        slots = float(r["issue_slots"]) or 1.0
        pct = lambda key: f"{100 * float(r[key] or 0) / slots:.0f}%"  # noqa: E731
        merges = r.get("mechanism_counters_likely_merges") or "-"
        out.append(f"| {k} | {m} | {r['cycles']} | {cycles[(k, 'pdom')] / cycles[(k, m)]:.2f}x | "
                   f"{100 * float(r['simd_efficiency']):.1f}% | {float(r['ipc']):.2f} | {r['warp_instructions']} | "
                   f"{pct('stall_memory')} | {pct('stall_scoreboard')} | {pct('stall_mechanism')} | "
                   f"{pct('stall_no_ready_warp')} | {merges} |")
    return "\n".join(out) + "\n"


def sensitivity_table(binary: str) -> str:
    out = ["| configuration | " + " | ".join(f"{m} over pdom" for m in GRAPH_MECHS[1:]) + " |",
           "| --- |" + " ---: |" * (len(GRAPH_MECHS) - 1)]
    with tempfile.TemporaryDirectory() as tmp:
        for i, (label, extra) in enumerate(SENSITIVITY):
            path = Path(tmp) / f"s{i}.toml"
            path.write_text(f'base = "gtx480"\nname = "s{i}"\n{extra}\n')
            cycles = completed_cycles(graph_rows(binary, str(path)))
            kernels = sorted({k for k, _ in cycles})
            cells = []
            for m in GRAPH_MECHS[1:]:
                xs = [cycles[(k, "pdom")] / cycles[(k, m)] for k in kernels]
                cells.append(f"{math.exp(sum(map(math.log, xs)) / len(xs)):.3f}x")
            out.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def write_npy_i32(path: Path, values: list[int]) -> None:
    """A little-endian int32 .npy file (format 1.0), standard library only."""
    import struct
    header = "{'descr': '<i4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with path.open("wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack(f"<{len(values)}i", *values))


def uniform_table(binary: str) -> str:
    """The same kernels on a hub-free graph: 16384 vertices, 10 in-edges each from uniformly random
    sources (SplitMix64-free LCG, seed 1), weights 1..63, the SSSP distances of a half-reached state."""
    n, deg = 16384, 10
    state = 1

    def rnd(bound: int) -> int:
        nonlocal state
        state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return (state >> 33) % bound

    row_ptr = [v * deg for v in range(n + 1)]
    col = [rnd(n) for _ in range(n * deg)]
    weight = [1 + rnd(63) for _ in range(n * deg)]
    dist = [rnd(1000) if rnd(2) else 0x3FFFFFFF for _ in range(n)]
    prio = list(range(n))
    for i in range(n - 1, 0, -1):
        j = rnd(i + 1)
        prio[i], prio[j] = prio[j], prio[i]
    mechs = GRAPH_MECHS
    out = ["| kernel | " + " | ".join(f"{m} cycles (vs pdom, SIMD eff.)" for m in mechs) + " |",
           "| --- |" + " ---: |" * len(mechs)]
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        for name, values in [("row_ptr", row_ptr), ("col", col), ("weight", weight), ("dist", dist), ("prio", prio)]:
            write_npy_i32(t / f"{name}.npy", values)
        launches = {
            "graph_sssp": [f"@{t}/row_ptr.npy", f"@{t}/col.npy", f"@{t}/weight.npy", f"@{t}/dist.npy",
                           f"zeros:i32:{n}", f"zeros:i32:{n}", str(n)],
            "graph_topk": [f"@{t}/row_ptr.npy", f"@{t}/col.npy", f"@{t}/prio.npy", f"zeros:i32:{n}", str(n)],
        }
        for kernel, args in launches.items():
            cells, base = [], None
            for m in mechs:
                cmd = [binary, "run", f"kernels/graphs/ptx/{kernel}.ptx", "--grid", str(n // 256), "--block", "256",
                       "--config", "gtx480", "--mechanism", m, "--json"]
                for x in args:
                    cmd += ["--arg", x]
                p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
                if p.returncode != 0:
                    sys.exit(f"{kernel} {m}: {p.stderr[:300]}")
                import json
                j = json.loads(p.stdout)
                base = base or j["cycles"]
                cells.append(f"{j['cycles']} ({base / j['cycles']:.2f}x, {100 * j['simd_efficiency']:.1f}%)")
            out.append(f"| {kernel} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def replace(doc: str, name: str, table: str) -> str:
    begin, end = f"<!-- seed002:{name} -->", f"<!-- /seed002:{name} -->"
    if begin not in doc:
        sys.exit(f"docs/seed002-results.md lacks the {begin} marker")
    i, j = doc.index(begin) + len(begin), doc.index(end)
    return doc[:i] + "\n" + table + doc[j:]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(REPO / "target/release/reconverge"))
    ap.add_argument("--check", action="store_true", help="compare with docs/seed002-results.md; exit 1 on a difference")
    ap.add_argument("--quick", action="store_true", help="only the test case and the suite tables")
    a = ap.parse_args()
    doc = DOC.read_text()
    tables = {"testcase": testcase(a.bin), "suite-gtx480": suite_table(a.bin, "gtx480"),
              "suite-volta": suite_table(a.bin, "volta")}
    if not a.quick:
        tables["graphs"] = graphs_table(a.bin)
        tables["sensitivity"] = sensitivity_table(a.bin)
        tables["uniform"] = uniform_table(a.bin)
    new = doc
    for name, table in tables.items():
        new = replace(new, name, table)
    if a.check:
        if new != doc:
            stale = [n for n, t in tables.items() if replace(doc, n, t) != doc]
            print("docs/seed002-results.md differs from the binary in:", ", ".join(stale))
            return 1
        return 0
    DOC.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
