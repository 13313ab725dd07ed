"""The standard error laws of the log-location-scale models in log time: y = ln t,
z = (y - mu) / sigma, with a minimum extreme value ("extreme": Weibull, exponential), "normal"
(lognormal) or "logistic" (loglogistic) law. Parametric regression builds its likelihood (with
delayed entry) from these terms; ALT's likelihood, gradient and information live once, in the
engine (`engine.binding.alt_fit`: the same laws, 30-90x faster than numpy, measured on
reliability's ALT_temperature), which returns the fit and its covariance.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

_LOG_2PI = math.log(2.0 * math.pi)


def standard_terms(kind: str, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """log f0(z), log S0(z), d log f0/dz, d log S0/dz of the standard error law."""
    if kind == "extreme":
        ez = np.exp(z)
        return z - ez, -ez, 1.0 - ez, -ez
    if kind == "normal":
        log_s = special.log_ndtr(-z)
        # inverse Mills ratio phi(z)/Phi(-z), through logs so it stays finite far in the tail
        log_pdf = -0.5 * z * z - 0.5 * _LOG_2PI
        return log_pdf, log_s, -z, -np.exp(log_pdf - log_s)
    ex = special.expit(z)
    log_s = -np.logaddexp(0.0, z)
    return z + 2 * log_s, log_s, 1.0 - 2.0 * ex, -ex
