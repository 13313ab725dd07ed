"""Fitting a life distribution: estimates, bounds, goodness of fit and life metrics.

`fit(data, distribution, options=..., method=..., bounds=...)` -> `LifeFit`, whose
`to_record()` is the spec's model record (JSON-ready). Choices, documented once here:

- Estimates: maximum likelihood over all four observation kinds; `rrx`/`rry` rank
  regression on Bernard median ranks with Johnson's adjusted ranks (then the Fisher matrix
  is evaluated at the regression estimate, as Weibull++ and `reliability` do).
- Standard errors: the inverse observed information (Fisher matrix, see
  `likelihood.observed_information`: steps on each parameter's own scale, so exact in any
  time unit) of *all* free
  parameters, a 3-parameter fit's location included (holding gamma fixed understates the
  other parameters' uncertainty). 95% intervals on the log scale for positive parameters,
  the logit scale for probabilities, linear otherwise.
- `bounds="likelihood"`: profile-likelihood intervals (2 (ll_max - ll_profile) <= chi2_1(0.95))
  for parameters, and for life metrics the smallest value over the one-sided 90% region.
- Life: B1, B5, B10, B20, B50 and MTTF, each with a one-sided 90% lower bound (see
  `metrics.py`: delta method or likelihood; whole cycles for the discrete Weibull, whose
  record also carries `metrics` {median, mttf, b10}; B-lives below t = 0 are kept and warned
  of in the item's `warning` and the record's `warnings`).
- Uniform end points are non-regular (the likelihood is maximised on the data's boundary),
  so no Fisher bounds are given for them.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import integrate, optimize, special, stats

from bathtub import inference
from bathtub.distributions import Lifetime
from bathtub.errors import InputError
from bathtub.life.ad_test import ad_test
from bathtub.life.data import LifeData
from bathtub.life.likelihood import data_scale, maximise, observed_information, polish, spec_loglik
from bathtub.life.metrics import discrete_metrics, life_items, life_warnings
from bathtub.life.model import (
    DISCRETE_WEIBULL,
    FIT_FAMILIES,
    LOC,
    LOGLOC,
    POS,
    REAL,
    REAL_LINE,
    UNIT,
    WEIGHT,
    ModelSpec,
)
from bathtub.life.ranks import anderson_darling, rank_regression
from bathtub.life.starts import starts
from bathtub.life.weibull import weibull_mle
from bathtub.validate import check_integer

Z95 = float(stats.norm.ppf(0.975))
CHI95 = float(stats.chi2.ppf(0.95, 1))
METHODS = ("mle", "rrx", "rry")
BOUNDS = ("fisher", "likelihood")
POSITIVE_SUPPORT = ("weibull", "exponential", "lognormal", "gamma", "loglogistic", "expo_weibull")


@dataclass(frozen=True)
class LifeFit:
    """A fitted life model. Times in the data's unit; `covariance` rows/columns follow `names`."""

    spec: ModelSpec
    method: str
    bounds: str
    n: int
    n_failures: int
    values: tuple[float, ...]
    se: tuple[float | None, ...]
    ci: tuple[tuple[float, float] | None, ...]
    covariance: tuple[tuple[float, ...], ...] | None
    log_likelihood: float
    gof: tuple[dict[str, Any], ...]
    life: tuple[dict[str, Any], ...]
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    metrics: Mapping[str, float | None] | None = None
    ranking: tuple[dict[str, Any], ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def distribution(self) -> str:
        return self.spec.id

    @property
    def params(self) -> dict[str, float]:
        return dict(zip(self.spec.names, self.values, strict=False))

    def dist(self) -> Lifetime:
        """The fitted distribution (sf, cdf, pdf, hazard, quantile, mean)."""
        return self.spec.build(np.array(self.values))

    def to_record(self) -> dict[str, Any]:
        """The spec's model record fields, plus what rebuilds the model (options, covariance)."""
        params = []
        for name, v, s, c in zip(self.spec.names, self.values, self.se, self.ci, strict=False):
            p: dict[str, Any] = {"name": name, "value": float(v), "se": None if s is None else float(s)}
            if c is not None:
                p["ci"] = [float(c[0]), float(c[1])]
            params.append(p)
        rec: dict[str, Any] = {
            "distribution": self.distribution,
            "base_distribution": self.spec.distribution if self.spec.modes > 1 else None,
            "kind": "distribution",
            "n": self.n,
            "n_failures": self.n_failures,
            "params": params,
            "coefficients": [],
            "metrics": None if self.metrics is None else dict(self.metrics),
            "gof": [dict(g) for g in self.gof],
            "life": [dict(x) for x in self.life],
            "options": self.spec.options(),
            "method": self.method,
            "bounds": self.bounds,
            "log_likelihood": float(self.log_likelihood),
            "covariance": None
            if self.covariance is None
            else {"names": list(self.spec.names), "matrix": [[float(x) for x in row] for row in self.covariance]},
            "notes": list(self.notes),
            "warnings": list(self.warnings),
        }
        if self.ranking is not None:
            rec["ranking"] = [dict(r) for r in self.ranking]
        rec.update(self.extra)
        return rec


# ---- entry point ------------------------------------------------------------------------
def fit(
    data: LifeData,
    distribution: str,
    *,
    options: Mapping[str, Any] | None = None,
    method: str = "mle",
    bounds: str = "fisher",
    modes: int = 2,
    base_distribution: str = "weibull",
    median_ranks: str = "bernard",
    ad_replicates: int = 0,
) -> LifeFit:
    """Fit `distribution` (a family id, `mixture` of `modes` `base_distribution`s, or `best`).

    `method`: mle, rrx or rry; `median_ranks` for rank regression: bernard ((r - 0.3)/(n + 0.4))
    or exact (the beta distribution's median); `bounds`: fisher or likelihood. `ad_replicates`:
    refits of the parametric bootstrap that gives the Anderson–Darling p-value of a complete
    sample for families with no published table (gamma, log-logistic, exponentiated Weibull, a
    location); 0 leaves those without a test row (see `ad_test`).
    """
    if median_ranks not in ("bernard", "exact"):
        raise InputError("median_ranks", "must be bernard or exact")
    if method not in METHODS:
        raise InputError("method", f"must be one of {', '.join(METHODS)}")
    if bounds not in BOUNDS:
        raise InputError("bounds", f"must be one of {', '.join(BOUNDS)}")
    ad_replicates = check_integer(ad_replicates, "ad_replicates", 0, 100_000)
    opts = dict(options or {})
    for key in opts:
        if key not in ("offset", "zi", "lfp"):
            raise InputError(f"options.{key}", "unknown option; known: offset, zi, lfp")
        if not isinstance(opts[key], bool):
            raise InputError(f"options.{key}", "must be true or false")
    if distribution == "best":
        return _with_bootstrap(fit_best(data, options=opts, method=method, bounds=bounds), data, ad_replicates)
    if distribution == "mixture":
        if opts:
            raise InputError("options", "a mixture takes no offset, zi or lfp option")
        if modes not in (2, 3):
            raise InputError("modes", "a mixture fit has 2 or 3 subpopulations")
        if method != "mle":
            raise InputError("method", "a mixture is fitted by maximum likelihood only")
        spec = ModelSpec(base_distribution, modes=modes)
    else:
        if not isinstance(distribution, str) or distribution not in FIT_FAMILIES:
            known = ", ".join([*FIT_FAMILIES, "mixture", "best"])
            raise InputError("distribution", f"unknown distribution {distribution!r}; known: {known}")
        if opts.get("zi") and opts.get("lfp"):
            raise InputError("options", "choose zi or lfp, not both")
        spec = ModelSpec(distribution, **opts)
    if method != "mle" and (spec.offset or spec.zi or spec.lfp):
        raise InputError("method", "options offset, zi and lfp are fitted by maximum likelihood only")
    return _with_bootstrap(_fit_spec(data, spec, method, bounds, median_ranks), data, ad_replicates)


def _with_bootstrap(result: LifeFit, data: LifeData, replicates: int) -> LifeFit:
    # only the returned fit is bootstrapped (never every family of a `best` ranking), and only
    # where no table gave the row already
    if replicates <= 0 or any(g["id"] == "ad_test" for g in result.gof):
        return result
    row = ad_test(result.spec, np.array(result.values), data, result.method, replicates)
    if row is None:
        return result
    return LifeFit(**{**result.__dict__, "gof": (*result.gof, row)})


def _check_data(data: LifeData, spec: ModelSpec) -> None:
    data.require_failures(spec.k, f"{spec.id} with {spec.k} parameters")
    dist = spec.distribution
    allt = data.all_times() if dist in ("beta", DISCRETE_WEIBULL) else np.empty(0)
    if dist == "beta" and (allt.max() > 1.0 or np.any(np.isinf(data.ir))):
        raise InputError("data", "beta is a distribution on [0, 1]: every time must be in [0, 1]")
    if dist == DISCRETE_WEIBULL:
        if np.any(allt != np.floor(allt)):
            raise InputError("data", "discrete_weibull takes whole numbers of cycles")
        if data.f.size and data.f.min() < 1:
            raise InputError("data", "discrete_weibull failures are at cycle 1 or later")
    if dist == "uniform" and (spec.zi or spec.lfp):
        raise InputError("options", "uniform takes no zi or lfp option")
    if dist == "uniform" and not data.only_exact_and_right:
        raise InputError("data", "uniform is fitted to exact and right-censored data")
    zeros = data.f.size and data.f.min() == 0
    if spec.zi and not zeros:
        raise InputError("options.zi", "zero inflation needs failures at t = 0")
    if zeros and not spec.zi and dist in (*POSITIVE_SUPPORT, DISCRETE_WEIBULL):
        raise InputError("data", "failures at t = 0 have no density under this model: use option zi")
    if spec.offset and data.min_time() <= 0:
        raise InputError("options.offset", "a location needs every time > 0")
    if spec.lfp and data.r.size == 0:
        raise InputError("options.lfp", "a limited failure population needs right-censored units")


def _fit_spec(
    data: LifeData, spec: ModelSpec, method: str, bounds: str, median_ranks: str = "bernard"
) -> LifeFit:
    # The optimisers probe parameters where densities underflow or overflow; those points are
    # rejected by value (-inf likelihood), so the floating-point warnings they raise are noise.
    # (scipy integrates the exponentiated Weibull's mean numerically and may warn of round-off.)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        return _fit_spec_inner(data, spec, method, bounds, median_ranks)


def _fit_spec_inner(
    data: LifeData, spec: ModelSpec, method: str, bounds: str, median_ranks: str
) -> LifeFit:
    _check_data(data, spec)
    # the data's scale enters only real-valued coordinates (t / scale, ln t - ln scale) and the
    # mixture checks; a model of logs and logits alone never reads it, so it costs no pass
    scale = data_scale(data) if spec.modes > 1 or any(k in (REAL, LOGLOC) for k in spec.kinds) else 1.0
    tmin = data.min_time() if spec.offset else 1.0
    notes: list[str] = []
    cov: np.ndarray | None = None
    logsf_f: np.ndarray | None = None  # the fitted ln S at data.f, when a closed-form fit has it
    info: np.ndarray | None = None  # observed information in the unconstrained coordinates, if known
    plain = not (spec.offset or spec.zi or spec.lfp) and spec.modes == 1
    if method == "mle" and plain and spec.distribution == "weibull" and data.only_exact_and_right:
        wf = weibull_mle(data)
        theta, ll, cov, logsf_f = np.array([wf.alpha, wf.beta]), wf.log_likelihood, wf.covariance, wf.logsf_failures
    elif method == "mle" and plain and spec.distribution == "exponential" and data.only_exact_and_right:
        r = float(data.fn.sum())
        lam = r / float(data.fn @ data.f + data.rn @ data.r)  # closed form: failures / total time
        theta = np.array([lam])
        ll = spec_loglik(spec, theta, data)
        cov = np.array([[lam * lam / r]])
    elif (method == "mle" and spec.distribution == "exponential" and spec.offset and not (spec.zi or spec.lfp)
          and data.only_exact_and_right):
        # closed form: the likelihood rises with gamma up to the first failure, so gamma = t(1);
        # lambda = r / sum (t - gamma)+. gamma sits on the boundary (non-regular): no Fisher se
        gamma = float(data.f.min())
        r = float(data.fn.sum())
        lam = r / float(data.fn @ (data.f - gamma) + data.rn @ np.maximum(data.r - gamma, 0.0))
        theta = np.array([lam, gamma])
        ll = float(r * math.log(lam) - r)
        cov = np.array([[lam * lam / r, 0.0], [0.0, 0.0]])
        notes.append("exponential location: gamma is the first failure (a boundary estimate, no standard "
                     "error); bounds treat it as known")
    elif method == "mle" and spec.distribution == "uniform":
        theta, ll = _uniform_mle(data)
        notes.append("uniform end points are non-regular: no Fisher bounds")
    elif method == "mle":
        reject = (lambda th: _collapsed_mode(spec, th, scale)) if spec.modes > 1 else None
        theta, ll = maximise(spec, data, starts(spec, data), scale, tmin, reject)
        theta, ll, info = _polish(spec, theta, ll, data, scale, tmin)
        if reject is not None and (why := reject(theta)) is not None:
            raise InputError("modes", why)
        if spec.offset and theta[spec.names.index("gamma")] > (1.0 - 1e-6) * tmin:
            # a density that is infinite at the location (Weibull shape < 1, ...) makes the
            # likelihood grow without bound as gamma reaches the first time: no MLE exists
            raise InputError("options.offset", "the likelihood has no maximum with a location here (it grows "
                             "without bound as gamma reaches the first time); fit without offset")
    else:
        v = rank_regression(data, spec.distribution, method, exact=median_ranks == "exact")
        theta = np.array([v[n] for n in spec.names])
        ll = spec_loglik(spec, theta, data)
        kind = "exact beta median ranks" if median_ranks == "exact" else "Bernard median ranks"
        notes.append(f"{method.upper()} on {kind} (Johnson's adjusted ranks); bounds from "
                     "the Fisher matrix at the regression estimate")
    cov_u: np.ndarray | None = None
    if cov is not None:
        cov_u = _cov_u(spec, theta, cov, scale, tmin)
    elif spec.distribution != "uniform":
        both = _covariance(spec, theta, data, scale, tmin, info)
        if both is None:
            notes.append("the information matrix is not positive definite here: no Fisher bounds")
        else:
            cov, cov_u = both
        if spec.offset and cov is not None and theta[spec.names.index("gamma")] < 1e-6 * tmin:
            notes.append("the location sits at 0: the 3-parameter fit reduces to the 2-parameter one")

    se, ci, wide = _param_bounds(spec, theta, cov)
    if wide:
        notes.append(f"the data barely constrain {', '.join(wide)}: the 95% interval reaches beyond floating "
                     "point and is left out")
    if spec.distribution == "exponential" and spec.offset and cov is not None and cov[1, 1] == 0.0:
        se, ci = (se[0], None), (ci[0], None)
    nonregular = spec.distribution == "uniform" or (spec.distribution == "exponential" and spec.offset)
    if bounds == "likelihood" and not nonregular:
        ci = _profile_bounds(spec, theta, ll, data, scale, tmin, ci)
    gof = _gof(spec, theta, ll, data, logsf_f)
    if (row := ad_test(spec, theta, data, method)) is not None:
        gof.append(row)  # the tables cost nothing; a bootstrap is asked for in fit(ad_replicates=...)
    life = life_items(spec, theta, cov_u, ll, data, scale, tmin, "fisher" if nonregular else bounds)
    if any(x["value"] is None for x in life):
        notes.append("life metrics that a limited failure population never reaches are null")
    return LifeFit(
        spec=spec, method=method, bounds=bounds, n=data.n, n_failures=data.n_failures,
        values=tuple(float(v) for v in theta), se=se, ci=ci,
        covariance=None if cov is None else tuple(tuple(float(x) for x in row) for row in cov),
        log_likelihood=float(ll), gof=tuple(gof), life=tuple(life), notes=tuple(notes),
        warnings=tuple(life_warnings(life)),
        metrics=discrete_metrics(spec.build(theta)) if spec.distribution == DISCRETE_WEIBULL else None,
    )


def _collapsed_mode(spec: ModelSpec, theta: np.ndarray, scale: float) -> str | None:
    """Why a mixture end point is no fit, or None.

    A mode whose quartiles meet (a spike on one failure time) makes the mixture likelihood grow
    without bound, so the optimiser's end there is an artefact, not an estimate; so is a mode
    spread beyond floating point. The spike test is relative to the mode's own median (to the
    data's spread for a median at 0), so it is unit-free and blind to how far apart modes lie:
    a quartile spread of 1e-6 of the median is a Weibull shape of ~1e6, which no data support.
    """
    comps = spec.build(theta).components  # a Mixture
    for i, comp in enumerate(comps, start=1):
        try:
            q1, q2, q3 = (comp.quantile(p) for p in (0.25, 0.5, 0.75))
        except (ValueError, OverflowError, ZeroDivisionError):
            q1 = q2 = q3 = math.nan
        what = f"no {spec.modes}-mode {spec.distribution} mixture fits these data"
        if not all(math.isfinite(q) for q in (q1, q2, q3)) or (q1 <= 0 < q3 and not spec.real_line
                                                                and spec.distribution not in REAL_LINE):
            return (f"{what}: mode {i} spreads beyond floating point (its quartiles are not finite numbers); "
                    "fit fewer modes or a single distribution")
        if q3 - q1 <= 1e-6 * (abs(q2) if q2 != 0 else scale):
            return (f"{what}: mode {i} collapses onto the single time {q2:.6g}, where the likelihood grows "
                    "without bound; fit fewer modes or a single distribution")
    return None


def _uniform_mle(data: LifeData) -> tuple[np.ndarray, float]:
    """a = first failure; b maximises prod 1/(b-a) prod (b-r)/(b-a) over b >= the last time."""
    a = float(data.f.min())
    rr, rw = data.r[data.r > a], data.rn[data.r > a]
    bmin = float(max(data.f.max(), rr.max() if rr.size else -math.inf))
    n_all = float(data.fn.sum() + rw.sum())

    def score(b: float) -> float:
        return -n_all / (b - a) + float(rw @ (1.0 / (b - rr)))

    b = bmin
    if rr.size and rr.max() == bmin:  # a censored unit at the end: the optimum is inside
        lo = bmin + 1e-12 * max(abs(bmin), 1.0)
        hi = bmin + (bmin - a) + 1.0
        while score(hi) > 0:
            hi = bmin + 2 * (hi - bmin)
        b = optimize.brentq(score, lo, hi, xtol=1e-14, rtol=1e-14)
    theta = np.array([a, b])
    return theta, spec_loglik(ModelSpec("uniform"), theta, data)


def _polish(
    spec: ModelSpec, theta: np.ndarray, ll: float, data: LifeData, scale: float, tmin: float
) -> tuple[np.ndarray, float, np.ndarray | None]:
    """Newton-polish a maximiser's estimate; returns (theta, ll, information in u or None)."""
    def fun(v: np.ndarray) -> float:
        return spec_loglik(spec, spec.from_u(v, scale, tmin), data)

    u, info = polish(fun, spec.to_u(theta, scale, tmin))
    new = spec.from_u(u, scale, tmin)
    new_ll = spec_loglik(spec, new, data)
    if math.isfinite(new_ll) and new_ll >= ll - 1e-12 * max(1.0, abs(ll)):
        return new, new_ll, info
    return theta, ll, None


def _covariance(
    spec: ModelSpec, theta: np.ndarray, data: LifeData, scale: float, tmin: float,
    info: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Inverse observed information in natural parameters and in the unconstrained ones.

    The information is taken in the optimiser's coordinates (logs, logits, times over the data's
    scale: each moves by a constant when the time unit changes) and mapped back by the Jacobian,
    which at the maximum equals inverting the natural-scale information.
    """
    u = spec.to_u(theta, scale, tmin)

    def ll(v: np.ndarray) -> float:
        return spec_loglik(spec, spec.from_u(v, scale, tmin), data)

    if info is None:
        info = observed_information(ll, u)
    if info is None:
        return None
    try:
        cov_u = np.linalg.inv(info)
    except np.linalg.LinAlgError:
        return None
    cov_u = (cov_u + cov_u.T) / 2
    if not np.all(np.isfinite(cov_u)) or np.any(np.linalg.eigvalsh(cov_u) <= 0):
        return None
    jac = spec.jacobian(u, scale, tmin)
    return jac @ cov_u @ jac.T, cov_u


def _cov_u(spec: ModelSpec, theta: np.ndarray, cov: np.ndarray, scale: float, tmin: float) -> np.ndarray:
    """A closed-form natural covariance in the unconstrained coordinates (J^-1 cov J^-T)."""
    jac = spec.jacobian(spec.to_u(theta, scale, tmin), scale, tmin)
    inv = np.linalg.inv(jac)
    return inv @ cov @ inv.T


def _param_bounds(
    spec: ModelSpec, theta: np.ndarray, cov: np.ndarray | None
) -> tuple[tuple[float | None, ...], tuple[tuple[float, float] | None, ...], tuple[str, ...]]:
    """Standard errors, 95% intervals, and the names whose interval overflows floating point."""
    if cov is None:
        return tuple(None for _ in theta), tuple(None for _ in theta), ()
    ses, cis = [], []
    wide: list[str] = []
    for i, kind in enumerate(spec.kinds):
        v, var = float(theta[i]), float(cov[i, i])
        s = math.sqrt(var) if var > 0 else 0.0
        ses.append(s)
        if kind == POS and v > 0:
            # on the log scale; an upper end beyond floating point (a parameter the data do not
            # pin down, e.g. a mixture mode with a handful of points) is no interval to publish
            r = Z95 * s / v
            if r > 700.0:
                wide.append(spec.names[i])
                cis.append(None)
            else:
                cis.append((v * math.exp(-r), v * math.exp(r)))
        elif kind in (UNIT, WEIGHT) and 0 < v < 1:
            lg, sl = math.log(v / (1 - v)), s / (v * (1 - v))
            cis.append((float(special.expit(lg - Z95 * sl)), float(special.expit(lg + Z95 * sl))))
        elif kind == LOC:
            cis.append((max(v - Z95 * s, 0.0), v + Z95 * s))
        else:
            cis.append((v - Z95 * s, v + Z95 * s))
    return tuple(ses), tuple(cis), tuple(wide)


def _free_index(spec: ModelSpec) -> list[int]:
    """Position of each natural parameter in the unconstrained vector (None for weights)."""
    out, j = [], 0
    for k in spec.kinds:
        if k == WEIGHT:
            out.append(None)
        else:
            out.append(j)
            j += 1
    return out


def _profile_bounds(
    spec: ModelSpec, theta: np.ndarray, llmax: float, data: LifeData, scale: float, tmin: float,
    fisher: tuple[tuple[float, float] | None, ...],
) -> tuple[tuple[float, float] | None, ...]:
    """Profile-likelihood 95% intervals, each end a root of 2 (llmax - profile) = chi2_1(0.95).

    Searched in the unconstrained coordinate of the parameter (so a positive parameter's end
    stays positive), starting from the Fisher end (usually close, so one or two trials
    bracket the root); the other parameters are re-maximised at each trial value by BFGS,
    warm-started from the previous trial.
    """
    u_hat = spec.to_u(theta, scale, tmin)
    target = llmax - CHI95 / 2.0
    idx = _free_index(spec)
    out: list[tuple[float, float] | None] = []
    for i, j in enumerate(idx):
        if j is None or len(u_hat) > 4 or fisher[i] is None:
            out.append(fisher[i])
            continue
        others = [k for k in range(len(u_hat)) if k != j]
        warm = {"o": u_hat[others].copy()}

        def prof(x: float, j: int = j, others: list[int] = others, warm: dict = warm) -> float:
            v = u_hat.copy()
            v[j] = x
            if not others:
                return spec_loglik(spec, spec.from_u(v, scale, tmin), data) - target

            def neg(o: np.ndarray) -> float:
                v[others] = o
                ll = spec_loglik(spec, spec.from_u(v, scale, tmin), data)
                return -ll if math.isfinite(ll) else 1e300

            r = inference.maximise(lambda o: -neg(o), warm["o"], covariance=False,
                                   stages=(inference.Stage("BFGS", {"gtol": 1e-8, "maxiter": 200}),))
            if -r.log_likelihood < 1e300:
                warm["o"] = r.estimate
            return r.log_likelihood - target

        ends = []
        for sign, guess in ((-1.0, fisher[i][0]), (1.0, fisher[i][1])):
            th = theta.copy()
            th[i] = guess
            try:
                dist0 = abs(float(spec.to_u(th, scale, tmin)[j]) - u_hat[j])
            except (ValueError, ZeroDivisionError):
                dist0 = 0.0
            step = dist0 if math.isfinite(dist0) and dist0 > 1e-8 else 0.1
            warm["o"] = u_hat[others].copy()
            inner, found = u_hat[j], None
            for _ in range(40):
                trial = u_hat[j] + sign * step
                if prof(trial) < 0:
                    try:
                        found = optimize.brentq(prof, min(inner, trial), max(inner, trial), xtol=1e-10)
                    except ValueError:  # the inner maximum moved between calls: keep Fisher's end
                        found = None
                    break
                inner = trial
                step *= 1.5
            if found is None:
                ends.append(None)
                continue
            v = u_hat.copy()
            v[j] = found
            ends.append(float(spec.from_u(v, scale, tmin)[i]))
        if ends[0] is None or ends[1] is None:
            out.append(fisher[i])
        else:
            out.append((min(ends), max(ends)))
    return tuple(out)


def _gof(
    spec: ModelSpec, theta: np.ndarray, ll: float, data: LifeData, logsf_f: np.ndarray | None = None
) -> list[dict[str, Any]]:
    k, n = spec.k, data.n
    aic = 2 * k - 2 * ll
    aicc = aic + (2 * k * (k + 1) / (n - k - 1) if n - k - 1 > 0 else math.inf)
    bic = k * math.log(n) - 2 * ll
    out = [
        {"id": "log_likelihood", "label": "Log-likelihood", "value": float(ll)},
        {"id": "aic", "label": "AIC", "value": float(aic)},
        {"id": "aicc", "label": "AICc (small-sample AIC)", "value": float(aicc) if math.isfinite(aicc) else None},
        {"id": "bic", "label": "BIC", "value": float(bic)},
    ]
    if spec.distribution != DISCRETE_WEIBULL and not spec.zi:
        ad = anderson_darling(spec.build(theta).logsf if logsf_f is None else logsf_f, data)
        if ad is not None:
            out.append({"id": "ad", "label": "Anderson–Darling (adjusted)", "value": ad})
    return out


# ---- best -----------------------------------------------------------------------------
def fit_best(
    data: LifeData, *, options: Mapping[str, Any] | None = None, method: str = "mle", bounds: str = "fisher"
) -> LifeFit:
    """Fit every applicable family, rank by AICc (BIC reported), return the winner with the ranking."""
    rows, fits = [], {}
    for dist in FIT_FAMILIES:
        try:
            spec = ModelSpec(dist, **(options or {}))
            f = _fit_spec(data, spec, method, "fisher")
        except (InputError, ValueError, ArithmeticError, np.linalg.LinAlgError):
            continue  # a family that cannot describe these data drops out of the ranking
        g = {x["id"]: x["value"] for x in f.gof}
        if g["aicc"] is None or not math.isfinite(f.log_likelihood):
            continue
        fits[dist] = f
        rows.append({"distribution": dist, "k": spec.k, "log_likelihood": f.log_likelihood,
                     "aicc": g["aicc"], "bic": g["bic"]})
    if not rows:
        raise InputError("data", "no distribution could be fitted to these data")
    rows.sort(key=lambda r: r["aicc"])
    win = rows[0]["distribution"]
    bic_win = min(rows, key=lambda r: r["bic"])["distribution"]
    why = f"{win}: lowest AICc"
    if len(rows) > 1:
        why += f" ({rows[1]['aicc'] - rows[0]['aicc']:.2f} below {rows[1]['distribution']})"
    why += "; BIC agrees" if bic_win == win else f"; BIC would choose {bic_win}"
    chosen = fits[win] if bounds == "fisher" else _fit_spec(data, fits[win].spec, method, bounds)
    return LifeFit(**{**chosen.__dict__, "notes": (*chosen.notes, why), "ranking": tuple(rows),
                      "extra": {"choice": why}})
