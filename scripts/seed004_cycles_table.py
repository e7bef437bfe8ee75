#!/usr/bin/env python3
"""The §5 cycles table of docs/seed004-results.md: pdom, stackless and stackless-dcp on gtx480 and temporal.

Usage:
    python3 scripts/seed004_cycles_table.py [--bin target/release/reconverge]            # rewrite the table
    python3 scripts/seed004_cycles_table.py --check                                      # exit 1 when stale

The table and the geometric means sit between `<!-- seed004:cycles -->` and `<!-- /seed004:cycles -->`.
Standard library only.
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

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "seed004-results.md"
MECHS = ["pdom", "stackless", "stackless-dcp"]
CONFIGS = ["gtx480", "temporal"]


def table(binary: str) -> str:
    args = [binary, "compare", "--csv"] + [x for m in MECHS for x in ("--mechanism", m)]
    args += [x for c in CONFIGS for x in ("--config", c)]
    rows = list(csv.DictReader(io.StringIO(subprocess.run(args, cwd=REPO, capture_output=True, text=True).stdout)))
    by = {(r["kernel"], r["config"], r["mechanism"]): r for r in rows}
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    head = [f"{c} {m}" for c in CONFIGS for m in MECHS]
    out = ["| kernel | " + " | ".join(head) + " |", "|---|" + "---|" * len(head)]
    ratios = {(c, m): [] for c in CONFIGS for m in MECHS}
    for k in kernels:
        cells = []
        for c in CONFIGS:
            base = by[(k, c, "pdom")]
            for m in MECHS:
                r = by[(k, c, m)]
                cyc = f"{int(r['cycles']):,}"
                if r["outcome"] != "completed":
                    cells.append(f"{cyc} ({r['outcome']})")
                elif m == "pdom":
                    cells.append(cyc)
                else:
                    x = int(base["cycles"]) / int(r["cycles"])
                    cells.append(f"{cyc} ({x:.2f}×)")
        out.append(f"| {k} | " + " | ".join(cells) + " |")
    done = [k for k in kernels if all(by[(k, c, m)]["outcome"] == "completed" for c in CONFIGS for m in MECHS)]
    for k in done:
        for c in CONFIGS:
            for m in MECHS:
                ratios[(c, m)].append(int(by[(k, c, "pdom")]["cycles"]) / int(by[(k, c, m)]["cycles"]))
    left = [k for k in kernels if k not in done]

    def mean(c: str, m: str) -> str:
        xs = sorted(ratios[(c, m)])
        n = len(xs)
        med = xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
        return f"{math.exp(sum(map(math.log, xs)) / n):.3f}× (median {med:.3f}×)"

    out += ["", f"Geometric means over the {len(done)} kernels every mechanism completed on both configurations "
            f"(left out: {', '.join(left)}): on `gtx480`, `stackless` {mean('gtx480', 'stackless')} and "
            f"`stackless-dcp` {mean('gtx480', 'stackless-dcp')} of `pdom`; on `temporal`, "
            f"{mean('temporal', 'stackless')} and {mean('temporal', 'stackless-dcp')}."]
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(REPO / "target/release/reconverge"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    begin, end = "<!-- seed004:cycles -->", "<!-- /seed004:cycles -->"
    return write_or_check(DOC, begin, end, table(a.bin), a.check, "seed004_cycles_table.py")


if __name__ == "__main__":
    sys.exit(main())
