"""A saved recurrent model as a repairable block's life (bathtub.rbd.resolve): a power-law
NHPP becomes the engine's Weibull life under minimal repair, so the simulated failures of
the block are Poisson with mean Lambda(H) = lambda H^beta; a Kijima GRP brings its q; other
recurrent models, and a block that sets its own repair quality as well, are refused."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reliability.Datasets import system_growth

from bathtub.engine import simulate_availability
from bathtub.errors import InputError
from bathtub.rbd.resolve import engine_form
from bathtub.recurrent import events, fit_data, grp

Z99 = 2.5758293035489


def _diagram(node_extra: dict | None = None) -> dict:
    node = {"id": "pump", "type": "component", "model": {"saved_model_id": "m"}, "instant_repair": True,
            **(node_extra or {})}
    return {"repairable": True, "unit": "h",
            "nodes": [{"id": "in", "type": "input"}, node, {"id": "out", "type": "output"}],
            "edges": [{"source": "in", "target": "pump"}, {"source": "pump", "target": "out"}]}


def test_power_law_is_a_minimally_repaired_weibull_block() -> None:
    rec = {**fit_data(events(system_growth().failures, ends=650.0), "crow_amsaa"), "unit": "h"}
    form = engine_form(_diagram(), {"m": rec}, {})
    pump = form["nodes"][1]
    assert pump["repair_quality"] == {"model": "kijima1", "q": 1.0}
    params = {p["name"]: p["value"] for p in rec["params"]}
    alpha = params["lambda"] ** (-1 / params["beta"])
    assert pump["model"]["params"] == [{"name": "alpha", "value": alpha}, {"name": "beta", "value": params["beta"]}]
    horizon, n = 2000.0, 3000
    run = simulate_availability(form, horizon=horizon, replications=n, seed=5, grid=0)
    mean = params["lambda"] * horizon ** params["beta"]  # expected failures of the fitted NHPP by 2000 h
    assert abs(run.blocks[0].failures - mean) <= Z99 * math.sqrt(mean / n), (run.blocks[0].failures, mean)


def test_grp_brings_its_q_and_other_models_are_refused() -> None:
    rng = np.random.default_rng(4)
    sims = grp.simulate(100.0, 2.0, 0.4, "kijima2", np.full(50, 600.0), rng)
    rec = {**fit_data(events([list(s) for s in sims], ends=[600.0] * 50), "kijima2"), "unit": "h"}
    q = next(p["value"] for p in rec["params"] if p["name"] == "q")
    assert engine_form(_diagram(), {"m": rec}, {})["nodes"][1]["repair_quality"] == {"model": "kijima2", "q": q}
    with pytest.raises(InputError) as err:
        engine_form(_diagram({"repair_quality": {"model": "kijima1", "q": 0.2}}), {"m": rec}, {})
    assert err.value.field == "nodes.pump.repair_quality"
    loglinear = {**fit_data(events(system_growth().failures), "loglinear"), "unit": "h"}
    with pytest.raises(InputError) as err:
        engine_form(_diagram(), {"m": loglinear}, {})
    assert err.value.field == "nodes.pump.model.saved_model_id" and "loglinear" in err.value.rule
    days = {**rec, "unit": "days"}
    with pytest.raises(InputError, match="is in 'days'"):
        engine_form(_diagram(), {"m": days}, {})
