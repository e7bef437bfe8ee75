"""reconverge from Python: CUDA kernels on a simulated GPU under every SIMT divergence mechanism.

The API follows CuPy's ``RawModule``/``RawKernel`` and PyCUDA habits::

    import numpy as np, reconverge as rc
    mod = rc.Module(path="bfs.ptx")              # or rc.Module(code=cuda_c_source) through NVRTC
    gpu = rc.Device(config="gtx480", mechanism="tbc", warp_size=32)
    d_mask = gpu.to_device(mask)                 # device memory persists across launches
    k = mod.get_function("Kernel")               # demangled names work
    stats = k((blocks,), (threads,), (d_nodes, d_mask, np.int32(n)), device=gpu)
    host = d_mask.get()                          # numpy array back
    mod.get_global("c_table", device=gpu)[...] = table   # __constant__ / __device__ variables
    rc.compare(kernels=["bfs"], mechanisms=["pdom", "tbc"])   # -> pandas.DataFrame

Statistics come back as a dict (the keys of ``reconverge run --json``) and accumulate over launches in
``Device.stats``. Errors are exceptions with the command line's messages: :class:`InvalidInput`,
:class:`DeadlockError` (with the waiting threads), :class:`LimitError`. The GIL is released while a
kernel runs.

Device memory: a :class:`DeviceArray` lives on its :class:`Device` and is passed to every launch that
names it; its contents after a launch are the kernel's results. Device pointers stored *inside* device
memory are not stable across launches (each launch places the buffers anew).
"""

from __future__ import annotations

import io
import json
import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from . import _core
from ._core import DeadlockError, InvalidInput, LimitError, ReconvergeError

__all__ = [
    "Module",
    "Device",
    "DeviceArray",
    "Kernel",
    "GlobalView",
    "compare",
    "sweep",
    "Launch",
    "mechanisms",
    "default_mechanisms",
    "presets",
    "ReconvergeError",
    "InvalidInput",
    "DeadlockError",
    "LimitError",
]

_DTYPES = {
    np.dtype(np.int8): "i8",
    np.dtype(np.uint8): "u8",
    np.dtype(np.bool_): "u8",
    np.dtype(np.int16): "i16",
    np.dtype(np.uint16): "u16",
    np.dtype(np.int32): "i32",
    np.dtype(np.uint32): "u32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint64): "u64",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
}


def _dtype_name(dt: np.dtype) -> str:
    try:
        return _DTYPES[np.dtype(dt)]
    except KeyError:
        raise InvalidInput(f"unsupported dtype {dt} (supported: {sorted(set(str(d) for d in _DTYPES))})") from None


def _bytes_of(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


def mechanisms() -> List[str]:
    """Every divergence mechanism's name, in the order tables list them."""
    return list(_core.mechanisms())


def default_mechanisms() -> List[str]:
    """The mechanisms ``compare`` runs when none is named (the command line's default set)."""
    return list(_core.default_mechanisms())


def presets() -> List[str]:
    """The GPU configuration presets."""
    return list(_core.presets())


class Module:
    """A kernel module: ``Module(path="k.ptx")``, ``Module(path="k.cu")`` or ``Module(code=src)`` (CUDA C
    through NVRTC unless the text is PTX; ``options`` are extra NVRTC options)."""

    def __init__(self, path: Optional[str] = None, code: Optional[str] = None, options: Sequence[str] = ()):
        cuda = code is not None and ".entry" not in code and "__global__" in code
        self._m = _core.Module(path=path, code=code, cuda=cuda, options=list(options))

    @property
    def ptx(self) -> str:
        """The PTX text."""
        return self._m.ptx

    def kernels(self) -> List[str]:
        """The kernels' names (demangled)."""
        return self._m.kernels()

    def get_function(self, name: str) -> "Kernel":
        """The kernel ``name`` (its PTX name or demangled name), like CuPy's ``RawModule.get_function``."""
        params = self._m.params(name)
        return Kernel(self, name, params)

    def get_global(self, name: str, device: Optional["Device"] = None) -> "GlobalView":
        """The module variable ``name`` (``__device__``/``__constant__``) on ``device`` (default: the device
        created last, like CuPy's current device): index it to read, assign ``view[...] = values`` to write
        before the next launch."""
        if device is None:
            device = Device._current
            if device is None:
                raise InvalidInput("get_global: no Device yet; create one or pass device=")
        for var in self._m.variables(None):
            if var[0] == name:
                return GlobalView(device, self, var)
        raise InvalidInput(f"no module variable `{name}` (variables: {[v[0] for v in self._m.variables(None)]})")

    def _register(self, device: "Device", var) -> Tuple[int, str]:
        """The device's copy of a module variable, made from its initial contents on first use."""
        name, ty, size, scalar, init = var
        key = (id(self), name)
        if key not in device._vars:
            dt = np.dtype(_PTX_DTYPES.get(ty, np.uint8))
            arr = np.frombuffer(bytes(init), dtype=np.uint8)[: (size // dt.itemsize) * dt.itemsize].view(dt).copy()
            device._vars[key] = (name, arr, scalar)
        return key


_PTX_DTYPES = {
    "s8": np.int8, "u8": np.uint8, "b8": np.uint8, "s16": np.int16, "u16": np.uint16, "b16": np.uint16,
    "s32": np.int32, "u32": np.uint32, "b32": np.uint32, "s64": np.int64, "u64": np.uint64, "b64": np.uint64,
    "f32": np.float32, "f64": np.float64, "pred": np.uint8,
}


class GlobalView:
    """A module variable's contents on a device (persist across launches)."""

    def __init__(self, device: "Device", module: Module, var):
        self.device, self.module, self.name = device, module, var[0]
        self._key = module._register(device, var)
        self.dtype = self.array.dtype

    @property
    def array(self) -> np.ndarray:
        return self.device._vars[self._key][1]

    def get(self) -> np.ndarray:
        """A copy of the variable's contents."""
        return self.array.copy()

    def __getitem__(self, idx):
        return self.array[idx]

    def __setitem__(self, idx, value):
        value = np.asarray(value)
        if idx is Ellipsis and value.nbytes == self.array.nbytes and value.dtype != self.array.dtype:
            # `view[...] = table`: the variable's bytes, whatever its declared element type (NVRTC declares
            # `__constant__ int t[4]` as `.b8 t[16]`).
            self.array.reshape(-1).view(np.uint8)[:] = np.ascontiguousarray(value).reshape(-1).view(np.uint8)
        else:
            self.array[idx] = value

    def view(self, dtype) -> np.ndarray:
        """The contents as `dtype` (a copy)."""
        return self.array.reshape(-1).view(np.uint8).view(dtype).copy()


class DeviceArray:
    """An array in a :class:`Device`'s memory (``Device.to_device``, ``Device.zeros``)."""

    def __init__(self, device: "Device", host: np.ndarray):
        self.device = device
        self._data = np.array(host, copy=True, order="C")

    @property
    def shape(self):
        return self._data.shape

    @property
    def dtype(self):
        return self._data.dtype

    @property
    def size(self):
        return self._data.size

    def get(self) -> np.ndarray:
        """A host copy (like CuPy's ``ndarray.get``)."""
        return self._data.copy()

    def set(self, host: np.ndarray) -> None:
        """Overwrites the contents from the host."""
        self._data[...] = host

    def __repr__(self):
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, device={self.device!r})"


class Device:
    """A simulated GPU: a configuration (``"gtx480"``, ``"volta"``, ``"tiny"``, ``"temporal"`` or a TOML
    file), a divergence mechanism and a warp size. ``functional=True`` skips the timing model (no cycles,
    fastest). ``stats`` accumulates the counts of every launch."""

    #: The device created last (the default of ``Module.get_global``).
    _current: Optional["Device"] = None

    def __init__(self, config: str = "gtx480", mechanism: str = "pdom", warp_size: int = 32,
                 functional: bool = False, max_instructions: Optional[int] = None,
                 max_memory: Optional[int] = None):
        if not isinstance(mechanism, str):
            raise InvalidInput(f"a mechanism is a name, not {type(mechanism).__name__}")
        mechanism = _core.mechanism_name(mechanism)
        if not isinstance(config, str):
            raise InvalidInput(f"config must be a preset name or a TOML file's path, not {type(config).__name__}")
        _core.check_config(config)
        self.config, self.mechanism = config, mechanism
        self.warp_size = _warp_size(warp_size)
        self.functional = bool(functional)
        self.max_instructions = _count("max_instructions", max_instructions, optional=True)
        self.max_memory = _count("max_memory", max_memory, optional=True)
        self.stats: Dict[str, Any] = {}
        self.launches = 0
        self._vars: Dict[Tuple[int, str], Tuple[str, np.ndarray, bool]] = {}
        Device._current = self

    def __repr__(self):
        mode = "functional" if self.functional else self.config
        return f"Device({mode}, {self.mechanism}, warp_size={self.warp_size})"

    def to_device(self, host: np.ndarray) -> DeviceArray:
        """Copies a NumPy array to the device."""
        try:
            host = np.asarray(host)
        except (TypeError, ValueError) as e:
            raise InvalidInput(f"to_device: not an array: {e}") from None
        _dtype_name(host.dtype)
        return DeviceArray(self, host)

    def zeros(self, shape, dtype=np.float32) -> DeviceArray:
        """A zero-filled device array."""
        try:
            dt = np.dtype(dtype)
        except TypeError:
            raise InvalidInput(f"unsupported dtype {dtype!r}") from None
        _dtype_name(dt)
        dims = shape if isinstance(shape, (tuple, list)) else (shape,)
        for n in dims:
            _count("each dimension of shape", n)
        return DeviceArray(self, np.zeros(shape, dtype=dt))

    def _accumulate(self, s: Dict[str, Any]) -> None:
        self.launches += 1
        for k, v in s.items():
            if isinstance(v, bool) or k in ("warp_size", "kernel", "mechanism", "outcome", "error", "config"):
                self.stats[k] = v
            elif isinstance(v, (int, float)) and not k.endswith(("efficiency", "rate", "ipc", "utilization")):
                self.stats[k] = self.stats.get(k, 0) + v
            elif isinstance(v, list) and all(isinstance(x, (int, float)) for x in v) and k == "lane_histogram":
                old = self.stats.get(k, [0] * len(v))
                self.stats[k] = [a + b for a, b in zip(old, v)]
        w = self.warp_size
        ki, kt = self.stats.get("kernel_instructions", 0), self.stats.get("kernel_thread_instructions", 0)
        self.stats["simd_efficiency"] = kt / (ki * w) if ki else 0.0
        if "cycles" in self.stats and self.stats["cycles"]:
            self.stats["ipc"] = self.stats.get("warp_instructions", 0) / self.stats["cycles"]
        self.stats["launches"] = self.launches


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _count(what: str, x, optional: bool = False, least: int = 0, most: int = 2**64 - 1) -> Optional[int]:
    """A whole number in [least, most] (None allowed when optional), else InvalidInput."""
    if x is None and optional:
        return None
    if not _is_int(x) or not least <= int(x) <= most:
        raise InvalidInput(f"{what} must be a whole number in {least}..={most}, not {x!r}")
    return int(x)


def _warp_size(w) -> int:
    w = _count("warp_size", w, least=1, most=64)
    if w & (w - 1):
        raise InvalidInput(f"warp_size must be a power of two up to 64, not {w}")
    return w


def _dim3(d, what: str = "grid or block") -> List[int]:
    d = list(d) if isinstance(d, (tuple, list)) else [d]
    if not 1 <= len(d) <= 3:
        raise InvalidInput(f"a {what} has 1 to 3 dimensions, got {d}")
    return [_count(f"each {what} dimension", x, least=1, most=2**31 - 1) for x in d] + [1] * (3 - len(d))


class Kernel:
    """A kernel of a :class:`Module`, launched like CuPy's ``RawKernel``:
    ``k(grid, block, args, device=gpu)`` returns the launch's statistics as a dict."""

    def __init__(self, module: Module, name: str, params):
        self.module, self.name, self.params = module, name, params
        # The module variables the kernel can use (read once: every launch passes and reads them back).
        self._vars = module._m.variables(name)

    def __repr__(self):
        return f"Kernel({self.name}, {len(self.params)} parameters)"

    def _arg(self, i: int, a: Any, device: Device):
        if isinstance(a, DeviceArray):
            if a.device is not device:
                raise InvalidInput(f"argument {i} lives on another device")
            return ("buffer", _dtype_name(a.dtype), _bytes_of(a._data))
        if isinstance(a, np.ndarray) and a.ndim > 0:
            raise InvalidInput(f"argument {i}: pass arrays with device.to_device(...)")
        if isinstance(a, (np.generic, np.ndarray)):
            raw = np.asarray(a).tobytes()
            return ("bits", str(int.from_bytes(raw.ljust(8, b"\0")[:8], "little")), None)
        if isinstance(a, bool):
            return ("text", "1" if a else "0", None)
        if isinstance(a, (int, float)):
            return ("text", repr(a), None)
        raise InvalidInput(f"argument {i}: unsupported type {type(a).__name__}")

    def __call__(self, grid, block, args: Sequence[Any], device: Device, shared_mem: int = 0,
                 scalarize: bool = False) -> Dict[str, Any]:
        return self._launch(grid, block, args, device, shared_mem, scalarize, True)[0]

    def _launch(self, grid, block, args, device, shared_mem, scalarize, raise_errors):
        """One launch: (statistics, the run's record as CSV)."""
        if not isinstance(args, (list, tuple)):
            raise InvalidInput(f"args must be a tuple or list of arguments, not {type(args).__name__}")
        wire = [self._arg(i, a, device) for i, a in enumerate(args)]
        # Every module variable the kernel can use lives on the device from its first launch on.
        mine = [self.module._register(device, v) for v in self._vars]
        globals_ = [(device._vars[k][0], _dtype_name(device._vars[k][1].dtype), _bytes_of(device._vars[k][1]),
                     device._vars[k][2] and device._vars[k][1].dtype.itemsize == 8) for k in mine]
        if not isinstance(device, Device):
            raise InvalidInput(f"device must be a reconverge.Device, not {type(device).__name__}")
        if not isinstance(args, (list, tuple)):
            raise InvalidInput(f"args must be a tuple or list of arguments, not {type(args).__name__}")
        stats_json, buffers, dumped, record = self.module._m.launch(self.name, dict(
            grid=_dim3(grid, "grid"), block=_dim3(block, "block"), args=wire, mechanism=device.mechanism,
            config=device.config, functional=device.functional, warp_size=device.warp_size, globals=globals_,
            dump=[device._vars[k][0] for k in mine], max_instructions=device.max_instructions,
            dynamic_shared=_count("shared_mem", shared_mem, most=2**32 - 1), scalarize=bool(scalarize),
            raise_errors=raise_errors, max_memory=device.max_memory))
        for a, out in zip(args, buffers):
            if isinstance(a, DeviceArray) and out is not None:
                a._data.reshape(-1).view(np.uint8)[:] = out
        for k, (_, raw) in zip(mine, dumped):
            arr = device._vars[k][1]
            arr.reshape(-1).view(np.uint8)[: len(raw)] = raw[: arr.nbytes]
        stats = json.loads(stats_json)
        device._accumulate(stats)
        return stats, record


def _kernels_dir(kernels_dir: Optional[str]) -> str:
    if kernels_dir:
        return kernels_dir
    env = os.environ.get("RECONVERGE_KERNELS")
    if env:
        return env
    for start in (os.getcwd(), os.path.dirname(os.path.abspath(__file__))):
        d = start
        while True:
            if os.path.isfile(os.path.join(d, "kernels", "manifest.toml")):
                return os.path.join(d, "kernels")
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
    raise InvalidInput("cannot find the built-in kernels: pass kernels_dir= or set RECONVERGE_KERNELS")


def compare(kernels: Iterable[str] = (), mechanisms: Iterable[str] = (), warp_sizes: Iterable[int] = (32,),
            configs: Iterable[str] = ("gtx480",), functional: bool = False, scalarize: bool = False,
            kernels_dir: Optional[str] = None, threads: int = 0):
    """Runs built-in kernels × mechanisms × warp sizes × configurations and returns a pandas DataFrame with
    the columns of ``reconverge compare --csv`` (one row per run)."""
    import pandas as pd

    csv = _core.compare(_kernels_dir(kernels_dir), dict(
        kernels=list(kernels), mechanisms=list(mechanisms), warp_sizes=[int(w) for w in warp_sizes],
        configs=list(configs), functional=functional, scalarize=scalarize, threads=threads))
    return pd.read_csv(io.StringIO(csv))


from .sweep import Launch, sweep  # noqa: E402  (uses the names above)
