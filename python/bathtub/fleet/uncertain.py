"""A fleet forecast that carries how little the life model's data said: outer draws of the model's
parameters from its fit's sampling distribution (`bathtub.models.parameter_draws`), each period's
count under every draw by the forecast's own laws, and their mixture.

The point forecast's interval says how many failures to expect if the fitted parameters were
exact. Averaging each draw's distribution of a period's count gives the predictive distribution
of that count (the parameters integrated out over their sampling distribution), whose interval is
wider by what the data leave unknown. For exponential lives with replacement and a rate fitted
from r failures it is the negative binomial (gamma-Poisson) law, which the tests check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bathtub.fleet.forecast import Life, cdf_quantiles, count_distribution


@dataclass(frozen=True)
class ParameterForecast:
    """Per period: the predictive mean (`expected_failures`, the mean over draws), the spread of
    the expected count over draws (`expected_lower`/`expected_upper`, equal-tailed at
    `confidence`), and the predictive interval of the count itself (`lower`/`upper`)."""

    draws: int
    seed: int
    confidence: float
    expected_failures: list[float]
    expected_lower: list[float]
    expected_upper: list[float]
    total_expected: float
    total_lower: float
    total_upper: float
    lower: list[int]
    upper: list[int]
    method: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "draws": self.draws, "seed": self.seed,
            "expected_failures": self.expected_failures,
            "expected_failures_range": {"confidence": self.confidence, "lower": self.expected_lower,
                                        "upper": self.expected_upper},
            "total_expected": self.total_expected,
            "total_expected_range": {"confidence": self.confidence, "lower": self.total_lower,
                                     "upper": self.total_upper},
            "interval": {"confidence": self.confidence, "lower": self.lower, "upper": self.upper,
                         "method": self.method},
        }


def parameter_forecast(draw_lives: Sequence[Life], ages: Sequence[float], rates: Sequence[float], periods: int, *,
                       seed: int, renewal: bool = False, confidence: float = 0.9) -> ParameterForecast:
    """The forecast over parameter draws: `draw_lives` holds one life law per draw (as `forecast`
    takes it), `seed` the draws' seed (reported). Items as `forecast` takes them."""
    n_draws = len(draw_lives)
    if len(ages) == 0:
        zeros = [0.0] * periods
        return ParameterForecast(n_draws, seed, confidence, zeros, zeros, zeros, 0.0, 0.0, 0.0, [0] * periods,
                                 [0] * periods, "no items")
    tail = (1.0 - confidence) / 2.0
    expected = np.zeros((n_draws, periods))
    acc = np.zeros((1, periods))  # Σ over draws of P(K_j <= k), rows k = 0..
    for d, life in enumerate(draw_lives):
        expected[d], cdf = count_distribution(life, ages, rates, periods, renewal=renewal)
        if cdf.shape[0] > acc.shape[0]:
            # the draws so far put all their mass below their own top: their cdf is 1 beyond it
            acc = np.vstack([acc, np.full((cdf.shape[0] - acc.shape[0], periods), float(d))])
        elif cdf.shape[0] < acc.shape[0]:
            cdf = np.vstack([cdf, np.ones((acc.shape[0] - cdf.shape[0], periods))])
        acc += cdf
    mixture = acc / n_draws
    bounds = [cdf_quantiles(mixture[:, j], confidence) for j in range(periods)]
    total = expected.sum(axis=1)
    lo, hi = np.quantile(expected, [tail, 1.0 - tail], axis=0)
    t_lo, t_hi = np.quantile(total, [tail, 1.0 - tail])
    law = "Poisson" if renewal else "Poisson-binomial"
    return ParameterForecast(
        n_draws, seed, confidence, expected.mean(axis=0).tolist(), lo.tolist(), hi.tolist(), float(total.mean()),
        float(t_lo), float(t_hi), [b[0] for b in bounds], [b[1] for b in bounds],
        f"predictive: the mixture over {n_draws} parameter draws of each draw's {law} count")
