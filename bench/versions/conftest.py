"""The engine-versions suite (pytest-benchmark): hot paths of the engine and the headline
analyses, each under a stable name, with the engine's version and build and the figures the
benchmarked call computed in `extra_info`, so two saved runs compare on speed and on numbers.

Kept out of the normal test collection (`testpaths = ["tests"]`); run it by path. Each version
is saved under its own name in bench/results/versions (`bench/versions/compare.py` does both runs
and the comparison):

    PYTHONPATH=python python -m pytest bench/versions -o addopts= --benchmark-only \
        --benchmark-storage=file://bench/results/versions --benchmark-save=<engine version>-<build>

`-o addopts=` runs it in one process: pyproject's addopts put the tests on a worker per CPU, and
pytest-benchmark does not time under xdist.

The suite uses only the library's public names; a benchmark whose function an older version
lacks is skipped with the name it needs, so one suite times both sides of a comparison.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/engine: the shared benchmark plant


def engine_identity() -> dict[str, str]:
    """The engine under test: its version string, and a build id (the compiled module's SHA-256,
    first 16 hex digits) telling apart two builds that share a version string."""
    import bathtub
    from bathtub import _engine

    path = Path(_engine.__file__)
    try:
        library = version("bathtub")
    except PackageNotFoundError:
        library = "not installed (a source tree on PYTHONPATH)"
    return {"engine_version": str(getattr(bathtub, "engine_version", _engine.__version__)),
            "engine_build": hashlib.sha256(path.read_bytes()).hexdigest()[:16],
            "engine_path": str(path), "library_version": library}


def need(module: str, name: str) -> Any:
    """A public name of the library, or skip the benchmark when this version lacks it."""
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        pytest.skip(f"this version has no {module}.{name}")


def pytest_benchmark_update_machine_info(config: pytest.Config, machine_info: dict[str, Any]) -> None:
    # The saved run says which engine it timed and how loaded the machine was (a shared machine's
    # timings are read with its load beside them).
    machine_info["bathtub"] = engine_identity()
    machine_info["load_average"] = [round(x, 2) for x in os.getloadavg()]


@pytest.fixture
def record(benchmark: Any) -> Callable[..., None]:
    """`record(figures, seed=..., replications=...)`: the run's figures and settings into
    `extra_info`, beside the engine identity."""
    ident = engine_identity()

    def put(figures: dict[str, float], **settings: Any) -> None:
        benchmark.extra_info.update(ident)
        benchmark.extra_info.update(settings)
        benchmark.extra_info["figures"] = {k: float(v) for k, v in figures.items()}

    return put
