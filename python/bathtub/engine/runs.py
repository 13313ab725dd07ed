"""Typed Python face of the Rust engine (`bathtub._engine`).

Diagrams are the spec's plain JSON form (`bathtub.engine_diagram`: the form and the checks
made before a run; `bathtub.engine_fields`: each field and what it means to the simulator).
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
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from bathtub import _engine
from bathtub._engine import EngineError
from bathtub.control import Cancelled, RunControl, call_engine
from bathtub.distributions import parse_params
from bathtub.engine_diagram import (
    NODE_TYPES,
    _safety_settings,
    check_run_kind,
    compile_diagram,
    normalize_diagram,
    phases_end,
)
from bathtub.engine_fields import STEPS, TABLE, check_state, engine_version
from bathtub.errors import InputError

# The diagram's form and fields live in engine_diagram / engine_fields; the names users
# and the rest of the package know as `bathtub.engine.<name>` stay importable from here.
__all__ = [
    "MAX_U64",
    "NODE_TYPES",
    "SIL_UPPER",
    "STEPS",
    "TABLE",
    "AvailabilityResult",
    "BlockFigures",
    "Cancelled",
    "Distribution",
    "EngineError",
    "MissionResult",
    "RunControl",
    "SafetyFigures",
    "check_run_kind",
    "check_state",
    "compile_diagram",
    "engine_version",
    "merge",
    "normalize_diagram",
    "phases_end",
    "sil_of",
    "simulate_availability",
    "simulate_mission",
]

COST_KINDS = ("repair", "replacement", "preventive", "inspection", "set_up", "downtime", "acquisition")
MAX_U64 = 2**64 - 1
# IEC 61508 low-demand bands: SIL n while PFDavg < SIL_UPPER[n - 1].
SIL_UPPER = (1e-1, 1e-2, 1e-3, 1e-4)


# ---------------------------------------------------------------------------------------
# Distributions evaluated by the engine (the same code the simulator samples from).


@dataclass(frozen=True)
class Distribution:
    """A validated distribution evaluated in Rust; functions take arrays of times (or
    probabilities for `quantile`/`isf`) and return float arrays."""

    distribution_id: str
    params: Mapping[str, float]
    base_distribution_id: str | None = None

    @classmethod
    def from_input(cls, distribution_id: str, params: Any, base_distribution_id: str | None = None) -> Distribution:
        values = parse_params(distribution_id, params, base_distribution_id=base_distribution_id)
        return cls(distribution_id, values, base_distribution_id)

    def _eval(self, function: str, x: Any) -> np.ndarray:
        xs = np.asarray(x, dtype=float)
        out = _engine.dist_eval(
            self.distribution_id, dict(self.params), function, xs.ravel().tolist(), self.base_distribution_id
        )
        return np.asarray(out, dtype=float).reshape(xs.shape)

    def sf(self, t: Any) -> np.ndarray:
        return self._eval("sf", t)

    def cdf(self, t: Any) -> np.ndarray:
        return self._eval("cdf", t)

    def pdf(self, t: Any) -> np.ndarray:
        return self._eval("pdf", t)

    def hazard(self, t: Any) -> np.ndarray:
        return self._eval("hazard", t)

    def cumulative_hazard(self, t: Any) -> np.ndarray:
        return self._eval("cumulative_hazard", t)

    def quantile(self, p: Any) -> np.ndarray:
        return self._eval("quantile", p)

    def isf(self, q: Any) -> np.ndarray:
        return self._eval("isf", q)

    def mean(self) -> float:
        return float(_engine.dist_mean(self.distribution_id, dict(self.params), self.base_distribution_id))

    def sample(self, n: int, *, seed: int = 0, stream: int = 0, age: float | None = None) -> np.ndarray:
        """n lives from the engine's stream (seed, stream); with `age`, remaining lives of
        units that have survived to `age`."""
        out = _engine.dist_sample(
            self.distribution_id, dict(self.params), int(n), int(seed), int(stream), age, self.base_distribution_id
        )
        return np.asarray(out, dtype=float)


# ---------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class BlockFigures:
    """One block, per replication on average: failures (failures only: planned
    replacements and proof tests are counted apart), downtime (diagram unit) =
    `unplanned_downtime` (failed, found or not, and in repair) + `planned_downtime`
    (off-line for a replacement, or for a proof test it entered working, until the stop
    ends or the block fails), its share of the system's downtime (the block whose event
    took the system down), MTBF (time working per failure) and MTTR (unplanned downtime
    per failure; 0 with instant repair); None without failures."""

    id: str
    failures: float
    downtime: float
    share_of_system_downtime: float
    unplanned_downtime: float
    planned_downtime: float
    preventive_replacements: float
    proof_tests: float
    condition_inspections: float
    mtbf: float | None
    mttr: float | None


def sil_of(pfd_avg: float) -> int:
    """IEC 61508 low-demand SIL a PFDavg reaches: 4 below 1e-4, 3 in [1e-4, 1e-3), 2 in
    [1e-3, 1e-2), 1 in [1e-2, 1e-1), 0 from 1e-1 up."""
    sil = 0
    for n, upper in enumerate(SIL_UPPER, start=1):
        if pfd_avg < upper:
            sil = n
    return sil


@dataclass(frozen=True)
class SafetyFigures:
    """A safety function's figures: PFD(t) = 1 - A(t) on the run's curve times (the grid
    and, just before it, each proof test: the saw-tooth peaks), `pfd_max` the highest of
    them (None when the run read no curve: grid 0 and no proof test), PFDavg over
    [0, horizon] with its 95% interval, the SIL PFDavg reaches and the SIL its interval's
    upper end still reaches (the one to claim); `target_met` compares the latter with
    `target_sil` (None without a target). Take the horizon a whole number of full-test
    intervals for the textbook PFDavg."""

    pfd_avg: float
    pfd_avg_std_error: float
    pfd_avg_interval: tuple[float, float]
    pfd_max: float | None
    sil: int
    sil_claimed: int
    target_sil: int | None
    target_met: bool | None
    pfd: tuple[float, ...]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["pfd_avg_interval"] = list(self.pfd_avg_interval)
        d["pfd"] = list(self.pfd)
        return d


def _safety(a: float, se: float, lo: float, hi: float, curve: np.ndarray, target: int) -> SafetyFigures:
    pfd, upper = 1.0 - a, 1.0 - lo
    claimed = sil_of(upper)
    return SafetyFigures(
        pfd_avg=pfd,
        pfd_avg_std_error=se,
        pfd_avg_interval=(max(0.0, 1.0 - hi), upper),
        pfd_max=float(np.max(1.0 - curve)) if curve.size else None,
        sil=sil_of(pfd),
        sil_claimed=claimed,
        target_sil=target or None,
        target_met=None if not target else claimed >= target,
        pfd=tuple(float(x) for x in 1.0 - curve),
    )


@dataclass(frozen=True)
class AvailabilityResult:
    """A repairable run over [0, horizon]. Intervals are 95%; `*_std_error` lets callers
    form others. Curves are numpy arrays at the times `t`: the grid's points and, with proof
    tests, each test's instant; A(t) is read just before the events at t (the left limit).

    Per replication on average: the system is down for a plan while it would work were
    every block that is stopped only for a plan (a replacement, or a proof test it entered
    working and did not fail in) working, and down for failures otherwise;
    `unplanned_downtime` + `planned_downtime` = (1 - mean availability) * horizon.
    `expected_failures` counts system failures only: turns from up or planned-down to
    failed (a failure during a planned stop that would have stopped the system counts; so
    does an instantly repaired block's failure that takes the system down, with no
    downtime); `expected_planned_outages` the outages that begin planned. MTBF = uptime per
    failure, MTTR = unplanned downtime per failure. `expected_preventive_replacements` (any
    policy, opportunities included), `expected_proof_tests` and
    `expected_condition_inspections` count those events (all blocks; per block in
    `blocks`)."""

    mean_availability: float
    mean_availability_std_error: float
    mean_availability_interval: tuple[float, float]
    relative_half_width: float | None
    target_half_width: float | None
    target_reached: bool | None
    t: np.ndarray
    availability: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    reliability: float
    reliability_interval: tuple[float, float]
    expected_failures: float
    expected_failures_std_error: float
    mtbf: float | None
    mttr: float | None
    expected_planned_outages: float
    unplanned_downtime: float
    planned_downtime: float
    expected_preventive_replacements: float
    expected_proof_tests: float
    expected_condition_inspections: float
    blocks: tuple[BlockFigures, ...]
    events: int
    replications: int
    replication_start: int
    seed: int
    horizon: float
    engine_version: str
    state: str = field(repr=False)
    safety: SafetyFigures | None = None
    costs: dict[str, Any] | None = None
    preventive: dict[str, float] | None = None
    production: dict[str, Any] | None = None

    def to_dict(self, include_curve: bool = True) -> dict[str, Any]:
        """JSON-ready: floats, lists and plain dicts (the accumulator state left out)."""
        apart = ("state", "t", "availability", "lower", "upper", "safety", "costs", "preventive", "production")
        d = {k: v for k, v in asdict(self).items() if k not in apart}
        for key in ("costs", "preventive", "production"):
            if getattr(self, key) is not None:
                d[key] = getattr(self, key)
        if self.safety is not None:
            d["safety"] = self.safety.to_dict()
            if not include_curve:
                del d["safety"]["pfd"]
        d["mean_availability_interval"] = list(self.mean_availability_interval)
        d["reliability_interval"] = list(self.reliability_interval)
        d["blocks"] = [asdict(b) for b in self.blocks]
        if include_curve:
            d["curve"] = {
                "t": self.t.tolist(),
                "availability": self.availability.tolist(),
                "lower": self.lower.tolist(),
                "upper": self.upper.tolist(),
            }
        return d


@dataclass(frozen=True)
class MissionResult:
    """A non-repairable run: R(t) over [0, mission_time] with a 95% band, MTTF (each
    replication runs to system failure), probability of failure by the mission end, and
    each block's share of those failures."""

    t: np.ndarray
    reliability: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    mttf: float
    mttf_std_error: float
    probability_of_failure: float
    probability_of_failure_interval: tuple[float, float]
    block_shares: dict[str, float]
    events: int
    replications: int
    replication_start: int
    seed: int
    mission_time: float
    engine_version: str
    state: str = field(repr=False)
    phases: tuple[dict[str, Any], ...] | None = None
    production: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        extra: dict[str, Any] = {} if self.phases is None else {"phases": [dict(p) for p in self.phases]}
        if self.production is not None:
            extra["production"] = dict(self.production)
        return extra | {
            "curve": {k: getattr(self, k).tolist() for k in ("t", "reliability", "lower", "upper")},
            "mttf": self.mttf,
            "mttf_std_error": self.mttf_std_error,
            "probability_of_failure": self.probability_of_failure,
            "probability_of_failure_interval": list(self.probability_of_failure_interval),
            "block_shares": dict(self.block_shares),
            "events": self.events,
            "replications": self.replications,
            "replication_start": self.replication_start,
            "seed": self.seed,
            "mission_time": self.mission_time,
            "engine_version": self.engine_version,
        }


def _availability_result(
    state: str, summary: str, target: float | None, safety: tuple[bool, int] = (False, 0)
) -> AvailabilityResult:
    s = json.loads(summary)
    opts = json.loads(state)["options"]
    rel = s["relative_half_width"]
    figures = None
    if safety[0]:
        figures = _safety(s["mean_availability"], s["mean_availability_std_error"], s["mean_availability_lower"],
                          s["mean_availability_upper"], np.asarray(s["availability"], dtype=float), safety[1])
    return AvailabilityResult(
        mean_availability=s["mean_availability"],
        mean_availability_std_error=s["mean_availability_std_error"],
        mean_availability_interval=(s["mean_availability_lower"], s["mean_availability_upper"]),
        relative_half_width=rel,
        target_half_width=target,
        target_reached=None if target is None else (rel is not None and rel <= target),
        t=np.asarray(s["t"], dtype=float),
        availability=np.asarray(s["availability"], dtype=float),
        lower=np.asarray(s["lower"], dtype=float),
        upper=np.asarray(s["upper"], dtype=float),
        reliability=s["reliability"],
        reliability_interval=(s["reliability_lower"], s["reliability_upper"]),
        expected_failures=s["expected_failures"],
        expected_failures_std_error=s["expected_failures_std_error"],
        mtbf=s["mtbf"],
        mttr=s["mttr"],
        expected_planned_outages=s["expected_planned_outages"],
        unplanned_downtime=s["unplanned_downtime"],
        planned_downtime=s["planned_downtime"],
        expected_preventive_replacements=s["expected_preventive_replacements"],
        expected_proof_tests=s["expected_proof_tests"],
        expected_condition_inspections=s["expected_condition_inspections"],
        blocks=tuple(BlockFigures(**b) for b in s["blocks"]),
        events=int(s["events"]),
        replications=int(s["replications"]),
        replication_start=int(s["replication_start"]),
        seed=int(opts["seed"]),
        horizon=float(opts["horizon"]),
        engine_version=engine_version,
        state=state,
        safety=figures,
        costs=_costs(s["costs"]) if s.get("costs") else None,
        preventive=dict(s["preventive"]) if s.get("preventive") else None,
        production=_production_result(s["production"]) if s.get("production") else None,
    )


def _production_result(p: Mapping[str, Any]) -> dict[str, Any]:
    """Throughput figures, per replication on average (capacity units; production over the
    period with its 95% interval; time and fraction of the period below demand)."""
    out = dict(p)
    out["production_interval"] = [out.pop("production_lower"), out.pop("production_upper")]
    return out


def _costs(c: Mapping[str, Any]) -> dict[str, Any]:
    """The engine's cost summary as plain JSON: expected totals per replication (discounted
    to time 0 when a discount rate is set) by kind and by block; system downtime apart."""
    return {
        "total": c["total"],
        "total_std_error": c["total_std_error"],
        "total_interval": [c["total_lower"], c["total_upper"]],
        "by_kind": {k["kind"]: {"mean": k["mean"], "std_error": k["std_error"]} for k in c["by_kind"]},
        "by_block": {b["id"]: {"total": b["total"], **dict(b["by_kind"])} for b in c["by_block"]},
        "system_downtime": c["system_downtime"],
    }


def _mission_result(state: str, summary: str) -> MissionResult:
    s = json.loads(summary)
    opts = json.loads(state)["options"]
    return MissionResult(
        t=np.asarray(s["t"], dtype=float),
        reliability=np.asarray(s["reliability"], dtype=float),
        lower=np.asarray(s["lower"], dtype=float),
        upper=np.asarray(s["upper"], dtype=float),
        # JSON has no infinity: the engine's infinite MTTF (a system that may never fail) comes
        # back as null, its standard error (NaN) likewise
        mttf=math.inf if s["mttf"] is None else s["mttf"],
        mttf_std_error=math.nan if s["mttf_std_error"] is None else s["mttf_std_error"],
        probability_of_failure=s["probability_of_failure"],
        probability_of_failure_interval=(s["probability_of_failure_lower"], s["probability_of_failure_upper"]),
        block_shares={k: v for k, v in s["blocks"]},
        events=int(s["events"]),
        replications=int(s["replications"]),
        replication_start=int(s["replication_start"]),
        seed=int(opts["seed"]),
        mission_time=float(opts["mission_time"]),
        engine_version=engine_version,
        state=state,
        phases=tuple(s["phases"]) if s.get("phases") else None,
        production=_mission_production(s["production"]) if s.get("production") else None,
    )


def _mission_production(p: Mapping[str, Any]) -> dict[str, Any]:
    """Capacity of the non-repairable system read at the production period (else the
    mission end; 0 once failed), and the chance it is then below demand (95% interval)."""
    out = dict(p)
    out["probability_below_demand_interval"] = [out.pop("probability_below_demand_lower"),
                                                out.pop("probability_below_demand_upper")]
    return out


def _check_int(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(name, f"must be an integer between {low} and {high}")
    return value


def _check_threads(threads: int | None) -> int | None:
    return None if threads is None else _check_int(threads, "threads", 1, 1024)


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
    replications over a cluster in chunks (`bathtub.scaleout`): the same numbers to the bit.
    """
    if replications is not None and target_half_width is not None:
        raise InputError("replications", "give replications or target_half_width, not both")
    if replications is None and target_half_width is None:
        replications = 1000
    if replications is not None:
        _check_int(replications, "replications", 1, 100_000_000)
    if target_half_width is not None and not (
        isinstance(target_half_width, (int, float)) and 0.0 < target_half_width < 1.0
    ):
        raise InputError("target_half_width", "must be a number in (0, 1) (relative to unavailability)")
    _check_int(max_replications, "max_replications", 2, 100_000_000)
    _check_int(seed, "seed", 0, MAX_U64)
    _check_int(grid, "grid", 0, 100_000)
    _check_int(crews, "crews", 0, 1_000_000)
    _check_int(replication_start, "replication_start", 0, MAX_U64 // 2)
    if isinstance(horizon, bool) or not isinstance(horizon, (int, float)) or not 0 < horizon < math.inf:
        raise InputError("horizon", "must be a finite number > 0")
    norm = check_run_kind(diagram, repairable=True)
    own = norm.get("costs", {}).get("horizon")
    if own is not None and own != float(horizon):
        raise InputError("diagram.costs.horizon", f"is {own:g} but the run's horizon is {float(horizon):g}; "
                                                  "give the same (or omit it)")
    text = json.dumps(norm)
    safety = _safety_settings(diagram)
    target = None if target_half_width is None else float(target_half_width)
    if cluster is not None:
        from bathtub import scaleout  # dask is imported only when a cluster is given

        state, summary = call_engine(lambda ctl: scaleout.availability(
            cluster, text, float(horizon), grid, crews, seed, replication_start, replications, target,
            max_replications, ctl), control)
    else:
        state, summary = call_engine(lambda ctl: _engine.simulate_availability(
            text, float(horizon), grid, crews, seed, replication_start, replications=replications,
            target_half_width=target, max_replications=max_replications, threads=_check_threads(threads),
            control=ctl,
        ), control)
    return _availability_result(
        state, summary, None if target_half_width is None else float(target_half_width), safety
    )


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
    _check_int(replications, "replications", 1, 100_000_000)
    _check_int(seed, "seed", 0, MAX_U64)
    _check_int(grid, "grid", 0, 100_000)
    _check_int(replication_start, "replication_start", 0, MAX_U64 // 2)
    if isinstance(mission_time, bool) or not isinstance(mission_time, (int, float)) or not 0 < mission_time < math.inf:
        raise InputError("mission_time", "must be a finite number > 0")
    norm = check_run_kind(diagram, repairable=False)
    end = phases_end(norm)
    if end is not None and float(mission_time) != end:
        raise InputError("mission_time", f"must equal the phases' total duration {end:g} (got {float(mission_time):g})")
    text = json.dumps(norm)
    if cluster is not None:
        from bathtub import scaleout

        state, summary = call_engine(lambda ctl: scaleout.mission(
            cluster, text, float(mission_time), grid, seed, replication_start, replications, ctl), control)
    else:
        state, summary = call_engine(lambda ctl: _engine.simulate_mission(
            text, float(mission_time), grid, seed, replication_start, replications, threads=_check_threads(threads),
            control=ctl,
        ), control)
    return _mission_result(state, summary)



def merge(a: AvailabilityResult | MissionResult, b: AvailabilityResult | MissionResult):
    """Two runs of the same diagram, options and seed over adjacent replication ranges as
    one run: exactly the numbers the run over the joined range gives."""
    if isinstance(a, AvailabilityResult) and isinstance(b, AvailabilityResult):
        state, summary = _engine.merge_availability(a.state, b.state)
        target = a.target_half_width if a.target_half_width == b.target_half_width else None
        safety = (a.safety is not None, (a.safety.target_sil or 0) if a.safety is not None else 0)
        return _availability_result(state, summary, target, safety)
    if isinstance(a, MissionResult) and isinstance(b, MissionResult):
        return _mission_result(*_engine.merge_mission(a.state, b.state))
    raise InputError("merge", "both runs must be of the same kind (availability or mission)")
