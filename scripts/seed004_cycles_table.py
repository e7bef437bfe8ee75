#!/usr/bin/env python3
"""The §5 cycles tables of docs/seed004-results.md: pdom, stackless and stackless-dcp on gtx480 and temporal;
pdom under the four dispatches of Figure 7 (spatial gtx480, gtx480+scalar-unit, gtx480+scalar-lane, temporal).

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
# Figure 7: (a) a separate scalar unit, (b) scalar instructions on one SIMT lane, (c) temporal SIMT.
DISPATCHES = ["gtx480", "gtx480+scalar-unit", "gtx480+scalar-lane", "temporal"]


def compare(binary: str, mechs: list[str], configs: list[str]) -> list[dict[str, str]]:
    args = [binary, "compare", "--csv"] + [x for m in mechs for x in ("--mechanism", m)]
    args += [x for c in configs for x in ("--config", c)]
    return list(csv.DictReader(io.StringIO(subprocess.run(args, cwd=REPO, capture_output=True, text=True).stdout)))


def dispatch_table(binary: str, by: dict) -> str:
    """pdom under every dispatch; the scalar ones (no temporal: it is in `by` already) run here."""
    for r in compare(binary, ["pdom"], DISPATCHES[1:3]):
        by[(r["kernel"], r["config"], r["mechanism"])] = r
    kernels = list(dict.fromkeys(k for (k, _, _) in by))
    out = ["| kernel | " + " | ".join(f"pdom {c}" for c in DISPATCHES) + " | base-address instructions |",
           "|---|" + "---|" * (len(DISPATCHES) + 1)]
    ratios: dict[str, list[float]] = {c: [] for c in DISPATCHES[1:]}
    for k in kernels:
        rs = [by[(k, c, "pdom")] for c in DISPATCHES]
        base = int(rs[0]["cycles"])
        cells = [f"{base:,}" + ("" if rs[0]["outcome"] == "completed" else f" ({rs[0]['outcome']})")]
        for c, r in zip(DISPATCHES[1:], rs[1:]):
            cyc = int(r["cycles"])
            if r["outcome"] != "completed":
                cells.append(f"{cyc:,} ({r['outcome']})")
            else:
                cells.append(f"{cyc:,} ({base / cyc:.3f}×)")
        issued = int(rs[1]["scalarization_issued_scalar"] or 0) + int(rs[1]["scalarization_issued_converged"] or 0)
        issued += int(rs[1]["scalarization_issued_dcp"] or 0) + int(rs[1]["scalarization_issued_diverged"] or 0)
        extra = int(rs[1]["scalarization_issued_base"] or 0)
        cells.append(f"{extra:,} (+{100 * extra / max(issued, 1):.1f}%)")
        out.append(f"| {k} | " + " | ".join(cells) + " |")
        if all(r["outcome"] == "completed" for r in rs):
            for c, r in zip(DISPATCHES[1:], rs[1:]):
                ratios[c].append(base / int(r["cycles"]))
    n = len(ratios[DISPATCHES[1]])
    gm = {c: math.exp(sum(map(math.log, xs)) / len(xs)) for c, xs in ratios.items()}
    wins = sum(x > 1.0005 for x in ratios["gtx480+scalar-unit"])
    out += ["", f"Speedups over spatial `gtx480` (× in each cell), geometric means over the {n} kernels that "
            f"completed: `scalar-unit` {gm['gtx480+scalar-unit']:.3f}× (faster on {wins} kernels by more than "
            f"0.05%), `scalar-lane` {gm['gtx480+scalar-lane']:.3f}×, `temporal` {gm['temporal']:.3f}×. "
            "Base-address instructions: issued once per warp per warp-sequential access "
            "(`scalarization.issued.base`), and their share of the kernel's issued warp instructions."]
    return "\n".join(out) + "\n"


def table(binary: str) -> str:
    rows = compare(binary, MECHS, CONFIGS)
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
    return "\n".join(out) + "\n\n" + dispatch_table(binary, by)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(REPO / "target/release/reconverge"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    begin, end = "<!-- seed004:cycles -->", "<!-- /seed004:cycles -->"
    return write_or_check(DOC, begin, end, table(a.bin), a.check, "seed004_cycles_table.py")


if __name__ == "__main__":
    sys.exit(main())
