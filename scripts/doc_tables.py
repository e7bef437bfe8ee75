"""Writing or checking a generated block of a document: the text between two marker comments.

Used by the scripts that generate the results tables of docs/ (deadlock_table.py, path_list_table.py,
seed004_cycles_table.py, paper_headlines.py, paper_ablation.py), with the `compare --csv` runner and the
command line the paper scripts share. Standard library only.
"""

from __future__ import annotations

import argparse
import csv
import io
import subprocess
import sys
from pathlib import Path
from typing import Callable


def write_or_check(doc: Path, begin: str, end: str, new: str, check: bool, script: str) -> int:
    """Replaces the text between the lines `begin` and `end` of `doc` with `new` (which ends with a newline),
    or with `check` compares instead and returns 1 (printing the binary's version) when they differ."""
    text = doc.read_text()
    start, stop = text.index(begin) + len(begin) + 1, text.index(end)
    if check:
        if text[start:stop] != new:
            sys.stdout.write(f"{doc.name}'s generated block differs from the binary's output; rerun "
                             f"scripts/{script} (and review the prose around it). The binary's:\n" + new)
            return 1
        return 0
    doc.write_text(text[:start] + new + text[stop:])
    return 0


def compare_csv(binary: str, config: str, mechs: list[str]) -> list[dict[str, str]]:
    """The rows of `reconverge compare --csv` on the built-in kernels under `config` for `mechs`; exits
    with the binary's message when it prints nothing."""
    args = [binary, "compare", "--config", config, "--csv"]
    for m in mechs:
        args += ["--mechanism", m]
    out = subprocess.run(args, check=False, capture_output=True, text=True)
    if not out.stdout:
        sys.exit(f"{' '.join(args)} printed nothing:\n{out.stderr}")
    return list(csv.DictReader(io.StringIO(out.stdout)))


def table_main(doc: Path, begin: str, end: str, table: Callable[[str], str], script: str) -> int:
    """The command line of a table script: `[--bin BINARY] [--check]`, then [`write_or_check`]."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/reconverge")
    ap.add_argument("--check", action="store_true", help=f"exit 1 when docs/{doc.name}'s table differs")
    a = ap.parse_args()
    return write_or_check(doc, begin, end, table(a.bin), a.check, script)

