#!/usr/bin/env python3
"""A census of the classic CUDA suites under `reconverge exec`: which programs of Rodinia 3.1, ISPASS-2009,
Parboil, LonestarGPU 2.0 and Pannotia build with CUDA 13 and run today, and which do not, with the exact
reason. Prints a markdown table per suite; `--write` writes docs/suite-census.md.

Usage:
    python3 scripts/suite_census.py --apps DIR --data DATA [--bin target/release/reconverge] [--nvcc NVCC]
                                    [--header FILE] [--work DIR] [--only NAME[,NAME...]] [--suite SUITE]
                                    [--timeout S] [--max-instructions N] [--json FILE] [--write] [-v]
    python3 scripts/suite_census.py --from-json FILE [--write]     (the page from an earlier --json)

Inputs (both read, never changed, and nothing from them enters the repository):

- `--apps DIR`: accel-sim/gpu-app-collection, either a checkout (the directory holding `src/cuda`) or a git
  directory without a work tree (a bare mirror), whose five suites are then extracted blob by blob
  (`git cat-file --batch`; `git archive` aborts on the blobs such a mirror lacks) into the work directory;
- `--data DATA`: GPGPU-Sim 2.1.1b's `ispass2009-benchmarks/benchmarks/CUDA`, a directory or, likewise, a git
  directory of the release (the public mirror sfraney/gpgpu-sim): the ISPASS-2009 inputs, as for
  scripts/paper_workloads.py and scripts/texture_programs.py.

Everything is built and run under `--work` (default: a temporary directory). Builds use CUDA 13's nvcc with
`-cudart shared -gencode arch=compute_80,code=compute_80 -include reconverge_compat.h -L $(reconverge
cuda-lib)`, sources and flags as each program's build files give them and no source edit:

- Rodinia, LonestarGPU and Pannotia run their own Makefiles with `make`, through an `nvcc` wrapper first on
  PATH that drops the Makefile's `-gencode`/`-arch`/`-m32` options and adds the ones above; the SDK paths the
  Makefiles name (`$(NVIDIA_COMPUTE_SDK_LOCATION)/../4.2/C/common/inc`, `-lcutil_x86_64`) point at the
  collection's `src/cuda/common`, and `CUDA_INSTALL_PATH`/`CUDA_DIR` at a directory whose `lib64` is
  `reconverge cuda-lib` (for the Makefiles that link with gcc and `-lcudart`);
- ISPASS-2009 with scripts/texture_programs.py's builder, the sources of scripts/paper_workloads.py and the
  additions of texture_programs.py (AES, MUM); CP as its README builds it (`cuda_short` and its own
  parboil.c); Parboil's `cuda` variants (the ones the collection builds) with the objects each
  `src/cuda/Makefile` lists, its APP_* flags and `parboil_cuda.c`, the host files compiled with gcc/g++ and
  no -O as Parboil's cuda.mk does (sgemm's io.cc falls off the end of a bool function, which GCC 12 at -O2
  turns into an abort before any CUDA call).

Two Makefile variables are set where the program's host code needs it under GCC 12 (both are the
Makefile's own hooks, no source edit): Rodinia mummergpu `PROFILE=-fno-delete-null-pointer-checks` (ISPASS
MUM's flag in texture_programs.py: its suffix tree tests `if (this)`), Lonestar bh
`NVCC_ADDITIONAL_ARGS=-Xcompiler -fwrapv` (its input generator multiplies signed ints past INT_MAX, which
-O3 turns into an endless loop before the first launch). Rodinia hybridsort is built with `VERIFY=1`
and huffman with `TESTING=1`, their Makefiles' switches for their own checks.

Inputs: ISPASS-2009's from the release (README command lines). Rodinia's, Parboil's and Lonestar's data sets
are downloaded separately by their suites and are not in either repository, so each program gets a small
input generated from a fixed seed (or its own size-parameter mode), in its own format: Rodinia's text graph
for bfs, temperature/power files for hotspot and hotspot3D, key and command files for b+tree, a mesh for
cfd, records for nn, a PGM for srad_v1, random sequences for mummergpu; MatrixMarket, binary and text files
for Parboil; version-1 `.gr` binary graphs for Lonestar; DIMACS (`p sp`/`a u v w`) graphs for Pannotia.
Where a format is not worth generating the program is classified `no input` with what it needs.

Rodinia's particlefilters seed their generator with `time(0) * i`; they run with `time()` fixed by an
LD_PRELOAD library, so that runs can be compared.

Runs: `reconverge exec --functional --mechanism M --max-instructions N` for M = pdom, its, tbc, each with a
wall-clock timeout (`nice -n 10`, one at a time); after a timeout the remaining mechanisms are not run.
Compared across the three: stdout less its timing lines (any line that says time, took, elapsed, ms, sec,
GB/s or `N.NNN s`, `label : N.NNN` timer lines, the device's name; Lonestar's per-iteration counters, which
follow the order of racy updates, are listed with their programs) and every file the run creates or
changes in its directory (SHA-256). A program's check runs after each mechanism's run.

Classification (the `outcome` column):

- `runs, checked`: exit 0 everywhere, outputs identical, and a check passed under every mechanism: the
  program's own (PASSED, lud's `-v`, hybridsort's `-DVERIFY`, Lonestar's error counts) or one against an
  independent computation in Python (texture_programs.py's for kmeans, AES and MUM/mummergpu; BFS levels for
  Rodinia bfs, Dijkstra for Parboil bfs, C = A B for sgemm, y = A x for spmv, Kruskal for Lonestar mst);
- `runs, consistent`: exit 0 everywhere and identical outputs, no independent check;
- `runs, differs: ...`: what differs between mechanisms (the first stdout line, the files), or a check that
  fails, and under which mechanism;
- `build fails: ...`: the first compiler or linker error;
- `runtime stops: ...`: the runtime's message (an unsupported call or instruction names itself; a fault
  with its nearest allocation; a refused launch; a SIMT deadlock, with the kernel under each mechanism), a
  crash, or the program's own non-zero exit, and the mechanisms it happens under;
- `no input: ...`: what the program needs;
- `too slow: ...`: the timeout or the instruction limit of one launch.

It takes about 15 minutes on two busy cores; standard library only.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import heapq
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import texture_programs as tp  # noqa: E402
from paper_workloads import PROGRAMS as ISPASS_SOURCES  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "suite-census.md"
MECHS = ["pdom", "its", "tbc"]
SUITES = ["Rodinia 3.1", "ISPASS-2009", "Parboil", "LonestarGPU 2.0", "Pannotia"]
PREFIXES = ["src/cuda/rodinia/3.1", "src/cuda/ispass-2009", "src/cuda/parboil", "src/cuda/lonestargpu-2.0",
            "src/cuda/pannotia", "src/cuda/common"]
TIMING = re.compile(r"(?i)time|took|elapsed|\bms\b|msec|\bsec|GB/s|gflop|throughput|device name|using device|"
                    r"^name:|\d\.\d+ s(, |\s*$)|^\s*[a-z][\w /()+-]*:\s*-?\d+\.\d+\s*$")  # `Kernel : 0.0021`


class BuildError(RuntimeError):
    """A build failed; the message is its first error line."""


class NoInput(RuntimeError):
    """No input for the program; the message says what it needs."""


# ---- sources ----------------------------------------------------------------------------------------------

def extract(gitdir: Path, prefixes: list[str], dest: Path) -> list[str]:
    """Write the HEAD blobs under `prefixes` of the git directory `gitdir` below `dest`; returns the paths whose
    blobs the repository lacks."""
    ls = subprocess.run(["git", "--git-dir", str(gitdir), "ls-tree", "-r", "HEAD", "--", *prefixes],
                        capture_output=True, text=True, check=True).stdout
    entries = []
    for line in ls.splitlines():
        meta, path = line.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind == "blob":
            entries.append((mode, sha, path))
    cat = subprocess.Popen(["git", "--git-dir", str(gitdir), "cat-file", "--batch"], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE)
    assert cat.stdin and cat.stdout
    missing = []
    for mode, sha, path in entries:
        cat.stdin.write((sha + "\n").encode())
        cat.stdin.flush()
        head = cat.stdout.readline().decode().split()
        if len(head) < 3 or head[1] == "missing":
            missing.append(path)
            continue
        data = cat.stdout.read(int(head[2]))
        cat.stdout.read(1)
        out = dest / path
        out.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            out.unlink(missing_ok=True)
            out.symlink_to(data.decode())
        else:
            out.write_bytes(data)
            if mode == "100755":
                out.chmod(0o755)
    cat.stdin.close()
    cat.wait()
    return missing


def tree(src: Path, prefixes: list[str], dest: Path) -> Path:
    """A writable copy of `prefixes` of `src` (a checkout or a git directory) under `dest`; returns its root."""
    if (src / "objects").is_dir() and not (src / prefixes[0].split("/")[0]).exists():
        extract(src, prefixes, dest)
    else:
        for p in prefixes:
            if (src / p).exists():
                shutil.copytree(src / p, dest / p, symlinks=True, dirs_exist_ok=True)
    return dest


# ---- building ---------------------------------------------------------------------------------------------

WRAPPER = '''#!/usr/bin/env python3
# nvcc as the suites' Makefiles call it, for reconverge: their -gencode/-arch/-m32 options dropped, PTX for
# compute_80, the shared runtime, reconverge_compat.h and `reconverge cuda-lib` added.
import os, sys
REAL, EXTRA, LOG = %r, %r, %r
out, args, i = [], sys.argv[1:], 0
while i < len(args):
    a = args[i]
    if a in ("-gencode", "--generate-code", "-arch", "--gpu-architecture", "-code", "--gpu-code"):
        i += 2
        continue
    if a.startswith(("-gencode=", "--generate-code=", "-arch=", "--gpu-architecture=", "-code=", "--gpu-code=")) \\
            or a in ("-m32", "-deviceemu"):
        i += 1
        continue
    out.append(a)
    i += 1
with open(LOG, "a") as f:
    f.write(os.getcwd() + ": nvcc " + " ".join(out) + "\\n")
os.execv(REAL, [REAL, *out, *EXTRA])
'''


@dataclass
class Ctx:
    binary: str
    nvcc: str
    header: Path
    cuda_lib: str
    root: Path          # the extracted collection (holds src/cuda)
    data: Path          # ISPASS-2009 data of the GPGPU-Sim release
    work: Path
    timeout: int
    max_instructions: int
    verbose: bool
    tools: Path = field(init=False)

    def __post_init__(self) -> None:
        self.tools = self.work / "tools"
        (self.tools / "bin").mkdir(parents=True, exist_ok=True)
        wrapper = self.tools / "bin" / "nvcc"
        extra = ["-cudart", "shared", "-gencode", "arch=compute_80,code=compute_80", "-include", str(self.header),
                 f"-L{self.cuda_lib}"]
        wrapper.write_text(WRAPPER % (self.nvcc, extra, str(self.work / "nvcc.log")))
        wrapper.chmod(0o755)
        cuda = self.tools / "cuda"
        (cuda / "bin").mkdir(parents=True, exist_ok=True)
        for link, target in [(cuda / "bin" / "nvcc", wrapper), (cuda / "lib64", Path(self.cuda_lib)),
                             (cuda / "lib", Path(self.cuda_lib)), (cuda / "include", Path(self.nvcc).parent.parent /
                                                                    "include")]:
            if not link.exists():
                link.symlink_to(target)
        common = self.root / "src/cuda/common"
        sdk = self.tools / "sdk"
        (sdk / "4.2/C").mkdir(parents=True, exist_ok=True)
        (sdk / "sdk").mkdir(exist_ok=True)
        for link, target in [(sdk / "4.2/C/common", common), (sdk / "4.2/C/lib", common / "lib"),
                             (sdk / "sdk/common", common), (sdk / "sdk/lib", common / "lib")]:
            if not link.exists():
                link.symlink_to(target)

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PATH"] = f"{self.tools / 'bin'}{os.pathsep}{Path(self.nvcc).parent}{os.pathsep}{env.get('PATH', '')}"
        return env

    def make_vars(self) -> list[str]:
        cuda = str(self.tools / "cuda")
        return [f"CUDA_INSTALL_PATH={cuda}", f"CUDA_DIR={cuda}", f"CUDAHOME={cuda}",
                f"NVIDIA_COMPUTE_SDK_LOCATION={self.tools / 'sdk' / 'sdk'}", f"BINDIR={self.work / 'bin'}",
                "BINSUBDIR=.", f"CUDA_LIB_DIR={self.cuda_lib}"]

    def builder(self) -> tp.Builder:
        return tp.Builder(self.nvcc, self.header, self.cuda_lib, self.root)


def first_error(text: str) -> str:
    """The first line of compiler or linker output that reports an error."""
    lines = text.splitlines()
    for pat in (r": not found$", r"error\s*:|\): error|fatal error", r"undefined reference", r"\berror\b",
                r"No such file", r"No rule to make", r"^make.*\*\*\*"):
        for ln in lines:
            if re.search(pat, ln, re.I) and not ln.startswith("nvcc warning"):
                return re.sub(r"^\S*/src/cuda/", "", ln.strip())[:300]
    return (lines[-1].strip() if lines else "no output")[:300]


def make(ctx: Ctx, d: Path, exe: str, args: list[str] | None = None) -> Path:
    """Run the Makefile in `d` (`make ARGS`) with the nvcc wrapper; returns the executable `exe` (relative to `d`;
    `bin/NAME`: in the BINDIR the Makefiles are given)."""
    target = ctx.work / exe if exe.startswith("bin/") else d / exe
    target.unlink(missing_ok=True)  # no stale executable of an earlier census
    cmd = ["nice", "-n", "10", "make", *(args or []), *ctx.make_vars()]
    out = subprocess.run(cmd, cwd=d, capture_output=True, text=True, errors="replace", env=ctx.env(), check=False)
    if out.returncode != 0 or not target.exists():
        if ctx.verbose:
            print(out.stdout[-3000:], out.stderr[-3000:], file=sys.stderr)
        raise BuildError(first_error(out.stderr + "\n" + out.stdout))
    return target


def nvcc(ctx: Ctx, d: Path, sources: list[str], extra: list[str], libs: list[str] | None = None) -> Path:
    """texture_programs.py's build (nvcc -cudart shared ... -o app)."""
    try:
        return ctx.builder().nvcc_build(d, sources, extra, libs)
    except RuntimeError as e:
        raise BuildError(first_error(str(e).split("\n", 2)[-1])) from None


# ---- inputs -----------------------------------------------------------------------------------------------

def rodinia_graph(path: Path, n: int, seed: int, degree: int = 4) -> None:
    """Rodinia's BFS text format: n, n lines `first_edge degree`, the source, the edge count, `dest cost`."""
    rng = random.Random(seed)
    adj = [sorted({rng.randrange(n) for _ in range(rng.randint(1, 2 * degree))}) for _ in range(n)]
    for i in range(n - 1):  # a path through all nodes, so every node is reached
        if i + 1 not in adj[i]:
            adj[i].append(i + 1)
    lines, edges, first = [str(n)], [], 0
    for a in adj:
        lines.append(f"{first} {len(a)}")
        first += len(a)
        edges += [f"{v} {rng.randint(1, 9)}" for v in a]
    path.write_text("\n".join(lines + ["", "0", "", str(len(edges))] + edges) + "\n")


def float_lines(path: Path, count: int, lo: float, hi: float, seed: int) -> None:
    rng = random.Random(seed)
    path.write_text("".join(f"{rng.uniform(lo, hi):.6f}\n" for _ in range(count)))


def dimacs(path: Path, n: int, m: int, seed: int) -> None:
    """A DIMACS shortest-path graph (`p sp n m`, `a u v w`, 1-based), connected along a path."""
    rng = random.Random(seed)
    arcs = {(i, i + 1) for i in range(1, n)}
    while len(arcs) < m:
        u, v = rng.randint(1, n), rng.randint(1, n)
        if u != v:
            arcs.add((u, v))
    rows = sorted(arcs)
    path.write_text(f"p sp {n} {len(rows)}\n" + "".join(f"a {u} {v} {rng.randint(1, 20)}\n" for u, v in rows))


def metis(path: Path, n: int, m: int, seed: int) -> None:
    """An undirected graph in Metis's format: `n m`, then line i lists node i's neighbours (1-based)."""
    rng = random.Random(seed)
    adj: list[set[int]] = [set() for _ in range(n + 1)]
    edges = 0
    for i in range(1, n):
        adj[i].add(i + 1)
        adj[i + 1].add(i)
        edges += 1
    while edges < m:
        u, v = rng.randint(1, n), rng.randint(1, n)
        if u != v and v not in adj[u]:
            adj[u].add(v)
            adj[v].add(u)
            edges += 1
    path.write_text(f"{n} {m}\n" + "".join(" ".join(map(str, sorted(adj[i]))) + "\n" for i in range(1, n + 1)))


def lonestar_gr(path: Path, n: int, degree: int, seed: int) -> None:
    """Galois's version-1 .gr file: u64 version 1, u64 sizeof edge data (4), u64 nodes, u64 edges, u64 row
    ends[nodes], u32 destinations[edges] (padded to 8 bytes), u32 edge data[edges]; symmetric, connected."""
    rng = random.Random(seed)
    adj: list[set[int]] = [set() for _ in range(n)]
    for i in range(n - 1):
        adj[i].add(i + 1)
        adj[i + 1].add(i)
    for _ in range(n * degree // 2):
        u, v = rng.randrange(n), rng.randrange(n)
        if u != v:
            adj[u].add(v)
            adj[v].add(u)
    dests, ends, weight = [], [], {}
    for u in range(n):
        for v in sorted(adj[u]):
            key = (min(u, v), max(u, v))
            weight.setdefault(key, rng.randint(1, 100))
            dests.append(v)
        ends.append(len(dests))
    m = len(dests)
    data = struct.pack("<4Q", 1, 4, n, m) + struct.pack(f"<{n}Q", *ends) + struct.pack(f"<{m}I", *dests)
    if m % 2:
        data += b"\0" * 4
    ws = [weight[(min(u, v), max(u, v))] for u in range(n) for v in sorted(adj[u])]
    path.write_bytes(data + struct.pack(f"<{m}I", *ws))


def fasta(path: Path, name: str, seqs: list[str]) -> None:
    path.write_text("".join(f">{name}{i}\n" + "\n".join(s[j:j + 60] for j in range(0, len(s), 60)) + "\n"
                            for i, s in enumerate(seqs)))


# ---- checks -----------------------------------------------------------------------------------------------

def own_verdict(stdout: str) -> tuple[bool, str] | None:
    """A program's own PASSED/FAILED line, if it prints one."""
    if re.search(r"FAIL", stdout):
        line = next(ln for ln in stdout.splitlines() if "FAIL" in ln)
        return False, f"its own check: {line.strip()[:80]}"
    m = re.search(r"^.*\bPASS(ED)?\b.*$", stdout, re.M)
    if m:
        return True, f"its own check: {m.group(0).strip()[:80]}"
    return None


def errors_zero(pattern: str, what: str) -> Callable[[str, Path], tuple[bool, str] | None]:
    """A check that reads an error count from stdout (`pattern` has one group)."""
    def check(stdout: str, _d: Path) -> tuple[bool, str] | None:
        m = re.search(pattern, stdout)
        if not m:
            return False, f"{what}: no count printed"
        return int(m.group(1)) == 0, f"{what}: {m.group(1)} errors"
    return check


def bfs_levels(graph: Path) -> list[int]:
    """Hop distances from the source of a graph in Rodinia's BFS format (-1: not reached)."""
    t = [int(x) for x in graph.read_text().split()]
    n = t[0]
    nodes = [(t[1 + 2 * i], t[2 + 2 * i]) for i in range(n)]
    source, m = t[1 + 2 * n], t[2 + 2 * n]
    dest = t[3 + 2 * n:3 + 2 * n + 2 * m:2]
    level, frontier = [-1] * n, [source]
    level[source] = 0
    while frontier:
        nxt = []
        for u in frontier:
            first, count = nodes[u]
            for v in dest[first:first + count]:
                if level[v] < 0:
                    level[v] = level[u] + 1
                    nxt.append(v)
        frontier = nxt
    return level


def dijkstra(graph: Path) -> list[int]:
    """Shortest-path costs (the edges' costs summed) from the source of a graph in Rodinia's BFS format."""
    t = [int(x) for x in graph.read_text().split()]
    n = t[0]
    source, rest = t[1 + 2 * n], t[3 + 2 * n:]
    dist: list[int] = [-1] * n
    heap = [(0, source)]
    while heap:
        c, u = heapq.heappop(heap)
        if dist[u] >= 0:
            continue
        dist[u] = c
        first, count = t[1 + 2 * u], t[2 + 2 * u]
        for j in range(first, first + count):
            if dist[rest[2 * j]] < 0:
                heapq.heappush(heap, (c + rest[2 * j + 1], rest[2 * j]))
    return dist


def check_parboil_bfs(_stdout: str, d: Path) -> tuple[bool, str] | None:
    """Parboil's bfs relaxes the edges' costs (atomicMin), so its output is shortest-path costs."""
    if not (d / "bfs.out").exists():
        return False, "no bfs.out"
    got = [int(ln.split()[1]) for ln in (d / "bfs.out").read_text().splitlines()[1:] if ln.strip()]
    ref = dijkstra(d / "graph4k.txt")
    bad = sum(g != r for g, r in zip(got, ref)) + abs(len(got) - len(ref))
    more = sum(g > r for g, r in zip(got, ref))
    return bad == 0, f"costs vs. Dijkstra in Python: {len(ref) - bad}/{len(ref)} equal ({more} larger)"


def check_bfs(graph: str, result: str) -> Callable[[str, Path], tuple[bool, str] | None]:
    """The costs the program writes (`result`: `i) cost:c` lines) against a breadth-first search in Python."""
    def check(_stdout: str, d: Path) -> tuple[bool, str] | None:
        if not (d / result).exists():
            return False, f"no {result}"
        lines = (d / result).read_text().splitlines()
        got = [int(re.findall(r"-?\d+", ln)[-1]) for ln in lines if ln.strip()]
        ref = bfs_levels(d / graph)
        bad = sum(g != r for g, r in zip(got, ref)) + abs(len(got) - len(ref))
        return bad == 0, f"levels vs. Python BFS: {len(ref) - bad}/{len(ref)} equal"
    return check


def check_mst(stdout: str, d: Path) -> tuple[bool, str] | None:
    """The weight and component count Lonestar's mst prints against Kruskal's in Python on the same .gr."""
    m = re.search(r"result: weight: (\d+), components: (\d+)", stdout)
    if not m:
        return False, "no result line"
    b = (d / "rand4k.gr").read_bytes()
    _, _, n, e = struct.unpack_from("<4Q", b)
    ends = struct.unpack_from(f"<{n}Q", b, 32)
    dests = struct.unpack_from(f"<{e}I", b, 32 + 8 * n)
    weights = struct.unpack_from(f"<{e}I", b, 32 + 8 * n + 4 * (e + e % 2))
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    edges = sorted((weights[i], u, dests[i]) for u in range(n) for i in range(ends[u - 1] if u else 0, ends[u]))
    total, comps = 0, n
    for w, u, v in edges:
        ru, rv = find(u), find(v)
        if ru != rv:
            parent[ru] = rv
            total += w
            comps -= 1
    got = (int(m.group(1)), int(m.group(2)))
    return got == (total, comps), f"weight {got[0]}, {got[1]} component(s) vs. Kruskal's {total}, {comps}"


def check_spmv(_stdout: str, d: Path) -> tuple[bool, str] | None:
    ok, note = tp.check_spmv(d / "out.bin", d.parent.parent / "common_src/convert-dataset/fidapm05.mtx",
                             d / "vec42.bin")
    return ok, "y vs. Python y = A x: " + note


# ---- the programs -----------------------------------------------------------------------------------------

@dataclass
class Prog:
    suite: str
    name: str
    path: str                                      # its directory, relative to src/cuda
    build: Callable[[Ctx, Path], Path]             # -> the executable
    inputs: Callable[[Ctx, Path], tuple[list[str], str]] | None  # -> (arguments, description); None: no args
    check: Callable[[str, Path], tuple[bool, str] | None] | None = None
    cwd: str | None = None                         # run directory relative to `path` (default: it)
    ignore: str | None = None                      # stdout lines matching this are not compared
    note: str | None = None                        # why its outputs may differ between schedules
    fixed_time: bool = False                       # it seeds its generator with time(0): run it with a fixed clock


def no_input(what: str) -> Callable[[Ctx, Path], tuple[list[str], str]]:
    def inputs(_ctx: Ctx, _d: Path) -> tuple[list[str], str]:
        raise NoInput(what)
    return inputs


def fixed(args: list[str], desc: str | None = None) -> Callable[[Ctx, Path], tuple[list[str], str]]:
    return lambda _ctx, _d: (args, desc or " ".join(args))


def mk(exe: str, *args: str) -> Callable[[Ctx, Path], Path]:
    return lambda ctx, d: make(ctx, d, exe, list(args))


# Rodinia 3.1 -----------------------------------------------------------------------------------------------

def in_bfs(_ctx: Ctx, d: Path) -> tuple[list[str], str]:
    rodinia_graph(d / "graph4k.txt", 4096, 11)
    return ["graph4k.txt"], "generated graph, 4,096 nodes"


def in_btree(_ctx: Ctx, d: Path) -> tuple[list[str], str]:
    rng = random.Random(7)
    keys = rng.sample(range(1, 1_000_000), 10000)
    (d / "keys.txt").write_text(f"{len(keys)}\n" + "".join(f"{k}\n" for k in keys))
    (d / "cmd.txt").write_text("j 100 100\nk 100\n")  # 100 range queries of 100, 100 point queries
    return ["file", "keys.txt", "command", "cmd.txt"], "10,000 keys; k 100, j 100 100"


def in_cfd(_ctx: Ctx, d: Path) -> tuple[list[str], str]:
    rng, n, lines = random.Random(5), 1024, []
    for i in range(n):
        nb = [i if i > 0 else 0, i + 2 if i + 1 < n else -1, 0, -1]  # 1-based; 0 wall, -1 far field
        parts = [f"{rng.uniform(0.5, 1.5):.6f}"]
        for x in nb:
            parts += [str(x)] + [f"{rng.uniform(-0.1, 0.1):.6f}" for _ in range(3)]
        lines.append(" ".join(parts))
    (d / "chain1024.domn").write_text(f"{n}\n" + "\n".join(lines) + "\n")
    return ["chain1024.domn"], "generated 1,024-element chain mesh"


def in_hotspot(_ctx: Ctx, d: Path) -> tuple[list[str], str]:
    float_lines(d / "temp_64", 64 * 64, 320, 340, 1)
    float_lines(d / "power_64", 64 * 64, 0, 0.01, 2)
    return ["64", "2", "2", "temp_64", "power_64", "output.out"], "64 x 64 grid, 2 steps (generated)"


def in_hotspot3d(_ctx: Ctx, d: Path) -> tuple[list[str], str]:
    float_lines(d / "power_64x8", 64 * 64 * 8, 0, 0.01, 3)
    float_lines(d / "temp_64x8", 64 * 64 * 8, 320, 340, 4)
    return ["64", "8", "5", "power_64x8", "temp_64x8", "output.out"], "64 x 64 x 8, 5 steps (generated)"


def in_nn(_ctx: Ctx, d: Path) -> tuple[list[str], str]:
    rng = random.Random(9)
    rows = []
    for i in range(2048):
        rows.append("%4d %2d %2d %2d %2d %-9s %5.1f %5.1f %4d %4d" % (
            1950 + i % 50, 1 + i % 12, 1 + i % 28, i % 24, i % 99, "NAME%d" % (i % 1000), rng.uniform(0, 60),
            rng.uniform(0, 180), rng.randint(0, 160), rng.randint(900, 1010)))
    (d / "cane2k.db").write_text("\n".join(rows) + "\n")
    (d / "filelist_gen").write_text("cane2k.db\n")
    return ["filelist_gen", "-r", "5", "-lat", "30", "-lng", "90"], "2,048 generated records"


def in_srad1(ctx: Ctx, d: Path) -> tuple[list[str], str]:
    rng = random.Random(13)
    img = d.parent.parent.parent / "data" / "srad" / "image.pgm"  # the path main.cu opens
    img.parent.mkdir(parents=True, exist_ok=True)
    rows, cols = 64, 64
    img.write_text(f"P2\n{cols} {rows}\n255\n" + "\n".join(" ".join(str(rng.randint(0, 255)) for _ in range(cols))
                                                          for _ in range(rows)) + "\n")
    return ["2", "0.5", str(rows), str(cols)], "generated 64 x 64 PGM, 2 iterations"


def in_mummer(_ctx: Ctx, d: Path) -> tuple[list[str], str]:
    rng = random.Random(21)
    ref = "".join(rng.choice("ACGT") for _ in range(20000))
    queries = []
    for _ in range(2000):
        p = rng.randrange(0, len(ref) - 25)
        q = list(ref[p:p + 25])
        q[rng.randrange(25)] = rng.choice("ACGT")
        queries.append("".join(q))
    fasta(d / "ref20k.fna", "ref", [ref])
    fasta(d / "q25.fna", "q", queries)
    return ["ref20k.fna", "q25.fna"], "random 20 kb reference, 2,000 25-bp reads"


def check_mummer(stdout: str, d: Path) -> tuple[bool, str] | None:
    matches, wrong = tp.verify_mum(stdout, d / "ref20k.fna", d / "q25.fna")
    return wrong == 0 and matches > 0, f"every match checked against the sequences: {matches}, {wrong} wrong"


def in_huffman(_ctx: Ctx, d: Path) -> tuple[list[str], str]:
    rng = random.Random(19)  # bytes of a skewed distribution, as its test files have (entropy about 3 bits)
    (d / "skew128k.in").write_bytes(bytes(min(int(rng.expovariate(0.35)), 255) for _ in range(128 * 1024)))
    return ["skew128k.in"], "128 KiB of skewed random bytes"


def in_dwt2d(_ctx: Ctx, d: Path) -> tuple[list[str], str]:
    """Rodinia's 192 x 192 size (at 64 x 64 its fdwt53 kernel reads 4 bytes before its buffer on the third level:
    a fault here, where a GPU reads whatever lies there)."""
    rng = random.Random(17)
    (d / "rand192.rgb").write_bytes(bytes(rng.randrange(256) for _ in range(192 * 192 * 3)))
    return ["rand192.rgb", "-d", "192x192", "-f", "-5", "-l", "3"], "random 192 x 192 RGB image, 3 levels"


def check_lud(stdout: str, _d: Path) -> tuple[bool, str] | None:
    if ">>>Verify<<<<" not in stdout:
        return False, "its own check (-v): not reached"
    bad = stdout.count("dismatch at")
    return bad == 0, f"its own check (-v, L x U = A within 1e-4): {bad} mismatches"


def rodinia_kmeans(ctx: Ctx, d: Path) -> tuple[list[str], str]:
    pts = tp.kmeans_input(d)
    (d / "kmeans_ref.json").write_text(json.dumps(tp.kmeans_reference(pts)))
    return ["-o", "-i", pts.name], "4,096 points x 34 features (texture_programs.py's)"


def check_kmeans(stdout: str, d: Path) -> tuple[bool, str] | None:
    ok, note = tp.check_kmeans(stdout, tuple(json.loads((d / "kmeans_ref.json").read_text())))
    return ok, "vs. Python k-means: " + note


def rodinia_hybridsort(ctx: Ctx, d: Path) -> tuple[list[str], str]:
    return [tp.hybridsort_input(d).name], "32,768 floats (texture_programs.py's)"


def build_copy(fn: Callable[[tp.Builder, Path], Path], name: str) -> Callable[[Ctx, Path], Path]:
    """texture_programs.py's build functions copy the program into a work directory of their own."""
    def build(ctx: Ctx, d: Path) -> Path:
        w = ctx.work / "tp"
        shutil.rmtree(w / name, ignore_errors=True)
        w.mkdir(exist_ok=True)
        try:
            out = fn(ctx.builder(), w)
        except RuntimeError as e:
            raise BuildError(first_error(str(e).split("\n", 2)[-1])) from None
        return out / "app"
    return build


R = "rodinia/3.1/cuda/"
RODINIA = [
    Prog("Rodinia 3.1", "b+tree", R + "b+tree", mk("b+tree.out"), in_btree),
    Prog("Rodinia 3.1", "backprop", R + "backprop", mk("bin/backprop", "-f", "Makefile_nvidia"),
         fixed(["4096"], "4096 input units")),
    Prog("Rodinia 3.1", "bfs", R + "bfs", mk("bin/bfs", "-f", "Makefile_nvidia"), in_bfs,
         check_bfs("graph4k.txt", "result.txt")),
    Prog("Rodinia 3.1", "cfd", R + "cfd", mk("bin/euler3d", "-f", "Makefile_nvidia"), in_cfd),
    Prog("Rodinia 3.1", "dwt2d", R + "dwt2d", mk("dwt2d"), in_dwt2d),
    Prog("Rodinia 3.1", "gaussian", R + "gaussian", mk("gaussian"), fixed(["-s", "64", "-q"], "-s 64")),
    Prog("Rodinia 3.1", "heartwall", R + "heartwall", mk("heartwall"),
         no_input("an AVI video (Rodinia's test.avi) and its AVI library's frame format")),
    Prog("Rodinia 3.1", "hotspot", R + "hotspot", mk("bin/hotspot", "-f", "Makefile_nvidia"), in_hotspot),
    Prog("Rodinia 3.1", "hotspot3D", R + "hotspot3D", mk("3D"), in_hotspot3d),
    Prog("Rodinia 3.1", "huffman", R + "huffman", mk("pavle", "TESTING=1"), in_huffman),  # its CPU comparison
    Prog("Rodinia 3.1", "hybridsort", R + "hybridsort", mk("hybridsort", "VERIFY=1"), rodinia_hybridsort,
         lambda out, _d: tp.check_hybridsort(out)),
    Prog("Rodinia 3.1", "kmeans", R + "kmeans", mk("bin/kmeans", "-f", "Makefile_nvidia"), rodinia_kmeans,
         check_kmeans),
    Prog("Rodinia 3.1", "lavaMD", R + "lavaMD", mk("lavaMD"), fixed(["-boxes1d", "2"])),
    Prog("Rodinia 3.1", "leukocyte", R + "leukocyte/CUDA", mk("leukocyte"),
         no_input("an AVI video (Rodinia's testfile.avi)")),
    Prog("Rodinia 3.1", "lud", R + "lud/cuda", mk("lud_cuda"), fixed(["-s", "64", "-v"]), check_lud),
    # PROFILE is the Makefile's hook on g++'s command line: ISPASS MUM's -fno-delete-null-pointer-checks
    # (texture_programs.py: the suffix tree tests `if (this)`, which GCC 6+ drops: a crash before any CUDA call)
    Prog("Rodinia 3.1", "mummergpu", R + "mummergpu", mk("bin/mummergpu", "PROFILE=-fno-delete-null-pointer-checks"),
         in_mummer, check_mummer),
    Prog("Rodinia 3.1", "myocyte", R + "myocyte", mk("myocyte.out"),
         no_input("Rodinia's ../../data/myocyte/y.txt and params.txt (the model's initial state, 91 values)")),
    Prog("Rodinia 3.1", "nn", R + "nn", mk("nn"), in_nn),
    Prog("Rodinia 3.1", "nw", R + "nw", mk("bin/needle", "-f", "Makefile_nvidia"), fixed(["256", "10"])),
    Prog("Rodinia 3.1", "particlefilter_naive", R + "particlefilter", mk("particlefilter_naive", "naive"),
         fixed(["-x", "64", "-y", "64", "-z", "5", "-np", "256"], "-x 64 -y 64 -z 5 -np 256, time() fixed"),
         fixed_time=True),  # its seeds are time(0) * i
    Prog("Rodinia 3.1", "particlefilter_float", R + "particlefilter", mk("particlefilter_float", "float"),
         fixed(["-x", "64", "-y", "64", "-z", "5", "-np", "256"], "-x 64 -y 64 -z 5 -np 256, time() fixed"),
         fixed_time=True),  # its seeds are time(0) * i
    Prog("Rodinia 3.1", "pathfinder", R + "pathfinder", mk("pathfinder"), fixed(["1000", "20", "5"])),
    Prog("Rodinia 3.1", "srad_v1", R + "srad/srad_v1", mk("srad"), in_srad1),
    Prog("Rodinia 3.1", "srad_v2", R + "srad/srad_v2", mk("bin/srad_v2", "-f", "Makefile_nvidia"),
         fixed(["128", "128", "0", "31", "0", "31", "0.5", "2"]),
         note="the top row of blocks loads its north neighbours from the row before the image, 512 bytes before "
              "the buffer, before the boundary code replaces them; a GPU reads whatever lies there"),
    Prog("Rodinia 3.1", "streamcluster", R + "streamcluster", mk("bin/streamcluster", "-f", "Makefile_nvidia"),
         fixed(["5", "10", "16", "1024", "1024", "100", "none", "output.txt", "1"])),
]


# ISPASS-2009 -----------------------------------------------------------------------------------------------

def ispass_build(name: str) -> Callable[[Ctx, Path], Path]:
    sources = next(s for n, s, _ in ISPASS_SOURCES if n == name)

    def build(ctx: Ctx, d: Path) -> Path:
        common = ctx.root / "src/cuda/common"
        return nvcc(ctx, d, sources, [f"-I{common / 'inc'}"], [f"-L{common / 'lib'}", "-lcutil_x86_64"])
    return build


def ispass_args(name: str) -> Callable[[Ctx, Path], tuple[list[str], str]]:
    args = next(a for n, _, a in ISPASS_SOURCES if n == name)

    def inputs(ctx: Ctx, d: Path) -> tuple[list[str], str]:
        if (ctx.data / name / "data").is_dir():
            shutil.copytree(ctx.data / name / "data", d / "data", dirs_exist_ok=True)
        return args, " ".join(args) if args else "none (README)"
    return inputs


def aes_inputs(ctx: Ctx, d: Path) -> tuple[list[str], str]:
    data = ctx.data / "AES" / "data"
    return ["e", "128", str(data / "output.bmp"), str(data / "key128.txt")], "release's output.bmp, key128.txt"


def aes_check(ctx_data: list[Path]) -> Callable[[str, Path], tuple[bool, str] | None]:
    def check(_out: str, d: Path) -> tuple[bool, str] | None:
        data = ctx_data[0] / "AES" / "data"
        ok, note = tp.check_aes(d, data / "output.bmp", data / "key128.txt")
        return ok, "vs. Python AES-128: " + note
    return check


def mum_inputs(ctx: Ctx, d: Path) -> tuple[list[str], str]:
    data = ctx.data / "MUM" / "data"
    reads = [str(data / "NC_003997.20k.fna"), str(data / "NC_003997_q25bp.50k.fna")]
    return reads, "release's 20k reference, 50k reads"


def mum_check(ctx_data: list[Path]) -> Callable[[str, Path], tuple[bool, str] | None]:
    def check(out: str, _d: Path) -> tuple[bool, str] | None:
        data = ctx_data[0] / "MUM" / "data"
        matches, wrong = tp.verify_mum(out, data / "NC_003997.20k.fna", data / "NC_003997_q25bp.50k.fna")
        return wrong == 0 and matches > 0, f"every match checked against the sequences: {matches}, {wrong} wrong"
    return check


def ispass_nn_build(ctx: Ctx, d: Path) -> Path:
    common = ctx.root / "src/cuda/common"
    return nvcc(ctx, d, ["NN.cu"], [f"-I{common / 'inc'}"], [f"-L{common / 'lib'}", "-lcutil_x86_64"])


def cp_build(ctx: Ctx, d: Path) -> Path:
    """ISPASS-2009 CP: the `cuda_short` variant its README names, with its own Parboil's parboil.c."""
    bench = d / "benchmarks" / "cp" / "src" / "cuda_short"
    return nvcc(ctx, bench, ["main.cu", "cuenergy_pre8_coalesce.cu", str(d / "common/src/parboil.c")],
                [f"-I{d / 'common/include'}"], ["-lm"])


DATA_DIR: list[Path] = [Path(".")]  # set in main (the checks read the release's inputs)
I = "ispass-2009/"
ISPASS = [
    Prog("ISPASS-2009", "AES", I + "AES", build_copy(tp.build_aes, "AES"), aes_inputs, aes_check(DATA_DIR)),
    Prog("ISPASS-2009", "BFS", I + "BFS", ispass_build("BFS"), ispass_args("BFS"),
         note="its one kernel marks the nodes it reaches as frontier in the same launch, so a later warp of that "
              "launch expands them too: the costs follow the warp schedule, and none is BFS's level"),
    Prog("ISPASS-2009", "CP", I + "CP", cp_build, fixed([], "built-in")),
    Prog("ISPASS-2009", "DG", I + "DG", mk("gpuDG3d"),
         no_input("an MPI installation and ParMetis 3.1 (built from 3rdParty) for its build and run")),
    Prog("ISPASS-2009", "LIB", I + "LIB", ispass_build("LIB"), ispass_args("LIB")),
    Prog("ISPASS-2009", "LPS", I + "LPS", ispass_build("LPS"), ispass_args("LPS")),
    Prog("ISPASS-2009", "MUM", I + "MUM", build_copy(tp.build_mum, "MUM"), mum_inputs, mum_check(DATA_DIR)),
    Prog("ISPASS-2009", "NN", I + "NN", ispass_nn_build,
         no_input("MNIST's t10k-images-idx3-ubyte, which the release's data directory lacks")),
    Prog("ISPASS-2009", "NQU", I + "NQU", ispass_build("NQU"), ispass_args("NQU")),
    Prog("ISPASS-2009", "RAY", I + "RAY", ispass_build("RAY"), ispass_args("RAY")),
    Prog("ISPASS-2009", "STO", I + "STO", ispass_build("STO"), ispass_args("STO")),
    Prog("ISPASS-2009", "WP", I + "WP", lambda ctx, d: make(ctx, d, "wsm5_standalone"),
         no_input("wsm5_in_010, which the release's data directory lacks")),
]


# Parboil ---------------------------------------------------------------------------------------------------

def parboil_build(bench: str, variant: str = "cuda") -> Callable[[Ctx, Path], Path]:
    """The objects `src/<variant>/Makefile` lists (SRCDIR_OBJS, and spmv's common_src), its APP_CUDACFLAGS, and
    Parboil's parboil_cuda.c, as the driver's common/mk/cuda.mk builds them."""
    def build(ctx: Ctx, d: Path) -> Path:
        src = d / "src" / variant
        mf = re.sub(r"#.*", "", (src / "Makefile").read_text())
        tools = re.search(r"^TOOLS_SRC\s*=\s*(\S+)", mf, re.M)
        if tools:
            mf = mf.replace("$(TOOLS_SRC)", str(d / tools.group(1)))
        objs = re.search(r"^SRCDIR_OBJS\s*=\s*(.*)$", mf, re.M)
        sources = []
        for o in (objs.group(1).split() if objs else []):
            stem = o[:-2]
            found = [p for p in (src / (stem + e) for e in (".cu", ".c", ".cc", ".cpp")) if p.exists()]
            if not found:
                raise BuildError(f"no source for {o} in {variant}")
            sources.append(found[0].name)
        extra = [f"-I{ctx.root / 'src/cuda/parboil/common/include'}"]
        for var in ("APP_CUDACFLAGS", "APP_CFLAGS", "APP_CXXFLAGS"):
            m = re.search(rf"^{var}\s*[+:]?=\s*(.*)$", mf, re.M)
            if m:
                for arg in m.group(1).split():
                    if arg.startswith(("-D", "-I")):
                        extra.append(arg)
                    elif arg.startswith("-f"):  # host compiler options
                        extra += ["-Xcompiler", arg]
        if tools:  # spmv's dataset converter, which its commontools.mk builds in
            sources += [str(p) for p in sorted((d / tools.group(1)).glob("*.c")) if p.name != "test.c"]
        sources.append(str(ctx.root / "src/cuda/parboil/common/src/parboil_cuda.c"))
        # Parboil's cuda.mk compiles the host files (.c, .cc) with gcc/g++ and no -O (c.default.mk), the .cu
        # files with nvcc. That matters: sgemm's io.cc falls off the end of a bool function, which GCC 12 at -O2
        # turns into a fall-through (std::bad_cast, an abort before any CUDA call).
        objs = []
        for f in sources:
            if f.endswith(".cu"):
                objs.append(f)
                continue
            obj = src / (Path(f).stem + ".host.o")
            flags = [a for a in extra if a != "-Xcompiler"]
            cmd = ["nice", "-n", "10", "gcc" if f.endswith(".c") else "g++", "-c", *flags,
                   f"-I{Path(ctx.nvcc).parent.parent / 'include'}", f, "-o", str(obj)]
            out = subprocess.run(cmd, cwd=src, capture_output=True, text=True, check=False)
            if out.returncode != 0:
                raise BuildError(first_error(out.stderr))
            objs.append(str(obj))
        return nvcc(ctx, src, objs, extra, ["-lm", "-lstdc++"])
    return build


def pb_sgemm(_ctx: Ctx, d: Path) -> tuple[list[str], str]:
    """A (128 x 96) and B^T (64 x 96) in Parboil's text format (rows cols, then the values column-major); the
    kernel's tiles need rows of A a multiple of 128, of B^T of 16."""
    rng = random.Random(3)
    for name, r, c in (("A.txt", 128, 96), ("BT.txt", 64, 96)):
        (d / name).write_text(f"{r} {c}\n" + "\n".join(f"{rng.randint(-8, 8) / 4}" for _ in range(r * c)) + "\n")
    return ["-i", "A.txt,BT.txt,BT.txt", "-o", "C.txt"], "generated A 128 x 96, B^T 64 x 96"


def check_sgemm(_stdout: str, d: Path) -> tuple[bool, str] | None:
    """C = A B against Python (quarter-integer entries: every product and sum is exact in float32)."""
    def read(name: str) -> tuple[int, int, list[float]]:
        t = (d / name).read_text().split()
        return int(t[0]), int(t[1]), [float(x) for x in t[2:]]
    if not (d / "C.txt").exists():
        return False, "no C.txt"
    m, k, a = read("A.txt")
    n, _, bt = read("BT.txt")
    rows, cols, c = read("C.txt")
    if (rows, cols, len(c)) != (m, n, m * n):
        return False, f"C is {rows} x {cols}, expected {m} x {n}"
    bad = sum(c[i + j * m] != sum(a[i + p * m] * bt[j + p * n] for p in range(k)) for i in range(m) for j in range(n))
    return bad == 0, f"C = A B vs. Python: {m * n - bad}/{m * n} equal"


def pb_spmv(_ctx: Ctx, d: Path) -> tuple[list[str], str]:
    conv = d.parent.parent / "common_src" / "convert-dataset"
    _, mtx, vec = tp.spmv_inputs(d, conv)[1]
    return ["-i", f"{mtx},{vec}", "-o", "out.bin"], "the collection's fidapm05.mtx, random vector"


def pb_stencil(_ctx: Ctx, d: Path) -> tuple[list[str], str]:
    rng = random.Random(8)
    n = 32 * 32 * 16
    (d / "in32.bin").write_bytes(struct.pack(f"<{n}f", *[rng.random() for _ in range(n)]))
    return ["-i", "in32.bin", "-o", "out.bin", "--", "32", "32", "16", "5"], "random 32 x 32 x 16 grid, 5 steps"


def pb_bfs(_ctx: Ctx, d: Path) -> tuple[list[str], str]:
    rodinia_graph(d / "graph4k.txt", 4096, 12)
    return ["-i", "graph4k.txt", "-o", "bfs.out"], "generated graph, 4,096 nodes (Rodinia/IIIT format)"


def pb_mriq(_ctx: Ctx, d: Path) -> tuple[list[str], str]:
    rng = random.Random(4)
    k, x = 512, 1024  # numK, numX, then kx ky kz x y z phiR phiI arrays (float32)
    arrays = [[rng.uniform(-1, 1) for _ in range(n)] for n in (k, k, k, x, x, x, k, k)]
    (d / "mriq.bin").write_bytes(struct.pack("<ii", k, x) + b"".join(struct.pack(f"<{len(a)}f", *a)
                                                                     for a in arrays))
    return ["-i", "mriq.bin", "-o", "out.bin"], "random 512 k-space samples, 1,024 voxels"


def pb_cutcp(_ctx: Ctx, d: Path) -> tuple[list[str], str]:
    rng = random.Random(6)
    rows = ["ATOM  %5d  O   WAT  %4d    %8.3f%8.3f%8.3f %7.4f %6.4f" % (
        i + 1, i // 3 + 1, rng.uniform(0, 20), rng.uniform(0, 20), rng.uniform(0, 20), rng.uniform(-1, 1), 1.5)
        for i in range(600)]
    (d / "atoms.pqr").write_text("\n".join(rows) + "\nEND\n")
    return ["-i", "atoms.pqr", "-o", "out.bin"], "600 random atoms (PQR)"


def pb_tpacf(_ctx: Ctx, d: Path) -> tuple[list[str], str]:
    raise NoInput("Parboil's tpacf data (a data file and 100 random-set files of 97,178 points; the count is "
                  "compiled in)")


PB = "parboil/benchmarks/"
PARBOIL = [
    Prog("Parboil", "bfs", PB + "bfs", parboil_build("bfs"), pb_bfs, check_parboil_bfs, cwd="src/cuda",
         note="a race in the program's 14-block kernel (BFS_kernel_multi_blk_inGPU): thread 0 alone flips "
              "gray_shade, a per-thread copy of a parameter, and the shared odd_time with no barrier after the "
              "other warps read it, so which nodes are queued again depends on the warp schedule; with every "
              "thread flipping its gray_shade and a __syncthreads() before odd_time flips, pdom gives "
              "Dijkstra's costs for all 4096 nodes (checked by hand, not by this script); graphs of 300 and "
              "1,000 nodes, which the one-block kernel finishes, give them under all three unchanged"),
    Prog("Parboil", "cutcp", PB + "cutcp", parboil_build("cutcp"), pb_cutcp, cwd="src/cuda"),
    Prog("Parboil", "histo", PB + "histo", parboil_build("histo"),
         no_input("Parboil's histo image (a binary of 996 x 1040 u32 pixels; the bins are sized for it)"),
         cwd="src/cuda"),
    Prog("Parboil", "lbm", PB + "lbm", parboil_build("lbm"),
         no_input("Parboil's 120_120_150_ldc.of obstacle file; the 120 x 120 x 150 grid is compiled in"),
         cwd="src/cuda"),
    Prog("Parboil", "mri-gridding", PB + "mri-gridding", parboil_build("mri-gridding"),
         no_input("Parboil's small.uks k-space file (binary, with its parameter header)"), cwd="src/cuda"),
    Prog("Parboil", "mri-q", PB + "mri-q", parboil_build("mri-q"), pb_mriq, cwd="src/cuda"),
    Prog("Parboil", "sad", PB + "sad", parboil_build("sad"),
         no_input("Parboil's reference.bin/frame.bin (QCIF video frames, binary)"), cwd="src/cuda",
         note="sad4.cu returns its texture reference by reference from a host function, get_ref(); with the "
              "compatibility header a reference is a __device__ variable"),
    Prog("Parboil", "sgemm", PB + "sgemm", parboil_build("sgemm"), pb_sgemm, check_sgemm, cwd="src/cuda"),
    Prog("Parboil", "spmv", PB + "spmv", parboil_build("spmv"), pb_spmv, check_spmv, cwd="src/cuda",
         note="its pipelined loop loads x[index] of the next entry before testing the row's length, and a "
              "padded entry's index reaches 4 bytes before x; cuda_base_tex, through a texture, runs (texture_"
              "programs.py)"),
    Prog("Parboil", "stencil", PB + "stencil", parboil_build("stencil"), pb_stencil, cwd="src/cuda"),
    Prog("Parboil", "tpacf", PB + "tpacf", parboil_build("tpacf"), pb_tpacf, cwd="src/cuda"),
]


# LonestarGPU 2.0 -------------------------------------------------------------------------------------------

def gr_input(_ctx: Ctx, d: Path) -> tuple[list[str], str]:
    lonestar_gr(d / "rand4k.gr", 4096, 6, 31)
    return ["rand4k.gr"], "generated symmetric .gr graph, 4,096 nodes"


def sp_input(ctx: Ctx, d: Path) -> tuple[list[str], str]:
    # its Makefile's `genformula` target; $(CC) is g++ there (apps/common.mk)
    out = subprocess.run(["nice", "-n", "10", "g++", "-O", "-o", "genformula", "genformula.c"], cwd=d,
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise NoInput("its formula generator genformula.c does not build: " + first_error(out.stderr))
    gen = subprocess.run(["./genformula", "7", "800", "250", "3", "f250.cnf"], cwd=d, capture_output=True,
                         text=True, check=False)  # seed M(clauses) N(literals) K(literals a clause) file
    if gen.returncode != 0 or not (d / "f250.cnf").exists():
        raise NoInput("genformula did not write a formula: " + (gen.stdout + gen.stderr)[:120])
    return ["f250.cnf", "3"], "random 3-SAT formula from its genformula (250 variables, 800 clauses)"


LS = "lonestargpu-2.0/apps/"
LS_ERRORS = r"no of errors = (\d+)"
BFS_WLC = ("it sizes drelax2's grid itself (cuda_launch_config.hpp's occupancy formula) from the device's "
           "properties (the gtx480 preset's 32,768 registers per block) and the kernel's registers: 0 blocks of 704")
LONESTAR = [Prog("LonestarGPU 2.0", f"bfs{v}", LS + "bfs", mk(f"bfs{v}", f"bfs{v}", "TOPLEVEL=../.."), gr_input,
                 errors_zero(LS_ERRORS, "its own verification"), ignore=r"^\d+\t[\d.]+$",  # `unroll<TAB>runtime`
                 note=BFS_WLC if v == "-wlc" else None)
            for v in ("", "-atomic", "-wlc", "-wla", "-wlw")] + [
    # NVCC_ADDITIONAL_ARGS is the Makefile's hook on nvcc's command line: its input generator's drnd() multiplies
    # signed ints past INT_MAX, which GCC 12 at -O3 turns into an endless rejection loop (main.cu:922) before
    # the first launch; -fwrapv gives the wrapping arithmetic the code expects
    Prog("LonestarGPU 2.0", "bh", LS + "bh", mk("bh", "NVCC_ADDITIONAL_ARGS=-Xcompiler -fwrapv"),
         fixed(["1000", "2", "0"], "1,000 bodies, 2 steps")),
    Prog("LonestarGPU 2.0", "dmr", LS + "dmr", mk("dmr"),
         no_input("a Triangle mesh (.node/.ele/.poly files of a refinable mesh, the suite's r*.1 inputs)")),
    Prog("LonestarGPU 2.0", "mst", LS + "mst", mk("mst"), gr_input, check_mst,
         ignore=r"^\s*iteration \d+, number of components|iterations = \d+"),  # these follow the racy merges
    Prog("LonestarGPU 2.0", "pta", LS + "pta", mk("pta"),
         no_input("points-to constraint files (nodes, constraints, HCD table) of the suite's inputs")),
    Prog("LonestarGPU 2.0", "nsp", LS + "sp", mk("nsp"), sp_input),
] + [Prog("LonestarGPU 2.0", f"sssp{v}", LS + "sssp", mk(f"sssp{v}", f"sssp{v}"), gr_input,
          errors_zero(LS_ERRORS, "its own verification"), ignore=r"^\s*iterations = \d+")  # relaxation rounds
     for v in ("", "-wlc", "-wln")]


# Pannotia --------------------------------------------------------------------------------------------------

def pannotia_build(sub: str, exe: str, variant: str | None) -> Callable[[Ctx, Path], Path]:
    def build(ctx: Ctx, d: Path) -> Path:
        return make(ctx, d, "bin/" + exe, [f"VARIANT={variant}"] if variant else [])
    return build


def pannotia_input(fmt: str | None) -> Callable[[Ctx, Path], tuple[list[str], str]]:
    def inputs(_ctx: Ctx, d: Path) -> tuple[list[str], str]:
        dimacs(d / "rand1k.gr", 1024, 4096, 41)
        return ["rand1k.gr", *([fmt] if fmt else [])], "generated DIMACS graph, 1,024 nodes, 4,096 arcs"
    return inputs


def metis_input(_ctx: Ctx, d: Path) -> tuple[list[str], str]:
    """pagerank_spmv reads Metis (format 1): only that parser fills the column counts it copies to the device
    (with DIMACS, format 0, it passes cudaMemcpy a NULL host pointer)."""
    metis(d / "rand1k.metis", 1024, 4096, 42)
    return ["rand1k.metis", "1"], "generated Metis graph, 1,024 nodes, 4,096 edges"


def fw_input(_ctx: Ctx, d: Path) -> tuple[list[str], str]:
    dimacs(d / "rand256.gr", 256, 1024, 43)
    return ["rand256.gr"], "generated DIMACS graph, 256 nodes, 1,024 arcs"


PN = "pannotia/"
PANNOTIA = [
    Prog("Pannotia", "bc", PN + "bc", pannotia_build("bc", "bc", None), pannotia_input(None)),
    Prog("Pannotia", "color_max", PN + "color", pannotia_build("color", "color_max", "MAX"), pannotia_input("0")),
    Prog("Pannotia", "color_maxmin", PN + "color", pannotia_build("color", "color_maxmin", "MAXMIN"),
         pannotia_input("0")),
    Prog("Pannotia", "fw", PN + "fw", pannotia_build("fw", "fw", "DEFAULT"), fw_input),
    Prog("Pannotia", "fw_block", PN + "fw", pannotia_build("fw", "fw_block", "BLOCK"), fw_input),
    Prog("Pannotia", "mis", PN + "mis", pannotia_build("mis", "mis", None), pannotia_input("0")),
    Prog("Pannotia", "pagerank", PN + "pagerank", pannotia_build("pagerank", "pagerank", "DEFAULT"),
         pannotia_input("0")),
    Prog("Pannotia", "pagerank_spmv", PN + "pagerank", pannotia_build("pagerank", "pagerank_spmv", "SPMV"),
         metis_input),
    Prog("Pannotia", "sssp_csr", PN + "sssp", pannotia_build("sssp", "sssp", "CSR"), pannotia_input("0")),
    Prog("Pannotia", "sssp_ell", PN + "sssp", pannotia_build("sssp", "sssp_ell", "ELL"), pannotia_input("0")),
]

PROGRAMS = RODINIA + ISPASS + PARBOIL + LONESTAR + PANNOTIA


# ---- running ----------------------------------------------------------------------------------------------

def snapshot(d: Path) -> dict[str, tuple[float, int]]:
    out = {}
    for root, _dirs, files in os.walk(d):
        for f in files:
            p = Path(root) / f
            try:
                st = p.lstat()
            except OSError:
                continue
            out[str(p.relative_to(d))] = (st.st_mtime, st.st_size)
    return out


FIXED_TIME = """/* time() returning one fixed instant, for programs that seed their generator with time(0) */
#include <time.h>
time_t time(time_t *t) { if (t) *t = 1262304000; return 1262304000; }
"""


def fixed_time_lib(ctx: Ctx) -> Path:
    lib = ctx.tools / "fixed_time.so"
    if not lib.exists():
        (ctx.tools / "fixed_time.c").write_text(FIXED_TIME)
        subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(lib), str(ctx.tools / "fixed_time.c")],
                       check=True)
    return lib


def run_one(ctx: Ctx, exe: Path, args: list[str], cwd: Path, mech: str, tag: str,
            env: dict[str, str] | None = None) -> dict:
    stats = ctx.work / "stats" / f"{tag}-{mech}.jsonl"
    stats.parent.mkdir(exist_ok=True)
    stats.unlink(missing_ok=True)
    cmd = ["nice", "-n", "10", ctx.binary, "exec", "--functional", "--mechanism", mech, "--max-instructions",
           str(ctx.max_instructions), "--stats", str(stats), "--", str(exe), *args]
    before = snapshot(cwd)
    try:
        out = subprocess.run(cmd, cwd=cwd, capture_output=True, check=False, timeout=ctx.timeout,
                             env={**os.environ, **(env or {})})
        rc, stdout, stderr = out.returncode, out.stdout.decode(errors="replace"), out.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        rc = None
        stdout = (e.stdout or b"").decode(errors="replace")
        stderr = (e.stderr or b"").decode(errors="replace")
    after = snapshot(cwd)
    files = {}
    for rel, st in after.items():
        if before.get(rel) != st:
            p = cwd / rel
            files[rel] = hashlib.sha256(p.read_bytes()).hexdigest()[:16] if p.is_file() else "?"
    launches = [json.loads(x) for x in stats.read_text().splitlines() if x.strip()] if stats.exists() else []
    return {"rc": rc, "stdout": stdout, "stderr": stderr, "files": files, "launches": len(launches),
            "cmd": " ".join(cmd[3:]), "new": [r for r in after if r not in before]}


SUMMARY = re.compile(r"^reconverge: \d+ launch(es)? of \d+ kernels?|^\s*(kernel|-{3,}|\|)|^\s*$")


def ranges(text: str) -> str:
    """`8,9,10,11` -> `8-11` in a list of lanes or threads."""
    def fold(m: re.Match) -> str:
        nums, out, start = [int(x) for x in m.group(0).split(",")], [], None
        for i, n in enumerate(nums):
            start = n if start is None else start
            if i + 1 == len(nums) or nums[i + 1] != n + 1:
                out.append(str(start) if start == n else f"{start}-{n}")
                start = None
        return ",".join(out)
    return re.sub(r"\d+(?:,\d+){3,}", fold, text)  # four or more: not a grid's or a block's dimensions


def runtime_message(r: dict) -> str:
    """The first line reconverge wrote that says why the program stopped, else the program's last line."""
    lines = [ln for ln in r["stderr"].splitlines() if not SUMMARY.search(ln)]
    for pat in (r"not supported", r"unsupported", r"panick", r"internal error", r"deadlock", r"limit",
                r"fault|out-of-bounds|out of bounds|misaligned|illegal", r"killed by signal", r"^reconverge: "):
        for ln in lines:
            if re.search(pat, ln, re.I):
                note = next((n.strip() for n in lines[lines.index(ln) + 1:lines.index(ln) + 3]
                             if n.strip().startswith("note: nearest allocation")), "")
                return ranges(ln.strip())[:300] + (f" ({note[6:]})" if note else "")
    own = lines + [ln for ln in r["stdout"].splitlines() if ln.strip()]
    return own[-1].strip()[:240] if own else ""


def normal(stdout: str, ignore: str | None) -> list[str]:
    return [ln for ln in stdout.splitlines() if not TIMING.search(ln) and not (ignore and re.search(ignore, ln))]


def outcome_of(r: dict) -> str:
    if r["rc"] is None:
        return "timeout"
    return "ok" if r["rc"] == 0 else f"exit {r['rc']}"


def census(ctx: Ctx, prog: Prog) -> dict:
    row = {"suite": prog.suite, "name": prog.name, "build": "", "input": "", "runs": {}, "check": "",
           "launches": "", "outcome": "", "detail": ""}
    d = ctx.root / "src/cuda" / prog.path
    try:
        exe = prog.build(ctx, d)
        row["build"] = "ok"
    except BuildError as e:
        row["build"] = "fails"
        row["outcome"] = f"build fails: {e}" + (f" ({prog.note})" if prog.note else "")
        return row
    except (OSError, subprocess.SubprocessError) as e:
        row["build"] = "fails"
        row["outcome"] = f"build fails: {e}"
        return row
    # texture_programs.py's builds run where they built; the others in the program's directory.
    cwd = exe.parent if exe.is_relative_to(ctx.work / "tp") else d / (prog.cwd or "")
    try:
        args, desc = prog.inputs(ctx, cwd) if prog.inputs else ([], "none")
        row["input"] = desc
    except NoInput as e:
        row["input"] = "-"
        row["outcome"] = f"no input: {e}"
        return row
    runs: dict[str, dict] = {}
    verdicts: dict[str, tuple[bool, str] | None] = {}
    for mech in MECHS:
        r = run_one(ctx, exe, args, cwd, mech, prog.name,
                    {"LD_PRELOAD": str(fixed_time_lib(ctx))} if prog.fixed_time else None)
        runs[mech] = r
        row["runs"][mech] = outcome_of(r)
        if ctx.verbose:
            print(f"  {mech}: {outcome_of(r)}, {r['launches']} launches; {runtime_message(r)}",
                  file=sys.stderr)
        if r["rc"] == 0:  # checks read what the run wrote
            verdicts[mech] = prog.check(r["stdout"], cwd) if prog.check else own_verdict(r["stdout"])
        for rel in r["new"]:  # the next mechanism starts from the same directory
            if (cwd / rel).is_file():
                (cwd / rel).unlink()
        if r["rc"] is None:  # a timeout: the other mechanisms would take as long
            break
    base = runs["pdom"]
    row["launches"] = base["launches"]
    failing = [m for m in runs if runs[m]["rc"] != 0]
    if failing:
        bad = failing[0]
        r = runs[bad]
        fine = [m for m in runs if m not in failing]
        where = f" (under {', '.join(failing)}; {', '.join(fine)} run{'s' if len(fine) == 1 else ''})" if fine else ""
        msg = runtime_message(r)
        if r["rc"] is None:
            row["outcome"] = f"too slow: over {ctx.timeout} s{where}, {r['launches']} launches done"
        elif r["rc"] == 4:
            row["outcome"] = f"too slow: a launch reached --max-instructions {ctx.max_instructions}{where}"
        elif r["rc"] == 3:  # a deadlock: where, under each mechanism that stopped
            kernels = []
            for m in failing:
                k = re.search(r"launch \d+ of `([^`]+)`", runtime_message(runs[m]))
                kernels.append(f"{m} in `{k.group(1) if k else '?'}`")
            detail = re.sub(r"^.*?error: ", "", msg)
            row["outcome"] = f"runtime stops: SIMT deadlock under {', '.join(kernels)}{where}: {detail}"
        elif r["rc"] in (2, 3) or r["rc"] >= 128 or msg.startswith("reconverge"):
            row["outcome"] = f"runtime stops: {msg or 'exit ' + str(r['rc'])}{where}"
        else:
            row["outcome"] = f"runtime stops: the program exits {r['rc']}{where}: {msg}"
        if prog.note:
            row["outcome"] += f" ({prog.note})"
        row["detail"] = r["cmd"]
        return row
    diffs = []
    ref_out = normal(base["stdout"], prog.ignore)
    for mech in MECHS[1:]:
        other = normal(runs[mech]["stdout"], prog.ignore)
        if other != ref_out:
            first = next((i for i, (a, b) in enumerate(zip(ref_out, other)) if a != b), min(len(ref_out), len(other)))
            a = ref_out[first] if first < len(ref_out) else "<end>"
            b = other[first] if first < len(other) else "<end>"
            diffs.append(f"{mech} stdout line {first + 1}: `{b.strip()[:60]}` vs pdom `{a.strip()[:60]}`")
        if runs[mech]["files"] != base["files"]:
            names = sorted(k for k in set(base["files"]) | set(runs[mech]["files"])
                           if base["files"].get(k) != runs[mech]["files"].get(k))
            diffs.append(f"{mech} file {', '.join(names[:3])}")
    verdict = verdicts.get("pdom")
    failed = [f"{m}: {v[1]}" for m, v in verdicts.items() if v is not None and not v[0]]
    if verdict is not None:
        row["check"] = verdict[1]
    if failed:
        row["outcome"] = "runs, differs: the check fails under " + "; ".join(failed)
        if diffs:
            row["outcome"] += "; " + "; ".join(diffs)
        if prog.note:
            row["outcome"] += f" ({prog.note})"
    elif diffs:
        row["outcome"] = "runs, differs: " + "; ".join(diffs) + (f" ({prog.note})" if prog.note else "")
    elif verdict is not None:
        row["outcome"] = "runs, checked"
    else:
        row["outcome"] = "runs, consistent"
    n_files = len(base["files"])
    row["detail"] = f"{n_files} output file{'s' if n_files != 1 else ''} compared" if n_files else ""
    return row


# ---- the report -------------------------------------------------------------------------------------------

def md(s: object) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def tables(rows: list[dict]) -> str:
    out = []
    for suite in SUITES:
        mine = [r for r in rows if r["suite"] == suite]
        if not mine:
            continue
        counts: dict[str, int] = {}
        for r in mine:
            k = r["outcome"].split(":")[0]
            counts[k] = counts.get(k, 0) + 1
        out.append(f"### {suite}\n")
        out.append(", ".join(f"{k}: {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])) +
                   f" (of {len(mine)}).\n")
        out.append("| program | build | input | pdom | its | tbc | check | launches | outcome |")
        out.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in mine:
            cells = [r["runs"].get(m, "-" if r["runs"] else "") for m in MECHS]
            out.append("| " + " | ".join(md(x) for x in [r["name"], r["build"], r["input"], *cells, r["check"],
                                                         r["launches"], r["outcome"]]) + " |")
        out.append("")
    return "\n".join(out)


def page(rows: list[dict], cuda: str, argv: str) -> str:
    total: dict[str, int] = {}
    for r in rows:
        k = r["outcome"].split(":")[0]
        total[k] = total.get(k, 0) + 1
    return f"""# The classic CUDA suites under `exec`: a census

Which programs of Rodinia 3.1, ISPASS-2009, Parboil, LonestarGPU 2.0 and Pannotia (as
accel-sim/gpu-app-collection holds them) build with CUDA 13 and run unmodified under `reconverge exec`
today, and why the others do not. `scripts/suite_census.py` builds each program as its own build files do,
with `nvcc -cudart shared -gencode arch=compute_80,code=compute_80 -include reconverge_compat.h`
([Programs written for CUDA 11 and earlier](cudart.md#programs-written-for-cuda-11-and-earlier)), runs it
functionally under pdom, its and tbc (`--functional --max-instructions`, a wall-clock limit per run), and
compares the runs: standard output less its timing lines, and every file the program writes. Its docstring
explains the inputs (the suites' data sets are downloaded separately and are in neither repository, so most
inputs are small generated ones, from fixed seeds) and the classification. The suites' sources are not in CI,
so this page is regenerated by hand:

```
{argv}
```

Made {datetime.date.today().isoformat()} with {cuda}. Over all {len(rows)} programs:
{", ".join(f"{k}: {v}" for k, v in sorted(total.items(), key=lambda kv: -kv[1]))}.

A mechanism column says how its run ended (`ok`, `exit N`, `timeout`; `-`: not run after a timeout).
`launches` counts pdom's. `check` names the check (pdom's result; it runs after every mechanism's run).

{tables(rows)}"""


def nvcc_version(nvcc_path: str) -> str:
    out = subprocess.run([nvcc_path, "--version"], capture_output=True, text=True, check=False).stdout
    m = re.search(r"release ([\d.]+), (V[\d.]+)", out)
    return f"CUDA {m.group(1)} ({m.group(2)})" if m else "CUDA (unknown version)"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--apps", required=True, type=Path, help="gpu-app-collection: a checkout or its git directory")
    ap.add_argument("--data", required=True, type=Path,
                    help="GPGPU-Sim 2.1.1b's ispass2009-benchmarks/benchmarks/CUDA, or the release's git directory")
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "reconverge"))
    ap.add_argument("--nvcc", default=None)
    ap.add_argument("--header", type=Path, default=None, help="default: `reconverge cuda-include`'s header")
    ap.add_argument("--work", type=Path, default=None, help="build and run here, and keep it")
    ap.add_argument("--only", default=None, help="comma-separated program names")
    ap.add_argument("--suite", default=None, help="one suite (a prefix of its name: rodinia, ispass, ...)")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per run (default 120)")
    ap.add_argument("--max-instructions", type=int, default=200_000_000,
                    help="warp instructions one launch may issue (default 2e8)")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows as JSON here")
    ap.add_argument("--from-json", type=Path, default=None,
                    help="build and run nothing: print (and with --write, write) the rows of an earlier --json")
    ap.add_argument("--write", action="store_true", help="write docs/suite-census.md")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    binary = str(Path(a.bin).resolve())
    nvcc_path = a.nvcc or tp.find_nvcc()
    if a.from_json:
        return report(json.loads(a.from_json.read_text()), nvcc_path, a.write)
    ask = lambda what: subprocess.run([binary, what], capture_output=True, text=True, check=True).stdout.strip()
    header = a.header.resolve() if a.header else Path(ask("cuda-include")) / "reconverge_compat.h"
    with tempfile.TemporaryDirectory() as tmp:
        work = (a.work or Path(tmp)).resolve()
        work.mkdir(parents=True, exist_ok=True)
        root = tree(a.apps.resolve(), PREFIXES, work / "apps")
        data = a.data.resolve()
        if (data / "objects").is_dir():
            rel = "ispass2009-benchmarks/benchmarks/CUDA"
            if not (work / "data" / rel).is_dir():
                extract(data, [rel], work / "data")
            data = work / "data" / rel
        DATA_DIR[0] = data
        ctx = Ctx(binary, nvcc_path, header, ask("cuda-lib"), root, data, work, a.timeout, a.max_instructions,
                  a.verbose)
        only = set(a.only.split(",")) if a.only else None
        rows = []
        for prog in PROGRAMS:
            if only and prog.name not in only:
                continue
            if a.suite and not prog.suite.lower().startswith(a.suite.lower()):
                continue
            print(f"[census] {prog.suite} {prog.name}", file=sys.stderr, flush=True)
            row = census(ctx, prog)
            print(f"[census]   -> {row['outcome']}", file=sys.stderr, flush=True)
            rows.append(row)
        if a.json:
            a.json.write_text(json.dumps(rows, indent=1))
    return report(rows, nvcc_path, a.write)


def report(rows: list[dict], nvcc_path: str, write: bool) -> int:
    argv = "python3 scripts/suite_census.py --apps gpu-app-collection --data ispass2009-benchmarks/benchmarks/CUDA"
    print(tables(rows))
    if write:
        DOC.write_text(page(rows, nvcc_version(nvcc_path), argv + " --write"))
        print(f"wrote {DOC.relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
