#!/usr/bin/env python3
"""Write (or check) the outcome table of docs/simt-deadlock.md from the binary.

Usage:
    python3 scripts/deadlock_table.py [--bin target/release/reconverge]           # rewrites the table
    python3 scripts/deadlock_table.py --check [--bin ...]                          # exit 1 when it differs

Runs `reconverge suite --json` (functional) on the four synchronisation-pattern kernels under every
mechanism the binary knows (the `--mechanism` values of `reconverge suite --help`) at warp sizes 4, 8, 16
and 32. A cell is the outcome at every warp size, or, where warp sizes differ, the outcome at each. Rows
group the mechanisms with identical cells, in the registry's order. The footnote marks (the "Why" list
below the table) are attached to a (mechanism, kernel, outcome): when an outcome changes, its mark falls
off and `--check` fails until the explanation is reviewed. The table sits between
`<!-- deadlock:table -->` and `<!-- /deadlock:table -->`. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_tables import write_or_check  # noqa: E402

DOC = Path(__file__).resolve().parent.parent / "docs" / "simt-deadlock.md"
BEGIN, END = "<!-- deadlock:table -->", "<!-- /deadlock:table -->"
KERNELS = [("spinlock_naive", "naive spin lock"), ("spinlock_safe", "safe spin lock"),
           ("warp_reduce", "collective after divergence"), ("flag_handoff", "flag between paths")]
WARPS = [4, 8, 16, 32]
SUP = {1: "¹", 2: "²", 3: "³", 4: "⁴", 5: "⁵", 6: "⁶", 7: "⁷", 8: "⁸", 9: "⁹", 10: "¹⁰", 11: "¹¹", 12: "¹²"}

# (kernel, outcome) -> footnote, per mechanism (the "Why" list of the document).
STACK_PARKS = {("spinlock_naive", "deadlock"): 1, ("flag_handoff", "completed"): 5}
ORDER_LIVELOCK = {("spinlock_naive", "deadlock"): 6, ("flag_handoff", "deadlock"): 6}
NOTES: dict[str, dict[tuple[str, str], int]] = {
    **{m: STACK_PARKS for m in ["pdom", "ssy", "tbc", "capri", "tbc:lpc", "capri:lpc"]},
    "none": {("spinlock_naive", "completed"): 2, ("warp_reduce", "deadlock"): 4, ("flag_handoff", "completed"): 2},
    **{m: {("spinlock_naive", "deadlock"): 3, ("spinlock_safe", "deadlock"): 3, ("flag_handoff", "deadlock"): 3}
       for m in ["dwf", "dwf:sm", "dwf:minority", "dwf:pc", "dwf:pdom"]},
    "dwf:fifo": {("spinlock_naive", "completed"): 2, ("flag_handoff", "completed"): 2},
    **{m: ORDER_LIVELOCK for m in ["minpc", "sorted:minpc", "sorted:depth", "simty", "arbiter", "thread-frontiers",
                                   "hybrid", "maven:1-stack", "runner-up"]},
    "maven:2-stack": {("spinlock_naive", "completed"): 14, ("flag_handoff", "completed"): 14},
    "mimd": {("spinlock_naive", "completed"): 2, ("flag_handoff", "completed"): 2},
    **{m: {("spinlock_naive", "deadlock"): 1, ("flag_handoff", "completed"): 2} for m in ["sbi", "harp", "dws"]},
    "sorted:majority": {("spinlock_naive", "deadlock"): 7, ("spinlock_safe", "deadlock"): 7,
                        ("warp_reduce", "deadlock"): 4, ("flag_handoff", "deadlock"): 7},
    "sorted:minority": {("spinlock_naive", "deadlock"): 8, ("warp_reduce", "deadlock"): 13},
    "breadth": {("spinlock_naive", "completed"): 9, ("flag_handoff", "completed"): 9},
    "forkjoin": {("spinlock_naive", "deadlock"): 10},
    **{m: {("spinlock_naive", "deadlock"): 1, ("flag_handoff", "completed"): 2} for m in ["dual-path", "multi-path"]},
    **{m: {("spinlock_naive", "deadlock"): 12, ("flag_handoff", "completed"): 2} for m in ["stackless", "stackless-dcp"]},
    "its": {("spinlock_naive", "completed"): 11, ("flag_handoff", "completed"): 11},
}
SUP[13] = "¹³"
SUP[14] = "¹⁴"
WORD = {"completed": "completes", "deadlock": "deadlock", "limit": "limit", "error": "error", "broken": "broken"}


def mechanisms(binary: str) -> list[str]:
    """The mechanisms in the registry's order, as `suite --help` lists its `--mechanism` values."""
    text = subprocess.run([binary, "suite", "--help"], check=True, capture_output=True, text=True).stdout
    return re.findall(r"^\s+- ([a-z][a-z0-9:-]*):", text, flags=re.M)


def cell(mech: str, kernel: str, by_warp: dict[int, str]) -> str:
    def word(outcome: str) -> str:
        mark = NOTES.get(mech, {}).get((kernel, outcome))
        return WORD.get(outcome, outcome) + (SUP[mark] if mark else "")

    outcomes = [by_warp.get(w, "not run") for w in WARPS]
    if len(set(outcomes)) == 1:
        return word(outcomes[0])
    parts = []
    for o in dict.fromkeys(outcomes):
        ws = ", ".join(str(w) for w, x in zip(WARPS, outcomes) if x == o)
        parts.append(f"{word(o)} at W = {ws}")
    return "; ".join(parts)


def table(binary: str) -> str:
    mechs = mechanisms(binary)
    args = [binary, "suite", "--json"]
    for k, _ in KERNELS:
        args += ["--kernel", k]
    for w in WARPS:
        args += ["--warp-size", str(w)]
    for m in mechs:
        args += ["--mechanism", m]
    out = subprocess.run(args, check=False, capture_output=True, text=True)
    rows = json.loads(out.stdout)
    got: dict[tuple[str, str], dict[int, str]] = {}
    for r in rows:
        got.setdefault((r["mechanism"], r["kernel"]), {})[r["warp_size"]] = r["outcome"]
    groups: dict[tuple[str, ...], list[str]] = {}
    for m in mechs:
        cells = tuple(cell(m, k, got.get((m, k), {})) for k, _ in KERNELS)
        groups.setdefault(cells, []).append(m)
    lines = ["| mechanism | " + " | ".join(title for _, title in KERNELS) + " |",
             "| --- " * (len(KERNELS) + 1) + "|"]
    for cells, ms in groups.items():
        lines.append("| " + ", ".join(f"`{m}`" for m in ms) + " | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/reconverge")
    ap.add_argument("--check", action="store_true", help="exit 1 when docs/simt-deadlock.md's table differs")
    a = ap.parse_args()
    return write_or_check(DOC, BEGIN, END, table(a.bin), a.check, "deadlock_table.py")


if __name__ == "__main__":
    sys.exit(main())
