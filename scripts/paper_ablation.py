#!/usr/bin/env python3
"""Print the ablation table of docs/paper-reproduction.md: where ours and a paper's number differ, which
modelled difference moves ours.

Usage:
    python3 scripts/paper_ablation.py [--bin target/release/reconverge]     # rewrites the table
    python3 scripts/paper_ablation.py --check [--bin ...]                  # exit 1 when the doc differs

For each machine variant below -- the GTX 480 preset, then the preset with ONE parameter moved towards the
machines the papers describe (more CTAs per SM, a cheaper compaction unit or warp pool, shorter memory
latency, one scheduler, a perfect instruction cache), then all of them together -- runs
`reconverge compare --csv` on the built-in kernels for pdom and the mechanisms whose papers claim a gain
(dwf, tbc, capri, dws, sbi, harp), and prints one Markdown table: per claim (mechanism over baseline), the
geometric mean of baseline cycles / mechanism cycles over the *divergent* kernels (pdom executes a
divergent branch) where both complete, per variant. A variant is a TOML file (`base = "gtx480"` plus its
one change) written to a temporary directory. The table sits between `<!-- ablation:table -->` and
`<!-- /ablation:table -->`. Standard library only.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_tables import compare_csv, table_main  # noqa: E402

DOC = Path(__file__).resolve().parent.parent / "docs" / "paper-reproduction.md"
BEGIN, END = "<!-- ablation:table -->", "<!-- /ablation:table -->"

# (column label, what it changes, the TOML body after `base = "gtx480"`)
VARIANTS = [
    ("gtx480", "the preset", ""),
    ("1 SM", "every CTA of a launch on one SM, so CTAs share an SM where a launch has several (most built-in "
     "launches have 1 to 4 CTAs; `bfs_large` has 96, 8 resident at once)", "num_sms = 1\n"),
    ("no compaction cost", "TBC/CAPRI's compaction unit and DWF's pool insertion take 0 cycles (4 and 2)",
     "[mechanism]\ncompaction_latency = 0\npool_latency = 0\n"),
    ("half memory latency", "L1 hit 35 -> 18, L2 round trip 160 -> 80, DRAM 180 -> 90 cycles",
     "[l1]\nhit_latency = 18\n[l2]\nhit_latency = 80\n[dram]\nlatency = 90\n"),
    ("1 scheduler", "one warp scheduler per SM instead of two", "[sm]\nschedulers = 1\n"),
    ("16-lane SIMD", "integer and float units 16 lanes wide: a warp instruction occupies its unit 2 cycles",
     "[interval]\nint = 2\nfloat = 2\n"),
    ("perfect icache", "no instruction-cache misses (`icache_size = 0`)", "[frontend]\nicache_size = 0\n"),
    ("8 warps per SM", "at most 8 warps (256 threads) resident per SM, the few warps per core of the DWS abstract "
     "(every built-in CTA still fits)", "[sm]\nmax_warps = 8\nmax_threads = 256\n"),
    ("all", "every change above at once",
     "num_sms = 1\n[mechanism]\ncompaction_latency = 0\npool_latency = 0\n[l1]\nhit_latency = 18\n"
     "[l2]\nhit_latency = 80\n[dram]\nlatency = 90\n[sm]\nschedulers = 1\nmax_warps = 8\nmax_threads = 256\n"
     "[interval]\nint = 2\nfloat = 2\n"
     "[frontend]\nicache_size = 0\n"),
]

# (column label, what it is): whole presets, not variants of gtx480 -- the papers' own simulator's machines.
MACHINES = [
    ("ispass09", "GPGPU-Sim 2.1.1b's ISPASS-2009 machine, the simulator line of the DWF paper (28 SMs at 500 MHz, "
     "1024 threads, one loose round-robin scheduler, a 6-stage 32-wide pipeline, no L1 or L2 data cache; "
     "docs/configuration.md cites each value)"),
]

# From the ISPASS-2009 machine towards the GTX 480, one group of parameters at a time: (label, what, the TOML
# body after `base = "ispass09"`: the gtx480 preset's values of that group).
GROUPS = [
    ("memory", "the GTX 480's memory system: 16 KB L1 (35-cycle hits, 32 MSHRs), 768 KB L2 in 12 slices "
     "holding the launch's buffers, 160-cycle L2 and +180-cycle DRAM latencies, 177 GB/s",
     "[l1]\nsize = 16384\nline = 128\nsector = 32\nways = 4\nmshrs = 32\nmshr_merge = 8\nhit_latency = 35\n"
     "set_index = \"fermi-hash\"\n[l2]\nsize = 786432\nline = 128\nways = 6\nhit_latency = 160\n"
     "sectors_per_cycle = 12\natomic_latency = 16\npreload = true\nchannels = 6\nslices_per_channel = 2\n"
     "sm_port_sectors_per_cycle = 1\n[dram]\nlatency = 180\nbytes_per_cycle = 253\n"),
    ("scoreboarded loads", "`miss_blocks_warp = false`: only the instructions that use a loaded register wait "
     "for it, not the whole warp",
     "[sm]\nmiss_blocks_warp = false\n"),
    ("schedulers", "two greedy-then-oldest schedulers sharing 2 SP units, 1 SFU and 1 load/store unit",
     "[sm]\nschedulers = 2\nscheduler = \"gto\"\nunits = [2, 0, 0, 1, 1]\n"),
    ("pipeline", "GPGPU-Sim 4's per-opcode latency tables, 4-cycle operand collector, 2 KB instruction cache",
     "[latency]\nint = 1\nfloat = 1\ndouble = 8\nsfu = 8\nbranch = 1\nshared = 26\nconstant = 10\nbarrier = 4\n"
     "warp_op = 8\n[interval]\nint = 1\nfloat = 1\ndouble = 8\nsfu = 8\nmem = 1\n[opcode]\n"
     "int_latency = [4, 13, 4, 5, 145, 32]\nint_initiation = [1, 2, 2, 1, 8, 4]\nfp_latency = [4, 13, 4, 5, 39]\n"
     "fp_initiation = [1, 2, 1, 1, 4]\ndp_latency = [8, 19, 8, 8, 330]\ndp_initiation = [8, 16, 8, 8, 130]\n"
     "sfu_latency = 8\nsfu_initiation = 8\nother_latency = 1\nother_initiation = 1\ndp_on_sfu = true\n"
     "[frontend]\nicache_size = 2048\nicache_line = 128\nicache_ways = 4\ninst_bytes = 8\nfetch_bytes = 16\n"
     "decode_latency = 1\noperand_latency = 4\n"),
    ("SM size", "15 SMs of 1536 threads, 48 warps, 32768 registers and 48 KB shared memory (32 banks)",
     "num_sms = 15\n[sm]\nmax_threads = 1536\nmax_warps = 48\nregisters = 32768\nshared_memory = 49152\n"
     "max_regs_per_thread = 63\n[shared]\nbanks = 32\n"),
]

# (claim, the paper's number as a speedup, (mechanism, baseline)); sources in docs/paper-headlines.md.
CLAIMS = [
    ("TBC over PDOM (Fung & Aamodt, HPCA'11: +22%)", 1.22, ("tbc", "pdom")),
    ("TBC over DWF (the same: +17%)", 1.17, ("tbc", "dwf")),
    ("DWF over PDOM (Fung et al., MICRO'07: +20.7%)", 1.207, ("dwf", "pdom")),
    ("DWS over PDOM (Meng et al., ISCA'10: 1.7x)", 1.7, ("dws", "pdom")),
    ("HARP over PDOM (Lashgar et al., TECS'14: +10%)", 1.10, ("harp", "pdom")),
    ("CAPRI over PDOM (no number in the abstract)", None, ("capri", "pdom")),
    ("SBI over PDOM (not verified)", None, ("sbi", "pdom")),
]


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def speedups(rows: list[dict[str, str]]) -> dict[tuple[str, str], tuple[float, int]]:
    done = {(r["kernel"], r["mechanism"]): int(r["cycles"]) for r in rows if r["outcome"] == "completed"}
    divergent = {r["kernel"] for r in rows if r["mechanism"] == "pdom" and int(r["divergent_branches"] or 0) > 0}
    out = {}
    for _, _, (m, base) in CLAIMS:
        both = [k for k in sorted(divergent) if (k, m) in done and (k, base) in done]
        out[(m, base)] = (geomean([done[(k, base)] / done[(k, m)] for k in both]), len(both))
    return out


def per_kernel(rows: list[dict[str, str]]) -> list[str]:
    """The divergent kernels on the preset: launch size, SIMD efficiency and speed of tbc and dwf."""
    by = {(r["kernel"], r["mechanism"]): r for r in rows}
    divergent = [r["kernel"] for r in rows if r["mechanism"] == "pdom" and int(r["divergent_branches"] or 0) > 0]
    out = ["\nPer divergent kernel on the preset: the launch (CTAs x threads, from the manifest), SIMD efficiency "
           "and speed over pdom (`-` where a run does not complete):\n",
           "| kernel | CTAs x threads | pdom SIMD eff. | tbc SIMD eff. | dwf SIMD eff. | tbc / pdom | dwf / pdom "
           "| capri / pdom |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for k in divergent:
        p = by[(k, "pdom")]

        def eff(m: str) -> str:
            r = by.get((k, m))
            return f"{100 * float(r['simd_efficiency']):.1f}%" if r and r["outcome"] == "completed" else "-"

        def speed(m: str) -> str:
            r = by.get((k, m))
            ok = r and r["outcome"] == "completed" and p["outcome"] == "completed"
            return f"{int(p['cycles']) / int(r['cycles']):.3f}" if ok else "-"

        launch = LAUNCH.get(k, "?")
        out.append(f"| {k} | {launch} | {eff('pdom')} | {eff('tbc')} | {eff('dwf')} | {speed('tbc')} | "
                   f"{speed('dwf')} | {speed('capri')} |")
    return out


def likely(binary: str) -> list[str]:
    """The kernels where likely-convergence points merge threads (`likely_merges` > 0) under tbc:lpc or
    capri:lpc, with both variants' cycles beside the plain mechanisms'."""
    rows = compare_csv(binary, "gtx480", ["tbc", "tbc:lpc", "capri", "capri:lpc"])
    by = {(r["kernel"], r["mechanism"]): r for r in rows}
    merges = lambda r: int(r.get("mechanism_counters_likely_merges") or 0)  # noqa: E731
    kernels = sorted({r["kernel"] for r in rows if merges(r) > 0})
    others = sorted({r["kernel"] for r in rows} - set(kernels))
    differ = [k for k in others for m in ("tbc", "capri") if by[(k, m)]["cycles"] != by[(k, m + ":lpc")]["cycles"]]
    rest = ("on every other built-in kernel the variants equal the plain mechanisms to the cycle" if not differ
            else "the variants also differ, without likely merges, on " + ", ".join(sorted(set(differ))))
    out = ["\nLikely-convergence points (`tbc:lpc`, `capri:lpc`) on the preset: the kernels where they merge "
           f"threads (`likely_merges` > 0; {rest}):\n",
           "| kernel | tbc cycles | tbc:lpc cycles | speedup | likely merges | capri cycles | capri:lpc cycles | "
           "speedup | likely merges |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for k in kernels:
        cells = []
        for m in ("tbc", "capri"):
            a, b = by[(k, m)], by[(k, m + ":lpc")]
            ratio = int(a["cycles"]) / int(b["cycles"])
            cells += [a["cycles"], b["cycles"], f"{ratio:.3f}", str(merges(b))]
        out.append(f"| {k} | " + " | ".join(cells) + " |")
    return out


# DWF on a correlation kernel with per-thread trip counts (PolyBench/GPU CORR's fourth kernel, as
# scripts/paper/corr.cu writes it): one CTA of 256 threads, a 32 x 256 matrix.
CORR = Path(__file__).resolve().parent / "paper" / "corr.cu"
CORR_ARGS = ["--grid", "1", "--block", "256", "--arg", "rand:f32:8192:1", "--arg", "zeros:f32:65536",
             "--arg", "256", "--arg", "32"]


def corr_run(binary: str, mech: str) -> dict:
    """`reconverge run` of the correlation kernel under `mech` (GTX 480), its statistics."""
    args = [binary, "run", str(CORR), "--mechanism", mech, "--config", "gtx480", "--json", *CORR_ARGS]
    out = subprocess.run(args, check=False, capture_output=True, text=True)
    if not out.stdout:
        sys.exit(f"{' '.join(args)} printed nothing:\n{out.stderr}")
    return json.loads(out.stdout)


def dwf_collapse(binary: str) -> list[str]:
    """Where DWF's cycles go on the correlation kernel, beside pdom and tbc."""
    out = ["\nDWF on a correlation kernel with per-thread trip counts (`scripts/paper/corr.cu`, PolyBench/GPU "
           "CORR's fourth kernel; 1 CTA x 256 threads, GTX 480):\n",
           "| mechanism | cycles | warp instructions | SIMD efficiency | L1 line accesses | transactions | "
           "pool insertions split (merge conflicts / LUT lookups) |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for mech in ("pdom", "tbc", "dwf"):
        d = corr_run(binary, mech)
        m, c = d["memory"], d.get("mechanism_counters") or {}
        split = f"{c['merge_conflicts']} / {c['lut_lookups']}" if "lut_lookups" in c else "-"
        out.append(f"| {mech} | {d['cycles']} | {d['warp_instructions']} | {100 * d['simd_efficiency']:.1f}% | "
                   f"{m['l1_accesses']} | {m['transactions']} | {split} |")
    return out


def launches() -> dict[str, str]:
    """Each built-in kernel's launch, `CTAs x threads per CTA`, from kernels/manifest.toml."""
    manifest = tomllib.loads((DOC.parent.parent / "kernels" / "manifest.toml").read_text())
    size = lambda v: v[0] * v[1] * v[2]  # noqa: E731
    return {k["name"]: f"{size(k['grid'])} x {size(k['block'])}" for k in manifest["kernel"]}


LAUNCH = launches()


def claims_table(columns: list[str], results: list[dict]) -> list[str]:
    """One row per claim: the paper's number, then the geometric mean under each column's machine."""
    out = ["| claim | paper | " + " | ".join(columns) + " |", "| --- | --- | " + " | ".join("---" for _ in columns) + " |"]
    for claim, paper, pair in CLAIMS:
        cells = [f"{r[pair][0]:.3f}" for r in results]
        out.append(f"| {claim} | {f'{paper:.3f}' if paper else '-'} | " + " | ".join(cells) + " |")
    return out


def groups_table(binary: str, mechs: list[str], ispass: dict) -> list[str]:
    """Per claim, the `ispass09` machine, then it with one group of the GTX 480's parameters."""
    results = [ispass]
    with tempfile.TemporaryDirectory() as d:
        for label, _, body in GROUPS:
            config = str(Path(d) / (label.replace(" ", "-") + ".toml"))
            Path(config).write_text(f'base = "ispass09"\nname = "ispass09 + {label}"\n' + body)
            results.append(speedups(compare_csv(binary, config, mechs)))
    columns = ["ispass09"] + [f"+ {g[0]}" for g in GROUPS]
    out = ["\nFrom the ISPASS-2009 machine towards the GTX 480: `ispass09`, then `ispass09` with ONE group of "
           "the `gtx480` preset's parameters (the same kernels and cells as above):\n"]
    out += claims_table(columns, results)
    out.append("\nThe groups (each a TOML file `base = \"ispass09\"` with the `gtx480` values of):\n")
    out += [f"- **{label}**: {what}." for label, what, _ in GROUPS]
    return out


def table(binary: str) -> str:
    mechs = sorted({m for _, _, pair in CLAIMS for m in pair}, key=lambda m: (m != "pdom", m))
    results = []
    with tempfile.TemporaryDirectory() as d:
        for label, _, body in VARIANTS:
            config = "gtx480"
            if body:
                config = str(Path(d) / (label.replace(" ", "-") + ".toml"))
                Path(config).write_text(f'base = "gtx480"\nname = "{label}"\n' + body)
            rows = compare_csv(binary, config, mechs)
            if not body:
                preset_rows = rows
            results.append(speedups(rows))
        for label, _ in MACHINES:
            results.append(speedups(compare_csv(binary, label, mechs)))
    columns = [v[0] for v in VARIANTS] + [m[0] for m in MACHINES]
    n = results[0][CLAIMS[0][2]][1]
    out = [f"Built-in kernels, warp 32, the {n} divergent ones (pdom executes a divergent branch). Each cell: "
           "geometric mean of baseline cycles / mechanism cycles where both complete; the paper's number "
           "beside it.\n"]
    out += claims_table(columns, results)
    out.append("\nThe variants (each a TOML file `base = \"gtx480\"` with one change):\n")
    out += [f"- **{label}**: {what}." for label, what, _ in VARIANTS[1:]]
    out.append("\nAnd a whole machine of the papers' time (a preset, not a variant):\n")
    out += [f"- **{label}**: {what}." for label, what in MACHINES]
    out += groups_table(binary, mechs, results[len(VARIANTS)])
    out += per_kernel(preset_rows)
    out += likely(binary)
    out += dwf_collapse(binary)
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(table_main(DOC, BEGIN, END, table, "paper_ablation.py"))
