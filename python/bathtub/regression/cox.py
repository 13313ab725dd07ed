"""Cox proportional-hazards fit: Newton–Raphson on the partial likelihood, any tie method,
strata, counting-process rows, model-based and cluster-robust (sandwich) standard errors,
Breslow's baseline cumulative hazard per stratum. A stratum without events is fitted, as R's coxph
fits it: it adds nothing to the partial likelihood and its baseline is 0 (survival 1).

Covariates are centred on their means before fitting (the partial likelihood does not change;
the Hessian is better conditioned) and the baseline is reported at those means, as R and
lifelines do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from bathtub import inference
from bathtub.errors import InputError
from bathtub.regression import exact_ties, risksets
from bathtub.regression.risksets import Stratum

TIES = ("efron", "breslow", "exact", "kalbfleisch-prentice")
MAX_ITER = 60
# Newton with step halving (30 halvings, then the step is taken); converged when the partial
# likelihood moves by 1e-11 relative and no coefficient by 1e-6 of 1 + max|β|
NEWTON = inference.NewtonRule(max_iter=MAX_ITER, tries=31, accept=1e-12, exhausted="take", value_tol=1e-11,
                              step_tol=1e-6, relative_step=True)
SEPARATION = 25.0  # |β|·sd beyond this: a hazard ratio above e^25 per standard deviation is a diverging fit
SE_SEPARATION = 1e3  # se·sd beyond this: the likelihood is flat along that covariate (its β runs off)


@dataclass(frozen=True, eq=False)
class CoxFit:
    """A fitted Cox model (coefficients on the original covariate scale)."""

    names: list[str]
    beta: np.ndarray
    var: np.ndarray  # inverse observed information
    robust_var: np.ndarray | None  # sandwich DᵀD of dfbeta summed by cluster
    n_clusters: int | None
    loglik: float
    loglik0: float  # at β = 0
    score_test: float
    iterations: int
    ties: str
    means: np.ndarray
    n: int
    n_events: int
    strata: list[str] | None  # level names in stratum order (None when unstratified)
    baseline: list[dict[str, list[float]]]  # per stratum {time, cumhaz} at the means (empty: no events)
    linear_predictor: np.ndarray  # (x − means)·β per row
    strata_index: np.ndarray  # stratum number per row
    prepared: list[Stratum] = field(default_factory=list)  # risk sets of the strata with events, for diagnostics


def _strata(labels: Sequence[object] | None, n: int) -> tuple[np.ndarray, list[str] | None]:
    if labels is None:
        return np.zeros(n, dtype=np.int64), None
    text = np.array([str(v) for v in labels], dtype=object)
    levels, index = np.unique(text, return_inverse=True)
    return index.astype(np.int64), [str(v) for v in levels]


def _evaluate(strata: list[Stratum], beta: np.ndarray, ties: str, hessian: bool = True,
              ) -> tuple[float, np.ndarray, np.ndarray, list[risksets.Terms | None]]:
    p = beta.size
    ll, grad, hess = 0.0, np.zeros(p), np.zeros((p, p))
    terms: list[risksets.Terms | None] = []
    for s in strata:
        eta = s.x @ beta
        if ties in ("efron", "breslow"):
            a, b, c, t = risksets.evaluate(s, eta, ties == "efron", hessian)
            terms.append(t)
        elif ties == "exact":
            a, b, c = exact_ties.exact_terms(s, eta)
            terms.append(None)
        else:
            a, b, c = exact_ties.kp_terms(s, eta)
            terms.append(None)
        ll, grad, hess = ll + a, grad + b, hess + c
    return ll, grad, hess, terms


def _evaluate_state(strata: list[Stratum], beta: np.ndarray, ties: str) -> tuple[float, tuple]:
    ll, grad, hess, terms = _evaluate(strata, beta, ties)
    return ll, (grad, hess, terms)


def fit_cox(
    x: np.ndarray,
    names: Sequence[str],
    stop: np.ndarray,
    event: np.ndarray,
    *,
    start: np.ndarray | None = None,
    strata: Sequence[object] | None = None,
    cluster: Sequence[object] | None = None,
    ties: str = "efron",
    robust: bool = True,
    field_names: dict[str, str] | None = None,
) -> CoxFit:
    """Fit h(t|x) = h0_s(t)·exp(xβ). `event` true for an observed failure at `stop`; `start` gives
    counting-process rows (start, stop]; `strata` a baseline per level; `cluster` groups rows for
    the robust variance (each row its own cluster when None); `robust` False skips that variance."""
    fields = {"ties": "cox_options.tie_method", "time": "mapping.x", "design": "covariates"} | dict(field_names or {})
    if ties not in TIES:
        raise InputError(fields["ties"], f"must be one of {', '.join(TIES)}")
    x = np.asarray(x, dtype=float)
    n, p = x.shape
    stop = np.asarray(stop, dtype=float)
    event = np.asarray(event, dtype=bool)
    if not np.all(np.isfinite(stop)):
        raise InputError(fields["time"], "times must be finite numbers")
    if start is not None:
        start = np.asarray(start, dtype=float)
        bad = np.flatnonzero(~(start < stop))
        if bad.size:
            raise InputError(fields.get("start", "mapping.xl"),
                             f"row {bad[0] + 1}: start {start[bad[0]]:g} must be below stop {stop[bad[0]]:g}")
    sidx, levels = _strata(strata, n)
    if not event.any():
        where = f"; none of the {len(levels)} strata has one (nothing to fit)" if levels else ""
        raise InputError(fields.get("event", "mapping.c"), f"no failures: a Cox model needs at least one event{where}")
    means = x.mean(axis=0)
    xc = x - means
    # A stratum without events adds nothing to the partial likelihood (no event time, no risk set):
    # it is left out of `prepared`, as R's coxph does, and keeps a baseline of 0 (survival 1).
    prepared: list[Stratum] = []
    owner: list[int] = []  # stratum number of each prepared stratum
    for k in range(len(levels) if levels else 1):
        rows = np.flatnonzero(sidx == k) if levels else np.arange(n)
        s = risksets.prepare(xc, start, stop, event, rows)
        if s is not None:
            prepared.append(s)
            owner.append(k)
    beta = np.zeros(p)
    ll0, grad0, hess0, terms = _evaluate(prepared, beta, ties)
    try:
        score = float(grad0 @ np.linalg.solve(-hess0, grad0))
    except np.linalg.LinAlgError:
        raise InputError(fields["design"], "the information matrix is singular at β = 0 (a covariate with no "
                                           "variation within the risk sets?)") from None
    fit = inference.newton(lambda b: _evaluate_state(prepared, b, ties), beta, rule=NEWTON,
                           start=(ll0, (grad0, hess0, terms)))
    beta, ll, iterations, converged = fit.estimate, fit.log_likelihood, fit.iterations, fit.converged
    hess, terms = fit.state[1], fit.state[2]
    sd = np.sqrt(np.einsum("ij,ij->j", xc, xc) / n)
    try:
        var = np.linalg.inv(-hess)
        se_sd = np.sqrt(np.abs(np.diag(var))) * sd
    except np.linalg.LinAlgError:
        var, se_sd = None, np.full(p, np.inf)
    # Monotone likelihood: the coefficient runs off and its information vanishes (se grows like e^{β/2}).
    spread = np.maximum(np.abs(beta) * sd / SEPARATION, se_sd / SE_SEPARATION)
    worst = int(np.argmax(spread)) if p else 0
    if p and (spread[worst] > 1.0 or not np.all(np.isfinite(beta))):
        raise InputError(fields["design"], f"covariate {names[worst]!r} separates failures from survivors "
                                           "(monotone likelihood): its coefficient runs to infinity; drop it or "
                                           "merge its levels")
    if not converged:
        raise InputError(fields["design"], f"the partial likelihood did not converge in {MAX_ITER} Newton steps")
    if var is None:
        raise InputError(fields["design"], "the information matrix is singular at the fit")
    var = (var + var.T) / 2
    # `terms` are those of the last evaluation, at the β we stopped at
    robust_var, n_clusters = None, None
    if robust and ties in ("efron", "breslow"):
        u = np.zeros((n, p))
        for s, t in zip(prepared, terms):
            assert t is not None
            if len(prepared) == 1 and s.rows.size == n:
                u = risksets.score_residuals(s, t)
            else:
                u[s.rows] = risksets.score_residuals(s, t)
        dfbeta = u @ var
        if cluster is not None:
            _, cidx = np.unique(np.array([str(v) for v in cluster], dtype=object), return_inverse=True)
            n_clusters = int(cidx.max()) + 1
            summed = np.zeros((n_clusters, p))
            np.add.at(summed, cidx, dfbeta)
            dfbeta = summed
        else:
            n_clusters = n
        robust_var = dfbeta.T @ dfbeta
    # Breslow's baseline per stratum; one without events stays empty: cumulative hazard 0 at every
    # time, as R's survfit(coxph) gives that stratum (survival 1)
    baseline: list[dict[str, list[float]]] = [{"time": [], "cumhaz": []} for _ in range(len(levels) if levels else 1)]
    for k, s, t in zip(owner, prepared, terms):
        if t is not None:
            steps = risksets.hazard_steps(s, t, efron=False)
        else:  # exact ties: Breslow's step at the fitted β
            eta = s.x @ beta
            w = np.exp(eta)
            s0 = risksets.at_risk_sums(s, w)
            steps = s.deaths / s0
        baseline[k] = {"time": s.times.tolist(), "cumhaz": np.cumsum(steps).tolist()}
    return CoxFit(list(names), beta, var, robust_var, n_clusters, ll, ll0, score, iterations, ties, means, n,
                  int(event.sum()), levels, baseline, xc @ beta, sidx, prepared)
