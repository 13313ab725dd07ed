"""Decisions benchmark: what to improve on the 10-block two-train plant, and three interval
searches (age replacement of a Weibull part, a proof-test interval for a PFDavg target, a
group proof-test interval on the plant), each timed, with the common-random-numbers
variance ratio: the variance of a difference from two independent runs over the paired
variance (the engine's covariance; for the first search also measured directly, from two
independent runs' standard errors against the paired one).

    python bench/decisions.py [--replications 2000]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine.plant import HORIZON, two_trains

from bathtub.engine import simulate_availability
from bathtub.rbd.decisions import candidate_intervals, interval_search, what_to_improve


def timed(label: str, fn):
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    ratio = out.get("crn_variance_ratio_median")
    print(f"{label:58s} wall {wall:7.2f} s  cpu {cpu:7.2f} s  CRN variance ratio (median) "
          f"{'-' if ratio is None else f'{ratio:8.1f}'}")
    return out


def weibull(alpha: float, beta: float) -> dict:
    params = [{"name": "alpha", "value": alpha}, {"name": "beta", "value": beta}]
    return {"distribution_id": "weibull", "params": params}


def single(node: dict) -> dict:
    nodes = [{"id": "in", "type": "input"}, node, {"id": "out", "type": "output"}]
    return {"nodes": nodes, "edges": [{"source": "in", "target": node["id"]}, {"source": node["id"], "target": "out"}]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replications", type=int, default=2000)
    n = ap.parse_args().replications
    print(f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}, {n} replications per design")
    plant = two_trains(5)
    res = timed(f"what to improve: 10-block plant, {HORIZON:g} h, 21 designs",
                lambda: what_to_improve(plant, repairable=True, horizon=HORIZON, replications=n, seed=1))
    top = res["blocks"][0]
    w = top["what_if"]["mttr_halved"]
    # Direct check of the ratio: the same change from two independent runs.
    changed = two_trains(5)
    node = next(x for x in changed["nodes"] if x["id"] == top["id"])
    node["repair"] = {"distribution_id": "exponential", "mean": node["repair"]["mean"] / 2}
    a = simulate_availability(plant, horizon=HORIZON, replications=n, seed=11, grid=0)
    b = simulate_availability(changed, horizon=HORIZON, replications=n, seed=12, grid=0)
    se_ind = math.hypot(a.mean_availability_std_error, b.mean_availability_std_error)
    print(f"  {top['id']} MTTR halved: paired {w['difference']:.3e} +- {w['std_error']:.2e}; independent "
          f"{b.mean_availability - a.mean_availability:.3e} +- {se_ind:.2e}; measured variance ratio "
          f"{(se_ind / w['std_error']) ** 2:.1f} (engine's {w['variance_ratio']:.1f})")
    age = single({"id": "P", "type": "component", "model": weibull(1000.0, 3.0), "instant_repair": True,
                  "preventive": {"policy": "age", "interval": 500.0, "cost": 100.0}, "costs": {"replace": 1000.0}})
    timed("interval search: age replacement, 17 candidates, 100000 h",
          lambda: interval_search(age, blocks=["P"], knob="preventive", intervals=candidate_intervals(250, 650, 17),
                                  horizon=100_000.0, replications=n, seed=1))
    sif = single({"id": "V", "type": "component", "instant_repair": True, "inspection": {"interval": 1000.0},
                  "model": {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": 1e-4}]}})
    timed("interval search: proof test for PFDavg 0.05, 12 candidates",
          lambda: interval_search(sif, blocks=["V"], knob="proof_test", intervals=candidate_intervals(500, 1600, 12),
                                  horizon=400_000.0, objective="pfd_avg", target=0.05, replications=n, seed=1))
    tested = two_trains(5)
    ids = [x["id"] for x in tested["nodes"] if "model" in x][:4]
    for x in tested["nodes"]:
        if x["id"] in ids:
            x["inspection"] = {"interval": 500.0, "cost": 50.0}
            x["costs"] = {"repair": 500.0}
    tested["costs"] = {"downtime_rate": 100.0}
    timed("interval search: group proof test, 4 plant blocks, 11 cand.",
          lambda: interval_search(tested, blocks=ids, knob="proof_test", intervals=candidate_intervals(100, 1100, 11),
                                  horizon=HORIZON, replications=n, seed=1))


if __name__ == "__main__":
    main()
