"""Parameter uncertainty through a diagram: what one parameter draw of the two-level run costs
against a plain run of the same replications.

The diagram: a pump (exponential life fitted from 4 failures: the exact gamma law is drawn)
and a valve (Weibull fitted from 400 lives: normal on log scale) in series, each repaired at
rate 0.1 per hour, over 2000 h. On one thread:

- two-level: `bathtub.rbd.uncertainty.draw_rows` with `--draws` draws of `--replications_per_draw`
  replications each; the figure is its wall time per draw (drawing both models' parameters,
  resolving the diagram on them, compiling and running the engine, reading its figures);
- plain: `bathtub.rbd.simulate` of the resolved point diagram with `--replications_per_draw` replications
  (compile and run): what a draw would cost if its parameters were free.

The ratio is per round (rounds interleaved by bench/harness.py); the closed-form draw of a
non-repairable diagram (a Weibull block, `mission_time`) is timed too, against one
`bathtub.rbd.closed_form` evaluation.

    python bench/rbd_uncertainty.py [--repeats 5] [--draws 40] [--replications_per_draw 200]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Bench

from bathtub import models
from bathtub.rbd import closed_form, engine_form, simulate
from bathtub.rbd import uncertainty as unc
from bathtub.rbd.analysis import RunOptions


def exp(rate: float) -> dict[str, Any]:
    return {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": rate}]}


def line(repairable: bool) -> dict[str, Any]:
    blocks = [{"id": "pump", "type": "component", "model": {"saved_model_id": "pump"}},
              {"id": "valve", "type": "component", "model": {"saved_model_id": "valve"}}]
    if repairable:
        for b in blocks:
            b["repair"] = exp(0.1)
    nodes = [{"id": "in", "type": "input"}, *blocks, {"id": "out", "type": "output"}]
    edges = [{"source": "in", "target": "pump"}, {"source": "pump", "target": "valve"},
             {"source": "valve", "target": "out"}]
    return {"name": "line", "repairable": repairable, "nodes": nodes, "edges": edges}


def fits() -> dict[str, dict[str, Any]]:
    rng = np.random.default_rng(4)
    pump = models.fit("exponential", {"x": rng.exponential(100.0, 4).tolist()}, {"x": "x"})
    valve = models.fit("weibull", {"x": (rng.weibull(1.5, 400) * 300.0).tolist()}, {"x": "x"})
    return {"pump": pump, "valve": valve}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--draws", type=int, default=40)
    ap.add_argument("--replications_per_draw", type=int, default=200)
    args = ap.parse_args()
    ms = fits()
    rep, mission = line(True), line(False)
    opts = RunOptions(horizon=2000.0, mission_time=None, replications=args.replications_per_draw, precision=None,
                      max_replications=args.replications_per_draw, seed=1, grid=2, method="auto")
    m_opts = RunOptions(horizon=None, mission_time=100.0, replications=None, precision=None, max_replications=2,
                        seed=1, grid=2, method="auto")
    u = unc.UncertaintyOptions(draws=args.draws, replications_per_draw=args.replications_per_draw)
    point = engine_form(rep, ms, {})
    point_mission = engine_form(mission, ms, {})
    seeds = iter(range(1, 1_000_000))

    def per_draw(exact: bool):
        def case() -> dict[str, float]:
            o = m_opts if exact else RunOptions(**{**opts.to_dict(), "seed": next(seeds)})
            t0 = time.perf_counter()
            unc.draw_rows(mission if exact else rep, ms, {}, o, u, exact=exact, threads=1)
            return {"seconds": (time.perf_counter() - t0) / args.draws}
        return case

    def plain() -> dict[str, float]:
        t0 = time.perf_counter()
        for _ in range(args.draws):
            simulate(point, True, RunOptions(**{**opts.to_dict(), "seed": next(seeds)}), threads=1)
        return {"seconds": (time.perf_counter() - t0) / args.draws}

    def plain_closed() -> dict[str, float]:
        t0 = time.perf_counter()
        for _ in range(args.draws):
            closed_form(point_mission, m_opts)
        return {"seconds": (time.perf_counter() - t0) / args.draws}

    b = Bench("rbd_uncertainty")
    rounds = b.interleave({"two-level draw": per_draw(False), "plain run": plain,
                           "two-level closed-form draw": per_draw(True), "closed form": plain_closed},
                          repeats=args.repeats)
    per_draw = args.replications_per_draw
    b.figure(f"wall time per parameter draw ({per_draw} replications) vs a plain run of {per_draw}", rounds,
             "two-level draw", "plain run", key="seconds", unit="s", higher_is_better=False,
             note=f"2 saved models (exact gamma + log-normal Weibull draws), series, repairable, 2000 h; "
                  f"{args.draws} draws per round; one thread")
    b.figure("wall time per closed-form draw vs one closed-form evaluation", rounds, "two-level closed-form draw",
             "closed form", key="seconds", unit="s", higher_is_better=False,
             note="the same line non-repairable, mission 100 h: each draw resolves the diagram and evaluates R(t) "
                  "and the MTTF exactly")
    b.write()


if __name__ == "__main__":
    main()
