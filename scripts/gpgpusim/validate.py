#!/usr/bin/env python3
"""reconverge's cycles beside GPGPU-Sim's on the validation set: the per-launch table and the agreement.

    python3 scripts/gpgpusim/validate.py [--bin target/release/reconverge] [--preset gtx480=SM2_GTX480 ...]
    python3 scripts/gpgpusim/validate.py --check      # the tables in docs/ must equal a fresh run (exit 1)
    python3 scripts/gpgpusim/validate.py --check --targets   # and the calibration targets must hold (CI)

For every preset and the GPGPU-Sim configuration it follows (default gtx480 = SM2_GTX480, volta = SM7_QV100)
it runs every launch of docs/validation/gpgpusim-CONFIG.csv under reconverge (pdom, W = 32, timed), and
writes docs/validation/reconverge-PRESET.csv (cycles of both, their ratio, warp instructions of both) and
the summary: Pearson correlation of log cycles, mean absolute relative error, the worst ratios. The tables
between the `<!-- validation:PRESET -->` markers of docs/validation.md are replaced (or, with --check,
compared). No numpy needed: any Python 3.11.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "docs" / "validation"
DOC = REPO / "docs" / "validation.md"
PAIRS = {"gtx480": "SM2_GTX480", "volta": "SM7_QV100"}
# GPGPU-Sim's -gpgpu_kernel_launch_latency of each configuration (cycles before the first CTA starts); the
# presets that follow them model the same delay (`launch.kernel_latency`). The error "without the launch
# latency" subtracts it from both simulators' cycles, so that a constant both add does not flatter a preset.
LAUNCH_LATENCY = {"SM2_GTX480": 0, "SM7_QV100": 5000}
# The calibration targets of docs/validation.md, checked by --targets (crates/reconverge-cli/tests/validation.rs):
# every launch within 2x of GPGPU-Sim, Pearson correlation of log cycles >= 0.98, mean absolute relative
# error <= 15% (also without the launch latency), warp instructions equal except where the kernel's
# instruction count depends on timing (a spin lock: how often a lane retries depends on who wins when).
TARGETS = {"max_ratio": 2.0, "pearson_log": 0.98, "mae": 0.15}
TIMING_DEPENDENT = {"spinlock_safe"}
# What each modelled feature is worth: the preset with one feature taken out (a configuration file on top of
# it), over the same launches. `--ablations` writes (or, with --check, checks) the table of docs/validation.md.
ABLATIONS = [
    ("gtx480", "as calibrated", ""),
    ("gtx480", "perfect instruction cache (no front end)", "[frontend]\nicache_size = 0"),
    ("gtx480", "no operand-collector latency", "[frontend]\noperand_latency = 0"),
    ("gtx480", "no constant cache", "[constant_cache]\nsize = 0"),
    ("gtx480", "L2 starts empty (no preload)", "[l2]\npreload = false"),
    ("gtx480", "one L2 pipe instead of 12 slices", "[l2]\nchannels = 0"),
    ("gtx480", "no SM port limit", "[l2]\nsm_port_sectors_per_cycle = 0"),
    ("gtx480", "linear L1 set index", "[l1]\nset_index = \"linear\""),
    ("gtx480", "L1 MSHRs 64 (GPGPU-Sim's number)", "[l1]\nmshrs = 64"),
    ("gtx480", "LRR scheduler instead of GTO", "[sm]\nscheduler = \"lrr\""),
    ("gtx480", "DRAM as one 253 B/cycle channel (no banks, rows or FR-FCFS)", "[dram]\nuse_banks = false"),
    ("gtx480", "a sectored L1 (misses fetch only the sectors touched)", "[l1]\nwhole_line_fills = false"),
    ("volta", "as calibrated", ""),
    ("volta", "L2 hit latency 160 (the rop latency alone)", "[l2]\nhit_latency = 160"),
    ("volta", "no launch latency", "[launch]\nkernel_latency = 0"),
    ("volta", "DRAM as one 795 B/cycle channel (no banks, rows or FR-FCFS)", "[dram]\nuse_banks = false"),
]


def launches() -> dict[str, dict]:
    """The validation set by kernel name (as scripts/gpgpusim/run.py lists it)."""
    out = {}
    for path, base, override in [(REPO / "kernels/validation/manifest.toml", REPO / "kernels/validation", False),
                                  (REPO / "kernels/manifest.toml", REPO / "kernels", True)]:
        for e in tomllib.loads(path.read_text())["kernel"]:
            e = dict(e, base=base)
            if override:
                e["ptx_file"] = REPO / "kernels/validation/ptx/suite" / f"{e['name']}.ptx"
            else:
                e["ptx_file"] = base / e["ptx"]
            out.setdefault(e["name"], e)
    return out


def run_reconverge(binary: Path, e: dict, preset: str) -> dict:
    cmd = [str(binary), "run", str(e["ptx_file"]), "--kernel", e["name"], "--grid", ",".join(map(str, e["grid"])),
           "--block", ",".join(map(str, e["block"])), "--dynamic-shared", str(e.get("dynamic_shared", 0)),
           "--config", preset, "--mechanism", "pdom", "--warp-size", "32", "--json"]
    for a in e["args"]:
        cmd += ["--arg", str(a)]
    for k, v in sorted(e.get("globals", {}).items()):
        cmd += ["--global", f"{k}={v}"]
    p = subprocess.run(cmd, cwd=e["base"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{e['name']}: reconverge failed: {p.stderr.strip()[:400]}")
    return json.loads(p.stdout)


def stats(rows: list[dict], latency: int) -> dict:
    xs = [math.log(float(r["gpgpusim_cycles"])) for r in rows]
    ys = [math.log(float(r["reconverge_cycles"])) for r in rows]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    ratios = sorted(float(r["ratio"]) for r in rows)
    mae = sum(abs(float(r["ratio"]) - 1) for r in rows) / n
    mae_body = sum(abs((int(r["reconverge_cycles"]) - latency) / (int(r["gpgpusim_cycles"]) - latency) - 1)
                   for r in rows) / n
    return {
        "launches": n,
        "pearson_log": sxy / math.sqrt(sxx * syy) if sxx and syy else float("nan"),
        "mae": mae,
        "mae_without_launch_latency": mae_body,
        "median_ratio": ratios[n // 2] if n % 2 else (ratios[n // 2 - 1] + ratios[n // 2]) / 2,
        "min_ratio": ratios[0],
        "max_ratio": ratios[-1],
        "within_2x": sum(1 for r in ratios if 0.5 <= r <= 2.0),
        "warp_instructions_equal": sum(1 for r in rows if r["warp_instructions_equal"] == "yes"),
    }


def markdown(preset: str, config: str, rows: list[dict], s: dict) -> str:
    lines = [
        f"`{preset}` against GPGPU-Sim's `{config}` ({s['launches']} launches, pdom, W = 32): Pearson correlation "
        f"of log cycles **{s['pearson_log']:.3f}**, mean absolute relative error **{100 * s['mae']:.1f}%** "
        f"({100 * s['mae_without_launch_latency']:.1f}% without the {LAUNCH_LATENCY[config]}-cycle launch latency), "
        f"median ratio {s['median_ratio']:.2f}, ratios from {s['min_ratio']:.2f} to {s['max_ratio']:.2f} "
        f"({s['within_2x']} of {s['launches']} within 2x); warp instructions equal in "
        f"{s['warp_instructions_equal']} of {s['launches']}.",
        "",
        "| launch | grid x block | GPGPU-Sim cycles | reconverge cycles | ratio | warp instructions (GPGPU-Sim / reconverge) |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        w = r["gpgpusim_warp_instructions"]
        same = r["warp_instructions_equal"] == "yes"
        lines.append(
            f"| {r['kernel']} | {r['grid']} x {r['block']} | {int(float(r['gpgpusim_cycles']))} | "
            f"{r['reconverge_cycles']} | {float(r['ratio']):.2f} | {w}{'' if same else ' / ' + r['reconverge_warp_instructions']} |"
        )
    return "\n".join(lines) + "\n"


COLUMNS = ["kernel", "grid", "block", "gpgpusim_cycles", "reconverge_cycles", "ratio", "gpgpusim_warp_instructions",
           "reconverge_warp_instructions", "warp_instructions_equal"]


def compare(binary: Path, preset: str, config: str) -> tuple[list[dict], dict]:
    source = OUT / f"gpgpusim-{config}.csv"
    gs = [r for r in csv.DictReader(source.open()) if r["ok"] == "True"]
    known = launches()
    rows = []
    with ThreadPoolExecutor() as pool:
        results = list(pool.map(lambda g: run_reconverge(binary, known[g["kernel"]], preset), gs))
    for g, j in zip(gs, results):
        ours = int(j["cycles"])
        rows.append({
            "kernel": g["kernel"], "grid": g["grid"], "block": g["block"],
            "gpgpusim_cycles": int(float(g["cycles"])), "reconverge_cycles": ours,
            "ratio": f"{ours / float(g['cycles']):.4f}",
            "gpgpusim_warp_instructions": g["warp_instructions"],
            "reconverge_warp_instructions": str(j["warp_instructions"]),
            "warp_instructions_equal": "yes" if str(j["warp_instructions"]) == g["warp_instructions"] else "no",
        })
    return rows, stats(rows, LAUNCH_LATENCY[config])


def missed_targets(preset: str, rows: list[dict], s: dict) -> list[str]:
    """The calibration targets this preset misses (empty when it meets them all)."""
    out = []
    for r in rows:
        ratio = float(r["ratio"])
        if not 1 / TARGETS["max_ratio"] <= ratio <= TARGETS["max_ratio"]:
            out.append(f"{preset} {r['kernel']}: {ratio:.2f}x GPGPU-Sim's cycles (more than {TARGETS['max_ratio']}x off)")
        if r["warp_instructions_equal"] != "yes" and r["kernel"] not in TIMING_DEPENDENT:
            out.append(f"{preset} {r['kernel']}: warp instructions {r['reconverge_warp_instructions']} "
                       f"vs GPGPU-Sim's {r['gpgpusim_warp_instructions']}")
    if s["pearson_log"] < TARGETS["pearson_log"]:
        out.append(f"{preset}: correlation of log cycles {s['pearson_log']:.3f} < {TARGETS['pearson_log']}")
    for key in ["mae", "mae_without_launch_latency"]:
        if s[key] > TARGETS["mae"]:
            out.append(f"{preset}: {key} {100 * s[key]:.1f}% > {100 * TARGETS['mae']:.0f}%")
    return out


def ablation_table(binary: Path) -> str:
    """Agreement of each preset with one feature taken out (ABLATIONS), as a markdown table."""
    import tempfile
    lines = ["| preset | change | correlation of log cycles | mean abs. error | without launch latency | min ratio | max ratio | within 2x |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    with tempfile.TemporaryDirectory() as tmp:
        for i, (preset, label, extra) in enumerate(ABLATIONS):
            path = Path(tmp) / f"ablation{i}.toml"
            path.write_text(f'base = "{preset}"\nname = "{preset}"\n{extra}\n')
            _, s = compare(binary, str(path), PAIRS[preset])
            lines.append(f"| {preset} | {label} | {s['pearson_log']:.3f} | {100 * s['mae']:.1f}% | "
                         f"{100 * s['mae_without_launch_latency']:.1f}% | {s['min_ratio']:.2f} | {s['max_ratio']:.2f} | "
                         f"{s['within_2x']} of {s['launches']} |")
    return "\n".join(lines) + "\n"


def replace_marked(doc: str, key: str, table: str) -> str:
    begin, end = f"<!-- validation:{key} -->", f"<!-- /validation:{key} -->"
    if begin not in doc:
        return doc
    i, j = doc.index(begin) + len(begin), doc.index(end)
    return doc[:i] + "\n" + table + doc[j:]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default=str(REPO / "target/release/reconverge"))
    p.add_argument("--preset", action="append", default=[], help="PRESET=CONFIG (default gtx480=SM2_GTX480 and volta=SM7_QV100)")
    p.add_argument("--check", action="store_true", help="fail when docs/validation.md or the CSVs differ from a fresh run")
    p.add_argument("--targets", action="store_true", help="fail when a preset misses a calibration target")
    p.add_argument("--ablations", action="store_true", help="also the ablation table (each preset less one feature)")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--dry", action="store_true", help="print the ratios, write nothing (for trying a configuration file)")
    a = p.parse_args()
    pairs = dict(x.split("=", 1) for x in a.preset) if a.preset else PAIRS
    doc = DOC.read_text() if DOC.exists() else ""
    stale, missed = [], []
    for preset, config in pairs.items():
        rows, s = compare(Path(a.bin), preset, config)
        if a.targets:
            missed += missed_targets(preset, rows, s)
        if not a.quiet:
            print(f"{preset} vs {config}: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in s.items()))
        if a.dry:
            for r in sorted(rows, key=lambda r: float(r["ratio"])):
                print(f"  {r['kernel']:16} {r['gpgpusim_cycles']:>8} {r['reconverge_cycles']:>8} {float(r['ratio']):6.2f}")
            continue
        csv_path = OUT / f"reconverge-{preset}.csv"
        fresh_csv = [COLUMNS] + [[r[c] if isinstance(r[c], str) else str(r[c]) for c in COLUMNS] for r in rows]
        new_doc = replace_marked(doc, preset, markdown(preset, config, rows, s))
        if a.check:
            old = list(csv.reader(csv_path.open())) if csv_path.exists() else []
            if old != fresh_csv:
                stale.append(str(csv_path.relative_to(REPO)))
            if new_doc != doc:
                stale.append(f"docs/validation.md ({preset})")
        else:
            with csv_path.open("w", newline="") as f:
                csv.writer(f).writerows(fresh_csv)
            doc = new_doc
    if a.ablations and not a.dry:
        new_doc = replace_marked(doc, "ablations", ablation_table(Path(a.bin)))
        if a.check and new_doc != doc:
            stale.append("docs/validation.md (ablations)")
        doc = doc if a.check else new_doc
    if missed:
        print("calibration targets missed:", *missed, sep="\n  ")
        return 1
    if a.check:
        if stale:
            print("stale against the binary:", *stale, sep="\n  ")
            return 1
        return 0
    if DOC.exists():
        DOC.write_text(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
