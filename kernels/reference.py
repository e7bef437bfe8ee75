#!/usr/bin/env python3
"""Inputs and expected outputs of the kernel suite, from an independent sequential reference.

Usage:
    python3 kernels/reference.py           # write kernels/data/NAME/*.npy and kernels/manifest.toml
    python3 kernels/reference.py --check   # regenerate into a temporary directory and compare
                                           # byte for byte; exit 1 on any difference
    python3 kernels/reference.py --list    # print the kernels and their launch

Every kernel's inputs come from a numpy Generator seeded with a fixed per-kernel seed
(crc32 of the kernel name), so the data are deterministic. The expected outputs are computed
by a plain re-implementation of the kernel's semantics, one thread (or one output element)
at a time in program order -- never by simulating warps. Barrier-separated phases are run
phase by phase over all threads; atomics are plain read-modify-writes. Where a kernel is
written to be independent of the thread interleaving (integer atomics, snapshots), that
sequential order gives the unique result.

Float kernels: the suite runs their `--fmad=false` PTX (ptx/sm_80-nofma), where every
operation is a separately rounded add.rn/sub.rn/mul.rn/div.rn; the reference does the same
float32 operations in the same order with numpy float32 scalars (one IEEE rounding per op),
so the expected buffers are bit-exact.

numpy is pinned in scripts/requirements-ref.txt; when it is not importable this script
creates .tools/ref (a git-ignored virtual environment), installs the pin and re-executes
itself there.

The manifest (kernels/manifest.toml) is generated from the KERNELS table below; edit this
file, not the manifest.
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

HERE = Path(__file__).resolve().parent
sys.dont_write_bytecode = True   # keep scripts/ free of __pycache__
sys.path.insert(0, str(HERE.parent / "scripts"))
import _tools  # noqa: E402

_tools.require_numpy()
import numpy as np  # noqa: E402

f32 = np.float32
I32_MASK = 0xFFFFFFFF

# ----------------------------------------------------------------------------------------------
# Launch description
# ----------------------------------------------------------------------------------------------


@dataclass
class Buf:
    """A device buffer filled from data/NAME/<file>.npy."""
    file: str
    array: "np.ndarray"


@dataclass
class Zeros:
    dtype: str          # i8 u8 i16 u16 i32 u32 i64 u64 f32 f64
    length: int


@dataclass
class F32:
    """A float scalar argument (written as a TOML float)."""
    value: float


@dataclass
class Spec:
    name: str
    ptx: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: list
    expected: dict[int, "np.ndarray"]
    description: str
    dynamic_shared: int = 0
    outcome_by_mechanism: dict[str, str] = field(default_factory=dict)
    warp_sizes: list[int] | None = None     # restriction on the simulated warp size, if any
    # module variables (__device__/__constant__) set before the launch: name -> Buf | Zeros | int
    globals: dict = field(default_factory=dict)
    # module variable -> its expected final contents
    expected_globals: dict = field(default_factory=dict)
    # a launch that fills the GPU (exempt from the small-launch limit of the other kernels)
    large: bool = False


DTYPES = {"i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32,
          "u32": np.uint32, "i64": np.int64, "u64": np.uint64, "f32": np.float32,
          "f64": np.float64}

KERNELS = []


def kernel(fn):
    KERNELS.append(fn)
    return fn


def rng_for(name: str) -> "np.random.Generator":
    return np.random.default_rng(zlib.crc32(name.encode()))


def i32(values) -> "np.ndarray":
    return np.asarray(values, dtype=np.int64).astype(np.int32)


def wrap32(x: int) -> int:
    """Two's-complement wrap of a Python int to int32."""
    x &= I32_MASK
    return x - (1 << 32) if x & 0x80000000 else x


def csr(n: int, adj: list[list[int]]) -> tuple["np.ndarray", "np.ndarray"]:
    row_ptr = [0]
    col = []
    for u in range(n):
        col.extend(adj[u])
        row_ptr.append(len(col))
    return i32(row_ptr), i32(col)


# ----------------------------------------------------------------------------------------------
# Seed kernels
# ----------------------------------------------------------------------------------------------


@kernel
def kern():
    n = 32
    a = [0] * 38
    b = [0] * 38
    c = [0] * 38
    for t in range(n):                     # each thread's whole body, in program order
        if t < 5:
            a[t] = 1
            b[t] = 2
            c[t] = 3
        else:
            a[t + 6] = 5
            b[t + 6] = 7
            c[t + 6] = 9
        a[6] = 99
    return Spec(
        name="kern", ptx="ptx/sm_80/kern.ptx", grid=(1, 1, 1), block=(32, 1, 1),
        args=[Zeros("i32", 38), Zeros("i32", 38), Zeros("i32", 38)],
        expected={0: i32(a), 1: i32(b), 2: i32(c)},
        description="seed 001 lecture `kern`: if (t < 5) / else, reconvergence at a[6] = 99 "
                    "(benign same-value race on a[6] by design)")


@kernel
def capri():
    rng = rng_for("capri")
    L, T = 32, 64
    in1 = rng.integers(-1000, 1000, L).astype(np.int32)
    in2 = rng.integers(-1000, 1000, L).astype(np.int32)
    out1 = np.zeros(T * L, np.int64)
    out2 = np.zeros(T * L, np.int64)
    for tid in range(T):
        for i in range(L):
            if tid < 16 or tid > 47:
                out1[tid * L + i] = int(in1[i]) + int(in2[i])
            else:
                out1[tid * L + i] = int(in1[i]) * 3 - int(in2[L - 1 - i])
        for i in range(L):
            if tid % 2 == 0:
                out2[tid * L + i] = int(in1[i]) + int(in2[i])
            else:
                out2[tid * L + i] = (int(in1[L - 1 - i]) ^ int(in2[i])) - i
    return Spec(
        name="capri", ptx="ptx/sm_80/capri.ptx", grid=(1, 1, 1), block=(64, 1, 1),
        args=[Buf("in1", in1), Buf("in2", in2), Zeros("i32", T * L), Zeros("i32", T * L)],
        expected={2: i32(out1), 3: i32(out2)},
        description="seed 002 Fig. 9 CAPRI test case: compactable loop (tid < 16 || tid > 47) "
                    "then non-compactable loop (even/odd tid), per-thread outputs")


@kernel
def short_circuit():
    T = 32
    trace = [0] * (T * 8)
    for t in range(T):
        tr = t * 8
        trace[tr + 0] = 0xA
        a = (t & 3) != 1
        ok = False
        if a:
            trace[tr + 1] = 0xB
            ok = (t & 3) == 0
        if ok:
            trace[tr + 2] = 0xC
        else:
            trace[tr + 3] = 0xD
        trace[tr + 4] = 0xE
    return Spec(
        name="short_circuit", ptx="ptx/sm_80/short_circuit.ptx", grid=(1, 1, 1),
        block=(32, 1, 1), args=[Zeros("i32", T * 8)], expected={0: i32(trace)},
        description="seed 003 Figure 1 `if (A && B) C; else D; E;` with per-block trace slots "
                    "(t%4==0: ABCE, t%4==1: ADE, else ABDE)")


@kernel
def fir():
    rng = rng_for("fir")
    N, flen = 128, 16
    samples = rng.uniform(-1.0, 1.0, N + flen - 1).astype(np.float32)
    coeffs = rng.uniform(-1.0, 1.0, flen).astype(np.float32)
    results = np.zeros(N, np.float32)
    for idx in range(N):
        r = f32(0.0)
        for i in range(flen):
            r = f32(r + f32(coeffs[i] * samples[idx + i]))
        results[idx] = r
    return Spec(
        name="fir", ptx="ptx/sm_80-nofma/fir.ptx", grid=(2, 1, 1), block=(64, 1, 1),
        args=[Buf("samples", samples), Buf("coeffs", coeffs), flen, Zeros("f32", N)],
        expected={3: results},
        description="seed 004 Figure 1 FIR filter (uniform loop; scalarization example)")


# ----------------------------------------------------------------------------------------------
# Rodinia/Parboil-style workloads
# ----------------------------------------------------------------------------------------------


@kernel
def bfs():
    rng = rng_for("bfs")
    n, reach = 190, 178        # nodes reach.. n-1 form a separate, unreachable component
    adj: list[list[int]] = []
    for u in range(n):
        lo, hi = (0, reach) if u < reach else (reach, n)
        deg = int(rng.integers(0, 4)) if u < reach else int(rng.integers(0, 3))
        nb = rng.choice(np.arange(lo, hi), size=min(deg, hi - lo), replace=False)
        adj.append(sorted(int(v) for v in nb if v != u))
    # a spine so that most of the big component is reachable over several levels
    for u in range(0, reach - 1, 3):
        if u + 3 < reach and (u + 3) not in adj[u]:
            adj[u].append(u + 3)
    row_ptr, col_idx = csr(n, adj)
    source = 0

    mask = [0] * n
    visited = [0] * n
    updating = [0] * n
    cost = [-1] * n
    mask[source] = visited[source] = 1
    cost[source] = 0
    level = 0
    while True:
        changed = 0
        for tid in range(n):                      # kernel 1 (expand)
            if mask[tid]:
                mask[tid] = 0
                for e in range(row_ptr[tid], row_ptr[tid + 1]):
                    nid = int(col_idx[e])
                    if not visited[nid]:
                        if cost[nid] == -1:
                            cost[nid] = cost[tid] + 1
                        updating[nid] = 1
        for tid in range(n):                      # kernel 2 (update)
            if updating[tid]:
                mask[tid] = visited[tid] = 1
                updating[tid] = 0
                changed = 1
        level += 1
        if not changed:
            break
    return Spec(
        name="bfs", ptx="ptx/sm_80/bfs.ptx", grid=(1, 1, 1), block=(200, 1, 1),
        args=[Buf("row_ptr", row_ptr), Buf("col_idx", col_idx), n, source,
              Zeros("i32", n), Zeros("i32", 1)],
        expected={4: i32(cost), 5: i32([level])},
        description=f"Rodinia-style CSR BFS, all {level} levels in one CTA "
                    "(frontier/updating masks, shared changed flag, barriers)")


@kernel
def bfs_large():
    rng = rng_for("bfs_large")
    n, block = 24576, 256
    # Heavy-tailed out-degrees: most nodes 1-6 edges, a few hubs up to 128; uniform targets.
    deg = np.clip(np.floor(rng.pareto(1.5, n) * 2.0).astype(np.int64) + 1, 1, 128)
    row_ptr = np.zeros(n + 1, dtype=np.int64)
    row_ptr[1:] = np.cumsum(deg)
    col_idx = rng.integers(0, n, int(row_ptr[-1]))
    # Host BFS from node 0; keep the level with the largest frontier.
    cost = np.full(n, -1, dtype=np.int64)
    cost[0] = 0
    frontier = np.array([0])
    levels = []
    while len(frontier):
        levels.append((frontier.copy(), cost.copy()))
        nbrs = np.concatenate([col_idx[row_ptr[u]:row_ptr[u + 1]] for u in frontier])
        new = np.unique(nbrs[cost[nbrs] == -1])
        cost[new] = cost[frontier[0]] + 1
        frontier = new
    frontier, cost_before = max(levels, key=lambda x: len(x[0]))
    level = int(cost_before[frontier[0]])
    visited = (cost_before != -1).astype(np.int64)
    mask = np.zeros(n, dtype=np.int64)
    mask[frontier] = 1
    # The expansion (kernel 1 of Rodinia's BFS).
    cost_after = cost_before.copy()
    updating = np.zeros(n, dtype=np.int64)
    nbrs = np.concatenate([col_idx[row_ptr[u]:row_ptr[u + 1]] for u in frontier])
    reached = np.unique(nbrs[visited[nbrs] == 0])
    cost_after[reached] = level + 1
    updating[reached] = 1
    return Spec(
        name="bfs_large", ptx="ptx/sm_80/bfs_large.ptx", grid=(n // block, 1, 1), block=(block, 1, 1),
        args=[Buf("row_ptr", i32(row_ptr)), Buf("col_idx", i32(col_idx)), Buf("mask", i32(mask)),
              Zeros("i32", n), Buf("visited", i32(visited)), Buf("cost", i32(cost_before)), n],
        expected={2: i32(np.zeros(n)), 3: i32(updating), 5: i32(cost_after)},
        large=True,
        description=f"one level of Rodinia BFS on a {n}-node graph with heavy-tailed degrees "
                    f"({int(row_ptr[-1])} edges, up to {int(deg.max())} per node): level {level}, "
                    f"{len(frontier)} frontier nodes, {len(reached)} reached; {n // block} CTAs")


@kernel
def nw():
    rng = rng_for("nw")
    L, B, penalty = 32, 16, 10
    cols = L + 1
    reference = np.zeros((cols, cols), np.int32)
    reference[1:, 1:] = rng.integers(-4, 6, (L, L))
    score = np.zeros((cols, cols), np.int64)
    score[0, :] = -np.arange(cols) * penalty
    score[:, 0] = -np.arange(cols) * penalty
    score_in = score.astype(np.int32)
    for r in range(1, cols):
        for c in range(1, cols):
            score[r, c] = max(score[r - 1, c - 1] + reference[r, c],
                              score[r, c - 1] - penalty,
                              score[r - 1, c] - penalty)
    return Spec(
        name="nw", ptx="ptx/sm_80/nw.ptx", grid=(1, 1, 1), block=(B, 1, 1),
        args=[Buf("reference", reference.reshape(-1)), Buf("score", score_in.reshape(-1)),
              cols, penalty],
        expected={1: i32(score.reshape(-1))},
        description="Needleman-Wunsch, 16x16 shared-memory tiles in wavefront order, "
                    "triangular tid <= m diagonal loops with barriers (one CTA)")


def _stencil_delta(kind, t, p, N, S, E, W, step, rx, ry, rz, amb):
    two = f32(2.0)
    if kind == "nw":
        s = p + (E - t) * rx
        s = s + (S - t) * ry
    elif kind == "ne":
        s = p + (W - t) * rx
        s = s + (S - t) * ry
    elif kind == "se":
        s = p + (W - t) * rx
        s = s + (N - t) * ry
    elif kind == "sw":
        s = p + (E - t) * rx
        s = s + (N - t) * ry
    elif kind == "n":
        s = p + ((E + W) - two * t) * rx
        s = s + (S - t) * ry
    elif kind == "e":
        s = p + ((S + N) - two * t) * ry
        s = s + (W - t) * rx
    elif kind == "s":
        s = p + ((E + W) - two * t) * rx
        s = s + (N - t) * ry
    elif kind == "w":
        s = p + ((S + N) - two * t) * ry
        s = s + (E - t) * rx
    else:
        s = p + ((S + N) - two * t) * ry
        s = s + ((E + W) - two * t) * rx
    s = s + (amb - t) * rz
    return step * s


@kernel
def stencil():
    rng = rng_for("stencil")
    cols, rows = 30, 22
    temp = rng.uniform(320.0, 340.0, rows * cols).astype(np.float32)
    power = rng.uniform(0.0, 0.5, rows * cols).astype(np.float32)
    step, rx, ry, rz, amb = f32(0.5), f32(0.25), f32(0.125), f32(0.0625), f32(80.0)
    out = np.zeros(rows * cols, np.float32)
    for r in range(rows):
        for c in range(cols):
            i = r * cols + c
            # numpy float32 scalars: every + - * below is one float32 operation, rounded once,
            # in the order of the CUDA expression (left-to-right sums).
            t, p = temp[i], power[i]
            get = lambda j: temp[j] if 0 <= j < rows * cols else None  # noqa: E731
            N, S = get(i - cols), get(i + cols)
            W, E = get(i - 1), get(i + 1)
            if r == 0 and c == 0:
                kind = "nw"
            elif r == 0 and c == cols - 1:
                kind = "ne"
            elif r == rows - 1 and c == cols - 1:
                kind = "se"
            elif r == rows - 1 and c == 0:
                kind = "sw"
            elif r == 0:
                kind = "n"
            elif c == cols - 1:
                kind = "e"
            elif r == rows - 1:
                kind = "s"
            elif c == 0:
                kind = "w"
            else:
                kind = "interior"
            delta = _stencil_delta(kind, t, p, N, S, E, W, step, rx, ry, rz, amb)
            out[i] = f32(t + delta)
    return Spec(
        name="stencil", ptx="ptx/sm_80-nofma/stencil.ptx", grid=(2, 2, 1), block=(16, 12, 1),
        args=[Buf("temp", temp), Buf("power", power), Zeros("f32", rows * cols), cols, rows,
              F32(float(step)), F32(float(rx)), F32(float(ry)), F32(float(rz)), F32(float(amb))],
        expected={2: out},
        description="hotspot-like 5-point stencil step: 9-way corner/edge/interior branch chain, "
                    "out-of-grid threads return early")


@kernel
def mandelbrot():
    width, height, max_iter = 38, 23, 64
    x0, y0, dx, dy = f32(-2.0), f32(-1.125), f32(0.0625), f32(0.09375)
    iters = np.zeros(width * height, np.int32)
    four = f32(4.0)
    two = f32(2.0)
    for py in range(height):
        for px in range(width):
            cx = x0 + f32(px) * dx
            cy = y0 + f32(py) * dy
            zr = zi = f32(0.0)
            n = 0
            while n < max_iter and (zr * zr + zi * zi) <= four:
                t = (zr * zr - zi * zi) + cx
                zi = (two * zr) * zi + cy
                zr = t
                n += 1
            iters[py * width + px] = n
    return Spec(
        name="mandelbrot", ptx="ptx/sm_80-nofma/mandelbrot.ptx", grid=(2, 2, 1),
        block=(20, 12, 1),
        args=[Zeros("i32", width * height), width, height, F32(float(x0)), F32(float(y0)),
              F32(float(dx)), F32(float(dy)), max_iter],
        expected={0: iters},
        description="escape-time Mandelbrot: per-pixel data-dependent loop trip count "
                    "(1..64), 240-thread CTAs, out-of-image early return")


@kernel
def nested_loops():
    rng = rng_for("nested_loops")
    n, thresh = 190, 420
    data = rng.integers(0, 256, n).astype(np.int32)
    out = [0] * n
    for tid in range(n):
        limit = int(data[tid]) & 15
        acc = 0
        returned = False
        for i in range(8):
            if (tid + i) % 3 == 0:
                continue
            for j in range(limit + i):
                v = int(data[(tid * 7 + i * 13 + j) % n])
                if v % 11 == 0:
                    break
                if v & 1:
                    continue
                acc += v >> 3
                if acc > thresh:
                    out[tid] = -acc
                    returned = True
                    break
            if returned:
                break
            acc += i
        if not returned:
            out[tid] = acc
    return Spec(
        name="nested_loops", ptx="ptx/sm_80/nested_loops.ptx", grid=(2, 1, 1),
        block=(100, 1, 1),
        args=[Buf("data", data), n, thresh, Zeros("i32", n)],
        expected={3: i32(out)},
        description="nested loops: tid-dependent continue, data-dependent trip count, break "
                    "and continue, early return from inside both loops")


@kernel
def recursion():
    rng = rng_for("recursion")
    n = 48
    fib_n = rng.integers(0, 10, n).astype(np.int32)
    keys = rng.permutation(1000)[:n]
    left = [-1] * n
    right = [-1] * n
    for node in range(1, n):                      # BST insertion, node 0 is the root
        cur = 0
        while True:
            side = left if keys[node] < keys[cur] else right
            if side[cur] < 0:
                side[cur] = node
                break
            cur = side[cur]

    def fib(k):
        return k if k < 2 else fib(k - 1) + fib(k - 2)

    def depth(node):
        if node < 0:
            return 0
        return 1 + max(depth(left[node]), depth(right[node]))

    return Spec(
        name="recursion", ptx="ptx/sm_80/recursion.ptx", grid=(1, 1, 1), block=(n, 1, 1),
        args=[Buf("fib_n", fib_n), Buf("left", i32(left)), Buf("right", i32(right)),
              Zeros("i32", n), Zeros("i32", n)],
        expected={3: i32([fib(int(k)) for k in fib_n]), 4: i32([depth(t) for t in range(n)])},
        description="recursive __noinline__ fib(n) (n = 0..9) and binary-tree height: "
                    "call/ret under divergence, data-dependent recursion depth")


@kernel
def warp_reduce():
    rng = rng_for("warp_reduce")
    N = 256
    vals = rng.integers(0, 1000, N).astype(np.int32)
    v = [int(x) for x in vals]
    stats = [sum(v), max(v), sum(1 for x in v if x & 1), sum(1 for x in v if x % 3 == 0),
             sum(1 for x in v if x % 3 == 0 and x & 4)]
    pairs = []
    for t in range(N):
        pairs.append(v[t ^ 1])
        pairs.append(v[(t & ~3) | ((t + 1) & 3)])
    return Spec(
        name="warp_reduce", ptx="ptx/sm_80/warp_reduce.ptx", grid=(2, 1, 1), block=(128, 1, 1),
        args=[Buf("in", vals), Zeros("i32", 2 * N), Zeros("i32", 5)],
        expected={1: i32(pairs), 2: i32(stats)},
        warp_sizes=[4, 8, 16, 32],
        # Without reconvergence, lanes split by the divergent branch never rejoin, so the full-mask
        # shuffles after it wait for lanes that cannot come: a SIMT deadlock. A path list sorted by
        # thread count runs the larger (smaller) side into the shuffles before the other side arrives.
        outcome_by_mechanism={"none": "deadlock", "sorted:majority": "deadlock",
                              "sorted:minority": "deadlock|completed"},
        description="warp intrinsics: shfl_down/shfl_xor reductions, ballot+popc, __activemask "
                    "warp-aggregated atomics in a divergent branch, lane exchanges")


@kernel
def warp_redux():
    rng = rng_for("warp_redux")
    N = 128
    vals = rng.integers(0, 1000, N).astype(np.int32)
    v = [int(x) for x in vals]
    stats = [sum(v), max(v), sum(x for x in v if x & 1)]
    hist = [sum(1 for x in v if (x & 7) == k) for k in range(8)]
    return Spec(
        name="warp_redux", ptx="ptx/sm_80/warp_redux.ptx", grid=(2, 1, 1), block=(64, 1, 1),
        args=[Buf("in", vals), Zeros("i32", 8), Zeros("i32", 3)],
        expected={1: i32(hist), 2: i32(stats)},
        warp_sizes=[4, 8, 16, 32],
        # As warp_reduce: the full-mask match/redux after a divergent branch never sees the split lanes.
        outcome_by_mechanism={"none": "deadlock", "sorted:majority": "deadlock"},
        description="sm_80 warp intrinsics: __reduce_add/max_sync (redux.sync), "
                    "__match_any_sync grouping, redux over __activemask in a divergent branch")


@kernel
def histogram():
    rng = rng_for("histogram")
    n, nbins = 3000, 64
    data = rng.integers(0, 256, n).astype(np.uint8)
    data[rng.random(n) < 0.1] = 0            # padding bytes the kernel skips
    bins = [0] * nbins
    for x in data:
        x = int(x)
        if x == 0:
            continue
        bins[x & (nbins - 1)] += 2 if x >= 192 else 1
    return Spec(
        name="histogram", ptx="ptx/sm_80/histogram.ptx", grid=(4, 1, 1), block=(100, 1, 1),
        args=[Buf("data", data), n, Zeros("u32", nbins)],
        expected={2: np.asarray(bins, np.uint32)},
        description="shared-memory histogram: __shared__ bins, shared and global atomicAdd, "
                    "grid-stride loop with data-dependent skip, barriers")


@kernel
def spinlock_safe():
    T = 2 * 48
    return Spec(
        name="spinlock_safe", ptx="ptx/sm_80/spinlock_safe.ptx", grid=(2, 1, 1),
        block=(48, 1, 1), args=[Zeros("i32", 1), Zeros("i32", 2)],
        expected={0: i32([0]), 1: i32([T, sum(range(T))])},
        # DWF's majority heuristic keeps issuing the spinning majority and the holder starves when
        # every warp is always ready (functional mode); with latencies it completes. A path list
        # sorted by thread count (majority first) always runs the spinners: livelock.
        outcome_by_mechanism={"dwf": "deadlock|completed", "dwf:sm": "deadlock|completed", "sorted:majority": "deadlock"},
        description="SIMT-safe spin lock (acquire and release in one loop iteration): "
                    "completes under stack-based reconvergence")


@kernel
def spinlock_naive():
    T = 32
    return Spec(
        name="spinlock_naive", ptx="ptx/sm_80/spinlock_naive.ptx", grid=(1, 1, 1),
        block=(T, 1, 1), args=[Zeros("i32", 1), Zeros("i32", 2)],
        expected={0: i32([0]), 1: i32([0, T])},
        # The holder waits at the reconvergence point (stack and CTA-stack mechanisms). Under DWF
        # the heuristic (majority, minority, pc, pdom priority) keeps issuing the spinners when
        # every warp is always ready (functional mode); with latencies the holder gets issue
        # slots and the kernel completes: either outcome is DWF's. Minimum-pc orders (depth-first,
        # sorted lists, Simty, the arbiter) always pick the spin loop, which has the lower pc, and
        # the thread-count orders pick the spinners (majority) or one of two single threads by pc.
        # Fork/join runs the holder first (the minority) but its join sits at the loop exit, before
        # the release: the holder waits there for the spinners. Dual-path and multi-path keep IPDOM
        # reconvergence: the holder waits in the stack entry or reconvergence table. Stackless SIMT
        # puts a syncwarp at the loop exit (a convergent block with a divergent predecessor), where
        # the holder waits for the spinners. `breadth`, `none` and `its` (yield)
        # complete.
        outcome_by_mechanism={**{m: "deadlock" for m in ["pdom", "ssy", "tbc", "capri", "tbc:lpc", "capri:lpc", "minpc",
                                                         "sorted:minpc", "sorted:depth",
                                                         "sorted:majority", "sorted:minority",
                                                         "maven:1-stack", "hybrid", "runner-up",
                                                         "simty", "arbiter", "forkjoin",
                                                         "thread-frontiers", "dual-path",
                                                         "multi-path", "sbi", "sbi:swi", "harp", "dws",
                                                         "stackless", "stackless-dcp"]},
                              **{m: "deadlock|completed" for m in ["dwf", "dwf:minority",
                                                                   "dwf:pc", "dwf:pdom", "dwf:sm"]}},
        description="naive spin lock (docs/mechanism-reference.md): SIMT deadlock under PDOM, "
                    "SSY/SYNC, TBC, CAPRI and DWF but FIFO; expected buffers apply where it "
                    "completes (none, dwf:fifo)")



@kernel
def flag_handoff():
    T = 32
    return Spec(
        name="flag_handoff", ptx="ptx/sm_80/flag_handoff.ptx", grid=(1, 1, 1),
        block=(T, 1, 1), args=[Zeros("i32", 1), Zeros("i32", 1), Zeros("i32", T)],
        expected={0: i32([1]), 1: i32([42]), 2: i32([0] + [42 + t for t in range(1, T)])},
        # NVRTC makes the producer (thread 0) the taken side and lays the consumers' wait loop out
        # first (lower pcs). Stacks run the taken side first (the producer): complete. Minimum-pc
        # orders and the majority order run the consumers forever; DWF's majority, pc and pdom
        # heuristics do in functional mode (with latencies the producer gets issue slots).
        outcome_by_mechanism={**{m: "deadlock" for m in ["minpc", "sorted:minpc", "sorted:depth",
                                                         "sorted:majority", "maven:1-stack", "hybrid",
                                                         "runner-up", "simty", "arbiter",
                                                         "thread-frontiers"]},
                              **{m: "deadlock|completed" for m in ["dwf", "dwf:pc", "dwf:pdom", "dwf:sm"]}},
        description="producer/consumer flag between two paths of one warp: thread 0 writes a value "
                    "and raises a flag that threads 1..31 spin on (docs/simt-deadlock.md)")

@kernel
def irreducible():
    rng = rng_for("irreducible")
    T = 64
    xs = rng.integers(0, 1 << 32, T, dtype=np.uint64).astype(np.uint32)
    out = []
    for t in range(T):
        x = int(xs[t])
        acc, n = t, 0
        label = "b" if x & 1 else "a"
        while True:
            if label == "a":
                acc = (acc * 5 + x) & I32_MASK
                n += 1
                if n >= 12:
                    break
            acc = acc ^ (acc >> 3)          # L_b
            n += 1
            if (acc & 3) != 0 and n < 12:
                label = "a"
                continue
            break
        out += [acc, n]
    return Spec(
        name="irreducible", ptx="ptx/sm_80/irreducible.ptx", grid=(1, 1, 1), block=(T, 1, 1),
        args=[Buf("in", xs), Zeros("u32", 2 * T)],
        expected={1: np.asarray(out, np.uint32)},
        description="irreducible goto loop: a two-block cycle entered at either block "
                    "depending on the input (two entries, no loop header)")


@kernel
def switch_kernel():
    rng = rng_for("switch_kernel")
    T = 96
    vals = rng.integers(0, 1000, T).astype(np.int32)
    out = []
    for t in range(T):
        v = int(vals[t])
        key = (v + t) % 11
        r = 0
        if key == 0:
            r = v * 2
        elif key in (1, 2):
            if key == 1:
                r = v + 100
            r = r * 3 + 1
        elif key in (3, 4, 5):
            if key == 3:
                r = v - 7
            if key in (3, 4):
                r ^= 0x55
            r += t
        elif key == 7:
            r = -v
        elif key == 8:
            r = v // 3               # v >= 0, so floor division equals C truncation
        elif key == 9:
            r = (v << 4) | t
        else:
            r = 12345 + key
        out.append(wrap32(r))
    return Spec(
        name="switch_kernel", ptx="ptx/sm_80/switch_kernel.ptx", grid=(1, 1, 1),
        block=(T, 1, 1), args=[Buf("in", vals), Zeros("i32", T)],
        expected={1: i32(out)},
        description="switch on (v + t) % 11: 9 cases with fallthrough chains (1->2, 3->4->5) and "
                    "a default; lowered to a compare tree (no brx.idx)")


@kernel
def bitonic_sort():
    rng = rng_for("bitonic_sort")
    B, G = 128, 2
    data = rng.integers(-500, 500, B * G).astype(np.int32)
    out = np.concatenate([np.sort(data[g * B:(g + 1) * B]) for g in range(G)]).astype(np.int32)
    # cross-check the sort network itself, sequentially step by step
    for g in range(G):
        s = [int(x) for x in data[g * B:(g + 1) * B]]
        k = 2
        while k <= B:
            j = k >> 1
            while j > 0:
                for tid in range(B):
                    ixj = tid ^ j
                    if ixj > tid:
                        a, b = s[tid], s[ixj]
                        if (tid & k) == 0:
                            if a > b:
                                s[tid], s[ixj] = b, a
                        elif a < b:
                            s[tid], s[ixj] = b, a
                j >>= 1
            k <<= 1
        assert s == [int(x) for x in out[g * B:(g + 1) * B]], "bitonic network mismatch"
    return Spec(
        name="bitonic_sort", ptx="ptx/sm_80/bitonic_sort.ptx", grid=(G, 1, 1), block=(B, 1, 1),
        args=[Buf("data", data)], expected={0: out}, dynamic_shared=B * 4,
        description="bitonic sort of each CTA's 128 ints in dynamic shared memory: "
                    "tid-dependent partner and direction, data-dependent swap, barriers")


@kernel
def sssp():
    rng = rng_for("sssp")
    n, reach = 150, 140
    INF = 0x3FFFFFFF
    adj: list[list[int]] = []
    for u in range(n):
        lo, hi = (0, reach) if u < reach else (reach, n)
        deg = int(rng.integers(0, 5))
        nb = rng.choice(np.arange(lo, hi), size=min(deg, hi - lo), replace=False)
        adj.append(sorted(int(v) for v in nb if v != u))
    for u in range(0, reach - 2, 2):
        if (u + 2) not in adj[u]:
            adj[u].append(u + 2)
    row_ptr, col_idx = csr(n, adj)
    weight = rng.integers(1, 21, len(col_idx)).astype(np.int32)
    source = 0

    dist = [INF] * n
    dist[source] = 0
    rounds = 0
    while True:
        prev = list(dist)
        changed = False
        for u in range(n):
            du = prev[u]
            if du == INF:
                continue
            for e in range(row_ptr[u], row_ptr[u + 1]):
                v = int(col_idx[e])
                nd = du + int(weight[e])
                if nd < prev[v]:
                    dist[v] = min(dist[v], nd)
                    changed = True
        rounds += 1
        if not changed or rounds >= n:
            break
    return Spec(
        name="sssp", ptx="ptx/sm_80/sssp.ptx", grid=(1, 1, 1), block=(96, 1, 1),
        args=[Buf("row_ptr", row_ptr), Buf("col_idx", col_idx), Buf("weight", weight), n, source,
              Zeros("i32", n), Zeros("i32", 1)],
        expected={5: i32(dist), 6: i32([rounds])},
        description=f"Bellman-Ford SSSP, {rounds} Jacobi rounds in one CTA: strided node loop, "
                    "skip of unreached nodes, data-dependent edge loop and relaxation test")


@kernel
def lud():
    rng = rng_for("lud")
    n = 24
    m = rng.uniform(-1.0, 1.0, (n, n)).astype(np.float32)
    m += np.eye(n, dtype=np.float32) * f32(n)
    a = m.copy()
    for k in range(n - 1):
        for tid in range(k + 1, n):
            a[tid, k] = f32(a[tid, k] / a[k, k])
        for tid in range(k + 1, n):
            for j in range(k + 1, n):
                a[tid, j] = f32(a[tid, j] - f32(a[tid, k] * a[k, j]))
    return Spec(
        name="lud", ptx="ptx/sm_80-nofma/lud.ptx", grid=(1, 1, 1), block=(n, 1, 1),
        args=[Buf("m", m.reshape(-1)), n], expected={0: a.reshape(-1)},
        description="LU decomposition (Doolittle, no pivoting) of a 24x24 matrix in shared "
                    "memory: triangular tid > k loops, barriers")


@kernel
def kmeans():
    rng = rng_for("kmeans")
    nfeatures, npoints, nclusters = 8, 180, 5
    features = rng.uniform(0.0, 10.0, (nfeatures, npoints)).astype(np.float32)   # feature-major
    centres = features[:, rng.choice(npoints, nclusters, replace=False)].T.copy()  # (nclusters, nfeatures)
    membership = i32(rng.integers(-1, nclusters, npoints))
    out = membership.copy()
    delta = 0
    for p in range(npoints):
        min_dist = f32(3.402823466e+38)
        index = -1
        for i in range(nclusters):
            ans = f32(0.0)
            for j in range(nfeatures):
                diff = f32(features[j, p] - centres[i, j])
                ans = f32(ans + f32(diff * diff))
            if ans < min_dist:
                min_dist = ans
                index = i
        if out[p] != index:
            delta += 1
        out[p] = index
    return Spec(
        name="kmeans", ptx="ptx/sm_80-nofma/kmeans.ptx", grid=(3, 1, 1), block=(64, 1, 1),
        args=[nfeatures, npoints, nclusters, Buf("membership", membership)],
        expected={3: out},
        globals={"t_features": Buf("features", features.reshape(-1)),
                 "c_clusters": Buf("clusters", centres.reshape(-1)), "g_delta": 0},
        expected_globals={"g_delta": np.array([delta], np.uint32)},   # PTX declares it .u32
        description="Rodinia kmeans membership step: features behind a __device__ pointer (was a "
                    "texture), centres in a __constant__ table, data-dependent nearest-centre test")


@kernel
def spmv():
    rng = rng_for("spmv")
    dim, block = 120, 32
    padded = 128
    rows = []
    for r in range(dim):
        n = int(rng.integers(1, 13))
        cols = sorted(rng.choice(dim, n, replace=False).tolist())
        vals = rng.uniform(-1.0, 1.0, n).astype(np.float32)
        rows.append((cols, vals))
    x = rng.uniform(-1.0, 1.0, dim).astype(np.float32)
    perm = sorted(range(dim), key=lambda r: (-len(rows[r][0]), r))   # rows by length, longest first
    ndiag = len(rows[perm[0]][0])
    data = np.zeros(ndiag * padded, np.float32)
    index = np.zeros(ndiag * padded, np.int32)
    for ix, r in enumerate(perm):
        cols, vals = rows[r]
        for k in range(len(cols)):
            data[k * padded + ix] = vals[k]
            index[k * padded + ix] = cols[k]
    jds_ptr = i32([k * padded for k in range(ndiag)])
    nblocks = (dim + block - 1) // block
    zcnt = i32([len(rows[perm[b * block]][0]) for b in range(nblocks)])
    y = np.zeros(dim, np.float32)
    for ix in range(dim):
        s = f32(0.0)
        for k in range(int(zcnt[ix // block])):
            j = jds_ptr[k] + ix
            s = f32(s + f32(data[j] * x[index[j]]))
        y[perm[ix]] = s
    return Spec(
        name="spmv", ptx="ptx/sm_80-nofma/spmv.ptx", grid=(nblocks, 1, 1), block=(block, 1, 1),
        args=[Zeros("f32", dim), Buf("data", data), Buf("index", index), Buf("perm", i32(perm)),
              Buf("x", x), dim],
        expected={0: y},
        globals={"jds_ptr_int": Buf("jds_ptr", jds_ptr), "sh_zcnt_int": Buf("zcnt", zcnt)},
        description="Parboil spmv (JDS format): diagonal starts and per-CTA diagonal counts in "
                    "__constant__ tables set by the host; per-CTA trip counts")


# ----------------------------------------------------------------------------------------------
# Output
# ----------------------------------------------------------------------------------------------


def _toml_key(s: str) -> str:
    """A bare TOML key, or a quoted one when it has other characters (`dwf:pc`)."""
    return s if all(c.isalnum() or c in "-_" for c in s) else _toml_str(s)


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _arg_toml(spec: Spec, arg) -> str:
    if isinstance(arg, Buf):
        return _toml_str(f"@data/{spec.name}/{arg.file}.npy")
    if isinstance(arg, Zeros):
        return _toml_str(f"zeros:{arg.dtype}:{arg.length}")
    if isinstance(arg, F32):
        v = float(arg.value)
        assert float(np.float32(v)) == v, f"{spec.name}: float arg {v} is not exact in float32"
        return repr(v)
    if isinstance(arg, (int, np.integer)):
        return str(int(arg))
    raise TypeError(f"{spec.name}: unsupported argument {arg!r}")


def _save_npy(path: Path, array) -> None:
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    path.write_bytes(buf.getvalue())


def write_all(specs: list[Spec], root: Path) -> None:
    data = root / "data"
    if data.exists():
        shutil.rmtree(data)
    lines = [
        "# Kernel suite: launch descriptions, inputs and expected outputs.",
        "# GENERATED by kernels/reference.py -- edit that file and rerun it, do not edit here.",
        "#",
        "# Per kernel: name (entry point, = kernels/src/NAME.cu); ptx (the variant the suite runs,",
        "# relative to kernels/); grid, block; args, one per kernel parameter in order: a number",
        "# (scalar; its type comes from the PTX), \"@data/NAME/FILE.npy\" (a device buffer filled",
        "# from the file; its address is passed) or \"zeros:DTYPE:LEN\" (a zero-filled buffer);",
        "# expected: argument index -> .npy with the buffer's expected final contents;",
        "# globals (optional): module variables (__device__/__constant__) set before the launch,",
        "# name -> value as for args (a buffer for a 64-bit scalar variable is allocated and its",
        "# address stored); expected_globals: variable -> .npy with its expected final contents;",
        "# dynamic_shared: bytes of dynamic shared memory; outcome: \"completed\" unless",
        "# outcome_by_mechanism names the mechanism (expected buffers apply where it completes);",
        "# warp_sizes (optional): the simulated warp sizes the expectations hold for (absent: any",
        "# warp size 4..64); description.",
        "",
    ]
    for spec in specs:
        kdir = data / spec.name
        kdir.mkdir(parents=True, exist_ok=True)
        expected = {}
        for i, arg in enumerate(spec.args):
            if isinstance(arg, Buf):
                _save_npy(kdir / f"{arg.file}.npy", arg.array)
        for arg in spec.globals.values():
            if isinstance(arg, Buf):
                _save_npy(kdir / f"{arg.file}.npy", arg.array)
        expected_globals = {}
        for name, arr in sorted(spec.expected_globals.items()):
            _save_npy(kdir / f"expected_{name}.npy", np.asarray(arr))
            expected_globals[name] = f"data/{spec.name}/expected_{name}.npy"
        for idx, arr in sorted(spec.expected.items()):
            arg = spec.args[idx]
            want_dtype = DTYPES[arg.dtype] if isinstance(arg, Zeros) else arg.array.dtype
            length = arg.length if isinstance(arg, Zeros) else arg.array.size
            arr = np.asarray(arr)
            assert arr.dtype == want_dtype, f"{spec.name} expected {idx}: {arr.dtype} vs {want_dtype}"
            assert arr.size == length, f"{spec.name} expected {idx}: size {arr.size} vs {length}"
            _save_npy(kdir / f"expected_{idx}.npy", arr)
            expected[idx] = f"data/{spec.name}/expected_{idx}.npy"
        lines.append("[[kernel]]")
        lines.append(f"name = {_toml_str(spec.name)}")
        lines.append(f"ptx = {_toml_str(spec.ptx)}")
        lines.append(f"grid = [{', '.join(map(str, spec.grid))}]")
        lines.append(f"block = [{', '.join(map(str, spec.block))}]")
        lines.append(f"args = [{', '.join(_arg_toml(spec, a) for a in spec.args)}]")
        exp = ", ".join(f"{_toml_str(str(k))} = {_toml_str(v)}" for k, v in expected.items())
        lines.append(f"expected = {{ {exp} }}")
        if spec.globals:
            g = ", ".join(f"{k} = {_arg_toml(spec, v)}" for k, v in sorted(spec.globals.items()))
            lines.append(f"globals = {{ {g} }}")
        if expected_globals:
            eg = ", ".join(f"{k} = {_toml_str(v)}" for k, v in expected_globals.items())
            lines.append(f"expected_globals = {{ {eg} }}")
        lines.append(f"dynamic_shared = {spec.dynamic_shared}")
        if spec.outcome_by_mechanism:
            obm = ", ".join(f"{_toml_key(k)} = {_toml_str(v)}" for k, v in spec.outcome_by_mechanism.items())
            lines.append(f"outcome_by_mechanism = {{ {obm} }}")
        if spec.warp_sizes:
            lines.append(f"warp_sizes = [{', '.join(map(str, spec.warp_sizes))}]")
        lines.append(f"description = {_toml_str(spec.description)}")
        lines.append("")
    (root / "manifest.toml").write_text("\n".join(lines))


def build_specs() -> list[Spec]:
    specs = [fn() for fn in KERNELS]
    names = [s.name for s in specs]
    assert len(set(names)) == len(names)
    for s in specs:
        nthreads = s.block[0] * s.block[1] * s.block[2]
        ncta = s.grid[0] * s.grid[1] * s.grid[2]
        assert s.large or (nthreads <= 256 and ncta <= 4), f"{s.name}: launch too large"
    return specs


def compare_trees(a: Path, b: Path) -> list[str]:
    """Relative paths that differ between the generated tree `a` and the committed tree `b`."""
    diffs = []
    files_a = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    files_b = {p.relative_to(b) for p in (b / "data").rglob("*") if p.is_file()}
    files_b.add(Path("manifest.toml"))
    for rel in sorted(files_a | files_b):
        pa, pb = a / rel, b / rel
        if not pa.exists():
            diffs.append(f"stale: kernels/{rel}")
        elif not pb.exists():
            diffs.append(f"missing: kernels/{rel}")
        elif not filecmp.cmp(pa, pb, shallow=False):
            diffs.append(f"differs: kernels/{rel}")
    return diffs


def main() -> int:
    ap = argparse.ArgumentParser(description="kernel-suite reference data")
    ap.add_argument("--check", action="store_true",
                    help="regenerate into a temporary directory and compare with kernels/")
    ap.add_argument("--list", action="store_true", help="list the kernels")
    args = ap.parse_args()

    specs = build_specs()
    if args.list:
        for s in specs:
            print(f"{s.name:15s} grid={s.grid} block={s.block} {s.ptx}")
        return 0
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            write_all(specs, Path(tmp))
            diffs = compare_trees(Path(tmp), HERE)
        for d in diffs:
            print(d)
        if diffs:
            print(f"reference --check: {len(diffs)} difference(s); run python3 kernels/reference.py")
            return 1
        print(f"reference --check: manifest and data of {len(specs)} kernels up to date "
              f"(numpy {np.__version__})")
        return 0
    write_all(specs, HERE)
    total = sum(p.stat().st_size for p in (HERE / "data").rglob("*.npy"))
    for s in specs:
        files = sorted((HERE / "data" / s.name).glob("*.npy"))
        print(f"wrote kernels/data/{s.name}/: {', '.join(f.name for f in files)}")
    print(f"wrote kernels/manifest.toml ({len(specs)} kernels); data total {total} bytes "
          f"(numpy {np.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
