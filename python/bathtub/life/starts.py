"""Starting values for the likelihood maximiser, from moments of the failure times.

Censoring biases these moments, which is harmless: they only need to land in the basin of
the maximum. Several starts are offered where the likelihood is known to be multi-modal
(location, limited failure population, mixtures).
"""

from __future__ import annotations

import math

import numpy as np

from bathtub.errors import InputError
from bathtub.life.data import LifeData
from bathtub.life.model import ModelSpec

EULER = 0.5772156649015329


def _wstats(x: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    m = float(w @ x / w.sum())
    v = float(w @ (x - m) ** 2 / w.sum())
    return m, math.sqrt(v) if v > 0 else (abs(m) * 0.1 + 1e-3)


def base_start(distribution: str, x: np.ndarray, w: np.ndarray, data: LifeData) -> dict[str, float]:
    """A rough parameter set of the base family from failure points x with counts w."""
    pos = x > 0
    lx = np.log(x[pos]) if pos.any() else np.zeros(1)
    lw = w[pos] if pos.any() else np.ones(1)
    lm, ls = _wstats(lx, lw)
    m, s = _wstats(x, w)
    if distribution == "weibull":
        beta = min(max(1.2825 / ls, 0.05), 50.0)
        return {"alpha": math.exp(lm + EULER / beta), "beta": beta}
    if distribution == "exponential":
        total = float(data.fn @ data.f + data.rn @ data.r + data.ln @ data.lt + data.inn @ ((data.il + data.ir) / 2))
        return {"failure_rate": max(data.n_failures, 1) / max(total, 1e-300)}
    if distribution == "normal":
        return {"mu": m, "sigma": s}
    if distribution == "lognormal":
        return {"mu": lm, "sigma": ls}
    if distribution == "gamma":
        m = max(m, 1e-12)
        return {"alpha": m * m / (s * s), "beta": s * s / m}
    if distribution == "loglogistic":
        return {"alpha": math.exp(lm), "beta": max(math.pi / (math.sqrt(3.0) * ls), 0.05)}
    if distribution == "gumbel":
        sig = s * math.sqrt(6.0) / math.pi
        return {"mu": m + EULER * sig, "sigma": sig}
    if distribution == "logistic":
        return {"mu": m, "sigma": s * math.sqrt(3.0) / math.pi}
    if distribution == "beta":
        m = min(max(m, 1e-3), 1 - 1e-3)
        common = max(m * (1 - m) / (s * s) - 1.0, 0.1)
        return {"alpha": m * common, "beta": (1 - m) * common}
    if distribution == "expo_weibull":
        beta = min(max(1.2825 / ls, 0.05), 50.0)
        return {"alpha": math.exp(lm + EULER / beta), "beta": beta, "theta": 1.0}
    if distribution == "discrete_weibull":
        return {"q": min(max(1.0 - 1.0 / max(m, 1.0001), 1e-6), 1 - 1e-9), "beta": 1.0}
    raise KeyError(distribution)  # the spec validated the id; reaching here is a programming error


def starts(spec: ModelSpec, data: LifeData) -> list[np.ndarray]:
    """Natural-parameter starting vectors for `spec` on `data`."""
    x, w = data.failure_points()
    keep = w > 0
    x, w = x[keep], w[keep]
    if spec.modes > 1:
        return _mixture_starts(spec, data, x, w)
    out: list[np.ndarray] = []
    f0s = [None]
    if spec.zi:
        zero = x == 0
        f0s = [min(max(float(w[zero].sum() / data.n), 1e-3), 0.9)]
        x, w = x[~zero], w[~zero]
    gammas = [None]
    if spec.offset:
        tmin = data.min_time()
        gammas = [g * tmin for g in (0.5, 0.9, 0.1, 0.99)]
    ps = [None]
    if spec.lfp:
        frac = data.n_failures / data.n
        ps = sorted({min(max(v, 0.02), 0.98) for v in (frac * 1.05, (1 + frac) / 2, 0.98)})
    extra_shapes = [1.0, 0.5, 2.0, 4.0] if spec.distribution == "expo_weibull" else [None]
    if spec.distribution == "discrete_weibull":
        extra_shapes = [1.0, 0.6, 2.0]
    for g in gammas:
        xs = x - g if g is not None else x
        base = base_start(spec.distribution, xs, w, data)
        for shape in extra_shapes:
            b = dict(base)
            if shape is not None and spec.distribution == "expo_weibull":
                b["theta"] = shape
            elif shape is not None:
                b["beta"] = shape
            for p in ps:
                for f0 in f0s:
                    v = dict(b)
                    if g is not None:
                        v["gamma"] = g
                    if f0 is not None:
                        v["f0"] = f0
                    if p is not None:
                        v["p"] = p
                    out.append(np.array([v[n] for n in spec.names]))
    return out


def _mixture_starts(spec: ModelSpec, data: LifeData, x: np.ndarray, w: np.ndarray) -> list[np.ndarray]:
    order = np.argsort(x)
    x, w = x[order], w[order]
    cw = np.cumsum(w) / w.sum()
    out = []
    for cuts in _splits(spec.modes):
        bounds = [0.0, *cuts, 1.0 + 1e-12]
        vals: dict[str, float] = {}
        ok = True
        for i in range(spec.modes):
            sel = (cw > bounds[i]) & (cw <= bounds[i + 1])
            if sel.sum() < 2:
                ok = False
                break
            b = base_start(spec.distribution, x[sel], w[sel], data)
            for n, v in b.items():
                vals[f"{n}{i + 1}"] = v
            vals[f"weight{i + 1}"] = float(w[sel].sum() / w.sum())
        if ok:
            out.append(np.array([vals[n] for n in spec.names]))
    if not out:
        raise InputError("modes", f"a {spec.modes}-mode mixture needs at least 2 distinct failure times in each "
                         f"mode's share of the failures ({x.size} distinct here, split by count); fit fewer "
                         "modes or a single distribution")
    return out


def _splits(modes: int) -> list[list[float]]:
    if modes == 2:
        return [[0.5], [0.3], [0.7]]
    return [[1 / 3, 2 / 3], [0.2, 0.6], [0.4, 0.8]]
