"""Rare events: wall time to a given relative precision on the steady-state unavailability
of a highly available system, failure biasing against plain simulation.

The system: three identical pumps, two needed (2-of-3), exponential life (rate 4e-4 per
hour) and repair (rate 1 per hour), one repair crew; unavailability 9.6e-7 exactly (the
birth-death chain on the pumps down, solved here). On one thread each:

- failure biasing (`bathtub.rbd.rare.simulate_failure_biasing`) runs in precision mode until
  the relative 95% half-width on unavailability is at most the target: its wall time;
- plain simulation (`bathtub.engine.simulate_availability`, the event engine, over a horizon
  of 1e5 h from all-up: a transient of about 1 h, 1e-5 of the horizon) runs a fixed number of
  replications; from the relative half-width it reached, the replications (and so the wall
  time) it needs for the target are projected as n (reached / target)^2, the half-width
  falling as 1/sqrt(n). The plain run is sized to see some thousands of system failures, so
  its variance per replication is itself well estimated.

The figure is the per-round ratio of the two times (rounds interleaved by bench/harness.py),
for a 10% and a 2% target; the exact unavailability is checked against both runs (within 4
standard errors). Also printed: the failure-biasing engine's transitions per CPU-second (the
quote's cost per transition).

    python bench/rare_events.py [--repeats 5] [--plain-replications 20000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Bench

from bathtub.engine import simulate_availability
from bathtub.rbd.rare import simulate_failure_biasing

LAM, MU, HORIZON = 4e-4, 1.0, 1e5
# Every round checks both runs against the exact value: several runs, so a band of 4 standard
# errors (a 95% interval would miss now and then by design).
Z_CHECK = 4.0


def two_of_three() -> dict[str, Any]:
    exp = lambda r: {"distribution_id": "exponential", "params": {"failure_rate": r}}  # noqa: E731
    blocks = [{"id": f"p{i}", "type": "component", "model": exp(LAM), "repair": exp(MU)} for i in (1, 2, 3)]
    edges = [{"source": "in", "target": b["id"]} for b in blocks] + [{"source": b["id"], "target": "vote"}
                                                                     for b in blocks]
    return {"nodes": [{"id": "in", "type": "input"}, *blocks, {"id": "vote", "type": "knode", "n": 2, "k": 3},
                      {"id": "out", "type": "output"}], "edges": [*edges, {"source": "vote", "target": "out"}]}


def exact() -> float:
    """Pumps down d = 0..3: failures at (3 - d) lam, one crew repairs at mu; down when d >= 2."""
    q = np.zeros((4, 4))
    for d in range(3):
        q[d, d + 1] = (3 - d) * LAM
        q[d + 1, d] = MU
    q -= np.diag(q.sum(axis=1))
    a = np.vstack([q.T[:-1], np.ones(4)])
    pi = np.linalg.solve(a, np.r_[np.zeros(3), 1.0])
    return float(pi[2] + pi[3])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--plain-replications", type=int, default=20_000)
    args = ap.parse_args()
    d, u = two_of_three(), exact()
    print(f"2-of-3 pumps, one crew: exact steady-state unavailability {u:.4g}")
    seeds = iter(range(1, 10_000))
    checks: list[str] = []

    def biased(target: float):
        def case() -> dict[str, float]:
            t0, c0 = time.perf_counter(), time.process_time()
            r = simulate_failure_biasing(d, crews=1, target_half_width=target, seed=next(seeds), threads=1)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            if abs(r.unavailability - u) > Z_CHECK * r.unavailability_std_error:
                checks.append(f"failure biasing ({target:.0%}): exact {u:.4g}, estimate {r.unavailability:.4g} "
                              f"± {r.unavailability_std_error:.3g}")
            return {"seconds": wall, "cycles": r.cycles, "events": r.events, "cpu_rate": r.events / cpu,
                    "reached": r.relative_half_width}
        return case

    plain_state: dict[str, float] = {}

    def plain() -> dict[str, float]:
        t0 = time.perf_counter()
        r = simulate_availability(d, horizon=HORIZON, replications=args.plain_replications, seed=next(seeds),
                                  grid=0, crews=1, threads=1)
        wall = time.perf_counter() - t0
        if abs(r.mean_availability - (1 - u)) > Z_CHECK * r.mean_availability_std_error:
            checks.append(f"plain: exact availability {1 - u:.8g}, estimate {r.mean_availability:.8g} "
                          f"± {r.mean_availability_std_error:.3g}")
        plain_state.update(seconds=wall, reached=float(r.relative_half_width), failures=r.expected_failures
                           * r.replications)
        return {"seconds": wall, "reached": float(r.relative_half_width)}

    def projected(target: float):
        # the plain run of this round, projected to the target (run once per round, read twice)
        def case() -> dict[str, float]:
            return {"seconds": plain_state["seconds"] * (plain_state["reached"] / target) ** 2}
        return case

    b = Bench("rare_events")
    rounds = b.interleave({"plain run": plain, "plain to 10%": projected(0.10), "plain to 2%": projected(0.02),
                           "failure biasing to 10%": biased(0.10), "failure biasing to 2%": biased(0.02)},
                          repeats=args.repeats)
    for key in ("10%", "2%"):
        ours = rounds[f"failure biasing to {key}"]
        note = (f"U = {u:.3g} (2-of-3, one crew); plain: {args.plain_replications} replications of {HORIZON:g} h "
                f"reached {statistics.median([r['reached'] for r in rounds['plain run']]):.3g} relative half-width "
                f"in {statistics.median([r['seconds'] for r in rounds['plain run']]):.3g} s, projected to {key}; "
                f"failure biasing: {statistics.median([r['cycles'] for r in ours]):.0f} cycle pairs, "
                f"{statistics.median([r['cpu_rate'] for r in ours]) / 1e6:.3g} M transitions per CPU-second; one "
                f"thread each")
        b.figure(f"wall time to a {key} relative half-width at U ~ 1e-6", rounds, f"failure biasing to {key}",
                 f"plain to {key}", key="seconds", unit="s", higher_is_better=False, note=note)
    print(f"plain run: {plain_state['failures']:.0f} system failures seen in its last round")
    for c in checks:
        print("CHECK FAILED:", c)
    b.write()
    if checks:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
