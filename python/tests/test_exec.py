"""Whole CUDA programs: ``rc.exec`` runs an unmodified program (compiled by NVIDIA's ``nvcc -cudart shared``)
with reconverge's drop-in ``libcudart.so.13`` and returns a row per launch; ``rc.Program`` puts programs in
``rc.sweep``, locally and on a local Ray cluster.

The programs are ``crates/reconverge-cudart/tests/programs/*.cu``, compiled here by the CUDA 13 wheel's
``nvcc`` (``RECONVERGE_NVCC``, or under ``.tools/cuda``); the runtime is the one cargo built
(``RECONVERGE_CUDART``, or ``target/*/deps/libreconverge_cudart.so``). Without either the tests that need
it are skipped, unless ``RECONVERGE_REQUIRE_NVCC`` is set (then they fail)."""

import glob
import math
import os
import subprocess
import sys

import pytest

import reconverge as rc
from reconverge import program as rc_program

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROGRAMS = os.path.join(ROOT, "crates", "reconverge-cudart", "tests", "programs")


def _unavailable(why: str):
    if os.environ.get("RECONVERGE_REQUIRE_NVCC"):
        pytest.fail(f"{why} (RECONVERGE_REQUIRE_NVCC is set)")
    pytest.skip(why)


def _nvcc():
    env = os.environ.get("RECONVERGE_NVCC")
    if env:
        return env
    found = sorted(glob.glob(os.path.join(ROOT, ".tools", "cuda", "lib", "python3*", "site-packages", "nvidia",
                                          "cu13", "bin", "nvcc")))
    return found[-1] if found else None


@pytest.fixture(scope="module")
def shim():
    try:
        return rc_program.find_shim()
    except rc.InvalidInput as e:
        _unavailable(f"the CUDA runtime shim is not built: {e}")


@pytest.fixture(scope="module")
def programs(tmp_path_factory, shim):
    """gaussian, unsupported and oob, compiled for compute_80 PTX against NVIDIA's libcudart (as a user would)."""
    nvcc = _nvcc()
    if not nvcc or not os.path.isfile(nvcc):
        _unavailable("nvcc (the CUDA 13 wheel: pip install -r scripts/requirements-cuda.txt) is not installed")
    out = tmp_path_factory.mktemp("programs")
    bindir = os.path.dirname(os.path.abspath(nvcc))
    os.symlink(os.path.join(bindir, "..", "lib", "libcudart.so.13"), out / "libcudart.so")
    env = dict(os.environ, PATH=f"{bindir}:{os.environ.get('PATH', '')}")
    built = {}
    for name in ("gaussian", "unsupported", "oob"):
        exe = str(out / name)
        done = subprocess.run([nvcc, "-cudart", "shared", "-gencode", "arch=compute_80,code=compute_80", "-L",
                               str(out), "-o", exe, os.path.join(PROGRAMS, f"{name}.cu")], env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, f"nvcc {name}: {done.stderr}"
        built[name] = exe
    return built


def fan(kernel: str) -> str:
    return "Fan1" if "Fan1" in kernel else "Fan2" if "Fan2" in kernel else kernel


def test_gaussian_functional_and_timed(programs):
    df = rc.exec([programs["gaussian"]], config=None)
    assert len(df) == 30
    assert list(df["launch"]) == list(range(1, 31))
    assert [fan(k) for k in df["kernel"]] == ["Fan1", "Fan2"] * 15
    assert (df["outcome"] == "completed").all() and (df["exit_status"] == 0).all()
    assert (df["mechanism"] == "pdom").all() and (df["warp_size"] == 32).all()
    assert df["cycles"].isna().all() and df["config"].isna().all()
    assert (df["program"] == programs["gaussian"]).all()
    assert df.attrs["stdout"].splitlines()[-1] == "PASS" and df.attrs["exit_status"] == 0
    assert df.attrs["config"] is None
    assert "_counts" not in df.columns and "_counts_issued" not in df.columns
    for k in ["grid", "block", "dynamic_shared", "stream", "warp_instructions", "simd_efficiency", "by_class_int"]:
        assert k in df.columns, k
    assert df["grid"].iloc[0] == (2, 1, 1) and df["block"].iloc[1] == (4, 4, 1)

    timed = rc.exec(programs["gaussian"], mechanism="tbc", config="gtx480", threads=1)
    assert len(timed) == 30 and (timed["outcome"] == "completed").all()
    assert (timed["cycles"] > 0).all() and (timed["mechanism"] == "tbc").all()
    assert (timed["config"] == "gtx480").all() and timed.attrs["config"]["name"] == "gtx480"
    assert "stall_memory" in timed.columns and "memory_l1_hits" in timed.columns
    assert "mechanism_counters_compactions" in timed.columns
    # The functional run executes the same instructions.
    assert list(timed["warp_instructions"]) == list(df["warp_instructions"])
    # A narrower warp reaches the runtime.
    narrow = rc.exec([programs["gaussian"]], config="functional", warp_size=8)
    assert (narrow["warp_size"] == 8).all() and len(narrow) == 30


def test_bad_settings_fail_before_the_program_runs(tmp_path):
    marker = tmp_path / "ran"
    command = [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
    with pytest.raises(rc.InvalidInput, match="unknown mechanism `nope`"):
        rc.exec(command, mechanism="nope")
    with pytest.raises(rc.InvalidInput, match="gtx48"):
        rc.exec(command, config="gtx48")
    with pytest.raises(rc.InvalidInput, match="warp_size"):
        rc.exec(command, warp_size=48)
    with pytest.raises(rc.InvalidInput, match="max_cycles"):
        rc.exec(command, max_cycles=-1)
    with pytest.raises(rc.InvalidInput, match="config=None"):
        rc.exec(command, config=None, sample=True)
    with pytest.raises(rc.InvalidInput, match="empty"):
        rc.exec([])
    with pytest.raises(rc.InvalidInput, match="mechanism `nope`"):
        rc.sweep(kernels=[rc.Program(command)], mechanisms=["nope"])
    assert not marker.exists()


def test_a_missing_runtime_says_how_to_build_it(monkeypatch):
    monkeypatch.setenv("RECONVERGE_CUDART", "/nonexistent/libreconverge_cudart.so")
    with pytest.raises(rc.InvalidInput, match="cargo build --release -p reconverge-cudart"):
        rc.exec([sys.executable, "-c", "pass"])


def test_settings_reach_the_program_as_environment_variables(shim, tmp_path):
    script = ("import os, sys\n"
              "for k in ['RECONVERGE_MECHANISM', 'RECONVERGE_CONFIG', 'RECONVERGE_WARP_SIZE',"
              " 'RECONVERGE_MAX_CYCLES', 'RECONVERGE_THREADS', 'RECONVERGE_SAMPLE', 'MINE']:\n"
              "    print(k, os.environ.get(k))\n"
              "lib = os.environ['LD_LIBRARY_PATH'].split(':')[0]\n"
              "print('link', os.path.realpath(os.path.join(lib, 'libcudart.so.13')))\n"
              "print('cwd', os.getcwd())\n"
              "sys.stderr.write('to stderr\\n')\n")
    df = rc.exec([sys.executable, "-c", script], mechanism="dwf:majority", config="tiny", warp_size=8,
                 max_cycles=1000, threads=1, sample=True, cwd=str(tmp_path),
                 env={"MINE": "yes", "RECONVERGE_WARP_SIZE": "2"})
    assert len(df) == 0 and "launch" in df.columns and "exit_status" in df.columns
    lines = dict(line.split(" ", 1) for line in df.attrs["stdout"].splitlines())
    assert lines["RECONVERGE_MECHANISM"] == "dwf"  # the alias's mechanism
    assert lines["RECONVERGE_CONFIG"] == "tiny" and lines["RECONVERGE_WARP_SIZE"] == "8"
    assert lines["RECONVERGE_MAX_CYCLES"] == "1000" and lines["RECONVERGE_THREADS"] == "1"
    assert lines["RECONVERGE_SAMPLE"] == "1" and lines["MINE"] == "yes"
    assert lines["link"] == os.path.realpath(shim)
    assert lines["cwd"] == os.path.realpath(str(tmp_path))
    assert df.attrs["stderr"] == "to stderr\n"
    functional = rc.exec([sys.executable, "-c", script], config=None)
    assert "RECONVERGE_CONFIG functional" in functional.attrs["stdout"]
    assert "RECONVERGE_WARP_SIZE None" in functional.attrs["stdout"]


def test_a_failing_program_raises_program_error(shim):
    with pytest.raises(rc.ProgramError) as e:
        rc.exec([sys.executable, "-c", "import sys; print('out'); sys.exit('boom')"])
    assert isinstance(e.value, rc.ReconvergeError)
    assert e.value.returncode == 1 and e.value.stdout == "out\n" and "boom" in e.value.stderr
    assert "exited with status 1" in str(e.value) and "boom" in str(e.value)


def test_an_unsupported_call_raises_program_error(programs):
    with pytest.raises(rc.ProgramError) as e:
        rc.exec([programs["unsupported"]], config=None)
    err = e.value
    assert err.returncode == 2
    assert "the CUDA runtime call `cudaLaunchCooperativeKernel` is not supported" in err.stderr
    assert "cudaLaunchCooperativeKernel" in str(err)
    assert "kernel ok" in err.stdout
    assert len(err.launches) == 1 and err.launches["outcome"].iloc[0] == "completed"
    df = rc.exec([programs["unsupported"]], config=None, check=False)
    assert len(df) == 1 and list(df["exit_status"]) == [2] and "iota" in df["kernel"].iloc[0]
    assert "cudaLaunchCooperativeKernel" in df.attrs["stderr"] and df.attrs["exit_status"] == 2


def test_a_launch_that_stops_early_fails_the_run_although_the_program_exits_0(programs):
    # oob's kernel faults; the program sees cudaErrorIllegalAddress, handles it and exits 0 (as with
    # `reconverge exec`, which exits 2 then, check=True raises).
    with pytest.raises(rc.ProgramError, match="launch 1 .* stopped early: error: out-of-bounds") as e:
        rc.exec([programs["oob"]], config=None)
    assert e.value.returncode == 0 and "got cudaErrorIllegalAddress" in e.value.stdout
    df = rc.exec([programs["oob"]], config=None, check=False)
    assert list(df["outcome"]) == ["error"] and list(df["exit_status"]) == [0]
    assert "thread (37,0,0)" in df["error"].iloc[0]


def sweep_args(programs):
    return dict(kernels=[rc.Program([programs["gaussian"]], name="gaussian")], mechanisms=["pdom", "tbc"],
                configs=["functional", "gtx480"])


def test_a_local_sweep_of_a_program(programs, tmp_path):
    out = str(tmp_path / "sweep.parquet")
    df = rc.sweep(results=out, **sweep_args(programs))
    assert len(df) == 4 * 30 and df.attrs["ran"] == 4
    assert (df["sweep_kernel"] == "gaussian").all()
    assert (df["outcome"] == "completed").all() and (df["exit_status"] == 0).all()
    for (c, m), g in df.groupby(["sweep_config", "sweep_mechanism"]):
        assert list(g["launch"]) == list(range(1, 31)), (c, m)
        assert (g["mechanism"] == m).all()
        assert [fan(k) for k in g["kernel"]] == ["Fan1", "Fan2"] * 15
    functional = df[df["sweep_config"] == "functional"]
    timed = df[df["sweep_config"] == "gtx480"]
    assert functional["cycles"].isna().all() and functional["speedup_over_pdom"].isna().all()
    assert (timed["cycles"] > 0).all()
    # speedup_over_pdom: the same launch under pdom.
    pdom = timed[timed["sweep_mechanism"] == "pdom"].set_index("launch")["cycles"]
    for _, r in timed.iterrows():
        assert r["speedup_over_pdom"] == pytest.approx(pdom[r["launch"]] / r["cycles"], rel=1e-12)
    # The summary counts the program once, its cycles summed over its launches.
    s = rc.summary(df).set_index("mechanism")
    assert (s["kernels"] == 1).all()
    tbc = timed[timed["sweep_mechanism"] == "tbc"]["cycles"].sum()
    assert s.loc["tbc", "geomean_speedup"] == pytest.approx(pdom.sum() / tbc, rel=1e-12)
    # Resuming from the Parquet file gives the same rows without running anything.
    again = rc.sweep(results=out, **sweep_args(programs))
    assert again.attrs["ran"] == 0
    import pandas as pd

    pd.testing.assert_frame_equal(df, again, check_dtype=False)


def test_a_ray_sweep_of_a_program_equals_the_local_one(programs, ray_cluster):
    import pandas as pd

    local = rc.sweep(backend="local", **sweep_args(programs))
    remote = rc.sweep(backend="ray", **sweep_args(programs))
    pd.testing.assert_frame_equal(local, remote)
    assert remote.attrs["ran"] == 4 and len(remote) == 120
    assert not math.isnan(remote["speedup_over_pdom"].iloc[-1])
