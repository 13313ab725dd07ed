"""The fast Weibull path (one packed sort, fused profile-likelihood sums, ranks from the sort)
gives what the previous code gave, and its pieces equal independent computations.

`data/weibull_fits_before_fast_path.json` holds the full records (estimates, standard errors,
intervals, covariance, log-likelihood, gof, B-lives with bounds) that the code before this path
(commit 294ff78) produced on the deterministic datasets below at three time units; they must
come out again to rounding. The Anderson–Darling statistic is a small difference of sums of
order one per failure (~27 each), so its last digits follow the summation order: 1e-9 there.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from bathtub import _engine
from bathtub.life import LifeData, fit
from bathtub.life.model import ModelSpec
from bathtub.life.ranks import adjusted_ranks, anderson_darling

PINNED = json.loads((Path(__file__).parent / "data" / "weibull_fits_before_fast_path.json").read_text())
PHI = (math.sqrt(5) - 1) / 2


def seq(n: int, a: float) -> np.ndarray:
    """Low-discrepancy points frac(i a): the same data on every machine and NumPy version."""
    return np.modf(np.arange(1, n + 1) * a)[0]


def weibull_times(n: int, alpha: float, beta: float) -> np.ndarray:
    return alpha * (-np.log1p(-seq(n, PHI))) ** (1 / beta)


def datasets() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    out = {}
    t, c = weibull_times(2000, 100.0, 1.8), 300.0 * seq(2000, math.sqrt(2) - 1)
    out["censored"] = (np.minimum(t, c), (c < t).astype(int))  # 30% censored
    t, c = weibull_times(3000, 10.0, 0.7), 3.0 * seq(3000, math.sqrt(3) - 1)
    out["heavy"] = (np.minimum(t, c), (c < t).astype(int))  # 78% censored
    # whole numbers: 79 distinct times, failures and suspensions tied at the same times
    t = np.maximum(np.round(weibull_times(3000, 50.0, 2.5)), 1.0)
    c = np.maximum(np.round(80.0 * seq(3000, math.sqrt(2) - 1)), 1.0)
    out["ties"] = (np.minimum(t, c), (c < t).astype(int))
    # past 40,000 rows the Newton iteration is warm-started on a subsample
    t, c = weibull_times(60_000, 100.0, 1.8), 300.0 * seq(60_000, math.sqrt(2) - 1)
    out["large"] = (np.minimum(t, c), (c < t).astype(int))
    out["complete"] = (weibull_times(500, 30.0, 3.0), np.zeros(500, int))
    out["few"] = (np.array([5.0, 7, 9, 9, 12, 15, 20, 20, 25]), np.array([1, 0, 1, 1, 0, 1, 1, 1, 1]))
    return out


DATA = datasets()
CASES = [(name, k) for name in DATA for k in (1e-3, 1.0, 1e6)]


def close(a: float | None, b: float | None, rel: float) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= rel * abs(b)


@pytest.mark.parametrize("name, k", CASES, ids=[f"{n}-x{k:g}" for n, k in CASES])
def test_full_record_equals_the_previous_code(name: str, k: float) -> None:
    x, c = DATA[name]
    rec = fit(LifeData.from_arrays(x * k, c), "weibull").to_record()
    pin = PINNED[f"{name} x{k:g}"]
    assert (rec["n"], rec["n_failures"]) == (pin["n"], pin["n_failures"])
    for p, (value, se, ci) in zip(rec["params"], pin["params"], strict=True):
        assert close(p["value"], value, 1e-12) and close(p["se"], se, 1e-10)
        assert close(p["ci"][0], ci[0], 1e-10) and close(p["ci"][1], ci[1], 1e-10)
    for row, pin_row in zip(rec["covariance"]["matrix"], pin["covariance"], strict=True):
        for a, b in zip(row, pin_row, strict=True):
            assert close(a, b, 1e-10)
    assert close(rec["log_likelihood"], pin["log_likelihood"], 1e-13)
    gof = {g["id"]: g["value"] for g in rec["gof"]}
    # the Anderson–Darling test row came later, on complete samples only (tests/life/test_ad_test.py)
    assert gof.keys() - {"ad_test"} == pin["gof"].keys()
    assert ("ad_test" in gof) == (name == "complete")
    for key, value in pin["gof"].items():
        assert close(gof[key], value, 1e-9 if key == "ad" else 1e-13), key
    life = {g["id"]: (g["value"], g["lower"]) for g in rec["life"]}
    for key, (value, lower) in pin["life"].items():
        assert close(life[key][0], value, 1e-12) and close(life[key][1], lower, 1e-9), key


def reference_collapse(x: np.ndarray, c: np.ndarray) -> dict[str, np.ndarray]:
    """Distinct times with counts per kind by np.unique, and units strictly before each failure
    time counted row by row (a suspension at a failure's time counts after it)."""
    f, fn = np.unique(x[c == 0], return_counts=True)
    r, rn = np.unique(x[c == 1], return_counts=True)
    before = np.array([np.sum(x < t) for t in f], dtype=float)
    return {"f": f, "fn": fn.astype(float), "r": r, "rn": rn.astype(float), "before": before}


@pytest.mark.parametrize("name", ["censored", "heavy", "ties", "complete", "few", "zeros"])
def test_one_sort_collapses_and_counts_like_unique(name: str) -> None:
    if name == "zeros":  # times at 0 (and -0.0, which must not sort as a huge key) of both kinds
        x, c = np.array([0.0, -0.0, 3.0, 0.0, 2.0, 3.0, -0.0, 1.0]), np.array([0, 1, 1, 1, 0, 0, 0, 1])
    else:
        x, c = DATA[name]
    d = LifeData.from_arrays(x, c)
    ref = reference_collapse(x + 0.0, c)
    for key in ("f", "fn", "r", "rn"):
        np.testing.assert_array_equal(getattr(d, key), ref[key])
    assert not np.signbit(d.f).any() and not np.signbit(d.r).any()
    np.testing.assert_array_equal(d.units_before(), ref["before"])
    # the same data built without the sort (from its dict) counts them by a merge
    np.testing.assert_array_equal(LifeData.from_dict(d.to_dict()).units_before(), ref["before"])


def test_weighted_rows_and_left_censoring_take_the_general_path() -> None:
    x, c = DATA["ties"]
    w = np.ones(x.size)
    a, b = LifeData.from_arrays(x, c), LifeData.from_arrays(x, c, n=w)
    for key in ("f", "fn", "r", "rn"):
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key))
    np.testing.assert_array_equal(a.units_before(), b.units_before())
    left = LifeData.from_arrays([1.0, 2.0, 2.0, 5.0], [0, -1, 1, 0])
    np.testing.assert_array_equal(left.lt, [2.0])
    np.testing.assert_array_equal(left.r, [2.0])


@pytest.mark.parametrize("name", ["censored", "heavy", "ties", "large"])
def test_anderson_darling_from_the_fit_equals_the_generic_one(name: str) -> None:
    """The fast path hands the statistic ln S at the failures from its own log times; the
    generic path evaluates the fitted distribution's logsf on data without the sort's counts."""
    x, c = DATA[name]
    f = fit(LifeData.from_arrays(x, c), "weibull")
    ad = {g["id"]: g["value"] for g in f.gof}["ad"]
    plain = LifeData.from_dict(LifeData.from_arrays(x, c).to_dict())
    assert close(ad, anderson_darling(ModelSpec("weibull").build(np.array(f.values)).logsf, plain), 1e-10)
    ranks = adjusted_ranks(plain)[2]
    np.testing.assert_allclose(adjusted_ranks(LifeData.from_arrays(x, c))[2], ranks, rtol=1e-15)


def test_a_suspension_at_time_zero_adds_a_unit_and_nothing_else() -> None:
    """S(0) = 1: a unit suspended at 0 leaves the likelihood and the estimates as they were
    (it used to overflow the Weibull fit, having no log time); only n counts it."""
    x, c = DATA["censored"]
    base = fit(LifeData.from_arrays(x, c), "weibull")
    zero = fit(LifeData.from_arrays(np.append(x, [0.0, 0.0]), np.append(c, [1, 1])), "weibull")
    assert zero.n == base.n + 2
    assert close(zero.log_likelihood, base.log_likelihood, 1e-13)
    for a, b in zip(zero.values, base.values, strict=True):
        assert close(a, b, 1e-12)


def _collapse_by_numpy(t: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, ...]:
    """The straightforward collapse: unique times per kind, and units before each failure time
    counted by binary search (failures of either kind strictly earlier)."""
    f, fn = np.unique(t[~right], return_counts=True)
    r, rn = np.unique(t[right], return_counts=True)
    everything = np.sort(t)
    return f, fn.astype(float), r, rn.astype(float), np.searchsorted(everything, f, "left").astype(float)


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e6])
def test_engine_collapse_equals_unique_counts_and_ranks(scale: float) -> None:
    """One sort and one pass in Rust give the unique times, counts and units-before that the
    obvious NumPy computation gives: continuous data, heavy ties within and across kinds, a
    zero time, all failures, all suspensions; exactly (these are counts and copied times)."""
    rng = np.random.default_rng(7)
    cont = scale * rng.weibull(1.5, 20_001)
    tied = scale * rng.integers(0, 40, 20_000) / 8.0
    cases = [(cont, rng.random(cont.size) < 0.3), (tied, rng.random(tied.size) < 0.5),
             (np.array([0.0, 0.0, scale, scale]), np.array([True, False, False, True])),
             (cont[:50], np.zeros(50, bool)), (cont[:50], np.ones(50, bool))]
    for t, right in cases:
        key = ((t + 0.0).view(np.uint64) << np.uint64(1)) | right.astype(np.uint64)
        failures = int((~right).sum())
        out = np.full(3 * failures + 2 * (t.size - failures), np.nan)
        nf, nr = _engine.collapse_keys(key, failures, out)
        want = _collapse_by_numpy(t, right)
        s = t.size - failures
        got = (out[:nf], out[failures:][:nf], out[3 * failures:][:nr], out[3 * failures + s:][:nr],
               out[2 * failures:][:nf])
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(key, np.sort(key))  # sorted in place
        data = LifeData.from_arrays(t, right.astype(int))
        for g, w in zip((data.f, data.fn, data.r, data.rn, data.units_before()), want, strict=True):
            np.testing.assert_array_equal(g, w)


def test_engine_collapse_refuses_buffers_it_cannot_write_in_place() -> None:
    key = np.arange(4, dtype=np.uint64) << np.uint64(1)  # four failures
    frozen = key.copy()
    frozen.flags.writeable = False
    for keys, out in ((frozen, np.empty(12)), (np.repeat(key, 2)[::2], np.empty(12)), (key, np.empty(11)),
                      (key, np.empty(24)[::2])):
        with pytest.raises(ValueError, match="collapse_keys"):
            _engine.collapse_keys(keys, 4, out)
    shared = np.zeros(16)
    _engine.collapse_keys(shared[:4].view(np.uint64), 4, shared[4:])  # adjacent is fine
    with pytest.raises(ValueError, match="overlap"):
        _engine.collapse_keys(shared[:4].view(np.uint64), 4, shared[3:15])  # one slot shared
    with pytest.raises(ValueError, match="collapse_keys"):
        _engine.collapse_keys(key, 5, np.empty(15))
