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
    gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))  # noqa: E731
    out += ["", f"Geometric means over the {len(done)} completed kernels: on `gtx480`, `stackless` "
            f"{gm(ratios[('gtx480', 'stackless')]):.3f}× and `stackless-dcp` {gm(ratios[('gtx480', 'stackless-dcp')]):.3f}× "
            f"of `pdom`; on `temporal`, {gm(ratios[('temporal', 'stackless')]):.3f}× and "
            f"{gm(ratios[('temporal', 'stackless-dcp')]):.3f}×."]
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(REPO / "target/release/reconverge"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    doc = DOC.read_text()
    begin, end = "<!-- seed004:cycles -->", "<!-- /seed004:cycles -->"
    i, j = doc.index(begin) + len(begin), doc.index(end)
    new = doc[:i] + "\n" + table(a.bin) + doc[j:]
    if a.check:
        if new != doc:
            print("docs/seed004-results.md's cycles table differs from the binary")
            return 1
        return 0
    DOC.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
