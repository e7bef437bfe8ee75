"""Sweeps of kernels × mechanisms × warp sizes × configurations, on this machine or on a Ray cluster.

``sweep(...)`` returns a pandas DataFrame with one row per run: the columns of ``reconverge compare --csv``
plus the sweep keys (``sweep_kernel``, ``sweep_mechanism``, ``sweep_warp_size``, ``sweep_config``). With
``backend="ray"`` every run is a Ray task on whatever cluster ``ray.init()`` connected to (start one with
``ray.init(address="auto")`` on a cluster, or let ``sweep`` start a local one); the kernels and their
inputs travel through Ray's object store, and the rows are bit for bit those of ``backend="local"``.
``speedup_over_pdom`` is filled as ``compare`` fills it, from the sweep's own pdom rows (same kernel label,
configuration as given and warp size); ``summary(df)`` gives the means over one kernel set.
``results="sweep.parquet"`` makes a sweep resumable: finished rows are kept there (written after every
run) and a rerun skips them.
"""

from __future__ import annotations

import io
import itertools
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core

KEYS = ["sweep_kernel", "sweep_config", "sweep_warp_size", "sweep_mechanism"]


@dataclass
class Launch:
    """A launch of your own for :func:`sweep`: PTX or CUDA source (``path`` or ``code``), the kernel, grid,
    block and arguments (NumPy arrays become device buffers, NumPy scalars and numbers are passed by
    value). ``name`` labels its rows."""

    name: str
    kernel: str
    grid: Any
    block: Any
    args: Sequence[Any]
    path: Optional[str] = None
    code: Optional[str] = None
    options: Sequence[str] = field(default_factory=tuple)


Job = Tuple[Union[str, Launch], str, int, str]


def _files(kernels_dir: str) -> Dict[str, bytes]:
    """Every file of the built-in kernel collection, by path relative to it (about 2 MB)."""
    out = {}
    for root, _, names in os.walk(kernels_dir):
        for n in names:
            full = os.path.join(root, n)
            out[os.path.relpath(full, kernels_dir)] = open(full, "rb").read()
    return out


_MATERIALISED: Dict[int, str] = {}


def _materialise(files: Dict[str, bytes]) -> str:
    """The kernel collection as a directory on this worker (written once per process and collection)."""
    key = hash(tuple(sorted((k, len(v), hash(v[:64])) for k, v in files.items())))
    if key not in _MATERIALISED:
        d = tempfile.mkdtemp(prefix="reconverge-kernels-")
        for rel, data in files.items():
            p = os.path.join(d, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(data)
        _MATERIALISED[key] = d
    return _MATERIALISED[key]


def _row(job: Job, kernels: Optional[Dict[str, bytes]], kernels_dir: Optional[str]) -> Dict[str, Any]:
    """Runs one job and returns its row."""
    import pandas as pd

    from . import Device, Module

    kernel, config, warp, mech = job
    functional = config == "functional"
    if isinstance(kernel, Launch):
        mod = Module(path=kernel.path, code=kernel.code, options=kernel.options)
        gpu = Device(config="gtx480" if functional else config, mechanism=mech, warp_size=warp, functional=functional)
        args = [gpu.to_device(a) if isinstance(a, np.ndarray) and a.ndim > 0 else a for a in kernel.args]
        _, record = mod.get_function(kernel.kernel)._launch(kernel.grid, kernel.block, args, gpu, 0, False, False)
        name = kernel.name
    else:
        d = kernels_dir if kernels_dir is not None else _materialise(kernels)
        record = _core.compare(d, dict(kernels=[kernel], mechanisms=[mech], warp_sizes=[warp],
                                       configs=[] if functional else [config], functional=functional, threads=1))
        name = kernel
    rows = pd.read_csv(io.StringIO(record)).to_dict("records")
    row = rows[0] if rows else {"outcome": "broken"}
    row.update({"sweep_kernel": name, "sweep_config": config, "sweep_warp_size": warp, "sweep_mechanism": mech})
    return row


def _key(job: Job) -> Tuple[str, str, int, str]:
    k, c, w, m = job
    return (k.name if isinstance(k, Launch) else k, c, int(w), m)


def sweep(kernels: Iterable[Union[str, Launch]], mechanisms: Iterable[str], warp_sizes: Iterable[int] = (32,),
          configs: Iterable[str] = ("gtx480",), backend: str = "local", results: Optional[str] = None,
          kernels_dir: Optional[str] = None, progress: Optional[bool] = None):
    """Every combination of ``kernels`` (built-in names such as ``"bfs"``, with their manifest inputs, or
    :class:`Launch` descriptions), ``mechanisms``, ``warp_sizes`` and ``configs`` (presets, TOML files, or
    ``"functional"`` for no timing model), run on ``backend`` (``"local"`` or ``"ray"``); a DataFrame with
    one row per run, in a fixed order. ``results``: a Parquet file that keeps finished rows across reruns.
    ``progress``: a progress line on standard error (default: only when it is a terminal)."""
    import pandas as pd

    from . import InvalidInput, _kernels_dir

    from . import _warp_size

    if backend not in ("local", "ray"):
        raise InvalidInput(f"backend `{backend}`: expected local or ray")
    kernels, configs, mechanisms = list(kernels), list(configs), list(mechanisms)
    warp_sizes = [_warp_size(w) for w in warp_sizes]
    for i, m in enumerate(mechanisms):
        if not isinstance(m, str):
            raise InvalidInput(f"a mechanism is a name, not {m!r}")
        mechanisms[i] = _core.mechanism_name(m)
    for c in configs:
        if not isinstance(c, str):
            raise InvalidInput(f"a config is a preset name, a TOML file or \"functional\", not {c!r}")
        if c != "functional":
            _core.check_config(c)
    for k in kernels:
        if not isinstance(k, (str, Launch)):
            raise InvalidInput(f"a kernel is a built-in kernel's name or a reconverge.Launch, not {k!r}")
    if results is not None:
        if not isinstance(results, (str, os.PathLike)):
            raise InvalidInput(f"results must be a file path, not {type(results).__name__}")
        if os.path.isdir(results):
            raise InvalidInput(f"results `{results}` is a directory; give a Parquet file's path")
    jobs: List[Job] = list(itertools.product(kernels, configs, warp_sizes, mechanisms))
    builtin = any(isinstance(j[0], str) for j in jobs)
    kdir = _kernels_dir(kernels_dir) if builtin else None
    done: Dict[Tuple, Dict[str, Any]] = {}
    if results and os.path.exists(results):
        try:
            previous = pd.read_parquet(results).to_dict("records")
        except Exception as e:  # a file that is not a sweep's Parquet file
            raise InvalidInput(f"results `{results}` is not a sweep's Parquet file: {e}") from None
        for r in previous:
            if not all(k in r for k in KEYS):
                raise InvalidInput(f"results `{results}` is not a sweep's Parquet file (no {KEYS} columns)")
            done[(r["sweep_kernel"], r["sweep_config"], int(r["sweep_warp_size"]), r["sweep_mechanism"])] = r
    todo = [j for j in jobs if _key(j) not in done]

    start = time.monotonic()
    show = progress if progress is not None else sys.stderr.isatty()

    def save():
        if results:
            try:
                pd.DataFrame(list(done.values())).to_parquet(results, index=False)
            except Exception as e:  # pyarrow's errors, a file that cannot be written
                raise InvalidInput(f"cannot write results `{results}`: {e}") from None
        if show:
            n = sum(1 for j in todo if _key(j) in done)
            sys.stderr.write(f"\r{n}/{len(todo)} runs, {time.monotonic() - start:.0f} s ({backend})")
            if n == len(todo):
                sys.stderr.write("\n")
            sys.stderr.flush()

    if backend == "local":
        for j in todo:
            done[_key(j)] = _row(j, None, kdir)
            save()
    elif todo:
        import ray

        if not ray.is_initialized():
            ray.init()
        files = ray.put(_files(kdir)) if kdir else None
        task = ray.remote(_remote_row)
        pending = {task.remote(j, files): j for j in todo}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                j = pending.pop(ref)
                done[_key(j)] = ray.get(ref)
                save()
    df = pd.DataFrame([done[_key(j)] for j in jobs])
    if len(df):
        df["speedup_over_pdom"] = _core.speedups_over_pdom(_run_keys(df))
    df.attrs["ran"] = len(todo)
    return df


def _run_keys(df) -> List[Tuple[str, str, int, str, str, Optional[int]]]:
    """Each row's (kernel, configuration, warp size, mechanism, outcome, cycles), with the sweep's labels
    when the table is a sweep's (a :class:`Launch`'s name, the configuration as given) and ``compare``'s
    columns otherwise."""
    sweep_keys = all(k in df.columns for k in KEYS)
    cols = KEYS if sweep_keys else ["kernel", "config", "warp_size", "mechanism"]
    if "cycles" not in df.columns:
        raise ValueError("the table has no `cycles` column: speedups need timed runs")
    out = []
    for k, c, w, m, o, cy in zip(*(df[x] for x in cols), df["outcome"], df["cycles"]):
        out.append((str(k), str(c), int(w), str(m), str(o), None if cy is None or cy != cy else int(cy)))
    return out


def summary(df):
    """The speedup summary of a table of runs (``rc.compare``'s or ``rc.sweep``'s), as ``reconverge compare
    --csv --summary`` prints it: one row per configuration, warp size and mechanism with the geometric mean,
    median, min and max of ``speedup_over_pdom`` over the kernels *every* mechanism of that configuration and
    warp size completed, how many kernels that is, and the kernels left out with why."""
    import pandas as pd

    text = _core.speedup_summary(_run_keys(df))
    return pd.read_csv(io.StringIO(text)) if text.strip() else pd.DataFrame()


def _remote_row(job: Job, files: Optional[Dict[str, bytes]]) -> Dict[str, Any]:
    """A Ray task: one run, with the kernel collection from the object store."""
    return _row(job, files, None)
