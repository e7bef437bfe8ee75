#!/usr/bin/env python3
"""Compare our reconvergence points with the ones NVIDIA's ptxas chooses (BSSY targets).

Usage:
    python3 scripts/bssy_compare.py [NAME ...]              # default: every kernels/ptx/sm_80/*.ptx
    python3 scripts/bssy_compare.py --sass-only [NAME ...]  # only print what the SASS contains
    python3 scripts/bssy_compare.py --reconverge "target/release/reconverge"
    python3 scripts/bssy_compare.py --reconverge "python3 scripts/ptx_props.py"   # Python stand-in
    python3 scripts/bssy_compare.py --json FILE.json NAME   # our side from a saved JSON (testing)
    python3 scripts/bssy_compare.py --self-test             # matching logic on a fake JSON

NVIDIA side: for kernels/ptx/sm_80/NAME.ptx this runs `ptxas -arch=sm_80 -lineinfo` and
`nvdisasm -c -g` (tools found like scripts/gen_ptx.py finds NVRTC: $RECONVERGE_PTXAS /
$RECONVERGE_NVDISASM, the running Python's nvidia-cuda-nvcc-cu12 / nvidia-cuda-nvdisasm
packages, else .tools/cuda). In the SASS of every function it finds each `BSSY Bn, target`,
its region [BSSY, target), and the conditional BRAs directly inside the region (not inside a
nested BSSY region): those are the branches whose threads the convergence barrier rejoins at
`target`. Source lines come from the `//## File "...", line N` annotations (DWARF rows: an
instruction without its own annotation has the line of the previous one). A branch whose
target lies outside its region leaves it (early exit/return) and is reported as such.
`BRA.DIV` (the uniformity check in front of warp-synchronous intrinsics) and `@PT`/`@!PT`
branches are not conditional branches of the program and are ignored.

Our side: `CMD cfg kernels/ptx/sm_80/NAME.ptx --format json` with the schema
    {"file": str, "functions": [{"name": str, "kind": "entry"|"func",
      "blocks": [{"index": int, "label": str|null, "ptx_line": int,
                  "loc": {"file": int, "line": int, "col": int}|null}],
      "branches": [{"block": int, "ptx_line": int, "loc": {...}|null, "targets": [int],
                    "uniform": bool,
                    "reconvergence": {"block": int, "label": str|null, "ptx_line": int,
                                      "loc": {...}|null} | "exit"}]}]}
CMD defaults to target/release/reconverge when it exists, else
`cargo run --release -q -p reconverge-cli --`.

Matching: a SASS conditional branch and a PTX conditional branch match when they are in the
same function and have the same CUDA source line. For each matched BSSY-bracketed branch the
BSSY target's line is compared with the `loc.line` of our reconvergence block:
  agree  -- equal, or equal to the first line annotation at/after the target (the target
            instruction itself may inherit the previous row's line);
  differ -- otherwise (both lines are printed);
  leaves -- the SASS branch jumps out of every region that holds it (early exit);
  noline -- our reconvergence block's first instruction has line 0 (compiler-generated).
Several PTX branches may share a line; the row agrees if any of them does.
Unmatched items are listed separately: BSSYs bracketing no conditional branch (e.g. around
calls or warp-synchronous code), SASS branches without a PTX branch on the same line
(introduced by ptxas), PTX conditional branches with no bracketed SASS branch on their line
(if-converted into predication by ptxas, turned into an unbracketed branch, or folded away).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.dont_write_bytecode = True   # keep scripts/ free of __pycache__
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _tools  # noqa: E402

REPO = _tools.REPO
PTX_DIR = REPO / "kernels" / "ptx" / "sm_80"

# ----------------------------------------------------------------------------------------------
# SASS side
# ----------------------------------------------------------------------------------------------

_FILE_RE = re.compile(r'^\s*//## File "([^"]*)", line (\d+)')
_INST_RE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*$")
_LABEL_RE = re.compile(r"^([.$\w]+):\s*$")
_TYPE_RE = re.compile(r"^\s*\.type\s+([$\w.]+)\s*,\s*@function")
_TARGET_RE = re.compile(r"`\(([^)]*)\)")


@dataclass
class SassInst:
    addr: int
    pred: str | None          # "P0", "!P1", ... or None
    opcode: str               # "BRA", "BSSY", "BSYNC", ...
    text: str
    line: int | None          # DWARF line (inherited)
    own_line: bool            # an annotation directly precedes it
    target: str | None = None
    leaves: bool = False      # bracketed, but its target lies outside every region holding it


@dataclass
class Bssy:
    func: str
    addr: int
    barrier: str
    target_label: str
    target_addr: int
    target_line: int | None
    next_line: int | None     # first annotated line at/after the target
    branches: list = field(default_factory=list)     # direct conditional SassInst
    nested: list = field(default_factory=list)       # addresses of nested BSSYs


@dataclass
class SassFunc:
    name: str
    insts: list = field(default_factory=list)
    labels: dict = field(default_factory=dict)       # label -> address
    bssys: list = field(default_factory=list)


def parse_sass(text: str) -> list[SassFunc]:
    funcs: list[SassFunc] = []
    cur: SassFunc | None = None
    line: int | None = None
    annotated = False
    pending_labels: list[str] = []
    for raw in text.splitlines():
        m = _TYPE_RE.match(raw)
        if m:
            name = m.group(1)
            if name.startswith("$") and name.count("$") >= 2:
                name = name.rsplit("$", 1)[1]   # $kernel$func -> func
            cur = SassFunc(name)
            funcs.append(cur)
            line = None
            continue
        if cur is None:
            continue
        m = _FILE_RE.match(raw)
        if m:
            line = int(m.group(2))
            annotated = True
            continue
        m = _LABEL_RE.match(raw.strip())
        if m:
            pending_labels.append(m.group(1))
            continue
        m = _INST_RE.match(raw)
        if not m:
            continue
        addr = int(m.group(1), 16)
        body = m.group(2).strip().rstrip(";").strip()
        pred = None
        pm = re.match(r"^@(!?U?P\w+)\s+(.*)$", body)
        if pm:
            pred, body = pm.group(1), pm.group(2)
        opcode = body.split()[0] if body else ""
        tm = _TARGET_RE.search(body)
        inst = SassInst(addr, pred, opcode, body, line, annotated, tm.group(1) if tm else None)
        annotated = False
        for lab in pending_labels:
            cur.labels[lab] = addr
        pending_labels = []
        cur.insts.append(inst)
    for f in funcs:
        _find_bssy(f)
    return funcs


def is_cond_branch(i: SassInst) -> bool:
    if not i.opcode.startswith("BRA") or i.opcode.startswith("BRA.DIV"):
        return False
    if i.pred is None or i.pred in ("PT", "!PT"):
        # `BRA P1, target` (predicate operand) is conditional as well
        return bool(re.match(r"^BRA(\.\w+)*\s+!?P\d", i.text))
    return True


def _find_bssy(f: SassFunc) -> None:
    by_addr = {i.addr: k for k, i in enumerate(f.insts)}
    for k, i in enumerate(f.insts):
        if i.opcode != "BSSY":
            continue
        barrier = i.text.split()[1].rstrip(",")
        taddr = f.labels.get(i.target)
        if taddr is None:
            continue
        tk = by_addr.get(taddr)
        tinst = f.insts[tk] if tk is not None else None
        next_line = None
        if tk is not None:
            for j in range(tk, len(f.insts)):
                if f.insts[j].own_line:
                    next_line = f.insts[j].line
                    break
                if f.insts[j].opcode.startswith("BRA") or f.insts[j].opcode == "EXIT":
                    break
        f.bssys.append(Bssy(f.name, i.addr, barrier, i.target, taddr,
                            tinst.line if tinst else None, next_line))
    # Attribute every conditional branch to the innermost region that holds both the branch
    # and its target (the barrier its threads rejoin). A branch whose target is outside every
    # region holding it (an early exit, or a BREAK-style jump past the BSYNC) is attributed to
    # the innermost region holding it and flagged `leaves`.
    span = lambda b: b.target_addr - b.addr  # noqa: E731
    for i in f.insts:
        if not is_cond_branch(i):
            continue
        holding = [b for b in f.bssys if b.addr < i.addr < b.target_addr]
        if not holding:
            continue
        t = f.labels.get(i.target) if i.target else None
        rejoin = [b for b in holding if t is not None and b.addr < t <= b.target_addr]
        if rejoin:
            min(rejoin, key=span).branches.append(i)
        else:
            i.leaves = True
            min(holding, key=span).branches.append(i)
    for b in f.bssys:
        b.nested = [c.addr for c in f.bssys
                    if c is not b and b.addr < c.addr < b.target_addr]


def sass_for(ptx: Path, tools: dict, keep_dir: Path | None = None) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / (ptx.stem + ".cubin")
        r = subprocess.run([str(tools["ptxas"]), "-arch=sm_80", "-lineinfo", "-o", str(cubin),
                            str(ptx)], capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"ptxas failed on {ptx}:\n{r.stderr}")
        r = subprocess.run([str(tools["nvdisasm"]), "-c", "-g", str(cubin)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"nvdisasm failed on {cubin}:\n{r.stderr}")
        if keep_dir:
            keep_dir.mkdir(parents=True, exist_ok=True)
            (keep_dir / (ptx.stem + ".sass")).write_text(r.stdout)
        return r.stdout


def region_exit(b: Bssy, i: SassInst, f: SassFunc) -> bool:
    return i.leaves


def print_sass(kernel: str, funcs: list[SassFunc]) -> int:
    total = 0
    for f in funcs:
        for b in f.bssys:
            total += 1
            tl = b.target_line if b.target_line == b.next_line or b.next_line is None else \
                f"{b.target_line} (next annotated {b.next_line})"
            br = ", ".join(
                f"/*{i.addr:04x}*/ @{i.pred} {i.opcode} -> {i.target} line {i.line}"
                + (" [leaves region]" if region_exit(b, i, f) else "") for i in b.branches)
            print(f"  {kernel:14s} {f.name:14s} /*{b.addr:04x}*/ BSSY {b.barrier} -> {b.target_label}"
                  f" (/*{b.target_addr:04x}*/, line {tl}); brackets: {br or 'no conditional branch'}")
        inside = {id(i) for b in f.bssys for i in b.branches}
        for i in f.insts:
            if is_cond_branch(i) and id(i) not in inside:
                in_any = any(b.addr < i.addr < b.target_addr for b in f.bssys)
                if not in_any:
                    print(f"  {kernel:14s} {f.name:14s} /*{i.addr:04x}*/ @{i.pred} {i.opcode} -> "
                          f"{i.target} line {i.line}: conditional branch outside every BSSY region")
    return total


# ----------------------------------------------------------------------------------------------
# Our side and matching
# ----------------------------------------------------------------------------------------------

def default_reconverge() -> list[str]:
    exe = REPO / "target" / "release" / "reconverge"
    if exe.exists():
        return [str(exe)]
    return ["cargo", "run", "--release", "-q", "-p", "reconverge-cli", "--"]


def our_cfg(cmd: list[str], ptx: Path) -> dict:
    r = subprocess.run(cmd + ["cfg", str(ptx), "--format", "json"], capture_output=True,
                       text=True, cwd=REPO)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} cfg {ptx} failed (rc {r.returncode}):\n{r.stderr}")
    return json.loads(r.stdout)


@dataclass
class Row:
    kernel: str
    func: str
    branch_line: int | None
    nv_line: int | None
    nv_next: int | None
    ours: list            # reconvergence lines ("exit" or int or None) of matched PTX branches
    status: str
    note: str


def _rec_line(br: dict):
    rec = br["reconvergence"]
    if rec == "exit":
        return "exit"
    loc = rec.get("loc")
    return loc["line"] if loc else None


def compare(kernel: str, funcs: list[SassFunc], ours: dict) -> tuple[list[Row], list[str]]:
    rows: list[Row] = []
    unmatched: list[str] = []
    our_funcs = {f["name"]: f for f in ours["functions"]}
    for f in funcs:
        of = our_funcs.get(f.name)
        if of is None:
            unmatched.append(f"{kernel}/{f.name}: SASS-only function (a ptxas runtime helper "
                             f"or a renamed function) with {len(f.bssys)} BSSY; not compared")
            continue
        pbr = of["branches"] if of else []
        by_line: dict = {}
        for br in pbr:
            line = br["loc"]["line"] if br.get("loc") else None
            by_line.setdefault(line, []).append(br)
        seen = set()
        bracketed_lines = set()
        for b in f.bssys:
            if not b.branches:
                unmatched.append(f"{kernel}/{f.name}: BSSY {b.barrier} at /*{b.addr:04x}*/ -> line "
                                 f"{b.target_line} brackets no conditional branch "
                                 f"(call, warp-synchronous code or a loop closed elsewhere)")
                continue
            for i in b.branches:
                key = (f.name, i.line, b.target_line)
                bracketed_lines.add(i.line)
                if key in seen:
                    continue
                seen.add(key)
                cands = by_line.get(i.line, [])
                if not cands:
                    unmatched.append(f"{kernel}/{f.name}: SASS branch /*{i.addr:04x}*/ line {i.line} "
                                     f"(BSSY -> line {b.target_line}) has no PTX conditional branch "
                                     f"on that line (introduced or moved by ptxas)")
                    continue
                lines = [_rec_line(c) for c in cands]
                notes = []
                if region_exit(b, i, f):
                    status = "leaves"
                    notes.append("SASS branch leaves the BSSY region (early exit); "
                                 "its threads never reach the BSYNC")
                elif all(x in (0, None) for x in lines):
                    status = "noline"
                    notes.append("our reconvergence block starts with a line-0/no-line .loc")
                elif b.target_line in lines:
                    status = "agree"
                elif b.next_line is not None and b.next_line in lines:
                    status = "agree"
                    notes.append(f"target row inherits line {b.target_line}; "
                                 f"next annotated line {b.next_line}")
                else:
                    status = "differ"
                if len(cands) > 1:
                    notes.append(f"{len(cands)} PTX branches on this line")
                if any(c.get("uniform") for c in cands):
                    notes.append("ours: uniform")
                rows.append(Row(kernel, f.name, i.line, b.target_line, b.next_line, lines,
                                status, "; ".join(notes)))
        # PTX branches with no bracketed SASS branch on their line
        sass_lines = {i.line for i in f.insts if is_cond_branch(i)}
        for line, brs in sorted(by_line.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)):
            if line in bracketed_lines:
                continue
            recs = sorted({str(_rec_line(b)) for b in brs})
            why = ("a SASS branch exists on that line but no BSSY brackets it"
                   if line in sass_lines else
                   "no SASS branch on that line (if-converted to predication, or folded)")
            unmatched.append(f"{kernel}/{f.name}: PTX branch(es) at line {line} "
                             f"(ours reconverge at {', '.join(recs)}): {why}")
    for name in our_funcs:
        if name not in {f.name for f in funcs}:
            unmatched.append(f"{kernel}/{name}: function not found in the SASS (inlined or removed)")
    return rows, unmatched


def print_table(rows: list[Row], unmatched: list[str]) -> None:
    hdr = f"{'kernel':14s} {'function':14s} {'branch':>6s} {'NVIDIA':>8s} {'ours':>10s}  {'result':7s} note"
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        nv = f"{r.nv_line}" if r.nv_next in (None, r.nv_line) else f"{r.nv_line}/{r.nv_next}"
        ours = ",".join(str(x) for x in r.ours)
        print(f"{r.kernel:14s} {r.func:14s} {str(r.branch_line):>6s} {nv:>8s} {ours:>10s}  "
              f"{r.status:7s} {r.note}")
    counts = {s: sum(1 for r in rows if r.status == s)
              for s in ("agree", "differ", "leaves", "noline")}
    print()
    print(f"totals: {len(rows)} bracketed branches matched: {counts['agree']} agree, "
          f"{counts['differ']} differ, {counts['leaves']} leave their region, "
          f"{counts['noline']} without a source line on our side; {len(unmatched)} unmatched")
    if unmatched:
        print()
        print("unmatched:")
        for u in unmatched:
            print(f"  {u}")


# ----------------------------------------------------------------------------------------------
# Self-test of the matching logic (no NVIDIA tools, no reconverge binary)
# ----------------------------------------------------------------------------------------------

_FAKE_SASS = """
        .type           demo,@function
demo:
	//## File "/kernels/src/demo.cu", line 10
        /*0000*/                   ISETP.GE.AND P0, PT, R0, 0x5, PT ;
        /*0010*/                   BSSY B0, `(.L_x_0) ;
        /*0020*/               @P0 BRA `(.L_x_1) ;
	//## File "/kernels/src/demo.cu", line 11
        /*0030*/                   STG.E [R2.64], R4 ;
        /*0040*/                   BSSY B1, `(.L_x_2) ;
	//## File "/kernels/src/demo.cu", line 12
        /*0050*/              @!P1 BRA `(.L_x_3) ;
        /*0060*/                   STG.E [R2.64], R5 ;
        /*0068*/               @P4 BRA `(.L_x_1) ;
.L_x_3:
        /*0070*/                   BSYNC B1 ;
.L_x_2:
        /*0080*/                   STG.E [R2.64], R6 ;
	//## File "/kernels/src/demo.cu", line 13
        /*0090*/               @P2 BRA `(.L_x_4) ;
.L_x_1:
        /*00a0*/                   BSYNC B0 ;
.L_x_0:
        /*00b0*/                   MOV R1, R2 ;
	//## File "/kernels/src/demo.cu", line 20
        /*00c0*/                   STG.E [R2.64], R7 ;
	//## File "/kernels/src/demo.cu", line 21
        /*00d0*/               @P3 BRA `(.L_x_5) ;
        /*00e0*/                   STG.E [R2.64], R8 ;
.L_x_5:
        /*00f0*/                   EXIT ;
.L_x_4:
        /*0100*/                   EXIT ;
"""


def _fake_json() -> dict:
    loc = lambda line: {"file": 1, "line": line, "col": 1}  # noqa: E731
    rec = lambda b, line: {"block": b, "label": f"$L__BB0_{b}", "ptx_line": 100 + b,  # noqa: E731
                           "loc": loc(line)}
    return {"file": "demo.ptx", "functions": [{
        "name": "demo", "kind": "entry",
        "blocks": [{"index": k, "label": None, "ptx_line": 100 + k, "loc": loc(10 + k)}
                   for k in range(8)],
        "branches": [
            {"block": 0, "ptx_line": 50, "loc": loc(10), "targets": [5, 1], "uniform": False,
             "reconvergence": rec(5, 20)},          # agrees via next annotated line (20)
            {"block": 1, "ptx_line": 51, "loc": loc(12), "targets": [3, 2], "uniform": False,
             "reconvergence": rec(3, 11)},          # differs: NVIDIA says line 12
            {"block": 2, "ptx_line": 52, "loc": loc(13), "targets": [7, 4], "uniform": False,
             "reconvergence": "exit"},              # leaves the region
            {"block": 3, "ptx_line": 53, "loc": loc(21), "targets": [6, 5], "uniform": True,
             "reconvergence": rec(6, 22)},          # no BSSY: unbracketed SASS branch
            {"block": 4, "ptx_line": 54, "loc": loc(30), "targets": [6, 5], "uniform": False,
             "reconvergence": rec(6, 22)},          # no SASS branch at all on line 30
        ]}]}


def self_test() -> int:
    funcs = parse_sass(_FAKE_SASS)
    assert [f.name for f in funcs] == ["demo"], funcs
    f = funcs[0]
    assert len(f.bssys) == 2, f.bssys
    b0, b1 = f.bssys
    assert (b0.barrier, b0.target_line, b0.next_line) == ("B0", 13, 20), b0
    # 0x50 rejoins at B1; 0x68 jumps past BSYNC B1 to BSYNC B0, so it belongs to B0
    assert [i.addr for i in b0.branches] == [0x20, 0x68, 0x90], b0.branches
    assert [i.leaves for i in b0.branches] == [False, False, True]
    assert [i.addr for i in b1.branches] == [0x50], b1.branches
    assert b1.target_line == 12
    rows, unmatched = compare("demo", funcs, _fake_json())
    got = [(r.branch_line, r.status) for r in rows]
    assert got == [(10, "agree"), (12, "differ"), (13, "leaves"), (12, "differ")], got
    assert any("line 21" in u and "no BSSY brackets it" in u for u in unmatched), unmatched
    assert any("line 30" in u and "no SASS branch" in u for u in unmatched), unmatched
    print_table(rows, unmatched)
    print("\nself-test passed")
    return 0


# ----------------------------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description="BSSY targets (ptxas sm_80) vs our reconvergence points")
    ap.add_argument("kernels", nargs="*", help="kernel names (default: every kernels/ptx/sm_80/*.ptx)")
    ap.add_argument("--sass-only", action="store_true", help="print the SASS side only")
    ap.add_argument("--reconverge", metavar="CMD",
                    help="command for our side (run as CMD cfg FILE.ptx --format json)")
    ap.add_argument("--json", metavar="FILE", help="read our side from FILE (one kernel)")
    ap.add_argument("--keep-sass", metavar="DIR", help="also write the disassembly into DIR")
    ap.add_argument("--self-test", action="store_true", help="test the matching on fake data")
    args = ap.parse_args()

    if args.self_test:
        return self_test()
    names = args.kernels or sorted(p.stem for p in PTX_DIR.glob("*.ptx"))
    if args.json and len(names) != 1:
        ap.error("--json needs exactly one kernel name")
    tools = _tools.require_cuda_tools(need_ptxas=True, need_nvdisasm=True)
    cmd = shlex.split(args.reconverge) if args.reconverge else default_reconverge()
    keep = Path(args.keep_sass) if args.keep_sass else None

    all_rows: list[Row] = []
    all_unmatched: list[str] = []
    total_bssy = 0
    per_kernel = []
    for name in names:
        ptx = PTX_DIR / f"{name}.ptx"
        if not ptx.is_file():
            raise SystemExit(f"no such PTX: {ptx.relative_to(REPO)}")
        funcs = parse_sass(sass_for(ptx, tools, keep))
        nb = sum(len(f.bssys) for f in funcs)
        total_bssy += nb
        per_kernel.append((name, nb))
        if args.sass_only:
            print(f"{name}: {nb} BSSY")
            print_sass(name, funcs)
            continue
        ours = json.loads(Path(args.json).read_text()) if args.json else our_cfg(cmd, ptx)
        rows, unmatched = compare(name, funcs, ours)
        all_rows += rows
        all_unmatched += unmatched
    if args.sass_only:
        print()
        print("BSSY per kernel: " + ", ".join(f"{n} {c}" for n, c in per_kernel))
        print(f"total: {total_bssy} BSSY in {len(per_kernel)} kernels")
        return 0
    print_table(all_rows, all_unmatched)
    return 0


if __name__ == "__main__":
    sys.exit(main())
