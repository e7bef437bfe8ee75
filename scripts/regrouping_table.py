#!/usr/bin/env python3
"""Print the tables of docs/seed002-results.md: seed 002's test case and the compare geomeans.

Usage:
    python3 scripts/regrouping_table.py [--bin target/release/reconverge] [--config gtx480 ...]

Runs `reconverge suite` and `reconverge compare` (CSV) and prints Markdown tables: SIMD utilisation
and CAPRI's predictions on seed 002's test case; the geometric-mean speedups of every mechanism over
pdom and over none on the kernels where every mechanism completes; the BFS rows. Standard library only.
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import subprocess
import sys

MECHS = ["pdom", "ssy", "none", "dwf", "tbc", "capri"]


def run(binary: str, *args: str) -> list[dict[str, str]]:
    out = subprocess.run([binary, *args, "--csv"], check=False, capture_output=True, text=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def seed002(binary: str) -> None:
    rows = run(binary, "suite", "--kernel", "capri", "--mechanism", "pdom", "--mechanism", "tbc",
               "--mechanism", "capri")
    timed = {r["mechanism"]: r for r in run(binary, "compare", "--kernel", "capri", "--mechanism", "pdom",
                                            "--mechanism", "tbc", "--mechanism", "capri")}
    print("| mechanism | SIMD utilisation | warp instructions | mispredictions | prediction rate | cycles (gtx480) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        m = r["mechanism"]
        mis = r.get("mechanism_counters_mispredictions") or "-"
        rate = r.get("mechanism_counters_prediction_rate")
        rate = f"{100 * float(rate):.1f}%" if rate else "-"
        print(f"| {m} | {100 * float(r['simd_efficiency']):.1f}% | {r['warp_instructions']} | {mis} | {rate} "
              f"| {timed[m]['cycles']} |")


def geomeans(binary: str, config: str) -> None:
    rows = run(binary, "compare", "--config", config)
    cycles = {(r["kernel"], r["mechanism"]): int(r["cycles"]) for r in rows if r["outcome"] == "completed"}
    kernels = sorted({r["kernel"] for r in rows})
    common = [k for k in kernels if all((k, m) in cycles for m in MECHS)]
    left_out = [k for k in kernels if k not in common]

    def gm(num: str, den: str, ks: list[str]) -> float:
        return math.exp(sum(math.log(cycles[(k, den)] / cycles[(k, num)]) for k in ks) / len(ks))

    print(f"\n{config}, warp 32, {len(common)} kernels (left out, some mechanism does not complete: "
          f"{', '.join(left_out)})\n")
    print("| mechanism | speedup over pdom | speedup over none |")
    print("| --- | --- | --- |")
    for m in MECHS:
        print(f"| {m} | {gm(m, 'pdom', common):.3f}x | {gm(m, 'none', common):.3f}x |")
    for k in ("bfs_large", "bfs"):
        row = {r["mechanism"]: r for r in rows if r["kernel"] == k}
        cells = ", ".join(f"{m} {cycles[(k, 'pdom')] / cycles[(k, m)]:.3f}x" for m in MECHS if (k, m) in cycles)
        print(f"\n{k}: speedup over pdom: {cells}")
        c = row.get("capri", {})
        if c.get("mechanism_counters_prediction_rate"):
            print(f"{k}: capri avoided {c['mechanism_counters_unnecessary_syncs_avoided']} of "
                  f"{c['mechanism_counters_unnecessary_syncs']} unnecessary syncs "
                  f"({100 * float(c['mechanism_counters_prediction_rate']):.1f}%), "
                  f"{c['mechanism_counters_mispredictions']} mispredictions of "
                  f"{c['mechanism_counters_predictions']} predictions")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="target/release/reconverge")
    ap.add_argument("--config", action="append", default=None)
    a = ap.parse_args()
    seed002(a.bin)
    for c in a.config or ["gtx480", "volta"]:
        geomeans(a.bin, c)
    return 0


if __name__ == "__main__":
    sys.exit(main())
