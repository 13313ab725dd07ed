"""The records of weibull_frailty, cox_frailty and buckley_james on small hostile datasets (few
rows, one group per row, no censoring, separated covariates, times from 1e-3 to 1e6 scales):
every outcome is a record that serialises as strict JSON and evaluates, or an InputError naming
a field — never another exception (a 500 at the service)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bathtub.errors import InputError
from bathtub.regression.kinds import evaluate_at, evaluate_curves
from bathtub.regression.records import fit_regression


def _columns(rng: np.random.Generator) -> dict[str, list]:
    n = int(rng.integers(3, 30))
    q = int(rng.integers(1, n + 1))
    x = rng.normal(size=n) * rng.choice([1.0, 100.0])
    c = (rng.integers(0, 2, n) * (rng.uniform() < 0.8)).tolist()  # a fifth of the sets: no censoring
    if rng.uniform() < 0.2:
        x = np.array([float(v == 0) for v in c])  # every failure flagged: separation
    t = rng.exponential(10, n) * rng.choice([1.0, 1e-3, 1e6])
    return {"t": np.round(t, int(rng.integers(0, 3))).tolist(), "c": c, "x": x.tolist(),
            "k": rng.choice(["a", "b"], n).tolist(), "g": rng.integers(0, q, n).tolist()}


@pytest.mark.parametrize("seed", range(6))
def test_hostile_small_data_gives_a_record_or_a_named_refusal(seed: int) -> None:
    rng = np.random.default_rng(seed)
    records = refusals = 0
    for _ in range(8):
        cols = _columns(rng)
        for dist in ("weibull_frailty", "cox_frailty", "buckley_james"):
            mapping = {"x": "t", "c": "c", **({"group": "g"} if dist != "buckley_james" else {})}
            try:
                rec = fit_regression(cols, mapping, dist, ["x", "k"])
            except InputError as exc:
                assert exc.field.split(".")[0] in ("mapping", "covariates") and exc.rule
                refusals += 1
                continue
            json.dumps(rec, allow_nan=False)
            at = evaluate_at(rec, 5.0, {"x": 0.1, "k": "a"})
            assert 0.0 <= at["reliability"] <= 1.0
            json.dumps(evaluate_curves(rec, 20, {"x": 0.1, "k": "b"}), allow_nan=False)
            records += 1
    assert records > 0


def test_uncensored_data_has_a_validation_block() -> None:
    # the censoring distribution of uncensored data is empty: the IPCW weights are 1, not an error
    rng = np.random.default_rng(2)
    cols = {"t": rng.exponential(5, 30).tolist(), "c": [0] * 30, "x": rng.normal(size=30).tolist()}
    for dist in ("cox", "buckley_james"):
        v = fit_regression(cols, {"x": "t", "c": "c"}, dist, ["x"])["validation"]
        assert v["available"] and v["brier"]["model"] >= 0
