"""Parameter sets drawn from a fit's sampling distribution: what a two-level Monte Carlo
(diagram blocks, fleets, strategy optima) draws in its outer loop so that its intervals carry
how little was observed, not only the simulation's noise.

- A parametric life distribution: multivariate normal on the fit's own unconstrained scale
  (log of a positive parameter, logit of a probability, additive log-ratios of mixture weights,
  the value itself for a real-line location), with the fit's covariance carried there by the
  Jacobian (the delta method the fit's own Fisher bounds use), then mapped back. A draw never
  leaves the parameter's domain, and the Fisher intervals the record prints are the 95% ends of
  the same normal on the same scale.
- An exponential fitted from complete data (r failures, no censoring, no offset): the exact
  distribution λ ~ Gamma(r, rate T) with T = r/λ̂ the total time, i.e. χ²(2r)/(2T): its 5% and
  95% points are the classical chi-squared confidence limits of a failure-terminated test, so
  the draws reproduce the textbook bounds rather than the normal approximation to them.

Draw i is made from its own stream `SeedSequence(seed, spawn_key=(i,))` (the i-th child of
`SeedSequence(seed).spawn`), so a draw depends only on (seed, i): the same draws however a run
is split into parts, over threads or machines.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from bathtub.distributions import FAMILIES, MIXTURE
from bathtub.errors import InputError
from bathtub.life.model import LOC, POS, REAL, UNIT, WEIGHT, ModelSpec
from bathtub.models.record import in_shape
from bathtub.regression import cox_sampling
from bathtub.regression import kinds as regression_kinds
from bathtub.regression.parametric import FAMILIES as REGRESSION_FAMILIES
from bathtub.validate import check_integer

MAX_DRAWS = 100_000


def stream(seed: int, i: int) -> np.random.Generator:
    """Draw i's own generator: the i-th child of `SeedSequence(seed)`."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(i,))))


def _spec(record: Mapping[str, Any], field: str) -> ModelSpec:
    dist = record.get("distribution")
    opts = record.get("options") or {}
    if dist == MIXTURE:
        names = [p["name"] for p in record["params"]]
        modes = sum(1 for n in names if n.startswith("weight"))
        return ModelSpec(str(record.get("base_distribution")), modes=modes)
    if dist not in FAMILIES:
        raise InputError(field, f"a {dist!r} model has no parametric sampling distribution to draw from")
    return ModelSpec(str(dist), offset=bool(opts.get("offset")), zi=bool(opts.get("zi")), lfp=bool(opts.get("lfp")))


def _to_u(kinds: tuple[str, ...], theta: np.ndarray) -> np.ndarray:
    """The unconstrained coordinates (mixture weights as log-ratios to the first weight). A
    location offset is drawn on its log (kept >= 0): the fit's own upper end for it, the first
    failure time, is not in the record."""
    u, w = [], []
    for k, x in zip(kinds, theta, strict=True):
        if k == WEIGHT:
            w.append(x)
        elif k in (POS, LOC):
            u.append(math.log(max(x, 1e-300)))
        elif k == UNIT:
            x = min(max(x, 1e-15), 1.0 - 1e-15)
            u.append(math.log(x / (1.0 - x)))
        else:
            u.append(x)
    u += [math.log(max(wi, 1e-300) / max(w[0], 1e-300)) for wi in w[1:]]
    return np.array(u)


def _from_u(kinds: tuple[str, ...], u: np.ndarray) -> np.ndarray:
    theta = np.empty(len(kinds))
    j = 0
    widx = []
    for i, k in enumerate(kinds):
        if k == WEIGHT:
            widx.append(i)
            continue
        x = float(u[j])
        if k in (POS, LOC):
            theta[i] = math.exp(min(max(x, -700.0), 700.0))
        elif k == UNIT:
            theta[i] = 1.0 / (1.0 + math.exp(-min(max(x, -700.0), 700.0)))
        else:
            theta[i] = x
        j += 1
    if widx:
        logits = np.concatenate([[0.0], u[j:]])
        e = np.exp(logits - logits.max())
        theta[widx] = e / e.sum()
    return theta


def _jacobian(kinds: tuple[str, ...], u: np.ndarray) -> np.ndarray:
    """d theta / d u by central differences, with a step relative to each coordinate."""
    cols = []
    for j in range(len(u)):
        h = 1e-6 * max(1.0, abs(float(u[j])))
        e = np.zeros(len(u))
        e[j] = h
        cols.append((_from_u(kinds, u + e) - _from_u(kinds, u - e)) / (2 * h))
    return np.array(cols).T


def _complete_exponential(record: Mapping[str, Any], spec: ModelSpec, theta: np.ndarray) -> bool:
    """An exponential MLE from exact failure times only: every unit failed (n = n_failures), and
    the information is r / lambda^2, which interval-censored data (also all "failures") do not
    give. Only there is lambda-hat = r / T, with T the total time, and the chi-squared law exact."""
    n, r = record.get("n"), record.get("n_failures")
    cov = record.get("covariance") or {}
    if (spec.distribution != "exponential" or spec.names != ("failure_rate",) or record.get("method") != "mle"
            or not isinstance(r, int) or r <= 0 or n != r or cov.get("matrix") is None):
        return False
    var = float(np.asarray(cov["matrix"], dtype=float)[0, 0])
    return math.isclose(var, float(theta[0]) ** 2 / r, rel_tol=1e-4)


def sampling_form(record: Mapping[str, Any], field: str = "id") -> dict[str, Any]:
    """How `record`'s parameters are drawn: {"law": "gamma", "shape", "scale"} for a complete-data
    exponential, else {"law": "normal", "names", "kinds", "mean", "cov"} on the unconstrained scale.
    Refuses (InputError on `field`) a record with no parametric sampling distribution."""
    record = in_shape(record)  # rows and covariance as every release since the one shape writes them
    kind = record.get("kind") or "distribution"
    if kind == "regression":
        return _regression_form(record, field)
    if kind == "recurrent":
        return _recurrent_form(record, field)
    if kind != "distribution":
        raise InputError(field, f"a {kind} model's parameters cannot be drawn: its record holds no joint sampling "
                                "distribution (a parametric life distribution's, cox's, a parametric regression's "
                                "and a power law's do)")
    spec = _spec(record, field)
    values = {p["name"]: p["value"] for p in record.get("params") or []}
    if any(n not in values for n in spec.names):
        raise InputError(field, f"the record lacks the parameters {', '.join(spec.names)}")
    theta = np.array([float(values[n]) for n in spec.names])
    cov = record.get("covariance")
    if _complete_exponential(record, spec, theta):
        r = int(record["n_failures"])
        return {"law": "gamma", "names": spec.names, "shape": float(r), "scale": float(theta[0]) / r}
    if not isinstance(cov, Mapping) or cov.get("matrix") is None:
        raise InputError(field, "the fit has no covariance (its information matrix was singular): its parameters "
                                "cannot be drawn")
    order = [list(cov["names"]).index(nm) for nm in spec.names]
    c = np.asarray(cov["matrix"], dtype=float)[np.ix_(order, order)]
    u = _to_u(spec.kinds, theta)
    jinv = np.linalg.pinv(_jacobian(spec.kinds, u))
    cov_u = jinv @ c @ jinv.T
    cov_u = (cov_u + cov_u.T) / 2
    if not np.all(np.isfinite(cov_u)):
        raise InputError(field, "the fit's covariance is not finite: its parameters cannot be drawn")
    return {"law": "normal", "names": spec.names, "kinds": spec.kinds, "mean": u, "cov": cov_u}


GAMMA = "gamma:"  # a drawn coefficient's name: design names may be any string, "mu" too


def _cox_form(record: Mapping[str, Any], field: str) -> dict[str, Any]:
    """A Cox model's law: β normal with its covariance, the baseline given β (`cox_sampling`)."""
    cov = record.get("covariance")
    if not isinstance(cov, Mapping) or cov.get("matrix") is None or record.get("breslow_terms") is None:
        raise InputError(field, "this cox model was saved before its fit stored the coefficients' covariance and "
                                "the Breslow terms: refit it and save the new fit to draw its parameters")
    c = np.asarray(cov["matrix"], dtype=float)
    beta = np.array([float(x["value"]) for x in record["coefficients"]])
    if c.shape != (beta.size, beta.size) or not np.all(np.isfinite(c)):
        raise InputError(field, "the record's covariance does not match its coefficients: refit the model")
    return {"law": "cox", "names": tuple(GAMMA + str(n) for n in cov["names"]), "mean": beta, "cov": (c + c.T) / 2,
            "record": record}


def _regression_form(record: Mapping[str, Any], field: str) -> dict[str, Any]:
    """The normal law of a parametric regression's (μ, log σ, γ), from the covariance it stores."""
    dist = record.get("distribution")
    if dist == "cox":
        return _cox_form(record, field)
    if dist not in REGRESSION_FAMILIES:
        raise InputError(field, f"a {dist} regression's parameters cannot be drawn: only cox and the parametric "
                                f"regressions ({', '.join(REGRESSION_FAMILIES)}) store a joint sampling distribution")
    cov = record.get("covariance")
    if not isinstance(cov, Mapping) or cov.get("matrix") is None:
        raise InputError(field, f"this {dist} model was saved before its fit stored the joint covariance of "
                                "(mu, log sigma, gamma): refit it and save the new fit to draw its parameters")
    gamma = [float(g) for g in record["gamma"]]
    names = ("mu", "sigma", *[GAMMA + str(n) for n in cov["names"][2:]])
    c = np.asarray(cov["matrix"], dtype=float)
    if c.shape != (len(names), len(names)) or len(gamma) != len(names) - 2 or not np.all(np.isfinite(c)):
        raise InputError(field, "the record's covariance does not match its coefficients: refit the model")
    mean = np.array([float(record["mu"]), math.log(float(record["sigma"])), *gamma])
    return {"law": "normal", "names": names, "kinds": (REAL, POS, *[REAL] * len(gamma)), "mean": mean,
            "cov": (c + c.T) / 2}


def _with_regression_values(record: Mapping[str, Any], values: Mapping[str, float]) -> dict[str, Any]:
    mu, sigma = float(values["mu"]), float(values["sigma"])
    gamma = [float(values[GAMMA + str(n)]) for n in record["covariance"]["names"][2:]]
    ph = regression_kinds.KINDS[record["distribution"]].clock == "hazard"  # PH: b = −γ/σ; AFT: γ itself
    out = dict(record)
    out.update(mu=mu, sigma=sigma, gamma=gamma)
    if REGRESSION_FAMILIES[record["distribution"]] == "normal":
        pts = {"mu": mu, "sigma": sigma}
    else:
        pts = {"alpha": math.exp(mu), "beta": 1.0 / sigma}
    out["params"] = [{**p, "value": pts.get(p["name"], p["value"]), "se": None, "ci": None}
                     for p in record["params"]]
    coef = [-g / sigma for g in gamma] if ph else gamma
    out["coefficients"] = [{**c, "value": b, "exp_coef": math.exp(min(b, 700.0)), "se": None, "ci": None,
                            "exp_ci": None} for c, b in zip(record["coefficients"], coef, strict=True)]
    return out


POWER_LAWS = ("crow_amsaa", "power_law")


def _recurrent_form(record: Mapping[str, Any], field: str) -> dict[str, Any]:
    """The law of a power-law NHPP's (beta, lambda): exact where the record holds Crow's pivot."""
    dist = record.get("distribution")
    if dist not in POWER_LAWS:
        raise InputError(field, f"a {dist} recurrent model's parameters cannot be drawn: only the power law "
                                f"({', '.join(POWER_LAWS)}) stores a joint sampling distribution")
    if record.get("covariate_effects"):
        raise InputError(field, "a power law with covariates is not one block's life: its parameters are not drawn")
    samp = record.get("sampling")
    if isinstance(samp, Mapping) and samp.get("law") == "crow_exact":
        return {"law": "crow_exact", "names": ("beta", "lambda"), "shape": float(samp["informative_events"]),
                "sum_log": float(samp["sum_log"]), "events": float(samp["events"]), "end": float(samp["end"]),
                "systems": float(samp["systems"])}
    cov = record.get("covariance")
    if not isinstance(cov, Mapping) or "matrix" not in cov:
        raise InputError(field, f"this {dist} model was saved before its fit stored the joint covariance of "
                                "(beta, lambda): refit it and save the new fit to draw its parameters")
    if cov["matrix"] is None:
        raise InputError(field, "the fit has no covariance (its information matrix was singular): its parameters "
                                "cannot be drawn")
    values = {p["name"]: float(p["value"]) for p in record["params"]}
    theta = np.array([values["beta"], values["lambda"]])
    c = np.asarray(cov["matrix"], dtype=float)
    jinv = np.diag(1.0 / theta)  # d log theta / d theta
    return {"law": "normal", "names": ("beta", "lambda"), "kinds": (POS, POS), "mean": np.log(theta),
            "cov": jinv @ c @ jinv}


def draw_values(form: Mapping[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    """One parameter set {name: value} from a `sampling_form`, using `rng` (a Cox set also holds
    `baseline`: each stratum's drawn cumulative hazard)."""
    if form["law"] == "gamma":
        return {form["names"][0]: float(rng.gamma(form["shape"], form["scale"]))}
    if form["law"] == "cox":
        b = rng.multivariate_normal(form["mean"], form["cov"], method="eigh") if form["mean"].size else form["mean"]
        return {**dict(zip(form["names"], map(float, b), strict=True)),
                "baseline": cox_sampling.draw_baseline(form["record"], b - form["mean"], rng)}
    if form["law"] == "crow_exact":
        beta = float(rng.gamma(form["shape"], 1.0 / form["sum_log"]))
        lam = float(rng.gamma(form["events"], 1.0)) / (form["systems"] * form["end"] ** beta)
        return {"beta": beta, "lambda": lam}
    u = rng.multivariate_normal(form["mean"], form["cov"], method="eigh")
    return dict(zip(form["names"], map(float, _from_u(form["kinds"], u)), strict=True))


def coordinates(form: Mapping[str, Any], values: Mapping[str, float]) -> np.ndarray:
    """A drawn set on the scale it was drawn on (logs for the gamma and Crow laws, else the
    unconstrained coordinates): what a regression of an outcome on the draws reads."""
    theta = np.array([float(values[n]) for n in form["names"]])
    if form["law"] == "cox":
        return theta
    if form["law"] in ("gamma", "crow_exact"):
        return np.log(theta)
    return _to_u(form["kinds"], theta)


def with_values(record: Mapping[str, Any], values: Mapping[str, float]) -> dict[str, Any]:
    """`record` with its parameter values replaced (se and ci cleared: a drawn set is a point)."""
    record = in_shape(record)
    if record.get("kind") == "regression" and record.get("distribution") == "cox":
        beta = [float(values[GAMMA + str(n)]) for n in record["covariance"]["names"]]
        return cox_sampling.with_draw(record, beta, values["baseline"])
    if record.get("kind") == "regression":
        return _with_regression_values(record, values)
    out = dict(record)
    out["params"] = [{"name": p["name"], "value": values.get(p["name"], p["value"]), "se": None, "ci": None}
                     for p in record["params"]]
    return out


def parameter_draws(record: Mapping[str, Any], n: int, seed: int, *, first: int = 0,
                    field: str = "id") -> list[dict[str, Any]]:
    """Draws `first` .. `first + n - 1` of `record`'s parameters as records (params {name, value,
    se: null, ci: null}); draw i from stream(seed, i) only."""
    check_integer(n, "n", 1, MAX_DRAWS)
    check_integer(first, "first", 0)
    form = sampling_form(record, field)
    return [with_values(record, draw_values(form, stream(seed, i))) for i in range(first, first + n)]
