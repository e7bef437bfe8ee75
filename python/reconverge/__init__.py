"""reconverge from Python: CUDA kernels on a simulated GPU under every SIMT divergence mechanism.

The API follows CuPy's ``RawModule``/``RawKernel`` and PyCUDA habits::

    import numpy as np, reconverge as rc
    mod = rc.Module(path="bfs.ptx")              # or rc.Module(code=cuda_c_source) through NVRTC
    gpu = rc.Device(config="gtx480", mechanism="tbc", warp_size=32)   # the current device from now on
    d_mask = gpu.to_device(mask)                 # device memory persists across launches
    k = mod.get_function("Kernel")               # demangled names and template names (scale<float>) work
    stats = k((blocks,), (threads,), (d_nodes, d_mask[1:], np.int32(n)))   # a view is a pointer into d_mask
    host = d_mask.get()                          # numpy array back
    mod.get_global("c_table")[...] = table       # __constant__ / __device__ variables
    rc.compare(kernels=["bfs"], mechanisms=["pdom", "tbc"])   # -> pandas.DataFrame (extra "pandas")
    rc.exec(["./gaussian"], mechanism="tbc")     # a whole CUDA program (nvcc -cudart shared): a row per launch

Statistics come back as a dict (the keys of ``reconverge run --json``) and are combined over launches in
``Device.stats``, key by key (counts summed, maxima kept, ratios recomputed from the summed counts).
Arguments are checked against the kernel's PTX parameter types (:class:`ArgumentTypeError`). Errors are
exceptions with the command line's messages in Python's words: :class:`InvalidInput` (a ``ValueError``),
:class:`DeadlockError` (with the waiting threads, their pcs and the partial statistics as attributes),
:class:`LimitError`. The GIL is released while a kernel runs. pandas, pyarrow and Ray are optional
(``pip install 'reconverge[pandas,parquet,ray]'``); what needs a missing one says which extra installs it.

Device memory: a :class:`DeviceArray` lives on its :class:`Device` and is passed to every launch that
names it; its contents after a launch are the kernel's results. Device pointers stored *inside* device
memory are not stable across launches (each launch places the buffers anew).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import io
import json
import os
import warnings
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np



def _nvidia_wheels_of_this_interpreter() -> None:
    """Points the native module at NVIDIA's PyPI wheels installed beside this package (the ``nvrtc`` extra).

    The native module looks for NVRTC and the CUDA headers in the repository's ``.tools/cuda`` and in the
    site-packages of the ``python3`` on ``PATH``, which need not be this interpreter (a virtual environment
    used without activating it). When this interpreter can import the wheels, their paths go into
    ``RECONVERGE_NVRTC`` and ``RECONVERGE_CUDA_INCLUDE`` unless the user set those.
    """
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return
    for root in spec.submodule_search_locations:
        nvrtc = os.path.join(root, "cuda_nvrtc", "lib", "libnvrtc.so.12")
        if "RECONVERGE_NVRTC" not in os.environ and os.path.isfile(nvrtc):
            os.environ["RECONVERGE_NVRTC"] = nvrtc
        headers = [os.path.join(root, p, "include") for p in ("cuda_runtime", "cuda_cccl")]
        headers = [h for h in headers if os.path.isdir(h)]
        if "RECONVERGE_CUDA_INCLUDE" not in os.environ and headers:
            os.environ["RECONVERGE_CUDA_INCLUDE"] = ":".join(headers)


_nvidia_wheels_of_this_interpreter()

from . import _core  # noqa: E402  (after the environment the native module reads is set)
from ._core import ArgumentTypeError, DeadlockError, InvalidInput, LimitError, ReconvergeError  # noqa: E402

__all__ = [
    "Module",
    "Device",
    "DeviceArray",
    "Struct",
    "Kernel",
    "GlobalView",
    "compare",
    "sweep",
    "summary",
    "Launch",
    "Program",
    "exec",
    "mechanisms",
    "default_mechanisms",
    "presets",
    "get_device",
    "ReconvergeError",
    "InvalidInput",
    "ArgumentTypeError",
    "DeadlockError",
    "LimitError",
    "ProgramError",
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


#: The optional dependencies and the extra of the package that installs each (``pip install
#: 'reconverge[pandas]'``; ``reconverge[all]`` installs every one).
EXTRAS = {"pandas": "pandas", "pyarrow": "parquet", "ray": "ray"}


def _need(module: str, what: str):
    """Imports the optional dependency ``module``; an ImportError naming ``what`` needs it and the extra
    that installs it when it is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        extra = EXTRAS.get(module, module)
        raise ImportError(f"{what} needs {module}: pip install 'reconverge[{extra}]'") from e


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
        """The kernel ``name``, like CuPy's ``RawModule.get_function``: its PTX (mangled) name, its demangled
        signature (``void scale<float>(float*, int)``, the return type optional), or its name without the
        parameters (``scale<float>``, ``Kernel2``) when that names one kernel."""
        params = self._m.params(name)
        return Kernel(self, name, params)

    def get_global(self, name: str, device: Optional["Device"] = None) -> "GlobalView":
        """The module variable ``name`` (``__device__``/``__constant__``) on ``device`` (default: the device
        current device, :func:`get_device`): index it to read, assign ``view[...] = values`` to write
        before the next launch."""
        if device is None:
            device = _current_device("get_global")
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
    """An array in a :class:`Device`'s memory (``Device.to_device``, ``Device.zeros``), like CuPy's
    ``ndarray``: ``len``, ``shape``, ``dtype``, ``size``, ``nbytes``, ``get()``/``copy_to_host()``,
    ``set(host)``, ``np.asarray(a)``. Slicing along the first axis with step 1 (``a[1:]``, ``a[4:8]``,
    ``a[2]`` of a 2-D array) gives a view of the same memory; passed to a kernel, a view is a pointer
    ``offset`` bytes into its array, as ``d_a + 1`` is in CUDA."""

    def __init__(self, device: "Device", host: np.ndarray, _base: Optional["DeviceArray"] = None,
                 _view: Optional[np.ndarray] = None):
        self.device = device
        if _base is None:
            self._data = np.array(host, copy=True, order="C")
            self._root: DeviceArray = self
        else:
            self._data = _view
            self._root = _base._root

    @property
    def shape(self) -> Tuple[int, ...]:
        return self._data.shape

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def size(self) -> int:
        return self._data.size

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    @property
    def offset(self) -> int:
        """Bytes from the start of the array this is a view of (0 for an array of its own)."""
        return _address(self._data) - _address(self._root._data)

    @property
    def base(self) -> Optional["DeviceArray"]:
        """The array this is a view of (``None`` for an array of its own), like NumPy's ``base``."""
        return None if self._root is self else self._root

    def __len__(self) -> int:
        if not self._data.ndim:
            raise TypeError("len() of a 0-d DeviceArray")
        return self._data.shape[0]

    def __getitem__(self, key) -> "DeviceArray":
        if isinstance(key, tuple) and len(key) == 1:
            key = key[0]
        if isinstance(key, slice):
            if key.step not in (None, 1):
                raise InvalidInput(f"DeviceArray slices need step 1, not {key.step}: a kernel gets a pointer, "
                                   "and a strided view has none (copy it: a.get()[::2])")
        elif not _is_int(key):
            raise InvalidInput(f"a DeviceArray is indexed by an int or a slice of step 1 along its first axis, "
                               f"not {key!r}")
        if not self._data.ndim:
            raise InvalidInput("a 0-d DeviceArray cannot be indexed")
        if isinstance(key, slice):
            view = self._data[key]
        else:
            n = self._data.shape[0]
            k = int(key) + n if int(key) < 0 else int(key)
            if not 0 <= k < n:
                raise IndexError(f"index {int(key)} is out of bounds for a DeviceArray of length {n}")
            view = self._data[k:k + 1].reshape(self._data.shape[1:])
        return DeviceArray(self.device, None, _base=self, _view=view)

    def __setitem__(self, key, value) -> None:
        self._data[key] = value

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self._data.copy()
        return out if dtype is None else out.astype(dtype, copy=False)

    def get(self, out: Optional[np.ndarray] = None) -> np.ndarray:
        """A host copy (like CuPy's ``ndarray.get``), or the contents written into ``out``."""
        if out is None:
            return self._data.copy()
        out[...] = self._data
        return out

    def copy_to_host(self, out: Optional[np.ndarray] = None) -> np.ndarray:
        """The same as :meth:`get` (Numba's name)."""
        return self.get(out)

    def set(self, host: np.ndarray) -> None:
        """Overwrites the contents from the host."""
        self._data[...] = host

    def __repr__(self):
        view = f", offset={self.offset}" if self._root is not self else ""
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}{view}, device={self.device!r})"


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


class _Pad:
    """``n`` bytes of explicit padding in a :class:`Struct`."""

    def __init__(self, n: int):
        self.n = _count("padding", n, most=2**32 - 1)


class Struct:
    """A struct passed by value, for a parameter such as ``.param .align 8 .b8 g[40]`` (CUDA C's ``struct
    Graph g``): its fields in declaration order, laid out with C's natural alignment (each field at a
    multiple of its size, the whole rounded up to the largest field's alignment). A field is a NumPy scalar
    (``np.int32(n)``: its dtype is the field's type), a :class:`DeviceArray` or a view of one (a 64-bit
    device pointer), ``None`` (a null pointer) or ``Struct.pad(n)`` (``n`` zero bytes). The struct's size
    must be the parameter's: anything else is an :class:`ArgumentTypeError`. Buffers a field points into
    get the kernel's writes back, as argument buffers do."""

    def __init__(self, *fields):
        for k, f in enumerate(fields):
            ok = f is None or isinstance(f, (DeviceArray, _Pad)) or (
                isinstance(f, np.generic) and not isinstance(f, np.void))
            if not ok:
                raise ArgumentTypeError(f"struct field {k}: a NumPy scalar (np.int32(n)), a DeviceArray, None or "
                                        f"Struct.pad(n), not {type(f).__name__}")
        self.fields = tuple(fields)

    @staticmethod
    def pad(n: int) -> _Pad:
        """``n`` bytes of explicit padding."""
        return _Pad(n)

    def __repr__(self):
        return f"Struct({', '.join(repr(f) for f in self.fields)})"

    def _wire(self, i: int, device: "Device") -> Dict[str, Any]:
        fields = []
        for k, f in enumerate(self.fields):
            if f is None:
                fields.append({"kind": "null"})
            elif isinstance(f, _Pad):
                fields.append({"kind": "pad", "offset": f.n})
            elif isinstance(f, DeviceArray):
                fields.append(_buffer_wire(f"argument {i}, field {k}", f, device))
            else:
                fields.append(_scalar_wire(f))
        return {"kind": "struct", "fields": fields}


def _buffer_wire(what: str, a: DeviceArray, device: "Device") -> Dict[str, Any]:
    if a.device is not device:
        raise InvalidInput(f"{what} lives on another device")
    root = a._root
    return {"kind": "buffer", "dtype": _dtype_name(root.dtype), "bytes": _bytes_of(root._data), "offset": a.offset}


def _scalar_wire(x) -> Dict[str, Any]:
    arr = np.asarray(x)
    if arr.dtype == np.bool_:
        return {"kind": "int", "text": "1" if bool(arr) else "0"}
    return {"kind": "scalar", "dtype": _dtype_name(arr.dtype), "bytes": arr.reshape(1).view(np.uint8)}


class Device:
    """A simulated GPU: a configuration (``"gtx480"``, ``"volta"``, ``"tiny"``, ``"temporal"``, ``"ispass09"``
    or a TOML file), a divergence mechanism and a warp size, all checked here (a ``ValueError``,
    :class:`InvalidInput`, for an unknown preset or a warp size the configuration cannot run).
    ``functional=True`` skips the timing model (no cycles, fastest). ``stats`` combines the statistics of
    every launch (counts summed, maxima kept, ratios recomputed from the sums: see ``docs/python.md``).

    The device created last is the current device (:func:`get_device`), which launches and
    ``Module.get_global`` use when given none; ``gpu.use()`` makes ``gpu`` current, and ``with gpu:``
    makes it current for a block, like CuPy's ``Device``."""

    #: The current device (the one created or used last).
    _current: Optional["Device"] = None

    def __init__(self, config: str = "gtx480", mechanism: str = "pdom", warp_size: int = 32,
                 functional: bool = False, max_instructions: Optional[int] = None,
                 max_memory: Optional[int] = None):
        if not isinstance(mechanism, str):
            raise InvalidInput(f"a mechanism is a name, not {type(mechanism).__name__}")
        mechanism = _core.mechanism_name(mechanism)
        if not isinstance(config, str):
            raise InvalidInput(f"config must be a preset name or a TOML file's path, not {type(config).__name__}")
        self.warp_size = _warp_size(warp_size)
        _core.check_device(config, self.warp_size)
        self.config, self.mechanism = config, mechanism
        self.functional = bool(functional)
        self.max_instructions = _count("max_instructions", max_instructions, optional=True)
        self.max_memory = _count("max_memory", max_memory, optional=True)
        self._total = _core.StatsTotal()
        self._stats: Optional[Dict[str, Any]] = {}
        self._vars: Dict[Tuple[int, str], Tuple[str, np.ndarray, bool]] = {}
        self._previous: List[Optional[Device]] = []
        Device._current = self

    def __repr__(self):
        mode = "functional" if self.functional else self.config
        return f"Device({mode}, {self.mechanism}, warp_size={self.warp_size})"

    def use(self) -> "Device":
        """Makes this the current device (the default of launches and ``Module.get_global``)."""
        Device._current = self
        return self

    def __enter__(self) -> "Device":
        self._previous.append(Device._current)
        return self.use()

    def __exit__(self, *exc) -> None:
        Device._current = self._previous.pop()

    @property
    def stats(self) -> Dict[str, Any]:
        """The statistics of every launch on this device combined (a copy; ``{}`` before the first):
        the keys of a launch's statistics plus ``launches``."""
        if self._stats is None:
            self._stats = json.loads(self._total.json())
        return json.loads(json.dumps(self._stats))

    @property
    def launches(self) -> int:
        """How many launches ``stats`` combines."""
        return int(self.stats.get("launches", 0))

    def reset_stats(self) -> None:
        """Starts ``stats`` over (device memory and module variables stay)."""
        self._total = _core.StatsTotal()
        self._stats = {}

    def _accumulate(self, stats_json: str) -> None:
        self._total.add(stats_json)
        self._stats = None

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


def get_device() -> Device:
    """The current device: the one created, ``use()``d or entered (``with gpu:``) last."""
    return _current_device("get_device")


def _current_device(what: str) -> Device:
    if Device._current is None:
        raise InvalidInput(f"{what}: no Device yet; create one (rc.Device(...)) or pass device=")
    return Device._current


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
    ``k(grid, block, args, device=gpu)`` returns the launch's statistics as a dict (``device`` defaults to
    the current device, :func:`get_device`).

    Arguments are checked against the parameters' PTX types: a :class:`DeviceArray` (or a view of one)
    fills a 64-bit pointer; a NumPy scalar must have the parameter's kind (integer or float; any for
    ``.bN``) and size, or it is an :class:`ArgumentTypeError` naming the argument, the parameter and both
    types (nothing is reinterpreted); a Python ``int`` fits an integer parameter it is in range of, and is
    converted for a float parameter; a Python ``float`` fits a float parameter only; a :class:`Struct` or a
    NumPy structured scalar fills a struct passed by value of its size."""

    def __init__(self, module: Module, name: str, params):
        self.module, self.name, self.params = module, name, params
        # The module variables the kernel can use (read once: every launch passes and reads them back).
        self._vars = module._m.variables(name)

    def __repr__(self):
        return f"Kernel({self.name}, {len(self.params)} parameters)"

    def _arg(self, i: int, a: Any, device: Device) -> Dict[str, Any]:
        if isinstance(a, DeviceArray):
            return _buffer_wire(f"argument {i}", a, device)
        if isinstance(a, Struct):
            return a._wire(i, device)
        if isinstance(a, np.void):
            # A NumPy structured scalar: its bytes, as NumPy laid them out (use align=True for C's layout).
            raw = np.frombuffer(a.tobytes(), dtype=np.uint8)
            return {"kind": "struct", "fields": [{"kind": "scalar", "dtype": "u8", "bytes": raw[k:k + 1]}
                                                 for k in range(len(raw))]}
        if isinstance(a, np.ndarray) and a.ndim > 0:
            raise ArgumentTypeError(f"argument {i}: pass arrays with device.to_device(...)")
        if isinstance(a, (np.generic, np.ndarray)):
            return _scalar_wire(a)
        if isinstance(a, bool):
            return {"kind": "int", "text": "1" if a else "0"}
        if isinstance(a, int):
            return {"kind": "int", "text": str(a)}
        if isinstance(a, float):
            return {"kind": "float", "text": repr(a)}
        raise ArgumentTypeError(f"argument {i}: unsupported type {type(a).__name__}")

    def __call__(self, grid, block, args: Sequence[Any], device: Optional[Device] = None, shared_mem: int = 0,
                 scalarize: bool = False) -> Dict[str, Any]:
        if device is None:
            device = _current_device("a launch")
        return self._launch(grid, block, args, device, shared_mem, scalarize, True)[0]

    def _launch(self, grid, block, args, device, shared_mem, scalarize, raise_errors):
        """One launch: (statistics, the run's record as CSV)."""
        if not isinstance(device, Device):
            raise InvalidInput(f"device must be a reconverge.Device, not {type(device).__name__}")
        if not isinstance(args, (list, tuple)):
            raise InvalidInput(f"args must be a tuple or list of arguments, not {type(args).__name__}")
        wire = [self._arg(i, a, device) for i, a in enumerate(args)]
        _warn_shared(args)
        # Every module variable the kernel can use lives on the device from its first launch on.
        mine = [self.module._register(device, v) for v in self._vars]
        globals_ = [(device._vars[k][0], _dtype_name(device._vars[k][1].dtype), _bytes_of(device._vars[k][1]),
                     device._vars[k][2] and device._vars[k][1].dtype.itemsize == 8) for k in mine]
        stats_json, buffers, dumped, record, fields = self.module._m.launch(self.name, dict(
            grid=_dim3(grid, "grid"), block=_dim3(block, "block"), args=wire, mechanism=device.mechanism,
            config=device.config, functional=device.functional, warp_size=device.warp_size, globals=globals_,
            dump=[device._vars[k][0] for k in mine], max_instructions=device.max_instructions,
            dynamic_shared=_count("shared_mem", shared_mem, most=2**32 - 1), scalarize=bool(scalarize),
            raise_errors=raise_errors, max_memory=device.max_memory))
        for a, out in zip(args, buffers):
            if isinstance(a, DeviceArray) and out is not None:
                a._root._data.reshape(-1).view(np.uint8)[:] = out
        for i, k, out in fields:
            field = args[i].fields[k]
            field._root._data.reshape(-1).view(np.uint8)[:] = out
        for k, (_, raw) in zip(mine, dumped):
            arr = device._vars[k][1]
            arr.reshape(-1).view(np.uint8)[: len(raw)] = raw[: arr.nbytes]
        device._accumulate(stats_json)
        stats = json.loads(stats_json)
        stats.pop("_counts", None)
        return stats, record


def _roots(a: Any) -> List["DeviceArray"]:
    """The arrays whose memory an argument passes (a struct's pointer fields too)."""
    if isinstance(a, DeviceArray):
        return [a._root]
    if isinstance(a, Struct):
        return [f._root for f in a.fields if isinstance(f, DeviceArray)]
    return []


def _warn_shared(args: Sequence[Any]) -> None:
    """Warns when two arguments pass the same device memory: each gets its own copy for the launch."""
    seen: Dict[int, int] = {}
    for i, a in enumerate(args):
        for r in _roots(a):
            if id(r) in seen:
                warnings.warn(f"arguments {seen[id(r)]} and {i} pass the same DeviceArray (or views of it): the "
                              "launch gives each its own copy, so a write through one is not seen through the "
                              "other, and the last one's contents are kept", RuntimeWarning, stacklevel=4)
            seen.setdefault(id(r), i)


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
    the columns of ``reconverge compare --csv`` (one row per run). Needs pandas (``pip install
    'reconverge[pandas]'``)."""
    pd = _need("pandas", "rc.compare")

    csv = _core.compare(_kernels_dir(kernels_dir), dict(
        kernels=list(kernels), mechanisms=list(mechanisms), warp_sizes=[int(w) for w in warp_sizes],
        configs=list(configs), functional=functional, scalarize=scalarize, threads=threads))
    return pd.read_csv(io.StringIO(csv))


from . import sweep as _sweep_module  # noqa: E402  (uses the names above)
from .program import Program, ProgramError, exec  # noqa: E402,A001  (rc.exec: a whole program)
from .sweep import Launch  # noqa: E402


def summary(df):
    _need("pandas", "rc.summary")
    return _sweep_module.summary(df)


summary.__doc__ = _sweep_module.summary.__doc__


@functools.wraps(_sweep_module.sweep)
def sweep(*args, **kwargs):
    # The optional dependencies a sweep needs, checked first so that a missing one names its extra:
    # pandas always, pyarrow for results=, Ray for backend="ray".
    _need("pandas", "rc.sweep")
    names = list(_sweep_module.sweep.__code__.co_varnames[:_sweep_module.sweep.__code__.co_argcount])
    given = dict(zip(names, args), **kwargs)
    if given.get("results") is not None:
        _need("pyarrow", "rc.sweep(results=...)")
    if given.get("backend") == "ray":
        _need("ray", 'rc.sweep(backend="ray")')
    return _sweep_module.sweep(*args, **kwargs)
