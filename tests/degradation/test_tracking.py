"""A tracked item's remaining life against closed forms and simulations written here.

- Random-effects model with a common intercept a and slope B ~ N(μ_b, σ_b²), noise σ known:
  the slope's posterior given y_j = a + B·t_j + e_j is the scalar conjugate normal
  (precision 1/σ_b² + Σt²/σ², mean (μ_b/σ_b² + Σ t(y − a)/σ²)/precision), T = (D − a)/B, so
  P(T > t) = Φ(((D − a)/t − m)/s) and the remaining-life quantile q solves
  S(age + r) = (1 − q)·S(age) in closed form.
- Pseudo-failure model, the item's own line with the model's noise σ known: median (D − Â)/B̂,
  interval Fieller's inverse prediction (the roots of (Â + B̂t − D)² = z²σ² x(t)ᵀ(XᵀX)⁻¹x(t)).
- A single measurement: the model's Weibull life conditioned on the age (scipy's weibull_min).
Simulations draw the posterior coefficients with a fixed seed and compare within their own error.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from bathtub.degradation.tracking import check_model, remaining_life
from bathtub.errors import InputError

A, MU_B, SD_B, SIGMA, D = 2.0, 0.5, 0.1, 0.3, 20.0


def re_record(**changes: object) -> dict:
    params = [{"name": "mu_a", "value": A}, {"name": "mu_b", "value": MU_B}, {"name": "sd_b", "value": SD_B},
              {"name": "sigma", "value": SIGMA}]
    return {"model": "random_effects", "path": "linear", "threshold": D, "direction": "up",
            "random_effects": {"params": params}, **changes}


def item_readings(slope: float = 0.6, n: int = 8, seed: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    t = np.arange(1.0, n + 1.0)
    return t, A + slope * t + rng.normal(0.0, SIGMA, n)


def closed_form_re(t: np.ndarray, y: np.ndarray, q: float) -> float:
    prec = 1 / SD_B**2 + np.sum(t * t) / SIGMA**2
    m = (MU_B / SD_B**2 + np.sum(t * (y - A)) / SIGMA**2) / prec
    s = 1 / math.sqrt(prec)
    age = t[-1]
    s_age = stats.norm.cdf(((D - A) / age - m) / s)
    slope = m + s * stats.norm.ppf((1 - q) * s_age)
    return (D - A) / slope - age


def test_random_effects_item_matches_the_conjugate_closed_form() -> None:
    t, y = item_readings()
    out = remaining_life(re_record(), t, y, 0.9)
    assert out["status"] == "predicted" and out["basis"] == "random_effects" and out["as_of"] == t[-1]
    assert out["median"] == pytest.approx(closed_form_re(t, y, 0.5), rel=1e-7)
    assert out["interval"][0] == pytest.approx(closed_form_re(t, y, 0.05), rel=1e-7)
    assert out["interval"][1] == pytest.approx(closed_form_re(t, y, 0.95), rel=1e-7)
    assert "random-effects posterior" in out["method"]


def test_random_effects_item_matches_a_simulation() -> None:
    t, y = item_readings(slope=0.4, n=4, seed=9)
    prec = 1 / SD_B**2 + np.sum(t * t) / SIGMA**2
    m = (MU_B / SD_B**2 + np.sum(t * (y - A)) / SIGMA**2) / prec
    rng = np.random.default_rng(11)
    b = rng.normal(m, 1 / math.sqrt(prec), 400_000)
    life = np.where(b > 0, (D - A) / np.where(b > 0, b, 1.0), np.inf)
    rem = life[life > t[-1]] - t[-1]
    out = remaining_life(re_record(), t, y, 0.8)
    for q, got in ((0.1, out["interval"][0]), (0.5, out["median"]), (0.9, out["interval"][1])):
        sim = np.quantile(rem, q)
        # the sample quantile's standard error: sqrt(q(1-q)/n) / density there (density by a difference)
        dens = (np.mean(rem <= sim * 1.01) - np.mean(rem <= sim * 0.99)) / (0.02 * sim)
        se = math.sqrt(q * (1 - q) / rem.size) / dens
        assert abs(got - sim) < 4 * se + 1e-9, (q, got, sim, se)


def pf_record(path: str = "linear", sigma: float = SIGMA) -> dict:
    return {"model": "pseudo_failure", "path": path, "threshold": D, "direction": "up",
            "units": [{"id": "u1", "residual_sd": sigma, "readings": 52}, {"id": "u2", "residual_sd": sigma,
                                                                           "readings": 52}],
            "life": {"distribution": "weibull", "params": [{"name": "alpha", "value": 40.0},
                                                            {"name": "beta", "value": 2.5}]}}


def fieller(t: np.ndarray, y: np.ndarray, z: float) -> tuple[float, float, float]:
    X = np.column_stack([np.ones(t.size), t])
    (a, b), inv = np.linalg.lstsq(X, y, rcond=None)[0], np.linalg.inv(X.T @ X)
    # (a + b·x − D)² − z²σ²(v00 + 2 v01 x + v11 x²) = 0
    c2 = b * b - z * z * SIGMA**2 * inv[1, 1]
    c1 = 2 * b * (a - D) - 2 * z * z * SIGMA**2 * inv[0, 1]
    c0 = (a - D) ** 2 - z * z * SIGMA**2 * inv[0, 0]
    lo, hi = sorted(np.roots([c2, c1, c0]).real)
    return (D - a) / b, lo, hi


def test_own_line_is_the_line_crossing_with_fieller_interval() -> None:
    t, y = item_readings(slope=0.6, n=10, seed=2)
    out = remaining_life(pf_record(), t, y, 0.9)
    assert out["basis"] == "own_line" and "Fieller" in out["method"]
    mid, lo, hi = fieller(t, y, float(stats.norm.ppf(0.95)))
    age = t[-1]
    assert out["median"] == pytest.approx(mid - age, rel=1e-7)
    assert out["interval"][0] == pytest.approx(lo - age, rel=1e-6)
    assert out["interval"][1] == pytest.approx(hi - age, rel=1e-6)


def test_own_line_conditioned_on_survival_matches_a_simulation() -> None:
    # two noisy readings close to the threshold: conditioning on survival to the age matters here
    t, y = np.array([1.0, 2.0]), np.array([9.0, 17.5])
    out = remaining_life(pf_record(sigma=1.5), t, y, 0.8)
    X = np.column_stack([np.ones(2), t])
    coef = np.linalg.solve(X, y)
    cov = 1.5**2 * np.linalg.inv(X.T @ X)
    rng = np.random.default_rng(5)
    ab = rng.multivariate_normal(coef, cov, 400_000)
    a, b = ab[:, 0], ab[:, 1]
    life = np.where(a >= D, 0.0, np.where(b > 0, (D - a) / np.where(b > 0, b, 1.0), np.inf))
    rem = life[life > t[-1]] - t[-1]
    for q, got in ((0.1, out["interval"][0]), (0.5, out["median"]), (0.9, out["interval"][1])):
        sim = np.quantile(rem, q)
        dens = (np.mean(rem <= sim * 1.02) - np.mean(rem <= sim * 0.98)) / (0.04 * sim)
        se = math.sqrt(q * (1 - q) / rem.size) / dens
        assert abs(got - sim) < 4 * se + 1e-9, (q, got, sim, se)


def test_one_measurement_falls_back_to_the_population_life() -> None:
    out = remaining_life(pf_record(), [12.0], [7.0], 0.9)
    assert out["basis"] == "population"
    w = stats.weibull_min(2.5, scale=40.0)
    s_age = w.sf(12.0)
    for q, got in ((0.05, out["interval"][0]), (0.5, out["median"]), (0.95, out["interval"][1])):
        assert got == pytest.approx(w.isf(s_age * (1 - q)) - 12.0, rel=1e-9)


def test_past_the_threshold_and_no_measurements() -> None:
    t = np.arange(1.0, 11.0)
    out = remaining_life(pf_record(), t, A + 3.0 * t, 0.9)  # reached 20 at t = 6
    assert out["status"] == "past_threshold" and out["median"] == 0.0 and out["last_value_past_threshold"]
    empty = remaining_life(pf_record(), [], [], 0.9)
    assert empty["status"] == "no_measurements" and empty["median"] is None


def test_down_direction_mirrors_up() -> None:
    t, y = item_readings()
    up = remaining_life(re_record(), t, y)
    mirrored = re_record(threshold=-D, direction="down",
                         random_effects={"params": [{"name": "mu_a", "value": -A}, {"name": "mu_b", "value": -MU_B},
                                                    {"name": "sd_b", "value": SD_B},
                                                    {"name": "sigma", "value": SIGMA}]})
    down = remaining_life(mirrored, t, -y)
    assert down["median"] == pytest.approx(up["median"], rel=1e-9)
    assert down["interval"] == pytest.approx(up["interval"], rel=1e-9)


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e6])
def test_time_scale_transforms_exactly(scale: float) -> None:
    # measuring time in another unit (t·k) scales the slope prior by 1/k and the remaining life by k
    t, y = item_readings()
    base = remaining_life(re_record(), t, y)
    params = [{"name": "mu_a", "value": A}, {"name": "mu_b", "value": MU_B / scale},
              {"name": "sd_b", "value": SD_B / scale}, {"name": "sigma", "value": SIGMA}]
    out = remaining_life(re_record(random_effects={"params": params}), t * scale, y)
    assert out["median"] == pytest.approx(base["median"] * scale, rel=1e-7)
    assert out["interval"] == pytest.approx([v * scale for v in base["interval"]], rel=1e-7)


def test_power_path_pseudo_failure_is_refused() -> None:
    with pytest.raises(InputError, match="model_id"):
        check_model(pf_record(path="power"))


def test_batch_equals_one_by_one_and_the_mean_matches_the_scalar_integral() -> None:
    # the batch solver (Illinois on all items at once) against joint.summarise's per-item root finding
    # and its Gauss–Legendre mean, for the own-line items whose slope never takes the wrong sign
    from bathtub.degradation.crossing import LineCrossing, Residual
    from bathtub.degradation.joint import summarise
    from bathtub.degradation.paths import Path
    from bathtub.degradation.tracking import own_line, remaining_lives

    series = [item_readings(slope=s, n=n, seed=k) for k, (s, n) in enumerate([(0.6, 10), (0.9, 6), (0.3, 3)])]
    batch = remaining_lives(pf_record(), series, 0.9)
    for (t, y), got in zip(series, batch):
        coef, cov = own_line(Path.parse("linear"), t, y, SIGMA)
        sa, sb = math.sqrt(cov[0, 0]), math.sqrt(cov[1, 1])
        line = LineCrossing(coef[0], coef[1], sa, sb, cov[0, 1] / (sa * sb), D, 1)
        ref = summarise(Residual(line, float(t[-1])), 0.9)
        for a, b in zip([got["median"], *got["interval"]], [ref["median"], *ref["interval"]]):
            assert (a is None and b is None) or a == pytest.approx(b, rel=1e-9), (a, b)
        if ref["mean"] is not None:
            assert got["mean"] == pytest.approx(ref["mean"], rel=1e-8)
    assert any(b["mean"] is not None for b in batch)


@pytest.mark.parametrize("k", [1e-3, 1e6])
def test_value_scale_leaves_remaining_life_unchanged(k: float) -> None:
    # values, threshold and every value-axis parameter × k: the same physical model, the same lives
    t, y = item_readings()
    base = remaining_life(re_record(), t, y)
    params = [{"name": "mu_a", "value": A * k}, {"name": "mu_b", "value": MU_B * k},
              {"name": "sd_b", "value": SD_B * k}, {"name": "sigma", "value": SIGMA * k}]
    out = remaining_life(re_record(threshold=D * k, random_effects={"params": params}), t, y * k)
    assert out["median"] == pytest.approx(base["median"], rel=1e-7)
    assert out["interval"] == pytest.approx(base["interval"], rel=1e-7)
    own = remaining_life(pf_record(), t, y)
    rec = {**pf_record(sigma=SIGMA * k), "threshold": D * k}
    scaled = remaining_life(rec, t, y * k)
    assert scaled["median"] == pytest.approx(own["median"], rel=1e-7)
    assert scaled["interval"] == pytest.approx(own["interval"], rel=1e-7)
