"""Renewal functions on a uniform grid, by solving the renewal equation numerically.

M(t) = F(t) + ∫₀ᵗ F(t − x) dM(x) is discretised with the Riemann–Stieltjes midpoint rule of
Xie (1989, "On the solution of renewal-type integral equations"), which is second-order
accurate and stable for any lifetime distribution F with F(0) ≈ 0.
"""

from __future__ import annotations

import numpy as np

from bathtub.distributions import Lifetime


def renewal_function(life: Lifetime, t_max: float, steps: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    """Expected number of renewals M(t) of new parts replaced at failure, on [0, t_max].

    Returns (t, M) with `steps + 1` points, t in the model's time unit, M dimensionless.
    """
    h = t_max / steps
    t = np.linspace(0.0, t_max, steps + 1)
    f = np.clip(np.asarray(life.cdf(t), dtype=float), 0.0, 1.0)
    # F at the midpoints (k + 1/2) h, k = 0 .. steps - 1
    f_mid = np.clip(np.asarray(life.cdf((np.arange(steps) + 0.5) * h), dtype=float), 0.0, 1.0)
    m = np.zeros(steps + 1)
    dm = np.zeros(steps + 1)  # dm[j] = M_j - M_{j-1}
    denom = 1.0 - f_mid[0]
    for i in range(1, steps + 1):
        # Σ_{j=1}^{i-1} F((i - j + 1/2) h) · dM_j ; F index i - j runs from i - 1 down to 1
        acc = float(np.dot(f_mid[i - 1 : 0 : -1], dm[1:i])) if i > 1 else 0.0
        m[i] = (f[i] + acc - f_mid[0] * m[i - 1]) / denom
        dm[i] = m[i] - m[i - 1]
    return t, m


def delayed_renewal_function(
    life: Lifetime, age: float, t: np.ndarray, m: np.ndarray
) -> np.ndarray:
    """Expected failures in [0, t] of a part already `age` old, renewed by new parts at failure.

    E[N](t) = F_a(t) + ∫₀ᵗ M(t − x) dF_a(x), with F_a(x) = 1 − R(age + x)/R(age) the conditional
    life of the present part and (t, m) an ordinary renewal function on a uniform grid from 0.
    """
    r_age = float(life.sf(age))
    if r_age <= 0.0:
        # The part cannot survive to this age: it is failed now; count it and renew.
        return 1.0 + m
    fa = 1.0 - np.asarray(life.sf(age + t), dtype=float) / r_age
    fa = np.clip(fa, 0.0, 1.0)
    dfa = np.diff(fa)  # mass of the first failure in each grid cell
    m_mid = 0.5 * (m[:-1] + m[1:])  # M at cell midpoints
    conv = np.convolve(dfa, m_mid)[: len(dfa)]  # Σ_j dF_a[j] · M_mid[i - 1 - j]
    out = fa.copy()
    out[1:] += conv
    return out
