"""Sweeps of kernels × mechanisms × warp sizes × configurations, on this machine or on a Ray cluster.

``sweep(...)`` returns a pandas DataFrame with one row per run: the columns of ``reconverge compare --csv``
plus the sweep keys (``sweep_kernel``, ``sweep_mechanism``, ``sweep_warp_size``, ``sweep_config``). With
``backend="ray"`` every run is a Ray task on whatever cluster ``ray.init()`` connected to (start one with
``ray.init(address="auto")`` on a cluster, or let ``sweep`` start a local one); the kernels and their
inputs travel through Ray's object store, and the rows are bit for bit those of ``backend="local"``.
``speedup_over_pdom`` is filled as ``compare`` fills it, from the sweep's own pdom rows (same kernel label,
configuration as given and warp size); ``summary(df)`` gives the means over one kernel set.
``results="sweep.parquet"`` makes a sweep resumable: finished rows are kept there (written after every
run) and a rerun skips them. Whole CUDA programs (:class:`Program`) go wherever a kernel does: a program's
run gives one row per launch (``launch`` = 1, 2, ...; ``sweep_kernel`` is the program's name), and its
``speedup_over_pdom`` compares each launch with the same launch under pdom.
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
from . import program as _program
from .program import Program

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


Job = Tuple[Union[str, Launch, Program], str, int, str]


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


def _rows(job: Job, kernels: Optional[Dict[str, bytes]], kernels_dir: Optional[str],
          shim: Optional[str] = None) -> List[Dict[str, Any]]:
    """Runs one job and returns its rows: one, or a program's one per launch."""
    import pandas as pd

    from . import Device, Module

    kernel, config, warp, mech = job
    functional = config == "functional"
    labels = {"sweep_kernel": _name(kernel), "sweep_config": config, "sweep_warp_size": warp, "sweep_mechanism": mech}
    if isinstance(kernel, Program):
        rows = _program.sweep_rows(kernel, mech, config, warp, shim)
        for row in rows:
            row.update(labels)
        return rows
    if isinstance(kernel, Launch):
        mod = Module(path=kernel.path, code=kernel.code, options=kernel.options)
        gpu = Device(config="gtx480" if functional else config, mechanism=mech, warp_size=warp, functional=functional)
        args = [gpu.to_device(a) if isinstance(a, np.ndarray) and a.ndim > 0 else a for a in kernel.args]
        _, record = mod.get_function(kernel.kernel)._launch(kernel.grid, kernel.block, args, gpu, 0, False, False)
    else:
        d = kernels_dir if kernels_dir is not None else _materialise(kernels)
        record = _core.compare(d, dict(kernels=[kernel], mechanisms=[mech], warp_sizes=[warp],
                                       configs=[] if functional else [config], functional=functional, threads=1))
    rows = pd.read_csv(io.StringIO(record)).to_dict("records")
    row = rows[0] if rows else {"outcome": "broken"}
    row.update(labels)
    return [row]


def _name(kernel: Union[str, Launch, Program]) -> str:
    return kernel.name if isinstance(kernel, (Launch, Program)) else kernel


def _key(job: Job) -> Tuple[str, str, int, str]:
    k, c, w, m = job
    return (_name(k), c, int(w), m)


def sweep(kernels: Iterable[Union[str, Launch, Program]], mechanisms: Iterable[str],
          warp_sizes: Iterable[int] = (32,), configs: Iterable[str] = ("gtx480",), backend: str = "local",
          results: Optional[str] = None, kernels_dir: Optional[str] = None, progress: Optional[bool] = None):
    """Every combination of ``kernels`` (built-in names such as ``"bfs"``, with their manifest inputs,
    :class:`Launch` descriptions, or whole CUDA programs as :class:`Program`), ``mechanisms``,
    ``warp_sizes`` and ``configs`` (presets, TOML files, or ``"functional"`` for no timing model), run on
    ``backend`` (``"local"`` or ``"ray"``); a DataFrame with one row per run (a program: one per launch),
    in a fixed order. ``results``: a Parquet file that keeps finished rows across reruns.
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
        if not isinstance(k, (str, Launch, Program)):
            raise InvalidInput(f"a kernel is a built-in kernel's name, a reconverge.Launch or a reconverge.Program, "
                               f"not {k!r}")
    if results is not None:
        if not isinstance(results, (str, os.PathLike)):
            raise InvalidInput(f"results must be a file path, not {type(results).__name__}")
        if os.path.isdir(results):
            raise InvalidInput(f"results `{results}` is a directory; give a Parquet file's path")
    jobs: List[Job] = list(itertools.product(kernels, configs, warp_sizes, mechanisms))
    builtin = any(isinstance(j[0], str) for j in jobs)
    kdir = _kernels_dir(kernels_dir) if builtin else None
    done: Dict[Tuple, List[Dict[str, Any]]] = {}
    if results and os.path.exists(results):
        try:
            previous = pd.read_parquet(results).to_dict("records")
        except Exception as e:  # a file that is not a sweep's Parquet file
            raise InvalidInput(f"results `{results}` is not a sweep's Parquet file: {e}") from None
        for r in previous:
            if not all(k in r for k in KEYS):
                raise InvalidInput(f"results `{results}` is not a sweep's Parquet file (no {KEYS} columns)")
            key = (r["sweep_kernel"], r["sweep_config"], int(r["sweep_warp_size"]), r["sweep_mechanism"])
            done.setdefault(key, []).append(_from_parquet(r))
    todo = [j for j in jobs if _key(j) not in done]
    # The drop-in CUDA runtime programs run with, found here (Ray tasks get its path).
    shim = _program.find_shim() if any(isinstance(j[0], Program) for j in todo) else None

    start = time.monotonic()
    show = progress if progress is not None else sys.stderr.isatty()

    def save():
        if results:
            try:
                pd.DataFrame([r for rows in done.values() for r in rows]).to_parquet(results, index=False)
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
            done[_key(j)] = _rows(j, None, kdir, shim)
            save()
    elif todo:
        import ray

        if not ray.is_initialized():
            ray.init()
        files = ray.put(_files(kdir)) if kdir else None
        task = ray.remote(_remote_rows)
        pending = {task.remote(j, files, shim): j for j in todo}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                j = pending.pop(ref)
                done[_key(j)] = ray.get(ref)
                save()
    df = pd.DataFrame([r for j in jobs for r in done[_key(j)]])
    for col in df.columns:
        # A program's lists and texts beside rows that lack them: None for the missing ones, whether the
        # rows were just run (pandas fills NaN) or read back from Parquet (None).
        if df[col].dtype == object:
            df[col] = [None if isinstance(v, float) and v != v else v for v in df[col]]
    if len(df):
        df["speedup_over_pdom"] = _core.speedups_over_pdom(_run_keys(df))
    df.attrs["ran"] = len(todo)
    return df


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and x != x)


def _run_keys(df, per_program: bool = False) -> List[Tuple[str, str, int, str, str, Optional[int]]]:
    """Each row's (kernel, configuration, warp size, mechanism, outcome, cycles), with the sweep's labels
    when the table is a sweep's (a :class:`Launch`'s or :class:`Program`'s name, the configuration as
    given) and ``compare``'s columns otherwise (``rc.exec``'s: the ``program`` column). A program's launch
    (a row with a ``launch``) is labelled ``NAME#LAUNCH``; with ``per_program``, a program's launches are
    one run instead: its cycles summed, ``completed`` when every launch completed and it exited 0."""
    sweep_keys = all(k in df.columns for k in KEYS)
    cols = KEYS if sweep_keys else ["program" if "program" in df.columns else "kernel", "config", "warp_size",
                                    "mechanism"]
    if "cycles" not in df.columns:
        raise ValueError("the table has no `cycles` column: speedups need timed runs")
    n = len(df)
    launches = df["launch"] if "launch" in df.columns else [None] * n
    programs = df["program"] if "program" in df.columns else [None] * n
    exits = df["exit_status"] if "exit_status" in df.columns else [None] * n
    out: List[Tuple[str, str, int, str, str, Optional[int]]] = []
    runs: Dict[Tuple[str, str, int, str], int] = {}  # per_program: a program's run -> its index in `out`
    for k, c, w, m, o, cy, launch, prog, status in zip(*(df[x] for x in cols), df["outcome"], df["cycles"],
                                                       launches, programs, exits):
        cycles = None if _missing(cy) else int(cy)
        is_program = not _missing(prog)
        if not is_program or not per_program:
            label = str(k) if _missing(launch) else f"{k}#{int(launch)}"
            out.append((label, str(c), int(w), str(m), str(o), cycles))
            continue
        outcome = str(o) if str(o) != "completed" or _missing(status) or int(status) == 0 else \
            f"exit status {int(status)}"
        key = (str(k), str(c), int(w), str(m))
        if key not in runs:
            runs[key] = len(out)
            out.append((*key, outcome, cycles))
            continue
        i = runs[key]
        _, _, _, _, o0, cy0 = out[i]
        out[i] = (*key, o0 if o0 != "completed" else outcome,
                  None if cy0 is None or cycles is None else cy0 + cycles)
    return out


def summary(df):
    """The speedup summary of a table of runs (``rc.compare``'s or ``rc.sweep``'s), as ``reconverge compare
    --csv --summary`` prints it: one row per configuration, warp size and mechanism with the geometric mean,
    median, min and max of ``speedup_over_pdom`` over the kernels *every* mechanism of that configuration and
    warp size completed, how many kernels that is, and the kernels left out with why. A whole program
    (``rc.Program`` rows, ``rc.exec``'s rows) counts as one kernel: its launches' cycles summed, completed
    when every launch completed and it exited 0."""
    import pandas as pd

    text = _core.speedup_summary(_run_keys(df, per_program=True))
    return pd.read_csv(io.StringIO(text)) if text.strip() else pd.DataFrame()


def _remote_rows(job: Job, files: Optional[Dict[str, bytes]], shim: Optional[str]) -> List[Dict[str, Any]]:
    """A Ray task: one run, with the kernel collection from the object store and the driver's path of the
    CUDA runtime (a worker without that file looks for its own)."""
    return _rows(job, files, None, shim)


def _from_parquet(row: Dict[str, Any]) -> Dict[str, Any]:
    """A row read back from a sweep's Parquet file: a program's ``grid`` and ``block`` as tuples and its
    lists as lists again (pyarrow returns NumPy arrays)."""
    for k, v in row.items():
        if isinstance(v, np.ndarray):
            row[k] = tuple(v.tolist()) if k in ("grid", "block") else _plain(v)
    return row


def _plain(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return [_plain(x) for x in v.tolist()] if v.dtype == object else v.tolist()
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v
