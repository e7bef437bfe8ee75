"""Sweeps: the local backend, resuming from Parquet, launches of your own, and a local Ray cluster giving
the same rows as the local backend."""

import os

import numpy as np
import pandas as pd
import pytest

import reconverge as rc

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def fig2_launch():
    return rc.Launch(name="fig2-mine", kernel="fig2", grid=1, block=64,
                     args=[np.zeros(64, np.int32), np.int32(1)],
                     path=os.path.join(ROOT, "kernels", "handwritten", "seed004_fig2.ptx"))


def test_a_local_sweep_resumes_from_parquet(tmp_path):
    out = str(tmp_path / "sweep.parquet")
    kw = dict(kernels=["fir", "kern", fig2_launch()], mechanisms=["pdom", "stackless-dcp"],
              warp_sizes=[8, 32], configs=["functional", "tiny"], results=out)
    df = rc.sweep(**kw)
    assert len(df) == 3 * 2 * 2 * 2 and df.attrs["ran"] == 24
    for k in ["sweep_kernel", "sweep_config", "sweep_warp_size", "sweep_mechanism", "cycles", "simd_efficiency"]:
        assert k in df.columns
    assert (df["outcome"] == "completed").all()
    assert df.loc[df["sweep_config"] == "functional", "cycles"].isna().all()
    assert (df.loc[df["sweep_config"] == "tiny", "cycles"] > 0).all()
    assert (df.loc[df["sweep_kernel"] != "fig2-mine", "check"] == "ok").all()
    # speedup_over_pdom as compare fills it: the sweep's own pdom row of the same kernel, config and warp size.
    tiny = df[df["sweep_config"] == "tiny"]
    for (k, w), g in tiny.groupby(["sweep_kernel", "sweep_warp_size"]):
        pdom = g.loc[g["sweep_mechanism"] == "pdom", "cycles"].iloc[0]
        other = g[g["sweep_mechanism"] == "stackless-dcp"].iloc[0]
        assert other["speedup_over_pdom"] == pytest.approx(pdom / other["cycles"], rel=1e-12), (k, w)
    assert df.loc[df["sweep_config"] == "functional", "speedup_over_pdom"].isna().all()
    s = rc.summary(df)
    assert set(s["mechanism"]) == {"pdom", "stackless-dcp"} and (s["kernels"] == 3).all()
    assert set(s["warp_size"]) == {8, 32} and set(s["config"]) == {"tiny"}
    again = rc.sweep(**kw)
    assert again.attrs["ran"] == 0
    pd.testing.assert_frame_equal(df.reset_index(drop=True), again.reset_index(drop=True), check_dtype=False)


def test_a_ray_sweep_equals_the_local_one(ray_cluster):
    kw = dict(kernels=["fir", "nested_loops", fig2_launch()], mechanisms=["pdom", "tbc", "dwf"],
              warp_sizes=[32], configs=["tiny"])
    local = rc.sweep(backend="local", **kw)
    remote = rc.sweep(backend="ray", **kw)
    pd.testing.assert_frame_equal(local, remote)
    assert remote.attrs["ran"] == 9
