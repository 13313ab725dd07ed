"""Cumulative incidence of competing failure modes: the Aalen–Johansen estimate per mode with
Aalen's variance and pointwise bounds, and Gray's K-sample test of equal incidence.

Definitions (those of R's cmprsk::cuminc, Gray 1988; Kalbfleisch & Prentice 1980, pp. 168-9):
at each distinct time t_j, r_j units are at risk, d_mj fail from mode m and d_j from any mode
(failures at t_j come before removals at t_j). With S(t) the all-mode Kaplan–Meier estimate,

    F_m(t) = sum_{t_j <= t} S(t_j-) d_mj / r_j.

Aalen's (1978) variance, as cuminc computes it: with S_j = S(t_j), F = F_m(t) and the running
sums over t_j <= t of w_j = S(t_j-)^2 c_j d / r_j^2 (c_j = 1 - (d-1)/(r_j-1), the correction of
d tied events, 1 for a single event), taken once for the mode's own failures (d = d_mj, with
a_j = 1 + F_m(t_j)/S_j, b_j = 1/S_j; b_j = 0 where S_j = 0) and once for the other modes'
(d = d_j - d_mj, a_j = F_m(t_j)/S_j, b_j = 1/S_j; none where S_j = 0):

    Var F_m(t) = V1 + F^2 V3 - 2 F V2,  V1 = sum a^2 w, V2 = sum a b w, V3 = sum b^2 w.

The `delta` variance instead is the Greenwood-type delta-method estimate (Marubini & Valsecchi
1995; SAS PROC LIFETEST; lifelines' AalenJohansenFitter), with d_j all failures at t_j:

    Var F_m(t) = sum (F(t) - F(t_j))^2 d_j / (r_j (r_j - d_j)) + sum S(t_j-)^2 d_mj (r_j - d_mj) / r_j^3
                 - 2 sum (F(t) - F(t_j)) S(t_j-) d_mj / r_j^2

(a time where every unit at risk fails adds no first term: the Greenwood ratio is undefined).

cuminc gives no bounds; ours are on the log(-log) scale (the transform lifelines'
AalenJohansenFitter and tidycmprsk use; it keeps them inside (0, 1)):
F^exp(±z sqrt(Var)/(F ln F)), z the two-sided normal quantile at `confidence`.

Gray's test of one mode's incidence equal across G groups: scores of the first G - 1 groups
weighted (1 - F(t-))^rho (rho = 0: cuminc's default) and their covariance from Gray (1988);
s' V^-1 s is chi-squared with G - 1 degrees of freedom under equal incidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats

from bathtub import steps
from bathtub.errors import InputError
from bathtub.inference import z as z_of

CIF_POINTS_MAX = 5000  # steps stored per mode and group
VARIANCES = ("aalen", "delta")


def _tables(t: np.ndarray, mode: np.ndarray, group: np.ndarray, n_groups: int, target: int
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Distinct times; at risk r[j, g], target failures d1[j, g], other failures d2[j, g].
    `mode` is -1 for a censored row, else the mode's index."""
    times, inv = np.unique(t, return_inverse=True)
    nt = times.size
    d1 = np.zeros((nt, n_groups))
    d2 = np.zeros((nt, n_groups))
    out = np.zeros((nt, n_groups))
    np.add.at(out, (inv, group), 1.0)
    np.add.at(d1, (inv[mode == target], group[mode == target]), 1.0)
    other = (mode >= 0) & (mode != target)
    np.add.at(d2, (inv[other], group[other]), 1.0)
    r = out[::-1].cumsum(axis=0)[::-1]  # at risk at t_j: rows with time >= t_j
    return times, r, d1, d2


def _km_cif(r: np.ndarray, d1: np.ndarray, d2: np.ndarray) -> tuple[np.ndarray, ...]:
    """Left- and right-continuous all-mode Kaplan–Meier and target-mode CIF, per time and group."""
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(r > 0, (r - d1 - d2) / r, 1.0)
        s = np.cumprod(factor, axis=0)
        s_left = np.vstack([np.ones((1, r.shape[1])), s[:-1]])
        inc = np.where(r > 0, s_left * d1 / r, 0.0)
    f = np.cumsum(inc, axis=0)
    f_left = f - inc
    return s, s_left, f, f_left


def _tie(d: np.ndarray, r: np.ndarray) -> np.ndarray:
    """1 - (d-1)/(r-1): the variance correction for d tied events among r (1 for d <= 1)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(d > 1, 1.0 - (d - 1.0) / (r - 1.0), 1.0)


def _aalen_variance(r: np.ndarray, d1: np.ndarray, d2: np.ndarray, s: np.ndarray, s_left: np.ndarray,
                    f: np.ndarray) -> np.ndarray:
    """Var F(t_j) for one group's columns (1-D arrays), cuminc's definition (module docstring)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        alive = s > 0
        b = np.where(alive, 1.0 / np.where(alive, s, 1.0), 0.0)
        w_other = np.where((d2 > 0) & alive & (r > 0), s_left**2 * _tie(d2, r) * d2 / r**2, 0.0)
        w_own = np.where((d1 > 0) & (r > 0), s_left**2 * _tie(d1, r) * d1 / r**2, 0.0)
    a_other = f * b
    a_own = 1.0 + f * b
    v1 = np.cumsum(a_other**2 * w_other + a_own**2 * w_own)
    v2 = np.cumsum(b * a_other * w_other + b * a_own * w_own)
    v3 = np.cumsum(b * b * (w_other + w_own))
    return np.maximum(v1 + f * f * v3 - 2.0 * f * v2, 0.0)


def _delta_variance(r: np.ndarray, d1: np.ndarray, d2: np.ndarray, s_left: np.ndarray, f: np.ndarray
                    ) -> np.ndarray:
    """The Greenwood-type delta-method variance (module docstring), expanded in running sums."""
    d = d1 + d2
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where((d > 0) & (r > d), d / (r * (r - d)), 0.0)
        own = np.where((d1 > 0) & (r > 0), s_left**2 * d1 * (r - d1) / r**3, 0.0)
        lin = np.where((d1 > 0) & (r > 0), s_left * d1 / r**2, 0.0)
    quad = f * f * np.cumsum(g) - 2.0 * f * np.cumsum(g * f) + np.cumsum(g * f * f)
    cross = f * np.cumsum(lin) - np.cumsum(lin * f)
    return np.maximum(quad + np.cumsum(own) - 2.0 * cross, 0.0)


def _bounds(f: np.ndarray, var: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    """F^exp(±z se/(F ln F)); where F is 0 or 1 the bounds are F itself."""
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = (f > 0) & (f < 1)
        k = np.where(inner, z * np.sqrt(var) / (f * np.log(np.where(inner, f, 0.5))), 0.0)
        lower = np.where(inner, f ** np.exp(-k), f)
        upper = np.where(inner, f ** np.exp(k), f)
    return lower, upper


def _thin(entry: dict[str, Any]) -> dict[str, Any]:
    return steps.thin(entry, CIF_POINTS_MAX)


def label(value: Any) -> str:
    """A failure mode's text; "" for none (None, an empty cell, NaN)."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # a mode coded 2 that a numeric column holds as 2.0 is still "2"
    return str(value).strip()


def encode(x: Sequence[float] | np.ndarray, failed: np.ndarray, modes: Sequence[Any],
           field: str = "mapping.mode") -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Times, mode index per row (-1 censored) and the sorted mode names."""
    t = np.asarray(x, dtype=float)
    if t.size == 0:
        raise InputError(field, "no rows")
    if not np.all(np.isfinite(t)) or np.any(t < 0):
        raise InputError("mapping.x", "times must be finite and >= 0")
    labels = np.array([label(m) for m in modes], dtype=object)
    names = sorted(set(labels[failed]))
    if "" in names:
        raise InputError(field, f"row {int(np.argmax(failed & (labels == ''))) + 1}: a failure needs its mode")
    index = {m: k for k, m in enumerate(names)}
    code = np.array([index[lab] if f else -1 for lab, f in zip(labels, failed, strict=True)], dtype=int)
    return t, code, names


def cumulative_incidence(t: np.ndarray, code: np.ndarray, names: Sequence[str], confidence: float = 0.95,
                         group: np.ndarray | None = None, group_names: Sequence[str] | None = None,
                         variance: str = "aalen") -> list[dict[str, Any]]:
    """Per mode (and group): {mode, group?, time, value, variance, lower, upper, confidence} at
    each time the mode fails (the step's value from that time on), cuminc's estimate and
    variance (or the delta method's, `variance="delta"`) with log(-log) bounds. `code`: mode
    index per row, -1 censored."""
    if variance not in VARIANCES:
        raise InputError("options.cif_variance", f"must be one of {', '.join(VARIANCES)}")
    z = z_of(confidence)
    g = np.zeros(t.size, dtype=int) if group is None else group
    ng = int(g.max()) + 1 if g.size else 1
    out = []
    for m, name in enumerate(names):
        times, r, d1, d2 = _tables(t, code, g, ng, m)
        s, s_left, f, _ = _km_cif(r, d1, d2)
        for k in range(ng):
            var = (_aalen_variance(r[:, k], d1[:, k], d2[:, k], s[:, k], s_left[:, k], f[:, k])
                   if variance == "aalen" else _delta_variance(r[:, k], d1[:, k], d2[:, k], s_left[:, k], f[:, k]))
            at = d1[:, k] > 0
            lower, upper = _bounds(f[at, k], var[at], z)
            entry: dict[str, Any] = {"mode": name, "time": times[at].tolist(), "value": f[at, k].tolist(),
                                     "variance": var[at].tolist(), "lower": lower.tolist(),
                                     "upper": upper.tolist(), "confidence": confidence,
                                     "final": float(f[-1, k]) if f.shape[0] else 0.0}
            if group is not None and group_names is not None:
                entry["group"] = group_names[k]
            out.append(_thin(entry))
    return out


def gray_test(t: np.ndarray, code: np.ndarray, target: int, group: np.ndarray, rho: float = 0.0
              ) -> dict[str, Any]:
    """Gray's (1988) test that mode `target`'s incidence is equal across the groups (indices
    0..G-1): {statistic, df, p}, cuminc's Tests row (one stratum)."""
    ng = int(group.max()) + 1
    _, r, d1, d2 = _tables(t, code, group, ng, target)
    s, s_left, _, f_left = _km_cif(r, d1, d2)
    n1 = d1.sum(axis=1)
    live = r > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        h = np.where(live, r / s_left, 0.0)
        big_h = h.sum(axis=1)
        q = np.where(live, r * (1.0 - f_left) / s_left, 0.0).sum(axis=1)
        # pooled CIF: F(t_j) = F(t_j-) + d1_j / H_j
        f_pool = np.cumsum(np.where(big_h > 0, n1 / big_h, 0.0))
        f_pool_left = f_pool - np.where(big_h > 0, n1 / big_h, 0.0)
        wgt = (1.0 - f_pool_left) ** rho
        score = (wgt[:, None] * np.where(live, d1 - n1[:, None] * r * (1.0 - f_left) / (s_left * q[:, None]),
                                         0.0)).sum(axis=0)[: ng - 1]
        # a_j: the weighted projection at t_j; c(t) its running sum scaled by d1/(H (1 - F(t-)))
        a = -wgt[:, None, None] * h[:, :, None] * h[:, None, :] / big_h[:, None, None]
        idx = np.arange(ng)
        a[:, idx, idx] = wgt[:, None] * h * (1.0 - h / big_h[:, None])
        c = np.cumsum(a * np.where(n1 > 0, n1 / (big_h * (1.0 - f_pool_left)), 0.0)[:, None, None], axis=0)
        # the target mode's failures, per group k
        t4 = np.where(s > 0, 1.0 - (1.0 - f_pool[:, None]) / s, 1.0)
        t5 = np.where(n1[:, None] > 1, 1.0 - (n1[:, None] - 1.0) / (big_h[:, None] * s_left - 1.0), 1.0)
        t3 = np.where(live & (n1[:, None] > 0), t5 * s_left * n1[:, None] / (big_h[:, None] * r), 0.0)
        # the other modes' failures, per group k
        u4 = np.where(s > 0, (1.0 - f_pool[:, None]) / s, 0.0)
        u3 = np.where((d2 > 0) & (s > 0), _tie(d2, r) * s_left**2 * d2 / r**2, 0.0)
    t3, u3 = np.nan_to_num(t3), np.nan_to_num(u3)
    e = a - t4[:, None, :] * c  # e[j, i, k] = a_ik - t4_k c_ik
    v3 = (t4**2 * t3 + u4**2 * u3).sum(axis=0)
    v2 = np.einsum("jik,jk->ik", e, t4 * t3) - np.einsum("jik,jk->ik", c, u4**2 * u3)
    v = np.einsum("jik,jlk,jk->il", e, e, t3) + np.einsum("jik,jlk,jk->il", c, c, u4**2 * u3)
    cf = c[-1]
    v = v + np.einsum("ik,lk,k->il", cf, cf, v3) + cf @ v2.T + v2 @ cf.T
    v = v[: ng - 1, : ng - 1]
    df = ng - 1
    try:
        stat = float(score @ np.linalg.solve(v, score))
    except np.linalg.LinAlgError:
        return {"statistic": None, "df": df, "p": None, "reason": "the scores' covariance is singular"}
    return {"statistic": stat, "df": df, "p": float(stats.chi2.sf(stat, df)), "rho": rho}


def incidence_block(x: Sequence[float] | np.ndarray, failed: np.ndarray, modes: Sequence[Any],
                    confidence: float = 0.95, groups: Sequence[Any] | None = None,
                    group_field: str = "mapping.group", variance: str = "aalen") -> dict[str, Any]:
    """The record's `cumulative_incidence` block: every mode's estimate (per group too, with
    Gray's test per mode, when `groups` labels the rows)."""
    t, code, names = encode(x, failed, modes)
    block: dict[str, Any] = {
        "estimator": "aalen_johansen", "confidence": confidence,
        "variance": variance,
        "variance_method": ("Aalen (1978) as cmprsk::cuminc, tied events corrected by 1 - (d-1)/(r-1)"
                            if variance == "aalen" else
                            "Greenwood-type delta method (Marubini & Valsecchi; SAS LIFETEST; lifelines)"),
        "bounds": "log(-log): F^exp(±z se/(F ln F))",
        "modes": cumulative_incidence(t, code, names, confidence, variance=variance)}
    if groups is None:
        return block
    labels = np.array([label(v) for v in groups], dtype=object)
    if np.any(labels == ""):
        raise InputError(group_field, f"row {int(np.argmax(labels == '')) + 1}: every row needs a group")
    gnames = sorted(set(labels))
    if len(gnames) < 2:
        raise InputError(group_field, "Gray's test compares 2 or more groups; the column holds one")
    gidx = np.array([gnames.index(v) for v in labels], dtype=int)
    block["by_group"] = cumulative_incidence(t, code, names, confidence, gidx, gnames, variance)
    tests = []
    for m, name in enumerate(names):
        res = gray_test(t, code, m, gidx)
        tests.append({"mode": name, **res,
                      "verdict": None if res["p"] is None else
                      ("the groups' incidence of this mode differs" if res["p"] < 1 - confidence
                       else "no difference detected between the groups")})
    block["gray_test"] = {"groups": gnames, "rows": tests,
                          "meaning": "Gray (1988): equal cumulative incidence of the mode in every group, "
                                     "the other modes competing; chi-squared on groups - 1 df"}
    return block


def step_value(entry: dict[str, Any], at: float) -> float:
    """A stored incidence step read at time `at` (0 before its first step)."""
    time = entry["time"]
    k = int(np.searchsorted(np.asarray(time, dtype=float), at, side="right")) - 1
    return float(entry["value"][k]) if k >= 0 else 0.0

