"""The engine's hot paths, each a stable benchmark name: the event loop on the benchmark plant,
an availability run with maintenance features, a mission run, bulk sampling of each family and a
failure-biasing (rare-event) run. One engine thread each, so a timing is the engine's own and
not the machine's spare cores; fixed seeds, so two versions with the same draws give the same
figures bit for bit, and otherwise figures within their standard errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from engine.plant import HORIZON, two_trains

SEED = 1


def _exp(mean: float) -> dict[str, Any]:
    return {"distribution_id": "exponential", "mean": mean}


def test_event_loop_benchmark_plant(benchmark: Any, record: Callable[..., None]) -> None:
    """The 10-block plant (two trains of 5 in series, MTTF 1000 h, MTTR 10 h) over 10,000 h, no
    curve: the event loop and little else (about 198 events a replication)."""
    from bathtub.engine import simulate_availability

    reps = 2000
    r = benchmark(lambda: simulate_availability(two_trains(5), horizon=HORIZON, replications=reps, seed=SEED,
                                                grid=0, threads=1))
    record({"mean_availability": r.mean_availability, "mean_availability_std_error": r.mean_availability_std_error,
            "expected_failures": r.expected_failures, "expected_failures_std_error": r.expected_failures_std_error,
            "events": r.events}, seed=SEED, replications=reps, threads=1)


def features_plant() -> dict[str, Any]:
    """2-of-3 pumps (Weibull lives), one repair crew, age replacement with costs and downtime cost."""
    pump = {"distribution_id": "weibull", "params": {"alpha": 1000.0, "beta": 2.5}}
    blocks = [{"id": f"p{i}", "type": "component", "model": pump, "repair": _exp(8.0),
               "preventive": {"policy": "age", "interval": 500.0, "duration": 2.0, "cost": 100.0},
               "costs": {"repair": 1000.0, "downtime": 5.0}} for i in (1, 2, 3)]
    edges = [{"source": "in", "target": b["id"]} for b in blocks] + [{"source": b["id"], "target": "vote"}
                                                                     for b in blocks]
    return {"nodes": [{"id": "in", "type": "input"}, *blocks, {"id": "vote", "type": "knode", "n": 2},
                      {"id": "out", "type": "output"}], "edges": [*edges, {"source": "vote", "target": "out"}],
            "costs": {"downtime_rate": 50.0}}


def test_availability_run_with_maintenance(benchmark: Any, record: Callable[..., None]) -> None:
    from bathtub.engine import simulate_availability

    reps = 2000
    r = benchmark(lambda: simulate_availability(features_plant(), horizon=8760.0, replications=reps, seed=SEED,
                                                crews=1, threads=1))
    figures = {"mean_availability": r.mean_availability, "mean_availability_std_error": r.mean_availability_std_error,
               "expected_failures": r.expected_failures, "expected_failures_std_error": r.expected_failures_std_error,
               "expected_preventive_replacements": r.expected_preventive_replacements, "events": r.events}
    if r.costs is not None:
        figures |= {"cost_total": r.costs["total"], "cost_total_std_error": r.costs["total_std_error"]}
    record(figures, seed=SEED, replications=reps, threads=1, crews=1)


def test_mission_run_benchmark_plant(benchmark: Any, record: Callable[..., None]) -> None:
    """The same 10 blocks non-repairable: every replication runs to system failure."""
    from bathtub.engine import simulate_mission

    reps = 20_000
    r = benchmark(lambda: simulate_mission(two_trains(5), mission_time=500.0, replications=reps, seed=SEED,
                                           threads=1))
    p = r.probability_of_failure
    # a proportion of the replications: its binomial standard error, so a comparison can weigh it
    record({"mttf": r.mttf, "mttf_std_error": r.mttf_std_error, "probability_of_failure": p,
            "probability_of_failure_std_error": float(np.sqrt(p * (1 - p) / reps)), "events": r.events},
           seed=SEED, replications=reps, threads=1)


# Family and parameters by name: the ids are the benchmark names (stable, not parametrize indices).
FAMILIES = {
    "weibull": {"alpha": 1000.0, "beta": 2.5},
    "exponential": {"failure_rate": 1e-3},
    "normal": {"mu": 1000.0, "sigma": 100.0},
    "lognormal": {"mu": 6.9, "sigma": 0.5},
    "gamma": {"alpha": 2.0, "beta": 500.0},
    "loglogistic": {"alpha": 1000.0, "beta": 3.0},
    "gumbel": {"mu": 1000.0, "sigma": 100.0},
    "logistic": {"mu": 1000.0, "sigma": 100.0},
    "uniform": {"a": 0.0, "b": 1000.0},
}
DRAWS = 200_000


@pytest.mark.parametrize("family", list(FAMILIES), ids=list(FAMILIES))
def test_sample_bulk(benchmark: Any, record: Callable[..., None], family: str) -> None:
    """200,000 lives from the engine's stream, as the simulator draws them."""
    from conftest import need

    from bathtub import engine

    # EngineLifetime since the one life-distribution class; a build before it named it Distribution
    cls = getattr(engine, "EngineLifetime", None) or need("bathtub.engine", "Distribution")
    dist = cls.from_input(family, FAMILIES[family])
    x = benchmark(lambda: dist.sample(DRAWS, seed=SEED))
    sd = float(np.std(x, ddof=1))
    record({"sample_mean": float(np.mean(x)), "sample_mean_std_error": sd / np.sqrt(DRAWS), "sample_sd": sd},
           seed=SEED, draws=DRAWS)


def test_rare_event_run(benchmark: Any, record: Callable[..., None]) -> None:
    """Failure biasing on 2-of-3 pumps (failure rate 4e-4/h, repair rate 1/h, one crew; U about
    1e-6, as bench/rare_events.py): 2,000 regenerative cycle pairs."""
    from conftest import need

    simulate = need("bathtub.rbd", "simulate_failure_biasing")
    exp = lambda rate: {"distribution_id": "exponential", "params": {"failure_rate": rate}}  # noqa: E731
    blocks = [{"id": f"p{i}", "type": "component", "model": exp(4e-4), "repair": exp(1.0)} for i in (1, 2, 3)]
    edges = [{"source": "in", "target": b["id"]} for b in blocks] + [{"source": b["id"], "target": "vote"}
                                                                     for b in blocks]
    d = {"nodes": [{"id": "in", "type": "input"}, *blocks, {"id": "vote", "type": "knode", "n": 2, "k": 3},
                   {"id": "out", "type": "output"}], "edges": [*edges, {"source": "vote", "target": "out"}]}
    cycles = 2000
    r = benchmark(lambda: simulate(d, crews=1, replications=cycles, seed=SEED, threads=1))
    record({"unavailability": r.unavailability, "unavailability_std_error": r.unavailability_std_error,
            "failure_frequency": r.failure_frequency, "failure_frequency_std_error": r.failure_frequency_std_error,
            "events": r.events}, seed=SEED, replications=cycles, threads=1, crews=1)
