#!/usr/bin/env python3
"""Compare our reconvergence points with the ones NVIDIA's ptxas chooses (BSSY targets).

Usage:
    python3 scripts/bssy_compare.py [NAME ...]              # default: every kernels/ptx/sm_80/*.ptx
    python3 scripts/bssy_compare.py --reconverge ./target/release/reconverge
    python3 scripts/bssy_compare.py --reconverge "python3 scripts/ptx_props.py"   # Python stand-in
    python3 scripts/bssy_compare.py --markdown              # the tables of docs/bssy-comparison.md
    python3 scripts/bssy_compare.py --sass-only [NAME ...]  # only print what the SASS contains
    python3 scripts/bssy_compare.py --keep-sass DIR         # also write the disassemblies to DIR
    python3 scripts/bssy_compare.py --json FILE.json NAME   # our side from a saved JSON (testing)
    python3 scripts/bssy_compare.py --self-test             # matching logic on fake data

NVIDIA side. For kernels/ptx/sm_80/NAME.ptx this runs `ptxas -arch=sm_80 -lineinfo` and
`nvdisasm -c -g` twice (tools found like scripts/gen_ptx.py finds NVRTC: $RECONVERGE_PTXAS /
$RECONVERGE_NVDISASM, the running Python's nvidia-cuda-nvcc-cu12 / nvidia-cuda-nvdisasm
packages, else .tools/cuda):
  1. on the PTX as it is (SASS line info = CUDA source lines, kept with --keep-sass as NAME.sass);
  2. on an *instrumented* copy in which every `.loc` is dropped and every PTX instruction gets
     `.loc F <its own PTX line number> 0`, so the `//## File ..., line N` rows of the SASS name
     the PTX instruction each SASS instruction was generated from (NAME.ptxline.sass).
The script checks that both compilations give the same instructions (line info does not change
code generation) and that the CUDA line of every SASS instruction in (1) is the `.loc` line of
the PTX instruction that (2) names; it stops if either check fails. Matching therefore works on
PTX instructions and PTX basic blocks, not on (shared, ambiguous) CUDA source lines.

In the SASS of every function it finds each `BSSY Bn, target`, its region [BSSY, target), and
the conditional BRAs directly inside it: every conditional branch belongs to the innermost region
that holds both the branch and its target (the barrier its threads rejoin); a branch whose target
lies outside every region holding it leaves its region (early exit) and is reported as such. The
region's *owner* is its first direct branch (ptxas opens a region for that branch; later branches
in it share the barrier). `BRA.DIV` (the uniformity check in front of warp-synchronous code) and
`@PT`/`@!PT` branches are not conditional branches of the program and are ignored; `BRX` (jump
tables ptxas builds from compare trees) is tracked separately.

SASS branch -> PTX branch: the branch's PTX line is a conditional `bra` (exact), or else the
instruction that last set the branch's predicate is the `setp` of a PTX conditional branch (ptxas
merged or re-wrote the branch, e.g. if-converted one arm and kept a branch at its end). Otherwise
the SASS branch was introduced by ptxas (e.g. the slow path of a division).

NVIDIA's reconvergence block X: the PTX block of the BSSY target instruction. When the target has
no line row of its own (nvdisasm prints a row only when the line changes, so it inherited the row
of the code before the BSYNC: ABI epilogue, parameter reloads, a second BSSY), the first
instruction at or after the target with its own row is used.

Our side: `CMD cfg kernels/ptx/sm_80/NAME.ptx --format json` with (at least) the schema
    {"file": str, "functions": [{"name": str, "kind": "entry"|"func",
      "blocks": [{"index": int, "label": str|null, "ptx_line": int, "loc": {...}|null,
                  "succs": [{"to": int, "kind": str}]}],
      "branches": [{"block": int, "ptx_line": int, "loc": {...}|null, "targets": [int],
                    "uniform": bool,
                    "reconvergence": {"block": int, "label": str|null, "ptx_line": int,
                                      "loc": {...}|null} | "exit"}]}]}
CMD defaults to target/release/reconverge when it exists, else
`cargo run --release -q -p reconverge-cli --`. Our reconvergence block is Y.

Verdict for every (PTX branch, BSSY region) pair:
  agree   -- X == Y; or every block from Y to X produced no SASS instruction at all (then Y and X
             are the same SASS address);
  differ  -- otherwise, classified automatically:
     early-exit    X is where all paths from the branch that can still reach X meet first; the
                   other paths return (our Y is the function's ret block) -- the region does not
                   wait for threads that leave it early;
     break-out     the same, but the excluded paths rejoin later (at Y) at an enclosing region's
                   BSYNC (ptxas BREAKs them out of the inner barrier);
     uniform       the branch's condition is the same in every thread (a conservative
                   divergence analysis of the PTX, in this script): it cannot split a warp, so
                   ptxas gives it no BSSY and it merely sits in a region opened for another
                   branch, whose target X is no reconvergence point for it;
     shared-region the branch has no BSSY of its own: it sits in a region opened for an earlier
                   branch, its paths rejoin at Y without a BSYNC, and the threads wait at the
                   enclosing region's BSYNC X (X post-dominates Y);
     other         none of these (explained by hand in docs/bssy-comparison.md);
  leaves  -- the SASS branch jumps out of every region holding it (to an EXIT): NVIDIA does not
             reconverge its threads before the exit.
Everything that has no such pair is counted as well: PTX branches kept as a SASS branch outside
every BSSY region (with the likely reason: thread-invariant condition, reconvergence at the exit,
or a bar.sync that rejoins the warp), turned into a predicated EXIT, merged into a BRX jump
table, if-converted (arms predicated or selected), or folded away (condition constant); SASS
branches ptxas introduced and BSSYs opened only for them; BSSYs without a conditional branch;
functions only one side has. --markdown prints all of it as the tables of
docs/bssy-comparison.md.
"""

from __future__ import annotations

import argparse
import json
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
import ptx_props  # noqa: E402

REPO = _tools.REPO
PTX_DIR = REPO / "kernels" / "ptx" / "sm_80"

# ----------------------------------------------------------------------------------------------
# PTX side: instrumentation and per-instruction facts
# ----------------------------------------------------------------------------------------------

_PTX_LOC_RE = re.compile(r"^\s*\.loc\b")
_PTX_FILE_RE = re.compile(r"^\s*\.file\s+(\d+)\b")
_PTX_PRED_BRA_RE = re.compile(r"^@(!?)(%\w+)\s+bra")
_PTX_SETP_RE = re.compile(r"^(?:setp|set)\.\S+\s+(%\w+)(?:\|(%\w+))?")
_PTX_EXIT_RE = re.compile(r"^(?:@!?%\w+\s+)?(?:ret|exit|trap)\b")


def instruction_starts(text: str) -> dict[int, str]:
    """PTX line number -> instruction text (joined when it spans lines), inside function bodies."""
    out: dict[int, str] = {}
    for f in ptx_props.split_functions(text):
        for lineno, kind, inst, _loc in ptx_props.statements(f["body"]):
            if kind == "inst":
                out[lineno] = inst
    return out


def instrument_ptx(text: str) -> str:
    """Drop every `.loc`; give every PTX instruction `.loc F <its PTX line> 0`."""
    starts = instruction_starts(text)
    m = next((m for m in map(_PTX_FILE_RE.match, text.splitlines()) if m), None)
    file_index = m.group(1) if m else "1"
    out = []
    for k, line in enumerate(text.splitlines(), 1):
        if _PTX_LOC_RE.match(line):
            out.append("")          # keep the line count (not needed, but eases reading)
            continue
        if k in starts:
            out.append(f"\t.loc\t{file_index} {k} 0")
        out.append(line)
    if m is None:
        out.append('\t.file\t1 "instrumented.ptx"')
    return "\n".join(out) + "\n"


_NO_DEST_OPS = ("st", "red", "bar", "barrier", "membar", "fence", "bra", "ret", "exit", "call",
                "prefetch", "prefetchu", "trap", "brx", "cp", "brkpt", "nanosleep")
_VARIANT_SREG_RE = re.compile(r"%(tid|laneid|lanemask_\w+|clock\w*|globaltimer\w*|warpid|smid|"
                              r"pm\d+)\b")
_VARIANT_OPS = ("atom", "shfl", "vote", "activemask", "match", "redux", "tex", "tld4", "suld",
                "call")


def ptx_split(text: str) -> tuple[str | None, str, list[str]]:
    """(guard, opcode, operands) of a PTX instruction."""
    guard = None
    m = re.match(r"^@(!?%\w+)\s+(.*)$", text)
    if m:
        guard, text = m.group(1), m.group(2)
    parts = text.split(None, 1)
    op = parts[0] if parts else ""
    ops, depth, cur = [], 0, ""
    for ch in parts[1] if len(parts) > 1 else "":
        depth += ch in "[{("
        depth -= ch in "]})"
        if ch == "," and depth == 0:
            ops.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        ops.append(cur.strip())
    return guard, op, ops


def _ptx_dests(text: str) -> set[str]:
    _guard, op, ops = ptx_split(text)
    if not ops or op.split(".")[0] in _NO_DEST_OPS:
        return set()
    return set(re.findall(r"%\w+", ops[0]))


def cuda_lines(text: str) -> dict[int, int]:
    """PTX line number of every instruction -> CUDA line of the `.loc` in effect (0 if none)."""
    out: dict[int, int] = {}
    for f in ptx_props.split_functions(text):
        for lineno, kind, _inst, loc in ptx_props.statements(f["body"]):
            if kind == "inst":
                out[lineno] = loc["line"] if loc else 0
    return out


# ----------------------------------------------------------------------------------------------
# SASS side
# ----------------------------------------------------------------------------------------------

_FILE_RE = re.compile(r'^\s*//## File "([^"]*)", line (\d+)')
_INST_RE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*$")
_LABEL_RE = re.compile(r"^([.$\w]+):\s*$")
_TYPE_RE = re.compile(r"^\s*\.type\s+([$\w.]+)\s*,\s*@function")
_TARGET_RE = re.compile(r"`\(([^)]*)\)")
_BRX_TARGETS_RE = re.compile(r'BRANCH_TARGETS\s+([^"]*)"')


@dataclass
class SassInst:
    addr: int
    pred: str | None          # "P0", "!P1", ... or None
    opcode: str               # "BRA", "BSSY", "BSYNC", ...
    text: str
    line: int | None          # DWARF line (inherited from the previous row when not own)
    own_line: bool            # a row annotation directly precedes it
    target: str | None = None
    labels: list = field(default_factory=list)      # labels placed at this instruction
    leaves: bool = False      # bracketed, but its target lies outside every region holding it


@dataclass
class Bssy:
    func: str
    addr: int
    barrier: str
    target_label: str
    target_addr: int
    target_line: int | None   # row of the target instruction (maybe inherited)
    target_own: bool          # the target instruction has a row of its own
    line: int | None          # resolved: target's own row, else the next own row
    line_addr: int | None     # address of the instruction that gave `line`
    branches: list = field(default_factory=list)     # direct conditional SassInst
    nested: list = field(default_factory=list)       # addresses of nested BSSYs

    @property
    def owner(self):
        return min(self.branches, key=lambda i: i.addr) if self.branches else None


@dataclass
class SassFunc:
    name: str
    insts: list = field(default_factory=list)
    labels: dict = field(default_factory=dict)       # label -> address
    bssys: list = field(default_factory=list)

    def at(self, addr: int) -> int | None:
        for k, i in enumerate(self.insts):
            if i.addr == addr:
                return k
        return None


def _func_name(sym: str) -> str:
    if sym.startswith("$") and sym.count("$") >= 2:
        return sym.rsplit("$", 1)[1]   # $kernel$func -> func
    return sym


def parse_sass(text: str) -> list[SassFunc]:
    funcs: list[SassFunc] = []
    cur: SassFunc | None = None
    line: int | None = None
    annotated = False
    pending_labels: list[str] = []
    for raw in text.splitlines():
        m = _TYPE_RE.match(raw)
        if m:
            cur = SassFunc(_func_name(m.group(1)))
            funcs.append(cur)
            line = None
            pending_labels = []
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
        inst = SassInst(addr, pred, opcode, body, line, annotated, tm.group(1) if tm else None,
                        list(pending_labels))
        annotated = False
        for lab in pending_labels:
            cur.labels[lab] = addr
        pending_labels = []
        cur.insts.append(inst)
    for f in funcs:
        _find_bssy(f)
    return funcs


def is_cond_branch(i: SassInst) -> bool:
    if is_local_call(i):
        return True
    if not i.opcode.startswith("BRA") or i.opcode.startswith("BRA.DIV"):
        return False
    if i.pred is None or i.pred in ("PT", "!PT"):
        # `BRA P1, target` (predicate operand) is conditional as well
        return bool(re.match(r"^BRA(\.\w+)*\s+!?P\d", i.text))
    return True


def is_local_call(i: SassInst) -> bool:
    """`@P0 CALL.REL.NOINC `(.L_x_7)`: ptxas' encoding of a loop exit (a jump to a label of the
    same function, not a call of another function); treated as a conditional branch."""
    return (i.opcode.startswith("CALL.REL.NOINC") and i.pred not in (None, "PT", "!PT")
            and bool(i.target) and i.target.startswith(".L"))


def brx_targets(i: SassInst) -> list[str]:
    m = _BRX_TARGETS_RE.search(i.text)
    return [t.strip() for t in m.group(1).split(",")] if m else []


def resolve_line(f: SassFunc, k: int) -> tuple[int | None, int | None]:
    """(line, address) of instruction k if it has its own row, else of the first instruction at or
    after it that has one (stopping after a branch or EXIT/RET)."""
    for j in range(k, len(f.insts)):
        ins = f.insts[j]
        if ins.own_line:
            return ins.line, ins.addr
        if ins.opcode.startswith(("BRA", "EXIT", "RET", "BRX", "JMP")):
            break
    return None, None


def _find_bssy(f: SassFunc) -> None:
    by_addr = {i.addr: k for k, i in enumerate(f.insts)}
    for i in f.insts:
        if i.opcode != "BSSY":
            continue
        barrier = i.text.split()[1].rstrip(",")
        taddr = f.labels.get(i.target)
        if taddr is None:
            continue
        tk = by_addr.get(taddr)
        if tk is None:
            continue
        tinst = f.insts[tk]
        line, laddr = resolve_line(f, tk)
        f.bssys.append(Bssy(f.name, i.addr, barrier, i.target, taddr, tinst.line,
                            tinst.own_line, line, laddr))
    # Attribute every conditional branch to the innermost region that holds both the branch
    # and its target (the barrier its threads rejoin). A branch whose target is outside every
    # region holding it (an early exit) is attributed to the innermost region holding it and
    # flagged `leaves`.
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


def _pred_writes(i: SassInst) -> set[str]:
    """Predicate registers an instruction writes (leading P operands; carry-outs after R dest)."""
    parts = i.text.split(None, 1)
    if len(parts) < 2 or i.opcode.startswith(("BRA", "BSSY", "BSYNC", "EXIT", "BRX", "BREAK")):
        return set()
    ops = [o.strip() for o in parts[1].split(",")]
    out = set()
    k = 0
    while k < len(ops) and re.fullmatch(r"U?P\d+|U?PT", ops[k]):
        out.add(ops[k])
        k += 1
    if k == 0 and ops and re.fullmatch(r"U?R\w+", ops[0]):
        k = 1
        while k < len(ops) and re.fullmatch(r"U?P\d+|U?PT", ops[k]):
            out.add(ops[k])
            k += 1
    return out - {"PT", "UPT"}


def pred_def(f: SassFunc, k: int) -> SassInst | None:
    """The instruction that last wrote the guard predicate of instruction k (same SASS block,
    scanning backwards; None when it cannot be found)."""
    p = f.insts[k].pred
    if p is None:
        mm = re.match(r"^BRA(?:\.\w+)*\s+!?(P\d+)", f.insts[k].text)
        if not mm:
            return None
        p = mm.group(1)
    p = p.lstrip("!")
    for j in range(k - 1, -1, -1):
        ins = f.insts[j]
        if p in _pred_writes(ins):
            return ins
        if ins.labels and j != k:
            # a join point: the definition may come from several places; give up past it
            if not any(p in _pred_writes(x) for x in f.insts[max(0, j - 1):j]):
                return None
    return None


def run_tools(ptx: Path, tools: dict, text: str, tmp: Path) -> str:
    src = tmp / (ptx.stem + ".ptx")
    src.write_text(text)
    cubin = tmp / (ptx.stem + ".cubin")
    r = subprocess.run([str(tools["ptxas"]), "-arch=sm_80", "-lineinfo", "-o", str(cubin),
                        str(src)], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"ptxas failed on {ptx} ({src.name}):\n{r.stderr}")
    r = subprocess.run([str(tools["nvdisasm"]), "-c", "-g", str(cubin)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"nvdisasm failed on {cubin}:\n{r.stderr}")
    return r.stdout


def _code_only(sass: str) -> list[str]:
    return [m.group(0).strip() for m in map(_INST_RE.match, sass.splitlines()) if m]


def sass_pair(ptx: Path, tools: dict, keep_dir: Path | None = None) -> tuple[str, str]:
    """(SASS with CUDA lines, SASS with PTX lines) for one PTX file; checks they are one code."""
    text = ptx.read_text()
    with tempfile.TemporaryDirectory() as tmp:
        orig = run_tools(ptx, tools, text, Path(tmp))
        inst_dir = Path(tmp) / "instrumented"
        inst_dir.mkdir()
        instr = run_tools(ptx, tools, instrument_ptx(text), inst_dir)
    if _code_only(orig) != _code_only(instr):
        raise SystemExit(f"{ptx}: the PTX-line-instrumented copy compiles to different SASS; "
                         f"the PTX-line mapping cannot be used")
    if keep_dir:
        keep_dir.mkdir(parents=True, exist_ok=True)
        (keep_dir / (ptx.stem + ".sass")).write_text(orig)
        (keep_dir / (ptx.stem + ".ptxline.sass")).write_text(instr)
    return orig, instr


def check_lines(orig: list[SassFunc], instr: list[SassFunc],
                cuda: dict[int, int]) -> tuple[int, int, int]:
    """(SASS instructions with a line in both builds, those whose CUDA line equals the .loc line
    of the PTX instruction the instrumented build names, those whose PTX instruction has .loc
    line 0 -- they inherit the previous row in the plain build). Any other is a mismatch."""
    n = same = zero = 0
    for fo, fi in zip(orig, instr):
        if fo.name != fi.name or len(fo.insts) != len(fi.insts):
            return n, same, -1
        for a, b in zip(fo.insts, fi.insts):
            if b.line is None or a.line is None:
                continue
            n += 1
            if cuda.get(b.line) == a.line:
                same += 1
            elif cuda.get(b.line) == 0:
                zero += 1
    return n, same, zero


# ----------------------------------------------------------------------------------------------
# Our side
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


def _postdominators(succ: list[list[int]], sinks: set[int]) -> list[set[int]]:
    """Post-dominator sets; every block in `sinks` gets an edge to a virtual exit (index n);
    blocks that cannot reach it get a fake edge (as ptx_props.ipdoms does)."""
    n = len(succ)
    s2 = [list(s) for s in succ] + [[]]
    for v in sinks:
        s2[v].append(n)
    rev = [[] for _ in range(n + 1)]
    for a, ss in enumerate(s2):
        for s in ss:
            rev[s].append(a)
    while True:
        reach = ptx_props._reach(n, rev)
        dead = [v for v in range(n) if v not in reach]
        if not dead:
            break
        v = max(dead)
        s2[v].append(n)
        rev[n].append(v)
    return ptx_props.dominators(rev, n)


class OurFunc:
    """Our CFG of one function (from the JSON) plus per-PTX-line facts (from the PTX text)."""

    def __init__(self, fj: dict, insts: dict[int, str], cuda: dict[int, int]):
        self.name = fj["name"]
        self.blocks = fj["blocks"]
        self.n = len(self.blocks)
        self.starts = sorted((b["ptx_line"], b["index"]) for b in self.blocks)
        self.succ = []
        to_exit = set()
        for b in self.blocks:
            ss = b.get("succs")
            if ss is None:
                raise SystemExit("our JSON has no block `succs`; use a current reconverge or "
                                 "scripts/ptx_props.py")
            tos = [s["to"] if isinstance(s, dict) else s for s in ss]
            if None in tos:
                to_exit.add(b["index"])       # an edge to the virtual exit
            self.succ.append([t for t in tos if t is not None])
        self.branches = {br["ptx_line"]: br for br in fj["branches"]}
        lo = self.starts[0][0] if self.starts else 0
        nxt = [self.starts[k + 1][0] if k + 1 < len(self.starts) else 10**9
               for k in range(len(self.starts))]
        hi = max((ln for ln in insts if ln >= lo), default=lo)
        self.insts = {ln: t for ln, t in insts.items() if lo <= ln <= hi}
        self.cuda = cuda
        self.block_insts: dict[int, list[int]] = {b["index"]: [] for b in self.blocks}
        for (start, idx), end in zip(self.starts, nxt):
            self.block_insts[idx] = sorted(ln for ln in self.insts if start <= ln < end)
        self.exit_blocks = {i for i in range(self.n)
                            if self.block_insts[i]
                            and _PTX_EXIT_RE.match(self.insts[self.block_insts[i][-1]])}
        self.pdom = _postdominators(self.succ, self.exit_blocks | to_exit
                                    | {i for i in range(self.n) if not self.succ[i]})

    # -- lookups -------------------------------------------------------------------------------
    def block_of(self, line: int | None) -> int | None:
        if line is None or line not in self.insts:
            return None
        idx = None
        for start, i in self.starts:
            if start <= line:
                idx = i
            else:
                break
        return idx

    def bname(self, i) -> str:
        if i == "exit":
            return "exit"
        if i is None:
            return "?"
        b = self.blocks[i]
        return f"B{i}" + (f" {b['label']}" if b.get("label") else "")

    def block_cuda(self, i, seen=None) -> int | None:
        """CUDA line of a block: its first instruction with a real (non-zero) line, else that
        of its single successor."""
        if i == "exit" or i is None:
            return None
        for ln in self.block_insts[i]:
            if self.cuda.get(ln):
                return self.cuda[ln]
        seen = seen or set()
        if len(self.succ[i]) == 1 and i not in seen:
            return self.block_cuda(self.succ[i][0], seen | {i})
        return None

    def is_pure_exit(self, i) -> bool:
        """Block that does nothing but return (reconverging there = reconverging at the exit)."""
        if i == "exit":
            return True
        lines = self.block_insts.get(i, [])
        return bool(lines) and all(_PTX_EXIT_RE.match(self.insts[ln]) for ln in lines)

    def postdominates(self, x: int, y: int) -> bool:
        return x in self.pdom[y]

    def reach_to(self, x: int) -> set[int]:
        rev = [[] for _ in range(self.n)]
        for a, ss in enumerate(self.succ):
            for s in ss:
                rev[s].append(a)
        return ptx_props._reach(x, rev)

    def reach_from_avoiding(self, b: int, avoid: int) -> set[int]:
        seen, todo = set(), [s for s in self.succ[b] if s != avoid]
        while todo:
            v = todo.pop()
            if v in seen or v == avoid:
                continue
            seen.add(v)
            todo.extend(self.succ[v])
        return seen

    def ipdom_within(self, b: int, x: int) -> int | None:
        """Immediate post-dominator of b in the subgraph of the blocks that can reach x, with x as
        the only exit (paths that cannot reach x are cut off)."""
        r = self.reach_to(x)
        if b not in r:
            return None
        nodes = sorted(r)
        pos = {v: k for k, v in enumerate(nodes)}
        succ = [[pos[s] for s in self.succ[v] if s in r] if v != x else [] for v in nodes]
        pd = _postdominators(succ, {pos[x]})
        ip = ptx_props.immediate(pd, pos[b])
        return None if ip is None or ip == len(nodes) else nodes[ip]

    def our_rec(self, br: dict):
        rec = br["reconvergence"]
        return "exit" if rec == "exit" else rec["block"]

    def branch_pred(self, line: int) -> str | None:
        m = _PTX_PRED_BRA_RE.match(self.insts.get(line, ""))
        return m.group(2) if m else None

    def thread_variant(self, kind: str) -> set[str]:
        """Registers that may differ between the threads of a warp: a conservative divergence
        analysis (data flow from %tid/%laneid/loads/atomics/warp ops/call results, plus the
        registers a divergent branch's region defines and code after the region uses)."""
        tainted: set[str] = set()
        uses_in = {b: set() for b in range(self.n)}
        for b in range(self.n):
            for ln in self.block_insts[b]:
                guard, _op, ops = ptx_split(self.insts[ln])
                src = ops[1:] if _ptx_dests(self.insts[ln]) else ops
                uses_in[b] |= set(re.findall(r"%\w+", " ".join(src) + " " + (guard or "")))
        changed = True
        while changed:
            changed = False
            for ln, text in self.insts.items():
                dests = _ptx_dests(text)
                if not dests or dests <= tainted:
                    continue
                guard, op, ops = ptx_split(text)
                src = ", ".join(ops[1:])
                base = op.split(".")[0]
                space = op.split(".")[1] if "." in op else ""
                var = (bool(set(re.findall(r"%\w+", src)) & tainted)
                       or bool(_VARIANT_SREG_RE.search(src))
                       or (guard is not None and guard.lstrip("!") in tainted)
                       or base in _VARIANT_OPS
                       or (base == "ld" and space not in ("param", "const"))
                       or (base == "ld" and space == "param"
                           and (kind != "entry" or "retval" in src)))
                if var:
                    tainted |= dests
                    changed = True
            for bl, br in self.branches.items():
                p = self.branch_pred(bl)
                if p is None or p not in tainted:
                    continue
                y = self.our_rec(br)
                region = self.reach_from_avoiding(br["block"], y if y != "exit" else -1)
                outside = set().union(*(uses_in[b] for b in range(self.n) if b not in region))
                defs = {d for b in region for ln in self.block_insts[b]
                        for d in _ptx_dests(self.insts[ln])}
                new = (defs & outside) - tainted
                if new:
                    tainted |= new
                    changed = True
        return tainted

    def has_sync_op(self, blocks) -> bool:
        """bar.sync or a warp-synchronous instruction (shfl/vote/match/redux/activemask/call)."""
        return self.has_barrier(blocks) or any(
            re.match(r"^(?:@!?%\w+\s+)?(?:shfl|vote|match|redux|activemask|call|bar\.warp)",
                     self.insts[ln]) for b in blocks for ln in self.block_insts[b])

    def has_barrier(self, blocks) -> bool:
        return any(re.match(r"^(?:@!?%\w+\s+)?(?:bar|barrier)\.(?:sync|red)|^bar\s",
                            self.insts[ln]) for b in blocks for ln in self.block_insts[b])

    def pred_def_line(self, line: int) -> int | None:
        """PTX line of the last instruction before `line` (textually) that writes the branch's
        predicate."""
        p = self.branch_pred(line)
        if p is None:
            return None
        for ln in sorted((x for x in self.insts if x < line), reverse=True):
            if p in _ptx_dests(self.insts[ln]):
                return ln
        return None


# ----------------------------------------------------------------------------------------------
# Matching
# ----------------------------------------------------------------------------------------------

@dataclass
class Row:
    kernel: str
    func: str
    ptx_line: int             # PTX line of the conditional bra
    cuda_line: int | None
    sass: list                # addresses of the SASS branches that carry it
    how: str                  # "line" or "predicate"
    bssy: Bssy
    nv_block: int | None
    nv_cuda: int | None
    ours: object              # block index or "exit"
    ours_cuda: int | None
    verdict: str              # agree / differ / leaves
    cls: str                  # "" or early-exit / break-out / shared-region / other
    notes: list
    reason: str
    nv_name: str = ""
    ours_name: str = ""
    uniform: bool = False


@dataclass
class Extra:
    """Something without a (branch, BSSY) pair."""
    kernel: str
    func: str
    kind: str                 # see EXTRA_KINDS
    line: int | None          # PTX line
    cuda_line: int | None
    text: str
    sub: str = ""             # sub-class (unbracketed: uniform / exit / barrier / other)


EXTRA_KINDS = {
    "unbracketed": "PTX branch kept as a SASS branch outside every BSSY region",
    "exit": "PTX branch turned into a predicated EXIT (its target returns)",
    "brx": "PTX branch merged into a BRX jump table",
    "ifconv": "PTX branch if-converted (its arms predicated or selected, no SASS branch)",
    "folded": "PTX branch folded away (no SASS code left for it or its arms)",
    "introduced": "SASS conditional branch with no PTX conditional branch (added by ptxas)",
    "ptxas-bssy": "BSSY opened only for branches ptxas introduced",
    "nobranch": "BSSY that brackets no conditional branch",
    "sass-only": "SASS-only function (ptxas runtime helper)",
    "ptx-only": "PTX function not in the SASS (inlined or removed)",
}


def match_branch(f: SassFunc, k: int, of: OurFunc) -> tuple[int | None, str, SassInst | None]:
    """PTX conditional branch (its PTX line) that SASS instruction k implements."""
    i = f.insts[k]
    if i.line in of.branches:
        return i.line, "line", None
    d = pred_def(f, k)
    if d is not None and d.line in of.insts:
        m = _PTX_SETP_RE.match(of.insts[d.line])
        if m:
            regs = {m.group(1), m.group(2)} - {None}
            blk = of.block_of(d.line)
            cands = sorted(ln for ln, br in of.branches.items()
                           if of.branch_pred(ln) in regs and ln > d.line
                           and of.block_of(ln) == blk)
            if cands:
                return cands[0], "predicate", d
    return None, "", d


def _unbracketed_reason(f: SassFunc, of: OurFunc, br: dict,
                        variant: set[str]) -> tuple[str, str]:
    """Why ptxas needs no BSSY for a kept branch: (sub-class, evidence)."""
    line = br["ptx_line"]
    y = of.our_rec(br)
    p = of.branch_pred(line)
    if p is not None and p not in variant:
        return "uniform", (f"its condition {p} is the same in every thread (conservative "
                           f"divergence analysis of the PTX)")
    if of.is_pure_exit(y):
        return "exit", "ours is the ret block: the threads run to EXIT, nothing waits"
    if y != "exit" and of.has_barrier([y]):
        ws = [i for i in f.insts if i.opcode.startswith(("WARPSYNC", "BAR"))
              and i.line in of.block_insts[y]]
        return "barrier", (f"ours {of.bname(y)} starts with __syncthreads (bar.sync)"
                           + (f"; SASS {ws[0].opcode} at /*{ws[0].addr:04x}*/ reconverges the warp"
                              if ws else ""))
    kinds = []
    for succ in of.succ[br["block"]]:
        v, seen = succ, set()
        while v not in seen and not of.has_barrier([v]) and len(of.succ[v]) == 1:
            seen.add(v)
            v = of.succ[v][0]
        if of.has_barrier([v]):
            ws = [i for i in f.insts if i.opcode.startswith("WARPSYNC")
                  and i.line in of.block_insts[v]]
            kinds.append(f"reaches bar.sync in {of.bname(v)}"
                         + (f" (SASS WARPSYNC /*{ws[0].addr:04x}*/)" if ws else ""))
        elif not of.has_sync_op(of.reach_from_avoiding(br["block"], -1) & (
                {succ} | of.reach_from_avoiding(succ, br["block"]))):
            kinds.append(f"runs from {of.bname(succ)} to EXIT without any barrier or "
                         f"warp-synchronous instruction")
        else:
            break
    else:
        if kinds and any("bar.sync" in k for k in kinds):
            return "barrier", "one path " + "; the other ".join(kinds)
    return "other", "no reason found automatically"


def _chain_empty(of: OurFunc, y: int, x: int, sass_lines: set[int]) -> list[int] | None:
    """Blocks from y (inclusive) to x (exclusive) along successor edges, all without any SASS
    instruction; None when there is no such chain."""
    empty = lambda v: not any(ln in sass_lines for ln in of.block_insts[v])  # noqa: E731
    if not empty(y):
        return None
    seen = {y}
    todo = [[y]]
    while todo:
        path = todo.pop(0)
        for s in of.succ[path[-1]]:
            if s == x:
                return path
            if s not in seen and empty(s):
                seen.add(s)
                todo.append(path + [s])
    return None


def _fmt_lines(of: OurFunc, blocks) -> str:
    return ", ".join(of.bname(v) for v in sorted(blocks))


def classify(of: OurFunc, f: SassFunc, b: Bssy, row: Row, bblock: int, uniform: bool) -> None:
    x, y = row.nv_block, row.ours
    owner = b.owner
    if uniform and owner is not None and row.sass and owner.addr not in row.sass:
        oline, _, _ = match_branch(f, f.at(owner.addr), of)
        row.cls = "uniform"
        row.reason = (f"the branch cannot split the warp (thread-invariant condition), so ptxas "
                      f"gives it no BSSY; it merely sits in the region /*{b.addr:04x}*/ opened for "
                      f"the branch at PTX {oline or owner.line}, whose BSYNC is in {of.bname(x)}; "
                      f"ours {of.bname(y)} is its post-dominator, never used as no warp splits")
        return
    if y == "exit":
        y_pd = None
    else:
        y_pd = y
    # early exit / break out: x is where the paths that can still reach x meet first
    if x is not None and of.ipdom_within(bblock, x) == x:
        excluded = of.reach_from_avoiding(bblock, x) - of.reach_to(x)
        if y_pd is not None:
            excluded -= {y_pd} | of.reach_from_avoiding(y_pd, -1)
        if excluded:
            jumps = [i for i in f.insts if is_cond_branch(i) or i.opcode == "BRA"]
            outs = [i for i in jumps if b.addr < i.addr < b.target_addr and i.target
                    and not (b.addr < f.labels.get(i.target, -1) <= b.target_addr)]
            ev = ", ".join(f"/*{i.addr:04x}*/ (PTX {i.line})" for i in outs)
            if of.is_pure_exit(y):
                row.cls = "early-exit"
                row.reason = (f"paths via {_fmt_lines(of, excluded)} return without reaching "
                              f"{of.bname(x)}; the region waits only for the others"
                              + (f"; jumps out of the region: {ev}" if ev else "")
                              + f"; ours is the ret block {of.bname(y)}")
            else:
                row.cls = "break-out"
                outer = [c for c in f.bssys if c.addr < b.addr and c.target_addr > b.target_addr
                         and of.block_of(c.line) == y_pd]
                row.reason = (f"paths via {_fmt_lines(of, excluded)} never reach {of.bname(x)}; "
                              f"they leave the region"
                              + (f" ({ev})" if ev else "")
                              + (f" and rejoin at the enclosing BSSY {outer[0].barrier} "
                                 f"/*{outer[0].addr:04x}*/ whose target is ours"
                                 if outer else "")
                              + f" ({of.bname(y)})")
            return
    if (owner is not None and row.sass and owner.addr not in row.sass and x is not None
            and y_pd is not None and of.postdominates(x, y_pd)):
        oline, _, _ = match_branch(f, f.at(owner.addr), of)
        row.cls = "shared-region"
        row.reason = (f"no BSSY of its own: the region /*{b.addr:04x}*/ was opened for the branch "
                      f"at PTX {oline or owner.line} (/*{owner.addr:04x}*/); its paths meet at "
                      f"{of.bname(y)} without a BSYNC and wait at the region's BSYNC in "
                      f"{of.bname(x)}")
        return
    row.cls = "other"
    row.reason = "see docs/bssy-comparison.md"


def compare(kernel: str, funcs: list[SassFunc], ours: dict,
            ptx_text: str) -> tuple[list[Row], list[Extra]]:
    insts = instruction_starts(ptx_text)
    cuda = cuda_lines(ptx_text)
    rows: list[Row] = []
    extras: list[Extra] = []
    our_funcs = {fj["name"]: OurFunc(fj, insts, cuda) for fj in ours["functions"]}
    for f in funcs:
        of = our_funcs.get(f.name)
        if of is None:
            extras.append(Extra(kernel, f.name, "sass-only", None, None,
                                f"{len(f.bssys)} BSSY, not compared"))
            continue
        sass_lines = {i.line for i in f.insts if i.line is not None}
        fkind = next((fj.get("kind", "entry") for fj in ours["functions"]
                      if fj["name"] == f.name), "entry")
        variant = of.thread_variant(fkind)
        region_of = {id(i): b for b in f.bssys for i in b.branches}
        # every SASS conditional branch -> PTX branch
        matched: dict[int, list] = {}
        introduced: set[int] = set()
        for k, i in enumerate(f.insts):
            if not is_cond_branch(i):
                continue
            line, how, d = match_branch(f, k, of)
            if line is None:
                introduced.add(i.addr)
                b = region_of.get(id(i))
                what = of.insts.get(i.line, "?")
                extras.append(Extra(
                    kernel, f.name, "introduced", i.line, cuda.get(i.line),
                    f"/*{i.addr:04x}*/ {('@' + i.pred + ' ') if i.pred else ''}{i.opcode} "
                    f"at PTX line {i.line} (`{what}`)"
                    + (f", in BSSY {b.barrier} /*{b.addr:04x}*/" if b else ", outside every BSSY")))
                continue
            matched.setdefault(line, []).append((i, how, d))
        # rows: one per (PTX branch, BSSY region)
        for line in sorted(matched):
            br = of.branches[line]
            groups: dict[int, list] = {}
            unbr = []
            via = {}
            for i, how, d in matched[line]:
                b = region_of.get(id(i))
                if b is None:
                    unbr.append(i)
                    if how == "predicate":
                        via[i.addr] = (f" (carries PTX {i.line}; matched through its predicate, "
                                       f"set at /*{d.addr:04x}*/ by PTX {d.line})")
                else:
                    groups.setdefault(b.addr, []).append((i, how, d))
            for baddr, items in groups.items():
                b = next(c for c in f.bssys if c.addr == baddr)
                rows.append(_row(kernel, f, of, br, b, items, sass_lines, variant))
                if unbr:
                    rows[-1].notes.append("other SASS copies outside every BSSY: " + ", ".join(
                        f"/*{i.addr:04x}*/" for i in unbr))
            if not groups:
                sub, why = _unbracketed_reason(f, of, br, variant)
                extras.append(Extra(
                    kernel, f.name, "unbracketed", line, cuda.get(line),
                    ", ".join(f"/*{i.addr:04x}*/ @{i.pred} {i.opcode} -> {i.target}"
                              + via.get(i.addr, "") for i in unbr)
                    + f"; ours: {of.bname(of.our_rec(br))}; {why}", sub))
        # PTX branches without a SASS branch
        brx = [(i, [f.labels.get(t) for t in brx_targets(i)]) for i in f.insts
               if i.opcode.startswith("BRX")]
        brx_blocks = set()
        for _i, addrs in brx:
            for a in addrs:
                k = f.at(a) if a is not None else None
                while k is not None and k < len(f.insts) and f.insts[k].opcode == "BSYNC":
                    k += 1      # a BSYNC's row is that of the code before it
                if k is not None and k < len(f.insts):
                    brx_blocks.add(of.block_of(resolve_line(f, k)[0]))
        for line, br in sorted(of.branches.items()):
            if line in matched:
                continue
            bblock = of.block_of(line)
            y = of.our_rec(br)
            ex = [i for k, i in enumerate(f.insts) if i.opcode in ("EXIT", "RET") and i.pred
                  and (i.line == line or match_branch(f, k, of)[0] == line)]
            if ex:
                extras.append(Extra(kernel, f.name, "exit", line, cuda.get(line),
                                    f"/*{ex[0].addr:04x}*/ @{ex[0].pred} {ex[0].opcode}; ours: "
                                    f"{of.bname(y)}"))
                continue
            tgt = br["targets"][0] if br.get("targets") else None
            if tgt is not None and tgt in brx_blocks and bblock not in brx_blocks:
                extras.append(Extra(kernel, f.name, "brx", line, cuda.get(line),
                                    f"taken target {of.bname(tgt)} is a BRX target"))
                continue
            arms = of.reach_from_avoiding(bblock, y) if y != "exit" else set()
            if y == "exit":
                arms = set().union(*(({s} | of.reach_from_avoiding(s, -1))
                                     for s in of.succ[bblock])) if of.succ[bblock] else set()
            arm_lines = {ln for a in arms for ln in of.block_insts[a]}
            code = [i for i in f.insts if i.line in arm_lines]
            guarded = [i for i in code if i.pred and i.pred not in ("PT", "!PT")
                       and not i.opcode.startswith(("BRA", "EXIT", "RET", "CALL", "BRX"))]
            cond = of.pred_def_line(line)
            if cond is not None and cond not in sass_lines:
                extras.append(Extra(kernel, f.name, "folded", line, cuda.get(line),
                                    f"its condition (PTX {cond}: `{of.insts[cond]}`) has no SASS "
                                    f"instruction: constant-folded"))
            elif guarded:
                extras.append(Extra(kernel, f.name, "ifconv", line, cuda.get(line),
                                    f"{len(guarded)} predicated SASS instruction(s) from "
                                    f"{_fmt_lines(of, {of.block_of(i.line) for i in guarded})}, "
                                    f"e.g. /*{guarded[0].addr:04x}*/ @{guarded[0].pred} "
                                    f"{guarded[0].opcode}"))
            elif code:
                extras.append(Extra(kernel, f.name, "ifconv", line, cuda.get(line),
                                    f"arm code executed unconditionally (select), e.g. "
                                    f"/*{code[0].addr:04x}*/ {code[0].opcode}"))
            else:
                extras.append(Extra(kernel, f.name, "folded", line, cuda.get(line),
                                    "no SASS instruction from the branch or its arms"
                                    if line not in sass_lines else
                                    "the branch line survives only in non-branch code"))
        for b in f.bssys:
            if b.branches and all(i.addr in introduced for i in b.branches):
                bl = b.owner.line
                extras.append(Extra(kernel, f.name, "ptxas-bssy", bl, cuda.get(bl),
                                    f"BSSY {b.barrier} /*{b.addr:04x}*/ -> /*{b.target_addr:04x}*/ "
                                    f"for " + ", ".join(f"/*{i.addr:04x}*/" for i in b.branches)))
            if not b.branches:
                inside = [i for i in f.insts if b.addr < i.addr < b.target_addr]
                what = sorted({i.opcode.split(".")[0] for i in inside
                               if i.opcode.split(".")[0] in ("CALL", "BRA", "WARPSYNC", "BAR",
                                                             "SHFL", "VOTE", "MATCH", "REDUX")})
                extras.append(Extra(kernel, f.name, "nobranch", b.line, cuda.get(b.line),
                                    f"BSSY {b.barrier} /*{b.addr:04x}*/ -> /*{b.target_addr:04x}*/"
                                    f" around {', '.join(what) or 'straight-line code'}"))
    for name in our_funcs:
        if name not in {f.name for f in funcs}:
            extras.append(Extra(kernel, name, "ptx-only", None, None, "inlined or removed"))
    return rows, extras


def _row(kernel: str, f: SassFunc, of: OurFunc, br: dict, b: Bssy, items: list,
         sass_lines: set[int], variant: set[str]) -> Row:
    line = br["ptx_line"]
    bblock = br["block"]
    x = of.block_of(b.line)
    y = of.our_rec(br)
    how = "predicate" if all(h == "predicate" for _, h, _ in items) else "line"
    notes = []
    if how == "predicate":
        d = items[0][2]
        notes.append(f"SASS branch /*{items[0][0].addr:04x}*/ matched through its predicate, set "
                     f"at /*{d.addr:04x}*/ by PTX line {d.line} (`{of.insts.get(d.line, '?')}`)")
    if not b.target_own and b.line is not None:
        notes.append(f"target /*{b.target_addr:04x}*/ has no row of its own (inherits PTX "
                     f"{b.target_line} across the BSYNC); first own row /*{b.line_addr:04x}*/ "
                     f"PTX {b.line}")
    if len(items) > 1:
        notes.append(f"{len(items)} SASS copies of the branch in this region")
    pred = of.branch_pred(line)
    uniform = pred is not None and pred not in variant
    if uniform:
        notes.append(f"condition {pred} is the same in every thread")
    leaves = [i for i, _, _ in items if i.leaves]
    row = Row(kernel, f.name, line, of.cuda.get(line), [i.addr for i, _, _ in items], how, b,
              x, (of.cuda.get(b.line) or of.block_cuda(x)) if b.line else None, y,
              of.block_cuda(y), "", "", notes, "",
              of.bname(x), of.bname(y), bool(br.get("uniform")))
    if leaves:
        i = leaves[0]
        tk = f.at(f.labels.get(i.target, -1))
        dest = next((j for j in f.insts[tk:] if j.opcode.startswith(("EXIT", "RET", "BRA"))),
                    None) if tk is not None else None
        row.verdict = "leaves"
        row.cls = "leaves"
        row.reason = (f"/*{i.addr:04x}*/ jumps to {i.target} outside every region"
                      + (f", which ends in {dest.opcode} /*{dest.addr:04x}*/" if dest else "")
                      + ": its threads are not reconverged before the exit"
                      + ("; ours is the ret block (consistent)" if of.is_pure_exit(y)
                         else f"; ours is {of.bname(y)}"))
        return row
    if x is None:
        row.verdict = "differ"
        row.cls = "other"
        row.reason = "the BSSY target has no line"
        return row
    if x == y:
        row.verdict = "agree"
        return row
    if y != "exit":
        chain = _chain_empty(of, y, x, sass_lines)
        if chain is not None:
            row.verdict = "agree"
            row.notes.append(f"ours {_fmt_lines(of, chain)} produced no SASS code; the target "
                             f"is its successor {of.bname(x)}")
            return row
    row.verdict = "differ"
    classify(of, f, b, row, bblock, uniform)
    return row


# ----------------------------------------------------------------------------------------------
# Output
# ----------------------------------------------------------------------------------------------

def _blk(cuda, name) -> str:
    return f"{cuda if cuda else '-'} ({name})"


def print_table(rows: list[Row], extras: list[Extra], check: str | None = None) -> None:
    hdr = (f"{'kernel':14s} {'function':14s} {'branch':>11s} {'NVIDIA':>22s} {'ours':>22s}  "
           f"{'verdict':7s} class / notes")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        br = f"{r.cuda_line}/{r.ptx_line}"
        print(f"{r.kernel:14s} {r.func:14s} {br:>11s} {_blk(r.nv_cuda, r.nv_name):>22s} "
              f"{_blk(r.ours_cuda, r.ours_name):>22s}  {r.verdict:7s} "
              + "; ".join(([r.cls] if r.cls else []) + ([r.reason] if r.reason and r.cls else [])
                          + r.notes))
    print()
    for line in totals_lines(rows, extras) + ([check] if check else []):
        print(line)
    if extras:
        print()
        for kind, title in EXTRA_KINDS.items():
            sel = [e for e in extras if e.kind == kind]
            if not sel:
                continue
            print(f"{title}: {len(sel)}")
            for e in sel:
                where = f" line {e.cuda_line}/PTX {e.line}" if e.line is not None else ""
                print(f"  {e.kernel}/{e.func}{where}: {e.text}")


def totals(rows: list[Row], extras: list[Extra]) -> dict:
    t = {"rows": len(rows)}
    for v in ("agree", "differ", "leaves"):
        t[v] = sum(1 for r in rows if r.verdict == v)
    t["agree_exact"] = sum(1 for r in rows if r.verdict == "agree" and r.nv_block == r.ours)
    for c in ("early-exit", "break-out", "uniform", "shared-region", "other"):
        t[c] = sum(1 for r in rows if r.cls == c)
    for k in EXTRA_KINDS:
        t[k] = sum(1 for e in extras if e.kind == k)
    for sub in ("uniform", "exit", "barrier", "other"):
        t["unbracketed-" + sub] = sum(1 for e in extras
                                      if e.kind == "unbracketed" and e.sub == sub)
    return t


def totals_lines(rows: list[Row], extras: list[Extra]) -> list[str]:
    t = totals(rows, extras)
    ptx_branches = len({(r.kernel, r.func, r.ptx_line) for r in rows}) + sum(
        t[k] for k in ("unbracketed", "exit", "brx", "ifconv", "folded"))
    return [
        f"totals: {t['rows']} bracketed branches compared: {t['agree']} agree "
        f"({t['agree_exact']} same block, {t['agree'] - t['agree_exact']} through blocks without "
        f"SASS code), {t['differ']} differ ({t['early-exit']} early-exit, {t['break-out']} "
        f"break-out, {t['uniform']} uniform, {t['shared-region']} shared-region, "
        f"{t['other']} other), {t['leaves']} leave their region",
        f"PTX conditional branches: {ptx_branches}: "
        f"{len({(r.kernel, r.func, r.ptx_line) for r in rows})} bracketed by a BSSY, "
        f"{t['unbracketed']} kept outside every BSSY ({t['unbracketed-uniform']} uniform "
        f"condition, {t['unbracketed-exit']} reconverge at the exit, {t['unbracketed-barrier']} "
        f"at/around bar.sync, {t['unbracketed-other']} other), {t['exit']} predicated EXIT, "
        f"{t['brx']} into a BRX jump table, {t['ifconv']} if-converted, {t['folded']} folded",
        f"SASS: {t['introduced']} conditional branches added by ptxas, {t['ptxas-bssy']} BSSY "
        f"opened only for those, {t['nobranch']} BSSY without a conditional branch, "
        f"{t['sass-only']} SASS-only functions, {t['ptx-only']} PTX-only functions",
    ]


def _md(s) -> str:
    return str(s).replace("|", "\\|")


def print_markdown(rows: list[Row], extras: list[Extra], check: str | None = None) -> None:
    print("| kernel | function | branch line (PTX) | NVIDIA BSYNC line (PTX block) | "
          "ours line (PTX block) | verdict | reason |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        reason = "; ".join(([r.cls + ": " + r.reason] if r.cls else []) + r.notes)
        print(f"| {r.kernel} | {r.func} | {r.cuda_line} ({r.ptx_line}) | "
              f"{_md(_blk(r.nv_cuda, r.nv_name))} | {_md(_blk(r.ours_cuda, r.ours_name))} | "
              f"{r.verdict} | {_md(reason)} |")
    print()
    for line in totals_lines(rows, extras) + ([check] if check else []):
        print(f"- {line}")
    for kind, title in EXTRA_KINDS.items():
        sel = [e for e in extras if e.kind == kind]
        if not sel:
            continue
        print()
        print(f"**{title}** ({len(sel)})")
        print()
        print("| kernel | function | line (PTX) | detail |")
        print("|---|---|---|---|")
        for e in sel:
            where = f"{e.cuda_line} ({e.line})" if e.line is not None else "-"
            print(f"| {e.kernel} | {e.func} | {where} | {_md(e.text)} |")


def print_sass(kernel: str, funcs: list[SassFunc], cuda: dict[int, int]) -> int:
    total = 0
    for f in funcs:
        for b in f.bssys:
            total += 1
            br = ", ".join(
                f"/*{i.addr:04x}*/ @{i.pred} {i.opcode} -> {i.target} PTX {i.line} "
                f"(line {cuda.get(i.line)})" + (" [leaves region]" if i.leaves else "")
                for i in b.branches)
            print(f"  {kernel:14s} {f.name:14s} /*{b.addr:04x}*/ BSSY {b.barrier} -> "
                  f"{b.target_label} (/*{b.target_addr:04x}*/, PTX {b.line} line "
                  f"{cuda.get(b.line)}{'' if b.target_own else ', row inherited'}); "
                  f"brackets: {br or 'no conditional branch'}")
        inside = {id(i) for b in f.bssys for i in b.branches}
        for i in f.insts:
            if is_cond_branch(i) and id(i) not in inside:
                print(f"  {kernel:14s} {f.name:14s} /*{i.addr:04x}*/ @{i.pred} {i.opcode} -> "
                      f"{i.target} PTX {i.line} (line {cuda.get(i.line)}): conditional branch "
                      f"outside every BSSY region")
    return total


# ----------------------------------------------------------------------------------------------
# Self-test of the matching logic (no NVIDIA tools, no reconverge binary)
# ----------------------------------------------------------------------------------------------

# A fake kernel. `// @name` marks an instruction; the fake SASS below refers to PTX lines as
# {name}. Our side comes from the Python stand-in (scripts/ptx_props.py) on this text.
_FAKE_PTX = """\
.version 8.8
.target sm_80
.address_size 64

.visible .entry demo(
	.param .u64 demo_param_0,
	.param .u32 demo_param_1
)
{
	.reg .pred 	%p<32>;
	.reg .b32 	%r<32>;
	.reg .f32 	%f<8>;
	.reg .b64 	%rd<4>;
	.loc	1 10 0
	ld.param.u64 	%rd1, [demo_param_0];    // @ld0
	ld.param.u32 	%r1, [demo_param_1];     // @ld1
	mov.u32 	%r2, %tid.x;                 // @tid
	.loc	1 11 0
	setp.ge.s32 	%p1, %r2, %r1;           // @s_ret
	@%p1 bra 	$L__BB0_RET;                 // @b_ret   -> @P0 EXIT
	.loc	1 12 0
	setp.ge.s32 	%p2, %r2, 5;             // @s1
	@%p2 bra 	$L__BB0_J1;                  // @b1      agree (same block)
	.loc	1 13 0
	st.global.u32 	[%rd1], %r2;            // @st1
$L__BB0_J1:
	.loc	1 14 0
	st.global.u32 	[%rd1+4], %r2;          // @st2
	setp.ne.s32 	%p3, %r2, 7;             // @s2
	@%p3 bra 	$L__BB0_J2;                  // @b2      agree (target row inherited)
	.loc	1 15 0
	st.global.u32 	[%rd1+8], %r2;          // @st3
$L__BB0_J2:
	.loc	1 16 0
	st.global.u32 	[%rd1+12], %r2;         // @st4
	setp.ne.s32 	%p4, %r2, 9;             // @s3
	@%p4 bra 	$L__BB0_J3;                  // @b3      agree (our J3 has no SASS code)
	.loc	1 17 0
	st.global.u32 	[%rd1+16], %r2;         // @st5
$L__BB0_J3:
	.loc	1 0 0
	mov.u32 	%r5, %r2;                    // @mvj3
$L__BB0_J4:
	.loc	1 18 0
	st.global.u32 	[%rd1+20], %r5;         // @st6
	setp.ne.s32 	%p5, %r2, 3;             // @s_ic
	@%p5 bra 	$L__BB0_J5;                  // @b_ic    if-converted
	st.global.u32 	[%rd1+24], %r2;         // @st_ic
$L__BB0_J5:
	.loc	1 19 0
	mov.u32 	%r9, 32;                     // @m9
	setp.lt.s32 	%p6, %r9, 2;             // @s_fold
	@%p6 bra 	$L__BB0_J6;                  // @b_fold  folded
	st.global.u32 	[%rd1+28], %r9;         // @st_fold
$L__BB0_J6:
	.loc	1 20 0
	mov.u32 	%r10, 0;                     // @i0
$L__BB0_LOOP:
	st.global.u32 	[%rd1+32], %r10;        // @st_u
	add.s32 	%r10, %r10, 1;               // @inc
	setp.lt.s32 	%p7, %r10, %r1;          // @s_u
	@%p7 bra 	$L__BB0_LOOP;                // @b_u     unbracketed, uniform
	.loc	1 21 0
	and.b32 	%r11, %r2, 3;                 // @and
	setp.eq.s32 	%p8, %r11, 1;            // @sA
	@%p8 bra 	$L__BB0_D;                   // @bA      break-out
	st.global.u32 	[%rd1+36], %r2;         // @stB
	setp.ne.s32 	%p9, %r11, 0;            // @sB
	@%p9 bra 	$L__BB0_D;                   // @bB      matched through its predicate
	.loc	1 22 0
	st.global.u32 	[%rd1+40], %r2;         // @stC
	bra.uni 	$L__BB0_E;                    // @jC
$L__BB0_D:
	.loc	1 23 0
	st.global.u32 	[%rd1+44], %r2;         // @stD
$L__BB0_E:
	.loc	1 24 0
	st.global.u32 	[%rd1+48], %r2;         // @stE
	setp.le.s32 	%p10, %r2, 4;            // @sS
	@%p10 bra 	$L__BB0_OUT;               // @bS      agree (owns its region)
	and.b32 	%r12, %r2, 1;                 // @r
	setp.eq.s32 	%p11, %r12, 0;           // @sR0
	@%p11 bra 	$L__BB0_SJ;                // @bR0     shared-region
	st.global.u32 	[%rd1+52], %r2;         // @stR0
	setp.eq.s32 	%p12, %r1, 1;            // @sR1
	@%p12 bra 	$L__BB0_SJ;                // @bR1     uniform
	st.global.u32 	[%rd1+56], %r2;         // @stR1
$L__BB0_SJ:
	setp.lt.u32 	%p13, %r2, 8;            // @sC
	@%p13 bra 	$L__BB0_OUT;               // @bC      agree
	st.global.u32 	[%rd1+60], %r2;         // @stSJ
$L__BB0_OUT:
	.loc	1 25 0
	mov.u32 	%r13, 0;                     // @i1
$L__BB0_H:
	ld.global.u32 	%r14, [%rd1];           // @ldv
	setp.eq.s32 	%p14, %r14, 0;           // @sBrk
	@%p14 bra 	$L__BB0_AFTER;             // @bBrk    early-exit
	setp.gt.s32 	%p15, %r14, 100;         // @sEx
	@%p15 bra 	$L__BB0_EARLY;             // @bEx     leaves
	add.s32 	%r13, %r13, 1;               // @inc1
	setp.lt.s32 	%p16, %r13, %r14;        // @sL
	@%p16 bra 	$L__BB0_H;                 // @bL      early-exit
$L__BB0_AFTER:
	.loc	1 26 0
	div.rn.f32 	%f1, %f2, %f3;            // @div     ptxas adds a slow-path branch
	st.global.f32 	[%rd1+64], %f1;         // @stAfter
	bra.uni 	$L__BB0_RET;                  // @jA
$L__BB0_EARLY:
	.loc	1 27 0
	st.global.u32 	[%rd1+68], %r13;        // @stEarly
$L__BB0_RET:
	.loc	1 28 0
	ret;                                  // @ret
}
	.file	1 "/kernels/src/demo.cu"
"""

_FAKE_SASS = """
        .type           demo,@function
demo:
	#{ld0}
        /*0000*/                   MOV R1, c[0x0][0x28] ;
	#{tid}
        /*0010*/                   S2R R2, SR_TID.X ;
	#{s_ret}
        /*0020*/                   ISETP.GE.AND P0, PT, R2, c[0x0][0x168], PT ;
	#{b_ret}
        /*0030*/               @P0 EXIT ;
	#{s1}
        /*0040*/                   ISETP.GE.AND P0, PT, R2, 0x5, PT ;
        /*0050*/                   BSSY B0, `(.L_x_0) ;
	#{b1}
        /*0060*/               @P0 BRA `(.L_x_1) ;
	#{st1}
        /*0070*/                   STG.E [R4.64], R2 ;
.L_x_1:
        /*0080*/                   BSYNC B0 ;
.L_x_0:
	#{st2}
        /*0090*/                   STG.E [R4.64+0x4], R2 ;
	#{s2}
        /*00a0*/                   ISETP.NE.AND P0, PT, R2, 0x7, PT ;
        /*00b0*/                   BSSY B0, `(.L_x_2) ;
	#{b2}
        /*00c0*/               @P0 BRA `(.L_x_3) ;
	#{st3}
        /*00d0*/                   STG.E [R4.64+0x8], R2 ;
.L_x_3:
        /*00e0*/                   BSYNC B0 ;
.L_x_2:
        /*00f0*/                   MOV R6, 0x1 ;
	#{st4}
        /*0100*/                   STG.E [R4.64+0xc], R2 ;
	#{s3}
        /*0110*/                   ISETP.NE.AND P0, PT, R2, 0x9, PT ;
        /*0120*/                   BSSY B0, `(.L_x_4) ;
	#{b3}
        /*0130*/               @P0 BRA `(.L_x_5) ;
	#{st5}
        /*0140*/                   STG.E [R4.64+0x10], R2 ;
.L_x_5:
        /*0150*/                   BSYNC B0 ;
.L_x_4:
	#{st6}
        /*0160*/                   STG.E [R4.64+0x14], R2 ;
	#{s_ic}
        /*0170*/                   ISETP.NE.AND P0, PT, R2, 0x3, PT ;
	#{st_ic}
        /*0180*/              @!P0 STG.E [R4.64+0x18], R2 ;
	#{i0}
        /*0190*/                   MOV R10, RZ ;
.L_x_6:
	#{st_u}
        /*01a0*/                   STG.E [R4.64+0x20], R10 ;
	#{inc}
        /*01b0*/                   IADD3 R10, R10, 0x1, RZ ;
	#{s_u}
        /*01c0*/                   ISETP.GE.AND P0, PT, R10, c[0x0][0x168], PT ;
	#{b_u}
        /*01d0*/              @!P0 BRA `(.L_x_6) ;
	#{and}
        /*01e0*/                   LOP3.LUT R11, R2, 0x3, RZ, 0xc0, !PT ;
        /*01f0*/                   BSSY B0, `(.L_x_7) ;
        /*0200*/                   BSSY B1, `(.L_x_8) ;
	#{sA}
        /*0210*/                   ISETP.NE.AND P0, PT, R11, 0x1, PT ;
	#{bA}
        /*0220*/              @!P0 BRA `(.L_x_9) ;
	#{stB}
        /*0230*/                   STG.E [R4.64+0x24], R2 ;
	#{sB}
        /*0240*/                   ISETP.NE.AND P0, PT, R11, RZ, PT ;
	#{stC}
        /*0250*/              @!P0 STG.E [R4.64+0x28], R2 ;
        /*0260*/              @!P0 BREAK B1 ;
	#{jC}
        /*0270*/              @!P0 BRA `(.L_x_10) ;
.L_x_9:
        /*0280*/                   BSYNC B1 ;
.L_x_8:
	#{stD}
        /*0290*/                   STG.E [R4.64+0x2c], R2 ;
.L_x_10:
        /*02a0*/                   BSYNC B0 ;
.L_x_7:
	#{stE}
        /*02b0*/                   STG.E [R4.64+0x30], R2 ;
	#{sS}
        /*02c0*/                   ISETP.GT.AND P0, PT, R2, 0x4, PT ;
        /*02d0*/                   BSSY B0, `(.L_x_11) ;
	#{bS}
        /*02e0*/              @!P0 BRA `(.L_x_12) ;
	#{r}
        /*02f0*/                   LOP3.LUT R12, R2, 0x1, RZ, 0xc0, !PT ;
	#{sR0}
        /*0300*/                   ISETP.NE.AND P0, PT, R12, RZ, PT ;
	#{bR0}
        /*0310*/              @!P0 BRA `(.L_x_13) ;
	#{stR0}
        /*0320*/                   STG.E [R4.64+0x34], R2 ;
	#{sR1}
        /*0330*/                   ISETP.NE.AND P0, PT, R12, 0x1, PT ;
	#{bR1}
        /*0340*/              @!P0 BRA `(.L_x_13) ;
	#{stR1}
        /*0350*/                   STG.E [R4.64+0x38], R2 ;
.L_x_13:
	#{sC}
        /*0360*/                   ISETP.GE.U32.AND P0, PT, R2, 0x8, PT ;
	#{bC}
        /*0370*/              @!P0 BRA `(.L_x_12) ;
	#{stSJ}
        /*0380*/                   STG.E [R4.64+0x3c], R2 ;
.L_x_12:
        /*0390*/                   BSYNC B0 ;
.L_x_11:
	#{i1}
        /*03a0*/                   MOV R13, RZ ;
        /*03b0*/                   BSSY B0, `(.L_x_14) ;
.L_x_17:
	#{ldv}
        /*03c0*/                   LDG.E R14, [R4.64] ;
	#{sBrk}
        /*03d0*/                   ISETP.NE.AND P0, PT, R14, RZ, PT ;
	#{bBrk}
        /*03e0*/              @!P0 BRA `(.L_x_15) ;
	#{sEx}
        /*03f0*/                   ISETP.GT.AND P0, PT, R14, 0x64, PT ;
	#{bEx}
        /*0400*/               @P0 BRA `(.L_x_16) ;
	#{inc1}
        /*0410*/                   IADD3 R13, R13, 0x1, RZ ;
	#{sL}
        /*0420*/                   ISETP.GE.AND P0, PT, R13, R14, PT ;
	#{bL}
        /*0430*/              @!P0 BRA `(.L_x_17) ;
.L_x_15:
        /*0440*/                   BSYNC B0 ;
.L_x_14:
	#{div}
        /*0450*/                   BSSY B1, `(.L_x_18) ;
        /*0460*/                   FCHK P0, R11, R12 ;
        /*0470*/              @!P0 BRA `(.L_x_19) ;
        /*0480*/                   CALL.REL.NOINC `($demo$slowpath) ;
.L_x_19:
        /*0490*/                   BSYNC B1 ;
.L_x_18:
	#{stAfter}
        /*04a0*/                   STG.E [R4.64+0x40], R7 ;
	#{ret}
        /*04b0*/                   EXIT ;
.L_x_16:
	#{stEarly}
        /*04c0*/                   STG.E [R4.64+0x44], R13 ;
	#{ret}
        /*04d0*/                   EXIT ;
.L_x_20:
        /*04e0*/                   BRA `(.L_x_20);
"""


def _fake_marks() -> dict[str, int]:
    return {m.group(1): k for k, ln in enumerate(_FAKE_PTX.splitlines(), 1)
            for m in [re.search(r"// @(\w+)", ln)] if m}


def _fake_sass() -> str:
    marks = _fake_marks()
    return re.sub(r"#\{(\w+)\}",
                  lambda m: f'//## File "/kernels/src/demo.cu", line {marks[m.group(1)]}',
                  _FAKE_SASS)


def _fake_ours() -> dict:
    """Our side for _FAKE_PTX from the Python stand-in (independent of the Rust code)."""
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "demo.ptx"
        p.write_text(_FAKE_PTX)
        return ptx_props.cfg_json(p)


def self_test() -> int:
    L = _fake_marks()
    # 1. instrumentation: every instruction gets `.loc 1 <its PTX line> 0`, old .locs are gone
    inst = instrument_ptx(_FAKE_PTX).splitlines()
    orig = _FAKE_PTX.splitlines()
    locs = [k for k, ln in enumerate(inst) if ln.strip().startswith(".loc")]
    assert len(locs) == len(instruction_starts(_FAKE_PTX)), len(locs)
    for k in locs:
        n = int(inst[k].split()[2])
        assert inst[k].split()[1] == "1" and orig[n - 1].strip() == inst[k + 1].strip(), inst[k]
    cl = cuda_lines(_FAKE_PTX)
    assert cl[L["tid"]] == 10 and cl[L["mvj3"]] == 0 and cl[L["stB"]] == 21, cl
    # 2. SASS parsing: regions, attribution, leaving branches, owners, rows
    funcs = parse_sass(_fake_sass())
    assert [f.name for f in funcs] == ["demo"], funcs
    f = funcs[0]
    assert len(f.bssys) == 8, f.bssys
    by_addr = {b.addr: b for b in f.bssys}
    b2 = by_addr[0xb0]
    assert (b2.target_own, b2.target_line, b2.line, b2.line_addr) == (False, L["st3"],
                                                                    L["st4"], 0x100), b2
    outer, inner = by_addr[0x1f0], by_addr[0x200]
    assert [i.addr for i in inner.branches] == [0x220] and inner.owner.addr == 0x220
    assert [i.addr for i in outer.branches] == [0x270], outer.branches   # jumps past BSYNC B1
    shared = by_addr[0x2d0]
    assert [i.addr for i in shared.branches] == [0x2e0, 0x310, 0x340, 0x370]
    loop = by_addr[0x3b0]
    assert [(i.addr, i.leaves) for i in loop.branches] == [(0x3e0, False), (0x400, True),
                                                            (0x430, False)], loop.branches
    assert _pred_writes(f.insts[f.at(0x460)]) == {"P0"}
    assert _pred_writes(SassInst(0, None, "IADD3", "IADD3 R7, P0, R4, c[0x0][0x160], RZ", 1,
                                 True)) == {"P0"}
    assert pred_def(f, f.at(0x270)).addr == 0x240
    assert is_local_call(SassInst(0, "P0", "CALL.REL.NOINC", "CALL.REL.NOINC `(.L_x_7)", 1,
                                  True, ".L_x_7"))
    assert not is_local_call(f.insts[f.at(0x480)])
    # 3. matching and verdicts against the Python stand-in's reconvergence points
    rows, extras = compare("demo", funcs, _fake_ours(), _FAKE_PTX)
    got = {r.ptx_line: (r.verdict, r.cls) for r in rows}
    want = {
        L["b1"]: ("agree", ""),
        L["b2"]: ("agree", ""),
        L["b3"]: ("agree", ""),
        L["bA"]: ("differ", "break-out"),
        L["bB"]: ("agree", ""),
        L["bS"]: ("agree", ""),
        L["bR0"]: ("differ", "shared-region"),
        L["bR1"]: ("differ", "uniform"),
        L["bC"]: ("agree", ""),
        L["bBrk"]: ("differ", "early-exit"),
        L["bEx"]: ("leaves", "leaves"),
        L["bL"]: ("differ", "early-exit"),
    }
    assert got == want, (got, want)
    r = {r.ptx_line: r for r in rows}
    assert any("no row of its own" in n for n in r[L["b2"]].notes), r[L["b2"]].notes
    assert any("produced no SASS code" in n for n in r[L["b3"]].notes), r[L["b3"]].notes
    assert r[L["b1"]].notes == [] and r[L["b1"]].nv_block == r[L["b1"]].ours
    assert r[L["bB"]].how == "predicate", r[L["bB"]]
    assert "via B29 $L__BB0_EARLY return" in r[L["bBrk"]].reason, r[L["bBrk"]].reason
    assert "ret block" in r[L["bBrk"]].reason
    assert "via B16 never reach" in r[L["bA"]].reason, r[L["bA"]].reason
    assert "$L__BB0_E" in r[L["bA"]].reason and "BSSY B0 /*01f0*/" in r[L["bA"]].reason
    assert "ret block (consistent)" in r[L["bEx"]].reason, r[L["bEx"]].reason
    kinds = {(e.kind, e.line): e for e in extras}
    assert set(kinds) == {("exit", L["b_ret"]), ("ifconv", L["b_ic"]), ("folded", L["b_fold"]),
                          ("unbracketed", L["b_u"]), ("introduced", L["div"]),
                          ("ptxas-bssy", L["div"])}, sorted(kinds)
    assert kinds[("unbracketed", L["b_u"])].sub == "uniform"
    assert "constant-folded" in kinds[("folded", L["b_fold"])].text
    t = totals(rows, extras)
    assert (t["agree"], t["agree_exact"], t["differ"], t["leaves"]) == (6, 5, 5, 1), t
    print_table(rows, extras)
    print()
    print_markdown(rows, extras)
    print("\nself-test passed")
    return 0


# ----------------------------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(
        description="BSSY targets (ptxas sm_80) vs our reconvergence points")
    ap.add_argument("kernels", nargs="*",
                    help="kernel names (default: every kernels/ptx/sm_80/*.ptx)")
    ap.add_argument("--sass-only", action="store_true", help="print the SASS side only")
    ap.add_argument("--reconverge", metavar="CMD",
                    help="command for our side (run as CMD cfg FILE.ptx --format json)")
    ap.add_argument("--json", metavar="FILE", help="read our side from FILE (one kernel)")
    ap.add_argument("--keep-sass", metavar="DIR",
                    help="also write NAME.sass (CUDA lines) and NAME.ptxline.sass (PTX lines)")
    ap.add_argument("--markdown", action="store_true",
                    help="print the tables in the format of docs/bssy-comparison.md")
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
    all_extras: list[Extra] = []
    per_kernel = []
    line_check = [0, 0, 0]
    for name in names:
        ptx = PTX_DIR / f"{name}.ptx"
        if not ptx.is_file():
            raise SystemExit(f"no such PTX: {ptx.relative_to(REPO)}")
        text = ptx.read_text()
        orig, instr = sass_pair(ptx, tools, keep)
        funcs, cfuncs = parse_sass(instr), parse_sass(orig)
        cuda = cuda_lines(text)
        n, same, zero = check_lines(cfuncs, funcs, cuda)
        if zero < 0 or n != same + zero:
            raise SystemExit(f"{name}: {n - same - zero} SASS instructions whose CUDA line differs "
                             f"from the .loc of the PTX line the instrumented build names")
        line_check = [a + b for a, b in zip(line_check, (n, same, zero))]
        nb = sum(len(f.bssys) for f in funcs)
        per_kernel.append((name, nb))
        if args.sass_only:
            print(f"{name}: {nb} BSSY")
            print_sass(name, funcs, cuda)
            continue
        ours = json.loads(Path(args.json).read_text()) if args.json else our_cfg(cmd, ptx)
        rows, extras = compare(name, funcs, ours, text)
        all_rows += rows
        all_extras += extras
    if args.sass_only:
        print()
        print("BSSY per kernel: " + ", ".join(f"{n} {c}" for n, c in per_kernel))
        print(f"total: {sum(c for _, c in per_kernel)} BSSY in {len(per_kernel)} kernels")
        return 0
    check = (f"line check: {line_check[0]} SASS instructions with a line, {line_check[1]} with "
             f"the CUDA line of the PTX instruction the instrumented build names, "
             f"{line_check[2]} from PTX instructions under `.loc ... 0`; code identical")
    if args.markdown:
        print_markdown(all_rows, all_extras, check)
    else:
        print_table(all_rows, all_extras, check)
    return 0


if __name__ == "__main__":
    sys.exit(main())
