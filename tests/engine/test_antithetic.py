"""Antithetic pairs (variance_reduction="antithetic"): the pairs' 95% t intervals cover the exact
mean availability (closed form) at their nominal rate over 200 fixed seeds, the record says the
method, the pairs and the factor (per-replication variance over twice the pair means'), and the
same seed gives the same numbers on any thread count and any split of the replications."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bathtub import engine
from bathtub.engine import simulate_availability

from .engine_diagrams import block, exp_model, series
from .test_variance_reduction import HORIZON, SEEDS, binomial_band, exact_availability, trains

# A pair member's CPU over a plain replication's (variance/pairs.rs, measured by bench/variance_reduction.py).
PAIR_CPU_COST = 1.2


def test_antithetic_intervals_cover_the_closed_form_at_their_nominal_rate() -> None:
    a = exact_availability()
    covered, factors = 0, []
    for seed in SEEDS:
        r = simulate_availability(trains(), horizon=HORIZON, replications=300, seed=seed, grid=0, threads=1,
                                  variance_reduction="antithetic")
        vr = r.variance_reduction
        assert vr["method"] == "antithetic" and vr["pairs"] == 150 and vr["degrees_of_freedom"] == 149
        lo, hi = r.mean_availability_interval
        covered += lo <= a <= hi
        factors.append(vr["factor"])
        # Pairs that do not pay for their CPU (efficiency = factor / 1.2 not above 1) are said on the
        # record; a fixed run's estimate is the pairs' either way.
        assert vr["efficiency"] == pytest.approx(vr["factor"] / PAIR_CPU_COST, rel=1e-12)
        assert (vr["fallback"] is None) == (vr["efficiency"] > 1.0)
    lo_count, hi_count = binomial_band(len(SEEDS))
    assert lo_count <= covered <= hi_count, (covered, lo_count, hi_count)
    # On this plant (horizon 500 h, 50 repairs' worth of renewals per block) the pairs' streams
    # drift apart and the factor is about 1 (measured: median 1.00, range 0.81 to 1.33 over these seeds); it is an
    # estimate from each run, so it spreads around that.
    assert 0.7 < np.median(factors) < 1.5, np.median(factors)


def test_the_record_gives_the_factor_from_the_run_and_the_pairs_estimate() -> None:
    n = 4000
    r = simulate_availability(trains(3), horizon=HORIZON, replications=n, seed=4, grid=11,
                              variance_reduction="antithetic")
    vr = r.variance_reduction
    assert vr["requested"] == "antithetic" and vr["pairs"] == n // 2
    per_rep = vr["plain_std_error"] ** 2 * n
    pair_var = r.mean_availability_std_error ** 2 * (n // 2)
    assert vr["factor"] == pytest.approx(per_rep / (2 * pair_var), rel=1e-12)
    assert (vr["fallback"] is None) == (vr["factor"] > PAIR_CPU_COST)
    # Every replication is in a pair: the estimate is the run's own plain mean, its interval the pairs'.
    assert r.mean_availability == pytest.approx(vr["plain_mean_availability"], abs=1e-15)
    lo, hi = r.mean_availability_interval
    assert lo <= exact_availability(3) <= hi
    # Its own sampling path: not the plain run's numbers for the seed, which stay as they were.
    plain = simulate_availability(trains(3), horizon=HORIZON, replications=n, seed=4, grid=11)
    assert plain.mean_availability != r.mean_availability
    assert r.to_dict()["variance_reduction"] == vr


def test_thread_counts_and_splits_inside_pairs_give_the_same_numbers() -> None:
    kw = dict(horizon=2000.0, replications=600, seed=9, variance_reduction="antithetic")
    one = simulate_availability(trains(), threads=1, **kw)
    two = simulate_availability(trains(), threads=2, **kw)
    assert one.state == two.state and one.to_dict() == two.to_dict()
    # Chunks of odd sizes split pairs; merged in either order they are the whole run.
    a = simulate_availability(trains(), threads=2, **{**kw, "replications": 251})
    b = simulate_availability(trains(), threads=1, replication_start=251, **{**kw, "replications": 200})
    c = simulate_availability(trains(), threads=2, replication_start=451, **{**kw, "replications": 149})
    assert engine.merge(engine.merge(a, b), c).state == one.state
    assert engine.merge(c, engine.merge(b, a)).state == one.state


def test_a_target_precision_stops_on_the_pairs_half_width() -> None:
    d = series(block("v", exp_model(2e-4), exp_model(0.2)), block("m", exp_model(3e-4), exp_model(0.125)),
               block("w", {"distribution_id": "weibull", "params": {"alpha": 3000.0, "beta": 1.5}},
                     exp_model(0.1)))
    r = simulate_availability(d, horizon=10_000.0, target_half_width=0.03, max_replications=200_000, seed=5,
                              grid=0, variance_reduction="antithetic")
    assert r.target_reached and r.variance_reduction["method"] == "antithetic"
    u = 1.0 - r.mean_availability
    lo, hi = r.mean_availability_interval
    # The relative half-width is the pairs' t interval's.
    assert r.relative_half_width == pytest.approx((hi - lo) / 2 / u, rel=1e-9)
    assert r.relative_half_width <= 0.03


def test_pairs_that_do_not_pay_turn_to_plain_streams_and_stay_honest() -> None:
    # The closed-form plant's pairs barely help (factor about 1): after the 400-pair pilot a run to a target
    # precision draws plain streams, and its joined interval covers the exact value.
    kw = dict(horizon=HORIZON, target_half_width=0.02, max_replications=1_000_000, seed=21, grid=0,
              variance_reduction="antithetic")
    r = simulate_availability(trains(3), threads=2, **kw)
    vr = r.variance_reduction
    assert vr["method"] == "antithetic+plain" and vr["efficiency"] <= 1.0
    assert vr["pairs"] * 2 == vr["plain_from"] >= 800 and r.replications > vr["plain_from"]
    assert "plain streams" in vr["fallback"]
    lo, hi = r.mean_availability_interval
    assert lo <= exact_availability(3) <= hi and r.relative_half_width <= 0.02
    # One thread, the same numbers; the plain part's draws are the plain run's for those replications.
    assert simulate_availability(trains(3), threads=1, **kw).state == r.state
    at = vr["plain_from"]
    plain = simulate_availability(trains(3), horizon=HORIZON, replications=r.replications - at,
                                  replication_start=at, seed=21, grid=0)
    after = json.loads(r.state)["variance"]["after"]
    assert after["n"] == plain.replications == r.replications - at
    assert after["sum"] / 2.0**52 / after["n"] == pytest.approx(1.0 - plain.mean_availability, abs=1e-12)
