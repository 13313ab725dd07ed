"""Shut plans: calendar expansion, the dynamic programme against brute-force enumeration, and the
chosen plan's expected cost against a Monte Carlo of the part's life (fixed seed)."""

from __future__ import annotations

import itertools
import math
from datetime import date

import numpy as np
import pytest

from bathtub.distributions import Lifetime
from bathtub.errors import InputError
from bathtub.strategy import shut_calendar, shut_plan
from bathtub.strategy.renewal import delayed_renewal_function, renewal_function
from tests.strategy.strategy_helpers import assert_json_ready

TODAY = date(2026, 11, 22)


def _dates(shuts, end="2028-12-31", today=TODAY):
    return [o.date.isoformat() for o in shut_calendar(shuts, today, date.fromisoformat(end))]


def test_monthly_shuts_clamp_to_month_end():
    got = _dates([{"name": "m", "cost": 1, "every": 1, "every_unit": "months", "start": "2027-01-31"}], "2027-05-01")
    assert got == ["2027-01-31", "2027-02-28", "2027-03-31", "2027-04-30"]


def test_yearly_from_a_leap_day():
    got = _dates([{"name": "y", "cost": 1, "every": 1, "every_unit": "years", "start": "2024-02-29"}], "2029-01-01",
                 today=date(2024, 1, 1))
    assert got == ["2024-02-29", "2025-02-28", "2026-02-28", "2027-02-28", "2028-02-29"]


def test_weekly_and_past_start_and_default_start():
    got = _dates([{"name": "w", "cost": 1, "every": 2, "every_unit": "weeks", "start": "2026-11-01"}], "2026-12-31")
    assert got == ["2026-11-29", "2026-12-13", "2026-12-27"]
    got = _dates([{"name": "m", "cost": 1, "every": 1, "every_unit": "months", "start": "2020-01-15"}], "2027-02-01")
    assert got == ["2026-12-15", "2027-01-15"]
    got = _dates([{"name": "d", "cost": 1, "every": 10}], "2026-12-12")  # start defaults to today
    assert got == ["2026-11-22", "2026-12-02", "2026-12-12"]


def test_explicit_dates_are_filtered_to_the_horizon_and_sorted():
    shuts = [{"name": "b", "cost": 2, "dates": ["2027-06-01", "2025-01-01", "2030-01-01"]},
             {"name": "a", "cost": 1, "dates": ["2027-03-01"]}]
    assert _dates(shuts) == ["2027-03-01", "2027-06-01"]


WEIBULL = {"alpha": 1000.0, "beta": 3.0}
SHUTS = [{"name": "annual", "cost": 500, "every": 1, "every_unit": "years", "start": "2027-03-01"},
         {"name": "outage", "cost": 1500, "dates": ["2027-09-15", "2028-08-01", "2029-05-20"]}]


def _plan(**kw):
    args = dict(current_age=600.0, usage_rate=2.0, horizon_days=3 * 365, failure_cost=8000.0, shuts=SHUTS,
                today="2026-11-22")
    args.update(kw)
    return shut_plan("weibull", WEIBULL, **args)


def test_dynamic_programme_matches_brute_force():
    out = _plan()
    life = Lifetime.of("weibull", WEIBULL)
    occ = shut_calendar(SHUTS, TODAY, date.fromisoformat(out["horizon_end"]))
    n_days = (date.fromisoformat(out["horizon_end"]) - TODAY).days
    t, m = renewal_function(life, 2.0 * n_days, 4000)
    d = delayed_renewal_function(life, 600.0, t, m)
    best, best_set = math.inf, None
    for k in range(len(occ) + 1):
        for subset in itertools.combinations(range(len(occ)), k):
            days = [0] + [occ[i].day for i in subset] + [n_days]
            total = sum(occ[i].cost for i in subset)
            for s, (a, b) in enumerate(itertools.pairwise(days)):
                total += 8000.0 * float(np.interp(2.0 * (b - a), t, d if s == 0 else m))
            if total < best:
                best, best_set = total, subset
    assert out["expected_cost"] == pytest.approx(best, rel=1e-4)
    assert [p["date"] for p in out["plan"]] == [occ[i].date.isoformat() for i in best_set]
    assert out["expected_cost"] == pytest.approx(out["planned_cost"] + out["expected_failure_cost"], rel=1e-12)
    assert out["expected_cost"] < out["run_to_failure"]["expected_cost"]
    assert_json_ready(out)


def test_plan_cost_and_risks_monte_carlo():
    out = _plan()
    alpha, beta, rate, age0 = WEIBULL["alpha"], WEIBULL["beta"], 2.0, 600.0
    renewals = [rate * (date.fromisoformat(p["date"]) - TODAY).days for p in out["plan"]]
    end = rate * (date.fromisoformat(out["horizon_end"]) - TODAY).days
    bounds = [0.0, *renewals, end]
    rng = np.random.default_rng(2026)
    reps = 100_000
    failures = np.zeros(reps)
    any_fail = []
    for s, (a, b) in enumerate(itertools.pairwise(bounds)):
        seg = b - a
        if s == 0:  # present part: remaining life given survival to age0
            u = rng.random(reps)
            clock = alpha * ((age0 / alpha) ** beta - np.log(u)) ** (1 / beta) - age0
        else:
            clock = alpha * rng.weibull(beta, size=reps)
        count = np.zeros(reps)
        alive = clock <= seg
        while alive.any():
            count[alive] += 1
            clock[alive] += alpha * rng.weibull(beta, size=int(alive.sum()))
            alive &= clock <= seg
        failures += count
        any_fail.append(count > 0)
    cost = out["planned_cost"] + 8000.0 * failures
    se = cost.std(ddof=1) / math.sqrt(reps)
    assert abs(cost.mean() - out["expected_cost"]) < 4 * se
    for seg, hit in zip(out["segments"], any_fail, strict=True):
        p = seg["failure_probability"]
        assert abs(hit.mean() - p) < 4 * math.sqrt(max(p * (1 - p), 1e-12) / reps) + 1e-12


def test_exponential_part_is_never_replaced_early():
    out = shut_plan("exponential", {"failure_rate": 0.001}, current_age=5000.0, usage_rate=3.0, horizon_days=400,
                    failure_cost=100.0, shuts=SHUTS, today=TODAY)
    assert out["plan"] == []
    assert out["expected_failures"] == pytest.approx(0.001 * 3.0 * 400, rel=1e-4)
    assert out["expected_cost"] == pytest.approx(out["run_to_failure"]["expected_cost"])


def test_free_shuts_with_wear_out_are_all_used_and_dear_ones_none():
    free = [{"name": "free", "cost": 0, "every": 3, "every_unit": "months"}]
    out = _plan(shuts=free)
    n = len(shut_calendar(free, TODAY, date.fromisoformat(out["horizon_end"])))
    assert len(out["plan"]) == n
    dear = _plan(shuts=[{"name": "dear", "cost": 1e9, "every": 3, "every_unit": "months"}])
    assert dear["plan"] == [] and dear["expected_cost"] == pytest.approx(dear["run_to_failure"]["expected_cost"])
    assert dear["segments"][0]["start_age"] == 600.0


def test_age_at_replacement_counts_usage_since_last_renewal():
    out = _plan(failure_cost=1e6)
    last_day, last_age = 0, 600.0
    for p in out["plan"]:
        day = (date.fromisoformat(p["date"]) - TODAY).days
        assert p["age_at_replacement"] == pytest.approx(last_age + 2.0 * (day - last_day))
        last_day, last_age = day, 0.0


@pytest.mark.parametrize(("shuts", "field"), [
    ([], "shuts"),
    ("annual", "shuts"),
    ([{"name": "x", "cost": 1}], "shuts[0]"),
    ([{"name": "x", "cost": 1, "dates": []}], "shuts[0].dates"),
    ([{"name": "x", "cost": 1, "dates": ["2027-02-30"]}], "shuts[0].dates[0]"),
    ([{"name": "x", "cost": 1, "every": 1, "dates": ["2027-02-01"]}], "shuts[0]"),
    ([{"name": "x", "cost": -1, "every": 1}], "shuts[0].cost"),
    ([{"name": "x", "every": 1}], "shuts[0].cost"),
    ([{"cost": 1, "every": 1}], "shuts[0].name"),
    ([{"name": "x", "cost": 1, "every": 0}], "shuts[0].every"),
    ([{"name": "x", "cost": 1, "every": 1, "every_unit": "fortnights"}], "shuts[0].every_unit"),
    ([{"name": "x", "cost": 1, "every": 1.5, "every_unit": "months"}], "shuts[0].every"),
    ([{"name": "x", "cost": 1, "every": 1, "start": "soon"}], "shuts[0].start"),
    ([{"name": "x", "cost": 1, "dates": ["2040-01-01"]}], "shuts"),
])
def test_bad_shuts_name_the_field(shuts, field):
    with pytest.raises(InputError) as err:
        _plan(shuts=shuts)
    assert err.value.field == field


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"current_age": -1.0}, "current_age"),
    ({"usage_rate": 0.0}, "usage_rate"),
    ({"horizon_days": 0.5}, "horizon_days"),
    ({"failure_cost": -5.0}, "failure_cost"),
    ({"today": "22/11/2026"}, "today"),
])
def test_bad_numbers_name_the_field(kwargs, field):
    with pytest.raises(InputError) as err:
        _plan(**kwargs)
    assert err.value.field == field


def test_long_horizon_follows_the_renewal_asymptote():
    """Over hundreds of lives M(t) = t/μ + (σ² − μ²)/(2μ²) + o(1) (Smith's renewal theorem)."""
    alpha, beta, rate, days = 100.0, 2.5, 24.0, 3650
    out = shut_plan("weibull", {"alpha": alpha, "beta": beta}, current_age=0.0, usage_rate=rate, horizon_days=days,
                    failure_cost=1000.0, shuts=[{"name": "dear", "cost": 1e9, "every": 1, "every_unit": "weeks"}],
                    today=TODAY)
    mu = alpha * math.gamma(1 + 1 / beta)
    var = alpha**2 * math.gamma(1 + 2 / beta) - mu**2
    assert out["plan"] == []
    assert out["expected_failures"] == pytest.approx(rate * days / mu + (var - mu**2) / (2 * mu**2), abs=2e-3)
