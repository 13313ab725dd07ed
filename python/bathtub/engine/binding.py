"""The one door to the compiled engine (`bathtub._engine`): the only module of the library that
imports it (`bathtub/__init__.py` reads the version string alone, to stay light).

Each function here is the binding's call with its JSON answer decoded, typed for the rest of
the library; no checks of its own (those are `bathtub.engine.fields` and the run functions',
made before a call). A long call takes a `RunControl` (`bathtub.engine.control.call_engine`
runs it so Ctrl-C and cancel reach it). Refusals rise as `bathtub.errors.EngineError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from bathtub import _engine

__all__ = [
    "ENGINE_VERSION",
    "Cancelled",
    "RunControl",
    "alt_bootstrap",
    "alt_fit",
    "collapse_keys",
    "compare_designs",
    "compile_diagram",
    "dist_eval",
    "dist_mean",
    "dist_sample",
    "interval_search",
    "merge_availability",
    "merge_mission",
    "rare_check",
    "renewal_downtime",
    "simulate_availability",
    "simulate_mission",
    "simulate_rare",
    "what_to_improve",
]

ENGINE_VERSION: str = _engine.__version__
Cancelled = _engine.Cancelled
RunControl = _engine.RunControl


def dist_eval(distribution_id: str, params: Mapping[str, float], function: str, t: list[float],
              base_distribution_id: str | None = None) -> list[float]:
    return _engine.dist_eval(distribution_id, params, function, t, base_distribution_id)


def dist_mean(distribution_id: str, params: Mapping[str, float], base_distribution_id: str | None = None) -> float:
    return _engine.dist_mean(distribution_id, params, base_distribution_id)


def renewal_downtime(life: tuple[str, Mapping[str, float]], repair: tuple[str, Mapping[str, float]],
                     horizon: float, replace: tuple[float, float] | None = None) -> tuple[float, float]:
    """Expected downtime fraction over [0, horizon] of one unit (life and repair as (family id,
    parameters), replaced at age (age, duration) if given) and its estimated numeric error."""
    return _engine.renewal_downtime(life, repair, horizon, replace)


def dist_sample(distribution_id: str, params: Mapping[str, float], n: int, seed: int, stream: int = 0,
                age: float | None = None, base_distribution_id: str | None = None) -> list[float]:
    return _engine.dist_sample(distribution_id, params, {"n": n, "seed": seed, "stream": stream, "age": age},
                               base_distribution_id)


def compile_diagram(diagram_json: str) -> list[str]:
    """The block ids of a lowered diagram the engine compiles (subsystem blocks `outer/inner`)."""
    return list(_engine.compile_diagram(diagram_json))


def simulate_availability(diagram_json: str, horizon: float, grid: int, crews: int, seed: int, replication_start: int,
                          *, replications: int | None, target_half_width: float | None, max_replications: int,
                          threads: int | None, control: RunControl,
                          variance_reduction: str = "none", plain_from: int | None = None) -> tuple[str, str]:
    """(mergeable state, summary) as JSON text: the state is kept whole to merge runs later.
    `plain_from`: an antithetic or stratified run's chunk past its turn to plain streams
    (`availability_plain_from`)."""
    run = {"seed": seed, "replication_start": replication_start, "replications": replications,
           "target_half_width": target_half_width, "max_replications": max_replications, "threads": threads,
           "variance_reduction": variance_reduction, "plain_from": plain_from}
    return _engine.simulate_availability(diagram_json, horizon, grid, crews, run, control=control)


def simulate_mission(diagram_json: str, mission_time: float, grid: int, seed: int, replication_start: int,
                     replications: int, *, threads: int | None, control: RunControl) -> tuple[str, str]:
    run = {"seed": seed, "replication_start": replication_start, "replications": replications, "threads": threads}
    return _engine.simulate_mission(diagram_json, mission_time, grid, run, control=control)


def merge_availability(a: str, b: str) -> tuple[str, str]:
    return _engine.merge_availability(a, b)


def availability_plain_from(state: str) -> int | None:
    """Where an antithetic or stratified run to a target precision, `state` run so far, draws plain
    streams from (its pilot's pairs or sets not paying for their CPU), else None: later chunks are told."""
    return _engine.availability_plain_from(state)


def merge_mission(a: str, b: str) -> tuple[str, str]:
    return _engine.merge_mission(a, b)


def what_to_improve(diagram_json: str, plan: Mapping[str, Any], blocks: list[str] | None, *,
                    control: RunControl) -> dict[str, Any]:
    """`plan`: kind, time, crews, compared, seed, replication_start, replications, threads."""
    return json.loads(_engine.what_to_improve(diagram_json, dict(plan), blocks, control=control))


def interval_search(diagram_json: str, blocks: list[str], knob: str, intervals: list[float],
                    plan: Mapping[str, Any], *, control: RunControl) -> dict[str, Any]:
    return json.loads(_engine.interval_search(diagram_json, blocks, knob, intervals, dict(plan), control=control))


def compare_designs(diagrams_json: list[str], plan: Mapping[str, Any], *, control: RunControl) -> dict[str, Any]:
    return json.loads(_engine.compare_designs(diagrams_json, dict(plan), control=control))


def rare_check(diagram_json: str, crews: int) -> str | None:
    """Why failure biasing cannot run this diagram, or None when it can."""
    return _engine.rare_check(diagram_json, crews)


def simulate_rare(diagram_json: str, crews: int, run: Mapping[str, Any], *, control: RunControl) -> dict[str, Any]:
    """`run`: seed, replication_start, replications or target_half_width, max_replications, threads."""
    return json.loads(_engine.simulate_rare(diagram_json, crews, dict(run), control=control))


def alt_fit(life: str, relationship: str, t: list[float], failed: list[bool], stresses: list[list[float]],
            start: list[float]) -> tuple[list[float], float, list[list[float]] | None]:
    return _engine.alt_fit(life, relationship, t, failed, stresses, start)


def alt_bootstrap(life: str, relationship: str, t: list[float], failed: list[bool], stresses: list[list[float]],
                  theta: list[float], kind: str, seed: int, start: int, count: int, threads: int | None,
                  jackknife: bool) -> tuple[list[float], list[float]]:
    return _engine.alt_bootstrap(life, relationship, {"t": t, "failed": failed, "stresses": stresses}, theta,
                                 {"kind": kind, "seed": seed, "start": start, "count": count, "threads": threads,
                                  "jackknife": jackknife})


def collapse_keys(keys: np.ndarray, failures: int, out: np.ndarray) -> tuple[int, int]:
    """Packed life-data keys sorted in place, distinct times written to `out` (see `_engine.pyi`)."""
    return _engine.collapse_keys(keys, failures, out)

