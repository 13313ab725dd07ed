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
- Regressions (`_regression_form`: a parametric one's (μ, ln σ, γ); Cox's β and its Breslow
  baseline given β) and recurrent processes (`_recurrent_form`: a power law by Crow's exact pivot
  or its covariance; an HPP's rate by its chi-squared pivot; log-linear, Kijima GRP and a power
  law with covariates by a normal with their covariance). A non-parametric MCF is refused.

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
from bathtub.regression import cox_sampling, flexible
from bathtub.regression import kinds as regression_kinds
from bathtub.regression.parametric import FAMILIES as REGRESSION_FAMILIES
from bathtub.validate import check_integer

MAX_DRAWS = 100_000
CLIPPED = "clipped"  # a coordinate drawn on its own scale and clipped to [0, 1] (a GRP's q)


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
        else:  # REAL, and CLIPPED drawn on its own scale
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
        elif k == CLIPPED:
            theta[i] = min(max(x, 0.0), 1.0)
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
# why a regression kind is not drawn (guide rbd_analysis says the same)
NOT_DRAWN_REGRESSION = {
    "additive_hazards": "an additive model is no unit's life (its cumulative hazard can fall for some covariates), "
                        "so no block, fleet or calculator takes it and an outer loop has nothing to carry",
    "fine_gray": "a subdistribution hazard gives one mode's cumulative incidence beside the others, not a unit's "
                 "life, so no block, fleet or calculator takes it",
    "cox_frailty": "its frailty variance is chosen by the integrated likelihood with a profile interval, so the "
                   "fit holds no joint law of (coefficients, frailty variance, baseline) to draw; fit "
                   "weibull_frailty to draw a shared-frailty model",
    "buckley_james": "a Buckley–James fit has no likelihood and no baseline law to draw (its errors are "
                     "bootstrapped)",
}


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


SPLINE = "spline:"  # a drawn spline coefficient's name (position j of the record's spline gamma)
SPLINE_TRIES = 1000  # normal draws tried per parameter set for one whose spline increases


def _spline_form(record: Mapping[str, Any], field: str) -> dict[str, Any]:
    """A Royston–Parmar model's (spline γ, β): normal with the covariance its fit stores, restricted
    to increasing splines (a log cumulative hazard or odds must rise with log t)."""
    dist = record.get("distribution")
    cov = record.get("covariance")
    if not isinstance(cov, Mapping) or "matrix" not in cov:
        raise InputError(field, f"this {dist} model was saved before its fit stored the joint covariance of "
                                "(spline gamma, beta): refit it and save the new fit to draw its parameters")
    gamma = [float(g) for g in record["spline"]["gamma"]]
    beta = [float(b) for b in record["beta"]]
    k = len(gamma) + len(beta)
    c = np.asarray(cov["matrix"] if cov["matrix"] is not None else np.nan, dtype=float)
    if c.shape != (k, k) or not np.all(np.isfinite(c)):
        raise InputError(field, "the fit has no covariance of its spline and coefficients (its information "
                                "matrix was singular): its parameters cannot be drawn")
    names = (*(f"{SPLINE}{j}" for j in range(len(gamma))), *(GAMMA + str(n) for n in cov["names"][len(gamma):]))
    return {"law": "spline", "names": names, "mean": np.array([*gamma, *beta]), "cov": (c + c.T) / 2,
            "splines": len(gamma), "knots": np.asarray(record["spline"]["knots"]["log_time"], dtype=float)}


def _draw_spline(form: Mapping[str, Any], rng: np.random.Generator) -> np.ndarray:
    """The first normal draw whose spline increases (the normal truncated to valid models, by rejection
    on the draw's own stream, so draw i still depends on (seed, i) only)."""
    m = form["splines"]
    for _ in range(SPLINE_TRIES):
        x = rng.multivariate_normal(form["mean"], form["cov"], method="eigh")
        if flexible.spline_slope_ok(x[:m], form["knots"]):
            return np.asarray(x)
    raise InputError("uncertainty", f"none of {SPLINE_TRIES} draws from the fit's normal law gave an increasing "
                                    "spline: the fit is too uncertain to draw (fewer knots, or more data)")


def _with_spline_values(record: Mapping[str, Any], values: Mapping[str, float]) -> dict[str, Any]:
    m = len(record["spline"]["gamma"])
    beta = [float(values[n]) for n in (GAMMA + str(c) for c in record["covariance"]["names"][m:])]
    out = dict(record)
    out["spline"] = {**record["spline"], "gamma": [float(values[f"{SPLINE}{j}"]) for j in range(m)]}
    out["beta"] = beta
    out["coefficients"] = [{**c, "value": b, "exp_coef": math.exp(min(b, 700.0)), "se": None, "ci": None,
                            "exp_ci": None} for c, b in zip(record["coefficients"], beta, strict=True)]
    return out


def _frailty_form(record: Mapping[str, Any], field: str) -> dict[str, Any]:
    """A Weibull shared-frailty model's (c, log rho, b, log theta): normal with the covariance its fit
    stores on that scale. A drawn record answers, as the fit does, for a unit of a new group (marginal
    over the gamma frailty); at the boundary theta = 0 the fit has no log-theta coordinate and every
    draw keeps theta = 0 (conditioned on no frailty)."""
    cov = record.get("covariance")
    if not isinstance(cov, Mapping) or "matrix" not in cov:
        raise InputError(field, "this weibull_frailty model was saved before its fit stored the joint covariance "
                                "of (c, log rho, b, log theta): refit it and save the new fit to draw its parameters")
    b = [float(v) for v in record["b"]]
    drawn_theta = cov["names"][-1] == "log_theta"
    k = 2 + len(b) + drawn_theta
    c = np.asarray(cov["matrix"] if cov["matrix"] is not None else np.nan, dtype=float)
    if c.shape != (k, k) or not np.all(np.isfinite(c)):
        raise InputError(field, "the fit has no covariance (its information matrix was singular): its parameters "
                                "cannot be drawn")
    kinds = (REAL, POS, *[REAL] * len(b), *[POS] * drawn_theta)
    theta = [float(record["c"]), float(record["rho"]), *b, *[float(record["theta"])] * drawn_theta]
    names = ("c", "rho", *(GAMMA + str(n) for n in cov["names"][2:2 + len(b)]), *["theta"] * drawn_theta)
    return {"law": "normal", "names": names, "kinds": kinds, "mean": _to_u(kinds, np.array(theta)),
            "cov": (c + c.T) / 2}


def _with_frailty_values(record: Mapping[str, Any], values: Mapping[str, float]) -> dict[str, Any]:
    b = [float(values[GAMMA + str(n)]) for n in record["covariance"]["names"][2:2 + len(record["b"])]]
    c, rho, theta = float(values["c"]), float(values["rho"]), float(values.get("theta", record["theta"]))
    out = dict(record)
    out.update(c=c, rho=rho, b=b, theta=theta)
    pts = {"alpha": math.exp(-c / rho), "beta": rho, "theta": theta}
    out["params"] = [{**p, "value": pts.get(p["name"], p["value"]), "se": None, "ci": None} for p in record["params"]]
    out["coefficients"] = [{**row, "value": v, "exp_coef": math.exp(min(v, 700.0)), "se": None, "ci": None,
                            "exp_ci": None} for row, v in zip(record["coefficients"], b, strict=True)]
    return out


def _regression_form(record: Mapping[str, Any], field: str) -> dict[str, Any]:
    """The normal law of a parametric regression's (μ, log σ, γ), from the covariance it stores."""
    dist = record.get("distribution")
    if dist == "cox":
        return _cox_form(record, field)
    if dist in flexible.MODELS:
        return _spline_form(record, field)
    if dist == "weibull_frailty":
        return _frailty_form(record, field)
    if dist not in REGRESSION_FAMILIES:
        why = NOT_DRAWN_REGRESSION.get(str(dist), "it stores no joint sampling distribution")
        drawn = ", ".join(("cox", "weibull_frailty", *flexible.MODELS, *REGRESSION_FAMILIES))
        raise InputError(field, f"a {dist} regression's parameters cannot be drawn: {why} (drawn: {drawn})")
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
GRP = ("kijima1", "kijima2")
# why a recurrent model has no parameters to draw, where the general reason would mislead
NOT_DRAWN = {
    "mcf": "a mean cumulative function is non-parametric: it is never a block's, a fleet's or a strategy "
           "calculator's life (those take a fitted process), so it has nothing an outer loop could carry",
    "mcf_power_law": "a power law fitted by least squares to the MCF stores no sampling distribution: fit "
                     "crow_amsaa (maximum likelihood) to draw a power law",
    "duane": "Duane's plot fit stores no sampling distribution: fit crow_amsaa (maximum likelihood) to draw a "
             "power law",
}


def _natural_cov(record: Mapping[str, Any], names: tuple[str, ...], dist: str, field: str) -> np.ndarray:
    """The record's covariance of `names` (natural scale), refused when missing or singular."""
    cov = record.get("covariance")
    if not isinstance(cov, Mapping) or "matrix" not in cov:
        raise InputError(field, f"this {dist} model was saved before its fit stored the joint covariance of "
                                f"({', '.join(names)}): refit it and save the new fit to draw its parameters")
    if cov["matrix"] is None:
        raise InputError(field, "the fit has no covariance (its information matrix was singular): its parameters "
                                "cannot be drawn")
    c = np.asarray(cov["matrix"], dtype=float)
    if list(cov["names"]) != list(names) or c.shape != (len(names), len(names)) or not np.all(np.isfinite(c)):
        raise InputError(field, "the record's covariance does not match its parameters: refit the model")
    return (c + c.T) / 2


def _hpp_form(record: Mapping[str, Any], field: str) -> dict[str, Any]:
    """An HPP's rate λ̂ = n/T: given a failure-terminated test 2λT ~ χ²(2n) exactly, so λ is drawn from
    Gamma(n, rate T); a time-terminated (or grouped) count has no exact continuous pivot (its classical
    limits take 2n and 2n + 2 degrees of freedom), so λ is drawn from Gamma(n + ½, rate T), Jeffreys'
    law, whose 90% interval lies inside the classical one."""
    n = record.get("n")
    lam = float(next(p["value"] for p in record["params"] if p["name"] == "lambda"))
    if not isinstance(n, int) or n <= 0 or not lam > 0:
        raise InputError(field, "an HPP fitted from no events has no rate to draw")
    exact = record.get("termination") == "failure"
    shape = float(n) if exact else n + 0.5
    return {"law": "gamma", "names": ("lambda",), "shape": shape, "scale": lam / n,
            "pivot": "failure_terminated" if exact else "time_terminated"}


def _covariate_power_form(record: Mapping[str, Any], field: str) -> dict[str, Any]:
    """A proportional-intensity power law's (ln beta, ln lambda, gamma): normal with the covariance its
    fit stores in `covariate_effects` (drawn at the covariates a caller gives, as one unit's process)."""
    eff = record["covariate_effects"]
    names = ("beta", "lambda", *[GAMMA + str(c["name"]) for c in eff["coefficients"]])
    c = _natural_cov(eff, ("beta", "lambda", *[str(c["name"]) for c in eff["coefficients"]]),
                     "power law with covariates", field)
    theta = np.array([float(eff["beta"]), float(eff["lambda"]), *[float(c["value"]) for c in eff["coefficients"]]])
    jinv = np.diag([1.0 / theta[0], 1.0 / theta[1], *[1.0] * (theta.size - 2)])
    return {"law": "normal", "names": names, "kinds": (POS, POS, *[REAL] * (theta.size - 2)),
            "mean": _to_u((POS, POS, *[REAL] * (theta.size - 2)), theta), "cov": jinv @ c @ jinv}


def _recurrent_form(record: Mapping[str, Any], field: str) -> dict[str, Any]:
    """The law of a recurrent model's parameters: Crow's exact pivot for a power law where the record
    holds it, the rate's chi-squared pivot for an HPP, else a normal on the fit's own scale with its
    covariance (power law: ln beta, ln lambda; log-linear: g0, g1; Kijima: ln alpha, ln beta and q
    itself, clipped to [0, 1] as the record's Wald interval of q is; with covariates: their gamma)."""
    dist = str(record.get("distribution"))
    if dist in NOT_DRAWN:
        raise InputError(field, f"a {dist} model's parameters cannot be drawn: {NOT_DRAWN[dist]}")
    if dist == "hpp":
        return _hpp_form(record, field)
    if dist not in (*POWER_LAWS, *GRP, "loglinear"):
        raise InputError(field, f"a {dist} recurrent model's parameters cannot be drawn: it stores no joint "
                                "sampling distribution")
    if record.get("covariate_effects"):
        return _covariate_power_form(record, field)
    samp = record.get("sampling")
    if isinstance(samp, Mapping) and samp.get("law") == "crow_exact":
        return {"law": "crow_exact", "names": ("beta", "lambda"), "shape": float(samp["informative_events"]),
                "sum_log": float(samp["sum_log"]), "events": float(samp["events"]), "end": float(samp["end"]),
                "systems": float(samp["systems"])}
    names, kinds = {"loglinear": (("g0", "g1"), (REAL, REAL)),
                    **dict.fromkeys(GRP, (("alpha", "beta", "q"), (POS, POS, CLIPPED)))}.get(
        dist, (("beta", "lambda"), (POS, POS)))
    c = _natural_cov(record, names, dist, field)
    values = {p["name"]: float(p["value"]) for p in record["params"]}
    theta = np.array([values[n] for n in names])
    jinv = np.diag([1.0 / x if k == POS else 1.0 for k, x in zip(kinds, theta, strict=True)])  # d u / d theta
    return {"law": "normal", "names": names, "kinds": kinds, "mean": _to_u(kinds, theta), "cov": jinv @ c @ jinv}


def _with_recurrent_values(record: Mapping[str, Any], values: Mapping[str, float]) -> dict[str, Any]:
    """A recurrent record at drawn values; with covariates the drawn process sits in `covariate_effects`."""
    out = dict(record)
    if record.get("covariate_effects"):
        eff = dict(record["covariate_effects"])
        eff.update(beta=float(values["beta"]), **{"lambda": float(values["lambda"])})
        eff["coefficients"] = [{**c, "value": float(values[GAMMA + str(c["name"])]), "se": None, "ci": None}
                               for c in eff["coefficients"]]
        out["covariate_effects"] = eff
    out["params"] = [{"name": p["name"], "value": values.get(p["name"], p["value"]), "se": None, "ci": None}
                     for p in record["params"]]
    return out


def draw_values(form: Mapping[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    """One parameter set {name: value} from a `sampling_form`, using `rng` (a Cox set also holds
    `baseline`: each stratum's drawn cumulative hazard)."""
    if form["law"] == "gamma":
        return {form["names"][0]: float(rng.gamma(form["shape"], form["scale"]))}
    if form["law"] == "cox":
        b = rng.multivariate_normal(form["mean"], form["cov"], method="eigh") if form["mean"].size else form["mean"]
        return {**dict(zip(form["names"], map(float, b), strict=True)),
                "baseline": cox_sampling.draw_baseline(form["record"], b - form["mean"], rng)}
    if form["law"] == "spline":
        return dict(zip(form["names"], map(float, _draw_spline(form, rng)), strict=True))
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
    if form["law"] in ("cox", "spline"):
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
    if record.get("kind") == "regression" and record.get("distribution") in flexible.MODELS:
        return _with_spline_values(record, values)
    if record.get("kind") == "regression" and record.get("distribution") == "weibull_frailty":
        return _with_frailty_values(record, values)
    if record.get("kind") == "regression":
        return _with_regression_values(record, values)
    if record.get("kind") == "recurrent":
        return _with_recurrent_values(record, values)
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
