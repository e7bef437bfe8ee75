#!/usr/bin/env python3
"""A small, independent PTX control-flow reader for checking the kernel suite.

Usage:
    python3 scripts/ptx_props.py [FILE.ptx ...]
        Summary per function (default: kernels/ptx/sm_80/*.ptx): basic blocks, conditional
        branches (`@p bra`), brx.idx, calls, natural loops (back edges whose target dominates
        the source), irreducible cycles (retreating edges whose target does not dominate the
        source, with the cycle's entry blocks), barriers, warp-level instructions
        (shfl/vote/match/redux/activemask) and atomics.

    python3 scripts/ptx_props.py cfg FILE.ptx --format json
        The same JSON as `reconverge cfg FILE.ptx --format json` (the part described in
        scripts/bssy_compare.py: blocks with successor edges, branches), computed here with a
        plain post-dominator data-flow over the CFG plus a virtual exit. It is a stand-in and cross-check for the Rust implementation,
        usable as `scripts/bssy_compare.py --reconverge "python3 scripts/ptx_props.py"`.
        Limits: `uniform` is always false (no variance analysis here); a block that cannot
        reach an exit gets a fake edge to the virtual exit.

Standard library only. It understands what NVRTC emits: labels, `{ }` call scopes,
multi-line `call` statements, `.loc` line info, `@p bra`, `bra.uni`, `brx.idx` with
`.branchtargets`, `ret`/`exit`/`trap`.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_FUNC_RE = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)")
_LABEL_RE = re.compile(r"^([\w$]+):$")
_BRA_RE = re.compile(r"^(@!?%\w+\s+)?bra(?:\.uni)?\s+([\w$]+)$")
_BRX_RE = re.compile(r"^(@!?%\w+\s+)?brx\.idx(?:\.uni)?\s+%\w+\s*,\s*([\w$]+)$")
_BTARGETS_RE = re.compile(r"^([\w$]+):\s*\.branchtargets\s+(.+)$")
_TERM_RE = re.compile(r"^(@!?%\w+\s+)?(ret|exit|trap)\b")
_LOC_RE = re.compile(r"^\.loc\s+(\d+)\s+(\d+)\s+(\d+)")


# ----------------------------------------------------------------------------------------------
# Parsing
# ----------------------------------------------------------------------------------------------

def split_functions(text: str) -> list[dict]:
    """Functions with bodies: {kind, name, body: [(lineno, text)]} (line numbers 1-based)."""
    lines = text.splitlines()
    out = []
    i = 0
    while i < len(lines):
        m = _FUNC_RE.match(lines[i])
        if not m:
            i += 1
            continue
        kind, name = m.group(1), m.group(2)
        j = i
        while j < len(lines) and "{" not in lines[j] and not lines[j].rstrip().endswith(";"):
            j += 1
        if j >= len(lines) or lines[j].rstrip().endswith(";"):
            i = j + 1          # a declaration without a body
            continue
        depth = 0
        body = []
        k = j
        while k < len(lines):
            line = lines[k]
            depth += line.count("{") - line.count("}")
            body.append((k + 1, line))
            if depth == 0 and "}" in line:
                break
            k += 1
        out.append({"kind": kind, "name": name, "body": body[1:-1]})
        i = k + 1
    return out


def statements(body: list[tuple[int, str]]):
    """Yield (lineno, kind, text, loc) with kind in label/inst/btargets; directives are consumed
    (`.loc` updates the current location)."""
    loc = None
    pending = ""
    pending_line = 0
    for lineno, raw in body:
        line = raw.split("//")[0].strip()
        if not line or line in ("{", "}"):
            continue
        if not pending:
            m = _LOC_RE.match(line)
            if m:
                loc = {"file": int(m.group(1)), "line": int(m.group(2)), "col": int(m.group(3))}
                continue
            m = _LABEL_RE.match(line)
            if m:
                yield lineno, "label", m.group(1), loc
                continue
            m = _BTARGETS_RE.match(line.rstrip(";"))
            if m:
                yield lineno, "btargets", line, loc
                continue
            if line.startswith(".") and line.endswith(";"):
                continue           # .reg, .shared, .pragma, .param declarations, ...
            if line.startswith("."):
                continue
            pending_line = lineno
        pending = (pending + " " + line).strip()
        if pending.endswith(";"):
            yield pending_line, "inst", " ".join(pending[:-1].split()), loc
            pending = ""


def build_cfg(body: list[tuple[int, str]]) -> list[dict]:
    """Basic blocks: {label, ptx_line, loc, insts: [(lineno, text, loc)], succ, kind}."""
    blocks: list[dict] = []
    tables: dict[str, list[str]] = {}
    cur = None

    def new_block(label, lineno):
        b = {"label": label, "ptx_line": lineno, "loc": None, "insts": [], "succ": [],
             "kind": "fall"}
        blocks.append(b)
        return b

    for lineno, kind, text, loc in statements(body):
        if kind == "btargets":
            m = _BTARGETS_RE.match(text.rstrip(";"))
            tables[m.group(1)] = [t.strip() for t in m.group(2).split(",")]
            continue
        if kind == "label":
            if cur is not None and not cur["insts"] and cur["label"] is None:
                blocks.pop()
            cur = new_block(text, lineno)
            continue
        if cur is None:
            cur = new_block(None, lineno)
        if not cur["insts"]:
            cur["loc"] = loc
            if cur["label"] is None:
                cur["ptx_line"] = lineno
        cur["insts"].append((lineno, text, loc))
        if _BRA_RE.match(text) or _BRX_RE.match(text) or _TERM_RE.match(text):
            cur = None
    index = {b["label"]: i for i, b in enumerate(blocks) if b["label"]}
    for i, b in enumerate(blocks):
        last = b["insts"][-1][1] if b["insts"] else ""
        fall = [i + 1] if i + 1 < len(blocks) else []
        m, mx, mt = _BRA_RE.match(last), _BRX_RE.match(last), _TERM_RE.match(last)
        if m:
            tgt = index[m.group(2)]
            if m.group(1):
                b["kind"] = "cond"
                b["succ"] = [tgt] + [f for f in fall if f != tgt]
            else:
                b["kind"] = "jump"
                b["succ"] = [tgt]
        elif mx:
            b["kind"] = "brx"
            b["succ"] = sorted({index[t] for t in tables.get(mx.group(2), [])})
        elif mt:
            b["kind"] = "cond-exit" if mt.group(1) else "exit"
            b["succ"] = fall if mt.group(1) else []
        else:
            b["succ"] = fall
    return blocks


# ----------------------------------------------------------------------------------------------
# Analyses
# ----------------------------------------------------------------------------------------------

def dominators(succ: list[list[int]], root: int) -> list[set[int]]:
    n = len(succ)
    preds = [[] for _ in range(n)]
    for a, ss in enumerate(succ):
        for s in ss:
            preds[s].append(a)
    dom = [set(range(n)) for _ in range(n)]
    dom[root] = {root}
    changed = True
    while changed:
        changed = False
        for v in range(n):
            if v == root:
                continue
            ps = [dom[p] for p in preds[v]]
            new = (set.intersection(*ps) if ps else set()) | {v}
            if new != dom[v]:
                dom[v] = new
                changed = True
    return dom


def _reach(start: int, succ) -> set[int]:
    seen = {start}
    todo = [start]
    while todo:
        v = todo.pop()
        for s in succ[v]:
            if s not in seen:
                seen.add(s)
                todo.append(s)
    return seen


def immediate(dom: list[set[int]], v: int) -> int | None:
    """The immediate (post)dominator of v from full dominator sets."""
    strict = dom[v] - {v}
    for c in strict:
        if all(c == d or d in dom[c] for d in strict):
            return c
    return None


def ipdoms(blocks: list[dict]) -> list[int | None]:
    """Immediate post-dominator of every block; len(blocks) stands for the virtual exit."""
    n = len(blocks)
    exit_ = n
    succ = [list(b["succ"]) for b in blocks] + [[]]
    for i, b in enumerate(blocks):
        if b["kind"] in ("exit", "cond-exit"):
            succ[i].append(exit_)
    rev = [[] for _ in range(n + 1)]
    for a, ss in enumerate(succ):
        for s in ss:
            rev[s].append(a)
    # blocks that cannot reach an exit (infinite loops) get a fake edge to it
    while True:
        reach = _reach(exit_, rev)
        dead = [v for v in range(n) if v not in reach]
        if not dead:
            break
        v = max(dead)
        succ[v].append(exit_)
        rev[exit_].append(v)
    pdom = dominators(rev, exit_)
    return [immediate(pdom, v) for v in range(n)]


def analyse(blocks: list[dict]) -> dict:
    succ = [b["succ"] for b in blocks]
    n = len(blocks)
    dom = dominators(succ, 0) if n else []
    state = [0] * n
    retreating = []
    if n:
        state[0] = 1
        stack = [(0, iter(succ[0]))]
        while stack:
            v, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[v] = 2
                stack.pop()
            elif state[nxt] == 0:
                state[nxt] = 1
                stack.append((nxt, iter(succ[nxt])))
            elif state[nxt] == 1:
                retreating.append((v, nxt))
    natural = [(a, h) for a, h in retreating if h in dom[a]]
    rev = [[] for _ in range(n)]
    for x, ss in enumerate(succ):
        for s in ss:
            rev[s].append(x)
    irreducible = []
    for a, h in retreating:
        if h in dom[a]:
            continue
        cycle = _reach(h, succ) & _reach(a, rev)
        entries = sorted({s for x in range(n) if x not in cycle for s in succ[x] if s in cycle})
        irreducible.append((sorted(cycle), entries))
    text = "\n".join(t for b in blocks for _, t, _ in b["insts"])
    count = lambda pat: len(re.findall(pat, text, re.M))  # noqa: E731
    return {
        "blocks": n,
        "cond_branches": sum(1 for b in blocks if b["kind"] == "cond"),
        "brx_idx": sum(1 for b in blocks if b["kind"] == "brx"),
        "calls": count(r"^call"),
        "loops": len(natural),
        "irreducible": irreducible,
        "bar_sync": count(r"^(?:@!?%\w+\s+)?(?:bar\.sync|barrier\.sync|bar\.red)"),
        "warp_ops": count(r"^(?:@!?%\w+\s+)?(?:shfl|vote|match|redux|activemask)"),
        "atomics": count(r"^(?:@!?%\w+\s+)?(?:atom|red)\."),
    }


def _succ_json(b: dict) -> list[dict]:
    """Successor edges in the `reconverge cfg --format json` shape ("to": null = the exit)."""
    kind = b["kind"]
    if kind == "cond":
        kinds = ["taken", "fallthrough"]
    elif kind == "jump":
        kinds = ["jump"]
    elif kind == "brx":
        kinds = ["brx"] * len(b["succ"])
    else:
        kinds = ["fallthrough"] * len(b["succ"])
    out = [{"to": s, "kind": k} for s, k in zip(b["succ"], kinds)]
    if kind in ("exit", "cond-exit"):
        out.append({"to": None, "kind": "exit"})
    return out


def cfg_json(path: Path) -> dict:
    """The `reconverge cfg --format json` schema, computed in Python."""
    funcs = []
    for f in split_functions(path.read_text()):
        blocks = build_cfg(f["body"])
        ip = ipdoms(blocks)
        jblocks = [{"index": i, "label": b["label"], "ptx_line": b["ptx_line"], "loc": b["loc"],
                    "succs": _succ_json(b)}
                   for i, b in enumerate(blocks)]
        branches = []
        for i, b in enumerate(blocks):
            if b["kind"] not in ("cond", "brx"):
                continue
            lineno, _, loc = b["insts"][-1]
            r = ip[i]
            if r is None or r == len(blocks):
                rec = "exit"
            else:
                rb = blocks[r]
                rec = {"block": r, "label": rb["label"], "ptx_line": rb["ptx_line"],
                       "loc": rb["loc"]}
            branches.append({"block": i, "ptx_line": lineno, "loc": loc,
                             "targets": list(b["succ"]), "uniform": False,
                             "reconvergence": rec})
        funcs.append({"name": f["name"], "kind": f["kind"], "blocks": jblocks,
                      "branches": branches})
    return {"file": str(path), "functions": funcs}


def _label(blocks, i):
    return blocks[i]["label"] or f"#{i}"


def main(argv: list[str]) -> int:
    if argv and argv[0] == "cfg":
        if len(argv) < 2 or "--format" in argv and argv[argv.index("--format") + 1] != "json":
            print("usage: ptx_props.py cfg FILE.ptx --format json", file=sys.stderr)
            return 2
        print(json.dumps(cfg_json(Path(argv[1])), indent=1))
        return 0
    files = [Path(a) for a in argv] or sorted((REPO / "kernels/ptx/sm_80").glob("*.ptx"))
    for f in files:
        for fn in split_functions(f.read_text()):
            blocks = build_cfg(fn["body"])
            r = analyse(blocks)
            irr = "; ".join(f"cycle {[_label(blocks, c) for c in cyc]} entries "
                            f"{[_label(blocks, e) for e in ent]}" for cyc, ent in r["irreducible"])
            print(f"{f.name:20s} {fn['kind']:5s} {fn['name']:14s} blocks={r['blocks']:3d} "
                  f"condbr={r['cond_branches']:2d} brx={r['brx_idx']} calls={r['calls']} "
                  f"loops={r['loops']} irreducible={len(r['irreducible'])} bar={r['bar_sync']} "
                  f"warp_ops={r['warp_ops']} atomics={r['atomics']}" + (f"  [{irr}]" if irr else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
