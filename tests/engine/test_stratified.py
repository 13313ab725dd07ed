"""Stratified sets (variance_reduction="stratified"): the sets' 95% t intervals cover the exact mean
availability (closed form) at their nominal rate over 200 fixed seeds, the record says the method, the
sets and the factor (per-replication variance over 16 times the set means'), and the same seed gives the
same numbers on any thread count and any split of the replications (inside sets too)."""

from __future__ import annotations

import numpy as np
import pytest

from bathtub import engine
from bathtub.engine import simulate_availability

from .test_variance_reduction import HORIZON, SEEDS, binomial_band, exact_availability, trains

SET = 16  # replications per stratified set (rng.rs `SET`)


def test_stratified_intervals_cover_the_closed_form_at_their_nominal_rate() -> None:
    a = exact_availability()
    covered, factors = 0, []
    for seed in SEEDS:
        r = simulate_availability(trains(), horizon=HORIZON, replications=320, seed=seed, grid=0, threads=1,
                                  variance_reduction="stratified")
        vr = r.variance_reduction
        assert vr["method"] == "stratified" and vr["sets"] == 20 and vr["degrees_of_freedom"] == 19
        assert "pairs" not in vr
        lo, hi = r.mean_availability_interval
        covered += lo <= a <= hi
        factors.append(vr["factor"])
        assert (vr["fallback"] is None) == (vr["factor"] > 1.0)
    lo_count, hi_count = binomial_band(len(SEEDS))
    assert lo_count <= covered <= hi_count, (covered, lo_count, hi_count)
    # Over 500 h (5 mean lives of a block, 50 repairs' worth of renewals) the first lives decide little:
    # the factor is about 1 (an estimate from each run, so it spreads around that).
    assert 0.7 < np.median(factors) < 1.5, np.median(factors)


def test_the_record_gives_the_sets_factor_and_a_short_horizon_gains() -> None:
    # 150 h, 1.5 mean lives: the first failures are much of the downtime, and stratifying them pays.
    n, horizon = 16_000, 150.0
    r = simulate_availability(trains(3), horizon=horizon, replications=n, seed=4, grid=11,
                              variance_reduction="stratified")
    vr = r.variance_reduction
    assert vr["requested"] == "stratified" and vr["sets"] == n // SET
    per_rep = vr["plain_std_error"] ** 2 * n
    set_var = r.mean_availability_std_error ** 2 * (n // SET)
    assert vr["factor"] == pytest.approx(per_rep / (SET * set_var), rel=1e-12)
    assert vr["factor"] > 1.0 and vr["fallback"] is None
    assert r.mean_availability == pytest.approx(vr["plain_mean_availability"], abs=1e-15)
    lo, hi = r.mean_availability_interval
    assert lo <= exact_availability(3, horizon) <= hi
    plain = simulate_availability(trains(3), horizon=horizon, replications=n, seed=4, grid=11)
    assert plain.mean_availability != r.mean_availability


def test_thread_counts_and_splits_inside_sets_give_the_same_numbers() -> None:
    kw = dict(horizon=2000.0, replications=640, seed=9, variance_reduction="stratified")
    one = simulate_availability(trains(), threads=1, **kw)
    two = simulate_availability(trains(), threads=2, **kw)
    assert one.state == two.state and one.to_dict() == two.to_dict()
    a = simulate_availability(trains(), threads=2, **{**kw, "replications": 251})
    b = simulate_availability(trains(), threads=1, replication_start=251, **{**kw, "replications": 200})
    c = simulate_availability(trains(), threads=2, replication_start=451, **{**kw, "replications": 189})
    assert engine.merge(engine.merge(a, b), c).state == one.state
    assert engine.merge(c, engine.merge(b, a)).state == one.state
