"""Proportional-intensity power-law process: system q with covariates z_q has intensity
rho_q(t) = lambda exp(z_q . gamma) beta t^(beta - 1) (Lawless 1987). exp(gamma_k) is the
ratio of failure intensities per unit of covariate k, whatever the age."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import stats

from bathtub import inference
from bathtub.errors import InputError
from bathtub.recurrent.data import EventData
from bathtub.recurrent.nhpp import covariance_from_information, power_law
from bathtub.validate import check_number


def _design(data: EventData) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    z = np.array([s.covariates for s in data.systems], dtype=float)
    counts = np.array([s.n for s in data.systems], dtype=float)
    ends = np.array([s.end for s in data.systems], dtype=float)
    sum_log = np.array([float(np.log(s.times).sum()) if s.n else 0.0 for s in data.systems])
    return z, counts, ends, sum_log


def fit(data: EventData, confidence: float) -> dict[str, Any]:
    """Coefficients with standard errors, Wald intervals and intensity ratios, and the
    likelihood-ratio test of all coefficients = 0 against the plain power law."""
    names = data.covariate_names
    scale = max(s.end for s in data.systems)
    z, counts, ends, sum_log = _design(data)
    if np.linalg.matrix_rank(np.column_stack([np.ones(len(z)), z])) < z.shape[1] + 1:
        raise InputError("options.covariates", "the covariates are constant or collinear across systems")
    e = ends / scale
    n = float(counts.sum())
    slog = float(sum_log.sum()) - n * math.log(scale)

    def full(p: np.ndarray) -> float:
        log_l, log_b, g = p[0], p[1], p[2:]
        b = math.exp(log_b)
        eta = z @ g
        return float(n * (log_l + log_b) + counts @ eta + (b - 1) * slog - math.exp(log_l) *
                     np.sum(np.exp(eta + b * np.log(e))))

    def profile(p: np.ndarray) -> float:
        b = math.exp(p[0])
        eta = z @ p[1:]
        denom = float(np.sum(np.exp(eta + b * np.log(e))))
        return -(n * math.log(n / denom) + n * p[0] + float(counts @ eta) + (b - 1) * slog - n)

    pl = power_law(data.scaled(1.0 / scale))
    x0 = np.concatenate([[math.log(pl.beta)], np.zeros(z.shape[1])])
    res = inference.maximise(lambda p: -profile(p), x0, stages=(inference.Stage("BFGS", {"gtol": 1e-10}),),
                             covariance=False)
    b = math.exp(res.estimate[0])
    g = res.estimate[1:]
    log_l = math.log(n / float(np.sum(np.exp(z @ g + b * np.log(e)))))
    p_hat = np.concatenate([[log_l, res.estimate[0]], g])
    # Steps relative to each value, with a floor: a coefficient near 0 still gets a real step.
    cov = covariance_from_information(-inference.hessian(full, p_hat, np.maximum(np.abs(p_hat) * 1e-4, 1e-5)))
    ll_full = full(p_hat)
    ll_null = -profile(np.concatenate([[math.log(pl.beta)], np.zeros(g.size)]))
    lr = max(0.0, 2 * (ll_full - ll_null))
    zq = inference.z(confidence)
    rows = []
    for k, name in enumerate(names):
        se = math.sqrt(cov[2 + k, 2 + k]) if cov[2 + k, 2 + k] >= 0 else math.nan
        r = inference.row(name, float(g[k]), se, zq=zq)
        lo, hi = r["ci"]
        rows.append({**r, "intensity_ratio": math.exp(g[k]), "intensity_ratio_ci": [math.exp(lo), math.exp(hi)],
                     "p_value": float(2 * stats.norm.sf(abs(g[k] / se))) if se > 0 else None})
    lam = math.exp(log_l) * scale ** (-b)
    # the covariance of (beta, lambda, gamma) in the data's unit, from that of (ln lambda_scaled,
    # ln beta, gamma) by the Jacobian: lambda = e^{ln lambda_scaled}·scale^(−beta)
    jac = np.eye(p_hat.size)
    jac[:2, :2] = [[0.0, b], [lam, -lam * b * math.log(scale)]]
    natural = jac @ cov @ jac.T
    ok = bool(np.all(np.isfinite(natural)))
    return {"model": "proportional-intensity power law", "beta": b,
            "lambda": lam, "coefficients": rows,
            "covariance": {"names": ["beta", "lambda", *names], "matrix": natural.tolist() if ok else None},
            "likelihood_ratio": {"statistic": float(lr), "dof": int(g.size),
                                 "p_value": float(stats.chi2.sf(lr, g.size))},
            "reading": "exp(coefficient) multiplies the failure intensity per unit of the covariate"}


def weibull_at(effects: Mapping[str, Any], values: Mapping[str, Any] | None, field: str) -> tuple[float, float]:
    """(alpha, beta) of the Weibull life whose minimal repair is the fitted process (`fit`'s record,
    `effects`) at covariates z = `values`: intensity lambda·e^{z·gamma}·beta·t^(beta−1), so alpha =
    (lambda·e^{z·gamma})^(−1/beta). Every covariate is required and no other taken; refusals name
    `field` (`field.<name>` for one value)."""
    names = [str(c["name"]) for c in effects["coefficients"]]
    given = dict(values or {})
    for name in given:
        if name not in names:
            raise InputError(f"{field}.{name}", f"not a covariate of the process (covariates: {', '.join(names)})")
    missing = [n for n in names if n not in given]
    if missing:
        raise InputError(f"{field}.{missing[0]}", f"required: the process was fitted with covariates "
                                                  f"({', '.join(names)}); give the system's value of each")
    eta = sum(float(c["value"]) * check_number(given[str(c["name"])], f"{field}.{c['name']}")
              for c in effects["coefficients"])
    beta = float(effects["beta"])
    return (float(effects["lambda"]) * math.exp(eta)) ** (-1.0 / beta), beta
