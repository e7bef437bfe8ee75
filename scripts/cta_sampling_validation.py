#!/usr/bin/env python3
"""Validates CTA sampling (`run --sample-ctas N`) against full timed runs: the escape-time fractal of
`bench --native` (the suite's `mandelbrot` kernel over 960 x ROWS pixels, 32 x 8 threads per CTA) under
several mechanisms, each launch timed in full and sampled, one host thread, best wall time of the rounds.
Checks that the output buffer is byte-identical, and prints (or, with --write, puts into docs/speed.md
between the `cta-sampling:table` markers) the cycles, the error against the full run, the printed spread of the windows' rates,
the wall times and the speed-up.

    python3 scripts/cta_sampling_validation.py --binary target/release/reconverge --rounds 2 --write
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PTX = ROOT / "kernels" / "ptx" / "sm_80-nofma" / "mandelbrot.ptx"
DOC = ROOT / "docs" / "speed.md"
MARK = "cta-sampling:table"


def fractal_args(rows: int) -> list[str]:
    """The fractal launch of `bench --native --fractal-rows ROWS` (crates/reconverge-cli/src/bench_native.rs)."""
    values = [f"zeros:i32:{960 * rows}", "960", str(rows), "-2.0", "-1.125", repr(2.5 / 960), repr(2.25 / rows), "64"]
    args = [str(PTX), "--grid", f"30,{(rows + 7) // 8}", "--block", "32,8"]
    for v in values:
        args += ["--arg", v]
    return args


def run(binary: str, rows: int, mechanism: str, one_in: int | None) -> tuple[float, dict, str]:
    """One run: wall seconds, the JSON statistics, the output buffer's digest."""
    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp) / "out.npy"
        cmd = [binary, "run", *fractal_args(rows), "--mechanism", mechanism, "--threads", "1", "--json",
               "--dump", f"0={dump}"]
        if one_in is not None:
            cmd += ["--sample-ctas", str(one_in)]
        t0 = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - t0
        if done.returncode != 0:
            sys.exit(f"{' '.join(cmd)}: exit {done.returncode}\n{done.stderr}")
        return seconds, json.loads(done.stdout), hashlib.sha256(dump.read_bytes()).hexdigest()


def best(binary: str, rows: int, mechanism: str, one_in: int | None, rounds: int) -> tuple[float, dict, str]:
    runs = [run(binary, rows, mechanism, one_in) for _ in range(rounds)]
    if len({(json.dumps(r[1], sort_keys=True), r[2]) for r in runs}) != 1:
        sys.exit(f"{rows} rows, {mechanism}, one in {one_in}: two runs differ")
    return min(r[0] for r in runs), runs[0][1], runs[0][2]


def measure(binary: str, rows: int, mechanism: str, one_ins: list[int], rounds: int) -> list[str]:
    t_full, full, digest = best(binary, rows, mechanism, None, rounds)
    lines = []
    for n in one_ins:
        t, s, d = best(binary, rows, mechanism, n, rounds)
        if d != digest:
            sys.exit(f"{rows} rows, {mechanism}, one in {n}: the output differs from the full run's")
        sample = s.get("cta_sample")
        c = full["cycles"]
        if sample is None:
            cells = ["-", "-", f"{c:,}", "not sampled", "-", "-"]
        else:
            err = 100.0 * (s["cycles"] - c) / c
            spread = 100.0 * sample["spread_cycles"] / c
            cells = [f"{sample['skipped_ctas']:,}", str(sample["windows"]), f"{c:,}",
                     f"{s['cycles']:,} ± {sample['spread_cycles']:,}", f"{err:+.2f}%", f"{spread:.2f}%"]
        lines.append(f"| 960 × {rows} | {mechanism} | {full['ctas']:,} | {n} | " + " | ".join(cells)
                     + f" | {t_full:.2f} | {t:.2f} | {t_full / t:.1f}× |")
    return lines


HEADER = [
    "| launch | mechanism | CTAs | one in | CTAs skipped | windows | cycles, all timed | sampled cycles ± spread "
    "| error | spread | s, all timed | s, sampled | speed-up |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", default=str(ROOT / "target" / "release" / "reconverge"))
    p.add_argument("--rows", type=int, action="append", help="fractal rows (default 256 and 1024)")
    p.add_argument("--mechanism", action="append", help="default: pdom, tbc, dwf, sbi")
    p.add_argument("--one-in", type=int, action="append", help="default: 10 and 4")
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--write", action="store_true", help="put the table into docs/speed.md")
    a = p.parse_args()
    rows = a.rows or [256, 1024]
    mechanisms = a.mechanism or ["pdom", "tbc", "dwf", "sbi"]
    one_ins = a.one_in or [10, 4]
    table = list(HEADER)
    for r in rows:
        for m in mechanisms:
            table += measure(a.binary, r, m, one_ins, a.rounds)
            print(table[-1], file=sys.stderr)
    text = "\n".join(table)
    if a.write:
        doc = DOC.read_text()
        pattern = re.compile(rf"(<!-- {MARK} -->\n).*?(<!-- /{MARK} -->)", re.S)
        if not pattern.search(doc):
            sys.exit(f"{DOC}: no `<!-- {MARK} -->` markers")
        DOC.write_text(pattern.sub(lambda m: m.group(1) + text + "\n" + m.group(2), doc))
    print(text)


if __name__ == "__main__":
    main()
