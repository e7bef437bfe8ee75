"""The Python package's CuPy-style API: optional dependencies and their extras, the current device,
DeviceArray views, argument type checks, structs passed by value, template kernel names, construction-time
checks, Pythonic errors (the deadlock's attributes) and Device.stats combining launches key by key."""

import json
import os
import pickle
import sys

import numpy as np
import pytest

import reconverge as rc
from reconverge import _core

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(os.path.dirname(__file__), "data")


def fig2():
    """Seed 004's Figure 2: out[t] = 3 × (t % 3 + 1) for n = 1; parameters .u64 out, .u32 n."""
    return rc.Module(path=os.path.join(ROOT, "kernels", "handwritten", "seed004_fig2.ptx")).get_function("fig2")


def spinlock(gpu):
    spin = rc.Module(path=os.path.join(ROOT, "kernels", "ptx", "sm_80", "spinlock_naive.ptx"))
    k = spin.get_function(spin.kernels()[0])
    return k, [gpu.zeros(4, np.int32) if ptr else np.int32(1) for _, _, _, ptr in k.params]


# 1. Optional dependencies: each ImportError names the extra that installs it, and pyproject declares it.

def project():
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(ROOT, "python", "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def test_the_extras_are_declared_and_the_core_needs_numpy_only():
    declared = project()["optional-dependencies"]
    for extra in ["pandas", "parquet", "ray", "all"]:
        assert extra in declared, extra
    assert any(d.startswith("pyarrow") for d in declared["parquet"])
    assert any(d.startswith("ray") for d in declared["ray"])
    assert {d.split(">")[0] for d in declared["all"]} >= {"pandas", "pyarrow", "ray"}
    assert [d.split(">")[0] for d in project()["dependencies"]] == ["numpy"]
    # Every extra an error message names is declared.
    assert set(rc.EXTRAS.values()) <= set(declared)
    # `all` installs every other extra; `nvrtc` pins what scripts/requirements-cuda.txt pins.
    for extra, packages in declared.items():
        if extra not in ("all", "test"):
            assert set(packages) - {"pandas>=1.5"} <= set(declared["all"]), extra
    with open(os.path.join(ROOT, "scripts", "requirements-cuda.txt"), encoding="utf-8") as f:
        pinned = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    assert declared["nvrtc"] and set(declared["nvrtc"]) <= pinned
    assert {d.split("==")[0] for d in declared["nvrtc"]} == {
        "nvidia-cuda-nvrtc-cu12", "nvidia-cuda-runtime-cu12", "nvidia-cuda-cccl-cu12"}


def test_the_nvidia_wheels_of_this_interpreter_reach_the_native_module(monkeypatch, tmp_path):
    import importlib.machinery
    import importlib.util
    root = tmp_path / "nvidia"
    (root / "cuda_nvrtc" / "lib").mkdir(parents=True)
    (root / "cuda_nvrtc" / "lib" / "libnvrtc.so.12").write_bytes(b"")
    (root / "cuda_runtime" / "include").mkdir(parents=True)
    (root / "cuda_cccl" / "include").mkdir(parents=True)
    spec = importlib.machinery.ModuleSpec("nvidia", None, is_package=True)
    spec.submodule_search_locations = [str(root)]
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: spec if name == "nvidia" else None)
    monkeypatch.delenv("RECONVERGE_NVRTC", raising=False)
    monkeypatch.setenv("RECONVERGE_CUDA_INCLUDE", "/mine")
    rc._nvidia_wheels_of_this_interpreter()
    assert os.environ["RECONVERGE_NVRTC"] == str(root / "cuda_nvrtc" / "lib" / "libnvrtc.so.12")
    assert os.environ["RECONVERGE_CUDA_INCLUDE"] == "/mine"  # what the user set stays
    monkeypatch.delenv("RECONVERGE_CUDA_INCLUDE")
    rc._nvidia_wheels_of_this_interpreter()
    assert os.environ["RECONVERGE_CUDA_INCLUDE"] == f"{root}/cuda_runtime/include:{root}/cuda_cccl/include"


def test_compare_without_pandas_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` now raises ImportError
    with pytest.raises(ImportError, match=r"^rc\.compare needs pandas: pip install 'reconverge\[pandas\]'$"):
        rc.compare(kernels=["kern"], mechanisms=["pdom"])


def test_sweep_without_pyarrow_or_ray_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ImportError, match=r"results=.*needs pyarrow: pip install 'reconverge\[parquet\]'"):
        rc.sweep(["kern"], ["pdom"], configs=["functional"], results=str(tmp_path / "s.parquet"))
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r"backend=\"ray\".*needs ray: pip install 'reconverge\[ray\]'"):
        rc.sweep(["kern"], ["pdom"], configs=["functional"], backend="ray")
    # Positional arguments are seen too.
    with pytest.raises(ImportError, match=r"reconverge\[ray\]"):
        rc.sweep(["kern"], ["pdom"], (32,), ("functional",), "ray")
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"rc\.sweep needs pandas: pip install 'reconverge\[pandas\]'"):
        rc.sweep(["kern"], ["pdom"], configs=["functional"])


# 2. The current device.

def test_a_launch_without_device_uses_the_current_device():
    a = rc.Device(functional=True, mechanism="tbc")
    b = rc.Device(functional=True, mechanism="pdom")  # created last: current
    assert rc.get_device() is b
    out = b.zeros(8, np.int32)
    stats = fig2()(1, 8, (out, np.uint32(1)))
    assert stats["mechanism"] == "pdom" and b.launches == 1 and a.launches == 0
    assert out.get().tolist() == [3 * (t % 3 + 1) for t in range(8)]
    with a:
        assert rc.get_device() is a
        fig2()(1, 8, (a.zeros(8, np.int32), np.uint32(1)))
    assert rc.get_device() is b and a.launches == 1
    a.use()
    assert rc.get_device() is a


# 3. DeviceArray: len, shape, dtype, __array__, views as pointer offsets, copy_to_host.

def test_device_arrays_behave_like_cupy_arrays():
    gpu = rc.Device(functional=True)
    host = np.arange(12, dtype=np.int32).reshape(4, 3)
    d = gpu.to_device(host)
    assert len(d) == 4 and d.shape == (4, 3) and d.dtype == np.int32 and d.size == 12 and d.nbytes == 48
    assert np.array_equal(np.asarray(d), host) and np.array_equal(d.copy_to_host(), host)
    out = np.empty((4, 3), np.int32)
    assert d.get(out=out) is out and np.array_equal(out, host)
    row = d[2]
    assert row.shape == (3,) and row.offset == 24 and row.base is d
    assert d[-1].offset == 36 and d[1:].offset == 12 and len(d[1:3]) == 2
    d[1:][0] = 99  # a view writes through to its array
    assert d.get()[1].tolist() == [99, 99, 99]
    with pytest.raises(rc.InvalidInput, match="step 1"):
        d[::2]
    with pytest.raises(rc.InvalidInput, match="int or a slice"):
        d[[0, 1]]
    with pytest.raises(IndexError):
        d[4]
    with pytest.raises(TypeError):
        len(gpu.to_device(np.int32(3)))


def test_a_view_is_a_pointer_into_its_array():
    gpu = rc.Device(functional=True)
    base = gpu.to_device(np.full(10, -1, np.int32))
    fig2()(1, 8, (base[2:], np.uint32(1)), device=gpu)
    # The kernel wrote out[0..8] through a pointer 8 bytes into the array; the first two stay.
    assert base.get().tolist() == [-1, -1] + [3 * (t % 3 + 1) for t in range(8)]
    # Past the view's end (within its array) is the array, as for `d_a + 2` in CUDA.
    short = gpu.to_device(np.zeros(12, np.int32))
    fig2()(1, 8, (short[4:6], np.uint32(1)), device=gpu)
    assert short.get()[4:].tolist() == [3 * (t % 3 + 1) for t in range(8)]
    with pytest.warns(RuntimeWarning, match="arguments 0 and 1 pass the same DeviceArray"):
        m = rc.Module(path=os.path.join(ROOT, "kernels", "ptx", "sm_80", "spinlock_naive.ptx"))
        k = m.get_function(m.kernels()[0])
        try:
            k(1, 1, (base, base[1:]), device=gpu)
        except (rc.DeadlockError, rc.LimitError):
            pass


# 4. Scalars are checked against the parameters' PTX types.

def test_numpy_scalars_must_fit_their_parameter():
    gpu = rc.Device(functional=True)
    out = gpu.zeros(8, np.int32)
    k = fig2()  # (.u64 out, .u32 n)
    for bad, name in [(np.float64(1), "float64"), (np.float32(1), "float32"), (np.int64(1), "int64"),
                      (np.uint8(1), "uint8")]:
        with pytest.raises(TypeError, match=rf"argument 1 \(parameter `fig2_param_1`, \.u32 of 4 bytes\): "
                                            rf"a NumPy {name} .* does not fit a \.u32 parameter"):
            k(1, 8, (out, bad), device=gpu)
    assert out.get().tolist() == [0] * 8, "nothing ran"
    with pytest.raises(rc.ArgumentTypeError, match="a Python float does not fit an integer parameter"):
        k(1, 8, (out, 1.0), device=gpu)
    with pytest.raises(rc.InvalidInput, match="does not fit"):
        k(1, 8, (out, 2**32), device=gpu)  # out of .u32's range: a value error, not a type error
    with pytest.raises(rc.ArgumentTypeError, match=r"argument 1 .*\.u32.*a device array is passed as a 64-bit"):
        k(1, 8, (np.uint64(0), out), device=gpu)
    # Signedness of the same size is C's: np.int32 for .u32 passes its bits.
    k(1, 8, (out, np.int32(1)), device=gpu)
    assert out.get().tolist() == [3 * (t % 3 + 1) for t in range(8)]
    assert issubclass(rc.ArgumentTypeError, TypeError) and issubclass(rc.ArgumentTypeError, rc.InvalidInput)


def test_python_ints_are_converted_for_float_parameters():
    m = rc.Module(path=os.path.join(ROOT, "kernels", "ptx", "sm_80-nofma", "mandelbrot.ptx"))
    k = m.get_function("mandelbrot")
    gpu = rc.Device(functional=True)
    a, b = gpu.zeros(874, np.int32), gpu.zeros(874, np.int32)
    k((2, 2), (20, 12), (a, np.int32(38), np.int32(23), np.float32(-2.0), np.float32(-1.0),
                         np.float32(0.0625), np.float32(0.09375), np.int32(64)), device=gpu)
    # -1 (a Python int) for .f32 is -1.0f, not the bits of the integer -1.
    k((2, 2), (20, 12), (b, 38, 23, -2.0, -1, 0.0625, 0.09375, 64), device=gpu)
    assert np.array_equal(a.get(), b.get()) and (a.get() > 0).any()
    with pytest.raises(rc.ArgumentTypeError, match=r"argument 3 .*\.f32.*a NumPy float64"):
        k((2, 2), (20, 12), (b, 38, 23, np.float64(-2.0), -1, 0.0625, 0.09375, 64), device=gpu)


# Structs passed by value.

def test_a_struct_is_laid_out_as_c_and_checked_against_the_parameter():
    k = rc.Module(path=os.path.join(DATA, "struct_arg.ptx")).get_function("bump")  # .align 8 .b8 [24]
    gpu = rc.Device(functional=True)
    d = gpu.to_device(np.arange(8, dtype=np.int32))
    # struct { int n; int* data; float add; }: n at 0, data at 8, add at 16; data points 4 bytes in.
    k(1, 32, (rc.Struct(np.int32(4), d[1:], np.float32(10.0)),), device=gpu)
    assert d.get().tolist() == [0, 15, 16, 17, 18, 5, 6, 7]
    with pytest.raises(rc.ArgumentTypeError, match=r"the struct is 16 bytes .*the parameter 24 bytes"):
        k(1, 32, (rc.Struct(np.int32(4), d),), device=gpu)
    with pytest.raises(rc.ArgumentTypeError, match="struct passed by value; pass rc.Struct"):
        k(1, 32, (np.int32(4),), device=gpu)
    with pytest.raises(rc.ArgumentTypeError, match="struct field 1"):
        rc.Struct(np.int32(1), 2)
    # Explicit padding and a null pointer: the kernel reads n = 0 and does nothing.
    k(1, 32, (rc.Struct(np.int32(0), rc.Struct.pad(4), None, np.float32(1.0), rc.Struct.pad(4)),), device=gpu)
    # A NumPy structured scalar with C's layout (align=True) is a struct of its bytes.
    ty = np.dtype([("n", np.int32), ("data", np.uint64), ("add", np.float32)], align=True)
    assert ty.itemsize == 24
    k(1, 32, (np.zeros((), ty)[()],), device=gpu)
    assert d.get().tolist() == [0, 15, 16, 17, 18, 5, 6, 7]


# 5. Template kernels by their short names.

def test_template_instances_are_found_by_short_name_signature_or_mangled_name():
    m = rc.Module(path=os.path.join(DATA, "templates.ptx"))
    for name in ["scale<float>", "void scale<float>(float*, int)", "scale<float>(float*, int)",
                 "scale<float>(float*,int)", "_Z5scaleIfEvPT_i"]:
        assert m.get_function(name).params[0][0] == "_Z5scaleIfEvPT_i_param_0", name
    assert m.get_function("scale<int>").params[0][0] == "_Z5scaleIiEvPT_i_param_0"
    with pytest.raises(rc.InvalidInput, match="no kernel named `scale<double>`"):
        m.get_function("scale<double>")
    gpu = rc.Device(functional=True)
    x = gpu.to_device(np.arange(4, dtype=np.float32))
    m.get_function("scale<float>")(1, 32, (x, 4), device=gpu)
    assert x.get().tolist() == [0.0, 2.0, 4.0, 6.0]
    # get_global and variables work on a module of several kernels (no `--kernel` needed).
    assert rc.Module(path=os.path.join(DATA, "rodinia_bfs.ptx"))._m.variables(None) == []


# 6. Construction-time checks.

def test_a_device_is_checked_when_it_is_made():
    with pytest.raises(ValueError, match="config `ampere` is neither a preset"):
        rc.Device(config="ampere")
    with pytest.raises(ValueError, match="warp_size must be a power of two"):
        rc.Device(warp_size=48)
    with pytest.raises(ValueError, match="unknown mechanism `nope`"):
        rc.Device(mechanism="nope")
    # What the configuration accepts is accepted.
    assert rc.Device(config="tiny", warp_size=64).warp_size == 64


# 7. Errors speak Python.

def test_errors_name_keywords_not_flags_and_the_deadlock_carries_its_threads():
    gpu = rc.Device(functional=True, max_instructions=10)
    with pytest.raises(rc.LimitError) as e:
        fig2()(1, 8, (gpu.zeros(8, np.int32), np.uint32(1)), device=gpu)
    msg = str(e.value)
    assert "max_instructions=10" in msg and "--" not in msg and not msg.startswith("error")
    assert e.value.stats["outcome"] == "limit" and e.value.stats["partial"] is True
    assert gpu.launches == 0, "a launch that raised is not counted"
    with pytest.raises(rc.InvalidInput) as e:
        rc.Module(path=os.path.join(DATA, "rodinia_bfs.ptx"))._m.params(None)
    assert "--kernel" not in str(e.value) and "get_function(name)" in str(e.value)
    gpu = rc.Device(mechanism="pdom", functional=True)
    k, args = spinlock(gpu)
    with pytest.raises(rc.DeadlockError) as e:
        k(1, 32, args, device=gpu)
    d = e.value
    assert str(d).startswith("SIMT deadlock: ") and d.report in str(d)
    assert d.livelock is True
    assert d.threads and all(t["block"] == [0, 0, 0] and t["warp"] == 0 for t in d.threads)
    lanes = {t["lanes"] for t in d.threads}
    assert lanes == {"0", "1-31"}, lanes  # thread 0 holds the lock, the others spin
    assert d.pcs == sorted({t["pc"] for t in d.threads}) and len(d.pcs) == 2
    assert all(f"pc {t['pc']} in " in t["where"] for t in d.threads)
    assert d.stats["outcome"] == "deadlock" and d.stats["warp_instructions"] > 0 and "_counts" not in d.stats
    # The exception pickles with its attributes (Ray sends exceptions between processes).
    again = pickle.loads(pickle.dumps(d))
    assert type(again) is rc.DeadlockError and again.pcs == d.pcs and again.threads == d.threads


# 8. Device.stats: every key by its kind.

def test_device_stats_sum_counts_keep_maxima_and_recompute_ratios():
    k = fig2()
    gpu = rc.Device(config="gtx480", mechanism="tbc")
    one = None
    for _ in range(7):
        one = k(1, 40, (gpu.zeros(40, np.int32), np.uint32(1)), device=gpu, scalarize=True)
    s = gpu.stats
    assert s["launches"] == 7 and "_counts" not in s and "_counts" not in one
    for key in ["warp_instructions", "cycles", "branches", "ctas"]:
        assert s[key] == 7 * one[key], key
    for key in ["max_stack_depth"]:
        assert s[key] == one[key], f"{key} is a maximum"
    for key in ["simd_efficiency", "simd_efficiency_all", "ipc", "issue_utilization", "l1_hit_rate",
                "l2_hit_rate"]:
        assert s[key] == pytest.approx(one[key], rel=1e-12), key
    assert 0 < s["simd_efficiency_all"] <= 1
    assert s["stall_cycles"]["memory"] == 7 * one["stall_cycles"]["memory"]
    assert s["memory"]["l2_accesses"] == 7 * one["memory"]["l2_accesses"]
    assert s["by_class"]["int"] == 7 * one["by_class"]["int"]
    assert s["mechanism_counters"]["compactions"] == 7 * one["mechanism_counters"]["compactions"]
    assert s["scalarization"]["convergent_share"] == one["scalarization"]["convergent_share"]
    assert s["branches_by_pc"][0]["executions"] == 7 * one["branches_by_pc"][0]["executions"]
    assert s["lane_histogram"] == [7 * x for x in one["lane_histogram"]]
    # Energy (docs/energy.md): joules and seconds summed, power and EDP recomputed from the sums.
    e, e1 = s["energy"], one["energy"]
    assert e["total_j"] == pytest.approx(7 * e1["total_j"], rel=1e-12)
    assert e["components_j"]["constant"] == pytest.approx(7 * e1["components_j"]["constant"], rel=1e-12)
    assert e["average_power_w"] == pytest.approx(e1["average_power_w"], rel=1e-12)
    assert e["edp_js"] == pytest.approx(e["total_j"] * e["seconds"], rel=1e-12)
    assert s["memory"]["dram"]["activates"] == 7 * one["memory"]["dram"]["activates"]
    assert _core.stat_kind("energy.total_j") == "Quantity"
    gpu.reset_stats()
    assert gpu.stats == {} and gpu.launches == 0


def test_ratios_of_different_launches_come_from_the_summed_counts():
    gpu = rc.Device(functional=True, mechanism="pdom", warp_size=32)
    k = fig2()
    a = k(3, 32, (gpu.zeros(96, np.int32), np.uint32(1)), device=gpu)
    b = k(1, 5, (gpu.zeros(5, np.int32), np.uint32(1)), device=gpu)
    assert a["kernel_instructions"] != b["kernel_instructions"]
    s = gpu.stats
    want = (a["kernel_thread_instructions"] + b["kernel_thread_instructions"]) / (
        32 * (a["kernel_instructions"] + b["kernel_instructions"]))
    assert s["simd_efficiency"] == pytest.approx(want) and s["simd_efficiency"] != (a["simd_efficiency"] +
                                                                                    b["simd_efficiency"]) / 2
    assert s["max_stack_depth"] == max(a["max_stack_depth"], b["max_stack_depth"])


@pytest.mark.parametrize("mechanism", rc.mechanisms())
def test_every_statistic_of_every_mechanism_has_an_aggregation_rule(mechanism):
    # A timed launch with seed 004's metrics has every key a launch can have; a key without a rule would
    # make Device.stats raise here.
    gpu = rc.Device(config="tiny", mechanism=mechanism)
    stats = fig2()(1, 40, (gpu.zeros(40, np.int32), np.uint32(1)), device=gpu, scalarize=True)
    _core.check_stats(json.dumps(stats))
    assert gpu.launches == 1
    bad = dict(stats, brand_new_statistic=1)
    with pytest.raises(rc.ReconvergeError, match="`brand_new_statistic` has no aggregation rule"):
        _core.check_stats(json.dumps(bad))
    assert _core.stat_kind("max_paths") == "Max" and _core.stat_kind("warp_instructions") == "Sum"
    assert _core.stat_kind("simd_efficiency").startswith("Ratio")


def test_the_docs_give_every_statistics_key_its_rule():
    with open(os.path.join(ROOT, "docs", "python.md"), encoding="utf-8") as f:
        doc = f.read()
    section = doc[doc.index("## How `Device.stats` combines launches"):]
    section = section[: section.index("\n## ", 1)]
    gpu = rc.Device(config="tiny", mechanism="capri")
    stats = fig2()(1, 40, (gpu.zeros(40, np.int32), np.uint32(1)), device=gpu, scalarize=True)
    missing = [k for k in stats if f"`{k}`" not in section and f"`{k}." not in section]
    assert not missing, f"docs/python.md does not say how these combine: {missing}"
