"""Royston–Parmar flexible parametric regression: a natural cubic spline in log time.

On the hazard scale (`royston_parmar`) the log cumulative hazard is

    log H(t | x) = s(log t; γ) + xβ,   S = exp(−e^η),

a proportional-hazards model whose baseline is any smooth shape; on the odds scale
(`proportional_odds`) the log cumulative odds of failure is

    log(F / S)(t | x) = s(log t; γ) + xβ,   S = 1 / (1 + e^η),

a proportional-odds model (e^β an odds ratio). With no interior knots s is a line
γ0 + γ1·log t: the Weibull PH model (β_shape = γ1, α = e^{−γ0/γ1}) and the log-logistic
proportional-odds model (the log-logistic AFT read on the odds scale, β = −γ_AFT/σ).

The spline (Royston & Parmar 2002, Statistics in Medicine 21:2175) has boundary knots k_min,
k_max at the extreme uncensored log times and interior knots k_j at their centiles:

    s(u) = γ0 + γ1·u + Σ_j γ_{j+1} v_j(u),
    v_j(u) = (u − k_j)₊³ − λ_j (u − k_min)₊³ − (1 − λ_j)(u − k_max)₊³,  λ_j = (k_max − k_j)/(k_max − k_min),

which is linear beyond the boundary knots. The density needs ds/du > 0 at every failure; a fit
whose spline turns down anywhere (between knots or in its linear tails) is not a survival curve
and is refused.

The log-likelihood, its gradient and Hessian are analytic; without delayed entry it is concave
in (γ, β), so Newton's method with step halving finds the maximum. Internally u is rescaled to
[0, 1] over the boundary knots and the covariates are centred (the reported γ are in log t, the
usual Royston–Parmar basis; a change of time unit t → c·t moves only γ0, by −γ1·log c).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from bathtub import inference
from bathtub.errors import InputError
from bathtub.validate import check_number

SCALES = {"royston_parmar": "hazard", "proportional_odds": "odds"}
MODELS = tuple(SCALES)
AUTO_KNOTS = (1, 2, 3, 4)  # interior knots tried by AIC when none are given (royston_parmar)
DEFAULT_KNOTS = {"royston_parmar": None, "proportional_odds": 0}  # None: chosen by AIC over AUTO_KNOTS
MAX_KNOTS = 10
MAX_ITER = 200
SEPARATION = 40.0  # |β|·(range of x) beyond which a coefficient is running off to infinity


@dataclass(frozen=True, eq=False)
class SplineFit:
    distribution: str
    scale: str  # "hazard" or "odds"
    knots: np.ndarray  # log-time knots: k_min, interior..., k_max
    gamma: np.ndarray  # spline coefficients in log t
    beta: np.ndarray  # covariate coefficients (log hazard or log odds ratios)
    cov: np.ndarray  # covariance of (γ, β)
    loglik: float
    loglik0: float  # the same spline without covariates
    n: int
    n_events: int
    iterations: int
    selection: list[dict[str, object]] = field(default_factory=list)  # knot counts tried, when chosen by AIC


def basis(u: np.ndarray, knots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The spline basis [1, u, v_1..v_m] at u and its derivative in u."""
    u = np.asarray(u, dtype=float)
    kmin, kmax = knots[0], knots[-1]
    cols = [np.ones_like(u), u]
    dcols = [np.zeros_like(u), np.ones_like(u)]

    def cube(a: np.ndarray) -> np.ndarray:
        return np.where(a > 0, a, 0.0) ** 3

    def square(a: np.ndarray) -> np.ndarray:
        return np.where(a > 0, a, 0.0) ** 2

    for kj in knots[1:-1]:
        lam = (kmax - kj) / (kmax - kmin)
        cols.append(cube(u - kj) - lam * cube(u - kmin) - (1 - lam) * cube(u - kmax))
        dcols.append(3 * (square(u - kj) - lam * square(u - kmin) - (1 - lam) * square(u - kmax)))
    return np.column_stack(cols), np.column_stack(dcols)


def spline_slope_ok(gamma: np.ndarray, knots: np.ndarray) -> bool:
    """ds/du > 0 everywhere: on each segment between knots ds/du is a quadratic, so its minimum is at
    a segment end or where d²s/du² (linear there) crosses zero; beyond the boundaries it is constant."""
    pts = [knots]
    lo, hi = knots[:-1], knots[1:]
    d2_lo, d2_hi = _second(gamma, knots, lo, right=True), _second(gamma, knots, hi, right=False)
    cross = (d2_lo * d2_hi < 0)
    if cross.any():
        pts.append(lo[cross] + (hi - lo)[cross] * d2_lo[cross] / (d2_lo[cross] - d2_hi[cross]))
    u = np.concatenate(pts)
    _, d = basis(u, knots)
    return bool(np.all(d @ gamma > 0))


def _second(gamma: np.ndarray, knots: np.ndarray, u: np.ndarray, right: bool) -> np.ndarray:
    """d²s/du² at u, taken from inside the segment on the given side (it is continuous anyway)."""
    eps = 1e-12 * max(1.0, float(knots[-1] - knots[0]))
    u = u + (eps if right else -eps)
    kmin, kmax = knots[0], knots[-1]
    out = np.zeros_like(u)
    for j, kj in enumerate(knots[1:-1]):
        lam = (kmax - kj) / (kmax - kmin)
        v2 = 6 * (np.maximum(u - kj, 0) - lam * np.maximum(u - kmin, 0) - (1 - lam) * np.maximum(u - kmax, 0))
        out += gamma[j + 2] * v2
    return out


def _link(scale: str, eta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                np.ndarray]:
    """log S(η) and log(−d log S/dη), each with its first and second derivatives in η: the hazard is
    h = (−d log S/dη)·(ds/du)/t, so a failure adds log(−d log S/dη) + log S + log(ds/du) − log t."""
    if scale == "hazard":
        e = np.exp(eta)
        return -e, -e, -e, eta, np.ones_like(eta), np.zeros_like(eta)
    p = special.expit(eta)
    q = special.expit(-eta)
    return -np.logaddexp(0.0, eta), -p, -p * q, -np.logaddexp(0.0, -eta), q, -p * q


class _Problem:
    """The log-likelihood in internal coordinates: w = (u − k_min)/Δ, centred covariates."""

    def __init__(self, scale: str, knots_w: np.ndarray, w: np.ndarray, event: np.ndarray, x: np.ndarray,
                 w_start: np.ndarray | None, x_start: np.ndarray | None, const: float) -> None:
        b, d = basis(w, knots_w)
        self.scale = scale
        self.z = np.hstack([b, x])
        self.dz = np.hstack([d[event], np.zeros((int(event.sum()), x.shape[1]))])
        self.event = event
        self.zs = None
        if w_start is not None and w_start.size:
            self.zs = np.hstack([basis(w_start, knots_w)[0], x_start])
        self.const = const  # Σ_events (−log Δ − log t): the density is in t, comparable with other families

    def value(self, theta: np.ndarray) -> float:
        slope = self.dz @ theta
        if np.any(slope <= 0):
            return -math.inf
        eta = self.z @ theta
        with np.errstate(over="ignore", invalid="ignore"):
            ls, _, _, lh, _, _ = _link(self.scale, eta)
            ll = float(np.sum(np.log(slope)) + np.sum(lh[self.event]) + np.sum(ls) + self.const)
            if self.zs is not None:
                ll -= float(np.sum(_link(self.scale, self.zs @ theta)[0]))
        return ll if math.isfinite(ll) else -math.inf

    def derivatives(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        slope = self.dz @ theta
        eta = self.z @ theta
        _, d1, d2, _, h1, h2 = _link(self.scale, eta)
        w1 = d1 + np.where(self.event, h1, 0.0)
        w2 = d2 + np.where(self.event, h2, 0.0)
        grad = self.dz.T @ (1.0 / slope) + self.z.T @ w1
        hess = -(self.dz / slope[:, None]).T @ (self.dz / slope[:, None]) + (self.z * w2[:, None]).T @ self.z
        if self.zs is not None:
            _, s1, s2, _, _, _ = _link(self.scale, self.zs @ theta)
            grad -= self.zs.T @ s1
            hess -= (self.zs * s2[:, None]).T @ self.zs
        return grad, (hess + hess.T) / 2


# Newton with step halving (60 tries) along a Levenberg-shifted direction; converged when an exact
# step's predicted gain is below 1e-15 (1 + |ℓ|), or no step gains and the gain is below 1e-9 (1 + |ℓ|)
NEWTON = inference.NewtonRule(max_iter=MAX_ITER, tries=60, accept=1e-12, exhausted="stop", value_tol=None,
                              step_tol=None, gain_tol=1e-15, last_accept=1e-13, stall_gain=1e-9)


def _newton(problem: _Problem, theta: np.ndarray, field_name: str) -> tuple[np.ndarray, float, np.ndarray, int]:
    """Maximise by Newton steps with halving (a Levenberg shift where the Hessian is not negative definite)."""

    def direction(th: np.ndarray, grad: np.ndarray, hess: np.ndarray) -> inference.Direction:
        neg = -hess
        shift = 0.0
        while True:
            try:
                chol = np.linalg.cholesky(neg + shift * np.eye(th.size))
                break
            except np.linalg.LinAlgError:
                shift = max(2 * shift, 1e-8 * (1 + float(np.max(np.abs(np.diag(neg))))))
                if shift > 1e12:
                    raise InputError(field_name, "the likelihood has no maximum (a covariate that separates "
                                                 "failures from survivors?)") from None
        return inference.Direction(np.linalg.solve(chol.T, np.linalg.solve(chol, grad)), exact=shift == 0.0)

    fit = inference.newton(lambda th: (problem.value(th), None), theta,
                           derivatives=lambda th, _: problem.derivatives(th), direction=direction, rule=NEWTON)
    if fit.message == inference.NOT_FINITE:
        raise InputError(field_name, "no valid starting point for the spline model")
    if fit.message == inference.ITERATION_LIMIT:
        raise InputError(field_name, "the likelihood did not converge (a covariate that separates failures from "
                                     "survivors, or too few failures for this many knots)")
    if not fit.converged:  # no step gains, away from the maximum
        raise InputError(field_name, "the likelihood did not converge")
    assert fit.hessian is not None
    return fit.estimate, fit.log_likelihood, fit.hessian, fit.iterations


def interior_knots(log_event_times: np.ndarray, m: int) -> np.ndarray:
    """Interior knots at the centiles j/(m+1) of the uncensored log times (R's quantile type 7)."""
    if m == 0:
        return np.empty(0)
    return np.quantile(log_event_times, np.arange(1, m + 1) / (m + 1))


def _fit_knots(distribution: str, knots: np.ndarray, x: np.ndarray, logt: np.ndarray, event: np.ndarray,
               logs: np.ndarray | None, field_name: str, names: list[str] | None, with_null: bool = True,
               lines: dict[int, np.ndarray] | None = None,
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float, int]:
    """(γ, β, cov, ll, ll0, iterations) for given log-time knots; γ in log t, β for raw covariates.
    ll0 (the same spline without covariates) is NaN unless `with_null`; `lines` keeps the straight-line
    fits that start each spline (they do not depend on the interior knots) across calls."""
    scale = SCALES[distribution]
    kmin, span = float(knots[0]), float(knots[-1] - knots[0])
    kw = (knots - kmin) / span
    w = (logt - kmin) / span
    means = x.mean(axis=0) if x.shape[1] else np.empty(0)
    xc = x - means
    truncated = np.flatnonzero(np.isfinite(logs)) if logs is not None else np.empty(0, dtype=int)
    ws = (logs[truncated] - kmin) / span if truncated.size else None
    const = float(-event.sum() * math.log(span) - logt[event].sum())
    m = knots.size - 2
    # start: a Weibull-like line through the exponential rate (slope 1 in log t), spline terms 0
    rate = float(event.sum() / np.sum(np.exp(logt - logt.max()))) * math.exp(-logt.max())
    line = np.array([math.log(rate) + kmin, span])
    p = x.shape[1]

    def solve(xm: np.ndarray) -> tuple[np.ndarray, float, np.ndarray, int]:
        k = xm.shape[1]
        prob = _Problem(scale, kw, w, event, xm, ws, xm[truncated] if truncated.size else None, const)
        theta0 = np.concatenate([line, np.zeros(m + k)])
        # the straight line first (concave, safe), then the knots from it
        if m:
            th = (lines or {}).get(k)
            if th is None:
                lp = _Problem(scale, kw[[0, -1]], w, event, xm, ws, xm[truncated] if truncated.size else None,
                              const)
                th = _newton(lp, np.concatenate([line, np.zeros(k)]), field_name)[0]
                if lines is not None:
                    lines[k] = th
            theta0 = np.concatenate([th[:2], np.zeros(m), th[2:]])
        return _newton(prob, theta0, field_name)

    theta, ll, hess, iterations = solve(xc)
    # back to log t and raw covariates: s(u) = γ'0 + γ'1 (u − k_min)/Δ + Σ γ'_j v_j(u)/Δ³; η gains −means·β
    k = theta.size
    jac = np.eye(k)
    jac[0, 1] = -kmin / span
    jac[1, 1] = 1 / span
    for j in range(2, m + 2):
        jac[j, j] = span**-3
    jac[0, m + 2:] = -means
    theta_raw = jac @ theta
    gamma, beta = theta_raw[: m + 2], theta_raw[m + 2:]
    if p and not np.all(np.isfinite(beta)):
        raise InputError(field_name, "the likelihood did not converge")
    # A covariate that separates failures from survivors drives its coefficient off to infinity while the
    # likelihood creeps to its supremum, so Newton "converges" far out: a ratio of e^40 across the observed
    # range of one covariate is that, never a real effect.
    spread = np.abs(beta) * (x.max(axis=0) - x.min(axis=0)) if p else np.empty(0)
    if np.any(spread > SEPARATION):
        j = int(np.argmax(spread))
        name = names[j] if names else f"{j + 1}"
        raise InputError(field_name, f"the likelihood has no maximum: covariate {name!r} separates failures from "
                                     "survivors (its coefficient runs off to infinity)")
    try:
        cov_w = np.linalg.inv(-hess)
    except np.linalg.LinAlgError:
        raise InputError(field_name, "the information matrix is singular at the fit") from None
    if np.any(np.diag(cov_w) <= 0) or not np.all(np.isfinite(cov_w)):
        raise InputError(field_name, "the likelihood has no maximum (a covariate that separates failures from "
                                     "survivors?)")
    cov = jac @ cov_w @ jac.T
    ll0 = solve(np.empty((x.shape[0], 0)))[1] if with_null else math.nan
    return gamma, beta, (cov + cov.T) / 2, ll, ll0, iterations


def fit_spline(distribution: str, x: np.ndarray, stop: np.ndarray, event: np.ndarray,
               start: np.ndarray | None = None, knots: int | list[float] | None = None,
               field_name: str = "covariates", names: list[str] | None = None) -> SplineFit:
    """Fit `royston_parmar` or `proportional_odds`; `knots` is a count of interior knots (at centiles of
    the uncensored log times), their positions in time units, or None for the model's default."""
    if distribution not in SCALES:
        raise InputError("distribution", f"must be one of {', '.join(SCALES)}")
    if np.any(stop <= 0):
        raise InputError("mapping.x", f"{distribution} needs every time > 0 (the spline is in log time)")
    logt = np.log(stop)
    ev = logt[event]
    if np.unique(ev).size < 2:
        raise InputError("mapping.c", f"{distribution} needs failures at 2 or more distinct times")
    logs = None
    if start is not None:
        with np.errstate(divide="ignore"):
            logs = np.where(start > 0, np.log(np.maximum(start, 1e-300)), -np.inf)
    kmin, kmax = float(ev.min()), float(ev.max())
    if knots is None:
        knots = DEFAULT_KNOTS[distribution]
    n_events = int(event.sum())
    p = x.shape[1]
    if knots is not None:
        interior = _given_knots(knots, ev, kmin, kmax)
        if n_events < interior.size + 2 + p:
            raise InputError("options.knots", f"{interior.size} interior knots and {p} covariates need at least "
                                              f"{interior.size + 2 + p} failures (there are {n_events})")
        full = np.concatenate([[kmin], interior, [kmax]])
        gamma, beta, cov, ll, ll0, it = _fit_knots(distribution, full, x, logt, event, logs, field_name, names)
        if not spline_slope_ok(gamma, full):
            raise InputError("options.knots", "the fitted spline decreases somewhere (a cumulative hazard or odds "
                                              "cannot fall): use fewer knots")
        return SplineFit(distribution, SCALES[distribution], full, gamma, beta, cov, ll, ll0, x.shape[0], n_events,
                         it)
    # knots by AIC over AUTO_KNOTS interior knots
    tried: list[dict[str, object]] = []
    best: tuple[float, SplineFit] | None = None
    lines: dict[int, np.ndarray] = {}
    for m in AUTO_KNOTS:
        interior = interior_knots(ev, m)
        entry: dict[str, object] = {"interior_knots": m}
        tried.append(entry)
        if n_events < m + 3 + p:
            entry["refused"] = f"too few failures ({n_events}) for {m} knots and {p} covariates"
            continue
        if np.any(np.diff(np.concatenate([[kmin], interior, [kmax]])) <= 0):
            entry["refused"] = "tied failure times put two knots at one place"
            continue
        full = np.concatenate([[kmin], interior, [kmax]])
        try:
            gamma, beta, cov, ll, ll0, it = _fit_knots(distribution, full, x, logt, event, logs, field_name, names,
                                                       with_null=False, lines=lines)
        except InputError as exc:
            entry["refused"] = exc.rule
            continue
        if not spline_slope_ok(gamma, full):
            entry["refused"] = "the fitted spline decreases somewhere"
            continue
        aic = -2 * ll + 2 * (m + 2 + p)
        entry |= {"log_likelihood": ll, "aic": aic}
        fit = SplineFit(distribution, SCALES[distribution], full, gamma, beta, cov, ll, ll0, x.shape[0], n_events,
                        it)
        if best is None or aic < best[0]:
            best = (aic, fit)
    if best is None:
        reasons = {str(e["refused"]) for e in tried}
        if len(reasons) == 1:
            raise InputError(field_name, reasons.pop())
        raise InputError(field_name, "no spline with 1 to 4 interior knots could be fitted: " + "; ".join(
            f"{e['interior_knots']} knots: {e['refused']}" for e in tried))
    chosen = best[1]
    for e in tried:
        e["chosen"] = e["interior_knots"] == chosen.knots.size - 2
    ll0 = _fit_knots(distribution, chosen.knots, np.empty((x.shape[0], 0)), logt, event, logs, field_name, names,
                     with_null=False)[3]
    return SplineFit(**{**chosen.__dict__, "loglik0": ll0, "selection": tried})


def _given_knots(knots: object, ev: np.ndarray, kmin: float, kmax: float) -> np.ndarray:
    """Interior log-time knots from a count or from positions in time units."""
    if isinstance(knots, bool):
        raise InputError("options.knots", "must be a count of interior knots or an array of knot times")
    if isinstance(knots, int):
        if not 0 <= knots <= MAX_KNOTS:
            raise InputError("options.knots", f"must be 0..{MAX_KNOTS} interior knots")
        interior = interior_knots(ev, knots)
        if np.any(np.diff(np.concatenate([[kmin], interior, [kmax]])) <= 0):
            raise InputError("options.knots", f"tied failure times put two of {knots} knots at one place: use "
                                              "fewer knots or give their times")
        return interior
    if not isinstance(knots, (list, tuple)) or len(knots) > MAX_KNOTS:
        raise InputError("options.knots", f"must be a count of interior knots or an array of at most {MAX_KNOTS} "
                                          "knot times")
    values = []
    for j, v in enumerate(knots):
        v = check_number(v, f"options.knots[{j}]", 0.0, lo_open=True)  # a time
        values.append(math.log(v))
    interior = np.array(values)
    lo, hi = math.exp(kmin), math.exp(kmax)
    if np.any(np.diff(interior) <= 0):
        raise InputError("options.knots", "knot times must increase")
    if interior.size and (interior[0] <= kmin or interior[-1] >= kmax):
        raise InputError("options.knots", f"knot times must lie strictly between the first and last failure "
                                          f"times ({lo:g} and {hi:g}), the boundary knots")
    return interior


def linear_predictor(fit_gamma: np.ndarray, knots: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s(log t) and ds/du at times t > 0."""
    b, d = basis(np.log(t), knots)
    return b @ fit_gamma, d @ fit_gamma


def curves(scale: str, gamma: np.ndarray, knots: np.ndarray, xb: float, t: np.ndarray,
           ) -> dict[str, np.ndarray]:
    """S, H, h, f at times t for a unit with xβ = xb (t = 0 gives S = 1, H = 0)."""
    t = np.asarray(t, dtype=float)
    pos = t > 0
    tp = np.where(pos, t, 1.0)
    s_u, ds = linear_predictor(gamma, knots, tp)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        eta = s_u + xb
        log_s, _, _, lh, _, _ = _link(scale, eta)
        # h = −d log S/dt = −(d log S/dη)·(ds/du)/t
        log_h = lh + np.log(ds) - np.log(tp)
        surv = np.where(pos, np.exp(log_s), 1.0)
        cum = np.where(pos, -log_s, 0.0)
        hazard = np.exp(log_h)
        density = np.exp(log_h + log_s)
    return {"sf": surv, "Hf": cum, "hf": hazard, "df": density}


def hazard_at_zero(gamma: np.ndarray, xb: float) -> float:
    """The limit of h(t) (and of f(t)) as t → 0: below the first knot s is the line γ0 + γ1·log t, so on
    either scale h ≈ γ1·e^{γ0 + xβ}·t^{γ1 − 1}: 0, a constant, or infinite as γ1 is above, at or below 1."""
    g0, g1 = float(gamma[0]), float(gamma[1])
    if g1 > 1:
        return 0.0
    return g1 * math.exp(g0 + xb) if g1 == 1 else math.inf


def quantile_time(scale: str, gamma: np.ndarray, knots: np.ndarray, xb: float, q: float) -> float:
    """The time by which a share q of units with xβ = xb has failed. s is increasing and linear beyond
    the boundary knots, so the root is closed form in a tail and bisection in log t between them."""
    goal = (math.log(-math.log1p(-q)) if scale == "hazard" else math.log(q / (1 - q))) - xb

    def s_at(u: float) -> tuple[float, float]:
        b, d = basis(np.array([u]), knots)
        return float((b @ gamma)[0]), float((d @ gamma)[0])

    for edge in (float(knots[0]), float(knots[-1])):
        value, slope = s_at(edge)
        if (edge == knots[0] and goal <= value) or (edge == knots[-1] and goal >= value):
            return math.exp(edge + (goal - value) / slope)
    lo, hi = float(knots[0]), float(knots[-1])
    for _ in range(200):
        mid = (lo + hi) / 2
        if s_at(mid)[0] < goal:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-14 * max(1.0, abs(mid)):
            break
    return math.exp((lo + hi) / 2)


def survival(scale: str, gamma: np.ndarray, knots: np.ndarray, xb: np.ndarray, t: np.ndarray) -> np.ndarray:
    """S(t | x) for linear predictors xβ (rows) at times t (columns); S = 1 at t = 0."""
    pos = t > 0
    s_u, _ = linear_predictor(gamma, knots, np.where(pos, t, 1.0))
    with np.errstate(over="ignore"):
        log_s = _link(scale, s_u[None, :] + xb[:, None])[0]
    return np.where(pos[None, :], np.exp(log_s), 1.0)
