"""Rare events: the steady-state unavailability of a highly available repairable diagram
by regenerative simulation with balanced failure biasing (the engine's `rare` module).

Plain Monte Carlo needs about 1/U replications' worth of time per system failure it sees,
so at an unavailability U of 1e-6 it is slow to reach any relative precision. When every
block's life and repair are exponential the diagram is a Markov chain; each return to the
all-up state starts an independent cycle, and U = E[downtime per cycle] / E[cycle length].
The numerator is estimated on cycles drawn with failures made likely (a failure with
probability 0.5 in a working state with a repair under way, the failing unit chosen
uniformly; Shahabuddin 1994, Goyal et al. 1992), each weighted by its path's likelihood
ratio, so the estimate stays unbiased; the denominator on as many plain cycles. The 95%
interval is the ratio's delta-method interval. Same seed, same numbers at any thread count.

The figure is the long-run (steady-state) unavailability: no horizon, no curve. Refused,
naming the rule: a life or repair that is not exponential (or has a failure-free time),
instant repair, proof tests, planned maintenance, imperfect repair, initial states, own
repairers, common-cause groups, maintenance groups, costs, capacity, phases, safety
functions.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from bathtub import engine
from bathtub.engine import RunControl, binding, call_engine
from bathtub.errors import InputError
from bathtub.rbd.quote import OVERHEAD_S, REPLICATION_S, Quote, events_per_replication
from bathtub.validate import check_integer, check_number

METHOD = "failure_biasing"
DEFAULT_CYCLES = 10_000
# Cost per transition of the chain on one core: it lists the state's transitions (per unit)
# and re-reads the structure when a block flips (bench/rare_events.py measures it).
TRANSITION_S = 150e-9
TRANSITION_UNIT_S = 10e-9


@dataclass(frozen=True)
class RareResult:
    """Steady-state figures of a failure-biasing run (95% intervals, diagram time unit).

    `unavailability` (and `availability` = 1 - it) is the long-run fraction of time the
    system is down; `failure_frequency` the long-run system failures per unit time, `mtbf`
    its inverse and `mean_down_time` the mean outage (U / frequency). `cycles` regenerative
    cycles of each kind ran (biased and plain), `cycles_reaching_failure` of the biased
    ones saw the system fail; `mean_cycle` is the mean time between returns to all-up."""

    unavailability: float
    unavailability_std_error: float
    unavailability_interval: tuple[float, float]
    availability: float
    availability_interval: tuple[float, float]
    relative_half_width: float | None
    target_half_width: float | None
    target_reached: bool | None
    failure_frequency: float
    failure_frequency_std_error: float
    failure_frequency_interval: tuple[float, float]
    mtbf: float | None
    mean_down_time: float | None
    mean_cycle: float
    mean_cycle_std_error: float
    cycles: int
    cycles_reaching_failure: int
    events: int
    replication_start: int
    bias: float
    seed: int
    crews: int
    engine_version: str
    method: str = METHOD

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for k in ("unavailability_interval", "availability_interval", "failure_frequency_interval"):
            d[k] = list(d[k])
        return d


def check(diagram: Mapping[str, Any], crews: int, field: str = "method") -> str:
    """The normalised diagram as JSON, or InputError(field) naming the rule the method
    needs and the diagram breaks."""
    if diagram.get("safety_function"):
        raise InputError(field, f"{METHOD}: safety functions (PFD, SIL) need proof tests, which are not "
                                "Markovian; use simulation")
    norm = engine.check_run_kind(diagram, repairable=True)
    text = json.dumps(norm)
    try:
        why = binding.rare_check(text, crews)
    except engine.EngineError as e:
        raise InputError("diagram", str(e)) from None
    if why is not None:
        raise InputError(field, f"{METHOD} needs every block Markovian (exponential life and repair) and none of "
                                f"the features it does not simulate: {why}")
    return text


def quote(d: Mapping[str, Any], *, replications: int) -> Quote:
    """Expected seconds on one core: a replication is a biased cycle (to a system failure
    or back to all-up) and a plain one; the transitions per cycle are bounded by a few per
    unit, the cost of one grows with the units."""
    units = events_per_replication(d, None)
    events = 4.0 + 2.0 * units
    seconds = OVERHEAD_S + replications * (REPLICATION_S + events * (TRANSITION_S + TRANSITION_UNIT_S * units))
    return Quote(seconds=float(seconds), replications=int(replications), events_per_replication=float(events),
                 basis="transitions per cycle pair x measured cost per transition, on one core")


def simulate_failure_biasing(
    diagram: Any,
    *,
    crews: int = 0,
    replications: int | None = None,
    target_half_width: float | None = None,
    max_replications: int = 1_000_000,
    seed: int = 0,
    replication_start: int = 0,
    threads: int | None = None,
    control: RunControl | None = None,
) -> RareResult:
    """Steady-state unavailability of a repairable Markovian diagram by failure biasing.

    `replications`: pairs of regenerative cycles (one biased, one plain); or
    `target_half_width`, the relative half-width of the 95% interval on unavailability to
    reach, in growing batches up to `max_replications` (neither: 10 000). `crews` as in
    `engine.simulate_availability` (0: every failed unit in repair at once). Refusals name
    the block and the rule (InputError on `diagram`)."""
    if not isinstance(diagram, Mapping):
        raise InputError("diagram", "must be an object with nodes and edges")
    if replications is not None and target_half_width is not None:
        raise InputError("replications", "give replications or target_half_width, not both")
    if replications is None and target_half_width is None:
        replications = DEFAULT_CYCLES
    if replications is not None:
        replications = check_integer(replications, "replications", 2, engine.MAX_REPLICATIONS)
    # the half-width is relative to the unavailability, so a fraction
    target = None if target_half_width is None else check_number(target_half_width, "target_half_width", 0.0,
                                                                   1.0, lo_open=True, hi_open=True)
    max_replications = check_integer(max_replications, "max_replications", 2, engine.MAX_REPLICATIONS)
    seed = check_integer(seed, "seed", 0, engine.MAX_U64)
    crews = check_integer(crews, "crews", 0, 1_000_000)
    replication_start = check_integer(replication_start, "replication_start", 0, engine.MAX_U64 // 2)
    text = check(diagram, crews, field="diagram")
    target = None if target_half_width is None else float(target_half_width)
    run = {"seed": seed, "replication_start": replication_start, "replications": replications,
           "target_half_width": target, "max_replications": max_replications,
           "threads": engine.check_threads(threads)}
    try:
        s = call_engine(lambda ctl: binding.simulate_rare(text, crews, run, control=ctl), control)
    except engine.EngineError as e:
        raise InputError("diagram", str(e)) from None
    rel = s["relative_half_width"]
    return RareResult(
        unavailability=s["unavailability"],
        unavailability_std_error=s["unavailability_std_error"],
        unavailability_interval=(s["unavailability_lower"], s["unavailability_upper"]),
        availability=s["availability"],
        availability_interval=(s["availability_lower"], s["availability_upper"]),
        relative_half_width=rel,
        target_half_width=target,
        target_reached=None if target is None else (rel is not None and rel <= target),
        failure_frequency=s["failure_frequency"],
        failure_frequency_std_error=s["failure_frequency_std_error"],
        failure_frequency_interval=(s["failure_frequency_lower"], s["failure_frequency_upper"]),
        mtbf=s["mtbf"],
        mean_down_time=s["mean_down_time"],
        mean_cycle=s["mean_cycle"],
        mean_cycle_std_error=s["mean_cycle_std_error"],
        cycles=int(s["cycles"]),
        cycles_reaching_failure=int(s["cycles_reaching_failure"]),
        events=int(s["events"]),
        replication_start=int(s["replication_start"]),
        bias=float(s["bias"]),
        seed=int(s["seed"]),
        crews=int(s["crews"]),
        engine_version=engine.engine_version,
    )


def run(d: Mapping[str, Any], *, crews: int, replications: int | None, precision: float | None,
        max_replications: int, seed: int, threads: int | None = None,
        control: RunControl | None = None) -> dict[str, Any]:
    """An analysis's answer ({results, curve, precision}) from a failure-biasing run."""
    r = simulate_failure_biasing(d, crews=crews, replications=replications, target_half_width=precision,
                                 max_replications=max_replications, seed=seed, threads=threads, control=control)
    results = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.to_dict().items()}
    precision_out = {"replications": r.cycles, "relative_half_width": r.relative_half_width,
                     "target": r.target_half_width, "target_reached": r.target_reached}
    return {"results": results, "curve": {}, "precision": precision_out}
