"""Variance reduction of availability runs: the reduced-variance 95% intervals cover the exact
mean availability (closed form) at their nominal rate over 200 fixed seeds, the factor is
reported on the result, the plain figures are untouched, and refusals name the field."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from bathtub.engine import simulate_availability
from bathtub.errors import InputError

from .engine_diagrams import block, exp_model, parallel, series

LAM, MU, HORIZON = 0.01, 0.2, 500.0
SEEDS = range(1000, 1200)


def trains(k: int = 2) -> dict:
    """Two parallel trains of k exponential blocks (independent, repaired at once)."""
    nodes = [{"id": "in", "type": "input"}, {"id": "out", "type": "output"}]
    edges = []
    for t in "ab":
        prev = "in"
        for i in range(k):
            nodes.append(block(f"{t}{i}", exp_model(LAM), exp_model(MU)))
            edges.append({"source": prev, "target": f"{t}{i}"})
            prev = f"{t}{i}"
        edges.append({"source": prev, "target": "out"})
    return {"nodes": nodes, "edges": edges}


def exact_availability(k: int = 2, horizon: float = HORIZON) -> float:
    """Interval availability: the point availability of the alternating renewal,
    a(t) = mu/(lam+mu) + lam/(lam+mu) exp(-(lam+mu) t), through the structure, integrated."""
    s = LAM + MU

    def point(t: float) -> float:
        a = MU / s + LAM / s * np.exp(-s * t)
        return 1.0 - (1.0 - a**k) ** 2

    return integrate.quad(point, 0.0, horizon, limit=200, epsabs=1e-14, epsrel=1e-13)[0] / horizon


def binomial_band(n: int, p: float = 0.95) -> tuple[int, int]:
    """Counts of covering intervals a nominal-p interval gives out of n runs with probability
    0.998 (two-sided 0.1% tails)."""
    return int(stats.binom.ppf(0.001, n, p)), int(stats.binom.ppf(0.999, n, p))


@pytest.mark.parametrize("method", ["control", "auto"])
def test_reduced_intervals_cover_the_closed_form_at_their_nominal_rate(method: str) -> None:
    a = exact_availability()
    covered, factors, methods = 0, [], set()
    for seed in SEEDS:
        r = simulate_availability(trains(), horizon=HORIZON, replications=300, seed=seed, grid=0, threads=1,
                                  variance_reduction=method)
        lo, hi = r.mean_availability_interval
        covered += lo <= a <= hi
        methods.add(r.variance_reduction["method"])
        factors.append(r.variance_reduction["factor"] or 1.0)
    lo_count, hi_count = binomial_band(len(SEEDS))
    assert lo_count <= covered <= hi_count, (covered, lo_count, hi_count)
    # The reduction was used (not the plain fallback) and did reduce.
    assert methods == {"control" if method == "control" else "conditional+control"}
    assert np.median(factors) > (1.2 if method == "control" else 5.0)


def test_the_record_says_the_method_and_factor_and_keeps_the_plain_estimate() -> None:
    plain = simulate_availability(trains(3), horizon=HORIZON, replications=2000, seed=4, grid=11)
    red = simulate_availability(trains(3), horizon=HORIZON, replications=2000, seed=4, grid=11,
                                variance_reduction="auto")
    vr = red.variance_reduction
    assert plain.variance_reduction is None and "variance_reduction" not in plain.to_dict()
    assert vr["requested"] == "auto" and vr["method"] == "conditional+control"
    assert vr["conditioned_on"] in (["a0", "a1", "a2"], ["b0", "b1", "b2"])
    assert "system unavailability under independence" in vr["controls"]
    assert vr["factor"] > 5 and vr["fallback"] is None
    # factor = (plain se / reduced se)^2, both from this run; the plain figures are the plain run's.
    assert vr["factor"] == pytest.approx((plain.mean_availability_std_error / red.mean_availability_std_error) ** 2,
                                         rel=1e-9)
    assert vr["plain_mean_availability"] == plain.mean_availability
    assert (red.availability == plain.availability).all() and red.blocks == plain.blocks
    # Both estimate the same closed form.
    a = exact_availability(3)
    for r in (plain, red):
        lo, hi = r.mean_availability_interval
        assert lo <= a <= hi
    assert red.to_dict()["variance_reduction"] == vr


def test_blocks_without_a_known_mean_fall_back_to_plain_and_say_why() -> None:
    # Weibull lives replaced on the calendar (block policy: not a renewal of the unit). Plain Weibull
    # blocks now have numeric renewal means (tests/engine/test_renewal_means.py).
    weibull = {"distribution_id": "weibull", "params": {"alpha": 80.0, "beta": 2.0}}
    pm = {"policy": "block", "interval": 100.0, "duration": 1.0}
    d = parallel(block("A", weibull, exp_model(0.2), preventive=pm), block("B", weibull, exp_model(0.2), preventive=pm))
    plain = simulate_availability(d, horizon=300.0, replications=300, seed=2)
    red = simulate_availability(d, horizon=300.0, replications=300, seed=2, variance_reduction="auto")
    assert red.variance_reduction["method"] == "none" and red.variance_reduction["fallback"]
    assert red.mean_availability == plain.mean_availability
    assert red.mean_availability_interval == plain.mean_availability_interval


def test_a_target_precision_uses_the_reduced_estimator() -> None:
    d = series(block("v", exp_model(2e-4), exp_model(0.2)), block("m", exp_model(3e-4), exp_model(0.125)),
               block("w", {"distribution_id": "weibull", "params": {"alpha": 3000.0, "beta": 1.5}},
                     exp_model(0.1)))
    kw = dict(horizon=10_000.0, target_half_width=0.02, max_replications=200_000, seed=5, grid=0)
    plain = simulate_availability(d, **kw)
    red = simulate_availability(d, variance_reduction="control", **kw)
    assert plain.target_reached and red.target_reached
    assert red.variance_reduction["method"] == "control"
    assert red.replications < plain.replications
    assert red.relative_half_width <= 0.02


@pytest.mark.parametrize("bad", ["importance", "", None, 1])
def test_an_unknown_variance_reduction_is_refused_naming_the_field(bad) -> None:
    with pytest.raises(InputError) as e:
        simulate_availability(trains(), horizon=100.0, replications=10, variance_reduction=bad)
    assert e.value.field == "variance_reduction"
