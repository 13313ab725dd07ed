"""What a run gives: the dataclasses of an availability or mission run, decoded from the
engine's JSON summary, and the IEC 61508 bands a safety function's PFDavg is read against."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from bathtub.engine.binding import ENGINE_VERSION

__all__ = ["SIL_UPPER", "AvailabilityResult", "BlockFigures", "MissionResult", "SafetyFigures",
           "availability_result", "mission_result", "sil_of"]

# IEC 61508 low-demand bands: SIL n while PFDavg < SIL_UPPER[n - 1].
SIL_UPPER = (1e-1, 1e-2, 1e-3, 1e-4)


@dataclass(frozen=True)
class BlockFigures:
    """One block, per replication on average: failures (failures only: planned
    replacements and proof tests are counted apart), downtime (diagram unit) =
    `unplanned_downtime` (failed, found or not, and in repair) + `planned_downtime`
    (off-line for a replacement, or for a proof test it entered working, until the stop
    ends or the block fails), its share of the system's downtime with its 95% interval
    across replications, MTBF (time working per failure) and MTTR (unplanned downtime
    per failure; 0 with instant repair); None without failures.

    The share: each system outage is cut at every event into stretches; a stretch is
    shared equally among the blocks that are down and whose restoration alone would bring
    the system back, or, when no single block would, among every block that is down.
    Blocks in identical positions get equal shares; the shares add up to 1 whenever the
    system was down with a block down."""

    id: str
    failures: float
    downtime: float
    share_of_system_downtime: float
    share_of_system_downtime_std_error: float
    share_of_system_downtime_interval: tuple[float, float]
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
    tests, each test's instant; A(t) is read just before the events at t (the left limit), so
    a short PM window between two reading times is not seen in it. `interval_availability`
    (with `interval_lower`/`interval_upper`, 95%) is the mean availability over each interval
    [t_k, t_k+1]: it does see every outage, and its length-weighted time-average is the mean
    availability.

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
    `blocks`). `coinciding_preventive`: sets of redundant blocks whose calendar (`block`
    policy) replacements share an interval, so they stop together and take the system
    down although each alone would not (what planned outages cost is `planned_downtime`)."""

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
    coinciding_preventive: tuple[tuple[str, ...], ...] = ()
    interval_availability: np.ndarray = field(default_factory=lambda: np.empty(0))
    interval_lower: np.ndarray = field(default_factory=lambda: np.empty(0))
    interval_upper: np.ndarray = field(default_factory=lambda: np.empty(0))
    # Variance reduction, when the run asked for it (`variance_reduction` of the engine's
    # summary): method used for the mean availability, factor achieved, fallback, controls.
    variance_reduction: dict[str, Any] | None = None

    def to_dict(self, include_curve: bool = True) -> dict[str, Any]:
        """JSON-ready: floats, lists and plain dicts (the accumulator state left out)."""
        apart = ("state", "t", "availability", "lower", "upper", "safety", "costs", "preventive", "production",
                 "interval_availability", "interval_lower", "interval_upper", "variance_reduction")
        d = {k: v for k, v in asdict(self).items() if k not in apart}
        for key in ("costs", "preventive", "production", "variance_reduction"):
            if getattr(self, key) is not None:
                d[key] = getattr(self, key)
        if self.safety is not None:
            d["safety"] = self.safety.to_dict()
            if not include_curve:
                del d["safety"]["pfd"]
        d["mean_availability_interval"] = list(self.mean_availability_interval)
        d["reliability_interval"] = list(self.reliability_interval)
        d["coinciding_preventive"] = [list(ids) for ids in self.coinciding_preventive]
        d["blocks"] = [asdict(b) | {"share_of_system_downtime_interval": list(b.share_of_system_downtime_interval)}
                       for b in self.blocks]
        if include_curve:
            d["curve"] = {
                "t": self.t.tolist(),
                "availability": self.availability.tolist(),
                "lower": self.lower.tolist(),
                "upper": self.upper.tolist(),
            }
            if self.interval_availability.size:
                d["curve"]["interval_mean"] = {
                    "start": self.t[:-1].tolist(), "end": self.t[1:].tolist(),
                    "availability": self.interval_availability.tolist(),
                    "lower": self.interval_lower.tolist(), "upper": self.interval_upper.tolist(),
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


def _block(b: dict[str, Any]) -> BlockFigures:
    interval = (b.pop("share_of_system_downtime_lower"), b.pop("share_of_system_downtime_upper"))
    return BlockFigures(**b, share_of_system_downtime_interval=interval)


def availability_result(
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
        blocks=tuple(_block(b) for b in s["blocks"]),
        events=int(s["events"]),
        replications=int(s["replications"]),
        replication_start=int(s["replication_start"]),
        seed=int(opts["seed"]),
        horizon=float(opts["horizon"]),
        engine_version=ENGINE_VERSION,
        state=state,
        safety=figures,
        costs=_costs(s["costs"]) if s.get("costs") else None,
        preventive=dict(s["preventive"]) if s.get("preventive") else None,
        production=_production_result(s["production"]) if s.get("production") else None,
        coinciding_preventive=tuple(tuple(ids) for ids in s.get("coinciding_preventive", ())),
        interval_availability=np.asarray(s.get("interval_availability", ()), dtype=float),
        interval_lower=np.asarray(s.get("interval_lower", ()), dtype=float),
        interval_upper=np.asarray(s.get("interval_upper", ()), dtype=float),
        variance_reduction=s.get("variance_reduction"),
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


def mission_result(state: str, summary: str) -> MissionResult:
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
        engine_version=ENGINE_VERSION,
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
