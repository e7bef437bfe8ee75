"""Fixtures shared by the test modules."""

import os

import pytest


@pytest.fixture(scope="session")
def ray_cluster():
    """One local Ray cluster (two CPUs) for every test that sweeps with backend="ray": starting Ray takes
    seconds, so the tests share it. Skips where Ray is missing, unless RECONVERGE_REQUIRE_RAY=1."""
    try:
        import ray
    except ImportError:
        if os.environ.get("RECONVERGE_REQUIRE_RAY") == "1":
            raise
        pytest.skip("ray is not installed")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()
