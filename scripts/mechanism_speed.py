"""Functional simulation speed of every mechanism on the suite, beside pdom's: the table of docs/speed.md
("Every mechanism fast").

For each mechanism of the registry (the rows of `reconverge cost --csv`) and each binary given, runs
`reconverge bench --functional --threads 1 --mechanism M --csv` and takes the suite total (row `ALL`:
simulated thread instructions per second, every kernel measured for at least --min-ms). Binaries are
run alternately, mechanism by mechanism, for --rounds rounds, and each cell keeps its best round, so a
busy moment of the machine costs one round, not one column. Prints a Markdown table: per binary the rate
(M thread-instructions/s) and pdom's rate divided by it (the simulation-time ratio to pdom over the same
work; issue 42 asks for at most 1.5).

Timings depend on the machine and its load: the script measures, it does not check. Standard library
only.

    python3 scripts/mechanism_speed.py --binary target/release/reconverge-before \\
        --binary target/release/reconverge --rounds 2 --min-ms 100 [--mechanism M ...]
"""

from __future__ import annotations

import argparse
import csv
import io
import subprocess
import sys


def mechanisms(binary: str) -> list[str]:
    """Every registered mechanism, in the registry's order (`cost --csv`, one or more rows each)."""
    out = subprocess.run([binary, "cost", "--csv"], check=True, capture_output=True, text=True).stdout
    seen: list[str] = []
    for row in csv.DictReader(io.StringIO(out)):
        if row["mechanism"] not in seen:
            seen.append(row["mechanism"])
    return seen


def suite_rate(binary: str, mechanism: str, min_ms: int) -> float:
    """Simulated thread instructions per second over the suite (the `ALL` row of `bench --csv`)."""
    args = [binary, "bench", "--functional", "--threads", "1", "--mechanism", mechanism,
            "--min-ms", str(min_ms), "--csv"]
    out = subprocess.run(args, check=False, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({out.returncode}): {out.stderr.strip()}")
    for row in csv.DictReader(io.StringIO(out.stdout)):
        if row["kernel"] == "ALL":
            return float(row["functional_thread_instructions_per_s"])
    sys.exit(f"{' '.join(args)} printed no ALL row")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", action="append", required=True, help="a reconverge binary (repeatable)")
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds; each cell keeps its best")
    ap.add_argument("--min-ms", type=int, default=100, help="bench's --min-ms per kernel")
    ap.add_argument("--mechanism", action="append", default=[],
                    help="only this mechanism (repeatable; pdom is always measured, as the reference)")
    a = ap.parse_args()
    mechs = mechanisms(a.binary[0])
    if a.mechanism:
        unknown = sorted(set(a.mechanism) - set(mechs))
        if unknown:
            sys.exit(f"unknown mechanism(s): {', '.join(unknown)}")
        mechs = [m for m in mechs if m == "pdom" or m in a.mechanism]
    best: dict[tuple[str, str], float] = {}
    for _ in range(a.rounds):
        for m in mechs:
            for b in a.binary:
                rate = suite_rate(b, m, a.min_ms)
                best[(b, m)] = max(best.get((b, m), 0.0), rate)
    head = "| mechanism |" + "".join(f" `{b}` M/s | pdom / it |" for b in a.binary)
    print(head)
    print("| --- |" + " ---: | ---: |" * len(a.binary))
    for m in mechs:
        cells = ""
        for b in a.binary:
            rate, pdom = best[(b, m)], best[(b, "pdom")]
            cells += f" {rate / 1e6:.1f} | {pdom / rate:.2f} |"
        print(f"| {m} |{cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
