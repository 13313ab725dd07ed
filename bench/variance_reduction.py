"""Variance reduction: CPU time to a stated precision (relative 95% half-width of the mean
unavailability), with and without the engine's variance reduction, in the same run.

Three plants, horizon 10 000 h, repairs at once, one thread each:

- the benchmark plant (`engine/plant.py`: two trains of five exponential blocks, MTTF 1000 h,
  MTTR 10 h); its exact mean unavailability (closed form) is checked against both runs;
- a plant with PM: the same trains, each train's first block a Weibull life (eta 2000 h,
  beta 3) replaced at age 800 h (4 h off-line): those blocks' means come from a numeric renewal
  solution (controls, no closed form), so no train is a closed-form subsystem and there is no
  system control;
- a 2-of-3 with standby: two running pumps and a cold spare (MTTF 1000 h, MTTR 10 h) in
  series with a valve (MTTF 5000 h, MTTR 5 h) and a motor (MTTF 3000 h, MTTR 8 h): the
  standby group is not a control, the valve and motor are.

Each round runs every plant plain (`variance_reduction="none"`), reduced ("auto"), in
antithetic pairs ("antithetic": after a 400-pair pilot that does not pay for its CPU it turns to
plain streams: "antithetic+plain") and in stratified sets ("stratified": likewise after a 400-set pilot,
"stratified+plain") to the target, interleaved
(bench/harness.py), and times the CPU of each run (this process, all threads; the runs use one).
The figures are the per-round ratios plain CPU / the method's CPU (> 1: the method is ahead). Each
method's estimate is checked against the plain one's (and the benchmark plant's against its
closed form) within 4 standard errors of their difference.

    python bench/variance_reduction.py [--repeats 5] [--target 0.01]
    python bench/variance_reduction.py --quick      # 1 round, nothing written (a smoke run)
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine.plant import HORIZON, exact_mean_availability, two_trains
from harness import Bench

from bathtub.engine import simulate_availability

Z_CHECK = 4.0


def exp(mean: float) -> dict[str, Any]:
    return {"distribution_id": "exponential", "mean": mean}


def with_pm() -> dict[str, Any]:
    d = two_trains()
    for n in d["nodes"]:
        if n["id"] in ("a0", "b0"):
            n["model"] = {"distribution_id": "weibull", "params": {"alpha": 2000.0, "beta": 3.0}}
            n["preventive"] = {"policy": "age", "interval": 800.0, "duration": 4.0}
    return d


def standby() -> dict[str, Any]:
    nodes = [{"id": "in", "type": "input"}, {"id": "out", "type": "output"},
             {"id": "pumps", "type": "standby", "k": 2, "spares": 1, "cold": True, "model": exp(1000.0),
              "repair": exp(10.0)},
             {"id": "valve", "type": "component", "model": exp(5000.0), "repair": exp(5.0)},
             {"id": "motor", "type": "component", "model": exp(3000.0), "repair": exp(8.0)}]
    chain = ["in", "pumps", "valve", "motor", "out"]
    return {"nodes": nodes, "edges": [{"source": a, "target": b} for a, b in itertools.pairwise(chain)]}


PLANTS = {"benchmark plant": two_trains, "plant with PM": with_pm, "2-of-3 with standby": standby}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--target", type=float, default=0.01)
    ap.add_argument("--quick", action="store_true", help="1 round, results not written (a smoke run)")
    args = ap.parse_args()
    if args.quick:
        args.repeats = 1
    seeds = iter(range(1, 1_000_000))
    exact_u = 1.0 - exact_mean_availability()
    last: dict[str, Any] = {}
    failures: list[str] = []

    def case(plant: str, method: str):
        diagram = PLANTS[plant]()

        def run() -> dict[str, float]:
            c0, t0 = time.process_time(), time.perf_counter()
            r = simulate_availability(diagram, horizon=HORIZON, target_half_width=args.target,
                                      max_replications=10_000_000, seed=next(seeds), grid=0, threads=1,
                                      variance_reduction=method)
            cpu, wall = time.process_time() - c0, time.perf_counter() - t0
            last[(plant, method)] = r
            vr = r.variance_reduction or {}
            return {"cpu_seconds": cpu, "seconds": wall, "replications": r.replications,
                    "reached": float(r.relative_half_width), "factor": vr.get("factor") or 1.0}

        return run

    def check(plant: str, method: str) -> None:
        a, b = last[(plant, "none")], last[(plant, method)]
        ua, ub = 1 - a.mean_availability, 1 - b.mean_availability
        se = (a.mean_availability_std_error ** 2 + b.mean_availability_std_error ** 2) ** 0.5
        if abs(ua - ub) > Z_CHECK * se:
            failures.append(f"{plant}: plain {ua:.5g} vs {method} {ub:.5g} (se of difference {se:.3g})")
        if plant == "benchmark plant":
            for name, r in (("plain", a), (method, b)):
                u = 1 - r.mean_availability
                if abs(u - exact_u) > Z_CHECK * r.mean_availability_std_error:
                    failures.append(f"{plant} {name}: {u:.5g} vs exact {exact_u:.5g}")

    # Case names: "reduced" is auto (its figure's id kept from earlier runs).
    names = {"none": "plain", "auto": "reduced", "antithetic": "antithetic", "stratified": "stratified"}
    cases: dict[str, Any] = {}
    for plant in PLANTS:
        for method, name in names.items():
            run = case(plant, method)
            if method == "none":
                cases[f"{plant} plain"] = run
                continue

            def checked(run=run, plant=plant, method=method) -> dict[str, float]:
                out = run()
                check(plant, method)
                return out

            cases[f"{plant} {name}"] = checked
    b = Bench("variance_reduction")
    rounds = b.interleave(cases, repeats=args.repeats)
    med = statistics.median
    for plant in PLANTS:
        plain = rounds[f"{plant} plain"]
        for method, name in (("auto", "reduced"), ("antithetic", "antithetic"), ("stratified", "stratified")):
            red = rounds[f"{plant} {name}"]
            vr = last[(plant, method)].variance_reduction or {}
            note = (f"target {args.target * 100:g}% relative half-width of mean unavailability; plain: "
                    f"{med([r['replications'] for r in plain]):.0f} replications; {name}: "
                    f"{med([r['replications'] for r in red]):.0f} replications, method {vr.get('method')}, "
                    f"variance reduction factor {med([r['factor'] for r in red]):.3g} "
                    f"(min {min(r['factor'] for r in red):.3g}); one thread each")
            # The auto figure keeps its earlier title; the others name their method.
            title = f"CPU time to a {args.target * 100:g}% half-width, {plant}"
            if method != "auto":
                title += f", {method}"
            b.figure(title, rounds, f"{plant} {name}", f"{plant} plain", key="cpu_seconds", unit="s",
                     higher_is_better=False, note=note)
            print(f"{plant}, {name}: {note}")
    for f in failures:
        print("CHECK FAILED:", f)
    b.checks.append({"check": "plain, reduced, antithetic and stratified estimates agree (and match the closed form "
                     "on the benchmark plant) within 4 standard errors, every round",
                     "difference": float(len(failures)),
                     "tolerance": 0.0, "ok": not failures})
    if failures:
        raise SystemExit(1)
    if not args.quick:  # one round is no figure for the table
        b.write()


if __name__ == "__main__":
    main()
