"""Evaluating a stored model record: reliability at a time, whole curves, params-only models.

A record is what `LifeFit.to_record()` or `model_from_params` returns: `distribution`,
`base_distribution` (mixtures), `options` {offset, zi, lfp} and `params` [{name, value}].
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from bathtub.distributions import Lifetime, parse_params
from bathtub.errors import InputError
from bathtub.life.metrics import discrete_metrics, flag_negative, life_warnings
from bathtub.life.model import DISCRETE_WEIBULL, LOCATION_FAMILIES, ModelSpec, base_names
from bathtub.life.wrappers import LimitedPopulation
from bathtub.validate import check_integer, check_number, is_number


def _spec_of(record: Mapping[str, Any]) -> tuple[ModelSpec, np.ndarray]:
    opts = dict(record.get("options") or {})
    values = {p["name"]: float(p["value"]) for p in record.get("params", [])}
    if record.get("distribution") == "mixture":
        base = record.get("base_distribution") or "weibull"
        modes = sum(1 for k in values if k.startswith("weight"))
        spec = ModelSpec(base, modes=modes)
    else:
        spec = ModelSpec(str(record.get("distribution")), offset=bool(opts.get("offset")),
                         zi=bool(opts.get("zi")), lfp=bool(opts.get("lfp")))
    missing = [n for n in spec.names if n not in values]
    if missing:
        raise InputError("params", f"missing {', '.join(missing)}")
    return spec, np.array([values[n] for n in spec.names])


def model_dist(record: Mapping[str, Any]) -> Lifetime:
    """The evaluable distribution of a record."""
    spec, theta = _spec_of(record)
    return spec.build(theta)


def _json(a: np.ndarray) -> list[float | None]:
    return [float(v) if math.isfinite(v) else None for v in np.asarray(a, dtype=float)]


def reliability_at(record: Mapping[str, Any], t: float) -> dict[str, float | None]:
    """{t, reliability, failure, hazard, cumulative_hazard, density} at time t (record's unit).

    For a zero-inflated model `density` is that of the continuous part (the mass f0 at 0 has
    no density); for the discrete Weibull it is the probability mass at cycle t.
    """
    t = check_number(t, "t", 0.0)
    d = model_dist(record)
    x = np.array([float(t)])
    with np.errstate(all="ignore"):
        vals = {
            "reliability": d.sf(x), "failure": d.cdf(x), "hazard": d.hazard(x),
            "cumulative_hazard": d.cumulative_hazard(x), "density": d.pdf(x),
        }
    return {"t": float(t), **{k: _json(v)[0] for k, v in vals.items()}}


def reliability_curves(record: Mapping[str, Any], points: int = 200) -> dict[str, list[float | None]]:
    """Curves {x, sf, ff, hf, Hf, df} from 0 to the 99.9th percentile (or the data's range)."""
    points = check_integer(points, "points", 2, 10_000)
    d = model_dist(record)
    hi = d.quantile(0.999)
    if not math.isfinite(hi) or hi <= 0:
        # a limited failure population never reaches 99.9%: span its susceptible units' life
        hi = d.base.quantile(0.999) if isinstance(d, LimitedPopulation) else 1.0
    lo = min(0.0, d.quantile(0.001))
    x = np.linspace(lo, hi, points)
    with np.errstate(all="ignore"):
        return {
            "x": _json(x), "sf": _json(d.sf(x)), "ff": _json(d.cdf(x)), "hf": _json(d.hazard(x)),
            "Hf": _json(d.cumulative_hazard(x)), "df": _json(d.pdf(x)),
        }


def model_from_params(
    distribution: str,
    params: Any,
    extras: Mapping[str, Any] | None = None,
    base_distribution_id: str | None = None,
) -> dict[str, Any]:
    """A params-only model record (spec's model import): validated params, extras gamma/p/f0.

    gamma is a location (weibull, exponential, lognormal, loglogistic, gamma), p the susceptible
    share of a limited failure population (0 < p <= 1), f0 a zero-inflation mass (0 <= f0 < 1).
    Returns a record that `reliability_at`/`reliability_curves` accept, with life metrics
    (no bounds: there are no data; a B-life below t = 0 carries `warning`, listed in `warnings`)
    and, for the discrete Weibull, `metrics` {median, mttf, b10}.
    """
    ex = dict(extras or {})
    for k, v in ex.items():
        if k not in ("gamma", "p", "f0"):
            raise InputError(f"extras.{k}", "unknown extra; known: gamma, p, f0")
        check_number(v, f"extras.{k}")
    if distribution == DISCRETE_WEIBULL:
        values = _discrete_params(params)
    else:
        values = parse_params(distribution, params, base_distribution_id=base_distribution_id)
    if "gamma" in values:  # accept the location among params too
        ex.setdefault("gamma", values.pop("gamma"))
    if "gamma" in ex:
        if distribution not in LOCATION_FAMILIES:
            raise InputError("extras.gamma", f"a location applies to {', '.join(LOCATION_FAMILIES)} only")
        if ex["gamma"] < 0:
            raise InputError("extras.gamma", "must be >= 0")
    if "p" in ex and not 0 < ex["p"] <= 1:
        raise InputError("extras.p", "must be in (0, 1]")
    if "f0" in ex and not 0 <= ex["f0"] < 1:
        raise InputError("extras.f0", "must be in [0, 1)")
    if "p" in ex and "f0" in ex:
        raise InputError("extras", "give p or f0, not both")
    if distribution == "mixture" and ex:
        raise InputError("extras", "a mixture takes no extras")
    options = {"offset": "gamma" in ex, "zi": ex.get("f0", 0) > 0, "lfp": "p" in ex and ex["p"] < 1}
    if options["offset"]:
        values["gamma"] = float(ex["gamma"])
    if options["zi"]:
        values["f0"] = float(ex["f0"])
    if options["lfp"]:
        values["p"] = float(ex["p"])
    record: dict[str, Any] = {
        "distribution": distribution,
        "base_distribution": base_distribution_id if distribution == "mixture" else None,
        "kind": "distribution",
        "n": 0,
        "params": [{"name": k, "value": float(v), "se": None} for k, v in values.items()],
        "coefficients": [],
        "metrics": None,
        "gof": [],
        "options": options,
        "params_only": True,
    }
    d = model_dist(record)
    life = []
    for p in (1, 5, 10, 20, 50):
        v = d.quantile(p / 100.0)
        life.append({"id": f"b{p}", "label": f"B{p} life (time by which {p}% fail)",
                     "value": float(v) if math.isfinite(v) else None, "lower": None, "confidence": 0.9})
    m = d.mean()
    life.append({"id": "mttf", "label": "MTTF (mean time to failure)",
                 "value": float(m) if math.isfinite(m) else None, "lower": None, "confidence": 0.9})
    name = f"mixture of {base_distribution_id}" if distribution == "mixture" else distribution
    flag_negative(name, d, life)
    record["life"] = life
    record["warnings"] = life_warnings(life)
    if distribution == DISCRETE_WEIBULL:
        record["metrics"] = discrete_metrics(d)
    return record


def _discrete_params(params: Any) -> dict[str, float]:
    if isinstance(params, Mapping):
        items = dict(params)
    else:
        try:
            items = {p["name"]: p["value"] for p in params}
        except (TypeError, KeyError):
            raise InputError("params", "must be an array of {name, value}") from None
    names = base_names(DISCRETE_WEIBULL)
    for k in items:
        if k not in names:
            raise InputError(f"params.{k}", "not a parameter of discrete_weibull; expected q, beta")
    for k in names:
        v = items.get(k)
        if not is_number(v) or not math.isfinite(v):
            raise InputError(f"params.{k}", "required, a finite number")
    if not 0 < items["q"] < 1:
        raise InputError("params.q", "must be in (0, 1)")
    if items["beta"] <= 0:
        raise InputError("params.beta", "must be > 0")
    return {k: float(items[k]) for k in names}
