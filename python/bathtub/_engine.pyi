"""Type stubs of the compiled engine (`rust/py`). Structured results come back as JSON text."""

from collections.abc import Mapping

import numpy as np

__version__: str

# the library's class, raised by the engine with `path` and `rule`
from bathtub.errors import EngineError as EngineError

class Cancelled(Exception): ...

class RunControl:
    def __init__(self) -> None: ...
    def cancel(self) -> None: ...
    @property
    def cancelled(self) -> bool: ...
    @property
    def done(self) -> int: ...
    @property
    def planned(self) -> int: ...
    # CPU seconds the run's own threads spent (every call made with this control).
    @property
    def cpu_seconds(self) -> float: ...
    def report(self, done: int, planned: int) -> None: ...

def dist_eval(
    distribution_id: str,
    params: Mapping[str, float],
    function: str,
    t: list[float],
    base_distribution_id: str | None = None,
) -> list[float]: ...
def dist_mean(distribution_id: str, params: Mapping[str, float], base_distribution_id: str | None = None) -> float: ...
def renewal_downtime(life: tuple[str, Mapping[str, float]], repair: tuple[str, Mapping[str, float]], horizon: float,
                     replace: tuple[float, float] | None = None) -> tuple[float, float]: ...
# A sample's `draws`: n, seed, and optionally stream (0) and age (remaining lives of units that age).
def dist_sample(
    distribution_id: str,
    params: Mapping[str, float],
    draws: Mapping[str, object],
    base_distribution_id: str | None = None,
) -> list[float]: ...
def compile_diagram(diagram_json: str) -> list[str]: ...
# A run's `run`: seed, replication_start, replications or target_half_width (with
# max_replications, default 100000), and optionally threads and variance_reduction
# (none | control | auto; default none).
def simulate_availability(
    diagram_json: str,
    horizon: float,
    grid: int,
    crews: int,
    run: Mapping[str, object],
    control: RunControl | None = None,
) -> tuple[str, str]: ...
def simulate_mission(
    diagram_json: str,
    mission_time: float,
    grid: int,
    run: Mapping[str, object],
    control: RunControl | None = None,
) -> tuple[str, str]: ...
# A decision run's `plan` (`bathtub_engine::decisions::PlanSpec`): kind (availability | mission),
# time (the horizon or the mission time), crews, compared (up | cost), seed, replication_start,
# replications, and optionally threads.
def what_to_improve(
    diagram_json: str,
    plan: Mapping[str, object],
    blocks: list[str] | None = None,
    control: RunControl | None = None,
) -> str: ...
def interval_search(
    diagram_json: str,
    blocks: list[str],
    knob: str,
    intervals: list[float],
    plan: Mapping[str, object],
    control: RunControl | None = None,
) -> str: ...
def compare_designs(
    diagrams_json: list[str],
    plan: Mapping[str, object],
    control: RunControl | None = None,
) -> str: ...
def merge_availability(a: str, b: str) -> tuple[str, str]: ...
# Where an antithetic run to a target precision, with `state` so far, draws plain streams from
# (None while its pairs pay): a cluster's driver passes it to later chunks.
def availability_plain_from(state: str) -> int | None: ...
def merge_mission(a: str, b: str) -> tuple[str, str]: ...
def rare_check(diagram_json: str, crews: int) -> str | None: ...
# A run's `run`: seed, replication_start, replications or target_half_width (with
# max_replications, default 1_000_000), and optionally threads.
def simulate_rare(
    diagram_json: str,
    crews: int,
    run: Mapping[str, object],
    control: RunControl | None = None,
) -> str: ...
def alt_fit(
    life: str,
    relationship: str,
    t: list[float],
    failed: list[bool],
    stresses: list[list[float]],
    start: list[float],
) -> tuple[list[float], float, list[list[float]] | None]: ...
# `data`: t, failed, stresses (one list per stress); `resample`: kind (parametric |
# nonparametric), seed, start, count, and optionally threads and jackknife.
def alt_bootstrap(
    life: str,
    relationship: str,
    data: Mapping[str, object],
    theta: list[float],
    resample: Mapping[str, object],
) -> tuple[list[float], list[float]]: ...
def collapse_keys(keys: np.ndarray, failures: int, out: np.ndarray) -> tuple[int, int]:
    """Sort packed life-data keys (uint64, `bits(t) << 1 | censored`) in place and write the
    distinct times into `out` (float64, columns f | fn | before of `failures` slots, r | rn of
    the rest); returns the numbers of distinct failure and suspension times (the GIL released)."""
