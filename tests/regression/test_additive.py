"""Lin–Ying additive hazards against the estimator written out risk set by risk set (the
textbook sums, one gap and one event at a time), right-censored and counting-process rows."""

from __future__ import annotations

import math

import numpy as np
import pytest
from lifelines.datasets import load_rossi, load_stanford_heart_transplants

from bathtub.regression.additive import baseline_at, fit_additive

ROSSI = load_rossi()


def _brute(x: np.ndarray, start: np.ndarray, stop: np.ndarray, event: np.ndarray):
    grid = np.unique(np.concatenate([start, stop]))
    p = x.shape[1]
    a, b, bb = np.zeros((p, p)), np.zeros(p), np.zeros((p, p))
    drift_rate = []
    for k in range(grid.size - 1):
        risk = (start <= grid[k]) & (stop > grid[k])
        if not risk.any():
            drift_rate.append(None)
            continue
        z = x[risk]
        a += (grid[k + 1] - grid[k]) * (z - z.mean(0)).T @ (z - z.mean(0))
        drift_rate.append(z.mean(0))
    for i in np.flatnonzero(event):
        risk = (start < stop[i]) & (stop >= stop[i])
        r = x[i] - x[risk].mean(0)
        b += r
        bb += np.outer(r, r)
    beta = np.linalg.solve(a, b)
    ainv = np.linalg.inv(a)

    def cumhaz0(t: float) -> float:
        jumps = sum(1.0 / np.sum((start < s) & (stop >= s)) for s in stop[event] if s <= t)
        drift = 0.0
        for k in range(grid.size - 1):
            if drift_rate[k] is None or grid[k] >= t:
                continue
            drift += (min(grid[k + 1], t) - grid[k]) * float(drift_rate[k] @ beta)
        return jumps - drift

    return beta, ainv @ bb @ ainv, cumhaz0


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e6])
def test_right_censored_equals_the_sums(scale: float) -> None:
    cols = ["fin", "age", "prio"]
    x = ROSSI[cols].to_numpy(float)
    t = ROSSI["week"].to_numpy(float) * scale
    e = ROSSI["arrest"].to_numpy(bool)
    fit = fit_additive(x, t, e)
    beta, cov, cumhaz0 = _brute(x, np.zeros(t.size), t, e)
    assert np.allclose(fit.beta, beta, rtol=1e-10)
    assert np.allclose(fit.cov, cov, rtol=1e-9)
    for at in (3.5 * scale, 20 * scale, 51.9 * scale):
        ours = float(baseline_at(fit.grid, fit.drift, fit.times, fit.jumps, np.array([at]))[0])
        assert math.isclose(ours, cumhaz0(at), rel_tol=1e-9, abs_tol=1e-12)


def test_counting_process_equals_the_sums() -> None:
    d = load_stanford_heart_transplants()
    cols = ["age", "surgery", "transplant"]
    x = d[cols].to_numpy(float)
    fit = fit_additive(x, d["stop"].to_numpy(float), d["event"].to_numpy(bool), d["start"].to_numpy(float))
    beta, cov, cumhaz0 = _brute(x, d["start"].to_numpy(float), d["stop"].to_numpy(float), d["event"].to_numpy(bool))
    assert np.allclose(fit.beta, beta, rtol=1e-10) and np.allclose(fit.cov, cov, rtol=1e-9)
    ours = float(baseline_at(fit.grid, fit.drift, fit.times, fit.jumps, np.array([100.0]))[0])
    assert math.isclose(ours, cumhaz0(100.0), rel_tol=1e-9)
