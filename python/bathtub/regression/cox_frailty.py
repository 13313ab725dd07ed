"""Cox proportional hazards with a shared gamma frailty, as R's
`coxph(Surv(t, d) ~ x + frailty(g, distribution = "gamma"))`.

Unit j of group i has hazard Z_i·h0(t)·e^{xβ}, Z_i ~ Gamma(mean 1, variance θ). Following
Therneau, Grambsch & Pankratz (2003), for a fixed θ the log frailties ω_i = log Z_i enter as
coefficients of the partial likelihood with the gamma penalty

    PPL(β, ω) = ℓ(β, ω) − (1/θ)·Σ_i (e^{ω_i} − ω_i)

whose maximiser is the EM solution of the gamma frailty model. θ is then chosen to maximise the
integrated ("I-") log-likelihood R's `frailty.controlgam` uses,

    I(θ) = ℓ(β̂_θ, ω̂_θ) + ν·Σ_i ω̂_i + Σ_i [ log Γ(ν + d_i) − log Γ(ν) − d_i log(ν + d_i) + d_i − ν log(1 + d_i θ) ],
    ν = 1/θ, d_i the failures of group i (ℓ + νΣω is R's penalised log-likelihood PPL + ν·q, q groups),

which is the Cox partial likelihood at θ = 0. R stops its search for θ when I changes by less
than a relative 1e-5 between its steps; we run Brent's method on log θ to 1e-9, so our θ is the
maximiser R's iterations approach (`frailty(g, eps = 1e-10)` in R gives the same θ).

Standard errors are R's: `se` from the inverse of the penalised information, `se2` from the
sandwich H⁻¹(H − P)H⁻¹ (P the penalty's second derivative); with more than 5 groups R keeps
only the diagonal of the frailty–frailty block of the information (its `sparse` computation),
and so do we, so the figures equal R's. The frailty variance's standard error is from the
curvature of I(θ) at θ̂ (central differences), and θ = 0 is tested by the likelihood ratio
2(I(θ̂) − ℓ_cox) referred to ½χ²₀ + ½χ²₁.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats
from scipy.sparse import linalg as sparse_linalg

from bathtub import inference
from bathtub.errors import InputError
from bathtub.regression import cox, risksets
from bathtub.regression.frailty import group_codes

SPARSE_ABOVE = 5  # R's frailty(): sparse = (number of groups > 5)
# event times × groups held at once: the information's group blocks are dense in them, so the fit's
# time grows with this product (5,000 rows in 250 groups, 1.0e6 cells: 17 s on a loaded 2-core machine)
MAX_CELLS = 3_000_000
THETA_MAX = 1e4


@dataclass(frozen=True, eq=False)
class CoxFrailtyFit:
    names: list[str]
    beta: np.ndarray
    var: np.ndarray  # R's var: inverse penalised information, β block
    var2: np.ndarray  # R's var2: sandwich
    theta: float
    theta_se: float | None
    theta_ci: tuple[float, float | None]
    ilik: float  # integrated log-likelihood at θ̂
    loglik: float  # partial log-likelihood with the frailties as offsets
    ppl: float  # penalised partial log-likelihood
    loglik_cox: float  # the Cox model (θ = 0)
    lr_theta: float  # 2(I(θ̂) − ℓ_cox)
    omega: np.ndarray  # log frailty per group
    groups: list[str]
    frailty_df: float  # R's degrees of freedom of the frailty term
    means: np.ndarray
    baseline_time: np.ndarray
    baseline_cumhaz: np.ndarray  # at the covariate means and frailty 1
    linear_predictor: np.ndarray  # (x − means)β + ω per row
    history: list[tuple[float, float]]  # (θ, I(θ)) evaluated
    n: int
    n_events: int
    ties: str
    iterations: int


def gamma_correction(d: np.ndarray, theta: float) -> float:
    """I(θ) − ℓ − νΣω: Σ_i log Γ(ν+d_i) − log Γ(ν) − d_i log(ν+d_i) + d_i − ν log(1+d_iθ), in θ-stable form."""
    if theta <= 0:
        return 0.0
    d = d[d > 0].astype(np.int64)
    term1 = float(np.sum(d - np.log1p(d * theta) / theta))
    # Σ_{k<d} log((ν+k)/(ν+d)) = Σ_{k<d} log1p((k−d)θ/(1+dθ)), one term per failure
    dk = np.repeat(d, d).astype(float)
    k = np.arange(dk.size) - np.repeat(np.cumsum(d) - d, d)
    term2 = float(np.sum(np.log1p((k - dk) * theta / (1 + dk * theta))))
    return term1 + term2


@dataclass
class _Problem:
    s: risksets.Stratum
    codes: np.ndarray
    q: int
    efron: bool
    dead_codes: np.ndarray
    d: np.ndarray


def _by_group(s: risksets.Stratum, w: np.ndarray, codes: np.ndarray, q: int) -> np.ndarray:
    """Σ of w over the rows of each group at risk at each event time → (times, groups)."""
    g = s.times.size
    b = np.bincount(s.k_stop * q + codes, w, (g + 1) * q).reshape(g + 1, q)
    if s.k_start is not None:
        b -= np.bincount(s.k_start * q + codes, w, (g + 1) * q).reshape(g + 1, q)
    return np.cumsum(b[::-1], axis=0)[::-1][1:]


def _evaluate(pb: _Problem, beta: np.ndarray, omega: np.ndarray, theta: float,
              full: bool) -> tuple[float, float, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                   risksets.Terms, Callable[[np.ndarray], np.ndarray] | None]:
    """ℓ, PPL, gradient (ω then β) of PPL, the penalised information blocks D (ω,ω), E (ω,β), A (β,β) with D
    full up to 5 groups and its diagonal above (R's sparse form), and then the full D as a product."""
    s, q = pb.s, pb.q
    eta = (s.x @ beta if beta.size else np.zeros(s.x.shape[0])) + omega[pb.codes]
    ll, grad_b, hess_b, t = risksets.evaluate(s, eta, pb.efron)
    span = risksets.at_risk_spans(s, t.c1)
    v = t.w * span
    dp, gi = s.death_pos, s.death_time
    wc2 = t.w[dp] * t.c2[gi]
    r = -v
    r[dp] += 1.0 + wc2
    nu = 1.0 / theta
    eo = np.exp(omega)
    grad_w = np.bincount(pb.codes, r, q) - nu * (eo - 1.0)
    penalty = nu * float(np.sum(eo - omega))
    # information: Σ v z zᵀ − Σ_deaths w c2 z zᵀ − Σ_t [e1 S1 S1ᵀ − e2 (S1 D1ᵀ + D1 S1ᵀ) + e3 D1 D1ᵀ]
    sg = _by_group(s, t.w, pb.codes, q)
    g = s.times.size
    dg = np.bincount(gi * q + pb.dead_codes, t.w[dp], g * q).reshape(g, q)
    second = np.bincount(pb.codes, v, q) - np.bincount(pb.dead_codes, wc2, q)
    if full:
        cross = (sg * t.e2[:, None]).T @ dg
        dmat = np.diag(second) - ((sg * t.e1[:, None]).T @ sg - cross - cross.T + (dg * t.e3[:, None]).T @ dg)
    else:
        dmat = second - np.sum(t.e1[:, None] * sg * sg - 2 * t.e2[:, None] * sg * dg + t.e3[:, None] * dg * dg, 0)
    p = beta.size
    if p:
        xs = s.x
        sec = np.column_stack([np.bincount(pb.codes, v * xs[:, j], q)
                               - np.bincount(pb.dead_codes, wc2 * xs[dp, j], q) for j in range(p)])
        emat = sec - ((sg * t.e1[:, None]).T @ t.s1 - (sg * t.e2[:, None]).T @ t.d1
                      - (dg * t.e2[:, None]).T @ t.s1 + (dg * t.e3[:, None]).T @ t.d1)
    else:
        emat = np.zeros((q, 0))
    pen2 = nu * eo
    dmat = dmat + (np.diag(pen2) if full else pen2)
    exact = None
    if not full:
        diag_part = second + pen2
        e1, e2, e3 = t.e1, t.e2, t.e3

        def exact(vw: np.ndarray) -> np.ndarray:
            """The full ω–ω block of the penalised information times vw, in O(times × groups)."""
            sv, dv = sg @ vw, dg @ vw
            return diag_part * vw - (sg.T @ (e1 * sv - e2 * dv) - dg.T @ (e2 * sv - e3 * dv))

    return ll, ll - penalty, grad_w, grad_b, dmat, emat, -hess_b, t, exact


def _solve(dmat: np.ndarray, emat: np.ndarray, amat: np.ndarray, gw: np.ndarray,
           gb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Newton step of the block system [[D, E], [Eᵀ, A]] (D diagonal as a vector, or full)."""
    if dmat.ndim == 1:
        dinv_e = emat / dmat[:, None]
        dinv_g = gw / dmat
    else:
        dinv_e = np.linalg.solve(dmat, emat) if emat.size else emat
        dinv_g = np.linalg.solve(dmat, gw)
    if gb.size:
        schur = amat - emat.T @ dinv_e
        step_b = np.linalg.solve(schur, gb - emat.T @ dinv_g)
    else:
        step_b = gb
    step_w = dinv_g - dinv_e @ step_b
    return step_w, step_b


def _newton_cg(dmat: np.ndarray, emat: np.ndarray, amat: np.ndarray, exact: Callable[[np.ndarray], np.ndarray],
               gw: np.ndarray, gb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exact Newton step by conjugate gradients on products with the full information, preconditioned
    by its diagonal (R's sparse matrix is only that diagonal: as a Newton direction it converges slowly
    along the groups' common shift)."""
    q, p = dmat.size, gb.size

    def product(v: np.ndarray) -> np.ndarray:
        vw, vb = v[:q], v[q:]
        return np.concatenate([exact(vw) + emat @ vb, emat.T @ vw + amat @ vb])

    diag = np.concatenate([dmat, np.diag(amat)])
    op = sparse_linalg.LinearOperator((q + p, q + p), matvec=product, dtype=float)
    pre = sparse_linalg.LinearOperator((q + p, q + p), matvec=lambda v: v / diag, dtype=float)
    rhs = np.concatenate([gw, gb])
    step, info = sparse_linalg.cg(op, rhs, rtol=1e-12, atol=0.0, maxiter=50 * (q + p), M=pre)
    if info != 0 or not np.all(np.isfinite(step)):
        return _solve(dmat, emat, amat, gw, gb)  # the sparse direction: slower, still uphill
    return step[:q], step[q:]


# Newton with step halving on PPL: a step that still loses after 40 halvings stops the fit; converged
# when PPL moves by 1e-13 relative and no coefficient or log frailty by 1e-9
NEWTON = inference.NewtonRule(max_iter=199, tries=41, accept=1e-13, exhausted="stop", value_tol=1e-13,
                              step_tol=1e-9, relative_step=False)


def _fit_fixed(pb: _Problem, theta: float, beta: np.ndarray, omega: np.ndarray,
               field: str) -> tuple[np.ndarray, np.ndarray, float, float, int]:
    """Maximise PPL at a fixed θ > 0: Newton with step halving, exact steps (dense up to 5 groups, by
    conjugate gradients above). The coordinates are (ω, β), the order of the gradient."""
    full = pb.q <= SPARSE_ABOVE
    q = pb.q

    def value(wb: np.ndarray) -> tuple[float, tuple]:
        ll, ppl, gw, gb, dmat, emat, amat, _, exact = _evaluate(pb, wb[q:], wb[:q], theta, full)
        return ppl, (np.concatenate([gw, gb]), (dmat, emat, amat, exact), ll)

    def direction(wb: np.ndarray, grad: np.ndarray, blocks: tuple) -> inference.Direction:
        dmat, emat, amat, exact = blocks
        gw, gb = grad[:q], grad[q:]
        try:
            sw, sb = _solve(dmat, emat, amat, gw, gb) if exact is None else _newton_cg(dmat, emat, amat, exact,
                                                                                       gw, gb)
        except np.linalg.LinAlgError:
            raise InputError(field, "the penalised information is singular (a covariate constant within the "
                                    "risk sets?)") from None
        return inference.Direction(np.concatenate([sw, sb]))

    fit = inference.newton(value, np.concatenate([omega, beta]), direction=direction, rule=NEWTON)
    if not fit.converged:
        raise InputError(field, f"the penalised partial likelihood did not converge at θ = {theta:.4g}")
    return fit.estimate[q:], fit.estimate[:q], fit.state[2], fit.log_likelihood, fit.iterations


def fit_cox_frailty(x: np.ndarray, names: list[str], stop: np.ndarray, event: np.ndarray,
                    group: np.ndarray | list[object], *, start: np.ndarray | None = None, ties: str = "efron",
                    field: str = "covariates") -> CoxFrailtyFit:
    """Gamma-frailty Cox model with θ maximising R's integrated likelihood."""
    if ties not in ("efron", "breslow"):
        raise InputError("cox_options.tie_method", "cox_frailty takes efron or breslow ties (as R's coxph with "
                                                   "frailty)")
    x = np.asarray(x, dtype=float)
    stop = np.asarray(stop, dtype=float)
    event = np.asarray(event, dtype=bool)
    codes, levels = group_codes(group)
    q = len(levels)
    n, p = x.shape
    if not event.any():
        raise InputError("mapping.c", "no failures: a Cox model needs at least one event")
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):  # rejected trial steps, as below
        base = cox.fit_cox(x, names, stop, event, start=start, ties=ties, robust=False,
                           field_names={"design": field})
    means = x.mean(axis=0)
    xc = x - means
    s = risksets.prepare(xc, start, stop, event, np.arange(n))
    assert s is not None
    if s.times.size * q > MAX_CELLS:
        raise InputError("mapping.group", f"{q} groups × {s.times.size} distinct failure times is more than this "
                                          f"fit holds ({MAX_CELLS:,} cells; more would take minutes); merge groups, "
                                          "round the times, or fit weibull_frailty, whose cost grows only with the "
                                          "rows")
    d = np.bincount(codes, event.astype(float), q)
    pb = _Problem(s, codes, q, ties == "efron", codes[s.death_pos], d)
    # trial Newton steps may underflow a risk set's weights; such steps are rejected (non-finite PPL)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return _fit(pb, base, names, levels, q, d, means, s, codes, event, ties, n, p, field)


def _fit(pb: _Problem, base: cox.CoxFit, names: list[str], levels: list[str], q: int, d: np.ndarray,
         means: np.ndarray, s: risksets.Stratum, codes: np.ndarray, event: np.ndarray, ties: str, n: int, p: int,
         field: str) -> CoxFrailtyFit:
    cache: dict[float, tuple[np.ndarray, np.ndarray, float, float, int]] = {}
    history: list[tuple[float, float]] = [(0.0, base.loglik)]
    state = {"beta": base.beta.copy(), "omega": np.zeros(q), "iters": 0}

    def at(theta: float) -> float:
        if theta not in cache:
            nearest = min(cache, key=lambda k: abs(math.log(k / theta)), default=None)
            b0, w0 = (cache[nearest][0], cache[nearest][1]) if nearest is not None else (state["beta"],
                                                                                       state["omega"])
            fit = _fit_fixed(pb, theta, b0, w0, field)
            cache[theta] = fit
            state["iters"] += fit[4]
            history.append((theta, fit[3] + q / theta + gamma_correction(d, theta)))
        return cache[theta][3] + q / theta + gamma_correction(d, theta)

    # Bracket the maximum of I(θ) on a doubling/halving grid from θ = 1, then Brent on log θ.
    theta = 1.0
    if at(2.0) > at(1.0):
        while at(2 * theta) > at(theta) and theta < THETA_MAX:
            theta *= 2
    else:
        while at(theta / 2) > at(theta) and theta > 1e-6:
            theta /= 2
    boundary = False
    if theta <= 1e-6 or theta >= THETA_MAX:
        if theta >= THETA_MAX:
            raise InputError("mapping.group", "the frailty variance runs off to infinity (groups that almost "
                                              "separate failures from survivors); fewer, larger groups may help")
        boundary = True
    if not boundary:
        res = optimize.minimize_scalar(lambda u: -at(math.exp(u)), bounds=(math.log(theta / 2), math.log(theta * 2)),
                                       method="bounded", options={"xatol": 1e-9})
        theta = math.exp(float(res.x))
        if at(theta) <= base.loglik:
            boundary = True
    if boundary:
        return _boundary_fit(base, names, levels, q, d, history, means, n, event, ties)
    beta, omega, ll, ppl, _ = cache[theta]
    ilik = at(theta)
    full = q <= SPARSE_ABOVE
    _, _, _, _, dmat, emat, amat, _, _ = _evaluate(pb, beta, omega, theta, full)
    var, var2, fdf = _variances(dmat, emat, amat, np.exp(omega) / theta)
    # θ's standard error from the curvature of I at θ̂, its interval from the profile
    h = 5e-3 * theta
    curv = (at(theta + h) - 2 * ilik + at(theta - h)) / h**2
    theta_se = 1 / math.sqrt(-curv) if curv < 0 else None
    drop = float(stats.chi2.ppf(0.95, 1)) / 2
    lo = 0.0
    if at(1e-6) < ilik - drop:
        lo = math.exp(optimize.brentq(lambda u: at(math.exp(u)) - (ilik - drop), math.log(1e-6), math.log(theta),
                                      xtol=1e-4))
    hi: float | None = None
    top = theta
    while top < THETA_MAX and at(top * 2) >= ilik - drop:
        top *= 2
    if top < THETA_MAX:
        hi = math.exp(optimize.brentq(lambda u: at(math.exp(u)) - (ilik - drop), math.log(top),
                                      math.log(top * 2), xtol=1e-4))
    eta = (s.x @ beta if p else np.zeros(n)) + omega[codes]
    shift_terms = risksets.evaluate(s, eta, False, hessian=False)[3]
    steps = risksets.hazard_steps(s, shift_terms, efron=False)
    return CoxFrailtyFit(list(names), beta, var, var2, theta, theta_se, (lo, hi), ilik, ll, ppl, base.loglik,
                         max(0.0, 2 * (ilik - base.loglik)), omega, levels, fdf, means, s.times, np.cumsum(steps),
                         eta, sorted(history), n, int(event.sum()), ties, state["iters"])


def _variances(dmat: np.ndarray, emat: np.ndarray, amat: np.ndarray,
               pen1: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """R's coxpenal.df: var = [H⁻¹]_ββ, var2 = var − Bᵀ diag(pen1) B with B = [H⁻¹]_ωβ, and the frailty
    term's degrees of freedom q − Σ diag([H⁻¹]_ωω)·pen1."""
    q = pen1.size
    dinv = np.diag(1 / dmat) if dmat.ndim == 1 else np.linalg.inv(dmat)
    if amat.size:
        c = np.linalg.inv(amat - emat.T @ dinv @ emat)
        b = -dinv @ emat @ c
        fvar = np.diag(dinv) + np.einsum("ij,jk,ik->i", dinv @ emat, c, dinv @ emat)
        var2 = c - b.T @ (pen1[:, None] * b)
    else:
        c = var2 = np.zeros((0, 0))
        fvar = np.diag(dinv)
    return (c + c.T) / 2, (var2 + var2.T) / 2, float(q - np.sum(fvar * pen1))


def _boundary_fit(base: cox.CoxFit, names: list[str], levels: list[str], q: int, d: np.ndarray,
                  history: list[tuple[float, float]], means: np.ndarray, n: int, event: np.ndarray,
                  ties: str) -> CoxFrailtyFit:
    """θ̂ = 0: the groups share nothing beyond the covariates, and the fit is the plain Cox fit."""
    b = base.baseline[0]
    return CoxFrailtyFit(list(names), base.beta, base.var, base.var, 0.0, None, (0.0, None), base.loglik,
                         base.loglik, base.loglik, base.loglik, 0.0, np.zeros(q), levels, 0.0, means,
                         np.asarray(b["time"]), np.asarray(b["cumhaz"]), base.linear_predictor, sorted(history), n,
                         int(event.sum()), ties, base.iterations)


def lr_p(stat: float) -> float:
    """p of the likelihood ratio for a variance on its boundary 0: ½χ²₀ + ½χ²₁."""
    return 1.0 if stat <= 0 else float(0.5 * stats.chi2.sf(stat, 1))


def marginal_survival(cumhaz: np.ndarray, theta: float) -> np.ndarray:
    """Population-averaged survival (1 + θH)^{−1/θ} from a frailty-1 cumulative hazard H."""
    if theta <= 0:
        return np.exp(-cumhaz)
    return np.exp(-np.log1p(theta * cumhaz) / theta)

