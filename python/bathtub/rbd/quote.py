"""Expected run time of a simulation, quoted before it is queued.

Model: the engine's cost is about proportional to the events it handles. A repairable
block of u units over a horizon H sees about 2·u·H / (mean life + mean repair) events
(a failure and a repair per cycle); a non-repairable replication samples each unit's life
once. Costs per event and per replication were measured on the engine on one core
(`bench/service_rbd_latency.py` prints the quote beside the measured duration); the quote
assumes one core, so on an idle multi-core machine runs finish sooner.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from bathtub.distributions import Lifetime

EVENT_S = 130e-9  # per simulated event (failure or repair), one core
UNIT_S = 70e-9  # per unit life drawn in a non-repairable replication
REPLICATION_S = 300e-9  # per replication: stream set-up, curve bookkeeping
OVERHEAD_S = 0.005  # compile and summarise


@dataclass(frozen=True)
class Quote:
    """seconds: expected run time on one core; replications: planned (or, in precision
    mode, the most that may run); events_per_replication: the model's estimate."""

    seconds: float
    replications: int
    events_per_replication: float
    basis: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _mean(model: Mapping[str, Any]) -> float:
    if model["distribution_id"] in ("table", "steps"):
        # knots [t, F]: a step life's mass sits on its knots, a table's spreads between them
        t, f = (np.array([k[i] for k in model["table"]], dtype=float) for i in (0, 1))
        if f[-1] < 1.0:
            return math.inf
        mid = t if model["distribution_id"] == "steps" else np.concatenate([[t[0]], (t[1:] + t[:-1]) / 2])
        return float(np.sum(mid * np.diff(np.concatenate([[0.0], f]))))
    raw = model["params"]
    params = {p["name"]: p["value"] for p in raw} if isinstance(raw, list) else dict(raw)
    return float(Lifetime.of(model["distribution_id"], params, model.get("base_distribution_id")).mean())


def _units(node: Mapping[str, Any]) -> int:
    if node["type"] == "standby":
        return int(node.get("k", 1)) + int(node.get("spares", 0))
    return int(node.get("n", 1)) if node["type"] in ("series", "parallel") else 1


def events_per_replication(d: Mapping[str, Any], horizon: float | None) -> float:
    """Expected events in one replication of an engine-form diagram: over [0, horizon] when
    repairable (horizon given), else one life per unit."""
    total = 0.0
    for n in d["nodes"]:
        if n["type"] == "subsystem":
            total += events_per_replication(n["diagram"], horizon)
            continue
        if "units" in n:
            # non-identical standby units: each its own cycle
            for u in n["units"]:
                cycle = _mean(u["model"]) + (_mean(u["repair"]) if "repair" in u else 0.0)
                total += 1.0 if horizon is None else (1.0 + 2.0 * horizon / cycle if cycle > 0 else 1.0)
            continue
        if "model" not in n:
            continue
        units = _units(n)
        if horizon is None:
            total += units
            continue
        cycle = _mean(n["model"]) + (_mean(n["repair"]) if "repair" in n else 0.0)
        total += units * (1.0 + 2.0 * horizon / cycle) if cycle > 0 else units
    return total


def quote(d: Mapping[str, Any], *, replications: int, horizon: float | None) -> Quote:
    """The expected seconds of `replications` replications of an engine-form diagram."""
    events = events_per_replication(d, horizon)
    per_event = EVENT_S if horizon is not None else UNIT_S
    seconds = OVERHEAD_S + replications * (REPLICATION_S + events * per_event)
    basis = "events x measured cost per event, on one core"
    return Quote(seconds=float(seconds), replications=int(replications), events_per_replication=float(events),
                 basis=basis)
