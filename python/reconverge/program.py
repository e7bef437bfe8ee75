"""Whole CUDA programs on the simulated GPU: ``exec(command, ...)`` runs an unmodified program (compiled with
``nvcc -cudart shared``) with reconverge's drop-in runtime ``libreconverge_cudart.so`` loaded in place of
NVIDIA's ``libcudart.so.13``, as ``reconverge exec`` does, and returns one DataFrame row per kernel launch.
:class:`Program` describes a program for :func:`reconverge.sweep`.

The runtime reads its settings from environment variables (``RECONVERGE_MECHANISM``, ``RECONVERGE_CONFIG``,
``RECONVERGE_WARP_SIZE``, ``RECONVERGE_STATS``, ...; the table is ``VARIABLES`` in
``crates/reconverge-cudart/src/settings.rs``); ``exec`` sets them from its keyword arguments and reads the
statistics file the runtime writes (one JSON object per launch).
"""

from __future__ import annotations

import glob
import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _core
from ._core import InvalidInput, ReconvergeError

#: The shim's file name as cargo builds it.
SHIM = "libreconverge_cudart.so"
SHIM12 = "libreconverge_cudart12.so"

#: The environment variables the runtime reads for its settings (``RECONVERGE_*`` of the same names inherited
#: from this process are dropped, so that a run's settings are exactly ``exec``'s arguments).
SETTINGS = ("RECONVERGE_MECHANISM", "RECONVERGE_CONFIG", "RECONVERGE_WARP_SIZE", "RECONVERGE_STATS",
            "RECONVERGE_MAX_INSTRUCTIONS", "RECONVERGE_MAX_CYCLES", "RECONVERGE_MAX_MEMORY", "RECONVERGE_THREADS",
            "RECONVERGE_SAMPLE")

#: The columns that come first in a row, in this order (the rest follow in the statistics' order).
FIRST = ["program", "launch", "kernel", "grid", "block", "dynamic_shared", "stream", "config", "mechanism",
         "warp_size", "outcome"]

BUILD_HINT = "cargo build --release -p reconverge-cudart"


class ProgramError(ReconvergeError):
    """A program run by :func:`exec` failed: it exited with a non-zero status (``returncode``, as
    ``subprocess`` reports it: ``-N`` when signal N ended it), or it exited 0 although a launch stopped
    early (a deadlock, a limit, a fault: ``returncode`` is then 0). ``stdout`` and ``stderr`` are what it
    printed (the runtime's messages, such as an unsupported call, are on ``stderr``); ``launches`` is the
    per-launch DataFrame of the launches it made (``None`` without pandas)."""

    def __init__(self, returncode: int, stdout: str = "", stderr: str = "", program: str = "",
                 launches: Any = None, message: Optional[str] = None):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr
        self.program, self.launches = program, launches
        if message is None:
            message = _failure(program, returncode)
            tail = [line for line in stderr.splitlines() if line.strip()][-10:]
            if tail:
                message += ":\n" + "\n".join(tail)
        self.message = message
        super().__init__(message)

    def __reduce__(self):
        return (ProgramError, (self.returncode, self.stdout, self.stderr, self.program, self.launches, self.message))

    def __str__(self):
        return self.message


def _failure(program: str, returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"`{program}` was killed by {name}"
    return f"`{program}` exited with status {returncode}"


def find_shim() -> str:
    """The drop-in runtime: ``RECONVERGE_CUDART``, else the newest ``target/*/deps/libreconverge_cudart.so``
    or ``target/*/libreconverge_cudart.so`` in the first directory above the package (or the working
    directory) that has one. An :class:`InvalidInput` saying how to build it when there is none."""
    env = os.environ.get("RECONVERGE_CUDART")
    if env:
        if not os.path.isfile(env):
            raise InvalidInput(f"RECONVERGE_CUDART={env}: no such file (build the runtime with `{BUILD_HINT}`)")
        return os.path.abspath(env)
    starts = [os.path.dirname(os.path.abspath(__file__)), os.getcwd()]
    for start in starts:
        d = start
        while True:
            found = [p for pattern in (("target", "*", "deps", SHIM), ("target", "*", SHIM))
                     for p in glob.glob(os.path.join(d, *pattern)) if os.path.isfile(p)]
            if found:
                return max(found, key=os.path.getmtime)
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
    raise InvalidInput(f"cannot find reconverge's CUDA runtime {SHIM} (in target/*/deps/ of a directory above "
                       f"the package or the working directory): build it with `{BUILD_HINT}`, or set "
                       "RECONVERGE_CUDART to its path")


def _command(command: Union[str, Sequence[Any]]) -> List[str]:
    if isinstance(command, str):
        args = shlex.split(command)
    elif isinstance(command, (list, tuple)):
        args = []
        for a in command:
            if not isinstance(a, (str, os.PathLike)):
                raise InvalidInput(f"a command is a list of strings, not one holding {a!r}")
            args.append(os.fspath(a))
    else:
        raise InvalidInput(f"a command is a list of strings or a string, not {type(command).__name__}")
    if not args:
        raise InvalidInput("the command is empty")
    return args


@dataclass(frozen=True)
class Settings:
    """What a program runs under, checked (see :func:`settings`)."""

    mechanism: str
    config: Optional[str]  # None: functional
    warp_size: Optional[int]
    max_instructions: Optional[int]
    max_cycles: Optional[int]
    max_memory: Optional[int]
    threads: int
    sample: bool = False

    def environment(self, stats: str) -> Dict[str, str]:
        env = {"RECONVERGE_MECHANISM": self.mechanism,
               "RECONVERGE_CONFIG": self.config if self.config is not None else "functional",
               "RECONVERGE_STATS": stats, "RECONVERGE_THREADS": str(self.threads)}
        for var, value in (("RECONVERGE_WARP_SIZE", self.warp_size), ("RECONVERGE_MAX_INSTRUCTIONS",
                           self.max_instructions), ("RECONVERGE_MAX_CYCLES", self.max_cycles),
                           ("RECONVERGE_MAX_MEMORY", self.max_memory)):
            if value is not None:
                env[var] = str(value)
        if self.sample:
            env["RECONVERGE_SAMPLE"] = "1"
        return env


def settings(mechanism: str = "pdom", config: Optional[str] = "gtx480", warp_size: Optional[int] = None,
             max_instructions: Optional[int] = None, max_cycles: Optional[int] = None,
             max_memory: Optional[int] = None, threads: int = 0, sample: bool = False) -> Settings:
    """The settings, checked before anything runs (:class:`InvalidInput` for an unknown mechanism, preset
    or TOML file, a warp size the configuration cannot run, a count out of range, ``sample`` without a
    timing model)."""
    from . import _count, _warp_size

    if not isinstance(mechanism, str):
        raise InvalidInput(f"a mechanism is a name, not {type(mechanism).__name__}")
    mechanism = _core.mechanism_name(mechanism)
    if isinstance(config, os.PathLike):
        config = os.fspath(config)
    if config is not None and not isinstance(config, str):
        raise InvalidInput(f"config must be a preset name, a TOML file's path, \"functional\" or None, "
                           f"not {type(config).__name__}")
    if config == "functional":
        config = None
    warp = None if warp_size is None else _warp_size(warp_size)
    if config is not None:
        _core.check_config(config)
        if warp is not None:
            _core.check_device(config, warp)
        if os.path.isfile(config):
            config = os.path.abspath(config)  # the program may run in another directory
    if not isinstance(sample, bool):
        raise InvalidInput(f"sample is True or False, not {type(sample).__name__}")
    if sample and config is None:
        raise InvalidInput("sample=True estimates cycles, and a functional run (config=None) has none")
    return Settings(mechanism, config, warp, _count("max_instructions", max_instructions, optional=True),
                    _count("max_cycles", max_cycles, optional=True),
                    _count("max_memory", max_memory, optional=True), _count("threads", threads, most=1024),
                    sample)


def flatten(record: Mapping[str, Any]) -> Dict[str, Any]:
    """One launch's statistics as a flat row, named as ``reconverge compare --csv`` names its columns:
    ``_counts`` dropped; a nested object's members as ``OBJECT_MEMBER`` (``by_class_int``, ``memory_l1_hits``,
    ``mechanism_counters_compactions``; ``stall_cycles``' as ``stall_memory`` ...); ``config`` (the whole
    configuration) as its name; lists (``lane_histogram``, ``sm_cycles``, ``branches_by_pc``) kept as they
    are, ``grid`` and ``block`` as tuples."""
    row: Dict[str, Any] = {}

    def put(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                put(f"{prefix}_{k}", v)
        else:
            row[prefix] = value

    for key, value in record.items():
        if key == "_counts":
            continue
        if key == "config" and isinstance(value, dict):
            row["config"] = value.get("name")
        elif key in ("grid", "block") and isinstance(value, list):
            row[key] = tuple(value)
        elif key == "stall_cycles" and isinstance(value, dict):
            put("stall", value)
        else:
            put(key, value)
    return row


@dataclass
class Run:
    """A program's run: its launches (flattened rows), exit status, output, and the configuration."""

    program: str
    rows: List[Dict[str, Any]]
    returncode: int
    stdout: str
    stderr: str
    config: Optional[Dict[str, Any]]

    def stopped_early(self) -> Optional[Dict[str, Any]]:
        """The first launch that did not complete."""
        return next((r for r in self.rows if r.get("outcome") not in ("completed", None)), None)


def run(command: Union[str, Sequence[Any]], s: Settings, cwd: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None, shim: Optional[str] = None) -> Run:
    """Runs the program under ``s`` with the runtime ``shim`` (default: :func:`find_shim`)."""
    args = _command(command)
    if cwd is not None:
        cwd = os.fspath(cwd)
        if not os.path.isdir(cwd):
            raise InvalidInput(f"cwd `{cwd}` is not a directory")
    if env is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in dict(env).items()):
        raise InvalidInput("env must map names to strings")
    if shim is None or not os.path.isfile(shim):
        shim = find_shim()
    program = " ".join(args)
    libdir = tempfile.mkdtemp(prefix="reconverge-exec-")
    try:
        os.symlink(os.path.realpath(shim), os.path.join(libdir, "libcudart.so.13"))
        # CUDA 12's runtime, built beside it (reconverge-cudart12), for programs built with CUDA 12.
        shim12 = os.path.join(os.path.dirname(os.path.realpath(shim)), SHIM12)
        if os.path.isfile(shim12):
            os.symlink(os.path.realpath(shim12), os.path.join(libdir, "libcudart.so.12"))
        stats = os.path.join(libdir, "launches.jsonl")
        open(stats, "w").close()
        full = {k: v for k, v in os.environ.items() if k not in SETTINGS}
        full.update(env or {})
        full.update(s.environment(stats))
        previous = full.get("LD_LIBRARY_PATH")
        full["LD_LIBRARY_PATH"] = f"{libdir}:{previous}" if previous else libdir
        try:
            done = subprocess.run(args, cwd=cwd, env=full, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        except OSError as e:
            raise InvalidInput(f"cannot run `{args[0]}`: {e}") from None
        records, config = [], None
        with open(stats, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    record = None
                if not isinstance(record, dict):
                    raise ReconvergeError(f"the runtime's statistics, line {n}: not a JSON object: {line[:200]}")
                if config is None and isinstance(record.get("config"), dict):
                    config = record["config"]
                records.append(record)
    finally:
        shutil.rmtree(libdir, ignore_errors=True)
    rows = []
    for record in records:
        flat = flatten(record)
        flat.setdefault("config", None)
        row = {"program": program}
        row.update({k: flat.pop(k) for k in FIRST[1:] if k in flat})
        row.update(flat)
        row["exit_status"] = done.returncode
        rows.append(row)
    return Run(program, rows, done.returncode, done.stdout.decode("utf-8", "replace"),
               done.stderr.decode("utf-8", "replace"), config)


def exec(command: Union[str, Sequence[str]], *, mechanism: str = "pdom", config: Optional[str] = "gtx480",
         warp_size: Optional[int] = None, max_instructions: Optional[int] = None,
         max_cycles: Optional[int] = None, max_memory: Optional[int] = None, threads: int = 0,
         sample: bool = False, cwd: Optional[str] = None, env: Optional[Mapping[str, str]] = None, check: bool = True):
    """Runs an unmodified CUDA program (built with ``nvcc -cudart shared``) on the simulated GPU, as
    ``reconverge exec`` does, and returns a pandas DataFrame with one row per kernel launch.

    ``command``: the program and its arguments, a list of strings (or one string, split as a shell
    would). ``mechanism``, ``config`` (a preset, a TOML file, or ``None``/``"functional"`` for no timing
    model), ``warp_size`` (default: the configuration's), ``max_instructions``, ``max_cycles`` (per
    launch), ``max_memory`` (bytes), ``threads`` (host threads of the timing model, 0 = all cores) and
    ``sample`` (``reconverge exec --sample``: time a sample of the launches, estimate the others' cycles;
    columns ``sampled_cycles``, ``sampled_cycles_error``, ``sampled_timed_launches``,
    ``sampled_estimated_launches`` and ``sample_cluster``) are checked before the program starts. ``cwd``: its working directory; ``env``: variables added to this
    process's environment for it.

    Columns: ``program`` (the command joined), ``launch`` (1, 2, ...), ``kernel`` (its PTX, mangled, name),
    ``grid``, ``block``, ``dynamic_shared``, ``stream``, then ``reconverge run --json``'s statistics,
    flattened as ``compare --csv`` names them (``by_class_int``, ``memory_l1_hits``, ``stall_memory``,
    ``mechanism_counters_*``; ``config`` is the configuration's name, ``None`` when functional; ``cycles``
    is ``NaN`` when functional), and ``exit_status``. The program's output is captured:
    ``df.attrs["stdout"]``, ``df.attrs["stderr"]`` (the runtime's messages), ``df.attrs["exit_status"]``,
    ``df.attrs["program"]`` and ``df.attrs["config"]`` (the whole configuration, ``None`` when functional).

    ``check=True``: a :class:`ProgramError` (with ``returncode``, ``stdout``, ``stderr`` and ``launches``,
    this DataFrame) when the program exits with a non-zero status, or exits 0 although a launch stopped
    early (its ``outcome`` is not ``completed``: ``reconverge exec`` exits non-zero then too).
    ``check=False`` returns the rows either way.

    The runtime is ``RECONVERGE_CUDART`` or the newest ``target/*/deps/libreconverge_cudart.so`` above the
    package (build it with ``cargo build --release -p reconverge-cudart``)."""
    from . import _need

    pd = _need("pandas", "rc.exec")
    s = settings(mechanism, config, warp_size, max_instructions, max_cycles, max_memory, threads, sample)
    r = run(command, s, cwd=cwd, env=env)
    df = frame(pd, r.rows)
    df.attrs.update(stdout=r.stdout, stderr=r.stderr, exit_status=r.returncode, program=r.program, config=r.config)
    if check:
        if r.returncode != 0:
            raise ProgramError(r.returncode, r.stdout, r.stderr, r.program, df)
        early = r.stopped_early()
        if early is not None:
            message = (f"`{r.program}` exited 0, but launch {early.get('launch')} ({early.get('kernel')}) stopped "
                       f"early: {early.get('outcome')}")
            if early.get("error"):
                message += f": {early['error']}"
            raise ProgramError(0, r.stdout, r.stderr, r.program, df, message=message)
    return df


def frame(pd, rows: List[Dict[str, Any]]):
    """The rows as a DataFrame (the leading columns even when there are none)."""
    if not rows:
        return pd.DataFrame(columns=FIRST + ["cycles", "exit_status"])
    df = pd.DataFrame(rows)
    for col in df.columns:
        # Statistics that are null in every launch (`cycles` and `ipc` when functional) or in some: numbers
        # with NaN, as compare's and sweep's tables have them.
        if df[col].dtype == object:
            values = [v for v in df[col] if v is not None]
            numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
            if numbers and (values or col not in ("config", "error", "kernel")):
                df[col] = pd.to_numeric(df[col].astype("float64" if len(values) < len(df) or not values
                                                       else object))
    return df


@dataclass
class Program:
    """A whole CUDA program for :func:`reconverge.sweep`, wherever a kernel name or a :class:`Launch` goes:
    ``command`` (a list of strings, or a string split as a shell would), ``name`` (the label of its rows
    in ``sweep_kernel``; default: the command joined), ``cwd`` and ``env`` (variables added to the
    environment) for the run. Its rows are one per launch (``launch`` = 1, 2, ...)."""

    command: Union[str, Sequence[str]]
    name: Optional[str] = None
    cwd: Optional[str] = None
    env: Optional[Mapping[str, str]] = None

    def __post_init__(self):
        self.command = _command(self.command)
        if self.name is None:
            self.name = " ".join(self.command)
        if not isinstance(self.name, str) or not self.name:
            raise InvalidInput(f"a Program's name is a non-empty string, not {self.name!r}")
        if self.cwd is not None:
            self.cwd = os.fspath(self.cwd)
        if self.env is not None:
            self.env = dict(self.env)


def sweep_rows(p: Program, mechanism: str, config: Optional[str], warp_size: int,
               shim: Optional[str]) -> List[Dict[str, Any]]:
    """A sweep's rows of one run of ``p`` (one host thread for the timing model): one per launch
    (``branches_by_pc`` as JSON text, which Parquet can store), or, when
    it made none, one row saying why (``outcome`` ``no launches``, or ``exit status N`` with the last lines
    of its standard error as ``error``)."""
    r = run(p.command, settings(mechanism, config, warp_size, threads=1), cwd=p.cwd, env=p.env, shim=shim)
    for row in r.rows:
        # Parquet cannot store its per-branch objects (a mechanism without counters has an empty one).
        if "branches_by_pc" in row:
            row["branches_by_pc"] = json.dumps(row["branches_by_pc"])
    if r.rows:
        return r.rows
    if r.returncode == 0:
        return [{"program": r.program, "outcome": "no launches", "exit_status": 0}]
    tail = [line for line in r.stderr.splitlines() if line.strip()][-10:]
    return [{"program": r.program, "outcome": f"exit status {r.returncode}", "error": "\n".join(tail) or None,
             "exit_status": r.returncode}]
