"""The headline analyses through the library, each a stable benchmark name: a Weibull fit, a Cox
fit, an RBD analysis, a fleet forecast and an optimal replacement. Data drawn from fixed NumPy
seeds, so both versions fit the same rows; the fitted figures go into `extra_info` (a fit is
deterministic: two versions should agree to rounding, or say why not)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from conftest import need
from engine.plant import HORIZON, two_trains


def test_weibull_fit_100k(benchmark: Any, record: Callable[..., None]) -> None:
    """Weibull 2P, 100,000 rows, about 30% right-censored (bench/life_fit.py's data): estimates,
    Fisher bounds, goodness of fit and B-lives, the whole record."""
    fit, life_data = need("bathtub.life", "fit"), need("bathtub.life", "LifeData")
    rng = np.random.default_rng(1)
    t, c = 100.0 * rng.weibull(1.8, 100_000), rng.uniform(0, 300.0, 100_000)
    x, censored = np.minimum(t, c), (c < t).astype(int)
    rec = benchmark(lambda: fit(life_data.from_arrays(x, censored), "weibull").to_record())
    params = {p["name"]: p for p in rec["params"]}
    record({"alpha": params["alpha"]["value"], "alpha_se": params["alpha"]["se"], "beta": params["beta"]["value"],
            "beta_se": params["beta"]["se"]}, data_seed=1, rows=100_000)


def test_cox_fit_10k(benchmark: Any, record: Callable[..., None]) -> None:
    """Cox, Efron ties, 5 covariates, 10,000 rows (bench/regression_cox.py's data)."""
    fit_cox = need("bathtub.regression.cox", "fit_cox")
    beta = np.array([0.5, -0.3, 0.2, 0.0, 0.1])
    rng = np.random.default_rng(1)
    x = rng.normal(size=(10_000, 5))
    t = np.ceil(rng.exponential(1 / np.exp(x @ beta)) * 100)
    c = np.ceil(rng.exponential(2.0, 10_000) * 100)
    names = [f"x{j}" for j in range(5)]
    out = benchmark(lambda: fit_cox(x, names, np.minimum(t, c), t <= c, robust=False))
    se = np.sqrt(np.diag(out.var))
    record({**{f"beta_{n}": float(b) for n, b in zip(names, out.beta, strict=True)},
            **{f"beta_{n}_se": float(s) for n, s in zip(names, se, strict=True)}}, data_seed=1, rows=10_000)


def test_rbd_analysis_library(benchmark: Any, record: Callable[..., None]) -> None:
    """`bathtub.rbd.analyze` on the benchmark plant as a stored diagram: checks, resolution, plan
    and the run (one engine thread)."""
    analyze = need("bathtub.rbd", "analyze")
    d = {"name": "plant", "unit": "h", "repairable": True, **two_trains(5)}
    out = benchmark(lambda: analyze(d, horizon=HORIZON, replications=2000, seed=1, threads=1))
    res = out["results"]
    record({"mean_availability": res["mean_availability"],
            "mean_availability_std_error": res["mean_availability_std_error"],
            "expected_failures": res["expected_failures"],
            "expected_failures_std_error": res["expected_failures_std_error"]}, seed=1, replications=2000, threads=1)


def test_fleet_forecast_100k(benchmark: Any, record: Callable[..., None]) -> None:
    """100,000 items on one Weibull law, 24 periods, with Poisson-binomial 90% intervals."""
    forecast, lifetime = need("bathtub.fleet", "forecast"), need("bathtub.distributions", "Lifetime")
    rng = np.random.default_rng(1)
    ages, rates = rng.uniform(0, 4000, 100_000), rng.uniform(50, 150, 100_000)
    # `Lifetime.of` since the one life-distribution class; a build before it constructs by id
    life = getattr(lifetime, "of", lifetime)("weibull", {"alpha": 5000.0, "beta": 2.2})
    fc = benchmark(lambda: forecast(life, ages, rates, 24))
    record({"total_expected": fc.total_expected, "first_period": float(np.asarray(fc.expected_failures)[0])},
           data_seed=1, items=100_000, periods=24)


def test_optimal_replacement(benchmark: Any, record: Callable[..., None]) -> None:
    """Age replacement, Weibull(1000, 2.5), planned 100 vs unplanned 1000."""
    optimal_replacement = need("bathtub.strategy", "optimal_replacement")
    out = benchmark(lambda: optimal_replacement("weibull", [1000.0, 2.5], 100.0, 1000.0))
    record({"optimal_time": out["optimal_time"], "optimal_cost_rate": out["optimal_cost_rate"]})
