"""The P–F interval a degradation model implies (`potential_failure`), against closed forms,
its scale property, its refusals, and the RCM evidence check that reads it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy.stats import norm

from bathtub.degradation.model import build_model
from bathtub.errors import InputError
from bathtub.rcm.evidence import check_evidence

MAP = {"i": "unit", "x": "t", "y": "y"}
T = np.linspace(1.0, 10.0, 8)


def _columns(slopes: np.ndarray, *, intercept: float = 5.0, noise: float = 0.0, seed: int = 0,
             time_scale: float = 1.0) -> dict[str, list[Any]]:
    """Linear paths y = intercept + b·t, read at T (times × time_scale, so the rate is b / time_scale)."""
    rng = np.random.default_rng(seed)
    m = len(slopes)
    t = np.tile(T, m)
    y = intercept + np.repeat(slopes, T.size) * t + rng.normal(0.0, noise, t.size) if noise else \
        intercept + np.repeat(slopes, T.size) * t
    return {"unit": [f"u{k}" for k in range(m) for _ in T], "t": list(t * time_scale), "y": list(y)}


def test_pseudo_failure_pf_is_each_units_gap_on_noise_free_lines() -> None:
    # Noise-free straight lines: unit k crosses P at (P - a)/b_k and F at (F - a)/b_k, so its
    # P–F interval is (F - P)/b_k exactly; the record's figures are the quantiles of those.
    slopes = np.array([1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0])
    rec = build_model(_columns(slopes), MAP, path="linear", threshold=40.0, direction="up", model="pseudo_failure",
                      potential_failure=25.0)
    gaps = (40.0 - 25.0) / slopes
    lo, med, hi = np.quantile(gaps, [0.05, 0.5, 0.95])
    pf = rec["pf_interval"]
    assert pf["value"] == pytest.approx(med, rel=1e-12)
    assert pf["ci"] == pytest.approx([lo, hi], rel=1e-12)
    assert pf["confidence"] == 0.9 and rec["potential_failure"] == 25.0


@pytest.mark.slow  # a 400-unit mixed-model fit
def test_random_effects_pf_against_its_closed_form_and_the_true_rates() -> None:
    # Rates B ~ N(2, 0.3²) across 400 units, intercept 5, threshold 40 up, P = 25: the P–F
    # interval is 15/B, whose q-quantile is 15/(μ + σ z_{1-q}). The record must be that
    # formula at the fitted μ, σ to rounding, near it at the true μ, σ (sampling error of
    # 400 units: se(μ̂) ≈ 0.3/20 = 0.015, 0.75%), and its quantiles must match the simulated
    # P–F intervals of the fitted rate law.
    rng = np.random.default_rng(11)
    slopes = rng.normal(2.0, 0.3, 400)
    rec = build_model(_columns(slopes, noise=0.2, seed=12), MAP, path="linear", threshold=40.0, direction="up",
                      model="random_effects", potential_failure=25.0)
    v = {p["name"]: p["value"] for p in rec["random_effects"]["params"]}
    pf = rec["pf_interval"]
    z = norm.ppf(0.95)
    assert pf["value"] == pytest.approx(15.0 / v["mu_b"], rel=1e-12)
    assert pf["ci"] == pytest.approx([15.0 / (v["mu_b"] + z * v["sd_b"]), 15.0 / (v["mu_b"] - z * v["sd_b"])],
                                     rel=1e-12)
    truth = [15.0 / (2.0 + z * 0.3), 15.0 / 2.0, 15.0 / (2.0 - z * 0.3)]
    assert [pf["ci"][0], pf["value"], pf["ci"][1]] == pytest.approx(truth, rel=0.04)
    b = np.random.default_rng(13).normal(v["mu_b"], v["sd_b"], 400_000)
    sim = np.quantile(15.0 / b[b > 0], [0.05, 0.5, 0.95])
    assert [pf["ci"][0], pf["value"], pf["ci"][1]] == pytest.approx(sim, rel=5e-3)


def test_downward_paths_read_the_gap_toward_the_threshold() -> None:
    # y = 100 - b t falling to F = 20 with P = 50: P–F interval 30/b.
    slopes = np.array([2.0, 3.0, 4.0, 5.0, 6.0])
    rec = build_model(_columns(-slopes, intercept=100.0), MAP, path="linear", threshold=20.0, direction="down",
                      model="pseudo_failure", potential_failure=50.0)
    assert rec["pf_interval"]["value"] == pytest.approx(30.0 / 4.0, rel=1e-12)


@pytest.mark.parametrize("model", ["pseudo_failure", pytest.param("random_effects", marks=pytest.mark.slow)])
@pytest.mark.parametrize("scale", [1e-3, 1e6])
def test_pf_interval_scales_with_time(model: str, scale: float) -> None:
    # Times × c, the same values: every crossing time × c, so the P–F interval × c: to rounding
    # for per-unit lines; to the likelihood maximiser's tolerance for the random-effects fit
    # (its σ_B moves by ~1e-7 relative; the P–F formula on the fitted values is exact).
    tol = 1e-12 if model == "pseudo_failure" else 1e-6
    slopes = np.random.default_rng(5).normal(2.0, 0.3, 40)
    kw = {"path": "linear", "threshold": 40.0, "direction": "up", "model": model, "potential_failure": 25.0}
    base = build_model(_columns(slopes, noise=0.2, seed=6), MAP, **kw)["pf_interval"]
    scaled = build_model(_columns(slopes, noise=0.2, seed=6, time_scale=scale), MAP, **kw)["pf_interval"]
    assert scaled["value"] == pytest.approx(base["value"] * scale, rel=tol)
    assert scaled["ci"] == pytest.approx([x * scale for x in base["ci"]], rel=tol)


@pytest.mark.parametrize(("direction", "threshold", "level"), [("up", 40.0, 45.0), ("up", 40.0, 40.0),
                                                               ("down", 20.0, 10.0)])
def test_potential_failure_beyond_the_threshold_is_refused(direction: str, threshold: float, level: float) -> None:
    sign = 1.0 if direction == "up" else -1.0
    cols = _columns(sign * np.array([2.0, 3.0, 4.0]), intercept=5.0 if direction == "up" else 100.0)
    with pytest.raises(InputError) as e:
        build_model(cols, MAP, path="linear", threshold=threshold, direction=direction, model="pseudo_failure",
                    potential_failure=level)
    assert e.value.field == "potential_failure"
    assert "threshold" in str(e.value)


def test_no_potential_failure_leaves_the_record_as_it_was() -> None:
    rec = build_model(_columns(np.array([2.0, 3.0, 4.0])), MAP, path="linear", threshold=40.0, direction="up",
                      model="pseudo_failure")
    assert "pf_interval" not in rec and "potential_failure" not in rec


def _on_condition(interval: float, unit: str) -> dict[str, Any]:
    return {"outcome": "on_condition", "interval": interval, "interval_unit": unit,
            "evidence": {"type": "degradation_model", "id": "dm_1"}}


def test_on_condition_check_reads_the_fitted_pf_interval() -> None:
    # Rates 1..5 per hour, F - P = 15: P–F intervals 15, 7.5, 5, 3.75, 3 h; the 5% point of
    # those (linear interpolation) is 3.15 h. Inspecting every 3 h is shorter: supported; every
    # 4 h is not (a fast unit can cross P and fail between inspections): contradicted.
    rec = build_model(_columns(np.array([1.0, 2.0, 3.0, 4.0, 5.0])), MAP, path="linear", threshold=40.0,
                      direction="up", model="pseudo_failure", potential_failure=25.0)
    lower = np.quantile(15.0 / np.array([1.0, 2.0, 3.0, 4.0, 5.0]), 0.05)
    assert rec["pf_interval"]["ci"][0] == pytest.approx(lower, rel=1e-12) and math.isclose(lower, 3.15)
    item = {"kind": "degradation_model", "body": {**rec, "unit": "hours"}}
    ok = check_evidence(_on_condition(3.0, "hours"), item, False)
    assert ok["state"] == "supported", ok
    assert "3 hours" in ok["reason"] and "3.15" in ok["reason"] and "median 5 hours" in ok["reason"]
    bad = check_evidence(_on_condition(4.0, "hours"), item, False)
    assert bad["state"] == "contradicted", bad
    assert "4 hours" in bad["reason"] and "3.15" in bad["reason"]
    assert bad["pf_interval"] == pytest.approx(lower)
