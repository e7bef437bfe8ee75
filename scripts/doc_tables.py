"""Writing or checking a generated block of a document: the text between two marker comments.

Used by the scripts that generate the results tables of docs/ (deadlock_table.py, path_list_table.py,
seed004_cycles_table.py). Standard library only.
"""

from __future__ import annotations

import sys
from pathlib import Path


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
