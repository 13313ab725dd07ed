"""The random-effects path model against statsmodels' MixedLM, its recovery of known truth,
its failure-time law against simulation, and the joint (condition-based) update."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.stats import norm

from bathtub.degradation import LineCrossing, Path, Readings, conditional_life, fit_random_effects, posterior
from bathtub.degradation.model import build_model
from bathtub.errors import InputError

T = np.linspace(1.0, 10.0, 8)


def _simulate(seed: int, m: int, *, mu_a: float = 5.0, mu_b: float = 2.0, sd_a: float = 0.0, sd_b: float = 0.4,
              rho: float = 0.0, sigma: float = 0.5) -> tuple[Readings, np.ndarray]:
    rng = np.random.default_rng(seed)
    cov = [[sd_a**2, rho * sd_a * sd_b], [rho * sd_a * sd_b, sd_b**2]]
    ab = rng.multivariate_normal([mu_a, mu_b], cov, size=m)
    t = np.tile(T, m)
    y = np.repeat(ab[:, 0], T.size) + np.repeat(ab[:, 1], T.size) * t + rng.normal(0, sigma, t.size)
    return Readings(tuple(f"u{k}" for k in range(m)), t, y, np.arange(0, t.size + 1, T.size)), ab


def _statsmodels(r: Readings, random_intercept: bool, reml: bool) -> dict[str, float]:
    import pandas as pd
    import statsmodels.formula.api as smf

    df = pd.DataFrame({"g": np.repeat(np.arange(len(r.units)), r.sizes), "t": r.t, "y": r.y})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        md = smf.mixedlm("y ~ t", df, groups="g", re_formula="~t" if random_intercept else "0+t").fit(
            reml=reml, method=["nm", "bfgs"], maxiter=5000)
    cov = np.asarray(md.cov_re)
    out = {"mu_a": md.fe_params.iloc[0], "mu_b": md.fe_params.iloc[1], "sigma": math.sqrt(md.scale), "ll": md.llf}
    if random_intercept:
        out |= {"sd_a": math.sqrt(cov[0, 0]), "sd_b": math.sqrt(cov[1, 1]),
                "rho": cov[0, 1] / math.sqrt(cov[0, 0] * cov[1, 1])}
    else:
        out["sd_b"] = math.sqrt(cov[0, 0])
    return out


@pytest.mark.parametrize("random_intercept", [False, True])
@pytest.mark.parametrize("method", ["ml", "reml"])
def test_matches_statsmodels_mixedlm(random_intercept: bool, method: str) -> None:
    r, _ = _simulate(3, 30, sd_a=1.0 if random_intercept else 0.0, rho=0.3 if random_intercept else 0.0)
    rec = fit_random_effects(Path.parse("linear"), r, random_intercept=random_intercept, method=method)
    ref = _statsmodels(r, random_intercept, method == "reml")
    got = {p["name"]: p["value"] for p in rec["params"]}
    for name, v in got.items():
        assert v == pytest.approx(ref[name], rel=2e-4, abs=1e-5), name
    assert rec["log_likelihood"] == pytest.approx(ref["ll"], abs=1e-5)


@pytest.mark.parametrize("scale", [1e-3, 1e6])
@pytest.mark.slow  # ~4 s a unit: random-effects refits
def test_results_transform_exactly_with_the_data(scale: float) -> None:
    r, _ = _simulate(5, 20, sd_a=0.8, rho=-0.2)
    base = {p["name"]: p["value"] for p in fit_random_effects(Path.parse("linear"), r, random_intercept=True)["params"]}
    rs = Readings(r.units, r.t * scale, r.y * scale, r.start)
    got = {p["name"]: p["value"] for p in fit_random_effects(Path.parse("linear"), rs, random_intercept=True)["params"]}
    want = {"mu_a": base["mu_a"] * scale, "mu_b": base["mu_b"], "sd_a": base["sd_a"] * scale, "sd_b": base["sd_b"],
            "sigma": base["sigma"] * scale, "rho": base["rho"]}
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-5, abs=1e-9 * scale), k


@pytest.mark.slow  # ~6 s: fits over many simulated fleets
def test_recovers_known_parameters_within_its_intervals() -> None:
    truth = {"mu_a": 5.0, "mu_b": 2.0, "sd_a": 1.0, "sd_b": 0.4, "rho": 0.3, "sigma": 0.5}
    r, _ = _simulate(11, 60, **truth)
    rec = fit_random_effects(Path.parse("linear"), r, random_intercept=True, method="reml")
    for p in rec["params"]:
        lo, hi = p["ci"]
        assert lo < truth[p["name"]] < hi, (p["name"], lo, truth[p["name"]], hi)
    # (seed 12 draws 60 slopes whose own sd is 0.333 and its sd_b interval misses 0.4, as 5% of
    # data sets must: over 100 data sets of 30 units the 95% intervals covered 95, 95, 93, 98 times,
    # bench/degradation_coverage.py)
    slope_only = {k: truth[k] for k in ("mu_a", "mu_b", "sd_b", "sigma")}
    r, _ = _simulate(13, 60, **slope_only)
    for p in fit_random_effects(Path.parse("linear"), r, method="ml")["params"]:
        assert p["ci"][0] < truth[p["name"]] < p["ci"][1], p["name"]


def _binomial_ok(p_model: np.ndarray, hits: np.ndarray, n: int) -> None:
    """Each empirical proportion within its 99.9% normal interval around the model's value."""
    se = np.sqrt(p_model * (1 - p_model) / n) + 1e-12
    assert np.all(np.abs(hits / n - p_model) <= 3.29 * se + 1.0 / n), (p_model, hits / n)


def test_fixed_intercept_life_is_the_closed_form_and_matches_simulation() -> None:
    a, d, mu_b, sd_b = 5.0, 30.0, 2.0, 0.6
    life = LineCrossing(a, mu_b, 0.0, sd_b, 0.0, d)
    t = np.array([5.0, 10.0, 12.5, 15.0, 25.0, 60.0])
    # T = (D - a)/b: P(T <= t) = P(b >= (D - a)/t)
    assert life.cdf(t) == pytest.approx(norm.sf((d - a) / t, mu_b, sd_b), rel=1e-13)
    b = np.random.default_rng(1).normal(mu_b, sd_b, 200_000)
    crossing = np.where(b > 0, (d - a) / np.where(b > 0, b, 1.0), np.inf)
    _binomial_ok(life.cdf(t), (crossing[:, None] <= t).sum(0), b.size)
    assert life.p_never == pytest.approx(norm.cdf(-mu_b / sd_b), rel=1e-12)
    assert life.quantile(life.cdf(t)) == pytest.approx(t, rel=1e-9)
    assert math.isinf(life.mean()) and math.isinf(float(life.quantile(1.0 - life.p_never / 2)))


@pytest.mark.parametrize("direction", [1, -1])
def test_random_intercept_first_crossing_matches_simulation(direction: int) -> None:
    mu_a, mu_b, sd_a, sd_b, rho, d = 5.0, 2.0, 2.0, 0.5, -0.4, 20.0
    life = LineCrossing(direction * mu_a, direction * mu_b, sd_a, sd_b, rho, direction * d, direction)
    rng = np.random.default_rng(2)
    n = 200_000
    ab = rng.multivariate_normal([mu_a, mu_b], [[sd_a**2, rho * sd_a * sd_b], [rho * sd_a * sd_b, sd_b**2]], n)
    a, b = ab[:, 0], ab[:, 1]
    # first crossing of the line a + b t (upward form) across d, t >= 0
    crossing = np.where(a >= d, 0.0, np.where(b > 0, (d - a) / np.where(b > 0, b, 1.0), np.inf))
    t = np.array([0.0, 2.0, 5.0, 7.5, 10.0, 20.0, 100.0])
    _binomial_ok(life.cdf(t), (crossing[:, None] <= t).sum(0), n)
    assert life.p_never == pytest.approx(float(np.mean(np.isinf(crossing))), abs=3.29 * math.sqrt(0.003 / n) + 1e-4)


def _re_record(threshold: float = 30.0, random_intercept: bool = False, path: str = "linear") -> dict:
    v = {"mu_a": 5.0, "mu_b": 2.0, "sd_b": 0.4, "sigma": 0.5}
    if random_intercept:
        v |= {"sd_a": 1.0, "rho": 0.3}
    return {"model": "random_effects", "path": path, "threshold": threshold, "direction": "up",
            "random_effects": {"params": [{"name": k, "value": x} for k, x in v.items()]}}


@pytest.mark.parametrize("random_intercept", [False, True])
def test_no_readings_gives_population_life_conditioned_on_age(random_intercept: bool) -> None:
    rec = _re_record(random_intercept=random_intercept)
    age = 9.0
    res = conditional_life(rec, age, [])
    s = np.array([0.0, 1.0, 3.0, 6.0, 20.0])
    if not random_intercept:  # the closed form, written out here
        def pop(t: np.ndarray) -> np.ndarray:
            return norm.cdf((30.0 - 5.0) / t, 2.0, 0.4)
    else:  # first crossing by simulation-free quadrature over the intercept
        z, w = np.polynomial.hermite_e.hermegauss(120)
        w = w / w.sum()

        def pop(t: np.ndarray) -> np.ndarray:
            a = 5.0 + 1.0 * z[:, None]
            mb, sb = 2.0 + 0.3 * 0.4 * z[:, None], 0.4 * math.sqrt(1 - 0.09)
            alive = (a < 30.0) * norm.cdf(((30.0 - a) / t - mb) / sb)
            return (w[:, None] * alive).sum(0)
    want = pop(age + s) / pop(np.array([age]))
    assert res.sf(s) == pytest.approx(want, rel=1e-6, abs=1e-12)


def test_readings_update_the_slope_in_closed_form() -> None:
    rec = _re_record()
    ts = np.array([2.0, 4.0, 6.0, 8.0])
    ys = np.array([11.0, 17.5, 22.0, 29.0])
    mu, cov = posterior(rec, ts, ys)
    prec = 1 / 0.4**2 + np.sum(ts**2) / 0.5**2
    mean = (2.0 / 0.4**2 + np.sum(ts * (ys - 5.0)) / 0.5**2) / prec
    assert mu == pytest.approx([5.0, mean], rel=1e-12) and cov[1, 1] == pytest.approx(1 / prec, rel=1e-12)
    assert cov[0, 0] == 0.0 and cov[0, 1] == 0.0
    # with a random intercept the posterior is the conjugate normal: precision Σ⁻¹ + XᵀX/σ²
    rec = _re_record(random_intercept=True)
    S = np.array([[1.0, 0.3 * 0.4], [0.3 * 0.4, 0.16]])
    X = np.column_stack([np.ones(4), ts])
    P = np.linalg.inv(S) + X.T @ X / 0.25
    m = np.linalg.solve(P, np.linalg.solve(S, [5.0, 2.0]) + X.T @ ys / 0.25)
    mu, cov = posterior(rec, ts, ys)
    assert mu == pytest.approx(m, rel=1e-10) and cov == pytest.approx(np.linalg.inv(P), rel=1e-10)
    # a unit reading fast wears out sooner than the population at the same age
    fast = conditional_life(rec, 8.0, list(zip(ts, ys + 0.5)))
    assert float(fast.quantile(0.5)) < float(conditional_life(rec, 8.0, []).quantile(0.5))


def test_exponential_path_is_the_log_linear_case() -> None:
    lin = _re_record(threshold=30.0)
    expo = _re_record(threshold=math.exp(30.0), path="exponential")
    readings = [[1.0, math.exp(7.1)], [3.0, math.exp(11.5)]]
    got = conditional_life(expo, 4.0, readings).sf(np.array([1.0, 2.0, 5.0]))
    want = conditional_life(lin, 4.0, [[t, math.log(y)] for t, y in readings]).sf(np.array([1.0, 2.0, 5.0]))
    assert got == pytest.approx(want, rel=1e-12)


def test_joint_bad_input_names_the_field() -> None:
    rec = _re_record()
    for readings, field in (([[1.0, 2.0], [1.0, 3.0]], "readings.1"), ([[5.0, 2.0]], "readings.0"),
                            ([[1.0]], "readings.0"), ([[-1.0, 2.0]], "readings.0")):
        with pytest.raises(InputError) as e:
            conditional_life(rec, 4.0, readings)
        assert e.value.field == field
    with pytest.raises(InputError) as e:
        conditional_life(rec, -1.0, [])
    assert e.value.field == "age"
    with pytest.raises(InputError) as e:
        conditional_life({**rec, "model": "pseudo_failure"}, 1.0, [])
    assert e.value.field == "id"


def test_build_model_random_effects_record() -> None:
    r, _ = _simulate(4, 25)
    cols = {"unit": [r.units[k] for k in r.unit_index()], "t": list(r.t), "y": list(r.y)}
    rec = build_model(cols, {"i": "unit", "x": "t", "y": "y"}, path="linear", threshold=30.0, direction="up",
                      model="random_effects", options={"method": "ml"})
    v = {p["name"]: p["value"] for p in rec["random_effects"]["params"]}
    assert rec["life"]["median"] == pytest.approx((30.0 - v["mu_a"]) / v["mu_b"], rel=1e-9)
    assert rec["n"] == 25 and len(rec["units"]) == 25
