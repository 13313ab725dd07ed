"""Bootstrap bounds of an ALT fit: replicate refits in the Rust engine, percentile and BCa
intervals here.

`replicates` is the typed face of the engine's `alt_bootstrap`: replicate r draws from its own
random stream, so a run is the same on any number of threads and `merge` of adjacent ranges
[a, b) and [b, c) equals the run [a, c). `bounds` turns replicates into intervals on the
reported parameters and on use-level life, B-lives and MTTF (Efron & Tibshirani, *An
Introduction to the Bootstrap*, 1993, ch. 13-14: percentile; BCa with the bias correction from
the replicates and the acceleration from the jackknife).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special, stats

from bathtub.alt.data import AltData
from bathtub.alt.model import AltModel, b_life_name, standard_quantile
from bathtub.engine import binding
from bathtub.errors import InputError
from bathtub.validate import check_integer

KINDS = ("parametric", "nonparametric")
MAX_REPLICATES = 100_000


@dataclass(frozen=True)
class Replicates:
    """Replicates [start, start + count): natural coefficients (count x k; NaN rows where a
    refit found no finite maximum) and log-likelihoods."""

    start: int
    count: int
    theta: np.ndarray
    loglik: np.ndarray

    @property
    def failed(self) -> int:
        return int(np.isnan(self.loglik).sum())


def _call(model: AltModel, data: AltData, kind: str, seed: int, start: int, count: int, threads: int | None,
          jackknife: bool) -> tuple[np.ndarray, np.ndarray]:
    if kind not in KINDS:
        raise InputError("kind", f"must be one of {', '.join(KINDS)}")
    seed = check_integer(seed, "seed", 0, 2**64 - 1)
    spec = model.spec
    theta, ll = binding.alt_bootstrap(spec.life, spec.relationship.id, data.t.tolist(), data.failed.tolist(),
                                      [s.tolist() for s in data.stresses], model.theta.tolist(), kind, seed,
                                      start, count, threads, jackknife)
    return np.asarray(theta, float).reshape(-1, model.theta.size), np.asarray(ll, float)


def replicates(model: AltModel, data: AltData, *, count: int, kind: str = "parametric", seed: int = 0,
               start: int = 0, threads: int | None = None) -> Replicates:
    """Bootstrap replicates [start, start + count) of `model` fitted to `data`."""
    count = check_integer(count, "replicates", 1, MAX_REPLICATES)
    start = check_integer(start, "start", 0)
    theta, ll = _call(model, data, kind, seed, start, count, threads, False)
    return Replicates(start, count, theta, ll)


def jackknife(model: AltModel, data: AltData, threads: int | None = None) -> np.ndarray:
    """The n leave-one-out refits' coefficients (n x k), in unit order."""
    return _call(model, data, "parametric", 0, 0, 0, threads, True)[0]


def merge(a: Replicates, b: Replicates) -> Replicates:
    """Adjacent replicate ranges of the same run put together, in either order."""
    lo, hi = (a, b) if a.start <= b.start else (b, a)
    if lo.start + lo.count != hi.start or lo.theta.shape[1] != hi.theta.shape[1]:
        raise InputError("replicates", f"ranges [{lo.start}, {lo.start + lo.count}) and "
                                       f"[{hi.start}, {hi.start + hi.count}) are not adjacent")
    return Replicates(lo.start, lo.count + hi.count, np.vstack([lo.theta, hi.theta]),
                      np.concatenate([lo.loglik, hi.loglik]))


def quantities(model: AltModel, theta: np.ndarray, use: tuple[float | None, float | None] | None,
               b_lives: Sequence[float]) -> dict[str, np.ndarray]:
    """Each figure bounded, for each row of natural coefficients `theta` (rows x k): the
    reported parameters by name, and at a use stress `life`, `b<100p>` and `mttf`."""
    spec = model.spec
    k = 1 + spec.relationship.stresses
    out: dict[str, np.ndarray] = {}
    for j, c in enumerate(spec.relationship.coefs):
        v = c.sign * theta[:, j]
        out[c.name] = np.exp(v) if c.exp else v
    log_s = theta[:, k] if spec.has_sigma else np.zeros(theta.shape[0])
    if spec.life == "weibull":
        out["beta"] = np.exp(-log_s)
    elif spec.life == "lognormal":
        out["sigma"] = np.exp(log_s)
    if use is None:
        return out
    vec = model.stress_vector(*use, fields=("use_stress", "use_stress2"))
    offset = float(spec.relationship.offset(np.array([float(use[0])]))[0])  # type: ignore[arg-type]
    log_l = offset + theta[:, :k] @ vec[:k]
    s = np.exp(log_s)
    out["life"] = np.exp(log_l)
    for p in b_lives:
        out[b_life_name(p)] = np.exp(log_l + s * standard_quantile(spec.life, p))
    if spec.life == "weibull":
        out["mttf"] = np.exp(log_l + special.gammaln(1.0 + s))
    elif spec.life == "lognormal":
        out["mttf"] = np.exp(log_l + 0.5 * s * s)
    else:
        out["mttf"] = np.exp(log_l)
    return out


def _bca(est: float, boot: np.ndarray, jack: np.ndarray, confidence: float) -> tuple[float, float] | None:
    """BCa interval, or None where it is undefined (every replicate on one side of the
    estimate, or a jackknife with no spread)."""
    below = (np.sum(boot < est) + 0.5 * np.sum(boot == est)) / boot.size
    if not 0 < below < 1:
        return None
    z0 = float(stats.norm.ppf(below))
    d = jack.mean() - jack
    ss = float(np.sum(d * d))
    if ss <= 0 or not math.isfinite(ss):
        return None
    acc = float(np.sum(d ** 3)) / (6.0 * ss ** 1.5)
    ends = []
    for q in ((1 - confidence) / 2, (1 + confidence) / 2):
        zq = float(stats.norm.ppf(q))
        ends.append(float(stats.norm.cdf(z0 + (z0 + zq) / (1 - acc * (z0 + zq)))))
    lo, hi = np.quantile(boot, ends)
    return float(lo), float(hi)


def bounds(model: AltModel, reps: Replicates, jack: np.ndarray, *, confidence: float = 0.95,
           use: tuple[float | None, float | None] | None = None, b_lives: Sequence[float] = (0.01, 0.1)
           ) -> dict[str, Any]:
    """Percentile and BCa intervals of every figure `quantities` names, from the replicates
    whose refit converged (how many did not is reported)."""
    if not (isinstance(confidence, (int, float)) and 0.5 <= confidence < 1):
        raise InputError("confidence", "must be in [0.5, 1)")
    ok = np.isfinite(reps.loglik)
    if ok.sum() < 10:
        raise InputError("replicates", f"only {int(ok.sum())} replicate refits converged; at least 10 are needed")
    est = {k: float(v[0]) for k, v in quantities(model, model.theta[None, :], use, b_lives).items()}
    boot = quantities(model, reps.theta[ok], use, b_lives)
    jok = np.all(np.isfinite(jack), axis=1)
    jq = quantities(model, jack[jok], use, b_lives)
    alpha = (1 - confidence) / 2
    rows = []
    for name, value in est.items():
        b = boot[name]
        lo, hi = np.quantile(b, [alpha, 1 - alpha])
        bca = _bca(value, b, jq[name], confidence) if jok.all() else None
        # the one row shape: ci is the percentile interval (always defined); BCa beside it, null
        # where it is undefined (every replicate on one side, or a jackknife with no spread)
        rows.append({"name": name, "value": value, "se": float(np.std(b, ddof=1)), "ci": [float(lo), float(hi)],
                     "ci_method": "percentile", "bca_ci": None if bca is None else [bca[0], bca[1]]})
    return {"replicates": reps.count, "converged": int(ok.sum()), "failed": reps.count - int(ok.sum()),
            "confidence": confidence, "use_stress": None if use is None else use[0],
            "use_stress2": None if use is None else use[1], "b_lives": [float(p) for p in b_lives],
            "intervals": rows}


def bootstrap_bounds(model: AltModel, data: AltData, *, count: int, kind: str = "parametric", seed: int = 0,
                     confidence: float = 0.95, use: tuple[float | None, float | None] | None = None,
                     b_lives: Sequence[float] = (0.01, 0.1), threads: int | None = None) -> dict[str, Any]:
    """Replicates, jackknife and intervals in one call: what the bootstrap job stores."""
    reps = replicates(model, data, count=count, kind=kind, seed=seed, threads=threads)
    jack = jackknife(model, data, threads)
    out = bounds(model, reps, jack, confidence=confidence, use=use, b_lives=b_lives)
    return {"kind": kind, "seed": seed, "coefficients": model.theta.tolist(), **out}
