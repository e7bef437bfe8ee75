"""The README's Python example runs as written: the first ```python block of its "### Python" section,
executed from the repository's root, computes Rodinia's BFS costs (checked against NumPy) and prints the
combined statistics and a comparison."""

import contextlib
import io
import os
import re

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def readme_python_block() -> str:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("### Python\n"):]
    section = section[: section.index("\n### ", 1)]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert blocks, "the README's Python section has no ```python block"
    return blocks[0]


def bfs(nodes, edges, source=0):
    cost = np.full(len(nodes), -1, np.int32)
    cost[source], frontier = 0, [source]
    while frontier:
        nxt = []
        for u in frontier:
            start, count = nodes[u]
            for v in edges[start:start + count]:
                if cost[v] < 0:
                    cost[v] = cost[u] + 1
                    nxt.append(v)
        frontier = nxt
    return cost


def test_the_readme_python_example_runs(monkeypatch):
    code = readme_python_block()
    monkeypatch.chdir(ROOT)
    namespace = {"__name__": "readme"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md (### Python)", "exec"), namespace)
    ns = namespace
    assert (ns["d_cost"].get() == bfs(ns["nodes"], ns["edges"])).all()
    stats = ns["gpu"].stats
    assert stats["launches"] >= 4 and stats["launches"] % 2 == 0
    assert stats["cycles"] > 0 and 0 < stats["simd_efficiency"] <= 1
    assert ns["glob"].get_global("table", device=ns["gpu"]).view(np.int32).tolist() == [10, 20, 30, 40]
    printed = out.getvalue()
    assert "fir" in printed and "tbc" in printed, printed
