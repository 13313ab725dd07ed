"""Simulation runs: an availability (repairable) or mission (non-repairable) run of a diagram.

Diagrams are the spec's plain JSON form (`bathtub.engine.diagram`: the form and the checks
made before a run; `bathtub.engine.fields`: each field and what it means to the simulator).
Models are resolved and validated there, then the engine compiles the diagram, runs the
replications with the GIL released and returns exactly mergeable statistics.

A subsystem node carries its embedded diagram inline under the key `diagram`.
Times are in the diagram's unit throughout. A run is defined by (diagram, options, seed,
replication range): the same inputs give bit-identical numbers on any thread count, and
`merge(run over [a, b), run over [b, c))` equals the run over [a, c).

Simulation conventions: blocks age and fail whether or not the system is up (independent
alternating renewal, as the textbook closed forms assume); a repair renews a unit as new;
`instant_repair` renews it in no time: its failures count, and one that takes the system
down is a system failure of no length (no downtime); standby
switching is perfect and a repaired standby unit goes back on the shelf as a spare.

A `safety_function` diagram (proof tests on its blocks) reports PFD(t) = 1 - A(t), PFDavg
(mean unavailability over the horizon) and the IEC 61508 low-demand SIL.
"""

from __future__ import annotations

import json
from typing import Any

from bathtub.engine import binding
from bathtub.engine.control import RunControl, call_engine
from bathtub.engine.diagram import check_run_kind, phases_end, safety_settings
from bathtub.engine.results import AvailabilityResult, MissionResult, availability_result, mission_result
from bathtub.errors import InputError
from bathtub.validate import check_enum, check_integer, check_number

__all__ = ["MAX_REPLICATIONS", "MAX_U64", "VARIANCE_REDUCTION", "check_threads", "merge", "simulate_availability",
           "simulate_mission"]

MAX_U64 = 2**64 - 1
MAX_REPLICATIONS = 100_000_000
# Variance reduction of an availability run (the engine's `variance::Method`).
VARIANCE_REDUCTION = ("none", "control", "auto", "antithetic", "stratified")


def check_threads(threads: int | None) -> int | None:
    """Engine threads: None (every core) or 1 to 1024."""
    return None if threads is None else check_integer(threads, "threads", 1, 1024)


def simulate_availability(
    diagram: Any,
    *,
    horizon: float,
    replications: int | None = None,
    target_half_width: float | None = None,
    max_replications: int = 100_000,
    seed: int = 0,
    grid: int = 101,
    crews: int = 0,
    replication_start: int = 0,
    threads: int | None = None,
    control: RunControl | None = None,
    cluster: Any = None,
    variance_reduction: str = "none",
) -> AvailabilityResult:
    """Repairable Monte Carlo over [0, horizon] (diagram unit).

    Give `replications`, or `target_half_width`: the relative half-width of the 95%
    interval on mean unavailability to reach, run in growing batches up to
    `max_replications` (neither: 1000 replications). `crews` = 0 repairs every failure at
    once; otherwise failures wait for one of `crews` crews, higher `crew_priority` first,
    then first come. `grid` points of A(t) over [0, horizon]. `threads` None uses every core.
    A diagram with `safety_function` true gets `safety` figures (PFD, SIL vs `target_sil`).
    `control` (a RunControl) cancels the run from another thread (raising Cancelled) and
    counts replications done; Ctrl-C on the main thread cancels it too.
    `cluster` (a dask `distributed.Client`, cluster object or scheduler address) spreads the
    replications over a cluster in chunks (`bathtub.engine.scaleout`): the same numbers to the bit.
    `variance_reduction` (VARIANCE_REDUCTION): "none" (default: the plain estimator, whose
    numbers for a seed every stored run keeps), "control" (control variates with known means,
    combined by regression) or "auto" (also conditioning on a subsystem integrated exactly, where
    the structure allows it). The same replications are drawn either way; the mean availability
    (and a target precision) then use the reduced-variance estimator when it beats the plain one,
    and `variance_reduction` on the result says which method was used and the factor achieved.
    "antithetic" draws its own replications, in pairs (2k, 2k + 1) reading one stream as U and
    1 - U, every life by inversion: the mean availability is the mean of the pairs' means with
    a Student t interval on pairs - 1 degrees of freedom (a target precision stops on it), the
    same numbers on any thread count, split or cluster; the factor is the per-replication
    variance over twice the pair means' variance, `efficiency` that over 1.2 (a pair member's CPU
    over a plain replication's) and `fallback` says when it is not above 1; a run to a target
    precision turns to plain streams after a 400-pair pilot that does not pay ("antithetic+plain").
    "stratified" draws its own replications in sets of 16 whose first uniforms, one per unit up to
    64 (its first life), are a Latin hypercube over the set: the mean of the sets' means with a Student t
    interval on sets - 1 degrees of freedom, `sets` on the record, `efficiency` the factor over 1.035 (a
    set member's CPU over a plain replication's); a run to a target precision turns to plain streams after
    a pilot of 400 sets that does not pay ("stratified+plain").
    """
    if replications is not None and target_half_width is not None:
        raise InputError("replications", "give replications or target_half_width, not both")
    if replications is None and target_half_width is None:
        replications = 1000
    if replications is not None:
        replications = check_integer(replications, "replications", 1, MAX_REPLICATIONS)
    # the half-width is relative to the unavailability, so a fraction
    target = None if target_half_width is None else check_number(target_half_width, "target_half_width", 0.0,
                                                                   1.0, lo_open=True, hi_open=True)
    max_replications = check_integer(max_replications, "max_replications", 2, MAX_REPLICATIONS)
    seed = check_integer(seed, "seed", 0, MAX_U64)
    grid = check_integer(grid, "grid", 0, 100_000)
    crews = check_integer(crews, "crews", 0, 1_000_000)
    replication_start = check_integer(replication_start, "replication_start", 0, MAX_U64 // 2)
    horizon = check_number(horizon, "horizon", 0.0, lo_open=True)
    variance_reduction = check_enum(variance_reduction, "variance_reduction", VARIANCE_REDUCTION)
    norm = check_run_kind(diagram, repairable=True)
    own = norm.get("costs", {}).get("horizon")
    if own is not None and own != float(horizon):
        raise InputError("diagram.costs.horizon", f"is {own:g} but the run's horizon is {float(horizon):g}; "
                                                  "give the same (or omit it)")
    text = json.dumps(norm)
    safety = safety_settings(diagram)
    if cluster is not None:
        from bathtub.engine import scaleout  # dask is imported only when a cluster is given

        state, summary = call_engine(lambda ctl: scaleout.availability(
            cluster, text, float(horizon), grid, crews, seed, replication_start, replications, target,
            max_replications, ctl, variance_reduction), control)
    else:
        state, summary = call_engine(lambda ctl: binding.simulate_availability(
            text, float(horizon), grid, crews, seed, replication_start, replications=replications,
            target_half_width=target, max_replications=max_replications, threads=check_threads(threads),
            control=ctl, variance_reduction=variance_reduction,
        ), control)
    return availability_result(state, summary, target, safety)


def simulate_mission(
    diagram: Any,
    *,
    mission_time: float,
    replications: int = 10_000,
    seed: int = 0,
    grid: int = 101,
    replication_start: int = 0,
    threads: int | None = None,
    control: RunControl | None = None,
    cluster: Any = None,
) -> MissionResult:
    """Non-repairable Monte Carlo: every replication runs to system failure (repair models
    are ignored); R(t) on `grid` points over [0, mission_time] (diagram unit).

    With `phases` on the diagram, each phase's not-needed blocks and knode votes hold from
    its start to its end (the last phase's past its end); `phases` in the result gives
    reliability through each phase's end and given its start. A block failed while not
    needed fails the system when a phase needs it again. With block capacities, `production`
    gives the capacity read at the diagram's production period (else at mission_time).
    With phases, `mission_time` must be the phases' total duration (`phases_end`): the
    per-phase table and the mission's reliability then describe one mission.
    `control` and `cluster` as in `simulate_availability`."""
    replications = check_integer(replications, "replications", 1, MAX_REPLICATIONS)
    seed = check_integer(seed, "seed", 0, MAX_U64)
    grid = check_integer(grid, "grid", 0, 100_000)
    replication_start = check_integer(replication_start, "replication_start", 0, MAX_U64 // 2)
    mission_time = check_number(mission_time, "mission_time", 0.0, lo_open=True)
    norm = check_run_kind(diagram, repairable=False)
    end = phases_end(norm)
    if end is not None and float(mission_time) != end:
        raise InputError("mission_time", f"must equal the phases' total duration {end:g} (got {float(mission_time):g})")
    text = json.dumps(norm)
    if cluster is not None:
        from bathtub.engine import scaleout

        state, summary = call_engine(lambda ctl: scaleout.mission(
            cluster, text, float(mission_time), grid, seed, replication_start, replications, ctl), control)
    else:
        state, summary = call_engine(lambda ctl: binding.simulate_mission(
            text, float(mission_time), grid, seed, replication_start, replications, threads=check_threads(threads),
            control=ctl,
        ), control)
    return mission_result(state, summary)


def merge(a: AvailabilityResult | MissionResult,
          b: AvailabilityResult | MissionResult) -> AvailabilityResult | MissionResult:
    """Two runs of the same diagram, options and seed over adjacent replication ranges as
    one run: exactly the numbers the run over the joined range gives."""
    if isinstance(a, AvailabilityResult) and isinstance(b, AvailabilityResult):
        state, summary = binding.merge_availability(a.state, b.state)
        target = a.target_half_width if a.target_half_width == b.target_half_width else None
        safety = (a.safety is not None, (a.safety.target_sil or 0) if a.safety is not None else 0)
        return availability_result(state, summary, target, safety)
    if isinstance(a, MissionResult) and isinstance(b, MissionResult):
        return mission_result(*binding.merge_mission(a.state, b.state))
    raise InputError("merge", "both runs must be of the same kind (availability or mission)")
