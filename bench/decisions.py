"""Decisions benchmark: what to improve on the 10-block two-train plant, and three interval
searches (age replacement of a Weibull part, a proof-test interval for a PFDavg target, a
group proof-test interval on the plant), each timed, with the common-random-numbers
variance ratio: the variance of a difference from two independent runs over the paired
variance (the engine's covariance; for the first search also measured directly, from two
independent runs' standard errors against the paired one).

Cheapest design on the plant (options on train a's blocks: as is, 1-of-2, a cold spare):
the exact search (every design in closed form, the cheapest few verified on common random
numbers) against what a user does without it, simulating every design one run each, as
interleaved rounds (bench/harness.py, written to bench/results/decisions.json); and the
wall time of the heuristic (4 options on all 10 blocks: 4^10 designs) and of the search by
simulation (Weibull lives: no closed form).

    python bench/decisions.py [--replications 2000]
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine.plant import HORIZON, two_trains
from harness import Bench
from harness import timed as harness_timed

from bathtub.engine import simulate_availability
from bathtub.rbd.cheapest import cheapest_design
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
    b = Bench("decisions")
    res = timed(f"what to improve: 10-block plant, {HORIZON:g} h, 21 designs",
                lambda: what_to_improve(plant, repairable=True, horizon=HORIZON, replications=n, seed=1))
    top = res["blocks"][0]
    w = top["what_if"]["mttr_halved"]
    # Direct check of the ratio: the same change from two independent runs.
    changed = two_trains(5)
    node = next(x for x in changed["nodes"] if x["id"] == top["id"])
    node["repair"] = {"distribution_id": "exponential", "mean": node["repair"]["mean"] / 2}
    a = simulate_availability(plant, horizon=HORIZON, replications=n, seed=11, grid=0)
    c = simulate_availability(changed, horizon=HORIZON, replications=n, seed=12, grid=0)
    se_ind = math.hypot(a.mean_availability_std_error, c.mean_availability_std_error)
    print(f"  {top['id']} MTTR halved: paired {w['difference']:.3e} +- {w['std_error']:.2e}; independent "
          f"{c.mean_availability - a.mean_availability:.3e} +- {se_ind:.2e}; measured variance ratio "
          f"{(se_ind / w['std_error']) ** 2:.1f} (engine's {w['variance_ratio']:.1f})")
    decision(b, n, "what to improve, 10-block plant (21 designs: base, MTBF doubled and MTTR halved per block)", 21,
             lambda: what_to_improve(plant, repairable=True, horizon=HORIZON, replications=n, seed=1),
             plant, HORIZON)
    age = single({"id": "P", "type": "component", "model": weibull(1000.0, 3.0), "instant_repair": True,
                  "preventive": {"policy": "age", "interval": 500.0, "cost": 100.0}, "costs": {"replace": 1000.0}})
    decision(b, n, "interval search: age replacement, 17 candidates, 100,000 h", 17,
             lambda: interval_search(age, blocks=["P"], knob="preventive", intervals=candidate_intervals(250, 650, 17),
                                     horizon=100_000.0, replications=n, seed=1), age, 100_000.0)
    sif = single({"id": "V", "type": "component", "instant_repair": True, "inspection": {"interval": 1000.0},
                  "model": {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": 1e-4}]}})
    decision(b, n, "interval search: proof test for PFDavg 0.05, 12 candidates, 400,000 h", 12,
             lambda: interval_search(sif, blocks=["V"], knob="proof_test", intervals=candidate_intervals(500, 1600, 12),
                                     horizon=400_000.0, objective="pfd_avg", target=0.05, replications=n, seed=1),
             sif, 400_000.0)
    tested = two_trains(5)
    ids = [x["id"] for x in tested["nodes"] if "model" in x][:4]
    for x in tested["nodes"]:
        if x["id"] in ids:
            x["inspection"] = {"interval": 500.0, "cost": 50.0}
            x["costs"] = {"repair": 500.0}
    tested["costs"] = {"downtime_rate": 100.0}
    decision(b, n, "interval search: group proof test, 4 plant blocks, 11 candidates", 11,
             lambda: interval_search(tested, blocks=ids, knob="proof_test",
                                     intervals=candidate_intervals(100, 1100, 11), horizon=HORIZON, replications=n,
                                     seed=1), tested, HORIZON)

    cheapest(n, b)


def decision(b: Bench, n: int, label: str, designs: int, run, diagram: dict, horizon: float) -> None:
    """One decision in one engine pass (all its designs on common random numbers) against what
    it replaces: a run per design, each costing what one run of the base design costs (measured
    in the same rounds). Figure: designs per CPU-second; the note carries the CRN variance ratio
    (how many independent runs per design the paired answer is worth besides)."""
    last: dict = {}

    def ours() -> dict:
        last["out"] = run()
        return last["out"]

    cases = {"one pass": harness_timed(ours, work=lambda _: designs),
             "one run of the base design": harness_timed(
                 lambda: simulate_availability(diagram, horizon=horizon, replications=n, seed=1, grid=0),
                 work=lambda _: 1)}
    rounds = b.interleave(cases, repeats=3)
    ratio = last["out"].get("crn_variance_ratio_median")
    extra = "" if ratio is None else f"; CRN variance ratio (median) {ratio:.1f}"
    b.figure(f"{label}: designs per CPU-second", rounds, "one pass", "one run of the base design", key="cpu_rate",
             unit="designs/CPU-s", higher_is_better=True,
             note=f"{n} replications; baseline: a run per design at the cost of one run of the base design{extra}")


def plant_options(blocks: list[str], with_better: bool) -> dict:
    opts = [{"name": "as is", "cost": 0.0}, {"name": "1oo2", "cost": 10.0, "units": 2},
            {"name": "cold spare", "cost": 7.0, "spares": 1}]
    if with_better:
        opts.append({"name": "better", "cost": 4.0, "model": {"distribution_id": "exponential", "mean": 3000.0}})
    return {b: opts for b in blocks}


def cheapest(n: int, b: Bench) -> None:
    plant = two_trains(5)
    train_a = [f"a{i}" for i in range(5)]
    opts = plant_options(train_a[:3], False)
    target = {"figure": "availability", "value": 0.999}

    def search() -> dict:
        return cheapest_design(plant, repairable=True, options=opts, target=target, horizon=HORIZON,
                               replications=n, seed=1)

    def every_design() -> list[float]:
        from bathtub.engine import check_run_kind
        from bathtub.rbd.design_space import check_space, design_diagram

        norm = check_run_kind(plant, repairable=True)
        space = check_space(norm, opts, repairable=True)
        out = []
        for choice in itertools.product(*(range(m) for m in space.sizes)):
            r = simulate_availability(design_diagram(norm, space, choice), horizon=HORIZON, replications=n, seed=1,
                                      grid=0)
            out.append(r.mean_availability)
        return out

    res = timed("cheapest design: exact, 3 plant blocks x 3 options (27)", search)
    print(f"  {res['method']}: space {res['space']}, winner cost {res['winner']['cost']:g} "
          f"({', '.join(c['name'] for c in res['winner']['choices'])})")
    cases = {"exact search": harness_timed(search), "every design simulated": harness_timed(every_design)}
    rounds = b.interleave(cases, repeats=3)
    b.figure("cheapest design, 27 plant designs: exact search vs simulating every design", rounds, "exact search",
             "every design simulated", key="seconds", unit="s", higher_is_better=False,
             note=f"{n} replications per design")
    every = [f"{x}{i}" for x in "ab" for i in range(5)]
    res = timed("cheapest design: heuristic, 10 plant blocks x 4 options (4^10)",
                lambda: cheapest_design(plant, repairable=True, options=plant_options(every, True),
                                        target={"figure": "availability", "value": 0.99999}, horizon=HORIZON,
                                        replications=n, seed=1))
    print(f"  {res['method']}: space {res['space']}, winner cost {res['winner']['cost']:g}")
    worn = two_trains(5)
    for node in worn["nodes"]:
        if "model" in node:
            node["model"] = weibull(1100.0, 2.0)
    res = timed("cheapest design: simulated (Weibull), 3 blocks x 3 options",
                lambda: cheapest_design(worn, repairable=True, options=opts, target=target, horizon=HORIZON,
                                        replications=n, seed=1))
    print(f"  {res['method']}: space {res['space']}, winner cost {res['winner']['cost']:g}")
    b.write()


if __name__ == "__main__":
    main()
