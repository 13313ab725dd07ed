"""Life metrics of a fitted model: B-lives and MTTF with one-sided 90% lower bounds.

- Fisher bounds: the delta method in the optimiser's unconstrained coordinates (logs, logits,
  times over the data's scale), where the covariance is what the information gave and each
  step is a fraction of that coordinate's standard error, so a bound transforms exactly with
  the time unit. On the log scale for positive metrics, linear for families on the real line.
- Likelihood bounds: the smallest value of the metric over the one-sided 90% region
  {theta: 2 (ll_max - ll) <= chi2_1(0.80)}.
- Discrete Weibull: a B-life is a whole cycle, the smallest k with F(k) >= p, i.e. ceil(t_p) of
  the real root t_p = (ln(1 - p) / ln q)^(1/beta) of q^(t^beta) = 1 - p. t_p is smooth in the
  parameters, so it carries the bound, and ceil(lower) is the bound on the cycle (ceil is
  monotone, so the coverage is kept). `metrics` {median, mttf, b10} is filled for it.
- Negative figures: a family on the whole real line (normal, Gumbel, logistic) may put mass
  below t = 0, and a B-life or its bound may then be negative. The value stays (it is the
  model's quantile) and the item carries `warning`; the record's `warnings` lists them all.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats

from bathtub import inference
from bathtub.distributions import Lifetime
from bathtub.life.data import LifeData
from bathtub.life.likelihood import spec_loglik
from bathtub.life.model import DISCRETE_WEIBULL, ModelSpec

Z90 = float(stats.norm.ppf(0.90))
CHI80 = float(stats.chi2.ppf(0.80, 1))  # two-sided 80% = one-sided 90% bound
B_LIVES = (1, 5, 10, 20, 50)
# Beyond this share of mass below t = 0 the MTTF (the model's mean) is flagged too; the
# strategy calculators refuse such a model outright at the same share.
MASS_BELOW_ZERO = 1e-3

Metric = Callable[[Lifetime], float]


def whole_cycle(t: float) -> float:
    """The discrete Weibull's cycle for a real quantile: ceil(t), at least 1 (cycles start at 1)."""
    return float(max(math.ceil(t - 1e-12), 1)) if t > 0 else 0.0


def life_items(
    spec: ModelSpec, theta: np.ndarray, cov_u: np.ndarray | None, llmax: float, data: LifeData,
    scale: float, tmin: float, bounds: str,
) -> list[dict[str, Any]]:
    """B1, B5, B10, B20, B50 and MTTF items {id, label, value, lower, confidence[, warning]}."""
    dist = spec.build(theta)
    discrete = spec.distribution == DISCRETE_WEIBULL
    items: list[tuple[str, str, Metric, Metric]] = []
    for p in B_LIVES:
        q = p / 100.0
        value_fn: Metric = lambda d, q=q: d.quantile(q)  # noqa: E731
        bound_fn: Metric = (lambda d, q=q: d.quantile_real(q)) if discrete else value_fn
        items.append((f"b{p}", f"B{p} life (time by which {p}% fail)", value_fn, bound_fn))
    items.append(("mttf", "MTTF (mean time to failure)", lambda d: d.mean(), lambda d: d.mean()))
    out = []
    for ident, label, fn, bound_fn in items:
        try:
            value = float(fn(dist))
        except (OverflowError, ValueError, ZeroDivisionError):  # e.g. a mean beyond floating point
            value = math.inf
        lower: float | None = None
        if math.isfinite(value):
            if bounds == "likelihood" and spec.modes == 1 and spec.distribution != "uniform":
                lower = _lr_lower(spec, theta, llmax, data, scale, tmin, bound_fn)
            elif cov_u is not None:
                lower = _delta_lower(spec, theta, cov_u, scale, tmin, bound_fn)
            if lower is not None and discrete and ident != "mttf":
                lower = min(whole_cycle(lower), value)
        out.append({
            "id": ident, "label": label,
            "value": value if math.isfinite(value) else None,
            "lower": lower, "confidence": 0.9,
        })
    flag_negative(spec.id if spec.modes == 1 else f"mixture of {spec.distribution}", dist, out)
    return out


def _delta_lower(
    spec: ModelSpec, theta: np.ndarray, cov_u: np.ndarray, scale: float, tmin: float, fn: Metric,
) -> float | None:
    u0 = spec.to_u(theta, scale, tmin)

    def metric(u: np.ndarray) -> float:
        return float(fn(spec.build(spec.from_u(u, scale, tmin))))

    try:
        value = metric(u0)
        sd_u = np.sqrt(np.maximum(np.diag(cov_u), 0.0))
        g = np.zeros(u0.size)
        for i in range(u0.size):
            h = 1e-4 * sd_u[i]  # a step on the coordinate's own scale (its standard error)
            if h > 0:
                e = np.zeros(u0.size)
                e[i] = h
                g[i] = (metric(u0 + e) - metric(u0 - e)) / (2 * h)
    except (OverflowError, ValueError, ZeroDivisionError, RuntimeError):
        return None
    var = float(g @ cov_u @ g)
    if not math.isfinite(var) or not math.isfinite(value):
        return None
    sd = math.sqrt(var) if var > 0 else 0.0
    if spec.real_line or value <= 0:
        return value - Z90 * sd
    return value * math.exp(-Z90 * sd / value)


def _lr_lower(
    spec: ModelSpec, theta: np.ndarray, llmax: float, data: LifeData, scale: float, tmin: float, fn: Metric,
) -> float | None:
    """Smallest value of a life metric over {theta: 2 (llmax - ll) <= chi2_1(0.80)}."""
    u0 = spec.to_u(theta, scale, tmin)
    target = llmax - CHI80 / 2.0

    def metric(u: np.ndarray) -> float:
        try:
            v = float(fn(spec.build(spec.from_u(u, scale, tmin))))
        except (OverflowError, ValueError, ZeroDivisionError, RuntimeError):
            return 1e300
        return v if math.isfinite(v) else 1e300

    def cons(u: np.ndarray) -> float:
        ll = spec_loglik(spec, spec.from_u(u, scale, tmin), data)
        return (ll - target) if math.isfinite(ll) else -1e6

    m0 = metric(u0)
    # the smallest metric is the largest of its negative, inside the likelihood-ratio region
    r = inference.maximise(
        lambda u: -(metric(u) / m0 if m0 > 0 else metric(u)), u0, covariance=False,
        stages=(inference.Stage("SLSQP", {"ftol": 1e-12, "maxiter": 100},
                                constraints=({"type": "ineq", "fun": cons},)),),
    )
    # SLSQP may stop on "positive directional derivative" at the optimum itself: judge the point
    if cons(r.estimate) < -1e-6 or metric(r.estimate) > m0:
        return None
    return float(metric(r.estimate))


def flag_negative(name: str, dist: Lifetime, items: list[dict[str, Any]]) -> None:
    """Add `warning` to life items whose value or bound lies below t = 0 (values are kept);
    `name` names the model in the sentence."""
    try:
        below = float(dist.cdf(np.array([0.0]))[0])
    except (ValueError, OverflowError):
        below = 0.0
    mass = f"the {name} model puts {below:.3g} of its failures before t = 0"
    for it in items:
        v, lo = it["value"], it["lower"]
        label = it["id"].upper() if it["id"] != "mttf" else "MTTF"
        if it["id"] == "mttf":
            if below > MASS_BELOW_ZERO and v is not None:
                it["warning"] = f"MTTF is the model's mean, which counts the mass below t = 0 ({mass})"
        elif v is not None and v < 0:
            it["warning"] = f"{label} = {v:.4g} is below t = 0, not a physical time: {mass}"
        elif lo is not None and lo < 0:
            it["warning"] = (f"the 90% lower bound of {label} ({lo:.4g}) is below t = 0: the data do not bound "
                             f"{label} away from 0 ({mass})")


def life_warnings(items: list[dict[str, Any]]) -> list[str]:
    """Every item's warning, for the record's `warnings`."""
    return [it["warning"] for it in items if "warning" in it]


def discrete_metrics(dist: Lifetime) -> dict[str, float | None]:
    """{median, mttf, b10} of a discrete model (cycles; the spec's `metrics`)."""
    vals = {"median": dist.quantile(0.5), "mttf": dist.mean(), "b10": dist.quantile(0.1)}
    return {k: float(v) if math.isfinite(v) else None for k, v in vals.items()}
