#!/usr/bin/env python3
"""Print the tables of docs/seed003-results.md: every seed 003 mechanism on every built-in kernel.

Usage:
    python3 scripts/path_list_table.py [--bin target/release/reconverge]           # rewrites the tables
    python3 scripts/path_list_table.py --check [--bin ...]    # exit 1 when docs/seed003-results.md differs

Runs `reconverge compare --csv` for pdom and every path-list, parallel and per-thread-pc mechanism and
prints Markdown tables: per mechanism, the geometric-mean speedup over pdom on the kernels where every
mechanism completes, the mean SIMD efficiency, the largest structure (max_paths or max_stack_depth) and
the latency hidden by parallel paths; then the structure size per kernel side by side. The tables sit
in docs/seed003-results.md between `<!-- seed003:tables -->` and `<!-- /seed003:tables -->` (GTX 480
preset, warp size 32). Standard library only.
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_tables import write_or_check  # noqa: E402

DOC = Path(__file__).resolve().parent.parent / "docs" / "seed003-results.md"
BEGIN, END = "<!-- seed003:tables -->", "<!-- /seed003:tables -->"

MECHS = ["pdom", "minpc", "breadth", "hybrid", "sorted:minpc", "sorted:depth", "sorted:majority", "sorted:minority",
         "maven:1-stack", "maven:2-stack", "runner-up", "simty", "arbiter", "thread-frontiers", "forkjoin",
         "dual-path", "multi-path", "sbi", "harp", "dws", "its", "mimd"]


def run(binary: str, *args: str) -> list[dict[str, str]]:
    out = subprocess.run([binary, *args, "--csv"], check=False, capture_output=True, text=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def structure(r: dict[str, str]) -> str:
    if r.get("max_stack_depth"):
        return f"stack {r['max_stack_depth']}"
    if r.get("max_paths"):
        return f"paths {r['max_paths']}"
    return "-"


def tables(binary: str, config: str) -> str:
    """Both tables, as Markdown."""
    out: list[str] = []
    print = out.append  # noqa: A001  (the tables are collected, then written or compared)
    a = argparse.Namespace(bin=binary, config=config)
    args = ["compare", "--config", a.config]
    for m in MECHS:
        args += ["--mechanism", m]
    rows = run(a.bin, *args)
    by = {(r["kernel"], r["mechanism"]): r for r in rows}
    kernels = sorted({r["kernel"] for r in rows})
    done = {k: r for k, r in by.items() if r["outcome"] == "completed"}
    common = [k for k in kernels if all((k, m) in done for m in MECHS)]
    left = [k for k in kernels if k not in common]
    print(f"{a.config}, warp 32: geometric means over the {len(common)} kernels where every mechanism "
          f"completes (left out: {', '.join(left)}; the median speedup is in brackets)\n")
    print("| mechanism | speedup over pdom (median) | mean SIMD efficiency | kernel warp instructions vs pdom "
          "| largest structure | issues hiding latency |")
    print("| --- | --- | --- | --- | --- | --- |")
    for m in MECHS:
        ratios = sorted(int(done[(k, "pdom")]["cycles"]) / int(done[(k, m)]["cycles"]) for k in common)
        sp = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        n = len(ratios)
        med = ratios[n // 2] if n % 2 else (ratios[n // 2 - 1] + ratios[n // 2]) / 2
        eff = sum(float(done[(k, m)]["simd_efficiency"]) for k in common) / len(common)
        wi = math.exp(sum(math.log(int(done[(k, m)]["kernel_instructions"])
                                   / int(done[(k, "pdom")]["kernel_instructions"])) for k in common) / len(common))
        big = max((done[(k, m)] for k in common), key=lambda r: int(r.get("max_stack_depth") or r.get("max_paths") or 0))
        hid = sum(int(done[(k, m)].get("latency_hiding_issues") or 0) for k in common)
        print(f"| {m} | {sp:.3f}x ({med:.3f}x) | {100 * eff:.1f}% | {wi:.3f}x | {structure(big)} ({big['kernel']}) | {hid} |")
    print("")
    print("Structure size per kernel (max_stack_depth as `s`, max_paths as `p`; `*` = did not complete)")
    print("")
    abbrev = {"thread-frontiers": "tf", "maven:1-stack": "mv1", "maven:2-stack": "mv2", "runner-up": "ru"}
    short = {m: abbrev.get(m, m.replace("sorted:", "s:")) for m in MECHS}
    print("| kernel | " + " | ".join(short[m] for m in MECHS) + " |")
    print("| --- " * (len(MECHS) + 1) + "|")
    for k in kernels:
        cells = []
        for m in MECHS:
            r = by.get((k, m))
            if r is None:
                cells.append("")
                continue
            s = structure(r).replace("stack ", "s").replace("paths ", "p")
            cells.append(s + ("" if r["outcome"] == "completed" else "*"))
        print(f"| {k} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/reconverge")
    ap.add_argument("--config", default="gtx480")
    ap.add_argument("--check", action="store_true", help="exit 1 when docs/seed003-results.md differs")
    a = ap.parse_args()
    return write_or_check(DOC, BEGIN, END, tables(a.bin, a.config), a.check, "path_list_table.py")


if __name__ == "__main__":
    sys.exit(main())
