#!/usr/bin/env python3
"""Inputs and expected outputs of the graph workloads (kernels/graphs), and their manifest.

Usage:
    python3 kernels/graphs/gen.py           # write kernels/graphs/data/**/*.npy and manifest.toml
    python3 kernels/graphs/gen.py --check   # regenerate into a temporary directory and compare
                                            # byte for byte; exit 1 on any difference
    python3 kernels/graphs/gen.py --stats   # print the graph statistics only

One directed R-MAT graph (scale 14: 16384 vertices; a = 0.57, b = c = 0.19, d = 0.05; 11 edge
samples per vertex; vertex ids randomly permuted as in Graph500; self-loops and duplicate edges
dropped) from numpy.random.default_rng(crc32("graphs")), shared by four launches, each one
representative iteration of its algorithm's host loop:

    graph_bfs       Rodinia BFS Kernel: expand the level-2 frontier of a BFS from the source
    graph_sssp      Bellman-Ford round 4 (pull over in-edges), from the same source
    graph_color     Jones-Plassmann / Pannotia color_max step 2 (symmetrised graph)
    graph_pagerank  PageRank iteration 2 (pull over in-edges, float32)
    graph_topk      capped scan: count higher-priority in-neighbours, stop at the first 4 (a loop
                    with an early exit inside a conditional: where likely-convergence points matter)

The earlier iterations (the state each launch starts from) and the launch's expected outputs are
computed here with a plain numpy re-implementation of the kernels' semantics, one vertex at a
time (vectorised over vertices only where vertices are independent). Every kernel writes only its
own vertex's outputs or sets values with integer atomics that every contender agrees on, so the
result is independent of the thread interleaving and of the mechanism.

graph_pagerank is float: the manifest runs its --fmad=false PTX, where each operation is one
correctly rounded div.rn / add.rn / mul.rn. The reference performs the same float32 operations
in the same order (each vertex's in-edges in CSR order, accumulated from 0.0f, then damping *
sum, then base + that), elementwise on float32 arrays (one IEEE rounding per operation, no
fused multiply-add), so the expected ranks are bit-exact.

The PTX comes from kernels/graphs/gen_ptx.py (NVRTC, the suite's options). Like
kernels/reference.py this script bootstraps numpy (.tools/ref) when it is not importable.
"""

from __future__ import annotations

import argparse
import filecmp
import io
import shutil
import sys
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

sys.dont_write_bytecode = True   # keep scripts/ free of __pycache__
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "scripts"))
import _tools  # noqa: E402

_tools.require_numpy()
import numpy as np  # noqa: E402

f32 = np.float32
INF = 0x3FFFFFFF

SCALE = 14
N = 1 << SCALE                 # 16384 vertices
EDGE_FACTOR = 11               # R-MAT samples per vertex (before dropping self-loops, duplicates)
RMAT = (0.57, 0.19, 0.19)      # a, b, c (d = 0.05)
BLOCK = 256
BFS_LEVEL = 2                  # graph_bfs expands the frontier at this distance from the source
SSSP_ROUNDS_DONE = 3           # graph_sssp is round SSSP_ROUNDS_DONE + 1
COLOR_STEP = 2                 # graph_color runs step COLOR_STEP (colours 0..COLOR_STEP-1 done)
PR_ITERS_DONE = 2              # graph_pagerank is iteration PR_ITERS_DONE (0-based)
DAMPING = 0.85
MAX_WEIGHT = 63                # edge weights 1..63


# ----------------------------------------------------------------------------------------------
# Launch description (as in kernels/reference.py)
# ----------------------------------------------------------------------------------------------


@dataclass
class Buf:
    """A device buffer filled from data/<dir>/<file>.npy."""
    path: str           # relative to data/, without .npy: "graph/row_ptr", "graph_bfs/mask"
    array: "np.ndarray"


@dataclass
class Zeros:
    dtype: str
    length: int


@dataclass
class F32:
    """A float scalar argument, exactly representable in float32 (written as a TOML float)."""
    value: float


@dataclass
class Spec:
    name: str
    ptx: str
    args: list
    expected: dict[int, "np.ndarray"]
    description: str
    grid: tuple[int, int, int] = (N // BLOCK, 1, 1)
    block: tuple[int, int, int] = (BLOCK, 1, 1)
    extra: dict = field(default_factory=dict)


DTYPES = {"i32": np.int32, "u32": np.uint32, "f32": np.float32}


def i32(a) -> "np.ndarray":
    a = np.asarray(a)
    assert a.size == 0 or (a.min() >= -(1 << 31) and a.max() < (1 << 31))
    return a.astype(np.int32)


# ----------------------------------------------------------------------------------------------
# The graph
# ----------------------------------------------------------------------------------------------


@dataclass
class Graph:
    n: int
    src: "np.ndarray"        # edges sorted by (src, dst)
    dst: "np.ndarray"
    weight: "np.ndarray"     # per edge, in (src, dst) order
    row_ptr: "np.ndarray"    # out-CSR
    col_idx: "np.ndarray"
    in_row_ptr: "np.ndarray"  # in-CSR (transposed): row v holds the u of every edge u -> v
    in_col_idx: "np.ndarray"
    in_weight: "np.ndarray"
    sym_row_ptr: "np.ndarray"  # undirected (both directions, deduplicated)
    sym_col_idx: "np.ndarray"
    out_deg: "np.ndarray"
    in_deg: "np.ndarray"
    sym_deg: "np.ndarray"


def csr_from_sorted(n: int, rows: "np.ndarray", cols: "np.ndarray"):
    deg = np.bincount(rows, minlength=n)
    row_ptr = np.zeros(n + 1, dtype=np.int64)
    row_ptr[1:] = np.cumsum(deg)
    return row_ptr, cols.copy(), deg


def rmat_graph(rng: "np.random.Generator") -> Graph:
    n, m0 = N, EDGE_FACTOR * N
    a, b, c = RMAT
    u = np.zeros(m0, dtype=np.int64)
    v = np.zeros(m0, dtype=np.int64)
    for bit in range(SCALE):               # one quadrant choice per bit of the ids
        r = rng.random(m0)
        u |= (r >= a + b).astype(np.int64) << bit
        v |= (((r >= a) & (r < a + b)) | (r >= a + b + c)).astype(np.int64) << bit
    perm = rng.permutation(n)              # spread the hubs over the ids (Graph500)
    u, v = perm[u], perm[v]
    keep = u != v
    key = np.unique(u[keep] * n + v[keep])  # sorted by (u, v), duplicates dropped
    src, dst = key // n, key % n
    weight = rng.integers(1, MAX_WEIGHT + 1, len(src))
    row_ptr, col_idx, out_deg = csr_from_sorted(n, src, dst)
    order = np.lexsort((src, dst))         # by (dst, src)
    in_row_ptr, in_col_idx, in_deg = csr_from_sorted(n, dst[order], src[order])
    in_weight = weight[order]
    skey = np.unique(np.concatenate([src * n + dst, dst * n + src]))
    sym_row_ptr, sym_col_idx, sym_deg = csr_from_sorted(n, skey // n, skey % n)
    return Graph(n, src, dst, weight, row_ptr, col_idx, in_row_ptr, in_col_idx, in_weight,
                 sym_row_ptr, sym_col_idx, out_deg, in_deg, sym_deg)


def bfs_source(g: Graph) -> int:
    """Vertex 0 if it has an out-edge, else the lowest-numbered vertex that has one."""
    return int(np.flatnonzero(g.out_deg > 0)[0])


# ----------------------------------------------------------------------------------------------
# The four launches
# ----------------------------------------------------------------------------------------------


def edges_of(row_ptr, col_idx, vertices) -> "np.ndarray":
    if len(vertices) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate([col_idx[row_ptr[x]:row_ptr[x + 1]] for x in vertices])


def graph_bfs(g: Graph, source: int) -> Spec:
    n = g.n
    # Host BFS (Rodinia's loop: Kernel expands, Kernel2 updates mask/visited) up to BFS_LEVEL.
    cost = np.full(n, -1, dtype=np.int64)
    cost[source] = 0
    frontier = np.array([source])
    sizes = [1]
    for level in range(BFS_LEVEL):
        nbrs = edges_of(g.row_ptr, g.col_idx, frontier)
        new = np.unique(nbrs[cost[nbrs] == -1])
        cost[new] = level + 1
        frontier = new
        sizes.append(len(new))
    assert len(frontier) > 0
    visited = (cost != -1).astype(np.int64)
    mask = np.zeros(n, dtype=np.int64)
    mask[frontier] = 1
    # The launch: for each frontier vertex (in id order), for each out-edge, if the target is
    # not visited: cost = level + 1 (CAS from -1), updating = 1. mask is cleared.
    cost_after = cost.copy()
    updating = np.zeros(n, dtype=np.int64)
    for tid in range(n):
        if mask[tid]:
            for i in range(g.row_ptr[tid], g.row_ptr[tid + 1]):
                nid = g.col_idx[i]
                if not visited[nid]:
                    if cost_after[nid] == -1:
                        cost_after[nid] = cost[tid] + 1
                    updating[nid] = 1
    fr_deg = g.out_deg[frontier]
    reached = int(updating.sum())
    return Spec(
        name="graph_bfs", ptx="ptx/graph_bfs.ptx",
        args=[Buf("graph/row_ptr", i32(g.row_ptr)), Buf("graph/col_idx", i32(g.col_idx)),
              Buf("graph_bfs/mask", i32(mask)), Zeros("i32", n),
              Buf("graph_bfs/visited", i32(visited)), Buf("graph_bfs/cost", i32(cost)), n],
        expected={2: i32(np.zeros(n)), 3: i32(updating), 5: i32(cost_after)},
        description=f"one level of Rodinia BFS (Kernel) on a {n}-vertex R-MAT graph "
                    f"({len(g.src)} edges, out-degree up to {int(g.out_deg.max())}): source "
                    f"{source}, level {BFS_LEVEL} frontier of {len(frontier)} vertices "
                    f"({len(frontier) / n:.1%} of the threads; out-degree up to "
                    f"{int(fr_deg.max())}), {reached} reached; 64 CTAs",
        extra={"frontier_sizes": sizes, "frontier": len(frontier), "reached": reached,
               "frontier_edges": int(fr_deg.sum()), "frontier_max_deg": int(fr_deg.max())},
    )


def sssp_round(g: Graph, dist_in: "np.ndarray") -> "np.ndarray":
    """One pull round, exactly as graph_sssp: per vertex, its in-edges in CSR order."""
    n = g.n
    du = dist_in[g.in_col_idx]
    cand = np.where(du != INF, du + g.in_weight, INF)   # unreached in-neighbours contribute nothing
    best = dist_in.copy()
    has = g.in_deg > 0
    mins = np.minimum.reduceat(cand, g.in_row_ptr[:-1][has]) if has.any() else np.zeros(0)
    best[has] = np.minimum(best[has], mins)
    assert best.shape == (n,)
    return best


def sssp_round_loop(g: Graph, dist_in: "np.ndarray") -> "np.ndarray":
    """The same round written as the kernel's loop (a cross-check of sssp_round)."""
    out = dist_in.copy()
    rp, ci, w, dist = (x.tolist() for x in (g.in_row_ptr, g.in_col_idx, g.in_weight, dist_in))
    for v in range(g.n):
        best = dist[v]
        for e in range(rp[v], rp[v + 1]):
            d = dist[ci[e]]
            if d != INF:
                nd = d + w[e]
                if nd < best:
                    best = nd
        out[v] = best
    return out


def graph_sssp(g: Graph, source: int) -> Spec:
    n = g.n
    dist = np.full(n, INF, dtype=np.int64)
    dist[source] = 0
    for _ in range(SSSP_ROUNDS_DONE):
        dist = sssp_round(g, dist)
    dist_in = dist
    dist_out = sssp_round_loop(g, dist_in)
    assert np.array_equal(dist_out, sssp_round(g, dist_in))
    updated = (dist_out < dist_in).astype(np.int64)
    reached = int((dist_in != INF).sum())
    return Spec(
        name="graph_sssp", ptx="ptx/graph_sssp.ptx",
        args=[Buf("graph/in_row_ptr", i32(g.in_row_ptr)), Buf("graph/in_col_idx", i32(g.in_col_idx)),
              Buf("graph/in_weight", i32(g.in_weight)), Buf("graph_sssp/dist_in", i32(dist_in)),
              Zeros("i32", n), Zeros("i32", n), n],
        expected={4: i32(dist_out), 5: i32(updated)},
        description=f"Bellman-Ford round {SSSP_ROUNDS_DONE + 1} (pull over in-edges, weights "
                    f"1..{MAX_WEIGHT}, no atomics) on the R-MAT graph: {reached} of {n} vertices "
                    f"reached before, {int(updated.sum())} improved; in-degree up to "
                    f"{int(g.in_deg.max())}; 64 CTAs",
        extra={"reached_before": reached, "improved": int(updated.sum()),
               "reached_after": int((dist_out != INF).sum())},
    )


def color_step(g: Graph, value: "np.ndarray", color_in: "np.ndarray", color: int) -> "np.ndarray":
    """One step exactly as graph_color, one vertex at a time."""
    out = color_in.copy()
    rp, ci = g.sym_row_ptr.tolist(), g.sym_col_idx.tolist()
    value, color_in = value.tolist(), color_in.tolist()
    for tid in range(g.n):
        if color_in[tid] == -1:
            maximum = -1
            for e in range(rp[tid], rp[tid + 1]):
                u = ci[e]
                if color_in[u] == -1 and value[u] > maximum:
                    maximum = value[u]
            if value[tid] > maximum:
                out[tid] = color
    return out


def graph_color(g: Graph, rng: "np.random.Generator") -> Spec:
    n = g.n
    value = rng.permutation(n).astype(np.int64)     # distinct random values
    colors = np.full(n, -1, dtype=np.int64)
    for step in range(COLOR_STEP):
        colors = color_step(g, value, colors, step)
    color_in = colors
    color_out = color_step(g, value, color_in, COLOR_STEP)
    # a valid partial colouring: no edge joins two vertices of the same colour
    cs, cd = color_out[g.src], color_out[g.dst]
    assert not np.any((cs != -1) & (cs == cd))
    uncoloured = int((color_in == -1).sum())
    newly = int(((color_out == COLOR_STEP)).sum())
    return Spec(
        name="graph_color", ptx="ptx/graph_color.ptx",
        args=[Buf("graph/sym_row_ptr", i32(g.sym_row_ptr)), Buf("graph/sym_col_idx", i32(g.sym_col_idx)),
              Buf("graph_color/node_value", i32(value)), Buf("graph_color/color_in", i32(color_in)),
              Zeros("i32", n), COLOR_STEP, n],
        expected={4: i32(color_out)},
        description=f"Jones-Plassmann colouring step {COLOR_STEP} (Pannotia color_max, color1+color2 "
                    f"fused, out of place) on the symmetrised R-MAT graph ({len(g.sym_col_idx)} "
                    f"directed entries, degree up to {int(g.sym_deg.max())}): {uncoloured} of {n} "
                    f"vertices uncoloured before, {newly} coloured now; 64 CTAs",
        extra={"uncoloured_before": uncoloured, "coloured_now": newly},
    )


TOPK = 4


def graph_topk(g: Graph, rng: "np.random.Generator") -> Spec:
    n = g.n
    prio = rng.permutation(n).astype(np.int64)     # distinct priorities
    rp, ci, pr = g.in_row_ptr.tolist(), g.in_col_idx.tolist(), prio.tolist()
    count = [0] * n
    for v in range(n):
        c = 0
        for e in range(rp[v], rp[v + 1]):
            if pr[ci[e]] > pr[v]:
                c += 1
                if c == TOPK:
                    break
        count[v] = c
    capped = sum(1 for c in count if c == TOPK)
    return Spec(
        name="graph_topk", ptx="ptx/graph_topk.ptx",
        args=[Buf("graph/in_row_ptr", i32(g.in_row_ptr)), Buf("graph/in_col_idx", i32(g.in_col_idx)),
              Buf("graph_topk/priority", i32(prio)), Zeros("i32", n), n],
        expected={3: i32(count)},
        description=f"capped scan: each vertex counts its higher-priority in-neighbours and stops at "
                    f"{TOPK} (a break inside a conditional in the loop); {capped} of {n} vertices "
                    f"reach the cap; in-degree up to {int(g.in_deg.max())}; 64 CTAs",
        extra={"capped": capped},
    )


def pagerank_iter(g: Graph, rank: "np.ndarray", base: "np.float32", damping: "np.float32"):
    """One pull iteration in float32, in the kernel's operation order."""
    n = g.n
    u = g.in_col_idx
    contrib = rank[u] / g.out_deg[u].astype(np.float32)      # div.rn.f32 per in-edge
    assert contrib.dtype == np.float32
    s = np.zeros(n, dtype=np.float32)
    start = g.in_row_ptr[:-1]
    for k in range(int(g.in_deg.max())):                     # sum += contrib, in CSR order
        live = g.in_deg > k
        s[live] = s[live] + contrib[start[live] + k]
    t = damping * s                                          # mul.rn.f32
    out = base + t                                           # add.rn.f32
    assert out.dtype == np.float32
    return out


def graph_pagerank(g: Graph) -> Spec:
    n = g.n
    damping = f32(DAMPING)
    base = f32((1.0 - DAMPING) / n)
    rank = np.full(n, f32(1.0) / f32(n), dtype=np.float32)
    for _ in range(PR_ITERS_DONE):
        rank = pagerank_iter(g, rank, base, damping)
    rank_out = pagerank_iter(g, rank, base, damping)
    # spot check against a scalar re-implementation
    for v in [0, 1, int(np.argmax(g.in_deg)), n - 1]:
        acc = f32(0.0)
        for e in range(g.in_row_ptr[v], g.in_row_ptr[v + 1]):
            uu = g.in_col_idx[e]
            acc = f32(acc + f32(rank[uu] / f32(g.out_deg[uu])))
        assert f32(base + f32(damping * acc)) == rank_out[v], v
    return Spec(
        name="graph_pagerank", ptx="ptx/graph_pagerank.ptx",
        args=[Buf("graph/in_row_ptr", i32(g.in_row_ptr)), Buf("graph/in_col_idx", i32(g.in_col_idx)),
              Buf("graph/out_degree", i32(g.out_deg)), Buf("graph_pagerank/rank_in", rank),
              Zeros("f32", n), F32(float(base)), F32(float(damping)), n],
        expected={4: rank_out},
        description=f"PageRank iteration {PR_ITERS_DONE} (pull over in-edges, float32, bit-exact "
                    f"with --fmad=false) on the R-MAT graph: in-degree up to {int(g.in_deg.max())}, "
                    f"{int((g.in_deg == 0).sum())} vertices without in-edges; 64 CTAs",
    )


# ----------------------------------------------------------------------------------------------
# Output
# ----------------------------------------------------------------------------------------------


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _arg_toml(arg) -> str:
    if isinstance(arg, Buf):
        return _toml_str(f"@data/{arg.path}.npy")
    if isinstance(arg, Zeros):
        return _toml_str(f"zeros:{arg.dtype}:{arg.length}")
    if isinstance(arg, F32):
        v = float(arg.value)
        assert float(np.float32(v)) == v, f"float arg {v} is not exact in float32"
        return repr(v)
    if isinstance(arg, (int, np.integer)):
        return str(int(arg))
    raise TypeError(f"unsupported argument {arg!r}")


def _save_npy(path: Path, array) -> None:
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buf.getvalue())


def graph_stats(g: Graph, source: int) -> list[str]:
    m = len(g.src)
    return [
        f"vertices {g.n}, directed edges {m} (from {EDGE_FACTOR * g.n} R-MAT samples, without "
        f"self-loops and duplicates)",
        f"out-degree: max {int(g.out_deg.max())}, mean {m / g.n:.2f}, median "
        f"{float(np.median(g.out_deg)):.0f}, zero {int((g.out_deg == 0).sum())}",
        f"in-degree:  max {int(g.in_deg.max())}, mean {m / g.n:.2f}, median "
        f"{float(np.median(g.in_deg)):.0f}, zero {int((g.in_deg == 0).sum())}",
        f"symmetrised: {len(g.sym_col_idx)} entries ({len(g.sym_col_idx) // 2} undirected edges), "
        f"degree max {int(g.sym_deg.max())}, mean {len(g.sym_col_idx) / g.n:.2f}, isolated "
        f"{int((g.sym_deg == 0).sum())}",
        f"BFS source {source}",
    ]


def build() -> tuple[Graph, int, list[Spec]]:
    rng = np.random.default_rng(zlib.crc32(b"graphs"))
    g = rmat_graph(rng)
    source = bfs_source(g)
    specs = [graph_bfs(g, source), graph_sssp(g, source), graph_color(g, rng), graph_pagerank(g),
             graph_topk(g, rng)]
    return g, source, specs


def write_all(g: Graph, source: int, specs: list[Spec], root: Path) -> None:
    data = root / "data"
    if data.exists():
        shutil.rmtree(data)
    lines = [
        "# Graph workloads (irregular, heavy-tailed degrees) for the divergence mechanisms, in the",
        "# format of kernels/manifest.toml (see kernels/README.md); run with",
        "#   reconverge suite --kernels kernels/graphs    /    reconverge compare --kernels kernels/graphs",
        "# GENERATED by kernels/graphs/gen.py -- edit that file and rerun it, do not edit here.",
        "#",
        "# Graph: " + "; ".join(graph_stats(g, source)) + ".",
        "# data/graph/ holds the CSR arrays the launches share; data/NAME/ each launch's own state.",
        "",
    ]
    written: dict[str, "np.ndarray"] = {}
    for spec in specs:
        for arg in spec.args:
            if isinstance(arg, Buf):
                if arg.path in written:
                    assert np.array_equal(written[arg.path], arg.array), arg.path
                    continue
                _save_npy(data / f"{arg.path}.npy", arg.array)
                written[arg.path] = arg.array
        expected = {}
        for idx, arr in sorted(spec.expected.items()):
            arg = spec.args[idx]
            want = DTYPES[arg.dtype] if isinstance(arg, Zeros) else arg.array.dtype
            length = arg.length if isinstance(arg, Zeros) else arg.array.size
            assert arr.dtype == want and arr.size == length, (spec.name, idx)
            rel = f"data/{spec.name}/expected_{idx}.npy"
            _save_npy(root / rel, arr)
            expected[idx] = rel
        lines.append("[[kernel]]")
        lines.append(f"name = {_toml_str(spec.name)}")
        lines.append(f"ptx = {_toml_str(spec.ptx)}")
        lines.append(f"grid = [{', '.join(map(str, spec.grid))}]")
        lines.append(f"block = [{', '.join(map(str, spec.block))}]")
        lines.append(f"args = [{', '.join(_arg_toml(a) for a in spec.args)}]")
        exp = ", ".join(f"{_toml_str(str(k))} = {_toml_str(v)}" for k, v in expected.items())
        lines.append(f"expected = {{ {exp} }}")
        lines.append("dynamic_shared = 0")
        lines.append(f"description = {_toml_str(spec.description)}")
        lines.append("")
    (root / "manifest.toml").write_text("\n".join(lines))


def compare_trees(a: Path, b: Path) -> list[str]:
    diffs = []
    files_a = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    files_b = {p.relative_to(b) for p in (b / "data").rglob("*") if p.is_file()}
    files_b.add(Path("manifest.toml"))
    for rel in sorted(files_a | files_b):
        pa, pb = a / rel, b / rel
        if not pa.exists():
            diffs.append(f"stale: kernels/graphs/{rel}")
        elif not pb.exists():
            diffs.append(f"missing: kernels/graphs/{rel}")
        elif not filecmp.cmp(pa, pb, shallow=False):
            diffs.append(f"differs: kernels/graphs/{rel}")
    return diffs


def main() -> int:
    ap = argparse.ArgumentParser(description="graph workloads: inputs, expected outputs, manifest")
    ap.add_argument("--check", action="store_true",
                    help="regenerate into a temporary directory and compare with kernels/graphs")
    ap.add_argument("--stats", action="store_true", help="print the graph statistics")
    args = ap.parse_args()

    g, source, specs = build()
    if args.stats or not args.check:
        for line in graph_stats(g, source):
            print(line)
        for s in specs:
            if s.extra:
                print(f"{s.name}: {s.extra}")
        if args.stats:
            return 0
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            write_all(g, source, specs, Path(tmp))
            diffs = compare_trees(Path(tmp), HERE)
        for d in diffs:
            print(d)
        if diffs:
            print(f"gen --check: {len(diffs)} difference(s); run python3 kernels/graphs/gen.py")
            return 1
        print(f"gen --check: manifest and data of {len(specs)} launches up to date "
              f"(numpy {np.__version__})")
        return 0
    write_all(g, source, specs, HERE)
    files = sorted((HERE / "data").rglob("*.npy"))
    total = sum(p.stat().st_size for p in files)
    print(f"wrote kernels/graphs/manifest.toml ({len(specs)} launches) and {len(files)} .npy "
          f"files, {total} bytes (numpy {np.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
