"""A random-effects (linear mixed) path model, fitted by ML or REML, and its failure-time law.

On the transformed axes, unit i's reading j is h(y_ij) = A_i + B_i·t_ij + e_ij with
(A_i, B_i) ~ N((μ_A, μ_B), Σ) across units and e_ij ~ N(0, σ²) measurement noise. With
`random_intercept` false the intercept is common (A_i = μ_A) and only the slope varies
(Σ = diag(0, σ_B²)); else Σ has σ_A, σ_B and their correlation ρ. The marginal law of a unit's
readings is N(X_i μ, X_i Σ X_iᵀ + σ² I); μ is profiled out by generalised least squares and the
variance components maximise the (restricted) likelihood. The unit count, not the readings,
carries the variance components, so intervals are Wald intervals on log σ and atanh ρ from the
profile likelihood's Hessian, and on μ from (Σ X_iᵀ V_i⁻¹ X_i)⁻¹.

The failure-time distribution is the random line's first crossing (`crossing.LineCrossing`),
so it needs time to enter the path untransformed (linear or exponential paths).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from bathtub import inference
from bathtub.degradation.crossing import LineCrossing
from bathtub.degradation.paths import Path, Readings, check_direction, unit_lines
from bathtub.errors import InputError


@dataclass(frozen=True)
class _Stats:
    """Per-unit sufficient statistics of X = [1, t] and z = h(y)."""

    xtx: np.ndarray  # (m, 2, 2)
    xtz: np.ndarray  # (m, 2)
    ztz: np.ndarray  # (m,)
    n: np.ndarray  # (m,)


def _stats(gt: np.ndarray, hz: np.ndarray, start: np.ndarray) -> _Stats:
    idx = np.repeat(np.arange(len(start) - 1), np.diff(start))
    m = len(start) - 1

    def s(v: np.ndarray) -> np.ndarray:
        return np.bincount(idx, weights=v, minlength=m)

    n = np.diff(start).astype(float)
    st, stt = s(gt), s(gt * gt)
    xtx = np.stack([np.stack([n, st], -1), np.stack([st, stt], -1)], -2)
    xtz = np.stack([s(hz), s(gt * hz)], -1)
    return _Stats(xtx, xtz, s(hz * hz), n)


def _chol(phi: np.ndarray, random_intercept: bool) -> tuple[np.ndarray, float]:
    """(L with Σ = L Lᵀ, σ²) from the unconstrained vector (log σ_B, log σ[, log σ_A, atanh ρ])."""
    sb, se = math.exp(phi[0]), math.exp(phi[1])
    if not random_intercept:
        return np.array([[0.0], [sb]]), se * se
    sa, rho = math.exp(phi[2]), math.tanh(phi[3])
    return np.array([[sa, 0.0], [rho * sb, sb * math.sqrt(max(1.0 - rho * rho, 0.0))]]), se * se


def _profile(phi: np.ndarray, st: _Stats, random_intercept: bool, reml: bool) -> tuple[float, np.ndarray, np.ndarray]:
    """-2 log-likelihood (up to a constant) with μ profiled out; μ̂ and its covariance."""
    L, s2 = _chol(phi, random_intercept)
    r = L.shape[1]
    # V⁻¹ = (I − U M⁻¹ Uᵀ)/σ², U = X L, M = σ² I + Uᵀ U (Woodbury); |V| = σ^{2n} |M| / σ^{2r}
    utu = np.einsum("ji,mjk,kl->mil", L, st.xtx, L)
    M = s2 * np.eye(r) + utu
    Minv = np.linalg.inv(M)
    utx = np.einsum("ji,mjk->mik", L, st.xtx)  # Lᵀ XᵀX
    utz = np.einsum("ji,mj->mi", L, st.xtz)
    xvx = (st.xtx - np.einsum("mij,mjk,mkl->mil", utx.transpose(0, 2, 1), Minv, utx)) / s2
    xvz = (st.xtz - np.einsum("mji,mjk,mk->mi", utx, Minv, utz)) / s2
    zvz = (st.ztz - np.einsum("mi,mij,mj->m", utz, Minv, utz)) / s2
    A, bvec = xvx.sum(0), xvz.sum(0)
    cov = np.linalg.inv(A)
    mu = cov @ bvec
    quad = float(zvz.sum() - 2 * mu @ bvec + mu @ A @ mu)
    logdet = float(np.sum(st.n) * math.log(s2) + np.sum(np.linalg.slogdet(M)[1]) - len(st.n) * r * math.log(s2))
    val = logdet + quad
    if reml:
        val += float(np.linalg.slogdet(A)[1])
    return val, mu, cov


def fit_random_effects(
    path: Path,
    readings: Readings,
    *,
    random_intercept: bool = False,
    method: str = "reml",
    confidence: float = 0.95,
    fields: tuple[str, str] = ("x", "y"),
) -> dict[str, Any]:
    """Fit the mixed model; the record of its parameters with Wald intervals."""
    if method not in ("ml", "reml"):
        raise InputError("method", "must be ml or reml")
    if not 0.5 <= confidence < 1.0:
        raise InputError("confidence", "must lie in [0.5, 1)")
    m = len(readings.units)
    need = 3 if not random_intercept else 4
    if m < need:
        raise InputError("mapping.i", f"a random-effects model needs at least {need} units (got {m})")
    gt, hz = readings.transformed(path, fields)
    # Centre and scale both axes: the fit is then scale-free, and the results transform back exactly.
    t_s = float(np.max(np.abs(gt))) or 1.0
    z_c = float(np.mean(hz))
    z_s = float(np.std(hz)) or 1.0
    st = _stats(gt / t_s, (hz - z_c) / z_s, readings.start)
    lines = unit_lines(path, readings, fields=fields)
    a_i, b_i = (lines[:, 0] - z_c) / z_s, lines[:, 1] * t_s / z_s
    n_tot = float(np.sum(st.n))
    rss = float(np.sum(lines[:, 2])) / z_s**2
    se0 = math.sqrt(max(rss / max(n_tot - 2 * m, 1.0), 1e-12))
    sb0 = max(float(np.std(b_i)), 1e-3)
    phi0 = [math.log(sb0), math.log(se0)]
    if random_intercept:
        phi0 += [math.log(max(float(np.std(a_i)), 1e-3)), 0.0]
    reml = method == "reml"

    def f(phi: np.ndarray) -> float:
        try:
            return _profile(phi, st, random_intercept, reml)[0]
        except np.linalg.LinAlgError:
            return math.inf

    best = None
    for start in (np.array(phi0), np.array(phi0) + 0.5):
        # BFGS, then Nelder-Mead from where it stopped (the REML surface is flat near its top)
        res = inference.maximise(lambda p: -f(p), start, covariance=False,
                                 stages=(inference.Stage("BFGS", {"gtol": 1e-7, "maxiter": 400}),
                                         inference.Stage("Nelder-Mead", {"xatol": 1e-9, "fatol": 1e-11,
                                                                         "maxiter": 2000})))
        if best is None or res.log_likelihood > best.log_likelihood:
            best = res
    assert best is not None
    phi = best.estimate
    val, mu, cov_mu = _profile(phi, st, random_intercept, reml)
    H = inference.hessian(f, phi, 1e-4) / 2.0  # −log L = val / 2
    try:
        cov_phi = np.linalg.inv(H)
        if np.any(np.diag(cov_phi) <= 0):
            cov_phi = None
    except np.linalg.LinAlgError:
        cov_phi = None
    zq = inference.z(confidence)
    # back to the data's scales: A = z_c + z_s·A', B = z_s/t_s·B', σ's likewise
    scale_a, scale_b = z_s, z_s / t_s
    params: list[dict[str, Any]] = []

    for i, (name, c, s) in enumerate((("mu_a", z_c, scale_a), ("mu_b", 0.0, scale_b))):
        v, se = c + s * float(mu[i]), s * math.sqrt(float(cov_mu[i, i]))
        params.append(inference.row(name, v, se, zq=zq))
    names = [("sd_b", scale_b, "log"), ("sigma", scale_a, "log")]
    if random_intercept:
        names += [("sd_a", scale_a, "log"), ("rho", 1.0, "atanh")]
    for i, (name, s, kind) in enumerate(names):
        se_phi = None if cov_phi is None else math.sqrt(float(cov_phi[i, i]))
        if kind == "log":
            params.append(inference.row(name, s * math.exp(phi[i]), se_phi, scale="log", zq=zq))
        else:  # a correlation: bounds through tanh of the fitted atanh, which is phi itself
            v = math.tanh(phi[i])
            params.append(inference.row(
                name, v, None if se_phi is None else (1 - v * v) * se_phi,
                limits=None if se_phi is None else (math.tanh(phi[i] - zq * se_phi), math.tanh(phi[i] + zq * se_phi))))
    # log-likelihood on the data's own scales (the fit ran on centred, scaled axes): the
    # Jacobian of z -> z/z_s, and for REML log|Σ XᵀV⁻¹X| in the original time and value units.
    const = n_tot - (2 if reml else 0)
    ll = -0.5 * (val + const * math.log(2 * math.pi)) - n_tot * math.log(z_s)
    if reml:
        ll += 2 * math.log(z_s) - math.log(t_s)
    return {"params": params, "method": method, "random_intercept": random_intercept, "confidence": confidence,
            "log_likelihood": ll, "units": len(readings.units), "readings": int(n_tot),
            "converged": best.converged or math.isfinite(best.log_likelihood)}


def values(record: dict[str, Any]) -> dict[str, float]:
    return {p["name"]: float(p["value"]) for p in record["params"]}


def population_life(path: Path, record: dict[str, Any], threshold: float, direction: str) -> LineCrossing:
    """The failure-time distribution the fitted random effects imply (a new unit's life)."""
    if not path.time_linear:
        raise InputError("path", "a random-effects life needs time untransformed (linear or exponential path)")
    v = values(record)
    u = float(path.h(np.array([threshold]), "threshold")[0])
    return LineCrossing(v["mu_a"], v["mu_b"], v.get("sd_a", 0.0), v["sd_b"], v.get("rho", 0.0), u,
                        check_direction(direction))
